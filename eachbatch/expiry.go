package eachbatch

import (
	"slices"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

// The cache expiry and the clear: where the eachBatch loss happens. The JS members
// modeled here are #cacheExpirationLoop (the loop that wakes fetchers every
// second and, once max.poll.interval.ms has passed since the last fetch, queues
// #clearCacheAndResetPositions with #addPendingOperation and breaks),
// #maxPollIntervalRestart (a fetch restarts the loop's wait),
// #checkMaxPollIntervalNotExceeded (batches still running past twice the interval become
// stale), #clearCacheAndResetPositions (MessageCache.clear, then a rewind per partition
// under each version's rule: the defect is its `if (!this.#lastConsumedOffsets.has(key))
// continue;`) and #seekInternal, all in lib/kafkajs/_consumer.js of
// confluent-kafka-javascript 1.10.0 and 1.10.1.

// armExpiry (re)starts #cacheExpirationLoop's wait.
// One timer serves every arming (Reset cancels a pending run), which orders like a
// new timer made at each.
func (e *Engine) armExpiry(d time.Duration) {
	if e.expiryTimer == nil {
		e.expiryTimer = e.l.NewTimer(func() {
			if e.expiryGen == e.gen {
				e.expiryTick()
			}
		})
	}
	e.expiryGen = e.gen
	e.expiryTimer.Reset(d)
}

// restartExpiry is #maxPollIntervalRestart.resolve(): the expiry loop re-evaluates now.
func (e *Engine) restartExpiry() {
	if e.expiryTimer.Pending() {
		e.armExpiry(0)
	}
}

// expiryTick is one turn of #cacheExpirationLoop.
func (e *Engine) expiryTick() {
	if e.terminating {
		return
	}
	now := e.l.Now()
	cacheExp := e.lastFetch.Add(e.s.MaxPollInterval)
	maxFetch := e.lastFetch.Add(e.s.FetchValve)
	// The JS compares hrtime `now > timeout`; a timer never fires early and hrtime has
	// moved on by the time it is read, so at the deadline the comparison holds.
	if !now.Before(cacheExp) {
		ev := traceevent.Event{Ev: traceevent.Expiry,
			SinceFetchMs: traceevent.P(ms(now.Sub(e.lastFetch))),
			TimeoutMs:    traceevent.P(ms(e.s.MaxPollInterval))}
		if !e.lastServe.IsZero() {
			ev.SinceServeMs = traceevent.P(ms(now.Sub(e.lastServe)))
		}
		e.emit(ev)
		e.addPendingOp(pendingOp{name: "clearCacheAndResetPositions", run: e.clear})
		// #checkMaxPollIntervalNotExceeded: a batch still running at
		// lastFetch + expiry + max.poll.interval becomes stale.
		deadline := e.lastFetch.Add(2 * e.s.MaxPollInterval)
		wait := deadline.Sub(now)
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		if e.maxPollTimer == nil {
			e.maxPollTimer = e.l.NewTimer(e.maxPollExceeded)
		}
		e.maxPollGen = e.gen
		e.maxPollTimer.Reset(wait)
		return
	}
	valve := e.s.Policy.valve() // 1.3.0's and 0.x's loops have no valve: they sleep until the expiry
	if valve && !now.Before(maxFetch) {
		if e.coalesceIdle(now, cacheExp) {
			return
		}
		// The valve: keep fetching even when nothing arrives.
		if now.Sub(e.lastSpinFlush) >= max(e.s.FetchValve, time.Second) {
			e.flushSpin()
		}
		e.notifyNonEmpty(WakeValve)
	}
	awake := cacheExp
	if valve && maxFetch.Before(awake) {
		awake = maxFetch
	}
	wait := awake.Sub(now)
	if wait < e.s.MinWake {
		wait = e.s.MinWake
	}
	e.armExpiry(wait)
}

// maxPollExceeded is #checkMaxPollIntervalNotExceeded at its deadline: a batch still
// running becomes stale.
func (e *Engine) maxPollExceeded() {
	if e.maxPollGen != e.gen {
		return
	}
	for _, b := range e.inflight {
		b.stale = true
	}
}

// clear is #clearCacheAndResetPositions under the engine's policy.
func (e *Engine) clear() {
	contents := e.cache.contents()
	ev := traceevent.Event{Ev: traceevent.Clear, LastConsumedKeys: []string{}}
	keys := make([]kpart.TopicPartition, 0, len(contents))
	for tp := range contents {
		keys = append(keys, tp)
	}
	kpart.Sort(keys)
	for _, tp := range keys {
		ev.Discarded = append(ev.Discarded, ranges(contents[tp])...)
	}
	lc := make([]kpart.TopicPartition, 0, len(e.lastConsumed))
	for tp := range e.lastConsumed {
		lc = append(lc, tp)
	}
	kpart.Sort(lc)
	for _, tp := range lc {
		ev.LastConsumedKeys = append(ev.LastConsumedKeys, tp.String())
	}
	e.cache.clear()
	if e.s.Policy.oldFetch() {
		e.cacheMaxSize, e.increaseCount = 1, 0 // 1.6.0's clear resets the fetch size (314-315)
	}
	assigned := e.src.Assignment()
	kpart.Sort(assigned)
	type seek struct {
		tp     kpart.TopicPartition
		offset int64
		epoch  int32
		reason string
	}
	var seeks []seek
	for _, tp := range assigned {
		last, has := e.lastConsumed[tp]
		switch {
		case has && e.s.Policy.rewindsToEntry():
			seeks = append(seeks, seek{tp, last.offset, last.leaderEpoch, "last-consumed"})
		case has:
			seeks = append(seeks, seek{tp, last.offset + 1, last.leaderEpoch, "last-consumed+1"})
		case e.s.Policy == Head && len(contents[tp]) > 0:
			h := contents[tp][0]
			seeks = append(seeks, seek{tp, h.Offset, h.LeaderEpoch, "pending head"})
		default:
			ev.Skipped = append(ev.Skipped, traceevent.Rewind{Partition: tp.Partition, Reason: "no last-consumed entry"})
		}
	}
	for _, s := range seeks {
		ev.Rewinds = append(ev.Rewinds, traceevent.Rewind{Partition: s.tp.Partition, Offset: s.offset, Reason: s.reason})
	}
	e.emit(ev)
	// Records dropped with no rewind at or below them are lost to this consumer.
	if e.OnDiscard != nil {
		var dropped []Record
		for _, tp := range keys {
			rewound := false
			for _, s := range seeks {
				if s.tp == tp && s.offset <= contents[tp][0].Offset {
					rewound = true
				}
			}
			if !rewound {
				dropped = append(dropped, contents[tp]...)
			}
		}
		if len(dropped) > 0 {
			e.OnDiscard(dropped)
		}
	}
	for _, s := range seeks {
		e.seekInternal(s.tp, s.offset, s.epoch, s.reason)
	}
}

// handlerSeek is the reason of the handler's own seek() calls.
const handlerSeek = "handler seek()"

// seekInternal is #seekInternal: forget last-consumed, drop the partition's cache,
// seek librdkafka, and, in auto-commit mode, commit the offset sought.
func (e *Engine) seekInternal(tp kpart.TopicPartition, offset int64, epoch int32, reason string) {
	if reason == handlerSeek && !slices.Contains(e.src.Assignment(), tp) {
		// #pendingSeeks (1813 / 1822): applied if the partition is assigned later; not
		// modelled. Only the handler's seek() can name a partition not assigned here.
		e.emit(traceevent.Event{Ev: traceevent.Seek, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Offset: traceevent.P(offset),
			Reason: reason + ": not assigned, kept as a pending seek (not modelled)"})
		return
	}
	delete(e.lastConsumed, tp)
	e.cache.markStale([]kpart.TopicPartition{tp})
	if err := e.src.Seek(tp, offset, epoch); err != nil {
		e.Errors = append(e.Errors, err)
	}
	e.emit(traceevent.Event{Ev: traceevent.Seek, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Offset: traceevent.P(offset), Reason: reason})
	if e.OnSeek != nil {
		e.OnSeek(tp, offset)
	}
	if !e.s.CommitOnSeek {
		return
	}
	if err := e.src.Commit(map[kpart.TopicPartition]int64{tp: offset}); err != nil {
		e.Errors = append(e.Errors, err)
	}
}

// coalesceIdle runs, in one go, the valve ticks of a stretch of virtual time that is
// provably idle, instead of stepping through each: every worker is serving a batch or
// waiting for a partition to become available, no partition is available, at least one
// is held by a busy worker, nobody waits for the queue to fill, nothing else is queued
// on the loop, and no other timer falls before the tick. Then each tick (every MinWake,
// #cacheExpirationLoop's floor, since the last fetch is more than FetchValve old) only
// wakes the waiting workers, which find no partition (MessageCache.nextN returns null)
// and wait again in the same order: the sole effects are the empty-read counter and
// the spin events flushed at most once per valve period, which are kept exactly. The
// stretch ends before the cache expires or another timer is due (a batch ends, an
// auto-commit), where the loop takes over again with the expiry timer where stepping
// would have left it.
//
// Only on a virtual clock: on the wall clock the ticks are real sleeps anyway.
func (e *Engine) coalesceIdle(now, cacheExp time.Time) bool {
	if e.s.StepIdle || !e.l.Virtual() || e.terminating || len(e.pendingOps) > 0 || len(e.nonEmptyWaits) > 0 ||
		len(e.cache.available) > 0 || e.cache.assignedSize() == 0 {
		return false
	}
	waiting := 0
	for _, w := range e.workers {
		if w.done {
			continue
		}
		// A worker neither done nor waiting is serving a batch or backing off: either
		// way a timer of its own bounds the stretch (a queued step makes the loop busy).
		if w.waiting {
			if w.ppc != nil {
				return false
			}
			waiting++
		}
	}
	if waiting != len(e.availWaiters) || waiting == 0 {
		return false
	}
	next, ok, idle := e.l.Idle()
	if !idle {
		return false
	}
	limit := cacheExp
	if ok && next.Before(limit) {
		limit = next
	}
	e.countIdleTicks(now, limit, waiting)
	return true
}

// countIdleTicks runs the ticks of an idle stretch from now to limit and arms the
// expiry timer at the first tick at or past limit.
func (e *Engine) countIdleTicks(now, limit time.Time, waiting int) {
	// The ticks are now + k*MinWake for k in [0, ticks): the first at or past limit
	// ends the stretch. Each adds the waiting workers to the empty reads; a tick at
	// least flushEvery after the last flush first flushes the counters. The ticks
	// between flushes are counted, not stepped through (coalesceIdleStepped is the
	// tick-by-tick reference the tests compare this with).
	flushEvery := max(e.s.FetchValve, time.Second)
	ticks := int64(1)
	if d := limit.Sub(now); d > 0 {
		ticks = ceilDiv(int64(d), int64(e.s.MinWake))
	}
	for k := int64(0); k < ticks; {
		t := now.Add(time.Duration(k) * e.s.MinWake)
		if t.Sub(e.lastSpinFlush) >= flushEvery {
			e.flushSpinAt(t)
			if !e.tracing && e.lastSpinFlush.Equal(t) {
				// With no trace a flush only resets the counters: from a flush at k,
				// one falls every period ticks (waiting > 0, so none is a no-op), and
				// only the last before the end of the stretch leaves a trace in the
				// state (its time, and the counters it reset).
				period := ceilDiv(int64(flushEvery), int64(e.s.MinWake))
				if m := (ticks - 1 - k) / period; m > 0 {
					k += m * period
					t = now.Add(time.Duration(k) * e.s.MinWake)
					e.emptyReads, e.emptyFetches, e.lastSpinFlush = 0, 0, t
				}
			}
		}
		// The next tick that flushes: the first at least flushEvery after the last
		// flush (the next one when the last flush is unknown or was a no-op).
		next := k + 1
		if !e.lastSpinFlush.IsZero() {
			if d := e.lastSpinFlush.Sub(now) + flushEvery; d > 0 {
				next = max(next, ceilDiv(int64(d), int64(e.s.MinWake)))
			}
		}
		next = min(next, ticks)
		e.emptyReads += waiting * int(next-k)
		k = next
	}
	e.armExpiry(time.Duration(ticks) * e.s.MinWake)
}

// coalesceIdleStepped is the stretch of coalesceIdle stepped tick by tick, as the
// engine ran it before the ticks were counted: the reference of the tests.
func (e *Engine) coalesceIdleStepped(now, limit time.Time, waiting int) {
	flushEvery := max(e.s.FetchValve, time.Second)
	t := now
	for {
		if t.Sub(e.lastSpinFlush) >= flushEvery {
			e.flushSpinAt(t)
		}
		e.emptyReads += waiting
		t = t.Add(e.s.MinWake)
		if !t.Before(limit) {
			break
		}
	}
	e.armExpiry(t.Sub(now))
}

// ceilDiv is a/b rounded up, for a >= 0 and b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
