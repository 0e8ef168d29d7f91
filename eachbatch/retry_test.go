package eachbatch_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// idleRun runs 10 records of partition 0 with partitions 0-3 assigned (four workers),
// an hour of idle time after them, then one more record of partition 0 at 2 h.
type idleRun struct {
	events   []traceevent.Event
	appended time.Duration // when the last record was appended
}

func runIdle(t *testing.T, s eachbatch.Settings) idleRun {
	t.Helper()
	l := loop.NewVirtual(time.Unix(0, 0))
	var r idleRun
	tr := func(ev traceevent.Event) { r.events = append(r.events, ev) }
	sim := simkafka.New(l, 5*time.Second, tr)
	var tps []kpart.TopicPartition
	for p := 0; p < 4; p++ {
		tps = append(tps, kpart.TopicPartition{Topic: "stranded", Partition: int32(p)})
	}
	sim.Transaction(tps[0], 10)
	sim.Assign(tps...)
	e, err := eachbatch.New(l, sim, s, tr)
	if err != nil {
		t.Fatal(err)
	}
	sim.OnNonEmpty = e.NotifyNonEmpty
	l.Post(e.Start)
	r.appended = 2*time.Hour + 123*time.Millisecond // between two of the spin's 100 ms fetches
	l.After(r.appended, func() { sim.Append(tps[0], simkafka.Data) })
	end := false
	l.After(3*time.Hour, func() { end = true })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx, func() bool { return end }); err != nil {
		t.Fatal(err)
	}
	e.FlushTrace()
	return r
}

// 1.3.0's idle workers (they found nothing, and no partition is held) reach the fetch
// together and take turns at it without pause: the model bounds that to one empty fetch
// per MinWake (100 ms), where 1.3.1 and later fetch once per valve period (1 s) on
// #nonEmpty. Either way a record that arrives is fetched when it arrives (the
// queue-non-empty callback), and the cache never expires while the workers are idle.
func TestV130IdleWorkersTakeTurnsAtTheFetchAndFetchAnArrivalAtOnce(t *testing.T) {
	for _, tc := range []struct {
		policy           eachbatch.Policy
		minIdle, maxIdle int // empty fetches in the idle hours
	}{
		{eachbatch.V1_3_0, 65_900, 66_100}, // ten a second over the 6,600 s from 10 min to the arrival
		{eachbatch.V1_6_0, 6_550, 6_650},   // one a second (the valve)
		// 0.x: one consume call waiting at a time, empty at its 1 s timeout
		{eachbatch.V0_2_0, 6_550, 6_650},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			r := runIdle(t, settings(tc.policy))
			idle := 0
			var lastFetch *traceevent.Event
			for i, ev := range r.events {
				switch ev.Ev {
				case traceevent.Spin:
					if ev.AtMs > float64(10*time.Minute/time.Millisecond) && ev.AtMs <= float64(r.appended/time.Millisecond) {
						idle += ev.EmptyFetches
					}
				case traceevent.Fetch:
					lastFetch = &r.events[i]
				case traceevent.Clear:
					t.Errorf("the cache expired at %v ms", ev.AtMs)
				}
			}
			if idle < tc.minIdle || idle > tc.maxIdle {
				t.Errorf("%d empty fetches in the idle time, want %d to %d", idle, tc.minIdle, tc.maxIdle)
			}
			if lastFetch == nil || lastFetch.Returned != 1 || lastFetch.AtMs != float64(r.appended/time.Millisecond) {
				t.Errorf("the last record's fetch: %+v, want 1 record at %v", lastFetch, r.appended)
			}
		})
	}
}

// 1.3.0's #addPendingOperation only resolves #workerTerminationScheduled: a worker
// waiting on its #nextFetchRetry timer leaves at the end of the timer, and the pending
// operation waits for it. eachMessage, partitions 0 (3 records) and 1 (none), two
// workers, a 7 s retry wait: the second worker waits from 0 s on, at 7 s, 14 s, ...; the
// handler throws on record 1 (served at 40 s) at 80 s, and #messageProcessor's seek back
// runs once both workers left: at 84 s with 1.3.0, at 80 s with 1.6.0, whose waiting
// worker the termination wakes, and with 0.2.0, whose worker looks again every
// millisecond (the model: it waits for a partition, and the termination wakes it).
func TestV130PendingOperationsWaitForTheRetryTimers(t *testing.T) {
	for _, tc := range []struct {
		policy eachbatch.Policy
		seekMs float64
	}{{eachbatch.V1_3_0, 84000}, {eachbatch.V1_6_0, 80000}, {eachbatch.V0_2_0, 80000}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := settings(tc.policy)
			s.Handler, s.Concurrency, s.FailAt, s.RetryWait = eachbatch.EachMessage, 2, []int64{1}, 7*time.Second
			r := runShape(t, s, 3, 0)
			var at []float64
			for _, ev := range r.events {
				if ev.Ev == traceevent.Seek && ev.Reason == "eachMessage threw" {
					at = append(at, ev.AtMs)
				}
			}
			if len(at) != 1 || at[0] != tc.seekMs {
				t.Errorf("the seek back ran at %v ms, want once at %v", at, tc.seekMs)
			}
			if d := r.e.Delivered()[p0]; d[0] != 1 || d[1] != 2 || d[2] != 1 {
				t.Errorf("delivered %v, want 0 once, 1 twice, 2 once", d)
			}
		})
	}
}

// 1.3.0's #batchProcessor seeks a batch it did not resolve back to its first record
// even when the handler seeked the partition (no `!payload._seeked`, 1.3.1): on the
// seed, the handler's seek to 100 at 3m40s (in the batch served at 80 s, with 1.3.0's
// doubling fetches of 1, 1, 2, 2, 4, ...: the batch 6-9) is followed by the seek back to
// the stale batch's first record, and nothing is skipped; 1.6.0 skips to 100 and never
// delivers what lay between.
func TestV130SeeksBackABatchTheHandlerSeeked(t *testing.T) {
	for _, tc := range []struct {
		policy  eachbatch.Policy
		reasons []string
		skipped bool
	}{
		{eachbatch.V1_3_0, []string{"handler seek()", "batch not resolved"}, false},
		{eachbatch.V1_6_0, []string{"handler seek()"}, true},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := settings(tc.policy)
			s.SeekAt, s.SeekTo = 220*time.Second, 100
			r := runSeed(t, s)
			var reasons []string
			for _, ev := range r.events {
				if ev.Ev == traceevent.Seek && (ev.Reason == "handler seek()" || ev.Reason == "batch not resolved") {
					reasons = append(reasons, ev.Reason)
				}
			}
			if len(reasons) != len(tc.reasons) || (len(reasons) > 0 && reasons[0] != tc.reasons[0]) ||
				(len(reasons) > 1 && reasons[1] != tc.reasons[1]) {
				t.Errorf("seeks %v, want %v", reasons, tc.reasons)
			}
			missing := 0
			for o := int64(0); o < 200; o++ {
				if r.delivered2[o] == 0 {
					missing++
				}
			}
			if (missing > 0) != tc.skipped {
				t.Errorf("%d of 0-199 never delivered, want skipped=%v", missing, tc.skipped)
			}
		})
	}
}

// 1.0.0's MessageCache.nextN removes a partition whose batch came back short as it
// serves it: on the seed (20 workers, 1.3.0's doubling fetches of 1, 1, 2, 2, ...) the
// worker serving a short batch holds no partition, another fetches the next records of
// the same partition and serves them at once, and up to ten batches of partition 0 run
// together (0, 1, 2-3, ..., 46-61, 62-93: the first full batch of 32 keeps its
// partition). 1.2.0 and 1.3.0 serve a partition to one worker at a time. Every record
// reaches the handler once either way.
func TestV100ServesOnePartitionToSeveralWorkersAtOnce(t *testing.T) {
	for _, tc := range []struct {
		policy  eachbatch.Policy
		most    int // batches of partition 0 in flight at once
		workers int // workers that served partition 0
	}{
		{eachbatch.V1_0_0, 11, 11},
		{eachbatch.V1_3_0, 1, 2}, // one worker in phase 1, another for the phase-2 record
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			r := runSeed(t, settings(tc.policy))
			inFlight, most := 0, 0
			workers := map[int]bool{}
			for _, ev := range r.events {
				if ev.Partition == nil || *ev.Partition != 0 {
					continue
				}
				switch ev.Ev {
				case traceevent.Serve:
					inFlight++
					most = max(most, inFlight)
					workers[ev.Worker] = true
				case traceevent.BatchEnd:
					inFlight--
				}
			}
			if most != tc.most || len(workers) != tc.workers {
				t.Errorf("%d batches of partition 0 at once, served by %d workers; want %d and %d", most, len(workers), tc.most, tc.workers)
			}
			for o := int64(0); o < 200; o++ {
				if r.delivered2[o] != 1 {
					t.Fatalf("offset %d delivered %d times, want once", o, r.delivered2[o])
				}
			}
		})
	}
}

// 0.x's consume call waits for its first record up to its timeout, and nothing else ends
// it: a pending operation waits for it. Partitions 0 (one record) and 1 (none), two
// workers, eachBatch at 40 s a record, max.poll 30 s, a consume timeout of 50 s: worker
// 1 fetches record 0 at 0 s and works on it until 40 s (its batch came back short: the
// partition is let go, 1.0.0's nextN); worker 2 finds the cache empty and calls consume,
// which waits from 0 s. The cache expires at 30 s; the clear runs when both workers have
// left: worker 1 at 40 s, worker 2 when its call returns empty at 50 s. The releases
// whose consume calls return at once clear at 40 s.
func TestV020PendingOperationsWaitForTheWaitingConsumeCall(t *testing.T) {
	for _, tc := range []struct {
		policy  eachbatch.Policy
		clearMs float64
	}{{eachbatch.V0_2_0, 50000}, {eachbatch.V1_6_0, 40000}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := settings(tc.policy)
			s.Concurrency, s.HandlerParallel, s.MaxPollInterval, s.ConsumeTimeout = 2, 1, 30*time.Second, 50*time.Second
			r := runShapeFor(t, 2*time.Minute, s, 1, 0)
			var at []float64
			for _, ev := range r.events {
				if ev.Ev == traceevent.Clear {
					at = append(at, ev.AtMs)
				}
			}
			if len(at) == 0 || at[0] != tc.clearMs {
				t.Errorf("the clears ran at %v ms, want the first at %v", at, tc.clearMs)
			}
		})
	}
}

// 0.x's worker that found every cached partition taken looks again every millisecond
// (#nextFetchRetry's Timer.withTimeout(1)): once the other worker's batch takes the last
// cached records of the only held partition (removed at once: 1.0.0's short batch),
// nothing is held and the looking worker fetches while that batch is handled. Here, on
// three partitions of 100, worker 1 is idle from 2,080 s; at 2,360 s worker 2 takes
// partition 2's 32-53 (22 records, the last cached); worker 1 fetches 54-85 then and
// serves them at once, not at 2,680 s when worker 2's batch ends (as a wait for a
// partition to become available alone had it).
func TestV020AWorkerLookingForAPartitionFetchesOnceNoneIsHeld(t *testing.T) {
	s := settings(eachbatch.V0_2_0)
	s.Concurrency = 2
	r := runShapeFor(t, 0, s, 100, 100, 100)
	short, served := -1.0, -1.0 // when 32-53 were served; when 54 was
	for _, ev := range r.events {
		if ev.Ev != traceevent.Serve || ev.Partition == nil || *ev.Partition != 2 {
			continue
		}
		if slices.Contains(ev.Offsets, 32) && short < 0 {
			short = ev.AtMs
		}
		if slices.Contains(ev.Offsets, 54) && served < 0 {
			served = ev.AtMs
		}
	}
	if short != 2360000 || served != 2360000 {
		t.Errorf("partition 2's 32 was served at %v ms and its 54 at %v, want both at 2360000", short, served)
	}
}

// 0.x's consume call of an empty queue waits for a record up to its timeout: a wake
// from the source that brings nothing to take (here a transaction marker alone, at 10 s)
// does not end it empty, which would move the expiry clock (#lastFetchClockNs). It
// returns with the record appended at 20 s.
func TestV020AWaitingConsumeCallWaitsOnWhenTheArrivalHoldsNoRecord(t *testing.T) {
	l := loop.NewVirtual(time.Unix(0, 0))
	var events []traceevent.Event
	tr := func(ev traceevent.Event) { events = append(events, ev) }
	sim := simkafka.New(l, 5*time.Second, tr)
	tp := kpart.TopicPartition{Topic: "stranded", Partition: 0}
	sim.Assign(tp)
	s := settings(eachbatch.V0_2_0)
	s.Concurrency, s.ConsumeTimeout = 1, 50*time.Second
	e, err := eachbatch.New(l, sim, s, tr)
	if err != nil {
		t.Fatal(err)
	}
	sim.OnNonEmpty = e.NotifyNonEmpty
	l.Post(e.Start)
	l.After(10*time.Second, func() { sim.Append(tp, simkafka.Control) })
	l.After(20*time.Second, func() { sim.Transaction(tp, 1) })
	end := false
	l.After(30*time.Second, func() { end = true })
	if err := l.Run(context.Background(), func() bool { return end }); err != nil {
		t.Fatal(err)
	}
	fetchedAt := -1.0
	for _, ev := range events {
		if ev.Ev == traceevent.Spin && ev.EmptyFetches > 0 {
			t.Errorf("a consume call returned empty by %v ms", ev.AtMs)
		}
		if ev.Ev == traceevent.Fetch && fetchedAt < 0 {
			fetchedAt = ev.AtMs
		}
	}
	if fetchedAt != 20000 {
		t.Errorf("the first fetch returned at %v ms, want 20000 (the record's arrival)", fetchedAt)
	}
}
