package kpart

import (
	"fmt"
	"testing"
)

func TestRangeSetArithmetic(t *testing.T) {
	var s RangeSet
	s.Add(5, 9)
	s.Add(0, 2)
	s.Add(3, 4)
	s.Add(20, 20)
	if s.String() != "0-9,20" {
		t.Fatalf("add: %s", s)
	}
	if got := s.Minus(RangeSet{{First: 2, Last: 3}, {First: 9, Last: 20}}).String(); got != "0-1,4-8" {
		t.Fatalf("minus: %s", got)
	}
	if got := s.Within(4, 21).String(); got != "4-9,20" {
		t.Fatalf("within: %s", got)
	}
}

func TestRunsSplitAtEveryGapAndIgnoreOrderAndDuplicates(t *testing.T) {
	got := Runs([]int64{5, 3, 4, 9, 4, 10, 0})
	if s := Join(got); s != "0,3-5,9-10" {
		t.Fatalf("Runs = %s, want 0,3-5,9-10", s)
	}
	if Total(got) != 6 {
		t.Fatalf("Total = %d, want 6", Total(got))
	}
}

func TestRunsInDoesNotSplitAtAnOffsetThatHoldsNoRecord(t *testing.T) {
	records := []int64{0, 1, 2, 4, 5} // 3 is a transaction marker
	got := RunsIn([]int64{1, 2, 4}, records)
	if len(got) != 1 || got[0].String() != "1-4" || got[0].Count != 3 {
		t.Fatalf("RunsIn = %v, want one range 1-4 of 3 records", got)
	}
	got = RunsIn([]int64{0, 2, 5}, records)
	if s := Join(got); s != "0,2,5" {
		t.Fatalf("RunsIn = %s, want 0,2,5", s)
	}
}

func TestSortOrdersByTopicThenPartition(t *testing.T) {
	tps := []TopicPartition{{"b", 0}, {"a", 10}, {"a", 2}}
	Sort(tps)
	if fmt.Sprint(tps) != "[a/2 a/10 b/0]" {
		t.Fatalf("Sort = %v", tps)
	}
}

func TestOffsetTextPrintsADashForNone(t *testing.T) {
	if OffsetText(-1) != "-" || OffsetText(0) != "0" || OffsetText(202) != "202" {
		t.Fatal("OffsetText")
	}
}

// Minus is one merge pass; it must equal the offset-by-offset difference, ranges of t
// spanning several ranges of s included.
func TestMinusEqualsTheOffsetByOffsetDifference(t *testing.T) {
	rng := uint64(1)
	next := func(n int64) int64 { rng = rng*6364136223846793005 + 1442695040888963407; return int64(rng>>33) % n }
	for round := 0; round < 2000; round++ {
		var s, u RangeSet
		for i := 0; i < 6; i++ {
			a := next(60)
			s.Add(a, a+next(8))
			b := next(60)
			u.Add(b, b+next(15))
		}
		var want RangeSet
		for o := int64(0); o < 100; o++ {
			if s.Contains(o) && !u.Contains(o) {
				want.Add(o, o)
			}
		}
		if got := s.Minus(u); got.String() != want.String() {
			t.Fatalf("%s minus %s = %s, want %s", s, u, got, want)
		}
	}
}

func TestSummaryListsTheFirstRangesAndCountsTheRest(t *testing.T) {
	var s RangeSet
	for o := int64(0); o < 20; o += 2 {
		s.Add(o, o)
	}
	if got, want := s.Summary(3), "0,2,4,… 7 more ranges"; got != want {
		t.Errorf("Summary(3) = %q, want %q", got, want)
	}
	if got := s.Summary(10); got != s.String() {
		t.Errorf("Summary(10) = %q, want the whole list %q", got, s.String())
	}
}

func TestNormalizeSortsAndMergesTouchingRanges(t *testing.T) {
	got := Normalize([]Range{{7, 9}, {0, 2}, {3, 3}, {8, 12}, {20, 20}})
	if got.String() != (RangeSet{{0, 3}, {7, 12}, {20, 20}}).String() {
		t.Errorf("Normalize = %s", got)
	}
}
