package repro

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/testenv"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// outcome is what live and simulated runs must agree on, per partition: the verdict,
// the committed offset after each phase, the lost and stranded ranges, and the records
// delivered. Durations, duplicates, fetch sizes and the loss time are left out: they
// depend on when librdkafka's fetches land (see BENCHMARKS.md, "live and simulated").
func outcome(r *Result) string {
	s := ""
	for _, p := range r.Partitions {
		s += fmt.Sprintf("p%d %s committed %v delivered %d lost %s stranded %s\n", p.Partition, p.Verdict,
			p.CommittedByPhase, p.Delivered, kpart.Join(p.Lost), kpart.Join(p.Stranded))
	}
	return s
}

// checkWakes checks the wake events of a run's trace: every wait for the consumer queue
// that ended with records was ended by want. Simulated runs wire queue_non_empty_cb
// (arrival); the live source has no equivalent (repro/source.go), so there the valve
// ends every wait, and records fetched after one arrived during it (the difference is
// measured by bench/wake.sh, BENCHMARKS.md "Live wake-up").
func checkWakes(t *testing.T, name string, trace *bytes.Buffer, want string) {
	t.Helper()
	withRecords, wedged := 0, false
	sc := bufio.NewScanner(trace)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev traceevent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s trace: %v", name, err)
		}
		if ev.Ev == traceevent.Fetch && strings.Contains(ev.Error, "consume loop") {
			wedged = true // 1.7.0's consume(0): its loop takes phase 2's record, no wait returns it
		}
		if ev.Ev != traceevent.Wake {
			continue
		}
		if name == "live" && ev.Reason == eachbatch.WakeArrival {
			t.Errorf("live wake %+v: the live source has no arrival signal", ev)
		}
		if ev.Returned > 0 {
			withRecords++
			if ev.Reason != want {
				t.Errorf("%s wake ended by %s returned %d records, want every such wake ended by %s", name, ev.Reason, ev.Returned, want)
			}
		}
	}
	if withRecords == 0 && !wedged {
		t.Errorf("%s trace: no wait ended with records (phase 2's records arrive while the workers wait)", name)
	}
}

// embeddedOnly skips a live-versus-simulated comparison against a real broker: the
// comparison is specified on the embedded broker (issue 12 §3), whose fetch answers the
// simulated log models. Measured on Apache Kafka 4.3.1 (make test-kafka, 2026-12-03): the
// eachMessage two-partition shape served the other partition first (p0 lost instead of p1),
// the head run did not settle within the phase bound, and a member leaving lost 80-99 on
// p1 where the embedded broker and the simulation deliver everything: the real broker's
// fetch order and timing differ, which the model does not claim to follow.
func embeddedOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("KSTRANDED_TEST_BROKERS") != "" {
		t.Skip("live and simulated are compared on the embedded broker only (a real broker's fetch order and timing differ; see embeddedOnly)")
	}
}

// shape is one shape of the live-versus-simulated matrix.
type shape struct {
	name                     string
	spread                   string
	concurrency, batch, hpar int
	// live are the policies run live as well (make test-live): one per behaviour the
	// shape shows. simulated are the shape's other policies, run simulated only: their
	// live run would repeat a behaviour a live case here or in integration/ shows.
	live, simulated []eachbatch.Policy
	handler         eachbatch.Handler
	failAt          []int64
	// fetchTiming: which partition's fetch response reaches the live consumer's queue
	// first is the broker's and the machine's (seen both ways on this machine under
	// load). The outcome of these shapes depends on it, so the live run must match
	// the simulation of one of the orders (simkafka.Client.StartAt), never another
	// outcome.
	fetchTiming bool
}

func (s shape) options(t *testing.T, p eachbatch.Policy) Options {
	t.Helper()
	parts, err := workload.ParseSpread(s.spread)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Policy = p
	o.Workload = workload.Spec{Parts: parts, Transactions: 1}
	o.Concurrency, o.BatchSize, o.HandlerParallel = s.concurrency, s.batch, s.hpar
	o.Handler, o.HandlerFailAt = s.handler, s.failAt
	return o
}

// simulatedOutcomes simulates o in the fetch orders a live run may see (only the first
// unless the shape's outcome depends on fetch timing), checking each trace's wakes.
func (s shape) simulatedOutcomes(t *testing.T, ctx context.Context, o Options) []string {
	t.Helper()
	var want []string
	for k := 0; k == 0 || s.fetchTiming && k < len(o.Workload.Parts); k++ {
		var trace bytes.Buffer
		w := traceevent.NewWriter(&trace)
		o.Trace = w
		if k > 0 {
			parts := workloadPartitions(o.Workload)
			o.FetchOrder = rotate(parts, parts[k])
		}
		sim, err := Simulate(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		checkWakes(t, "simulated", &trace, eachbatch.WakeArrival)
		want = append(want, outcome(sim))
	}
	return want
}

var shapes = []shape{
	// v1.10.1 on the seed delivers all 201: live in integration/ (TestReproFixedPoliciesLoseNothing).
	{name: "the seed", spread: "0:200", concurrency: 20, batch: 20, hpar: 3, live: []eachbatch.Policy{eachbatch.V1_10_0}, simulated: []eachbatch.Policy{eachbatch.V1_10_1, eachbatch.V1_7_0, eachbatch.PR518, eachbatch.V1_6_0}},
	// v1.10.1 loses the partition it never served, head (the reporter's patch) does not.
	{name: "two partitions, one worker, unbounded batches", spread: "0:100,1:40", concurrency: 1, batch: -1, hpar: 3,
		live: []eachbatch.Policy{eachbatch.V1_10_1, eachbatch.Head}, fetchTiming: true},
	{name: "8x10, two workers, one record at a time", spread: "8x10", concurrency: 2, batch: 1, hpar: 1, live: []eachbatch.Policy{eachbatch.V1_10_0}},
	{name: "20x10, twenty workers", spread: "20x10", concurrency: 20, batch: 20, hpar: 3, live: []eachbatch.Policy{eachbatch.V1_10_0}},
	// eachMessage keeps the partition it serves (a last-consumed entry in either
	// version) and loses the one never served; head saves it, as it does for eachBatch
	// in the shape above, which shows that live.
	{name: "eachMessage, two partitions, one worker, unbounded fetches", spread: "0:100,1:40", concurrency: 1, batch: -1, hpar: 3,
		live: []eachbatch.Policy{eachbatch.V1_10_0}, simulated: []eachbatch.Policy{eachbatch.Head}, handler: eachbatch.EachMessage, fetchTiming: true},
	// A handler that throws once: its records come again, nothing lost.
	{name: "eachBatch throwing at offset 30, the seed", spread: "0:200", concurrency: 20, batch: 20, hpar: 3, live: []eachbatch.Policy{eachbatch.V1_10_1}, handler: eachbatch.EachBatch, failAt: []int64{30}},
}

// simulatedShapes pins the simulated outcome of every shape and policy of the matrix, in
// each fetch order a live run may see (in order: partition 0 served first, then 1). The
// live policies' outcomes are the ones live runs gave on the embedded broker
// (TestLiveAndSimulatedAgree, make test-live).
var simulatedShapes = map[string][]string{
	"the seed/v1.10.0": {"p0 LOST committed [82 202] delivered 83 lost 82-199 stranded -\n"},
	"the seed/v1.10.1": {"p0 OK committed [200 202] delivered 201 lost - stranded -\n"},
	// 1.7.0: Math.round sizes the third fetch at 0; consume(0) starts the client's consume
	// loop and every fetch after it fails: two records delivered, the rest stranded (the
	// real client did the same with the bug report's cache size at 1/100, FIDELITY.md)
	"the seed/v1.7.0": {"p0 STRANDED committed [2 2] delivered 2 lost - stranded 2-201\n"},
	// PR #518: the clear rewinds to the last resolved record itself, delivered again
	"the seed/pr518": {"p0 OK committed [200 202] delivered 201 lost - stranded -\n"},
	// 1.3.1-1.6.0: fetches of 1, 1, 2, 2, ..., 64 (the real 1.6.0 asked the same), and a
	// cache that never outlasts max.poll.interval: nothing lost (FIDELITY.md)
	"the seed/v1.6.0": {"p0 OK committed [200 202] delivered 201 lost - stranded -\n"},
	"two partitions, one worker, unbounded batches/v1.10.1": {
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 LOST committed [-1 42] delivered 1 lost 0-39 stranded -\n",
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 OK committed [40 42] delivered 41 lost - stranded -\n",
	},
	"two partitions, one worker, unbounded batches/head": {
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 OK committed [40 42] delivered 41 lost - stranded -\n",
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 OK committed [40 42] delivered 41 lost - stranded -\n",
	},
	"8x10, two workers, one record at a time/v1.10.0": {allOK(8, "committed [10 12] delivered 11")},
	"20x10, twenty workers/v1.10.0":                   {allOK(20, "committed [10 12] delivered 11")},
	"eachMessage, two partitions, one worker, unbounded fetches/v1.10.0": {
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 LOST committed [-1 42] delivered 1 lost 0-39 stranded -\n",
		"p0 LOST committed [-1 102] delivered 1 lost 0-99 stranded -\np1 OK committed [40 42] delivered 41 lost - stranded -\n",
	},
	"eachMessage, two partitions, one worker, unbounded fetches/head": {
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 OK committed [40 42] delivered 41 lost - stranded -\n",
		"p0 OK committed [100 102] delivered 101 lost - stranded -\np1 OK committed [40 42] delivered 41 lost - stranded -\n",
	},
	"eachBatch throwing at offset 30, the seed/v1.10.1": {"p0 OK committed [200 202] delivered 201 lost - stranded -\n"},
}

// allOK is the outcome of n partitions, each OK with the same commits and deliveries.
func allOK(n int, what string) string {
	s := ""
	for p := range n {
		s += fmt.Sprintf("p%d OK %s lost - stranded -\n", p, what)
	}
	return s
}

// TestSimulatedShapesGiveThePinnedOutcomes runs the whole matrix simulated (virtual
// time, milliseconds), in make test: the shapes and policies make test-live runs live
// and the ones it does not.
func TestSimulatedShapesGiveThePinnedOutcomes(t *testing.T) {
	for _, s := range shapes {
		for _, p := range append(slices.Clone(s.live), s.simulated...) {
			name := s.name + "/" + string(p)
			t.Run(name, func(t *testing.T) {
				got := s.simulatedOutcomes(t, context.Background(), s.options(t, p))
				if want := simulatedShapes[name]; !slices.Equal(got, want) {
					t.Errorf("simulated outcomes (one per fetch order):\n%s\nwant:\n%s", strings.Join(got, "--\n"), strings.Join(want, "--\n"))
				}
			})
		}
	}
}

func TestLiveAndSimulatedAgree(t *testing.T) {
	embeddedOnly(t)
	testenv.MustLive(t) // live consumers at scaled time on the embedded broker
	for _, s := range shapes {
		for _, p := range s.live {
			t.Run(s.name+"/"+string(p), func(t *testing.T) {
				o := s.options(t, p)
				o.Kafka = testKafka(t)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				want := s.simulatedOutcomes(t, ctx, o)
				var liveTrace bytes.Buffer
				liveW := traceevent.NewWriter(&liveTrace)
				o.Trace = liveW
				live, err := Run(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				if err := liveW.Flush(); err != nil {
					t.Fatal(err)
				}
				checkWakes(t, "live", &liveTrace, eachbatch.WakeValve)
				got := outcome(live)
				t.Logf("live:\n%s", got)
				if !slices.Contains(want, got) {
					t.Errorf("live and simulated differ:\nlive:\n%s\nsimulated (one per fetch order):\n%s", got, strings.Join(want, "--\n"))
				}
			})
		}
	}
}

// A member leaving mid-run, live and simulated: two members in a classic group
// (roundrobin: one workload partition each), the second leaves at 8m (disconnect: its
// batches finish, close() commits what it stored), and the first takes its partition over
// at the committed offset through the engine's rebalance path (revoke: the pending
// #unassign; assign). The two partitions hold the same records, so the outcome does not
// depend on which member librdkafka's roundrobin (by member id) gave which partition.
func TestLiveAndSimulatedAgreeWhenAMemberLeaves(t *testing.T) {
	embeddedOnly(t)
	testenv.MustLive(t) // live consumers at scaled time on the embedded broker
	o := DefaultOptions()
	o.Kafka = testKafka(t)
	o.Members = 2
	o.Workload = workload.Spec{Parts: []workload.Part{{Partition: 0, Records: 100}, {Partition: 1, Records: 100}}, Transactions: 1}
	o.RebalanceAt = []RebalanceStep{{At: 8 * time.Minute}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sim, err := Simulate(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	live, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	members := func(r *Result) string {
		s := ""
		for _, m := range r.Members {
			s += fmt.Sprintf("%s delivered %d left %v\n", m.Name, m.Delivered, m.Left > 0)
		}
		return s
	}
	got, want := outcome(live)+members(live), outcome(sim)+members(sim)
	t.Logf("live:\n%s", got)
	if got != want {
		t.Errorf("live and simulated differ:\nlive:\n%s\nsimulated:\n%s", got, want)
	}
}

// A member joining mid-run, live and simulated: one member of a classic group, a second
// one joins at 5m (its own librdkafka client, engine and ledger; its engine starts
// unassigned and gets its partitions through its rebalance callback). The join is an
// EAGER rebalance: the first member's whole assignment is revoked (a pending #unassign
// that clears its cache once its batches in flight finish) and roundrobin deals the
// partitions again, each new owner starting at the committed offset. The join changes the
// outcome, so a join that does not happen (or does not reach the engines) fails here:
// on two partitions of 100, with no join v1.10.0 loses 81-99 on both at the expiry
// clear; the clear of the join's unassign comes first and the refetch delivers all.
// The two partitions hold the same records, so the outcome does not depend on which
// member roundrobin (by member id, live) gives which.
//
// Not a case here: the seed's one partition of 200, where it does depend on that. The
// simulated group keeps p0 with m1 (join order), the join's clear moving the loss from
// 82-199 to 162-199; live runs gave that when m1 kept p0 (2 runs) and 164-199 when m2
// got it (1 run: the new member's engine starts its adaptive fetch size again at 1).
//
// Compared exactly: per partition the verdict, committed offsets and ledger frontiers at
// each phase end (the new owner's ledger starts at the committed offset, as simulated),
// delivered records, lost and stranded ranges; the members' names, that m2 joined (live
// not before the scaled 5m) and the records all members delivered together. Not compared:
// how the deliveries split between m1 and m2. roundrobin deals partitions by member id,
// random live and join order simulated, and where the join lands in a fetch moves a
// batch from one member to the other (seen live: m1 181 / m2 21 against the simulated
// 182 / 20 for the two partitions).
func TestLiveAndSimulatedAgreeWhenAMemberJoins(t *testing.T) {
	embeddedOnly(t)
	testenv.MustLive(t) // live consumers at scaled time on the embedded broker
	for _, tc := range []struct {
		name    string
		spread  string
		verdict verdict.Verdict
	}{
		{"two partitions of 100: the join's unassign clears the cache before the expiry and nothing is lost", "0:100,1:100", verdict.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := workload.ParseSpread(tc.spread)
			if err != nil {
				t.Fatal(err)
			}
			o := DefaultOptions()
			o.Kafka = testKafka(t)
			o.Workload = workload.Spec{Parts: parts, Transactions: 1}
			o.RebalanceAt = []RebalanceStep{{At: 5 * time.Minute, Join: true}}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			sim, err := Simulate(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if sim.Verdict != tc.verdict {
				t.Fatalf("simulated verdict %s, want %s: the scenario no longer shows the join", sim.Verdict, tc.verdict)
			}
			live, err := Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			shape := func(r *Result, joinedAfter time.Duration) string {
				s := outcome(r)
				for _, p := range r.Partitions {
					s += fmt.Sprintf("p%d frontier %v\n", p.Partition, p.FrontierByPhase)
				}
				total := 0
				for _, m := range r.Members {
					s += fmt.Sprintf("%s joined %v left %v\n", m.Name, m.Joined >= joinedAfter && m.Joined > 0, m.Left > 0)
					total += m.Delivered
				}
				return s + fmt.Sprintf("members delivered %d\n", total)
			}
			got, want := shape(live, o.scale(5*time.Minute)), shape(sim, 5*time.Minute)
			t.Logf("live:\n%s%s", got, membersText(live.Members))
			if got != want {
				t.Errorf("live and simulated differ:\nlive:\n%s\nsimulated:\n%s", got, want)
			}
			if live.Verdict != sim.Verdict || len(live.Members) != 2 || live.Members[1].Name != "m2" {
				t.Errorf("live verdict %s members %s; simulated %s %s", live.Verdict, membersText(live.Members), sim.Verdict, membersText(sim.Members))
			}
		})
	}
}
