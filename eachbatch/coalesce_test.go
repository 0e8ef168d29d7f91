package eachbatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// traceOf runs a shape to quiescence, then one more record per partition, and returns
// every event as JSON lines plus the delivered offsets.
func traceOf(t *testing.T, s eachbatch.Settings, parts, records int) ([]string, string) {
	t.Helper()
	l := loop.NewVirtual(time.Unix(0, 0))
	var lines []string
	tr := func(ev traceevent.Event) {
		b, _ := json.Marshal(ev)
		lines = append(lines, string(b))
	}
	sim := simkafka.New(l, 5*time.Second, tr)
	var tps []kpart.TopicPartition
	for p := 0; p < 20; p++ {
		tps = append(tps, kpart.TopicPartition{Topic: "stranded", Partition: int32(p)})
	}
	for p := 0; p < parts; p++ {
		sim.Transaction(tps[p], records)
	}
	sim.Assign(tps...)
	e, err := eachbatch.New(l, sim, s, tr)
	if err != nil {
		t.Fatal(err)
	}
	sim.OnNonEmpty = e.NotifyNonEmpty
	l.Post(e.Start)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.Run(ctx, e.Quiescent); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < parts; p++ {
		sim.Append(tps[p], simkafka.Data)
	}
	// Run on for an hour of virtual time past the new records.
	end := false
	l.After(time.Hour, func() { end = true })
	if err := l.Run(ctx, func() bool { return end }); err != nil {
		t.Fatal(err)
	}
	e.FlushTrace()
	return lines, fmt.Sprint(e.Delivered())
}

func TestCoalescedIdleTimeGivesTheSameTraceAsSteppingThroughIt(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		parts, records           int
		concurrency, batch, hpar int
		handler                  eachbatch.Handler
		manual                   bool    // the handler resolves its own rounds
		failAt                   []int64 // offsets where the handler throws once
		consume                  time.Duration
	}{
		{"the seed", 1, 200, 20, 20, 3, "", false, nil, 0},
		{"two partitions, one worker, unbounded batches", 2, 60, 1, -1, 3, "", false, nil, 0},
		{"more partitions than workers, one record at a time", 8, 10, 2, 1, 1, "", false, nil, 0},
		{"20 partitions, 20 workers", 20, 10, 20, 20, 3, "", false, nil, 0},
		{"eachMessage, the seed", 1, 200, 20, 20, 3, eachbatch.EachMessage, false, nil, 0},
		{"eachMessage, two partitions, one worker, unbounded fetches", 2, 60, 1, -1, 3, eachbatch.EachMessage, false, nil, 0},
		{"eachMessage throwing, more partitions than workers", 8, 10, 2, 1, 1, eachbatch.EachMessage, false, []int64{3}, 0},
		{"eachBatch resolving its rounds and throwing, the seed", 1, 200, 20, 20, 3, eachbatch.EachBatch, true, []int64{50}, 0},
		{"eachBatch with auto-resolve throwing, two partitions, one worker", 2, 60, 1, -1, 3, eachbatch.EachBatch, false, []int64{7}, 0},
		{"consume calls of 300 ms, the seed", 1, 200, 20, 20, 3, "", false, nil, 300 * time.Millisecond},
		{"consume calls of 1 s, eachMessage, 8 partitions, 2 workers", 8, 10, 2, 1, 1, eachbatch.EachMessage, false, nil, time.Second},
	} {
		for _, p := range eachbatch.Policies {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				s := eachbatch.DefaultSettings()
				s.Policy, s.Concurrency, s.BatchSize, s.HandlerParallel = p, tc.concurrency, tc.batch, tc.hpar
				if tc.handler != "" {
					s.Handler = tc.handler
				}
				s.AutoResolve, s.FailAt, s.ConsumeTime = !tc.manual, tc.failAt, tc.consume
				fast, fastDel := traceOf(t, s, tc.parts, tc.records)
				s.StepIdle = true
				slow, slowDel := traceOf(t, s, tc.parts, tc.records)
				if fastDel != slowDel {
					t.Fatalf("delivered differs:\n%s\n%s", fastDel, slowDel)
				}
				if len(fast) != len(slow) {
					t.Fatalf("%d events coalesced, %d stepped", len(fast), len(slow))
				}
				for i := range fast {
					if fast[i] != slow[i] {
						t.Fatalf("event %d differs:\n coalesced %s\n stepped   %s", i, fast[i], slow[i])
					}
				}
			})
		}
	}
}

// The rebalance paths (a join and a leave under both protocols, and librdkafka's
// max.poll.interval leave and rejoin) give the same trace coalesced and stepped.
func TestCoalescedIdleTimeGivesTheSameTraceThroughRebalances(t *testing.T) {
	run := func(step, cooperative, maxPoll bool) ([]string, string) {
		s := eachbatch.DefaultSettings()
		s.StepIdle = step
		records := []int{100, 100}
		if maxPoll {
			s.Policy, s.Concurrency, s.BatchSize = eachbatch.V1_10_1, 1, -1
			records = []int{200}
		}
		r := newGroupRun(t, s, cooperative, records...)
		r.join("m1")
		if !maxPoll {
			r.join("m2")
			r.at(5*time.Minute, func() { r.join("m3") })
			r.at(8*time.Minute, func() { r.leave(r.members[1]) })
		}
		r.run(2 * time.Hour)
		var lines []string
		for _, m := range r.members {
			m.e.FlushTrace()
		}
		for _, ev := range r.events {
			b, _ := json.Marshal(ev)
			lines = append(lines, string(b))
		}
		return lines, summary(r.delivered(), r.tps)
	}
	for _, tc := range []struct {
		name                 string
		cooperative, maxPoll bool
	}{{"eager join and leave", false, false}, {"cooperative join and leave", true, false}, {"max.poll.interval leave and rejoin", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			a, da := run(false, tc.cooperative, tc.maxPoll)
			b, db := run(true, tc.cooperative, tc.maxPoll)
			if da != db {
				t.Fatalf("delivered differ: coalesced %s, stepped %s", da, db)
			}
			for i := 0; i < len(a) && i < len(b); i++ {
				if a[i] != b[i] {
					t.Fatalf("event %d differs:\ncoalesced %s\nstepped   %s", i, a[i], b[i])
				}
			}
			if len(a) != len(b) {
				t.Fatalf("coalesced %d events, stepped %d", len(a), len(b))
			}
		})
	}
}

// The fast path (idle stretches coalesced, ticks counted) and the record-by-record,
// tick-by-tick reference (StepIdle) give identical traces and deliveries on random
// shapes: partitions, records, workers, batch sizes, handlers, throws, consume times
// and policies (issue 25).
func TestFastPathEqualsSteppedReferenceOnRandomShapes(t *testing.T) {
	rng := rand.New(rand.NewSource(2025))
	n := 40
	if testing.Short() {
		n = 10
	}
	for i := 0; i < n; i++ {
		s := eachbatch.DefaultSettings()
		s.Policy = eachbatch.Policies[rng.Intn(len(eachbatch.Policies))]
		s.Concurrency = 1 + rng.Intn(6)
		s.BatchSize = []int{-1, 1, 3, 20}[rng.Intn(4)]
		s.HandlerParallel = 1 + rng.Intn(3)
		if rng.Intn(3) == 0 {
			s.Handler = eachbatch.EachMessage
		}
		s.AutoResolve = rng.Intn(3) > 0 || s.Handler == eachbatch.EachMessage
		if rng.Intn(3) == 0 {
			s.FailAt = []int64{int64(rng.Intn(30))}
		}
		s.ConsumeTime = []time.Duration{0, 0, 300 * time.Millisecond}[rng.Intn(3)]
		parts, records := 1+rng.Intn(8), 1+rng.Intn(40)
		name := fmt.Sprintf("%d/%s %dx%d c%d b%d p%d %s auto=%v fail=%v consume=%s", i, s.Policy, parts, records,
			s.Concurrency, s.BatchSize, s.HandlerParallel, s.Handler, s.AutoResolve, s.FailAt, s.ConsumeTime)
		t.Run(name, func(t *testing.T) {
			fast, fastDel := traceOf(t, s, parts, records)
			s.StepIdle = true
			slow, slowDel := traceOf(t, s, parts, records)
			if fastDel != slowDel {
				t.Fatalf("delivered differs:\n%s\n%s", fastDel, slowDel)
			}
			for k := 0; k < len(fast) && k < len(slow); k++ {
				if fast[k] != slow[k] {
					t.Fatalf("event %d differs:\n fast    %s\n stepped %s", k, fast[k], slow[k])
				}
			}
			if len(fast) != len(slow) {
				t.Fatalf("%d events fast, %d stepped", len(fast), len(slow))
			}
		})
	}
}
