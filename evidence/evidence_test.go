package evidence

import (
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
		{"JSON lines missing fields are malformed", `{"topic":"t","partition":1}` + "\n" + `{"topic":"t","partition":1,"offset":4}` + "\n{broken\n", string(FormatJSONLines), kpart.TopicPartition{Topic: "t", Partition: 1}, []kpart.Range{{First: 4, Last: 4}}, 0, 2},
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

func FuzzParse(f *testing.F) {
	f.Add([]byte("stranded/0:0-81\nstranded/0:201\n"))
	f.Add([]byte("stranded 0 5\n0:7\n"))
	f.Add([]byte(`{"topic":"t","partition":1,"offset":4}`))
	f.Add([]byte(`{"ev":"run","schema":"kstranded.trace/v1","topic":"s"}` + "\n" + `{"ev":"serve","partition":0,"offsets":[1,2]}`))
	f.Add([]byte(`{"schema":"kstranded.trace-parse/v2","topic":"s","partitions":[{"partition":0,"delivered":[{"first":0,"last":3,"count":4}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSet()
		if err := s.Read(strings.NewReader(string(data)), "fuzz"); err != nil {
			t.Fatal(err)
		}
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
	})
}
