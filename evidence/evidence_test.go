package evidence

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSet()
		if err := s.Read(bytes.NewReader(data), "fuzz"); !readErrOK(err) {
			t.Fatal(err)
		} else if err != nil {
			return
		}
		checkSet(t, s)
	})
}

func FuzzPattern(f *testing.F) {
	f.Add([]byte("2026-01-01T00:00:01Z INFO handled order from stranded[0]@81\nAttempting to fetch 20 messages\n"))
	f.Add([]byte("handled order from stranded[99999999999]@-1\n"))
	p, err := CompilePattern(`handled order from (?P<topic>[^\[]+)\[(?P<partition>[^\]]*)\]@(?P<offset>\S*)`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSet()
		s.Pattern = p
		if err := s.Read(bytes.NewReader(data), "fuzz"); !readErrOK(err) {
			t.Fatal(err)
		} else if err != nil {
			return
		}
		checkSet(t, s)
		if f := s.Sources[0].Format; f != FormatPattern && f != FormatEmpty {
			t.Fatalf("format %q with a pattern", s.Sources[0].Format)
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
