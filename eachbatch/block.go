package eachbatch

import "github.com/kstranded/kstranded/internal/loop"

// 0.x's wait for records (policy V0_2_0: releases 0.2.0, 0.2.1 and 0.3.0), from
// lib/kafkajs/_consumer.js and lib/kafka-consumer.js of 0.2.1 and src/workers.cc of
// its addon.
//
//   - #fetchAndResolveWith (848-889) calls consume(size, cb) with node-rdkafka's default
//     consume timeout, 1000 ms (lib/kafka-consumer.js 22, 144, 464: 1.0.0 added the
//     setDefaultConsumeTimeout(0) that makes later releases return at once), and
//     #readyCb (626) sets timeout-only-for-first-message: KafkaConsumerConsumeNum
//     (src/workers.cc 820-875) waits up to the timeout for the first record, then 1 ms
//     for each of the rest. So a consume call of an empty queue returns when records
//     arrive, or empty after 1 s. #fetchInProgress is set the whole time: other workers
//     that want to fetch await it.
//   - #lastFetchClockNs and the expiry loop's restart move when the call returns, as in
//     every release: a cache can expire while a call waits, and the pending operation
//     then waits for the call to return (the workers' termination does not end it).
//   - #nextFetchRetry (1266-1275) awaits the fetch in progress, or 1 ms
//     (Timer.withTimeout(1)): there is no queue-non-empty callback and no #nonEmpty.
//     A worker that finds every cached partition taken looks again every millisecond;
//     the model has it wait for a partition to become available (the wait of 1.3.1 and
//     later, availWaiters) or for no partition to be held (Engine.released: a short
//     batch removed the last held one), which it sees within that millisecond.
//
// The model's consume calls return at once (Source.Consume). A call that returns
// nothing here is the start of a wait: the worker keeps #fetchInProgress until the
// source says records arrived (NotifyNonEmpty), a look every MinWake finds records (a
// live source has no arrival callback), or ConsumeTimeout passes; then the call is made
// again and its result is the fetch's. A rebalance the source serves meanwhile (from
// inside the call, as librdkafka does) does not end the wait: node-rdkafka's
// KafkaConsumerConsumeNum goes on waiting for a record, so the assignment's first
// record comes back to the worker of the generation before it, which handles it before
// the next generation spawns (the real 0.2.x logs "Spawning 1 workers", a fetch, the
// record delivered, then "Spawning 2 workers").

// blockedConsume is a consume call waiting for its first record.
type blockedConsume struct {
	w       *worker
	size    int
	timeout *loop.Timer // ConsumeTimeout after the call started
	look    *loop.Timer // the next look at the source, every MinWake
}

// fetchBlocking is 0.x's #fetchAndResolveWith.
func (e *Engine) fetchBlocking(w *worker) {
	size, ok := e.startFetch(w) // in progress: return null, then #nextFetchRetry awaits it
	if !ok {
		return
	}
	recs, err := e.consume(size)
	if consumeReturns(recs, err) {
		e.endBlocking(w, size, recs, err)
		return
	}
	w.waiting = true
	b := &blockedConsume{w: w, size: size}
	e.blocked = b
	b.timeout = e.l.After(e.s.consumeTimeout(), func() {
		b.timeout = nil
		e.unblock()
	})
	e.lookAgain(b)
}

// lookAgain arms the blocked call's next look at the source.
func (e *Engine) lookAgain(b *blockedConsume) {
	b.look = e.l.After(e.s.MinWake, func() {
		b.look = nil
		if e.blocked != b {
			return
		}
		if !e.look(b) {
			e.lookAgain(b)
		}
	})
}

// consumeReturns reports whether a waiting consume call returns with what the source
// gave: records or an error (else it waits on).
func consumeReturns(recs []Record, err error) bool {
	return len(recs) > 0 || err != nil
}

// look looks at the source for the blocked call b and ends it when the call returns
// (consumeReturns); it reports whether it did.
func (e *Engine) look(b *blockedConsume) bool {
	recs, err := e.readBlocked(b.size)
	if !consumeReturns(recs, err) {
		return false
	}
	e.stopBlock(b)
	e.endBlocking(b.w, b.size, recs, err)
	return true
}

// arrived is the source's word that records arrived (NotifyNonEmpty): the blocked call
// looks at once. Nothing to take (records of a partition it does not read, markers
// alone), it waits on: the real call waits for a record up to its timeout.
func (e *Engine) arrived() {
	if b := e.blocked; b != nil {
		e.look(b)
	}
}

// unblock ends the blocked call: it consumes what is there now (records that arrived,
// a rebalance to serve, or nothing at its timeout).
func (e *Engine) unblock() {
	b := e.blocked
	if b == nil {
		return
	}
	e.stopBlock(b)
	recs, err := e.readBlocked(b.size)
	e.endBlocking(b.w, b.size, recs, err)
}

// readBlocked is the blocked call's read of the source. While a revoke's #unassign waits
// (revokePending) librdkafka holds every partition paused, and the #unassign waits for
// this call: it reads nothing (the model's source does not pause at a rebalance).
func (e *Engine) readBlocked(size int) ([]Record, error) {
	if e.revokePending() {
		return nil, nil
	}
	return e.consume(size)
}

func (e *Engine) stopBlock(b *blockedConsume) {
	e.blocked = nil
	if b.timeout != nil {
		b.timeout.Stop()
		b.timeout = nil
	}
	if b.look != nil {
		b.look.Stop()
		b.look = nil
	}
}

// endBlocking is #fetchAndResolveWith once the consume call returned: the fetch's
// bookkeeping, then endFetch (empty, the fetcher's next turn is #nextFetchRetry).
func (e *Engine) endBlocking(w *worker, size int, recs []Record, err error) {
	got, p, err := e.afterConsume(size, recs, err)
	if len(recs) == 0 {
		e.maybeFlushSpin()
	}
	e.endFetch(w, got, p, err)
}
