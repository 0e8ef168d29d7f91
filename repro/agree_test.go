package repro

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
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

func everyRecordDelivered(r *Result) bool {
	for _, p := range r.Partitions {
		if p.Verdict != verdict.OK || p.Delivered < p.Produced {
			return false
		}
	}
	return true
}

// checkWakes checks the wake events of a run's trace: every wait for the consumer queue
// that ended with records was ended by want. Simulated runs wire queue_non_empty_cb
// (arrival); the live source has no equivalent (repro/source.go), so there the valve
// ends every wait, and records fetched after one arrived during it (the difference is
// measured by bench/wake.sh, BENCHMARKS.md "Live wake-up").
func checkWakes(t *testing.T, name string, trace *bytes.Buffer, want string) {
	t.Helper()
	withRecords := 0
	sc := bufio.NewScanner(trace)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev traceevent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s trace: %v", name, err)
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
	if withRecords == 0 {
		t.Errorf("%s trace: no wait ended with records (phase 2's records arrive while the workers wait)", name)
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

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

func TestLiveAndSimulatedAgree(t *testing.T) {
	embeddedOnly(t)
	if testing.Short() {
		t.Skip("runs live consumers on the embedded broker for minutes")
	}
	for _, tc := range []struct {
		name                     string
		spread                   string
		concurrency, batch, hpar int
		policies                 []eachbatch.Policy
		handler                  eachbatch.Handler
		failAt                   []int64
		// fetchTiming: live, whether the second partition's records were fetched into the
		// cache before it expired depends on fetch timing (the simulated log interleaves
		// partitions per fetch; librdkafka's fetches follow the broker's answers and the
		// machine's load). Seen both ways on this machine under load (2 of ~10 runs). The
		// live run must then either match the simulation or deliver every record: never
		// a third outcome, and the first partition always as simulated.
		fetchTiming bool
	}{
		{"the seed", "0:200", 20, 20, 3, []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1}, "", nil, false},
		{"two partitions, one worker, unbounded batches", "0:100,1:40", 1, -1, 3, []eachbatch.Policy{eachbatch.V1_10_1, eachbatch.Head}, "", nil, true},
		{"8x10, two workers, one record at a time", "8x10", 2, 1, 1, []eachbatch.Policy{eachbatch.V1_10_0}, "", nil, false},
		{"20x10, twenty workers", "20x10", 20, 20, 3, []eachbatch.Policy{eachbatch.V1_10_0}, "", nil, false},
		// eachMessage keeps the partition it serves (a last-consumed entry in either
		// version) and loses the one never served.
		{"eachMessage, two partitions, one worker, unbounded fetches", "0:100,1:40", 1, -1, 3,
			[]eachbatch.Policy{eachbatch.V1_10_0, eachbatch.Head}, eachbatch.EachMessage, nil, true},
		// A handler that throws once: its records come again, nothing lost.
		{"eachBatch throwing at offset 30, the seed", "0:200", 20, 20, 3, []eachbatch.Policy{eachbatch.V1_10_1}, eachbatch.EachBatch, []int64{30}, false},
	} {
		for _, p := range tc.policies {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				parts, err := workload.ParseSpread(tc.spread)
				if err != nil {
					t.Fatal(err)
				}
				o := DefaultOptions()
				o.Kafka = testKafka(t)
				o.Policy = p
				o.Workload = workload.Spec{Parts: parts, Transactions: 1}
				o.Concurrency, o.BatchSize, o.HandlerParallel = tc.concurrency, tc.batch, tc.hpar
				o.Handler, o.HandlerFailAt = tc.handler, tc.failAt
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				var simTrace, liveTrace bytes.Buffer
				simW, liveW := traceevent.NewWriter(&simTrace), traceevent.NewWriter(&liveTrace)
				o.Trace = simW
				sim, err := Simulate(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				o.Trace = liveW
				live, err := Run(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				if err := errors.Join(simW.Flush(), liveW.Flush()); err != nil {
					t.Fatal(err)
				}
				checkWakes(t, "simulated", &simTrace, eachbatch.WakeArrival)
				checkWakes(t, "live", &liveTrace, eachbatch.WakeValve)
				got, want := outcome(live), outcome(sim)
				t.Logf("live:\n%s", got)
				if !reflect.DeepEqual(got, want) {
					if tc.fetchTiming && everyRecordDelivered(live) && firstLine(got) == firstLine(want) {
						t.Logf("live took the other fetch timing: every record delivered (allowed for this shape)")
						return
					}
					t.Errorf("live and simulated differ:\nlive:\n%s\nsimulated:\n%s", got, want)
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
	if testing.Short() {
		t.Skip("runs live consumers on the embedded broker")
	}
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
