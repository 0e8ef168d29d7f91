package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/jsclient"
	"github.com/kstranded/kstranded/trace/tracegen"
)

func runTrace(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runSeen(args, stdin)
}

func fixture(name string) string { return filepath.Join("..", "trace", "testdata", name) }

func TestTraceParseFlagsReachTheOptions(t *testing.T) {
	var got *traceParseOptions
	c := newTraceParseCmd(&Globals{}, func(_ context.Context, o *traceParseOptions) error { got = o; return nil })
	c.SetArgs([]string{"a.log", "-", "--format", "librdkafka", "--timeline", "--svg", "x.svg", "--max-poll-interval", "15m"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 2 || got.Format != "librdkafka" || !got.Timeline || got.SVG != "x.svg" || got.MaxPollInterval != 15*time.Minute {
		t.Fatalf("%+v", got)
	}
}

func TestTraceParse(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("lorem ipsum\n"), 0o644)
	gz := filepath.Join(dir, "v110.trace.gz")
	raw, _ := os.ReadFile(fixture("kstranded-v1.10.0.trace"))
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(raw)
	zw.Close()
	os.WriteFile(gz, zb.Bytes(), 0o644)
	seed, _ := os.ReadFile(fixture("kafkajs-seed.trace"))

	cases := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		outHas []string
		errHas []string
	}{
		{"a v1.10.0 trace is a loss on partition 0 for 82-199", "", []string{"trace", "parse", fixture("kstranded-v1.10.0.trace")},
			exitcode.Lost, []string{"LOST", "82-199", "kstranded-v1.10.0.trace:33"}, []string{"records lost"}},
		{"a head trace loses nothing", "", []string{"trace", "parse", fixture("kstranded-head.trace")},
			exitcode.OK, []string{"OK"}, nil},
		{"gzip is read", "", []string{"trace", "parse", gz}, exitcode.Lost, []string{"kstranded (detected)"}, nil},
		{"the seed trace from stdin explains the expiry against 900000 ms, and with no commit in it judges nothing", string(seed),
			[]string{"trace", "parse", "--max-poll-interval", "15m", "-"}, exitcode.NoEvidence,
			[]string{"kafkajs (detected)", "CLEAR-NO-REWIND", "118", "900000", "HOT-SPIN", "NO COMMIT EVIDENCE", "--group GROUP with --brokers", "debug=cgrp"}, []string{"not enough evidence"}},
		{"the timeline is chronological", "", []string{"trace", "parse", "--timeline", fixture("kstranded-v1.10.0.trace")},
			exitcode.Lost, []string{"TIME\tPARTITION\tEVENT", "clear\t118 undelivered records discarded", "stranded[0-19]\trewind-skipped\ton 20 partitions"}, nil},
		{"--partition narrows the timeline to one partition and the events about all", "", []string{"trace", "parse", "--timeline", "--partition", "stranded/0", fixture("kstranded-v1.10.0.trace")},
			exitcode.Lost, []string{"stranded/0\tfetch\t2-199", "*\texpiry"}, []string{"timeline: stranded/0 only"}},
		{"--partition that names no partition is a usage error", "", []string{"trace", "parse", "--partition", "zero", fixture("kstranded-v1.10.0.trace")},
			exitcode.Usage, nil, []string{"--partition"}},
		{"a real v1.10.0 repro trace is a loss on partition 0 for 82-199 and exits 3", "", []string{"trace", "parse", fixture("repro-v1.10.0.trace")},
			exitcode.Lost, []string{"LOST", "82-199", "repro-v1.10.0.trace:53", "timeout_ms 9000 in the trace"}, []string{"records lost", "82-199"}},
		{"a real head repro trace loses nothing and exits 0", "", []string{"trace", "parse", "--timeline", fixture("repro-head.trace")},
			exitcode.OK, []string{"OK", "auto-commit of 2 reported after the manual commit of 82"}, nil},
		{"the librdkafka log of a v1.10.0 repro shows the commits 82 then 202, and without deliveries judges nothing", "", []string{"trace", "parse", "--timeline", fixture("repro-v1.10.0-rdkafka.log")},
			exitcode.NoEvidence, []string{"librdkafka (detected)", "commit\t82\t", "commit\t202\t", "fetch\t0-200 (200 records), 1 control marker(s)", "NO EVIDENCE", "--pattern REGEXP"}, nil},
		// the real JS client's logs (captures of scenario.js): with debug=cgrp alone the
		// commit to 202 passed offsets no line describes, and the verdict says what would
		// settle it; with debug=fetch too (its Enqueue lines) the same kind of run is judged
		{"a real client's log with debug=cgrp alone is NO RECORD EVIDENCE and names debug=fetch", "", []string{"trace", "parse", "--pattern", jsclient.DeliveredPattern, filepath.Join("..", "testenv", "jsclient", "captures", "v1.10.0-seek-forward-debug-cgrp.log.gz")},
			exitcode.NoEvidence, []string{"NO RECORD EVIDENCE", "to settle it: the commit passed undelivered offsets", "--group GROUP with --brokers", "debug=fetch"}, []string{"not enough evidence"}},
		{"a real client's log with debug=consumer,cgrp,fetch is judged", "", []string{"trace", "parse", "--pattern", jsclient.DeliveredPattern, fixture("jsclient/v1.10.0-default-debug.log.gz")},
			exitcode.Lost, []string{"LOST", "82-199"}, nil},
		{"a file whose lines are all malformed says so and exits 6", "", []string{"trace", "parse", "--format", "kstranded", junk},
			exitcode.NoEvidence, []string{"1 malformed", "NO EVIDENCE: ", "1 of 1 lines malformed"}, []string{"not enough evidence"}},
		{"an empty file is no evidence (exit 6), as in inspect", "", []string{"trace", "parse", empty}, exitcode.NoEvidence, nil, []string{"empty.log", "NO EVIDENCE"}},
		{"a file in no known format is read as a delivery log and judges nothing", "", []string{"trace", "parse", junk}, exitcode.NoEvidence, nil, []string{"junk.txt", "no delivery found"}},
		{"a bad pattern is a usage error", "", []string{"trace", "parse", "--pattern", "(", junk}, exitcode.Usage, nil, []string{"--pattern"}},
		{"a pattern without the offset group is a usage error", "", []string{"trace", "parse", "--pattern", "(?P<partition>\\d+)", junk}, exitcode.Usage, nil, []string{"offset"}},
		{"an unknown format is a usage error", "", []string{"trace", "parse", "--format", "xml", junk}, exitcode.Usage, nil, []string{"xml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runTrace(t, c.stdin, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nout:%s\nerr:%s", code, c.code, out, errs)
			}
			for _, s := range c.outHas {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range c.errHas {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
		})
	}
}

func TestTraceParseJSONCarriesDeliveredRangesAndTheSVGIsWritten(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "t.svg")
	code, out, errs := runTrace(t, "", "trace", "parse", "-o", "json", "--svg", svg, fixture("kstranded-v1.10.0.trace"))
	if code != exitcode.Lost || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var doc struct {
		Schema     string `json:"schema"`
		Command    string `json:"_command"`
		Lost       bool   `json:"lost"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Delivered []struct{ First, Last int64 }
			Lost      []struct{ First, Last int64 }
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "kstranded.trace-parse/v2" || doc.Command != "trace parse" || !doc.Lost {
		t.Fatalf("%+v", doc)
	}
	p := doc.Partitions[0]
	if len(p.Delivered) != 2 || p.Delivered[0].Last != 81 || p.Delivered[1].First != 201 || p.Lost[0].First != 82 || p.Lost[0].Last != 199 {
		t.Fatalf("partition 0: %+v", p)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(b, []byte("<svg")) || !bytes.Contains(b, []byte("lost 82-199")) {
		t.Fatalf("svg: %v %.200s", err, b)
	}
}

// cancelAfterReader cancels the command's context once n bytes of stdin were read: an
// interrupt in the middle of the parse, independent of timing.
type cancelAfterReader struct {
	r      *strings.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfterReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= n; c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// Issue 16 §1: an interrupted trace parse printed the full result and exited 0. It prints
// what it read, marked INTERRUPTED, and exits 130.
func TestAnInterruptedTraceParsePrintsThePartialResultMarkedAndExits130(t *testing.T) {
	var b strings.Builder
	for p := 0; p < 20000; p++ {
		fmt.Fprintf(&b, `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":%d,"first":0,"last":9,"count":10}]}`+"\n", p)
	}
	in := b.String()
	for _, c := range []struct {
		name   string
		args   []string
		outHas []string
	}{
		{"table", []string{"trace", "parse", "-"}, []string{"INTERRUPTED (partial result", "interrupted: the inputs were read up to <stdin>:", "not read to the end", "INCOMPLETE"}},
		{"json", []string{"trace", "parse", "-o", "json", "-"}, []string{`"interrupted": true`, `"complete": false`, `"stopped": true`, `"verdict": "INCOMPLETE"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb bytes.Buffer
			code := run(ctx, c.args, IO{In: &cancelAfterReader{r: strings.NewReader(in), n: len(in) / 3, cancel: cancel}, Out: &out, Err: &errb})
			if code != exitcode.Interrupted {
				t.Fatalf("exit %d, want 130\nerr: %s", code, errb.String())
			}
			for _, s := range c.outHas { // on a pipe the table is stdout, the prose stderr
				if !strings.Contains(out.String()+errb.String(), s) {
					t.Errorf("output lacks %q:\nstdout: %.2000s\nstderr: %.2000s", s, out.String(), errb.String())
				}
			}
			if !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("stderr does not say interrupted: %s", errb.String())
			}
		})
	}
}

func TestTraceParseAtThePartitionLimit(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		code   int
		outHas []string
		errHas []string
	}{
		{"partitions past --max-partitions make the result INCOMPLETE and the exit 1, never 0",
			[]string{"trace", "parse", "--max-partitions", "1", fixture("kstranded-head.trace")}, exitcode.Error,
			[]string{"INCOMPLETE", "19 events about the partitions named after the first 1 were not tracked"}, []string{"trace too large for the analysis limits"}},
		{"and its verdict is INCOMPLETE, not the tracked partitions' OK",
			[]string{"trace", "parse", "-o", "json", "--max-partitions", "1", fixture("kstranded-head.trace")}, exitcode.Error,
			[]string{`"complete": false`, `"verdict": "INCOMPLETE"`}, nil},
		{"a loss proven in the tracked partitions still exits 3",
			[]string{"trace", "parse", "-o", "json", "--max-partitions", "1", fixture("kstranded-v1.10.0.trace")}, exitcode.Lost,
			[]string{`"complete": false`, `"lost": true`}, nil},
		{"--max-partitions 0 is a usage error", []string{"trace", "parse", "--max-partitions", "0", fixture("kstranded-head.trace")}, exitcode.Usage,
			nil, []string{"--max-partitions"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runTrace(t, "", c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nout:%s\nerr:%s", code, c.code, out, errs)
			}
			for _, s := range c.outHas {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range c.errHas {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errs)
				}
			}
		})
	}
}

// TestTraceParseRefusesToGuessBetweenKindsOfDeliveryLine: issue 21 §2 in trace parse. The
// librdkafka log of a v1.10.0 repro (fetches 0-201, commits to 202) beside a pino log with
// "processing" lines (0-81, 201) and "processed" lines (0-69, 201: a crash mid-handler):
// counted together they would put the repair at 82 and skip 70-81. Without a filter the
// log is ambiguous (exit 6, both kinds named, the flag named); --delivered-when
// msg=processed gives LOST 70-199, safe rewind 70.
func TestTraceParseRefusesToGuessBetweenKindsOfDeliveryLine(t *testing.T) {
	var b strings.Builder
	line := func(msg string, o int) {
		fmt.Fprintf(&b, `{"level":30,"msg":%q,"topic":"stranded","partition":0,"offset":"%d"}`+"\n", msg, o)
	}
	for o := 0; o <= 81; o++ {
		line("processing", o)
		if o < 70 {
			line("processed", o)
		}
	}
	line("processing", 201)
	line("processed", 201)
	app := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(app, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "", "trace", "parse", fixture("repro-v1.10.0-rdkafka.log"), app)
	if code != exitcode.NoEvidence || !strings.Contains(out+errs, "msg=processing") || !strings.Contains(out+errs, "msg=processed") || !strings.Contains(out+errs, "--delivered-when") {
		t.Fatalf("without a filter: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "", "trace", "parse", "-o", "json", "--delivered-when", "msg=processed", fixture("repro-v1.10.0-rdkafka.log"), app)
	var d struct {
		Partitions []struct {
			Partition int32 `json:"partition"`
			Judgement struct {
				Verdict    string `json:"verdict"`
				SafeRewind *int64 `json:"safe_rewind_offset"`
				Lost       []struct{ First, Last int64 }
			} `json:"judgement"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errs)
	}
	for _, p := range d.Partitions {
		if p.Partition != 0 {
			continue
		}
		j := p.Judgement
		if code != exitcode.Lost || j.Verdict != "LOST" || j.SafeRewind == nil || *j.SafeRewind != 70 || len(j.Lost) != 1 || j.Lost[0].First != 70 || j.Lost[0].Last != 199 {
			t.Fatalf("with msg=processed: exit %d %+v", code, j)
		}
		return
	}
	t.Fatalf("no partition 0: %s", out)
}

// An error names what it was given (a file name, a group, a -X key): escaped for the
// terminal on stderr, raw (JSON-escaped) in -o json's error document (issue 27, item 11).
func TestAnErrorPrintsAFileNameEscaped(t *testing.T) {
	name := "evil\x1b]0;pwned\x07.log"
	code, _, errs := runCmd(t, "", "trace", "parse", filepath.Join(t.TempDir(), name))
	if code != exitcode.Error || strings.ContainsAny(errs, "\x1b\x07") || !strings.Contains(errs, `evil\x1b]0;pwned\x07.log`) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// -o json: the error is the one document on stdout
	code, out, errs := runCmd(t, "", "trace", "parse", filepath.Join(t.TempDir(), name), "-o", "json")
	if code != exitcode.Error || !strings.Contains(out, `evil\u001b]0;pwned\u0007.log`) {
		t.Fatalf("json: exit %d, stdout %q stderr %q", code, out, errs)
	}
}

// TestTraceParseOfManyRangesKeepsStderrSmall: issue 27 §10. With 40,000 distinct lost
// ranges the table cell was summarised, but the finding's message, its evidence (a line
// per range) and the final "records lost:" error listed every offset: 2.3 MB of stderr,
// one line of 234 KB. They list the first ranges and say how many more; -o json keeps
// every range in the finding's offsets.
func TestTraceParseOfManyRangesKeepsStderrSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.trace")
	var buf bytes.Buffer
	if err := tracegen.WriteManyRangesTrace(&buf, 40000, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "", "trace", "parse", path)
	if code != exitcode.Lost {
		t.Fatalf("exit %d, want %d\n%s", code, exitcode.Lost, errs)
	}
	if len(out)+len(errs) > 8<<10 {
		t.Fatalf("%d bytes on stdout and %d on stderr, want under 8 KB in all", len(out), len(errs))
	}
	for _, want := range []string{"39992 more ranges", "the last of 39992 more ranges", "records lost: "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errs)
		}
	}
	code, out, _ = runCmd(t, "", "trace", "parse", "-o", "json", path)
	var doc struct {
		Findings []struct {
			Offsets []struct{ First, Last int64 } `json:"offsets"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitcode.Lost {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(doc.Findings) != 1 || len(doc.Findings[0].Offsets) != 40000 {
		t.Fatalf("-o json: %d findings, want one with every range", len(doc.Findings))
	}
}
