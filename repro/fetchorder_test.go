package repro

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// spreadShape is the agreement suite's multi-partition shape (integration/jsclient_test.go,
// jsclient.Shape.SimulateArgs at full scale): concurrency 2, one record at a time,
// max.poll.interval 5m, auto-commit every 8m20s.
func spreadShape(t *testing.T, policy eachbatch.Policy, spread string) Options {
	t.Helper()
	parts, err := workload.ParseSpread(spread)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Policy, o.Workload = policy, workload.Spec{Parts: parts, Transactions: 1}
	o.Concurrency, o.HandlerParallel = 2, 1
	o.MaxPollInterval, o.AutoCommitInterval = 5*time.Minute, 500*time.Second
	return o
}

// outcomeOf is a partition's outcome without its name: verdict, lost and stranded
// offsets, committed offset.
func outcomeOf(p PartitionResult) string {
	rs := func(rs []traceevent.Range) string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
		return strings.Join(s, ",")
	}
	c := int64(-1)
	if n := len(p.CommittedByPhase); n > 0 {
		c = p.CommittedByPhase[n-1]
	}
	return fmt.Sprintf("%s lost[%s] stranded[%s] @%d", p.Verdict, rs(p.Lost), rs(p.Stranded), c)
}

// TestEveryFetchOrderOfAlikePartitionsIsTheFirstRenamed: librdkafka's fetch list is in
// the order the partitions became fetchable (simkafka.Client.Order), any order; Simulate
// runs one order of a spread NxM and says the k-th partition served has its k-th outcome
// under every other order (FetchOrder.EveryOrder). Here other orders are simulated
// whole and compared: the fetch lists of the real client's captures (FIDELITY.md) and
// random ones, on the suite's shapes, both releases.
func TestEveryFetchOrderOfAlikePartitionsIsTheFirstRenamed(t *testing.T) {
	rnd := rand.New(rand.NewPCG(23, 4))
	for _, spread := range []string{"8x5", "12x5", "20x3", "12x10"} {
		for _, policy := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1} {
			t.Run(spread+"/"+string(policy), func(t *testing.T) {
				o := spreadShape(t, policy, spread)
				base := simulate(t, o)
				if len(base.FetchOrders) == 0 || !base.FetchOrders[0].EveryOrder {
					t.Fatalf("fetch orders %+v: want the first standing for every order", base.FetchOrders)
				}
				served := base.FetchOrders[0].Order
				byPart := map[int32]string{}
				for _, p := range base.Partitions {
					byPart[p.Partition] = outcomeOf(p)
				}
				orders := [][]int32{
					{3, 4, 5, 7, 0, 1, 2, 6}, // 8x5, 1.10.0, the clean-clone CI run's outcome (3, 4, 5, 7 served, in some order)
					{6, 7, 5, 4, 0, 1, 2, 3}, // 8x5, 1.10.0 capture of 2026-12-05 (its first four)
					{19, 18, 9, 10, 11, 12, 13, 5, 4, 0, 1, 2, 3, 6, 7, 8, 14, 15, 16, 17}, // 20x3, 1.10.1 capture
				}
				for range 3 {
					orders = append(orders, shuffled(rnd, served))
				}
				for _, order := range orders {
					order = slices.DeleteFunc(slices.Clone(order), func(p int32) bool { return !slices.Contains(served, p) })
					alt := o
					alt.FetchOrder = order
					r := simulate(t, alt)
					got := map[int32]string{}
					for _, p := range r.Partitions {
						got[p.Partition] = outcomeOf(p)
					}
					if len(r.FetchOrders) != 1 || !slices.Equal(r.FetchOrders[0].Order, fullOrder(order, served)) {
						t.Fatalf("order %v: fetch orders %+v, want that order only", order, r.FetchOrders)
					}
					for k, p := range fullOrder(order, served) {
						if want := byPart[served[k]]; got[p] != want {
							t.Errorf("order %v: partition %d, served %d-th, is %s; the %d-th served (partition %d) of the first order is %s", order, p, k+1, got[p], k+1, served[k], want)
						}
					}
				}
			})
		}
	}
}

// fullOrder is order followed by the partitions of all it does not name, in their order
// (simkafka.Client.Order's rule).
func fullOrder(order, all []int32) []int32 {
	out := slices.Clone(order)
	for _, p := range all {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func shuffled(rnd *rand.Rand, ps []int32) []int32 {
	out := slices.Clone(ps)
	rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
