package repro

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/workload"
)

func simulate(t testing.TB, o Options) *Result {
	t.Helper()
	res, err := Simulate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSimulatingTheSeedLoses82To199AtFullScale(t *testing.T) {
	res := simulate(t, DefaultOptions())
	if !res.Simulated || len(res.Partitions) != 1 {
		t.Fatalf("simulated %v, partitions %+v", res.Simulated, res.Partitions)
	}
	p := res.Partitions[0]
	if got := p.CommittedByPhase; len(got) != 2 || got[0] != 82 || got[1] != 202 {
		t.Errorf("committed by phase %v, want [82 202]", got)
	}
	if p.Delivered != 83 || p.LostCount() != 118 || len(p.Lost) != 1 || p.Lost[0].First != 82 || p.Lost[0].Last != 199 {
		t.Errorf("delivered %d lost %v", p.Delivered, p.Lost)
	}
	if res.Verdict != verdict.Lost {
		t.Errorf("verdict %s", res.Verdict)
	}
	// 80 s of single-record batches, then four 4m40s batches: the clear comes when the
	// fourth returns, 15 min after the last fetch plus the rest of that batch.
	if res.LossAt < 20*time.Minute || res.LossAt > 21*time.Minute {
		t.Errorf("loss at %s of virtual time", res.LossAt)
	}
}

func TestSimulatedV1101LosesASecondPartitionsUnservedRecordsAndHeadDoesNot(t *testing.T) {
	for _, tc := range []struct {
		policy eachbatch.Policy
		want   verdict.Verdict
	}{{eachbatch.V1_10_0, verdict.Lost}, {eachbatch.V1_10_1, verdict.Lost}, {eachbatch.Head, verdict.OK}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			o := DefaultOptions()
			o.Policy = tc.policy
			o.Workload = workload.Spec{Parts: []workload.Part{{Partition: 0, Records: 100}, {Partition: 1, Records: 40}}, Transactions: 1}
			o.Concurrency, o.BatchSize = 1, -1
			res := simulate(t, o)
			if res.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s; partitions %+v", res.Verdict, tc.want, res.Partitions)
			}
			if len(res.Partitions) != 2 {
				t.Fatalf("%d partitions in the verdict, want both workload partitions", len(res.Partitions))
			}
		})
	}
}

// Which partition's records a live consumer gets first is the broker's: a shape is judged
// by every order. Two partitions, one worker, unbounded batches on v1.10.1: with
// partition 0 (40 records) served first nothing is lost, with partition 1 (100 records)
// first partition 0's records wait in the cache through the long batch and are lost.
func TestSimulateJudgesEveryFetchOrder(t *testing.T) {
	for _, tc := range []struct {
		spread  string
		verdict verdict.Verdict
		shown   string // the table's partitions (partition 0 served first)
		warning string // "" for none
	}{
		{"0:40,1:100", verdict.Lost, "partition 0 OK, partition 1 OK", "with partition 1's records served first the outcome differs: partition 0 LOST 0-39, partition 1 OK"},
		{"0:100,1:40", verdict.Lost, "partition 0 OK, partition 1 LOST 0-39", "with partition 1's records served first the outcome differs: partition 0 OK, partition 1 OK"},
		{"0:100,1:100", verdict.Lost, "partition 0 OK, partition 1 LOST 0-99", "with partition 1's records served first the outcome differs: partition 0 LOST 0-99, partition 1 OK"}, // mirrored: which partition loses depends on the order
		{"0:200", verdict.Lost, "partition 0 LOST 82-199", ""},
	} {
		t.Run(tc.spread, func(t *testing.T) {
			parts, err := workload.ParseSpread(tc.spread)
			if err != nil {
				t.Fatal(err)
			}
			o := DefaultOptions()
			o.Policy = eachbatch.V1_10_1
			if len(parts) == 1 {
				o.Policy = eachbatch.V1_10_0
			}
			o.Workload = workload.Spec{Parts: parts, Transactions: 1}
			o.Concurrency, o.BatchSize = 1, -1
			if len(parts) == 1 {
				o.Concurrency, o.BatchSize = 20, 20
			}
			res := simulate(t, o)
			var warnings []string
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, "fetch order: ") {
					warnings = append(warnings, w)
				}
			}
			if res.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", res.Verdict, tc.verdict)
			}
			if tc.shown != "" && orderOutcome(res) != tc.shown {
				t.Errorf("shown %q, want %q", orderOutcome(res), tc.shown)
			}
			switch {
			case tc.warning == "" && len(warnings) > 0:
				t.Errorf("fetch-order warnings where every order agrees: %q", warnings)
			case tc.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning)):
				t.Errorf("warnings %q, want one containing %q", warnings, tc.warning)
			}
		})
	}
}

// TestASimulationThatSpendsItsEventBudgetEndsIncompleteNamingIt: issue 27 §9. A phase
// that never settles under a long --phase-timeout stepped through every tick of its
// virtual time (the cost followed the virtual duration); the event budget ends it
// INCOMPLETE, saying why.
func TestASimulationThatSpendsItsEventBudgetEndsIncompleteNamingIt(t *testing.T) {
	o := DefaultOptions()
	// stale batches delivered again and again: phase 1 never settles
	o.MaxPollInterval, o.BatchSize, o.PhaseTimeout = 3*time.Second, 1, 100*time.Hour
	o.simEvents = 20_000
	res, err := Simulate(context.Background(), o)
	if !errors.Is(err, ErrEventBudget) {
		t.Fatalf("error %v, want the event budget", err)
	}
	if res == nil || res.Complete || res.Verdict != verdict.Incomplete || !strings.Contains(res.Error, "event budget") || !strings.Contains(res.Error, "20000 events") {
		t.Fatalf("result %+v", res)
	}
}

// TestAnInterruptedLargeSimulationReturnsWithinASecond: issue 27 §9 (SIGINT on a
// 1,000,000-record simulation took 2.1 s).
func TestAnInterruptedLargeSimulationReturnsWithinASecond(t *testing.T) {
	if testing.Short() {
		t.Skip("a 300,000-record simulation")
	}
	o := DefaultOptions()
	o.Workload, o.HandlerDelay = workload.Spec{Parts: []workload.Part{{Records: 300_000}}}, 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result, 1)
	go func() {
		res, _ := Simulate(ctx, o)
		done <- res
	}()
	time.Sleep(500 * time.Millisecond)
	cancel()
	at := time.Now()
	select {
	case res := <-done:
		if after := time.Since(at); after > time.Second || res == nil || !res.Interrupted {
			t.Fatalf("returned %s after the cancel, result %v", after, res != nil && res.Interrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after the cancel")
	}
}

// eachMessage hands a partition's records over one at a time, whatever
// --handler-parallel says: the phase's bound counted 40 s a record three at a time and
// cut the seed's eachMessage at max.poll 5m short (INCOMPLETE at 164 delivered) while it
// was still delivering, each expiry handing the record in hand over again.
func TestTheSeedsEachMessageAtFiveMinutesSettles(t *testing.T) {
	o := DefaultOptions()
	o.Handler = eachbatch.EachMessage
	o.MaxPollInterval = 5 * time.Minute
	res := simulate(t, o)
	p := res.Partitions[0]
	if res.Verdict != verdict.OK || !res.Complete || p.Delivered != 201 || p.Duplicates == 0 {
		t.Fatalf("verdict %s complete %v delivered %d duplicates %d, want OK, complete, 201 with redeliveries",
			res.Verdict, res.Complete, p.Delivered, p.Duplicates)
	}
	if got := p.CommittedByPhase; len(got) != 2 || got[0] != 200 || got[1] != 202 {
		t.Errorf("committed by phase %v, want [200 202]", got)
	}
}
