package repro

import (
	"context"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

var simP0 = kpart.TopicPartition{Topic: "stranded", Partition: 0}

// commitLog records the commits that reach the simulated coordinator on partition 0.
type commitLog struct{ offsets []int64 }

func (c *commitLog) trace(ev traceevent.Event) {
	if ev.Ev != traceevent.Commit {
		return
	}
	for _, po := range ev.Committed {
		if po.Partition == 0 {
			c.offsets = append(c.offsets, po.Offset)
		}
	}
}

// simConsumer is one consumer instance on virtual time: the model engine over the
// simulated client, with the ledger committing its frontier (--commit ledger).
type simConsumer struct {
	eng *eachbatch.Engine
	ft  *frontierTracker
}

func newSim(l *loop.Loop, log *commitLog) *simkafka.Client {
	sim := simkafka.New(l, 0, log.trace) // no auto-commit: the ledger commits
	sim.Transaction(simP0, 200)
	return sim
}

func startSim(t *testing.T, l *loop.Loop, sim *simkafka.Client, s eachbatch.Settings, maxInFlight int) *simConsumer {
	t.Helper()
	var tps []kpart.TopicPartition
	for p := int32(0); p < 20; p++ {
		tps = append(tps, kpart.TopicPartition{Topic: "stranded", Partition: p})
	}
	sim.Assign(tps...)
	s.CommitOnSeek = false // enable.auto.commit is off in ledger mode
	eng, err := eachbatch.New(l, sim, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	sim.OnNonEmpty = eng.NotifyNonEmpty
	ft := newFrontierTracker(l, true, sim, 5*time.Second, nil)
	ft.maxInFlight = maxInFlight
	start := map[kpart.TopicPartition]int64{}
	for _, tp := range tps {
		if o := sim.Committed(tp); o >= 0 {
			start[tp] = o
		}
	}
	ft.assign(tps, start)
	ft.attach(eng)
	l.Post(eng.Start)
	return &simConsumer{eng: eng, ft: ft}
}

// settled: quiescent, and the ledger's frontier on partition 0 has been committed.
func (c *simConsumer) settled(sim *simkafka.Client) bool {
	f, ok := c.ft.led.Frontier(lkey(simP0))
	return ok && c.eng.Quiescent() && sim.Committed(simP0) == f
}

func runUntil(t *testing.T, l *loop.Loop, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx, done); err != nil {
		t.Fatal(err)
	}
}

func TestLedgerCommitStopsAtTheStrandedRecordsAndRestartsDeliverThem(t *testing.T) {
	l := loop.NewVirtual(time.Unix(0, 0))
	log := &commitLog{}
	sim := newSim(l, log)
	c := startSim(t, l, sim, eachbatch.DefaultSettings(), 0)
	runUntil(t, l, func() bool { return c.settled(sim) })
	if got, want := len(c.eng.Delivered()[simP0]), 82; got != want {
		t.Fatalf("phase 1 delivered %d, want %d", got, want)
	}
	if got := sim.Committed(simP0); got != 82 {
		t.Fatalf("phase 1 committed %d, want 82 (stranded, not lost)", got)
	}

	// Phase 2: the extra record is delivered, the commit does not move past 82.
	sim.Append(simP0, simkafka.Data)
	runUntil(t, l, func() bool { return c.eng.Delivered()[simP0][201] > 0 && c.settled(sim) })
	for _, o := range log.offsets {
		if o > 82 {
			t.Fatalf("committed %d past the stranded record 82 (commits %v)", o, log.offsets)
		}
	}

	// Phase 3: a fresh consumer in the same group resumes at 82; restart while the
	// bug strands records again.
	delivered := c.eng.Delivered()[simP0]
	restarts := 0
	for c.ft.pending() > 0 {
		if restarts == 5 {
			t.Fatalf("%d records still pending after 5 restarts", c.ft.pending())
		}
		drain(l, c.eng, time.Minute)
		c.ft.shutdown()
		sim.Close()
		c = startSim(t, l, sim, eachbatch.DefaultSettings(), 0)
		restarts++
		runUntil(t, l, func() bool { return c.settled(sim) })
		for o, n := range c.eng.Delivered()[simP0] {
			delivered[o] += n
		}
	}
	if got := sim.Committed(simP0); got != 202 {
		t.Fatalf("final commit %d, want 202", got)
	}
	for o := int64(0); o < 200; o++ {
		if delivered[o] == 0 {
			t.Fatalf("offset %d never delivered", o)
		}
	}
	if restarts != 2 {
		t.Errorf("%d restarts, want 2 (82..163 after the first, the rest after the second)", restarts)
	}
	for i := 1; i < len(log.offsets); i++ {
		if log.offsets[i] < log.offsets[i-1] {
			t.Fatalf("commit regression %v", log.offsets)
		}
	}
}

func TestAHandlerStillRunningAtGraceExpiryKeepsTheCommitBelowItsRecord(t *testing.T) {
	l := loop.NewVirtual(time.Unix(0, 0))
	sim := newSim(l, &commitLog{})
	c := startSim(t, l, sim, eachbatch.DefaultSettings(), 0)
	// Run until the batch of offsets 22..41 (4m40s long) is in the handler.
	runUntil(t, l, func() bool { return len(c.eng.Delivered()[simP0]) == 42 })
	drain(l, c.eng, 30*time.Second) // grace 30 s: the batch is still running when it ends
	c.ft.shutdown()
	if got := sim.Committed(simP0); got != 22 {
		t.Fatalf("final commit %d, want 22: the first record of the batch still running", got)
	}
}

func TestDrainingWithEnoughGraceCommitsTheFinishedBatch(t *testing.T) {
	l := loop.NewVirtual(time.Unix(0, 0))
	sim := newSim(l, &commitLog{})
	c := startSim(t, l, sim, eachbatch.DefaultSettings(), 0)
	runUntil(t, l, func() bool { return len(c.eng.Delivered()[simP0]) == 42 })
	drain(l, c.eng, 10*time.Minute)
	c.ft.shutdown()
	if !c.eng.Stopped() {
		t.Fatal("the engine did not stop within the grace period")
	}
	if got := sim.Committed(simP0); got != 42 {
		t.Fatalf("final commit %d, want 42: the batch finished within the grace period", got)
	}
}

func TestBackPressurePausesAFullPartitionWithoutMovingTheFrontier(t *testing.T) {
	l := loop.NewVirtual(time.Unix(0, 0))
	sim := newSim(l, &commitLog{})
	s := eachbatch.DefaultSettings()
	s.HandlerDelay = time.Second // short batches: the cache never expires here
	c := startSim(t, l, sim, s, 50)
	sawPaused := false
	var last int64 = -1
	runUntil(t, l, func() bool {
		if sim.Paused(simP0) {
			sawPaused = true
		}
		if f, ok := c.ft.led.Frontier(lkey(simP0)); ok {
			if f < last {
				t.Fatalf("frontier moved back from %d to %d", last, f)
			}
			if p := c.ft.led.Pending(lkey(simP0)); len(p) > 0 && f > p[0] {
				t.Fatalf("frontier %d passed pending record %d", f, p[0])
			}
			last = f
		}
		return c.eng.Quiescent() && sim.Committed(simP0) == 201
	})
	if !sawPaused || c.ft.Pauses == 0 {
		t.Fatal("partition 0 was never paused, with 198 records in flight and a bound of 50")
	}
	if got := len(c.eng.Delivered()[simP0]); got != 200 {
		t.Fatalf("delivered %d, want 200", got)
	}
}

func TestARevokedPartitionCommitsItsFrontierAndALostOneNothing(t *testing.T) {
	for _, tc := range []struct {
		lost bool
		want int64
	}{{false, 20}, {true, -1}} {
		l := loop.NewVirtual(time.Unix(0, 0))
		sim := newSim(l, &commitLog{})
		sim.Assign(simP0)
		ft := newFrontierTracker(l, true, sim, time.Hour, nil)
		ft.assign([]kpart.TopicPartition{simP0}, nil)
		var recs []eachbatch.Record
		for o := int64(0); o < 30; o++ {
			recs = append(recs, eachbatch.Record{TopicPartition: simP0, Offset: o})
		}
		ft.fetched(recs)
		ft.finished(recs[:20], true) // 0..19 done, 20..29 still in the handler
		ft.revoked([]kpart.TopicPartition{simP0}, tc.lost)
		if got := sim.Committed(simP0); got != tc.want {
			t.Errorf("lost=%v: committed %d, want %d", tc.lost, got, tc.want)
		}
		ft.finished(recs[20:], true) // a completion after the revocation changes nothing
		ft.commitPrepared()
		if got := sim.Committed(simP0); got != tc.want {
			t.Errorf("lost=%v: a stale completion moved the commit to %d", tc.lost, got)
		}
	}
}
