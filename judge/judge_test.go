package judge

import (
	"math/rand/v2"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
)

func rs(pairs ...int64) []kpart.Range {
	var out []kpart.Range
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, kpart.Range{First: pairs[i], Last: pairs[i+1]})
	}
	return out
}

func seedInput() Input {
	return Input{Partition: 0, From: Unknown, LogStart: 0, LastStable: 202, HighWatermark: 202,
		Deliveries: &Deliveries{Ranges: rs(0, 81, 201, 201)},
		Commit:     Commit{Known: true, Offset: 202, Peak: Unknown},
		Contents:   Contents{Spans: []Span{{First: 0, Last: 199, Kind: Record}, {First: 200, Last: 200, Kind: CommitMarker}, {First: 201, Last: 201, Kind: Record}}}}
}

func TestTheSeedIsLost82To199WithTheMarkerNotCounted(t *testing.T) {
	j := Judge(seedInput())
	if j.Verdict != verdict.Lost || len(j.Lost) != 1 || j.Lost[0] != kpart.Counted(82, 199, 118) || *j.SafeRewind != 82 {
		t.Fatalf("%+v", j)
	}
	if len(j.NotDeliverable) != 1 || j.NotDeliverable[0].First != 200 {
		t.Fatalf("not deliverable %+v", j.NotDeliverable)
	}
}

func TestNothingIsOKWithoutEvidenceOfWhatIsCommittedPast(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Input)
		want verdict.Verdict
	}{
		{"no delivery evidence is NO EVIDENCE", func(in *Input) { in.Deliveries = nil }, verdict.NoEvidence},
		{"no commit known is NO COMMIT EVIDENCE", func(in *Input) { in.Commit.Known = false }, verdict.NoCommitEvidence},
		{"committed past offsets nothing describes is NO RECORD EVIDENCE", func(in *Input) { in.Contents = Contents{} }, verdict.NoRecordEvidence},
		{"a read that stopped below the commit is INCOMPLETE", func(in *Input) {
			in.Contents = Contents{Spans: []Span{{First: 82, Last: 99, Kind: Absent}}, Truncated: true, TruncatedAt: 100}
		}, verdict.Incomplete},
		{"an unreadable partition is ERROR", func(in *Input) { in.Err = "boom" }, verdict.Error},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := seedInput()
			c.edit(&in)
			if j := Judge(in); j.Verdict != c.want {
				t.Fatalf("verdict %s, want %s (%+v)", j.Verdict, c.want, j)
			}
		})
	}
}

func TestAPeakCommitThatMovedBackLeavesRecordsStrandedNotLost(t *testing.T) {
	in := seedInput()
	in.Commit = Commit{Known: true, Offset: 82, Peak: 202}
	in.Deliveries.Ranges = rs(0, 81)
	j := Judge(in)
	if j.Verdict != verdict.Stranded || j.StrandedCount != 119 {
		t.Fatalf("%+v", j)
	}
}

func TestRecordsTheClientStillHoldsAreNotStranded(t *testing.T) {
	in := seedInput()
	in.Commit.Offset = 82
	in.Deliveries.Ranges = rs(0, 81)
	in.InFlight = kpart.RangeSet{{First: 82, Last: 199}}
	j := Judge(in)
	if j.Verdict != verdict.Stranded || j.StrandedCount != 1 || j.InFlightCount != 118 {
		t.Fatalf("%+v", j)
	}
}

// random builds a partition of n offsets with records, markers, aborted and absent
// offsets, a log start, deliveries and a commit, and what the evidence knows of it.
func random(r *rand.Rand) (in Input, kinds []Kind) {
	n := 1 + r.IntN(60)
	kinds = make([]Kind, n)
	for i := range kinds {
		switch x := r.IntN(10); {
		case x < 6:
			kinds[i] = Record
		case x < 7:
			kinds[i] = CommitMarker
		case x < 8:
			kinds[i] = Aborted
		default:
			kinds[i] = Absent
		}
	}
	in = Input{From: Unknown, LogStart: int64(r.IntN(n/3 + 1)), LastStable: int64(n), HighWatermark: int64(n)}
	var d kpart.RangeSet
	for o := 0; o < n; o++ {
		if r.IntN(3) > 0 && kinds[o] == Record {
			d.Add(int64(o), int64(o))
		}
	}
	in.Deliveries = &Deliveries{Ranges: d}
	in.Commit = Commit{Known: true, Offset: int64(r.IntN(n+2)) - 1, Peak: Unknown}
	// what the evidence knows: each offset known with probability 4/5
	for o := 0; o < n; o++ {
		if r.IntN(5) == 0 {
			continue
		}
		sp := &in.Contents.Spans
		if l := len(*sp); l > 0 && (*sp)[l-1].Last+1 == int64(o) && (*sp)[l-1].Kind == kinds[o] {
			(*sp)[l-1].Last++
			continue
		}
		*sp = append(*sp, Span{First: int64(o), Last: int64(o), Kind: kinds[o]})
	}
	return in, kinds
}

func inRanges(rr []kpart.RecordRange, o int64) bool {
	for _, r := range rr {
		if r.First <= o && o <= r.Last {
			return true
		}
	}
	return false
}

// TestTheJudgesInvariantsHoldOnRandomPartitions: issue 21 §1. A record is LOST only if
// committed past and never delivered; every such record the evidence describes is LOST;
// a safe rewind is never above an undelivered, restorable record the commit passed; OK
// only where everything committed past was delivered or holds no record.
func TestTheJudgesInvariantsHoldOnRandomPartitions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 20000; iter++ {
		in, kinds := random(r)
		j := Judge(in)
		committed := in.Commit.Offset
		delivered := kpart.RangeSet(in.Deliveries.Ranges)
		known := func(o int64) (Kind, bool) {
			for _, s := range in.Contents.Spans {
				if s.First <= o && o <= s.Last {
					return s.Kind, true
				}
			}
			return 0, false
		}
		var lostCount, unjudged int64
		for o := in.LogStart; o < int64(len(kinds)); o++ {
			k, isKnown := known(o)
			lost := inRanges(j.Lost, o)
			undelivered := !delivered.Contains(o)
			past := o < committed
			// a lost run goes on across offsets that hold no record, never across a
			// delivered or an unknown one
			if lost && (!past || !undelivered || !isKnown) {
				t.Fatalf("iter %d: offset %d LOST but past=%v undelivered=%v known=%v kind=%s\n%+v\n%+v", iter, o, past, undelivered, isKnown, k, in, j)
			}
			if past && undelivered && isKnown && k == Record {
				if !lost {
					t.Fatalf("iter %d: offset %d is a record committed past and never delivered, not LOST\n%+v\n%+v", iter, o, in, j)
				}
				lostCount++
			}
			if past && undelivered && !isKnown {
				unjudged++
				if j.SafeRewind == nil && lostCount > 0 {
					t.Fatalf("iter %d: no safe rewind", iter)
				}
			}
			if past && undelivered && (!isKnown || k == Record) && j.SafeRewind != nil && *j.SafeRewind > o {
				t.Fatalf("iter %d: safe rewind %d above undelivered offset %d the commit passed\n%+v\n%+v", iter, *j.SafeRewind, o, in, j)
			}
		}
		for _, l := range j.Lost {
			if k, _ := known(l.First); k != Record {
				t.Fatalf("iter %d: lost run %v starts on a %s", iter, l, k)
			}
			if k, _ := known(l.Last); k != Record {
				t.Fatalf("iter %d: lost run %v ends on a %s", iter, l, k)
			}
		}
		if lostCount != j.LostCount || unjudged != j.UnjudgedCount {
			t.Fatalf("iter %d: lost %d unjudged %d, judge says %d %d\n%+v\n%+v", iter, lostCount, unjudged, j.LostCount, j.UnjudgedCount, in, j)
		}
		if j.Verdict == verdict.OK && (lostCount > 0 || unjudged > 0) {
			t.Fatalf("iter %d: OK with %d lost and %d unjudged", iter, lostCount, unjudged)
		}
		for _, u := range j.Unrecoverable {
			for o := u.First; o <= u.Last; o++ {
				if o >= in.LogStart || delivered.Contains(o) {
					t.Fatalf("iter %d: offset %d unrecoverable but log start %d, delivered %v", iter, o, in.LogStart, delivered.Contains(o))
				}
			}
		}
		if (lostCount > 0 || j.UnrecoverableCount > 0) != (j.Verdict == verdict.Lost) {
			t.Fatalf("iter %d: verdict %s with %d lost, %d unrecoverable", iter, j.Verdict, lostCount, j.UnrecoverableCount)
		}
	}
}

func TestOverallJudgesNothingWithoutAJudgedPartition(t *testing.T) {
	if v := Overall(nil); v != verdict.NoEvidence {
		t.Fatalf("no partitions: %s", v)
	}
	if v := Overall([]Judgement{{Verdict: verdict.OK}, {Verdict: verdict.NoRecordEvidence}}); v != verdict.NoRecordEvidence {
		t.Fatalf("OK and NO RECORD EVIDENCE: %s", v)
	}
	if v := Overall([]Judgement{{Verdict: verdict.Lost}, {Verdict: verdict.NoEvidence}}); v != verdict.Lost {
		t.Fatalf("LOST and NO EVIDENCE: %s", v)
	}
}
