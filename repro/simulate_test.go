package repro

import (
	"context"
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
