package simulate

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/repro"
)

func TestParseSweep(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		err      string
	}{
		{"a list of durations", "max-poll-interval=1m,5m,15m", []string{"1m0s", "5m0s", "15m0s"}, ""},
		{"a range of durations", "max-poll-interval=1m..3m/1m", []string{"1m0s", "2m0s", "3m0s"}, ""},
		{"a range of counts steps by 1", "batch-size=1..3", []string{"1", "2", "3"}, ""},
		{"spreads are listed with semicolons", "spread=1x10;0:5,3:5", []string{"0:10", "0:5,3:5"}, ""},
		{"an empty range", "max-poll-interval=30m..1m/1m", nil, "empty"},
		{"a flag that cannot be swept", "topic=a,b", nil, "cannot be swept"},
		{"too many points", "max-poll-interval=1ms..1000s/1ms", nil, "at most 100000"},
		{"a duration range without a step", "handler-delay=1s..5s", nil, "needs a step"},
		{"no values", "concurrency=", nil, "no values"},
		{"no flag", "=1,2", nil, "want FLAG=VALUES"},
		{"a malformed spread", "spread=3x", nil, "--sweep spread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw, err := ParseSweep(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--sweep") {
					t.Fatalf("err %v, want one naming --sweep and saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range sw.Values {
				got = append(got, v.Text)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("values %v, want %v", got, tc.want)
			}
		})
	}
}

var cases3 = []Case{{eachbatch.V1_10_0, repro.CommitAuto}, {eachbatch.V1_10_1, repro.CommitAuto}, {eachbatch.Head, repro.CommitAuto}}

func TestAParallelSweepGivesTheSerialResult(t *testing.T) {
	sw, err := ParseSweep("max-poll-interval=10m..20m/1m")
	if err != nil {
		t.Fatal(err)
	}
	o := repro.DefaultOptions()
	serial, err := Run(context.Background(), o, cases3, sw, 1)
	if err != nil {
		t.Fatal(err)
	}
	parallel, err := Run(context.Background(), o, cases3, sw, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(serial, parallel) {
		t.Fatalf("parallel sweep differs from the serial one:\n%+v\n%+v", serial, parallel)
	}
}

func TestTheSeedsBoundaryIsStatedExactly(t *testing.T) {
	// The 198 records one fetch cached are served as 10 batches of 4m40s with no fetch
	// in between (the busy partition stays assigned): the cache expiry must outlast
	// them. The sweep brackets the edge between two grid values; the bisection finds it
	// to the second.
	sw, _ := ParseSweep("max-poll-interval=10m..60m/5m")
	res, err := Run(context.Background(), repro.DefaultOptions(), cases3[:1], sw, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Boundaries[0]
	if b.Text != "v1.10.0 loses records when max-poll-interval < 42m0s at these settings" {
		t.Errorf("boundary in words %q", b.Text)
	}
	if b.Loses != Below || b.Edge == nil {
		t.Fatalf("boundary %+v, want loss below an edge", b)
	}
	edge := b.Edge.Duration
	// The 10th batch is served 9 x 4m40s = 42m after the fetch that cached the 198
	// records: a clear queued before then drops its 18 records.
	if edge != 42*time.Minute {
		t.Errorf("edge %s, want 42m0s", edge)
	}
	// Check the edge on the model itself: one second below loses, the edge does not.
	for _, tc := range []struct {
		d    time.Duration
		lose bool
	}{{edge - time.Second, true}, {edge, false}} {
		l, err := lost(context.Background(), repro.DefaultOptions(), cases3[0], "max-poll-interval", Value{Duration: tc.d})
		if err != nil || l != tc.lose {
			t.Errorf("at %s lost=%v (%v), want %v", tc.d, l, err, tc.lose)
		}
	}
}

func TestAdviceForTheSeedNamesTheSafeRangeAndTheFixedVersions(t *testing.T) {
	a, err := Advise(context.Background(), repro.DefaultOptions(), cases3[0])
	if err != nil {
		t.Fatal(err)
	}
	if a.Lost != 118 {
		t.Errorf("lost %d at the seed's settings, want 118", a.Lost)
	}
	// The seed's 15m is 27m short of the 42m edge its sweep finds; batches of at most 3
	// and a concurrency of 1-4 are safe (the numbers and the words say the same).
	last := func(s Span) string {
		if s.Last == nil {
			return "open"
		}
		return fmt.Sprint(*s.Last)
	}
	got := []string{}
	for _, s := range a.Settings {
		safe := []string{}
		for _, sp := range s.Safe {
			safe = append(safe, fmt.Sprintf("%d..%s", sp.First, last(sp)))
		}
		margin := "nil"
		if s.Margin != nil {
			margin = fmt.Sprint(*s.Margin)
		}
		got = append(got, fmt.Sprintf("%s kind=%d current=%d safe=%v searched=%d..%s margin=%s safe-now=%v | %s | %s | %s",
			s.Flag, s.Kind, s.Current, safe, s.Searched.First, last(s.Searched), margin, s.IsSafe, s.CurrentText, s.SafeText, s.MarginText))
	}
	want := []string{
		fmt.Sprintf("max-poll-interval kind=%d current=%d safe=[%d..open] searched=%d..%d margin=%d safe-now=false | 15m0s | >= 42m0s | 27m0s short",
			Duration, 15*time.Minute, 42*time.Minute, time.Second, time.Hour, -27*time.Minute),
		fmt.Sprintf("batch-size kind=%d current=20 safe=[1..3] searched=1..20 margin=-17 safe-now=false | 20 | <= 3 | 17 too large", Count),
		fmt.Sprintf("concurrency kind=%d current=20 safe=[1..4] searched=1..20 margin=nil safe-now=false | 20 | safe at 1-4 | ", Count),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantLoss := map[eachbatch.Policy]bool{eachbatch.V1_10_0: true, eachbatch.V1_10_1: false, eachbatch.Head: false}
	for _, p := range a.Policies {
		if (p.Lost > 0) != wantLoss[p.Policy] {
			t.Errorf("%s lost %d", p.Policy, p.Lost)
		}
	}
}

// TestAdviceSaysTheBatchSizeIsFixedBefore1_7_0: 1.6.0 and earlier have no
// js.consumer.max.batch.size (eachBatch gets batches of 32): the advice for them
// searches no batch size and says so, and every policy row of those releases says its
// batches were 32, not the user's 20.
func TestAdviceSaysTheBatchSizeIsFixedBefore1_7_0(t *testing.T) {
	a, err := Advise(context.Background(), repro.DefaultOptions(), Case{Policy: eachbatch.V1_6_0, Commit: cases3[0].Commit})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range a.Settings {
		if s.Flag != "batch-size" {
			continue
		}
		found = true
		if s.Current != 32 || s.CurrentText != "32 (fixed)" || s.Searched.First != 32 || s.Searched.Last == nil || *s.Searched.Last != 32 || len(s.Safe) != 0 || !strings.Contains(s.SafeText, "not a setting of v1.6.0") {
			t.Errorf("batch-size row %+v", s)
		}
	}
	if !found {
		t.Errorf("no batch-size row: %+v", a.Settings)
	}
	for _, p := range a.Policies {
		want := 0
		if p.Policy == eachbatch.V1_6_0 || p.Policy == eachbatch.V1_3_0 || p.Policy == eachbatch.V1_0_0 || p.Policy == eachbatch.V0_2_0 {
			want = 32
		}
		if p.FixedBatchSize != want {
			t.Errorf("%s: fixed batch size %d, want %d", p.Policy, p.FixedBatchSize, want)
		}
	}
	o := repro.DefaultOptions()
	o.BatchSize = 32
	a, err = Advise(context.Background(), o, cases3[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Policies {
		if p.FixedBatchSize != 0 {
			t.Errorf("%s at --batch-size 32: fixed batch size %d, want none said", p.Policy, p.FixedBatchSize)
		}
	}
}

// A sweep of batch-size says for 1.6.0 and earlier that every row ran batches of 32,
// and says nothing of the kind for the releases that have the setting.
func TestASweepOfTheBatchSizeSaysItIsFixedBefore1_7_0(t *testing.T) {
	sw, err := ParseSweep("batch-size=1,20")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), repro.DefaultOptions(), []Case{{eachbatch.V1_6_0, repro.CommitAuto}, {eachbatch.V1_10_0, repro.CommitAuto}}, sw, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Boundaries) != 2 || !strings.Contains(res.Boundaries[0].Text, "every row ran batches of 32") || strings.Contains(res.Boundaries[1].Text, "batches of 32") {
		t.Errorf("boundaries %+v", res.Boundaries)
	}
}

// TestAnInterruptedSweepReturnsTheRowsFinishedInOrder: Ctrl-C during a sweep keeps the
// rows finished before it (here the first three of ten, one worker), marked interrupted.
func TestAnInterruptedSweepReturnsTheRowsFinishedInOrder(t *testing.T) {
	sw, err := ParseSweep("max-poll-interval=10m..19m/1m")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sw.Progress = func(finished, total int) {
		if total != 10 {
			t.Errorf("total %d, want 10", total)
		}
		if finished == 3 {
			cancel()
		}
	}
	base := repro.DefaultOptions()
	res, err := Run(ctx, base, []Case{{Policy: eachbatch.V1_10_0, Commit: repro.CommitAuto}}, sw, 1)
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if len(res.Rows) != 3 || res.Rows[0].Value.Text != "10m0s" || res.Rows[2].Value.Text != "12m0s" {
		t.Fatalf("rows %+v, want 10m, 11m, 12m", res.Rows)
	}
}

func TestSafeValuesAreGroupedIntoRuns(t *testing.T) {
	got := spans([]int{1, 2, 3, 7, 9, 10})
	want := []string{"1-3", "7-7", "9-10"}
	if len(got) != len(want) {
		t.Fatalf("%d spans, want %d", len(got), len(want))
	}
	for i, s := range got {
		if g := fmt.Sprintf("%d-%d", s.First, *s.Last); g != want[i] {
			t.Errorf("span %d is %s, want %s", i, g, want[i])
		}
	}
	if r := runs([]int{1, 2, 3, 7, 9, 10}); r != "1-3, 7, 9-10" {
		t.Errorf("runs %q", r)
	}
}
