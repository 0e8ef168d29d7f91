package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/render"
)

func TestPartitionFilterAcceptsANumberOrATopicAndNumber(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  PartitionFilter
		fails bool
	}{
		{"0", PartitionFilter{"", 0}, false},
		{"stranded/3", PartitionFilter{"stranded", 3}, false},
		{"stranded[12]", PartitionFilter{"stranded", 12}, false},
		{"my/topic/2", PartitionFilter{"my/topic", 2}, false},
		{"-1", PartitionFilter{}, true},
		{"stranded", PartitionFilter{}, true},
	} {
		got, err := ParsePartitionFilter(c.in)
		if (err != nil) != c.fails || got != c.want {
			t.Errorf("%q: got %+v, %v", c.in, got, err)
		}
	}
}

func TestDetailsDoNotRepeatTheirEventOrAWord(t *testing.T) {
	for _, c := range []struct{ event, detail, want string }{
		{"fetch", "fetched 0 (1 records)", "0 (1 record)"},
		{"commit", "committed 202", "202"},
		{"note", "run run topic=stranded", "run topic=stranded"},
		{"note", "produce produced 0..199", "produced 0..199"},
		{"clear", "cache cleared: 118 discarded —  keys=[]", "118 discarded — keys=[]"},
		{"rewind-skipped", "rewind skipped: no last-consumed entry", "no last-consumed entry"},
		{"expiry", "cache expired", "cache expired"},
		{"note", "phase-end phase 1 ended", "phase-end phase 1 ended"},
	} {
		if got := plainDetail(c.event, c.detail); got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.event, c.detail, got, c.want)
		}
	}
}

func TestTheTimelineFoldsOneEventOnManyPartitionsAndFiltersOnePartition(t *testing.T) {
	d := NewTrace(report(t, "kstranded-v1.10.0.trace"), "trace parse", true)
	var out bytes.Buffer
	if err := render.WriteGrid(&out, TimelineGrid(d), false); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "stranded[0-19]\trewind-skipped\ton 20 partitions: no last-consumed entry") || strings.Contains(s, "stranded[7]") {
		t.Fatalf("the 20 rewind-skipped entries are not one line:\n%s", s)
	}
	f, err := ParsePartitionFilter("stranded/1")
	if err != nil {
		t.Fatal(err)
	}
	FilterTimeline(&d, f)
	for _, e := range d.Timeline {
		if e.Partition != nil && *e.Partition != 1 {
			t.Fatalf("partition %d left in a timeline of partition 1", *e.Partition)
		}
	}
	if len(d.Timeline) == 0 || len(d.Partitions) != 1 || d.Verdict != "LOST" {
		t.Fatalf("the filter narrows the timeline only: %d entries, %d partitions, %s", len(d.Timeline), len(d.Partitions), d.Verdict)
	}
}

func TestALongFindingIsAHeadlineAndDetailLines(t *testing.T) {
	head, rest := findingLines("cache expired at 14:27:59: 1m0s since the last fetch, 1m0s since the last serve, max.poll.interval.ms 900000 (15m0s, from f:1); the timeout in effect (1m0s) is not max.poll.interval.ms (15m0s)")
	if head != "cache expired at 14:27:59" || len(rest) != 4 || rest[2] != "max.poll.interval.ms 900000 (15m0s, from f:1)" {
		t.Fatalf("%q %q", head, rest)
	}
	head, rest = findingLines("a short one")
	if head != "a short one" || len(rest) != 0 {
		t.Fatalf("%q %q", head, rest)
	}
}

func TestAFindingAfterALongPartitionNameKeepsItsSentence(t *testing.T) {
	head, rest := findingLines("stranded-729333bd [0]: 118 records (82-199) were fetched, never delivered, and the committed offset moved past them (committed 202); discarded by a cache clear that did not rewind")
	if !strings.HasPrefix(head, "stranded-729333bd [0]: 118 records") || len(rest) != 1 {
		t.Fatalf("%q %q", head, rest)
	}
}
