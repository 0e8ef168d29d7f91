package repro

import (
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/traceevent"
)

func seq(from, to int64) []int64 {
	var out []int64
	for o := from; o <= to; o++ {
		out = append(out, o)
	}
	return out
}

func deliveredOnce(offs ...[]int64) map[int64]int {
	m := map[int64]int{}
	for _, os := range offs {
		for _, o := range os {
			m[o]++
		}
	}
	return m
}

func TestJudge(t *testing.T) {
	seed := append(seq(0, 199), 201) // 200 is the transaction marker: not a record
	cases := []struct {
		name      string
		records   []int64
		delivered map[int64]int
		committed int64
		verdict   verdict.Verdict
		lost      []traceevent.Range
		stranded  []traceevent.Range
		dups      int
	}{
		{
			name:    "the seed's loss: 82..199 committed past, the marker at 200 not counted",
			records: seed, delivered: deliveredOnce(seq(0, 81), []int64{201}), committed: 202,
			verdict: verdict.Lost, lost: []traceevent.Range{{RecordRange: kpart.Counted(82, 199, 118)}},
		},
		{
			name:    "phase 1 of the seed is stranded, not yet lost",
			records: seq(0, 199), delivered: deliveredOnce(seq(0, 81)), committed: 82,
			verdict: verdict.Stranded, stranded: []traceevent.Range{{RecordRange: kpart.Counted(82, 199, 118)}},
		},
		{
			name:    "everything delivered is OK even with duplicates, which are counted",
			records: seed, delivered: deliveredOnce(seq(0, 199), seq(82, 90), []int64{201}), committed: 202,
			verdict: verdict.OK, dups: 9,
		},
		{
			name:    "a gap left by an aborted record does not split a lost range",
			records: []int64{0, 1, 3, 4, 6}, delivered: deliveredOnce([]int64{0}), committed: 7,
			verdict: verdict.Lost, lost: []traceevent.Range{{RecordRange: kpart.Counted(1, 6, 4)}},
		},
		{
			name:    "lost and stranded on both sides of the committed offset",
			records: seq(0, 9), delivered: deliveredOnce([]int64{0, 1, 5}), committed: 5,
			verdict:  verdict.Lost,
			lost:     []traceevent.Range{{RecordRange: kpart.Counted(2, 4, 3)}},
			stranded: []traceevent.Range{{RecordRange: kpart.Counted(6, 9, 4)}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(0, c.records, c.delivered, c.committed, 0)
			if v.Verdict != c.verdict {
				t.Errorf("verdict %s, want %s", v.Verdict, c.verdict)
			}
			if !sameRanges(v.Lost, c.lost) {
				t.Errorf("lost %+v, want %+v", v.Lost, c.lost)
			}
			if !sameRanges(v.Stranded, c.stranded) {
				t.Errorf("stranded %+v, want %+v", v.Stranded, c.stranded)
			}
			if v.Duplicates != c.dups {
				t.Errorf("duplicates %d, want %d", v.Duplicates, c.dups)
			}
		})
	}
}

func sameRanges(a, b []traceevent.Range) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].First != b[i].First || a[i].Last != b[i].Last || a[i].Count != b[i].Count {
			return false
		}
	}
	return true
}

func TestARunCutShortKeepsOnlyTheLossItObserved(t *testing.T) {
	seed := seq(0, 199)
	cases := []struct {
		name      string
		committed int64 // read back from the broker (-1: never read)
		partition verdict.Verdict
		run       verdict.Verdict
	}{
		{"records committed past and never delivered are LOST however the run ended", 150, verdict.Lost, verdict.Lost},
		{"records not delivered when the run stopped are not STRANDED: the phase never ended", 82, verdict.Incomplete, verdict.Incomplete},
		{"no committed offset read: nothing judged", -1, verdict.Incomplete, verdict.Incomplete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{Topic: "t"}
			cur := map[kpart.TopicPartition]int64{}
			if c.committed >= 0 {
				cur[kpart.TopicPartition{Topic: "t", Partition: 0}] = c.committed
			}
			var once kpart.Counts
			for _, o := range seq(0, 81) {
				once.Inc(o)
			}
			r.judge(map[kpart.TopicPartition]*kpart.Counts{{Topic: "t", Partition: 0}: &once},
				map[int32][]int64{0: seed}, map[int32]int64{0: 201}, cur)
			r.incomplete()
			if r.Partitions[0].Verdict != c.partition || r.Verdict != c.run {
				t.Fatalf("partition %s run %s, want %s and %s", r.Partitions[0].Verdict, r.Verdict, c.partition, c.run)
			}
		})
	}
	empty := &Result{}
	empty.incomplete()
	if empty.Verdict != verdict.Incomplete {
		t.Fatalf("a run cut short before any partition was seen: %s, want INCOMPLETE", empty.Verdict)
	}
}
