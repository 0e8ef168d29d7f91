package evidence

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
)

func read(t *testing.T, name, text string) *Set {
	t.Helper()
	s := NewSet()
	if err := s.Read(strings.NewReader(text), name); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEvidenceFormats(t *testing.T) {
	trace := `{"ts":"2026-01-01T00:00:00Z","at_ms":0,"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","group":"g1"}
{"ts":"2026-01-01T00:00:00Z","at_ms":1,"ev":"fetch","ranges":[{"partition":0,"first":0,"last":199,"count":200}]}
{"ts":"2026-01-01T00:00:00Z","at_ms":2,"ev":"serve","partition":0,"offsets":[0,1,2]}
{"ts":"2026-01-01T00:00:00Z","at_ms":3,"ev":"serve","partition":0,"offsets":[3,4,201]}
{"ts":"2026-01-01T00:00:00Z","at_ms":4,"ev":"serve","partition":0,"offsets":[4]}
`
	traceParse := `{
  "schema": "kstranded.trace-parse/v2",
  "topic": "stranded",
  "group": "g1",
  "partitions": [
    {"partition": 0, "delivered": [{"partition": 0, "first": 0, "last": 81, "count": 82}, {"partition": 0, "first": 201, "last": 201, "count": 1}]}
  ]
}`
	tests := []struct {
		name       string
		text       string
		wantFormat string
		wantTP     kpart.TopicPartition
		wantRanges []kpart.Range
		wantDup    int64
		wantBad    int
	}{
		{"a repro trace gives the served offsets under the run header's topic", trace, string(FormatTrace), kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 0, Last: 4}, {First: 201, Last: 201}}, 1, 0},
		{"trace parse output gives its dense ranges", traceParse, string(FormatTraceParse), kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 0, Last: 81}, {First: 201, Last: 201}}, 0, 0},
		{"topic partition offset lines are read", "stranded 0 0\nstranded 0 1\nstranded 0 5\n", "text (topic partition offset)", kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 0, Last: 1}, {First: 5, Last: 5}}, 0, 0},
		{"partition:offset lines have no topic", "# comment\n0:0\n0:1\n\n0:2\n", "text (partition:offset)", kpart.TopicPartition{Topic: "", Partition: 0}, []kpart.Range{{First: 0, Last: 2}}, 0, 0},
		{"ranges name topic and partition", "stranded/0:0-81\nstranded/0:201\n", "text (ranges)", kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 0, Last: 81}, {First: 201, Last: 201}}, 0, 0},
		{"overlapping ranges count duplicates", "stranded/0:0-9\nstranded/0:5-14\n", "text (ranges)", kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 0, Last: 14}}, 5, 0},
		{"JSON lines with topic partition offset are read", `{"topic":"stranded","partition":3,"offset":7}` + "\n" + `{"topic":"stranded","partition":3,"offset":8}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "stranded", Partition: 3}, []kpart.Range{{First: 7, Last: 8}}, 0, 0},
		{"malformed lines are counted and the rest is read", "stranded/0:0-1\nbogus\n0:x\nstranded/0:9-3\nstranded 0 2\n", "text (ranges, topic partition offset)", kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 0, Last: 2}}, 0, 3},
		{"JSON lines that are not JSON are malformed and lines without an offset are other log lines", `{"topic":"t","partition":1}` + "\n" + `{"topic":"t","partition":1,"offset":4}` + "\n{broken\n", string(FormatJSONLines), kpart.TopicPartition{Topic: "t", Partition: 1}, []kpart.Range{{First: 4, Last: 4}}, 0, 1},
		{"a pino line with a string offset is a delivery", `{"level":30,"time":1767225600000,"msg":"delivered","topic":"stranded","partition":0,"offset":"81"}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 81, Last: 81}}, 0, 0},
		{"string partitions and offsets nested under record are read", `{"level":"info","message":"handled","record":{"topic":"stranded","partition":"2","offset":"7"}}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "stranded", Partition: 2}, []kpart.Range{{First: 7, Last: 7}}, 0, 0},
		{"a record nested under msg takes the top-level topic", `{"topic":"stranded","msg":{"partition":1,"offset":3}}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "stranded", Partition: 1}, []kpart.Range{{First: 3, Last: 3}}, 0, 0},
		{"a record nested under kafka is read", `{"kafka":{"topic":"stranded","partition":0,"offset":5}}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "stranded", Partition: 0}, []kpart.Range{{First: 5, Last: 5}}, 0, 0},
		{"client log lines between deliveries are ignored, not malformed", `{"level":20,"msg":"Attempting to fetch 20 messages to the message cache","fac":"BINDING"}` + "\n" + `{"msg":"delivered","partition":0,"offset":"1"}` + "\n" + `{"msg":"committing","offset":"2"}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "", Partition: 0}, []kpart.Range{{First: 1, Last: 1}}, 0, 0},
		{"an offset that is not a number is malformed", `{"partition":0,"offset":"eighty"}` + "\n" + `{"partition":0,"offset":1.5}` + "\n" + `{"partition":0,"offset":"0"}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "", Partition: 0}, []kpart.Range{{First: 0, Last: 0}}, 0, 2},
		{"a banner before JSON lines is one malformed line, not the format", "> node app.js\n" + `{"partition":0,"offset":1}` + "\n" + `{"partition":0,"offset":2}`, string(FormatJSONLines), kpart.TopicPartition{Topic: "", Partition: 0}, []kpart.Range{{First: 1, Last: 2}}, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := read(t, "f", tc.text)
			if got := string(s.Sources[0].Format); got != tc.wantFormat {
				t.Errorf("format = %q, want %q", got, tc.wantFormat)
			}
			if got := s.Sources[0].Malformed; got != tc.wantBad {
				t.Errorf("malformed = %d, want %d (%+v)", got, tc.wantBad, s.Malformed)
			}
			p := s.Parts[tc.wantTP]
			if p == nil {
				t.Fatalf("no evidence for %v: %+v", tc.wantTP, s.Parts)
			}
			if len(p.Delivered) != len(tc.wantRanges) {
				t.Fatalf("delivered = %v, want %v", p.Delivered, tc.wantRanges)
			}
			for i := range p.Delivered {
				if p.Delivered[i] != tc.wantRanges[i] {
					t.Fatalf("delivered = %v, want %v", p.Delivered, tc.wantRanges)
				}
			}
			if p.Duplicates != tc.wantDup {
				t.Errorf("duplicates = %d, want %d", p.Duplicates, tc.wantDup)
			}
		})
	}
}

func TestMalformedLinesAreShownWithTheirLineNumbersUpToALimit(t *testing.T) {
	s := read(t, "bad.txt", strings.Repeat("nonsense\n", 9)+"0:1\n")
	if s.Sources[0].Malformed != 9 {
		t.Fatalf("malformed = %d, want 9", s.Sources[0].Malformed)
	}
	if len(s.Malformed) != MaxShownMalformed || s.Malformed[0].Line != 1 || s.Malformed[4].Line != 5 {
		t.Fatalf("shown = %+v", s.Malformed)
	}
}

func TestTopiclessLinesTakeTheResolvedTopicAndMergeWithNamedOnes(t *testing.T) {
	s := NewSet()
	_ = s.Read(strings.NewReader("0:0-4\n"), "a")
	_ = s.Read(strings.NewReader("stranded/0:3-9\n"), "b")
	s.ResolveTopic("stranded")
	p := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
	if p == nil || len(p.Delivered) != 1 || p.Delivered[0] != (kpart.Range{First: 0, Last: 9}) || p.Duplicates != 2 {
		t.Fatalf("got %+v", p)
	}
	if _, ok := s.Parts[kpart.TopicPartition{Topic: "", Partition: 0}]; ok {
		t.Fatal("topicless partition left behind")
	}
}

func TestContainsFindsOffsetsInsideIntervals(t *testing.T) {
	p := &Partition{Delivered: []kpart.Range{{First: 0, Last: 81}, {First: 201, Last: 201}}}
	for o, want := range map[int64]bool{0: true, 81: true, 82: false, 200: false, 201: true, 202: false} {
		if p.Contains(o) != want {
			t.Errorf("Contains(%d) = %v", o, !want)
		}
	}
}

// checkSet asserts what every read must leave, whatever the bytes.
func checkSet(t *testing.T, s *Set) {
	for tp, p := range s.Parts {
		var n int64
		for i, iv := range p.Delivered {
			if iv.First < 0 || iv.Last < iv.First {
				t.Fatalf("%v: bad interval %v", tp, iv)
			}
			if i > 0 && iv.First <= p.Delivered[i-1].Last+1 {
				t.Fatalf("%v: intervals not disjoint and sorted: %v", tp, p.Delivered)
			}
			n += iv.Len()
		}
		if n != p.Count || p.Duplicates < 0 {
			t.Fatalf("%v: count %d, want %d; dup %d", tp, p.Count, n, p.Duplicates)
		}
	}
	if len(s.Malformed) > MaxShownMalformed {
		t.Fatalf("%d malformed shown", len(s.Malformed))
	}
	var records int64
	for _, src := range s.Sources {
		records += src.Records
		lines := 0
		for _, k := range src.Kinds {
			lines += k.Lines
			if k.Lines <= 0 || (k.First < 0) != (k.Last < 0) || k.Last < k.First {
				t.Fatalf("%s: kind %+v", src.Name, k)
			}
		}
		if lines != src.Lines+src.Ignored {
			t.Fatalf("%s: kinds %+v add up to %d lines, want %d delivery + %d ignored", src.Name, src.Kinds, lines, src.Lines, src.Ignored)
		}
	}
	if records == 0 && s.Insufficient() == "" {
		t.Fatalf("no delivery read, yet the evidence is sufficient: %+v", s.Sources)
	}
}

// readErrOK: the only errors a read may return are for binary data and broken gzip.
func readErrOK(err error) bool {
	return err == nil || errors.Is(err, ErrBinary) || strings.Contains(err.Error(), "gzip: ")
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("stranded/0:0-81\nstranded/0:201\n"))
	f.Add([]byte("stranded 0 5\n0:7\n"))
	f.Add([]byte(`{"topic":"t","partition":1,"offset":4}`))
	f.Add([]byte(`{"level":30,"time":1767225600000,"msg":"delivered","topic":"stranded","partition":0,"offset":"81"}`))
	f.Add([]byte(`{"level":"info","message":{"topic":"stranded","partition":"0","offset":"9007199254740993"}}`))
	f.Add([]byte(`{"ev":"run","schema":"kstranded.trace/v1","topic":"s"}` + "\n" + `{"ev":"serve","partition":0,"offsets":[1,2]}`))
	f.Add([]byte(`{"schema":"kstranded.trace-parse/v2","topic":"s","partitions":[{"partition":0,"delivered":[{"first":0,"last":3,"count":4}]}]}`))
	f.Add(gz(f, traceText))
	f.Add([]byte(`{"msg":"processing","partition":0,"offset":"70"}` + "\n" + `{"msg":"processed","partition":0,"offset":"70"}` + "\n" + `{"msg":"heartbeat ok, lag check","partition":0,"offset":82}`))
	f.Add([]byte(`{"message":"handled","record":{"kind":"done","partition":1,"offset":2}}` + "\n" + `{"message":"handled","record":{"kind":"start","partition":1,"offset":"x"}}`))
	when, err := ParseWhen("msg=processed")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, w := range []*When{nil, when} {
			s := NewSet()
			s.When = w
			if err := s.Read(bytes.NewReader(data), "fuzz"); !readErrOK(err) {
				t.Fatal(err)
			} else if err != nil {
				return
			}
			checkSet(t, s)
		}
	})
}

func FuzzPattern(f *testing.F) {
	f.Add([]byte("2026-01-01T00:00:01Z INFO handled order from stranded[0]@81\nAttempting to fetch 20 messages\n"))
	f.Add([]byte("handled order from stranded[99999999999]@-1\n"))
	p, err := CompilePattern(`handled order from (?P<topic>[^\[]+)\[(?P<partition>[^\]]*)\]@(?P<offset>\S*)`)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"msg":"processing","line":"handled order from stranded[0]@70"}` + "\n" + `{"msg":"processed","line":"handled order from stranded[0]@70"}` + "\n"))
	when, err := ParseWhen("msg=processed")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, w := range []*When{nil, when} {
			s := NewSet()
			s.Pattern, s.When = p, w
			if err := s.Read(bytes.NewReader(data), "fuzz"); !readErrOK(err) {
				t.Fatal(err)
			} else if err != nil {
				return
			}
			checkSet(t, s)
			if f := s.Sources[0].Format; f != FormatPattern && f != FormatEmpty {
				t.Fatalf("format %q with a pattern", s.Sources[0].Format)
			}
		}
	})
}

func gz(t testing.TB, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const traceText = `{"ts":"2026-01-01T00:00:00Z","at_ms":0,"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","group":"g1"}
{"ts":"2026-01-01T00:00:00Z","at_ms":2,"ev":"serve","partition":0,"offsets":[0,1,2]}
`

func TestGzipEvidenceIsReadAndBrokenFilesAreErrorsOrNoEvidence(t *testing.T) {
	whole := gz(t, traceText)
	garbage := make([]byte, 2048)
	for i := range garbage {
		garbage[i] = byte(i*131 + 7)
	}
	cases := []struct {
		name         string
		data         []byte
		wantErr      string
		wantRecords  int64
		insufficient bool
	}{
		{"a gzipped trace is read like the trace", whole, "", 3, false},
		{"a truncated gzip is an error", whole[:len(whole)-10], "gzip: unexpected EOF", 0, true},
		{"a gzip header alone is an error", whole[:10], "gzip:", 0, true},
		{"binary garbage is an error", garbage, "binary data", 0, true},
		{"an empty file is no evidence", nil, "", 0, true},
		{"a gzipped empty file is no evidence", gz(t, ""), "", 0, true},
		{"a file of blank lines is no evidence", []byte("\n\n  \n"), "", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			err := s.Read(bytes.NewReader(tc.data), "f")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Sources[0].Records != tc.wantRecords {
				t.Errorf("records = %d, want %d", s.Sources[0].Records, tc.wantRecords)
			}
			if got := s.Insufficient() != ""; got != tc.insufficient {
				t.Errorf("insufficient = %q, want %v", s.Insufficient(), tc.insufficient)
			}
		})
	}
	s := NewSet()
	if err := s.Read(bytes.NewReader(whole), "t.gz"); err != nil || !s.Sources[0].Gzip || s.Sources[0].Format != FormatTrace {
		t.Fatalf("err %v source %+v, want a gzip trace", err, s.Sources[0])
	}
}

func TestEvidenceIsInsufficientWhenNothingWasDeliveredOrMostLinesAreMalformed(t *testing.T) {
	cases := []struct {
		name    string
		files   []string
		pattern string
		want    string
	}{
		{"deliveries are evidence", []string{"0:0-9\n"}, "", ""},
		{"a few malformed lines among deliveries are evidence", []string{"0:0\n0:1\nbogus\n"}, "", ""},
		{"only other log lines is no evidence", []string{`{"msg":"consumer connected"}` + "\n"}, "", "no delivery found in the evidence (0 malformed lines, 1 other lines)"},
		{"every line malformed is no evidence", []string{strings.Repeat(`{"partition":0,"offset":"eighty"}`+"\n", 83)}, "", "no delivery found in the evidence (83 malformed lines, 0 other lines)"},
		{"most lines malformed is no evidence", []string{"0:1\nx\ny\n"}, "", "f0: 2 malformed lines and only 1 delivery lines"},
		{"one file mostly malformed spoils the set", []string{"0:0-99\n", "0:1\nx\ny\n"}, "", "f1: 2 malformed lines"},
		{"a pattern that matches nothing says so", []string{"0:1\n"}, `never (?P<partition>\d+) (?P<offset>\d+)`, `--pattern "never`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			if tc.pattern != "" {
				p, err := CompilePattern(tc.pattern)
				if err != nil {
					t.Fatal(err)
				}
				s.Pattern = p
			}
			for i, f := range tc.files {
				if err := s.Read(strings.NewReader(f), fmt.Sprintf("f%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			got := s.Insufficient()
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Insufficient() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPatternReadsAnApplicationLogAndIgnoresOtherLines(t *testing.T) {
	p, err := CompilePattern(`handled (?P<topic>[\w.-]+)\[(?P<partition>\w+)\]@(?P<offset>\w+)`)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet()
	s.Pattern = p
	log := "starting\n" + strings.Repeat("Attempting to fetch 20 messages\n", 3000) +
		"handled stranded[0]@0\nhandled stranded[0]@1\nhandled stranded[x]@2\n" + `{"partition":0,"offset":5}` + "\n"
	if err := s.Read(strings.NewReader(log), "app.log"); err != nil {
		t.Fatal(err)
	}
	src := s.Sources[0]
	if src.Format != FormatPattern || src.Lines != 2 || src.Malformed != 1 || src.Ignored != 3002 {
		t.Fatalf("source %+v, want 2 delivery lines, 1 malformed, 3002 ignored", src)
	}
	part := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
	if part == nil || len(part.Delivered) != 1 || part.Delivered[0] != (kpart.Range{First: 0, Last: 1}) {
		t.Fatalf("parts %+v", s.Parts)
	}
	if _, err := CompilePattern(`(?P<offset>\d+)`); err == nil {
		t.Fatal("a pattern without a partition group must be refused")
	}
}

// pinoLog is the log: for each offset 0-81 and 201 of stranded/0, a
// "processing" line when the handler starts and a "processed" line when it is done,
// except the processed lines of the offsets in crashed; then the heartbeat lines, each
// naming an offset.
func pinoLog(crashed func(int64) bool, heartbeats ...int64) string {
	var b strings.Builder
	line := func(msg string, o int64) {
		fmt.Fprintf(&b, `{"level":30,"time":1767225600000,"pid":7,"hostname":"h","msg":%q,"topic":"stranded","partition":0,"offset":"%d"}`+"\n", msg, o)
	}
	offsets := []int64{}
	for o := int64(0); o <= 81; o++ {
		offsets = append(offsets, o)
	}
	offsets = append(offsets, 201)
	b.WriteString(`{"level":30,"time":1767225600000,"msg":"consumer connected"}` + "\n")
	for _, o := range offsets {
		line("processing", o)
		if crashed == nil || !crashed(o) {
			line("processed", o)
		}
	}
	for _, o := range heartbeats {
		line("heartbeat ok, lag check", o)
	}
	return b.String()
}

func readWhen(t *testing.T, when, text string) *Set {
	t.Helper()
	s := NewSet()
	if when != "" {
		w, err := ParseWhen(when)
		if err != nil {
			t.Fatal(err)
		}
		s.When = w
	}
	if err := s.Read(strings.NewReader(text), "app.log"); err != nil {
		t.Fatal(err)
	}
	return s
}

func kindsOf(s *Set) map[string]Kind {
	m := map[string]Kind{}
	for _, k := range s.Sources[0].Kinds {
		m[fmt.Sprintf("%s counted=%t", k.Name, k.Counted)] = k
	}
	return m
}

func TestALogWithProcessingAndProcessedLinesIsAmbiguousUntilOneIsPicked(t *testing.T) {
	s := readWhen(t, "", pinoLog(nil))
	why := s.Insufficient()
	for _, want := range []string{
		"app.log: 2 kinds of line carry a partition and an offset",
		"msg=processing (83 lines, offsets 0-201)",
		"msg=processed (83 lines, offsets 0-201)",
		"--delivered-when msg=processed",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("Insufficient() = %q, lacks %q", why, want)
		}
	}
	k := kindsOf(s)
	if k["msg=processing counted=true"].Lines != 83 || k["other log lines counted=false"].Lines != 1 {
		t.Fatalf("kinds %+v", s.Sources[0].Kinds)
	}

	s = readWhen(t, "msg=processed", pinoLog(nil))
	if why := s.Insufficient(); why != "" {
		t.Fatalf("with the filter: %s", why)
	}
	src := s.Sources[0]
	if src.Lines != 83 || src.Ignored != 84 || src.Records != 83 {
		t.Fatalf("source %+v, want 83 delivery lines and 84 ignored", src)
	}
	p := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
	if p.Duplicates != 0 || p.Count != 83 {
		t.Fatalf("partition %+v, want 83 distinct deliveries and no duplicates", p)
	}
	k = kindsOf(s)
	if got := k["msg=processing counted=false"]; got.Lines != 83 || got.First != 0 || got.Last != 201 || got.Why != "not --delivered-when msg=processed" || !got.AppLog {
		t.Fatalf("ignored kind %+v", got)
	}
	if got := k["msg=processed counted=true"]; got.Lines != 83 || got.Field != "msg" || got.Value != "processed" || !strings.Contains(got.Sample, `"offset":"0"`) {
		t.Fatalf("counted kind %+v", got)
	}
}

func TestAHandlerCrashBetweenProcessingAndProcessedIsNotADelivery(t *testing.T) {
	crashed := func(o int64) bool { return o >= 70 && o <= 81 }
	// counting every line would call 70-81 delivered: that is what must be refused
	if why := readWhen(t, "", pinoLog(crashed)).Insufficient(); !strings.Contains(why, "msg=processed (71 lines, offsets 0-201)") {
		t.Fatalf("Insufficient() = %q", why)
	}
	s := readWhen(t, "msg=processed", pinoLog(crashed))
	if why := s.Insufficient(); why != "" {
		t.Fatal(why)
	}
	p := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
	want := []kpart.Range{{First: 0, Last: 69}, {First: 201, Last: 201}}
	if !slices.Equal(p.Delivered, want) {
		t.Fatalf("delivered %v, want %v", p.Delivered, want)
	}
	for o := int64(70); o <= 81; o++ {
		if p.Contains(o) {
			t.Fatalf("%d delivered: the handler never finished it", o)
		}
	}
}

func TestHeartbeatLinesWithAnOffsetAreAKindOfTheirOwn(t *testing.T) {
	onlyProcessed := func(text string) string {
		var keep []string
		for _, l := range strings.SplitAfter(text, "\n") {
			if !strings.Contains(l, `"processing"`) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "")
	}
	log := onlyProcessed(pinoLog(nil, 82, 83, 84))
	why := readWhen(t, "", log).Insufficient()
	if !strings.Contains(why, `msg="heartbeat ok, lag check" (3 lines, offsets 82-84)`) || !strings.Contains(why, "--delivered-when msg=processed") {
		t.Fatalf("Insufficient() = %q", why)
	}
	for _, when := range []string{"msg=processed", "msg~^processed$", `~"msg":"processed"`} {
		t.Run(when, func(t *testing.T) {
			s := readWhen(t, when, log)
			if why := s.Insufficient(); why != "" {
				t.Fatal(why)
			}
			p := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
			if p.Contains(82) || p.Count != 83 {
				t.Fatalf("delivered %v", p.Delivered)
			}
			hb := kindsOf(s)[`msg="heartbeat ok, lag check" counted=false`]
			if hb.Lines != 3 || hb.First != 82 || hb.Last != 84 {
				t.Fatalf("heartbeat kind %+v in %+v", hb, s.Sources[0].Kinds)
			}
		})
	}
}

func TestOneKindOfLineIsNamedAndOtherFormatsAreNeverAmbiguous(t *testing.T) {
	s := readWhen(t, "", `{"msg":"processed","partition":0,"offset":1}`+"\n"+`{"msg":"processed","partition":1,"offset":5}`+"\n")
	if why := s.Insufficient(); why != "" {
		t.Fatal(why)
	}
	if ks := s.Sources[0].Kinds; len(ks) != 1 || ks[0].Name != "msg=processed" || !ks[0].Counted || ks[0].Lines != 2 || ks[0].First != 1 || ks[0].Last != 5 {
		t.Fatalf("kinds %+v", ks)
	}
	for name, text := range map[string]string{
		"trace":         traceText + `{"ev":"fetch","ranges":[]}` + "\n",
		"text":          "stranded/0:0-9\n0:12\nstranded 0 14\n",
		"trace parse":   `{"schema":"kstranded.trace-parse/v2","topic":"s","partitions":[{"partition":0,"delivered":[{"first":0,"last":3,"count":4}]},{"partition":1,"delivered_offsets":[2]}]}`,
		"winston mixed": `{"level":"info","message":"handled","record":{"topic":"stranded","partition":"2","offset":"7"}}` + "\n" + `{"level":"info","message":"handled","record":{"topic":"stranded","partition":"2","offset":"8"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := readWhen(t, "", text)
			if why := s.Insufficient(); why != "" {
				t.Fatal(why)
			}
			lines := 0
			for _, k := range s.Sources[0].Kinds {
				lines += k.Lines
			}
			if src := s.Sources[0]; lines != src.Lines+src.Ignored {
				t.Fatalf("kinds %+v do not add up to %d lines + %d ignored", src.Kinds, src.Lines, src.Ignored)
			}
		})
	}
	s = readWhen(t, "", "stranded/0:0-9\n0:12\n")
	if ks := s.Sources[0].Kinds; len(ks) != 2 || ks[0].Name != "text (ranges)" || ks[0].First != 0 || ks[0].Last != 9 || ks[1].Name != "text (partition:offset)" {
		t.Fatalf("text kinds %+v", ks)
	}
}

func TestAFilterThatMatchesNothingSaysSoAndDoesNotFilterTraces(t *testing.T) {
	s := readWhen(t, "msg=done", pinoLog(nil))
	if why := s.Insufficient(); !strings.Contains(why, `--delivered-when "msg=done" matched no delivery line`) {
		t.Fatalf("Insufficient() = %q", why)
	}
	s = readWhen(t, "msg=done", traceText)
	if s.Sources[0].Records != 3 || s.Insufficient() != "" {
		t.Fatalf("a trace read with a filter: %+v %q", s.Sources[0], s.Insufficient())
	}
}

func TestPatternLogsAreFilteredAndToldApartToo(t *testing.T) {
	p, err := CompilePattern(`(?P<topic>stranded)\[(?P<partition>\d+)\]@(?P<offset>\d+)`)
	if err != nil {
		t.Fatal(err)
	}
	text := "start stranded[0]@1\nend stranded[0]@1\nstart stranded[0]@2\nnoise\n"
	s := NewSet()
	s.Pattern = p
	s.When, _ = ParseWhen(`~^end `)
	if err := s.Read(strings.NewReader(text), "app.log"); err != nil {
		t.Fatal(err)
	}
	part := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
	if part == nil || !slices.Equal(part.Delivered, []kpart.Range{{First: 1, Last: 1}}) {
		t.Fatalf("parts %+v", s.Parts)
	}
	k := kindsOf(s)
	if k["lines matching --pattern counted=true"].Lines != 1 || k["lines matching --pattern counted=false"].Lines != 2 || k["other lines counted=false"].Lines != 1 {
		t.Fatalf("kinds %+v", s.Sources[0].Kinds)
	}
	// a pattern over a JSON log tells its messages apart like a JSON line
	s = NewSet()
	s.Pattern, _ = CompilePattern(`"partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)"`)
	if err := s.Read(strings.NewReader(pinoLog(nil)), "app.log"); err != nil {
		t.Fatal(err)
	}
	if why := s.Insufficient(); !strings.Contains(why, "msg=processing (83 lines") {
		t.Fatalf("Insufficient() = %q", why)
	}
}

func TestParseWhen(t *testing.T) {
	line := []byte(`{"level":30,"msg":"processed","record":{"kind":"order","partition":0,"offset":1},"a.b":"dotted"}`)
	for expr, want := range map[string]bool{
		"msg=processed":       true,
		"msg=processing":      false,
		"level=30":            true,
		"record.kind=order":   true,
		"kind=order":          true, // under the object that carries the delivery
		"a.b=dotted":          true,
		"msg~^proc":           true,
		"msg~ing$":            false,
		`~"level":30`:         true,
		"missing=x":           false,
		"record=x":            false, // an object is no value
		"msg=":                false,
		"msg=processed extra": false,
	} {
		w, err := ParseWhen(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := w.MatchLine(line); got != want {
			t.Errorf("%s matches = %v, want %v", expr, got, want)
		}
	}
	if w, _ := ParseWhen("msg=processed"); w.MatchLine([]byte("msg=processed")) {
		t.Error("a field filter matched a text line")
	}
	for _, bad := range []string{"", "processed", "=x", "~", "msg~(", "a..b=x", "a.=x", "1 2=x"} {
		if _, err := ParseWhen(bad); err == nil || !strings.Contains(err.Error(), "--delivered-when") {
			t.Errorf("ParseWhen(%q) = %v, want an error naming the flag", bad, err)
		}
	}
}

func TestMessagesThatDifferInTheirNumbersAreOneKindWhenThereAreMany(t *testing.T) {
	var b strings.Builder
	for o := 0; o < 50; o++ {
		fmt.Fprintf(&b, `{"msg":"processed order %d","partition":0,"offset":%d}`+"\n", 1000+o, o)
	}
	s := readWhen(t, "", b.String())
	if why := s.Insufficient(); why != "" {
		t.Fatalf("one message with an id per line is one kind: %s", why)
	}
	if ks := s.Sources[0].Kinds; len(ks) != 1 || ks[0].Name != `msg="processed order <n>"` || !ks[0].Varies || ks[0].Lines != 50 || ks[0].Last != 49 {
		t.Fatalf("kinds %+v", ks)
	}

	// with processing lines too: two kinds, and the suggested filter works
	for o := 0; o < 50; o++ {
		fmt.Fprintf(&b, `{"msg":"processing order %d","partition":0,"offset":%d}`+"\n", 1000+o, o)
	}
	why := readWhen(t, "", b.String()).Insufficient()
	const flag = `--delivered-when 'msg~^processed order \S+$'`
	if !strings.Contains(why, `msg="processing order <n>" (50 lines, offsets 0-49)`) || !strings.Contains(why, flag) {
		t.Fatalf("Insufficient() = %q", why)
	}
	s = readWhen(t, `msg~^processed order \S+$`, b.String())
	if why := s.Insufficient(); why != "" || s.Sources[0].Lines != 50 || s.Sources[0].Ignored != 50 {
		t.Fatalf("%q %+v", why, s.Sources[0])
	}

	// a few messages that differ in a number may mean different things
	few := `{"msg":"stage 1 done","partition":0,"offset":1}` + "\n" + `{"msg":"stage 2 done","partition":0,"offset":1}` + "\n"
	if why := readWhen(t, "", few).Insufficient(); !strings.Contains(why, `msg="stage 1 done" (1 line, offset 1), msg="stage 2 done" (1 line, offset 1)`) {
		t.Fatalf("Insufficient() = %q", why)
	}
}

func TestASourceKeepsABoundedNumberOfKinds(t *testing.T) {
	var b strings.Builder
	for o := 0; o < 500; o++ {
		word := strings.Repeat(string(rune('a'+o%26)), 1+o/26)
		fmt.Fprintf(&b, `{"msg":"handled %s","partition":0,"offset":%d}`+"\n", word, o)
	}
	s := readWhen(t, "", b.String())
	ks := s.Sources[0].Kinds
	if len(ks) != maxKinds+1 || ks[maxKinds].Name != "JSON lines with other messages" || ks[maxKinds].Lines != 500-maxKinds {
		t.Fatalf("%d kinds, last %+v", len(ks), ks[len(ks)-1])
	}
	if why := s.Insufficient(); !strings.Contains(why, "65 kinds of line") || !strings.Contains(why, "and 59 more") {
		t.Fatalf("Insufficient() = %q", why)
	}
}
