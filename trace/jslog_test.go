package trace

import (
	"bufio"
	"bytes"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The delivery lines the capture application (jsclient/scenario.js) prints, plain
// and through its JSON logger (offsets as strings, as kafkajs gives them).
const (
	jsPlainPattern = `^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)$`
	jsJSONPattern  = `"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"`
)

func jsCapture(t testing.TB, name string) []byte {
	t.Helper()
	return gunzipFile(t, filepath.Join("testdata", "jsclient", name))
}

// lineOf returns line n (1-based) of data.
func lineOf(data []byte, n int) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for i := 1; sc.Scan(); i++ {
		if i == n {
			return sc.Text()
		}
	}
	return ""
}

func parseBytes(t testing.TB, name string, data []byte, format Format, pattern string) (*Report, FileStats) {
	t.Helper()
	opt := Options{}
	if pattern != "" {
		opt.Pattern = regexp.MustCompile(pattern)
	}
	a := NewAnalyzer(opt)
	st, err := a.Parse(name, bytes.NewReader(data), format)
	if err != nil {
		t.Fatal(err)
	}
	return a.Finish(), st
}

// The ground truth is trace/testdata/jsclient/README.md: 1.10.0 lost 82-199 of partition 0
// (fetched, never delivered, committed past: 82, then 202), 1.10.1 lost nothing.
func TestTheRealJSClientCapturesShowExactlyTheRecordsTheRunLost(t *testing.T) {
	for _, c := range []struct {
		file     string
		format   Format
		pattern  string
		lost     string // "" for no LOST finding
		fetched  string
		commit   int64 // the committed offset the trace reads at the end (-1: none)
		matched  int   // deliveries read with the pattern
		delivers string
	}{
		{"v1.10.0-default-debug.log.gz", FormatJSClient, jsPlainPattern, "82-199", "0-201", 202, 83, "0-81,201"},
		{"v1.10.0-json.log.gz", FormatJSClientJSON, jsJSONPattern, "82-199", "0-201", 202, 83, "0-81,201"},
		{"v1.10.1-default-debug.log.gz", FormatJSClient, jsPlainPattern, "", "0-201", 202, 201, "0-199,201"},
		{"v1.10.1-json.log.gz", FormatJSClientJSON, jsJSONPattern, "", "0-201", 202, 201, "0-199,201"},
		// no librdkafka debug forwarded: the BINDING lines and the deliveries only, so nothing
		// says what was fetched or committed and no LOST can be found (issue 13 §3: such a run
		// must not read as a clean bill of health either; that verdict is not this parser's)
		{"v1.10.0-default.log.gz", FormatJSClient, jsPlainPattern, "", "", -1, 83, "0-81,201"},
		{"v1.10.1-default.log.gz", FormatJSClient, jsPlainPattern, "", "", -1, 201, "0-199,201"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data := jsCapture(t, c.file)
			r, st := parseBytes(t, c.file, data, FormatAuto, c.pattern)
			if st.Format != c.format || !st.Detected || st.Malformed != 0 || st.PatternMatched != c.matched {
				t.Fatalf("file stats: %+v", st)
			}
			if st.DetectedAtLine < 2 || st.DetectedAtLine > 10 {
				t.Fatalf("detected at line %d", st.DetectedAtLine)
			}
			lost := findings(r, RuleLoss)
			if c.lost == "" {
				if len(lost) != 0 {
					t.Fatalf("LOST where the run lost nothing: %+v", lost)
				}
			} else {
				if len(lost) != 1 || lost[0].Ranges.String() != c.lost || lost[0].Topic != "stranded" || lost[0].Partition != 0 {
					t.Fatalf("LOST findings: %+v", lost)
				}
				// the evidence lines are the fetch of 0-200 and the commit result of 202
				if len(lost[0].Evidence) != 2 {
					t.Fatalf("evidence: %+v", lost[0].Evidence)
				}
				fetchLine := lineOf(data, lost[0].Evidence[0].Ref.Line)
				commitLine := lineOf(data, lost[0].Evidence[1].Ref.Line)
				if lost[0].Evidence[0].Ref.File != c.file || !strings.Contains(fetchLine, "Enqueue 201 message(s)") ||
					!strings.Contains(commitLine, "OffsetCommit for") || !strings.Contains(commitLine, "returned: Success") {
					t.Fatalf("evidence %+v points at\n%s\n%s", lost[0].Evidence, fetchLine, commitLine)
				}
				if !strings.Contains(lost[0].Evidence[1].What, "committed 202") {
					t.Fatalf("commit evidence: %+v", lost[0].Evidence[1])
				}
			}
			p0 := part(t, r, 0)
			if p0.Fetched.String() != orDash(c.fetched) || p0.Delivered.String() != c.delivers || p0.Committed != c.commit {
				t.Fatalf("partition 0: fetched %s delivered %s committed %d", p0.Fetched, p0.Delivered, p0.Committed)
			}
			// the client's own lines are in the timeline: the cache fills and the workers
			var fills, spawns int
			for _, e := range r.Timeline {
				if e.Kind == KindNote && strings.HasPrefix(e.Detail, "fetch-request attempting to fetch ") {
					fills++
				}
				if e.Kind == KindNote && strings.HasPrefix(e.Detail, "spawn-workers ") {
					spawns++
				}
			}
			if fills == 0 || spawns < 3 {
				t.Fatalf("BINDING lines in the timeline: %d fetch requests, %d spawns", fills, spawns)
			}
		})
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// A multi-line object cut by a chunk boundary is read whole: the report is the same for
// any chunk size.
func TestJSClientLogsReadTheSameWhateverTheChunkSize(t *testing.T) {
	defer func(size, workers int) { rdChunkSize, rdWorkers = size, workers }(rdChunkSize, rdWorkers)
	for _, c := range []struct{ file, pattern string }{
		{"v1.10.0-default-debug.log.gz", jsPlainPattern},
		{"v1.10.1-json.log.gz", jsJSONPattern},
	} {
		data := jsCapture(t, c.file)
		rdChunkSize, rdWorkers = 1<<20, 0
		want, wantSt := parseBytes(t, c.file, data, FormatAuto, c.pattern)
		for _, size := range []int{4096, 1531, 1000} {
			rdChunkSize, rdWorkers = size, 3
			got, st := parseBytes(t, c.file, data, FormatAuto, c.pattern)
			if st.Lines != wantSt.Lines || st.Events != wantSt.Events || st.Matched != wantSt.Matched || st.Malformed != wantSt.Malformed ||
				st.Ignored != wantSt.Ignored {
				t.Fatalf("%s, chunk %d: stats %+v, want %+v", c.file, size, st, wantSt)
			}
			if !reflect.DeepEqual(got.Findings, want.Findings) || !reflect.DeepEqual(got.Partitions, want.Partitions) || len(got.Timeline) != len(want.Timeline) {
				t.Fatalf("%s, chunk %d: the report differs", c.file, size)
			}
		}
	}
}

func jsObj(msg, fac string, ts int64) string {
	return "{\n  message: '" + msg + "',\n  fac: '" + fac + "',\n  timestamp: " + itoa(ts) + ",\n  name: 'rdkafka#consumer-1'\n}\n"
}

const (
	jsEnqueue = "[thrd:b/0]: b/0: Enqueue 10 message(s) (100 bytes, 10 ops) on t [0] fetch queue (qlen 0, v2, last_offset 9, 0 ctrl msgs, 0 aborted msgsets, uncompressed)"
	jsStore   = "[thrd:main]: Topic t [0]: stored offset 10 (leader epoch 0), committed offset INVALID (leader epoch -1): setting stored offset 10 (leader epoch 0)  for commit"
	jsCommit  = "[thrd:main]: GroupCoordinator/0: OffsetCommit for 1 partition(s) in join-state steady: cgrp auto commit timer: returned: Success"
)

// The DefaultLogger's output as it comes: wrapped objects, one-line objects, quotes and
// escapes, colour codes, CRLF, application lines in between, and broken objects.
func TestJSClientLogLinesAsTheyCome(t *testing.T) {
	loss := jsObj(jsEnqueue, "CONSUME", 1700000000000) + "delivered topic=t partition=0 offset=0\n" +
		jsObj(jsStore, "OFFSET", 1700000001000) + jsObj(jsCommit, "COMMIT", 1700000001001)
	for _, c := range []struct {
		name      string
		in        string
		lost      string
		malformed int
		reason    string // of the first malformed
		events    int    // -1: not checked
	}{
		{"wrapped objects and an application line", loss, "1-9", 0, "", -1},
		{"CRLF line ends", strings.ReplaceAll(loss, "\n", "\r\n"), "1-9", 0, "", -1},
		{"colour codes of a terminal", strings.NewReplacer("'CONSUME'", "\x1b[32m'CONSUME'\x1b[39m", "1700000000000", "\x1b[33m1700000000000\x1b[39m").Replace(loss), "1-9", 0, "", -1},
		{"colour codes inside a string", strings.NewReplacer("last_offset 9", "last_offset \x1b[1m9\x1b[22m", "stored offset 10 (", "stored offset \x1b[1m10\x1b[22m (").Replace(loss), "1-9", 0, "", -1},
		{"a one-line object", "{ message: 'Spawning 2 workers', name: '', fac: 'BINDING', timestamp: 1700000000000 }\n" + loss, "1-9", 0, "", -1},
		{"an application line inside an object", strings.Replace(loss, "  fac: 'CONSUME',\n", "  fac: 'CONSUME',\nsomething else\n", 1), "1-9", 0, "", -1},
		{"a truncated object", "{\n  message: 'Spawning 2 workers',\n" + loss, "1-9", 1, "truncated log object (no closing })", -1},
		{"an object whose end was lost", loss + "{\n  message: 'Spawning 2 workers',\n", "1-9", 1, "truncated log object (no closing })", -1},
		{"an unterminated string", "{\n  message: 'Spawning 2 workers,\n  fac: 'BINDING'\n}\n" + loss, "1-9", 1, "unterminated string in a log object", -1},
		{"a field outside an object", "  fac: 'BINDING',\n" + loss, "1-9", 1, "log object field outside an object (its { is missing)", -1},
		{"binary garbage", "\x00\xff\xfe{\x01\n" + loss + "\x89PNG\r\n\x1a\n", "1-9", 0, "", -1},
		{"a line over 1 MiB", loss + strings.Repeat("x", maxLine+10) + "\n", "1-9", 1, "line too long", -1},
		{"a client object without its message", "{\n  fac: 'BINDING',\n  timestamp: 1\n}\n" + loss, "1-9", 1, "client log object without a message", -1},
		{"an application's own object is not the client's", "{\n  user: 'x',\n  id: 3\n}\n" + loss, "1-9", 0, "", -1},
		{"double quotes, backticks and escapes", strings.NewReplacer("message: '[thrd:main]: Topic", `message: "[thrd:main]: Topic`, "for commit',", `for commit",`).Replace(loss) +
			"{\n  message: `it's \"quoted\"`,\n  fac: 'BINDING',\n  timestamp: 1700000002000\n}\n" +
			"{\n  message: 'Seek error. This is effectively a fatal error: Error: x\\n' +\n    '    at y (z.js:1:2)',\n  fac: 'BINDING',\n  timestamp: 1700000002001\n}\n", "1-9", 0, "", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, st := parseBytes(t, "app.log", []byte(c.in), FormatAuto, jsPlainPattern)
			if st.Format != FormatJSClient {
				t.Fatalf("format %q", st.Format)
			}
			if st.Malformed != c.malformed || c.malformed > 0 && st.FirstErrors[0].Reason != c.reason {
				t.Fatalf("malformed %d %+v", st.Malformed, st.FirstErrors)
			}
			lost := findings(r, RuleLoss)
			if len(lost) != 1 || lost[0].Ranges.String() != c.lost {
				t.Fatalf("LOST: %+v (files %+v)", lost, r.Files)
			}
		})
	}
}

func TestJSClientLogsThroughJSONLoggers(t *testing.T) {
	for _, c := range []struct {
		name, in  string
		lost      string
		malformed int
		reason    string
	}{
		{"pino", `{"level":20,"time":1700000000000,"name":"rdkafka#consumer-1","fac":"CONSUME","timestamp":1700000000000,"msg":"` + jsEnqueue + `"}
{"level":30,"time":1700000000500,"name":"app","topic":"t","partition":0,"offset":"0","msg":"delivered"}
{"level":20,"time":1700000001000,"fac":"OFFSET","timestamp":1700000001000,"name":"rdkafka#consumer-1","msg":"` + jsStore + `"}
{"level":20,"time":1700000001001,"fac":"COMMIT","timestamp":1700000001001,"name":"rdkafka#consumer-1","msg":"` + jsCommit + `"}
`, "1-9", 0, ""},
		{"winston: message, ISO time strings, nested metadata", `{"level":"debug","message":"` + jsEnqueue + `","fac":"CONSUME","timestamp":"2023-11-14T22:13:20.000Z","meta":{"a":[1,{"b":"}"}]},"name":"rdkafka#consumer-1"}
{"level":"info","message":"delivered","topic":"t","partition":0,"offset":"0"}
{"level":"debug","message":"` + jsStore + `","fac":"OFFSET","timestamp":"2023-11-14T22:13:21.000Z","name":"rdkafka#consumer-1"}
{"level":"debug","message":"` + jsCommit + `","fac":"COMMIT","timestamp":"2023-11-14T22:13:21.001Z","name":"rdkafka#consumer-1"}
`, "1-9", 0, ""},
		{"bunyan: msg and time, escaped quotes, interleaved plain lines and a truncated object", `{"name":"app","hostname":"h","pid":1,"level":20,"fac":"CONSUME","msg":"` + jsEnqueue + `","time":"2023-11-14T22:13:20.000Z","v":0}
not json at all
{"name":"app","level":30,"topic":"t","partition":0,"offset":"0","msg":"delivered","time":"2023-11-14T22:13:20.500Z","v":0}
{"name":"app","level":20,"fac":"CGRPSTATE","msg":"Group \"g\" changed state \u00e9","time":"2023-11-14T22:13:20.600Z","v":0}
{"name":"app","level":20,"fac":"OFFSET","msg":"` + jsStore + `","time":"2023-11-14T22:13:21.000Z","v":0}
{"name":"app","level":20,"fac":"COMMIT","msg":"` + jsCommit + `","time":"2023-11-14T22:13:21.001Z","v":0}
{"name":"app","level":20,"fac":"COMMIT","msg":"cut short
`, "1-9", 1, "truncated JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pattern := `"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)"`
			r, st := parseBytes(t, "app.log", []byte(c.in), FormatAuto, pattern)
			if st.Format != FormatJSClientJSON || st.Malformed != c.malformed || c.malformed > 0 && st.FirstErrors[0].Reason != c.reason {
				t.Fatalf("stats %+v", st)
			}
			lost := findings(r, RuleLoss)
			if len(lost) != 1 || lost[0].Ranges.String() != c.lost {
				t.Fatalf("LOST: %+v", lost)
			}
			if r.Start.IsZero() || r.Start.Year() != 2023 {
				t.Fatalf("times not read: start %v", r.Start)
			}
		})
	}
}

// An application's log can hold thousands of its own lines before the client's first:
// detection reads on until a line decides, and says which.
func TestDetectionReadsOnToTheFirstLineThatDecides(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString("app: warming up the cache, nothing to do with kafka yet\n")
	}
	pre := b.String()
	t.Run("the client's log after 1 MB of application lines", func(t *testing.T) {
		in := pre + jsObj(jsEnqueue, "CONSUME", 1700000000000)
		_, st := parseBytes(t, "app.log", []byte(in), FormatAuto, "")
		if st.Format != FormatJSClient || st.DetectedAtLine != 20003 || st.Matched != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("delivery lines after 1 MB of other lines, with --pattern", func(t *testing.T) {
		in := pre + "delivered topic=t partition=0 offset=4\ndelivered topic=t partition=0 offset=5\n"
		r, st := parseBytes(t, "app.log", []byte(in), FormatAuto, jsPlainPattern)
		if st.Format != FormatPattern || st.PatternMatched != 2 || st.DetectedAtLine != 20001 || part(t, r, 0).Delivered.String() != "4-5" {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("no line matches --pattern", func(t *testing.T) {
		a := NewAnalyzer(Options{Pattern: regexp.MustCompile(jsPlainPattern)})
		_, err := a.Parse("app.log", strings.NewReader(pre), FormatAuto)
		if err == nil || !strings.Contains(err.Error(), "no line of 20000 matched --pattern") {
			t.Fatalf("err %v", err)
		}
	})
}

// issue 11 §6: a position event at the position already held moves nothing; EOF there is
// the fetcher reaching the end again (said on every return to it) and adds nothing, but a
// fetch error is evidence, once per distinct error.
func TestAPositionEventWithAFetchErrorIsKeptOnceEvenWhenThePositionDidNotMove(t *testing.T) {
	a := NewAnalyzer(Options{})
	pos := func(off int64, reason string) {
		e := newEvent(KindPosition)
		e.Topic, e.Partition, e.Offset, e.Reason = "t", 0, off, reason
		a.add(e)
	}
	fetch := newEvent(KindFetch)
	fetch.Topic, fetch.Partition, fetch.Ranges = "t", 0, []kpart.Range{{First: 0, Last: 9}}
	a.add(fetch)
	pos(10, "")                            // the position the fetch left: nothing new
	pos(10, "EOF")                         // the end reached: nothing new
	pos(10, "Broker: Not leader")          // an error at the held position: kept
	pos(10, "Broker: Not leader")          // the same error again: nothing new
	pos(10, "Broker: Offset out of range") // another error: kept
	pos(12, "")                            // the position moved: kept
	var got []string
	for _, e := range a.Finish().Timeline {
		if e.Kind == KindPosition {
			got = append(got, e.Detail)
		}
	}
	want := []string{"fetch at 10 failed: Broker: Not leader", "fetch at 10 failed: Broker: Offset out of range", "fetch position 12"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("position entries %q, want %q", got, want)
	}
}

// Memory must not grow with the number of partitions: the timelines of 1,000 partitions
// share one budget of entries.
func TestTheTimelinesOfManyPartitionsShareOneBudget(t *testing.T) {
	a := NewAnalyzer(Options{})
	for round := int64(0); round < 100; round++ {
		for p := int32(0); p < 1000; p++ {
			e := newEvent(KindFetch)
			e.Topic, e.Partition, e.Timed = "t", p, false
			e.Ranges = []kpart.Range{{First: round * 10, Last: round*10 + 9}}
			a.add(e)
		}
	}
	r := a.Finish()
	if len(r.Timeline) > timelineBudget || r.TimelineDropped != 100*1000-len(r.Timeline) {
		t.Fatalf("%d timeline entries kept, %d dropped, budget %d", len(r.Timeline), r.TimelineDropped, timelineBudget)
	}
	// every partition still has the start and the end of its story
	p := part(t, r, 999)
	if p.Fetched.String() != "0-999" {
		t.Fatalf("partition 999 fetched %s", p.Fetched)
	}
}

// jsonReadBoth reads line with the compact fast path and with the general reader; ok is
// whether the fast path took it.
func jsonReadBoth(line []byte) (fast, general jsObject, ok bool, err string) {
	var a, b jsScanner
	a.obj.reset(1)
	b.obj.reset(1)
	ok = a.jsonFieldsCompact(line)
	err = b.jsonFieldsAny(line)
	return a.obj, b.obj, ok, err
}

func sameFields(x, y jsObject) bool {
	return bytes.Equal(x.msg, y.msg) && bytes.Equal(x.fac, y.fac) && bytes.Equal(x.name, y.name) &&
		x.hasMsg == y.hasMsg && x.hasFac == y.hasFac && x.ts == y.ts && x.hasTS == y.hasTS
}

func TestCompactJSONReadsAsTheGeneralReader(t *testing.T) {
	for _, tc := range []struct {
		line string
		fast bool // the fast path takes it
	}{
		{`{"level":20,"time":1796225597050,"pid":1,"hostname":"h","fac":"FETCH","timestamp":1796225597051,"name":"rdkafka#consumer-3","msg":"[thrd:b/0]: Fetch topic t [0] at offset 5"}`, true},
		{`{"level":30,"time":1796225597500,"name":"scenario","topic":"t","partition":1,"offset":"0","msg":"delivered"}`, true},
		{`{"time":"2026-03-02T14:03:40.123Z","fac":"OFFSET","message":"a","msg":"b"}`, true},
		{`{"msg":"b","message":"a","time":1700000000}`, true},
		{`{"fac":"X","msg":"say \"hi\""}`, false},             // an escape
		{`{"fac": "X", "msg": "spaced"}`, false},              // whitespace
		{`{"fac":"X","kafka":{"offset":1},"msg":"m"}`, false}, // nested
		{`{"fac":"X","msg":"m"`, false},                       // truncated
		{`{"fac":"X","msg":}`, false},                         // no value
		{`{}`, false},
		{`{"fac":"X","n":true,"m":null,"msg":"m"} trailing`, true},
	} {
		fast, general, ok, err := jsonReadBoth([]byte(tc.line))
		if ok != tc.fast {
			t.Errorf("%s: fast path took it: %v, want %v", tc.line, ok, tc.fast)
		}
		if ok && (err != "" || !sameFields(fast, general)) {
			t.Errorf("%s: fast %+v, general %+v (%q)", tc.line, fast, general, err)
		}
	}
}

// Whatever the fast path accepts, the general reader reads the same fields from.
func FuzzJSONCompact(f *testing.F) {
	f.Add([]byte(`{"level":20,"time":1796225597050,"fac":"FETCH","timestamp":1796225597051,"name":"n","msg":"m"}`))
	f.Add([]byte(`{"time":"2026-03-02T14:03:40.123Z","fac":"OFFSET","message":"a","msg":"b"}`))
	f.Add([]byte(`{"a":1,"b":-2.5e3,"c":"}","d":false}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 || line[0] != '{' {
			return
		}
		fast, general, ok, err := jsonReadBoth(line)
		if ok && (err != "" || !sameFields(fast, general)) {
			t.Fatalf("%q: fast %+v, general %+v (%q)", line, fast, general, err)
		}
	})
}

// trace parse builds no timeline unless it is printed (--timeline) or drawn (--svg): the
// verdict, partitions, findings and counts must not depend on it.
func TestAReportWithoutTimelineSaysTheSameAsOneWith(t *testing.T) {
	for _, c := range []struct{ file, pattern string }{
		{"v1.10.0-default-debug.log.gz", jsPlainPattern},
		{"v1.10.0-json.log.gz", jsJSONPattern},
		{"v1.10.1-default-debug.log.gz", jsPlainPattern},
	} {
		t.Run(c.file, func(t *testing.T) {
			data := jsCapture(t, c.file)
			var reps [2]*Report
			for i, no := range []bool{false, true} {
				a := NewAnalyzer(Options{Pattern: regexp.MustCompile(c.pattern), NoTimeline: no})
				if _, err := a.Parse(c.file, bytes.NewReader(data), FormatAuto); err != nil {
					t.Fatal(err)
				}
				reps[i] = a.Finish()
			}
			with, without := reps[0], reps[1]
			if len(with.Timeline) == 0 || len(without.Timeline) != 0 {
				t.Fatalf("timeline entries: %d with, %d without", len(with.Timeline), len(without.Timeline))
			}
			with.Timeline, with.TimelineDropped, without.TimelineDropped = nil, 0, 0
			if !reflect.DeepEqual(with, without) {
				t.Fatalf("the reports differ:\n%+v\n%+v", with, without)
			}
		})
	}
}

// TestAJSClientLineOfColourCodesAloneIsAnEmptyLine: a line made only of terminal colour
// codes (a logger's reset written on its own) became an empty line once the codes were
// stripped, and the reader indexed its first byte: trace parse --format jsclient
// panicked (index out of range). Found splitting the package (issue 22 §4).
func TestAJSClientLineOfColourCodesAloneIsAnEmptyLine(t *testing.T) {
	for _, f := range []Format{FormatJSClient, FormatJSClientJSON} {
		for _, in := range []string{"a\n\x1b[0m\n", "\x1b[0m\n", "{\n\x1b[31m\x1b[0m\n}\n", "\x1b[0m   \n"} {
			a := NewAnalyzer(Options{})
			if _, err := a.Parse("colour.log", strings.NewReader(in), f); err != nil && strings.Contains(err.Error(), "panic") {
				t.Fatalf("%s %q: %v", f, in, err)
			}
			a.Finish()
		}
	}
}

// reset clears every field of a log object (it is written field by field) but keeps the
// buffers it reuses.
func TestResetClearsEveryFieldOfALogObject(t *testing.T) {
	var o jsObject
	v := reflect.ValueOf(&o).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // unexported
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.String:
			f.SetString("x")
		case reflect.Slice:
			f.SetBytes([]byte("xy"))
		default:
			t.Fatalf("field %s: kind %s not set by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	o.reset(3)
	want := jsObject{start: 3, own: o.own, fac: o.fac, name: o.name, text: o.text}
	if !reflect.DeepEqual(o, want) || len(o.own)+len(o.fac)+len(o.name)+len(o.text) != 0 {
		t.Fatalf("after reset: %+v", o)
	}
}
