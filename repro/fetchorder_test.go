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

// phaseOutcomes are a partition's outcome by phase: what phase 1 left of its phase-1
// records (never delivered) and committed, and whether its phase-2 record (the one below
// the high watermark, past phase 1's commit marker) was delivered.
func phaseOutcomes(p PartitionResult) (phase1, phase2 string) {
	undelivered := slices.Concat(p.Lost, p.Stranded)
	var below []string
	phase2 = "delivered"
	for _, r := range undelivered {
		if r.First < p.High-2 {
			below = append(below, fmt.Sprintf("%d-%d", r.First, min(r.Last, p.High-3)))
		}
		if r.First <= p.High-1 && p.High-1 <= r.Last {
			phase2 = "not delivered"
		}
	}
	slices.Sort(below)
	c := int64(-1)
	if len(p.CommittedByPhase) > 0 {
		c = p.CommittedByPhase[0]
	}
	return fmt.Sprintf("undelivered[%s] @%d", strings.Join(below, ","), c), phase2
}

// TestEveryFetchOrderOfAlikePartitionsIsTheFirstRenamed: librdkafka's fetch list is in
// the order the partitions became fetchable (simkafka.Client.Order), any order, and
// phase 2's records reach the consumer in the order they are produced, one partition per
// ProduceRequest (simkafka.Client.Append; which the waiting consumer's fetches carry is
// timing, any order); Simulate runs one pair of orders of a spread NxM and says the
// partition served k-th in phase 1 and j-th in phase 2 has the k-th phase-1 outcome and
// the j-th phase-2 outcome under every other pair (FetchOrder.EveryOrder). Here other
// pairs are simulated whole and compared: the fetch lists and phase-2 orders of the real
// client's captures (FIDELITY.md) and random ones, on the suite's shapes, both releases;
// and in every run the pair of phase outcomes decides the partition's whole outcome.
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
				served, served2 := base.FetchOrders[0].Order, base.FetchOrders[0].Phase2Order
				if !slices.Equal(served2, served) {
					t.Fatalf("phase-2 order %v: want the partitions by number, as produced (%v)", served2, served)
				}
				phase1, phase2 := map[int32]string{}, map[int32]string{}
				whole := map[[2]string]string{} // the pair of phase outcomes -> the outcome
				decided := func(r *Result) {
					for _, p := range r.Partitions {
						p1, p2 := phaseOutcomes(p)
						if w, ok := whole[[2]string{p1, p2}]; ok && w != outcomeOf(p) {
							t.Errorf("partition %d: %s with %s and %s; another partition with the same phase outcomes: %s", p.Partition, outcomeOf(p), p1, p2, w)
						}
						whole[[2]string{p1, p2}] = outcomeOf(p)
					}
				}
				for _, p := range base.Partitions {
					phase1[p.Partition], phase2[p.Partition] = phaseOutcomes(p)
				}
				decided(base)
				orders := [][]int32{
					{3, 4, 5, 7, 0, 1, 2, 6}, // 8x5, 1.10.0, the clean-clone CI run's outcome (3, 4, 5, 7 served, in some order)
					{6, 7, 5, 4, 0, 1, 2, 3}, // 8x5, 1.10.0 capture of 2026-12-05 (its first four)
					{19, 18, 9, 10, 11, 12, 13, 5, 4, 0, 1, 2, 3, 6, 7, 8, 14, 15, 16, 17}, // 20x3, 1.10.1 capture
				}
				orders2 := [][]int32{
					nil,
					{6, 7, 18, 19, 0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14, 5, 15, 16, 17}, // 20x3, 1.10.0 capture of 07:52: phase 2's deliveries, then the 4 stranded
					{6, 1, 2, 3, 19, 18, 9, 10, 11, 12, 13, 14, 15, 16, 17, 8, 0, 4, 5, 7}, // 20x3, the 1.10.1 capture above
				}
				for range 3 {
					orders = append(orders, shuffled(rnd, served))
					orders2 = append(orders2, shuffled(rnd, served))
				}
				for i, order := range orders {
					order = slices.DeleteFunc(slices.Clone(order), func(p int32) bool { return !slices.Contains(served, p) })
					order2 := slices.DeleteFunc(slices.Clone(orders2[i]), func(p int32) bool { return !slices.Contains(served, p) })
					alt := o
					alt.FetchOrder, alt.Phase2Order = order, order2
					r := simulate(t, alt)
					decided(r)
					got1, got2 := map[int32]string{}, map[int32]string{}
					for _, p := range r.Partitions {
						got1[p.Partition], got2[p.Partition] = phaseOutcomes(p)
					}
					if len(r.FetchOrders) != 1 || !slices.Equal(r.FetchOrders[0].Order, fullOrder(order, served)) ||
						!slices.Equal(r.FetchOrders[0].Phase2Order, fullOrder(order2, served)) {
						t.Fatalf("orders %v, %v: fetch orders %+v, want those orders only", order, order2, r.FetchOrders)
					}
					for k, p := range fullOrder(order, served) {
						if want := phase1[served[k]]; got1[p] != want {
							t.Errorf("order %v: partition %d, served %d-th in phase 1, has %s; the %d-th served (partition %d) of the first order has %s", order, p, k+1, got1[p], k+1, served[k], want)
						}
					}
					for j, p := range fullOrder(order2, served) {
						if want := phase2[served2[j]]; got2[p] != want {
							t.Errorf("phase-2 order %v: partition %d, %d-th in phase 2, has its phase-2 record %s; the %d-th (partition %d) of the first run's %s", order2, p, j+1, got2[p], j+1, served2[j], want)
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
