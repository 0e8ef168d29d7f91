package eachbatch_test

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

var p1 = kpart.TopicPartition{Topic: "stranded", Partition: 1}

type shapeRun struct {
	l      *loop.Loop
	sim    *simkafka.Client
	e      *eachbatch.Engine
	events []traceevent.Event
}

// runShape runs records per partition (one transaction each) to quiescence.
func runShape(t *testing.T, s eachbatch.Settings, records ...int) *shapeRun {
	t.Helper()
	return runShapeFor(t, 0, s, records...)
}

// runShapeFor runs to quiescence or, when limit > 0, for limit of virtual time.
func runShapeFor(t *testing.T, limit time.Duration, s eachbatch.Settings, records ...int) *shapeRun {
	t.Helper()
	return runShapeFrom(t, limit, 0, s, records...)
}

// runShapeFrom is runShapeFor with partition first's records served first (the fetch
// list, simkafka.Client.Order, starting with it; the others after it by number).
func runShapeFrom(t *testing.T, limit time.Duration, first int32, s eachbatch.Settings, records ...int) *shapeRun {
	t.Helper()
	r := &shapeRun{l: loop.NewVirtual(time.Unix(0, 0))}
	tr := func(ev traceevent.Event) { r.events = append(r.events, ev) }
	autoCommit := 5 * time.Second
	if s.ManualCommit || s.ExplicitCommit {
		autoCommit = 0 // kafkaJS autoCommit: false
	}
	r.sim = simkafka.New(r.l, autoCommit, tr)
	var tps []kpart.TopicPartition
	for p, n := range records {
		tp := kpart.TopicPartition{Topic: "stranded", Partition: int32(p)}
		tps = append(tps, tp)
		r.sim.Transaction(tp, n)
	}
	if first != 0 {
		r.sim.Order = []int32{first}
	}
	r.sim.Assign(tps...)
	e, err := eachbatch.New(r.l, r.sim, s, tr)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	r.sim.OnNonEmpty = e.NotifyNonEmpty
	r.l.Post(e.Start)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := e.Quiescent
	if limit > 0 {
		end := false
		r.l.After(limit, func() { end = true })
		done = func() bool { return end }
	}
	if err := r.l.Run(ctx, done); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *shapeRun) clears() []traceevent.Event {
	var out []traceevent.Event
	for _, ev := range r.events {
		if ev.Ev == traceevent.Clear {
			out = append(out, ev)
		}
	}
	return out
}

func (r *shapeRun) seeks(reason string) []int64 {
	var out []int64
	for _, ev := range r.events {
		if ev.Ev == traceevent.Seek && ev.Reason == reason {
			out = append(out, *ev.Offset)
		}
	}
	return out
}

func TestEachMessageKeepsEveryServedPartitionButLosesOneNeverServed(t *testing.T) {
	// Two partitions (100 and 40 records), one worker, unbounded fetches: the first fetch
	// caches both, the worker takes partition 0 one record at a time (40 s each) and
	// partition 1 waits. The cache expires at 900 s with record 22 of partition 0 in the
	// handler (served at 880 s); the clear runs when it returns at 920 s. Partition 0 has
	// a last-consumed entry in every version: 1.10.0 set it to 22 before the handler ran
	// and rewinds to 22 itself (22 is handed over twice), 1.10.1 set it to 22 after the
	// store and rewinds to 23. Partition 1 was never served: no entry, no rewind, its 40
	// records are dropped in 1.10.0 and 1.10.1; head rewinds it to 0.
	for _, tc := range []struct {
		p          eachbatch.Policy
		p0Rewind   int64
		twice22    bool
		p1Rewinded bool
	}{
		{eachbatch.V1_10_0, 22, true, false},
		{eachbatch.V1_10_1, 23, false, false},
		{eachbatch.Head, 23, false, true},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			s := settings(tc.p)
			s.Handler, s.Concurrency, s.BatchSize = eachbatch.EachMessage, 1, -1
			r := runShape(t, s, 100, 40)
			cs := r.clears()
			if len(cs) == 0 {
				t.Fatal("no clear")
			}
			c := cs[0]
			if c.AtMs != 920000 {
				t.Errorf("clear at %v ms, want 920000 (when record 22's handler returns)", c.AtMs)
			}
			if len(c.Discarded) != 2 || c.Discarded[0] != traceevent.PartitionRange(0, 23, 99, 77) || c.Discarded[1] != traceevent.PartitionRange(1, 0, 39, 40) {
				t.Errorf("discarded %+v, want 0: 23..99 and 1: 0..39", c.Discarded)
			}
			want := []traceevent.Rewind{{Partition: 0, Offset: tc.p0Rewind, Reason: map[bool]string{true: "last-consumed", false: "last-consumed+1"}[tc.p == eachbatch.V1_10_0]}}
			if tc.p1Rewinded {
				want = append(want, traceevent.Rewind{Partition: 1, Offset: 0, Reason: "pending head"})
			}
			if len(c.Rewinds) != len(want) {
				t.Fatalf("rewinds %+v, want %+v", c.Rewinds, want)
			}
			for i := range want {
				if c.Rewinds[i] != want[i] {
					t.Errorf("rewind %d: %+v, want %+v", i, c.Rewinds[i], want[i])
				}
			}
			d := r.e.Delivered()
			if got := d[p0][22]; (got == 2) != tc.twice22 || got == 0 {
				t.Errorf("record 0/22 delivered %d times (twice: %v)", got, tc.twice22)
			}
			if len(d[p0]) != 100 {
				t.Errorf("partition 0: %d of 100 delivered", len(d[p0]))
			}
			if got, want := len(d[p1]), map[bool]int{true: 40, false: 0}[tc.p1Rewinded]; got != want {
				t.Errorf("partition 1: %d of 40 delivered, want %d", got, want)
			}
			if st := r.e.Stored()[p0]; st != 100 {
				t.Errorf("partition 0 stored %d, want 100", st)
			}
		})
	}
}

func TestEachMessageSeedNeverExpiresTheCache(t *testing.T) {
	// The seed's settings with eachMessage: the worker takes one record per 40 s, and
	// the adaptive fetch size keeps the cache to about 1.5 s of work per worker, so a
	// fetch happens every record and the 900 s expiry never comes.
	s := settings(eachbatch.V1_10_0)
	s.Handler = eachbatch.EachMessage
	r := runSeed(t, s)
	if len(r.delivered1) != 200 || r.committed1 != 200 || r.committed2 != 202 {
		t.Errorf("delivered %d, committed %d then %d; want 200, 200, 202", len(r.delivered1), r.committed1, r.committed2)
	}
	for _, ev := range r.events {
		if ev.Ev == traceevent.Clear {
			t.Fatalf("clear at %v ms", ev.AtMs)
		}
	}
}

func TestAHandlerThatThrowsGetsItsRecordsAgain(t *testing.T) {
	// Ten records of partition 0 fetched at once (unbounded batches), three processed
	// at a time per 40 s; the handler throws the first time it reaches offset 5.
	for _, tc := range []struct {
		name        string
		handler     eachbatch.Handler
		autoResolve bool
		seekTo      int64
		twice       []int64 // offsets handed to the handler twice
		throwAtMs   float64
	}{
		// eachBatch, auto-resolve: the second round (3-5) throws at 80 s; nothing was
		// resolved, so #batchProcessor seeks to the batch's first offset; 0-5 reach the
		// handler twice (6-9 never reached it the first time).
		{"eachBatch with auto-resolve seeks to the batch's first record", eachbatch.EachBatch, true, 0,
			[]int64{0, 1, 2, 3, 4, 5}, 80000},
		// eachBatch resolving each round: 0-2 were resolved at 40 s, the round 3-5
		// throws, the seek goes to 3.
		{"eachBatch resolving its rounds seeks past the last resolved record", eachbatch.EachBatch, false, 3,
			[]int64{3, 4, 5}, 80000},
		// eachMessage: records 0-4 stored one by one, 5 throws at 240 s, seek to 5.
		{"eachMessage seeks to the record that threw", eachbatch.EachMessage, true, 5,
			[]int64{5}, 240000},
	} {
		for _, p := range eachbatch.Policies {
			if p.FixedBatchSize(eachbatch.EachBatch) != 0 {
				continue // no unbounded batches before 1.7.0: its fetches start at 1 record, not all ten
			}
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				s := settings(p)
				s.Handler, s.AutoResolve, s.Concurrency, s.BatchSize, s.FailAt = tc.handler, tc.autoResolve, 1, -1, []int64{5}
				r := runShape(t, s, 10)
				var threw []float64
				for _, ev := range r.events {
					if ev.Ev == traceevent.BatchEnd && ev.Reason == "handler threw" {
						threw = append(threw, ev.AtMs)
					}
				}
				if len(threw) != 1 || threw[0] != tc.throwAtMs {
					t.Errorf("handler threw at %v ms, want once at %v", threw, tc.throwAtMs)
				}
				reason := map[eachbatch.Handler]string{eachbatch.EachBatch: "batch not resolved", eachbatch.EachMessage: "eachMessage threw"}[tc.handler]
				if got := r.seeks(reason); len(got) != 1 || got[0] != tc.seekTo {
					t.Errorf("seeks %v, want [%d]", got, tc.seekTo)
				}
				d := r.e.Delivered()[p0]
				twice := map[int64]bool{}
				for _, o := range tc.twice {
					twice[o] = true
				}
				for o := int64(0); o < 10; o++ {
					if want := map[bool]int{true: 2, false: 1}[twice[o]]; d[o] != want {
						t.Errorf("offset %d delivered %d times, want %d", o, d[o], want)
					}
				}
				if st := r.e.Stored()[p0]; st != 10 {
					t.Errorf("stored %d, want 10", st)
				}
			})
		}
	}
}

func TestAHandlerResolvingItsOwnRoundsStopsAtAStaleBatch(t *testing.T) {
	// One partition, 30 records in one unbounded batch, 3 per 100 s: 1,000 s of work
	// against a 300 s max.poll.interval. The cache expires at 300 s (clear pending),
	// the batch becomes stale at 600 s (twice the interval after the fetch); the handler
	// resolved each round as it went (offsets 0-17 by 600 s, stored 18), sees the stale
	// payload after the round ending at 600 s and returns. #batchProcessor seeks to 18
	// and nothing is delivered twice. With auto-resolve the stale batch resolves
	// nothing when it returns at 1,000 s: the seek goes back to 0 and all 30 come again
	// (and again: with 1,000 s of work per batch it never settles; the run stops at
	// 2,000 s).
	for _, tc := range []struct {
		autoResolve bool
		seekTo      int64
		endMs       float64
		twice       int
	}{{false, 18, 600000, 0}, {true, 0, 1000000, 30}} {
		t.Run(map[bool]string{true: "auto-resolve", false: "resolving its rounds"}[tc.autoResolve], func(t *testing.T) {
			s := settings(eachbatch.V1_10_1)
			s.AutoResolve, s.Concurrency, s.BatchSize = tc.autoResolve, 1, -1
			s.MaxPollInterval, s.HandlerDelay = 300*time.Second, 100*time.Second
			limit := time.Duration(0)
			if tc.autoResolve {
				limit = 2000 * time.Second
			}
			r := runShapeFor(t, limit, s, 30)
			var first traceevent.Event
			for _, ev := range r.events {
				if ev.Ev == traceevent.BatchEnd {
					first = ev
					break
				}
			}
			if first.AtMs != tc.endMs || first.Reason != "not resolved (stale)" {
				t.Errorf("first batch ended at %v ms (%s), want %v (not resolved (stale))", first.AtMs, first.Reason, tc.endMs)
			}
			if got := r.seeks("batch not resolved"); len(got) == 0 || got[0] != tc.seekTo {
				t.Errorf("seeks %v, want %d first", got, tc.seekTo)
			}
			twice := 0
			for _, n := range r.e.Delivered()[p0] {
				if n > 1 {
					twice++
				}
			}
			if len(r.e.Delivered()[p0]) != 30 || (tc.twice > 0) != (twice > 0) {
				t.Errorf("delivered %d distinct, %d more than once; want 30, %d", len(r.e.Delivered()[p0]), twice, tc.twice)
			}
		})
	}
}

func TestReturnMessagesSavesThePartitionTheFetchingWorkerTook(t *testing.T) {
	// One worker, unbounded batches, consume calls that take 1 s. Partition 0's 30
	// records are fetched at once (the call returns at 1 s) and served as one batch of
	// 10 rounds of 89.95 s: it returns at 900.5 s, and the worker's next consume call
	// starts then. Meanwhile (at 10 s) 10 records arrived on partitions 1 and 2, each
	// behind a transaction marker at offset 0. The cache expires at 901 s (900 s after
	// the last fetch returned), while the call is still collecting; it returns at
	// 901.5 s with both partitions' records, the worker takes
	// partition 1's, finds the clear pending and gives them back (#returnMessages),
	// which records last-consumed = first - 1 = 0 for partition 1. The clear then
	// rewinds partition 1 (1.10.0 to 0, the marker; 1.10.1 to 1) and delivers all of it;
	// partition 2, cached but untouched, has no entry: 1.10.0 and 1.10.1 drop it, head
	// rewinds it to its oldest cached record.
	for _, tc := range []struct {
		p        eachbatch.Policy
		p1Rewind traceevent.Rewind
		p2Saved  bool
	}{
		{eachbatch.V1_10_0, traceevent.Rewind{Partition: 1, Offset: 0, Reason: "last-consumed"}, false},
		{eachbatch.V1_10_1, traceevent.Rewind{Partition: 1, Offset: 1, Reason: "last-consumed+1"}, false},
		{eachbatch.Head, traceevent.Rewind{Partition: 1, Offset: 1, Reason: "last-consumed+1"}, true},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			l := loop.NewVirtual(time.Unix(0, 0))
			var events []traceevent.Event
			tr := func(ev traceevent.Event) { events = append(events, ev) }
			sim := simkafka.New(l, 5*time.Second, tr)
			p2 := kpart.TopicPartition{Topic: "stranded", Partition: 2}
			sim.Transaction(p0, 30)
			sim.Append(p1, simkafka.Control)
			sim.Append(p2, simkafka.Control)
			sim.Assign(p0, p1, p2)
			s := settings(tc.p)
			s.Concurrency, s.BatchSize = 1, -1
			s.HandlerDelay, s.HandlerParallel = 89950*time.Millisecond, 3
			s.ConsumeTime = time.Second
			e, err := eachbatch.New(l, sim, s, tr)
			if err != nil {
				t.Fatal(err)
			}
			sim.OnNonEmpty = e.NotifyNonEmpty
			l.Post(e.Start)
			l.After(10*time.Second, func() {
				for i := 0; i < 10; i++ {
					sim.Append(p1, simkafka.Data)
					sim.Append(p2, simkafka.Data)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := l.Run(ctx, func() bool { return l.Elapsed() > 30*time.Second && e.Quiescent() }); err != nil {
				t.Fatal(err)
			}
			var returned, clear *traceevent.Event
			for i := range events {
				switch ev := &events[i]; ev.Ev {
				case traceevent.Returned:
					returned = ev
				case traceevent.Clear:
					if clear == nil {
						clear = ev
					}
				}
			}
			if returned == nil || returned.AtMs != 901500 || *returned.Partition != 1 || len(returned.Offsets) != 10 || returned.Offsets[0] != 1 {
				t.Fatalf("returned %+v, want partition 1's offsets 1..10 at 901500 ms", returned)
			}
			if clear == nil || clear.AtMs != 901500 {
				t.Fatalf("clear %+v, want one at 901500 ms", clear)
			}
			found := false
			for _, rw := range clear.Rewinds {
				if rw == tc.p1Rewind {
					found = true
				}
			}
			if !found {
				t.Errorf("rewinds %+v, want %+v", clear.Rewinds, tc.p1Rewind)
			}
			d := e.Delivered()
			if len(d[p1]) != 10 {
				t.Errorf("partition 1: %d of 10 delivered", len(d[p1]))
			}
			if got, want := len(d[p2]), map[bool]int{true: 10, false: 0}[tc.p2Saved]; got != want {
				t.Errorf("partition 2: %d of 10 delivered, want %d", got, want)
			}
		})
	}
}
