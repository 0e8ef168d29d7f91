package eachbatch

import "time"

// 1.3.0's wait for records (policies V1_3_0: releases 1.2.0 and 1.3.0, and V1_0_0: 1.0.0), from
// lib/kafkajs/_consumer.js of 1.3.0. 1.3.1 replaced all of it with the #nonEmpty wait,
// the valve of #cacheExpirationLoop and MessageCache.availablePartitions, which the rest
// of the engine runs.
//
//   - #consumeCachedN / #consumeSingleCached (996-1013 / 969-988): a worker that finds
//     nothing to take while some partition is assigned to a worker returns null, and so
//     does #fetchAndResolveWith (923-960) while a fetch is in progress; otherwise it
//     fetches, whatever the last fetch returned (there is no #nonEmpty).
//   - #worker (1394-1421): on null, #nextFetchRetry (1357-1379): await the fetch in
//     progress if there is one, else a timer of the worker's own,
//     Timer.withTimeout(1000, waiter), ended early only by #queueNonEmptyCb (1351-1355),
//     which resolves every waiter. Neither a partition becoming available nor the
//     termination of the workers (#addPendingOperation 1663-1668) wakes it.
//
// Workers that reach the fetch at once (a new generation, the same timer instant, the
// queue-non-empty callback) take turns at it: the first fetches, the others await its
// #fetchInProgress; when it returns empty, the first of them fetches again before the
// fetcher looks, and the fetcher awaits that fetch. While the fetches come back empty
// this never stops: the real 1.3.0 asked librdkafka for 1 record 216,152 times in the
// seed's last seconds (FIDELITY.md). Each of those fetches restarts the expiry clock
// (#lastFetchClockNs) and leaves the fetch size at 1 (#decreaseMaxSize(0)), and records
// that arrive are fetched by the next one.
//
// On a virtual clock a fetch takes no time (ConsumeTime 0), so stepping that loop fetch
// by fetch never ends. The model bounds it: the workers taking turns fetch once every
// MinWake (the expiry loop's 100 ms floor), and at once when the source says records
// arrived (NotifyNonEmpty, librdkafka's queue-non-empty callback). What that changes
// against the real loop: the expiry clock is at most MinWake old instead of about a
// fetch's duration, and the spin event counts a fetch per MinWake instead of one per
// consume call (tens of thousands a second). Live there is no arrival callback
// (repro/source.go): records are fetched at the next MinWake tick. With ConsumeTime > 0
// the loop is stepped as it is: one fetch every ConsumeTime.

// fetchOrRetry is 1.3.0's fetcher past an empty cache read: a fetch, or null and
// #nextFetchRetry.
func (e *Engine) fetchOrRetry(w *worker) {
	if e.cache.assignedSize() != 0 || e.fetching || e.fetchOpen || e.spinning {
		e.nextFetchRetry(w)
		return
	}
	if e.s.ConsumeTime > 0 {
		e.fetchAsync(w)
		return
	}
	recs, p, err := e.fetch()
	if recs == nil {
		// The JS consume call returns in a callback: workers that reach the fetch in the
		// same instant find it in progress and await it (closeFetch decides what follows).
		_ = err // logged by the client ("Consumer encountered error while consuming"); the fetch returned nothing
		e.fetchOpen, e.openFetcher = true, w
		w.waiting = true
		e.l.After(0, e.closeFetch)
		return
	}
	e.took(w, recs, p)
}

// closeFetch ends an empty fetch's instant. Alone, the fetcher waits on its timer; with
// workers that awaited its fetch, the first of them fetches again before the fetcher
// looks, and the workers take turns fetching (startSpin).
func (e *Engine) closeFetch() {
	f, ws := e.openFetcher, e.openWaits
	e.fetchOpen, e.openFetcher, e.openWaits = false, nil, nil
	if f.done || f.gen != e.gen {
		return
	}
	f.waiting = false
	if e.terminating {
		// the waiters see the termination at the top of their loop; the fetcher first
		// looks at the pending operations (#discardMessages of nothing, then break)
		for _, o := range ws {
			o := o
			e.l.Post(func() { e.step(o) })
		}
		e.afterEmptyFetch(f)
		return
	}
	if len(ws) == 0 {
		e.nextFetchRetry(f)
		return
	}
	e.spinning = true
	e.spinners = append(ws, f)
	for _, o := range e.spinners {
		o.waiting = true
	}
	e.spinTimer = e.l.After(e.s.MinWake, e.spinFetch)
}

// afterEmptyFetch is the rest of 1.3.0's #worker loop once the fetcher returned null:
// `if (this.#pendingOperations.length) { #discardMessages; break; }`, then
// `if (!ms) await this.#nextFetchRetry()`.
func (e *Engine) afterEmptyFetch(w *worker) {
	if w.done || w.gen != e.gen {
		return
	}
	w.waiting = false
	if len(e.pendingOps) > 0 {
		e.flushWake()
		e.exitWorker(w)
		return
	}
	e.nextFetchRetry(w)
}

// nextFetchRetry is 1.3.0's #nextFetchRetry: await the fetch in progress, or wait on a
// timer of the worker's own (RetryWait) that only the queue-non-empty callback ends
// early. Then the worker goes round its loop again.
func (e *Engine) nextFetchRetry(w *worker) {
	w.waiting = true
	switch {
	case e.fetching:
		e.fetchWaits = append(e.fetchWaits, w)
	case e.fetchOpen:
		e.openWaits = append(e.openWaits, w)
	case e.spinning:
		e.spinners = append(e.spinners, w)
	default:
		e.maybeFlushSpin()
		e.queueWaiters = append(e.queueWaiters, w)
		w.timer = e.l.After(e.s.retryWait(), func() {
			w.timer = nil
			e.dropQueueWaiter(w)
			e.step(w)
		})
	}
}

func (e *Engine) dropQueueWaiter(w *worker) {
	for i, o := range e.queueWaiters {
		if o == w {
			e.queueWaiters = append(e.queueWaiters[:i:i], e.queueWaiters[i+1:]...)
			return
		}
	}
}

// spinFetch is one fetch of the workers taking turns (see the file comment for the
// bound): the first fetches; empty, it goes last and the next fetches later; with
// records, it takes its batch and the others go round their loops (they find a
// partition, or wait on their timers).
func (e *Engine) spinFetch() {
	if e.spinTimer != nil {
		e.spinTimer.Stop()
		e.spinTimer = nil
	}
	if !e.spinning {
		return
	}
	if e.terminating {
		e.endSpin()
		return
	}
	w := e.spinners[0]
	recs, p, _ := e.fetch()
	if recs == nil {
		if e.terminating {
			// the consume call served a rebalance that queued an operation or changed the
			// number of workers
			e.endSpin()
			return
		}
		e.spinners = append(e.spinners[1:], w)
		e.maybeFlushSpin()
		e.spinTimer = e.l.After(e.s.MinWake, e.spinFetch)
		return
	}
	others := e.spinners[1:]
	e.spinning, e.spinners = false, nil
	for _, o := range others {
		o := o
		e.l.Post(func() { e.step(o) })
	}
	w.waiting = false
	e.took(w, recs, p)
}

// endSpin stops the workers taking turns: each goes round its loop (and, terminating,
// leaves it).
func (e *Engine) endSpin() {
	if e.spinTimer != nil {
		e.spinTimer.Stop()
		e.spinTimer = nil
	}
	ws := e.spinners
	e.spinning, e.spinners = false, nil
	for _, o := range ws {
		o := o
		e.l.Post(func() { e.step(o) })
	}
}

// queueNonEmpty is 1.3.0's #queueNonEmptyCb: every worker on its #nextFetchRetry timer
// wakes; the workers taking turns fetch now (the bound's arrival fetch), after the woken
// ones have joined them.
func (e *Engine) queueNonEmpty() {
	ws := e.queueWaiters
	e.queueWaiters = nil
	for _, w := range ws {
		if w.timer != nil {
			w.timer.Stop()
			w.timer = nil
		}
		w := w
		e.l.Post(func() { e.step(w) })
	}
	if e.spinning {
		e.l.Post(e.spinFetch)
	}
}

// maybeFlushSpin writes the spin counters at most once per valve period (as the valve
// does for the later releases).
func (e *Engine) maybeFlushSpin() {
	if e.l.Now().Sub(e.lastSpinFlush) >= max(e.s.FetchValve, time.Second) {
		e.flushSpin()
	}
}
