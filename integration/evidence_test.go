package integration

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/testenv"
	"github.com/kstranded/kstranded/traceevent"
)

// deliveries reads the offsets the v1.10.0 run handed to its handler from its trace.
func deliveries(t *testing.T, trace string) (topic string, parts []int32, offs []int64) {
	t.Helper()
	fh, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e traceevent.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		switch e.Ev {
		case traceevent.Run:
			if topic == "" {
				topic = e.Topic
			}
		case traceevent.Serve:
			for _, o := range e.Offsets {
				parts, offs = append(parts, *e.Partition), append(offs, o)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(offs) != 83 {
		t.Fatalf("the v1.10.0 trace serves %d records, want 83 (0-81 and 201)", len(offs))
	}
	return topic, parts, offs
}

// appLog writes what a Node application with a pino logger writes for the run's
// deliveries: kafkajs-style clients give message.offset as a string, so the offset is
// "81", not 81; client lines without a delivery come in between.
func appLog(t *testing.T, name string, line func(topic string, p int32, o int64) string) string {
	t.Helper()
	f := lossRun(t)
	topic, parts, offs := deliveries(t, f.trace)
	var b strings.Builder
	b.WriteString(`{"level":30,"time":1767225600000,"pid":4242,"hostname":"app-1","msg":"consumer connected"}` + "\n")
	for i := range offs {
		if i%20 == 0 {
			fmt.Fprintf(&b, `{"level":20,"time":%d,"msg":"Attempting to fetch 20 messages to the message cache","fac":"BINDING"}`+"\n", 1767225600000+i)
		}
		b.WriteString(line(topic, parts[i], offs[i]) + "\n")
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func gzipFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(src)+".gz")
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInspectReadsTheEvidenceApplicationsWrite gives inspect the v1.10.0 group with the
// evidence a new user has: a pino log with string offsets (once read as "0 deliveries,
// 83 malformed lines" and judged "OK: no records lost on 0 partitions", exit 0, on a
// group that lost 118 records), the same nested under "record", the run's trace
// gzipped, and a text log read with --pattern. Each must find the 118 lost records.
func TestInspectReadsTheEvidenceApplicationsWrite(t *testing.T) {
	testenv.MustLive(t) // reads the group and trace of the live v1.10.0 run (lossRun)
	f := lossRun(t)
	pino := appLog(t, "pino.log", func(topic string, p int32, o int64) string {
		return fmt.Sprintf(`{"level":30,"time":1767225601000,"msg":"delivered","topic":%q,"partition":%d,"offset":"%d"}`, topic, p, o)
	})
	nested := appLog(t, "nested.log", func(topic string, p int32, o int64) string {
		return fmt.Sprintf(`{"level":"info","message":"handled","record":{"topic":%q,"partition":"%d","offset":"%d"}}`, topic, p, o)
	})
	text := appLog(t, "app.log", func(topic string, p int32, o int64) string {
		return fmt.Sprintf(`2026-01-01T00:00:01Z INFO handled order from %s[%d]@%d`, topic, p, o)
	})
	cases := []struct {
		name  string
		extra []string
	}{
		{"a pino log with string offsets", []string{"--delivered", pino}},
		{"a JSON log with the record nested under record", []string{"--delivered", nested}},
		{"the run's trace gzipped", []string{"--delivered", gzipFile(t, f.trace)}},
		{"an application's text log read with --pattern", []string{"--delivered", text, "--pattern", `handled order from (?P<topic>[^\[]+)\[(?P<partition>\d+)\]@(?P<offset>\d+)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"inspect", "--brokers", f.brokers, "--group", f.run.Group, "--timeout", "20s", "-o", "json"}, tc.extra...)
			if env.SSLBrokers != "" {
				args = append(args, "--config", env.SSLConfig)
			}
			r := kstranded(t, time.Minute, args...)
			if r.Code != 3 {
				t.Fatalf("exit %d, want 3 (records lost)\n%s", r.Code, r)
			}
			doc := decode[inspectDoc](t, r)
			if s := doc.Summary; s.Lost != 118 || s.Delivered != 83 {
				t.Errorf("summary %+v, want 118 lost, 83 delivered", s)
			}
		})
	}
}

// saysOK finds the word OK as a verdict (not inside a file name).
var saysOK = regexp.MustCompile(`(?m)(^|\s)OK(:|\s|$)`)

// TestInspectNeverSaysOKWithoutEvidence: evidence that names no delivery (all lines
// malformed, an empty file, binary garbage, a truncated gzip, a pattern that matches
// nothing) is an error or NO EVIDENCE, never OK and never exit 0.
func TestInspectNeverSaysOKWithoutEvidence(t *testing.T) {
	testenv.MustLive(t) // reads the group and trace of the live v1.10.0 run (lossRun)
	f := lossRun(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gz, err := os.ReadFile(gzipFile(t, f.trace))
	if err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*131 + 7)
	}
	cases := []struct {
		name  string
		extra []string
	}{
		{"every line malformed", []string{"--delivered", write("bad.log", []byte(strings.Repeat(`{"level":30,"msg":"delivered","topic":"t","partition":0,"offset":"eighty"}`+"\n", 83)))}},
		{"an empty file", []string{"--delivered", write("empty.log", nil)}},
		{"binary garbage", []string{"--delivered", write("garbage.bin", garbage)}},
		{"a truncated gzip", []string{"--delivered", write("cut.trace.gz", gz[:len(gz)/2])}},
		{"a pattern that matches nothing", []string{"--delivered", f.trace, "--pattern", `never (?P<partition>\d+) (?P<offset>\d+)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"inspect", "--brokers", f.brokers, "--group", f.run.Group, "--timeout", "20s"}, tc.extra...)
			if env.SSLBrokers != "" {
				args = append(args, "--config", env.SSLConfig)
			}
			r := kstranded(t, time.Minute, args...)
			if r.Code == 0 || r.Code == 3 || r.Code == 4 {
				t.Fatalf("exit %d, want an error (1) or not enough evidence (6)\n%s", r.Code, r)
			}
			if saysOK.MatchString(r.Stdout) {
				t.Errorf("says OK without evidence:\n%s", r)
			}
		})
	}
}

// TestRewindPlansFromTheSameEvidenceAsInspect: rewind --delivered reads an application's
// log through --pattern and a gzipped trace, and makes no plan from evidence that names
// no delivery (exit 6), where it once said "nothing to rewind".
func TestRewindPlansFromTheSameEvidenceAsInspect(t *testing.T) {
	testenv.MustLive(t) // reads the group and trace of the live v1.10.0 run (lossRun)
	f := lossRun(t)
	text := appLog(t, "app.log", func(topic string, p int32, o int64) string {
		return fmt.Sprintf(`2026-01-01T00:00:01Z INFO handled order from %s[%d]@%d`, topic, p, o)
	})
	empty := filepath.Join(t.TempDir(), "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		extra []string
		code  int
		want  string
	}{
		{"an application log read with --pattern", []string{"--delivered", text, "--pattern", `handled order from (?P<topic>[^\[]+)\[(?P<partition>\d+)\]@(?P<offset>\d+)`}, 0, `"target": 82`},
		{"a gzipped trace", []string{"--delivered", gzipFile(t, f.trace)}, 0, `"target": 82`},
		{"an empty file", []string{"--delivered", empty}, 6, "NO EVIDENCE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"rewind", "--brokers", f.brokers, "--group", f.run.Group, "--timeout", "20s", "-o", "json"}, tc.extra...)
			if env.SSLBrokers != "" {
				args = append(args, "--config", env.SSLConfig)
			}
			r := kstranded(t, time.Minute, args...)
			if r.Code != tc.code || !strings.Contains(r.Stdout+r.Stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q\n%s", r.Code, tc.code, tc.want, r)
			}
		})
	}
}

// TestTraceParseCompletesTheLogsWithTheGroupsLiveCommits: an application log alone has
// deliveries and no commit (NO COMMIT EVIDENCE, exit 6); with --group and --brokers the
// group's committed offset, read live and marked so in the timeline, shows the loss.
func TestTraceParseCompletesTheLogsWithTheGroupsLiveCommits(t *testing.T) {
	testenv.MustLive(t) // reads the group and trace of the live v1.10.0 run (lossRun)
	f := lossRun(t)
	// the run's trace says what was fetched and delivered; every line that carries a
	// committed offset (commits, phase ends, the verdict) is dropped, so only the live
	// read can say what is committed
	fh, err := os.ReadFile(f.trace)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(fh)), "\n") {
		if !strings.Contains(l, `"committed"`) && !strings.Contains(l, `"ev":"store"`) {
			kept = append(kept, l)
		}
	}
	noCommits := filepath.Join(t.TempDir(), "no-commits.trace")
	if err := os.WriteFile(noCommits, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := []string{"--brokers", f.brokers, "--timeout", "20s"}
	if env.SSLBrokers != "" {
		conn = append(conn, "--config", env.SSLConfig)
	}
	r := kstranded(t, time.Minute, "trace", "parse", noCommits)
	if r.Code != 6 || !strings.Contains(r.Stdout, "NO COMMIT EVIDENCE") {
		t.Fatalf("without --group: exit %d, want 6 and NO COMMIT EVIDENCE\n%s", r.Code, r)
	}
	r = kstranded(t, time.Minute, append([]string{"trace", "parse", "--timeline", noCommits, "--group", f.run.Group}, conn...)...)
	if r.Code != 3 || !strings.Contains(r.Stdout, "commit\t202 (read live from the group)") || !strings.Contains(r.Stdout, "group "+f.run.Group+" committed offsets, read live from") {
		t.Fatalf("with --group: exit %d, want 3 with the live commit in the timeline\n%s", r.Code, r)
	}
	r = kstranded(t, time.Minute, append([]string{"trace", "parse", noCommits, "--group", f.run.Group}, conn...)...)
	if r.Code != 3 || !strings.Contains(r.Stdout, "82-199") {
		t.Fatalf("with --group: exit %d, want 3 with 82-199 lost\n%s", r.Code, r)
	}
}
