package eachbatch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

type lastConsumed struct {
	offset      int64
	leaderEpoch int32
}

type batch struct {
	tp           kpart.TopicPartition
	recs         []Record
	stale        bool
	seeked       bool
	lastResolved int64
	lastEpoch    int32 // leader epoch passed with lastResolved
	done         int   // records the handler finished (rounds completed)
	threw        bool  // the handler threw (FailAt)
}

type worker struct {
	id      int
	ppc     *ppc
	gen     int
	done    bool
	waiting bool
	timer   *loop.Timer // 1.3.0's #nextFetchRetry timer (V1_3_0)
	// stepFn is step(w), made once: every wake-up of the worker posts it (a closure
	// a post was most of the engine's allocations; issue 25)
	stepFn func()
}

// Engine is the modeled consumer. All methods must be called on its loop.
type Engine struct {
	l     *loop.Loop
	src   Source
	s     Settings
	trace func(traceevent.Event)
	// tracing is false when New was given no trace: events whose building allocates
	// (offsets, ranges, pointers) are then not built at all (issue 25).
	tracing bool

	cache          *cache
	workers        []*worker
	gen            int
	nextWorkerID   int
	terminating    bool // #workerTerminationScheduled resolved
	pendingOps     []pendingOp
	nonEmpty       bool // #nonEmpty is set: fetchers wait for the queue to fill
	availWaiters   []*worker
	nonEmptyWaits  []*worker
	lastFetch      time.Time
	lastServe      time.Time
	lastFetchedCnt int
	lastFetchedCon int
	cacheMaxSize   int
	batchesSize    int // #maxBatchesSize
	lastConsumed   map[kpart.TopicPartition]lastConsumed
	inflight       map[kpart.TopicPartition]*batch
	busy           int         // batches and messages the handler is working on (1.0.0 can run two of one partition)
	expiryTimer    *loop.Timer // #cacheExpirationLoop's wait: one timer, re-armed (armExpiry)
	expiryGen      int         // the generation the expiry timer was armed in
	maxPollTimer   *loop.Timer // #checkMaxPollIntervalNotExceeded's deadline, re-armed likewise
	maxPollGen     int
	newGenFn       func() // newGeneration, made once
	terminateFn    func() // notifyNonEmpty(WakeTermination), made once
	lastFetchEmpty bool
	fetching       bool            // #fetchInProgress (ConsumeTime > 0, and V0_2_0's waiting consume call)
	fetchWaits     []*worker       // workers awaiting #fetchInProgress
	blocked        *blockedConsume // 0.x's consume call waiting for its first record (V0_2_0, block.go)

	// 1.3.0's wait for records (V1_3_0, retry.go)
	queueWaiters   []*worker // #queueWaiters: on their #nextFetchRetry timers
	fetchOpen      bool      // an empty fetch's #fetchInProgress, until the instant's other workers have looked
	openFetcher    *worker
	openWaits      []*worker
	spinning       bool      // workers take turns fetching without pause
	spinners       []*worker // the next to fetch first
	spinTimer      *loop.Timer
	stopping       bool
	running        bool
	rebalanced     bool // the consume call in progress served a rebalance event
	consumeLooping bool // 1.7.0's consume(0) started the client's consume loop (consumeLoop)
	increaseCount  int  // 1.6.0's #increaseCount

	// pause/resume from the handler's payload (Settings.PauseAt)
	started   time.Time
	pauseDone bool                          // the handler called pause()
	seeks     []HandlerSeek                 // the handler's seek() calls still to make (Settings.SeekAt, Seeks), in order
	paused    map[kpart.TopicPartition]bool // paused and not resumed yet (pending operations included)

	// woken is a #nonEmpty wait that ended and whose wake event waits for the result
	// of the consume call that follows (see notifyNonEmpty).
	woken *traceevent.Event

	emptyReads, emptyFetches int
	lastSpinFlush            time.Time // spin counters reach the trace at most once per valve period

	delivered map[kpart.TopicPartition]*kpart.Counts
	stored    map[kpart.TopicPartition]int64
	committed map[kpart.TopicPartition]int64          // ManualCommit to a Source that is no StoredCommitter
	failAt    map[int64]bool                          // Settings.FailAt
	failed    map[kpart.TopicPartition]map[int64]bool // FailAt offsets that already threw
	// OnBatchEnd, when set, is told of every batch the handler finished, with the
	// records it resolved.
	OnBatchEnd func(recs []Record, resolved bool)
	// OnDiscard, when set, is told of records dropped from the cache without a rewind
	// past them.
	OnDiscard func(recs []Record)
	// OnFetch, when set, is told of every fetch result.
	OnFetch func(recs []Record)
	// OnSeek, when set, is told of every seek the client makes.
	OnSeek func(tp kpart.TopicPartition, offset int64)
	// Errors collects source errors (the JS client logs them and retries).
	Errors []error
}

// New returns an engine. trace may be nil.
func New(l *loop.Loop, src Source, s Settings, trace func(traceevent.Event)) (*Engine, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	tracing := trace != nil
	if trace == nil {
		trace = func(traceevent.Event) {}
	}
	e := &Engine{
		l: l, src: src, s: s, trace: trace, tracing: tracing,
		cache:        newCache(),
		cacheMaxSize: 1, // #messageCacheMaxSize starts at 1
		lastConsumed: map[kpart.TopicPartition]lastConsumed{},
		inflight:     map[kpart.TopicPartition]*batch{},
		delivered:    map[kpart.TopicPartition]*kpart.Counts{},
		stored:       map[kpart.TopicPartition]int64{},
		failAt:       map[int64]bool{},
		failed:       map[kpart.TopicPartition]map[int64]bool{},
	}
	for _, o := range s.FailAt {
		e.failAt[o] = true
	}
	e.cache.releaseShort = s.Policy.releasesShort()
	if s.SeekAt > 0 {
		e.seeks = append(e.seeks, HandlerSeek{At: s.SeekAt, Partition: -1, Offset: s.SeekTo})
	}
	e.seeks = append(e.seeks, s.Seeks...)
	if s.Handler == "" {
		e.s.Handler = EachBatch
	}
	if s.ExplicitCommit && !e.s.EachMessage() {
		// the eachBatch handler of ExplicitCommit is ManualCommit's but for its last
		// statement (commitBatch)
		e.s.ManualCommit = true
	}
	if s.Policy.oldFetch() && s.BatchSize != oldBatchSize {
		// 1.6.0 and earlier: `const maxBatchSize = 32` in #runInternal, whatever the
		// application asks (the property reaches librdkafka, which does not know it).
		// eachMessage takes one record at a time (#consumeSingleCached): no batch to size,
		// nothing to say; -1 does not unbind its cache either.
		if !e.s.EachMessage() {
			e.Errors = append(e.Errors, fmt.Errorf("client %s has no js.consumer.max.batch.size: eachBatch gets batches of %d, not %d", s.Policy, oldBatchSize, s.BatchSize))
		}
		e.s.BatchSize = oldBatchSize
		s.BatchSize = oldBatchSize
	}
	if s.BatchSize == -1 {
		// js.consumer.max.batch.size -1 makes #messageCacheMaxSize unbounded for either
		// handler (#finalizedConfig).
		e.cacheMaxSize = int(^uint(0) >> 1)
	}
	// #maxBatchesSize (#runInternal): maxBatchSize * concurrency for eachBatch with a
	// positive batch size, 1 * concurrency otherwise (eachMessage, or unbounded).
	e.batchesSize = s.BatchSize * s.Concurrency
	if s.BatchSize <= 0 || e.s.EachMessage() {
		e.batchesSize = s.Concurrency
	}
	return e, nil
}

func (e *Engine) emit(ev traceevent.Event) { e.emitAt(ev, e.l.Now()) }

func (e *Engine) emitAt(ev traceevent.Event, t time.Time) {
	ev.Time = t.UTC()
	ev.AtMs = float64(t.Sub(e.l.Start())) / float64(time.Millisecond)
	e.trace(ev)
}

// Start begins consuming (#runInternal's first generation).
func (e *Engine) Start() {
	if e.running {
		return
	}
	e.running = true
	e.started = e.l.Now()
	if e.s.PauseOutside && e.s.PauseAt > 0 {
		e.l.Schedule(e.s.PauseAt, e.pauseOutside)
	}
	e.newGeneration()
}

// Stop schedules worker termination; batches in flight finish (the JS disconnect path).
func (e *Engine) Stop() {
	e.stopping = true
	e.scheduleTermination()
}

// Stopped reports whether every worker has exited after Stop.
func (e *Engine) Stopped() bool {
	if !e.stopping {
		return false
	}
	for _, w := range e.workers {
		if !w.done {
			return false
		}
	}
	return true
}

// newGeneration is one iteration of #runInternal's while loop.
func (e *Engine) newGeneration() {
	if e.stopping {
		return
	}
	e.gen++
	e.terminating = false
	e.lastFetch = e.l.Now()
	e.lastFetchedCnt, e.lastFetchedCon = 0, 0
	if len(e.pendingOps) > 0 {
		e.runPendingOps()
		return
	}
	n := len(e.src.Assignment())
	if n > e.s.Concurrency {
		n = e.s.Concurrency
	}
	if n < 1 {
		n = 1
	}
	e.workers = e.workers[:0]
	for i := 0; i < n; i++ {
		e.nextWorkerID++
		w := &worker{id: e.nextWorkerID, gen: e.gen}
		w.stepFn = func() { e.step(w) }
		e.workers = append(e.workers, w)
		e.l.Post(w.stepFn)
	}
	e.emit(traceevent.Event{Ev: traceevent.Spawn, N: n})
	e.armExpiry(0)
}

// step is one turn of #worker's loop: fetcher(ppc), then process or return.
func (e *Engine) step(w *worker) {
	if w.done || w.gen != e.gen {
		return
	}
	w.waiting = false
	if e.terminating {
		e.flushWake()
		e.exitWorker(w)
		return
	}
	recs, p := e.cache.nextN(w.ppc, e.takeSize())
	e.released()
	if recs == nil {
		w.ppc = nil
		e.emptyReads++
		if e.s.Policy.retries() {
			e.fetchOrRetry(w)
			return
		}
		if e.cache.assignedSize() != 0 {
			// await this.#messageCache.availablePartitions()
			w.waiting = true
			e.availWaiters = append(e.availWaiters, w)
			return
		}
		if e.nonEmpty {
			// await this.#nonEmpty
			w.waiting = true
			e.nonEmptyWaits = append(e.nonEmptyWaits, w)
			return
		}
		if e.s.Policy.blocks() {
			e.fetchBlocking(w)
			return
		}
		if e.s.ConsumeTime > 0 {
			e.fetchAsync(w)
			return
		}
		var err error
		recs, p, err = e.fetch()
		if !e.fetched(w, recs, err) {
			return
		}
	}
	e.took(w, recs, p)
}

// fetched handles an empty or failed fetch; it reports whether there is a batch to take.
func (e *Engine) fetched(w *worker, recs []Record, err error) bool {
	if recs == nil && e.s.Policy.retries() {
		// 1.3.0's #worker: the pending operations first, then #nextFetchRetry; posted
		// after the workers that awaited this fetch, the first of which fetches again.
		e.l.Post(func() { e.afterEmptyFetch(w) })
		return false
	}
	if err != nil {
		// The JS worker logs the error and loops; back off instead of spinning.
		e.l.Schedule(e.s.MinWake, w.stepFn)
		return false
	}
	if recs == nil {
		e.l.Post(w.stepFn)
		return false
	}
	return true
}

// fetchAsync is #fetchAndResolveWith with a consume call that takes ConsumeTime: other
// workers that want to fetch meanwhile wait for it (`await this.#fetchInProgress`,
// then return null and look at the cache again), and the cache expiry loop runs on:
// #lastFetchClockNs moves only when the call returns (#saveFetchStats), so the cache
// can expire while the call is still collecting. The worker then finds a pending
// operation and gives its records back (#returnMessages).
func (e *Engine) fetchAsync(w *worker) {
	size, ok := e.startFetch(w)
	if !ok {
		return
	}
	e.l.Schedule(e.s.ConsumeTime, func() {
		recs, p, err := e.fetchSized(size)
		e.endFetch(w, recs, p, err)
	})
}

// startFetch begins a consume call that takes time (#fetchInProgress set): the size it
// asks for, or false when a call is in progress and w awaits it instead (return null,
// then `await this.#fetchInProgress`).
func (e *Engine) startFetch(w *worker) (size int, ok bool) {
	if e.fetching {
		w.waiting = true
		e.fetchWaits = append(e.fetchWaits, w)
		return 0, false
	}
	e.fetching = true
	size = e.cacheMaxSize
	e.updateMaxMessageCacheSize()
	return size, true
}

// endFetch is the end of a call startFetch began: #fetchInProgress resolved (the
// workers awaiting it go round their loops first), then the fetcher's own loop: its
// batch, or, empty, its next turn; a fetcher of an ended generation gives its partition
// back.
func (e *Engine) endFetch(w *worker, recs []Record, p *ppc, err error) {
	e.fetching = false
	ws := e.fetchWaits
	e.fetchWaits = nil
	for _, o := range ws {
		e.l.Post(o.stepFn)
	}
	w.waiting = false
	if w.done || w.gen != e.gen {
		if p != nil && e.cache.giveBack(p) {
			e.notifyAvailable()
		}
		return
	}
	if e.fetched(w, recs, err) {
		e.took(w, recs, p)
	}
}

// took is the rest of #worker's loop once the fetcher returned records.
func (e *Engine) took(w *worker, recs []Record, p *ppc) {
	w.ppc = p
	if len(e.pendingOps) > 0 {
		// Don't process messages anymore, execute the operations first (#returnMessages).
		e.returnMessages(recs, p)
		e.l.Post(w.stepFn)
		return
	}
	e.serve(w, recs)
}

// fetch is #fetchAndResolveWith: consume up to #messageCacheMaxSize records into the
// cache, then take a batch for the calling worker.
func (e *Engine) fetch() ([]Record, *ppc, error) {
	// The size is evaluated by the caller before #updateMaxMessageCacheSize runs, so a
	// fetch uses the size computed at the previous fetch: this lag is why the seed's
	// trace shows fetches of 1, 1, then 198.
	size := e.cacheMaxSize
	e.updateMaxMessageCacheSize()
	return e.fetchSized(size)
}

// fetchSized is the part of #fetchAndResolveWith after the consume call returns.
func (e *Engine) fetchSized(size int) ([]Record, *ppc, error) {
	if size == 0 {
		e.rebalanced = false
		return e.consumeLoop()
	}
	recs, err := e.consume(size)
	return e.afterConsume(size, recs, err)
}

// consume is one consume call to the source; rebalanced says afterwards whether it
// served a rebalance event.
func (e *Engine) consume(size int) ([]Record, error) {
	e.rebalanced = false
	return e.src.Consume(size)
}

// afterConsume is the rest of #fetchAndResolveWith once the consume call returned recs.
func (e *Engine) afterConsume(size int, recs []Record, err error) ([]Record, *ppc, error) {
	if e.woken != nil {
		ev := *e.woken
		e.woken = nil
		ev.Requested, ev.Returned = size, len(recs)
		e.emit(ev)
	}
	if err != nil {
		// Records the source returned with the error were taken from the client: they
		// go to the cache like any others, never dropped here.
		e.Errors = append(e.Errors, err)
	}
	if e.cache.addMessages(recs) {
		e.notifyAvailable()
	}
	got, p := e.cache.nextN(nil, e.takeSize())
	e.released()
	e.saveFetchStats(recs)
	if e.s.Policy.oldFetch() && err == nil {
		// 1.6.0's #fetchAndResolveWith: a full fetch asks for more, a short one for less.
		if len(recs) == e.cacheMaxSize {
			e.increaseMaxSize()
		} else {
			e.decreaseMaxSize(len(recs))
		}
	}
	e.lastFetchEmpty = len(recs) == 0
	if len(recs) == 0 {
		e.emptyFetches++
	}
	if len(recs) > 0 || err != nil {
		if e.tracing {
			ev := traceevent.Event{Ev: traceevent.Fetch, Requested: size, Returned: len(recs), Ranges: ranges(recs)}
			if err != nil {
				ev.Error = err.Error()
			}
			e.emit(ev)
		}
		if e.OnFetch != nil && len(recs) > 0 {
			e.OnFetch(recs)
		}
	}
	e.restartExpiry() // this.#maxPollIntervalRestart.resolve()
	if e.cache.assignedSize() == 0 && got == nil && err == nil && !e.rebalanced && e.s.Policy.valve() {
		e.nonEmpty = true
	}
	return got, p, err
}

// drainChunk is how many records consumeLoop takes from the source per Consume call.
const drainChunk = 1024

// consumeLoop is a fetch of size 0, which only 1.7.0's rounded estimate makes (V1_7_0):
// #fetchAndResolveWith calls consume(0, cb), and KafkaConsumer.consume (lib/kafka-consumer.js
// 477-504 of 1.7.0) takes 0 for "no number" and starts _consumeLoop, a background loop
// that from then on takes every record the client receives and hands each to a callback
// whose promise already resolved: the records go nowhere, never delivered, never stored.
// The fetch throws before #saveFetchStats and #maxPollIntervalRestart.resolve (the first
// time in MessageCache.addMessages, given one message object; later at once, "Consume was
// already called", src/kafka-consumer.cc 1354), so the estimate and the expiry clock stay
// where the last real fetch left them and every later fetch is 0 again. #worker logs the
// error and retries; the finally sets #nonEmpty when no partition is cached (the consume's
// own err is unset), so the retries follow the expiry loop's valve. The model drains what
// the source holds at each attempt: the loop would have taken it earlier, which moves no
// stored offset either.
func (e *Engine) consumeLoop() ([]Record, *ppc, error) {
	var drained []Record
	for {
		recs, err := e.src.Consume(drainChunk)
		drained = append(drained, recs...)
		if err != nil {
			e.Errors = append(e.Errors, err)
			break
		}
		if len(recs) == 0 {
			break
		}
	}
	msg := "consume(0) started the client's consume loop: Consume was already called"
	if !e.consumeLooping {
		e.consumeLooping = true
		msg = "consume(0) started the client's consume loop: messages is not iterable"
	}
	if e.woken != nil {
		ev := *e.woken
		e.woken = nil
		ev.Requested, ev.Returned = 0, 0
		e.emit(ev)
	}
	if e.tracing {
		ev := traceevent.Event{Ev: traceevent.Fetch, Requested: 0, Returned: 0, Error: msg}
		if len(drained) > 0 {
			ev.Discarded = ranges(drained)
		}
		e.emit(ev)
	}
	// taken from the client (registered as fetched), then dropped: they stay pending
	if len(drained) > 0 && e.OnFetch != nil {
		e.OnFetch(drained)
	}
	if len(drained) > 0 && e.OnDiscard != nil {
		e.OnDiscard(drained)
	}
	e.lastFetchEmpty = true
	e.emptyFetches++
	if e.cache.assignedSize() == 0 && !e.rebalanced {
		e.nonEmpty = true
	}
	err := errors.New(msg)
	e.Errors = append(e.Errors, err) // the client logs it ("Consumer encountered error while consuming. Retrying.")
	return nil, nil, err
}

// takeSize is how many records a worker takes from the cache at once: the fetcher of
// #runInternal is #consumeCachedN(ppc, #maxBatchSize) for eachBatch and
// #consumeSingleCached (MessageCache.next: one record) for eachMessage.
func (e *Engine) takeSize() int {
	if e.s.EachMessage() {
		return 1
	}
	return e.s.BatchSize
}

// increaseMaxSize is 1.6.0's #increaseMaxSize: the size doubles (to at most 1024) on the
// second request in a row.
func (e *Engine) increaseMaxSize() {
	if e.cacheMaxSize == 1024 {
		return
	}
	e.increaseCount++
	if e.increaseCount <= 1 {
		return
	}
	e.cacheMaxSize = min(e.cacheMaxSize<<1, 1024)
	e.increaseCount = 0
}

// decreaseMaxSize is 1.6.0's #decreaseMaxSize: 80% of what the last fetch returned, at
// least 1.
func (e *Engine) decreaseMaxSize(got int) {
	e.cacheMaxSize = max(got*8/10, 1)
	e.increaseCount = 0
}

func (e *Engine) updateMaxMessageCacheSize() {
	if e.s.BatchSize == -1 || e.s.Policy.oldFetch() {
		return // unbounded, or 1.6.0's sizing (increaseMaxSize, decreaseMaxSize)
	}
	now := e.l.Now()
	if e.lastFetchedCnt > 0 && !e.lastFetch.IsZero() && now.After(e.lastFetch) {
		durMs := float64(now.Sub(e.lastFetch)) / float64(time.Millisecond)
		perMsPerWorker := float64(e.lastFetchedCnt) / float64(e.lastFetchedCon) / durMs
		perWorkerMs := float64(e.s.CacheSizePerWorker) / float64(time.Millisecond)
		est := perWorkerMs * perMsPerWorker
		perWorker := int(math.Ceil(est))
		if e.s.Policy.roundsEstimate() {
			// 1.7.0: Math.round (line 1010): below half a record the size is 0 (consumeLoop).
			perWorker = int(math.Round(est))
		}
		need := perWorker * e.s.Concurrency
		e.cacheMaxSize = roundUp(need, e.batchesSize)
	}
}

func (e *Engine) saveFetchStats(recs []Record) {
	e.lastFetch = e.l.Now()
	parts := map[kpart.TopicPartition]bool{}
	for _, r := range recs {
		parts[r.TopicPartition] = true
		if len(parts) >= e.s.Concurrency {
			break
		}
	}
	e.lastFetchedCon = len(parts)
	e.lastFetchedCnt = len(recs)
}

func (e *Engine) returnMessages(recs []Record, p *ppc) {
	tp := recs[0].TopicPartition
	if _, ok := e.lastConsumed[tp]; !ok {
		// #returnMessages remembers the record before the first returned one, so the
		// clear rewinds to it (v1.10.0 then re-delivers that record; v1.10.1 adds 1).
		// 1.10.0 sets no leader epoch on that entry (the seek then carries none);
		// 1.10.1 sets -1 explicitly: both mean "unknown", which is what -1 says here.
		e.lastConsumed[tp] = lastConsumed{offset: recs[0].Offset - 1, leaderEpoch: -1}
	}
	if e.s.Policy.oldFetch() {
		// 1.6.0's #discardMessages: the records are dropped, not given back; the entry
		// above makes the clear (or a pause) seek back to them. The worker then leaves
		// its loop (break), as it would at termination, giving back its ppc.
		if e.tracing {
			e.emit(traceevent.Event{Ev: traceevent.Returned, Partition: traceevent.P(tp.Partition), Offsets: offsets(recs), Reason: "discarded (#discardMessages)"})
		}
		return
	}
	if e.cache.returnMessages(recs) {
		e.notifyAvailable()
	}
	if e.tracing {
		e.emit(traceevent.Event{Ev: traceevent.Returned, Partition: traceevent.P(tp.Partition), Offsets: offsets(recs)})
	}
}

func (e *Engine) serve(w *worker, recs []Record) {
	tp := recs[0].TopicPartition
	b := &batch{tp: tp, recs: recs, lastResolved: -1, lastEpoch: -1}
	e.inflight[tp] = b
	e.busy++
	e.lastServe = e.l.Now()
	remaining := 0
	if w.ppc != nil {
		remaining = len(w.ppc.recs)
	}
	if e.tracing {
		e.emit(traceevent.Event{Ev: traceevent.Serve, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Worker: w.id,
			Offsets: offsets(recs), Remaining: traceevent.P(remaining)})
	}
	if e.s.EachMessage() {
		e.deliver(recs)
		e.serveMessage(w, b)
		return
	}
	if e.s.AutoResolve && !e.s.ManualCommit && !e.failsIn(tp, recs, false) && (e.s.PauseAt == 0 || e.s.PauseOutside || e.pauseDone) &&
		len(e.seeks) == 0 && !e.s.Heartbeat {
		e.deliver(recs)
		// The whole batch in one timer: the handler neither resolves nor throws on its way.
		e.l.Schedule(e.s.BatchDuration(len(recs)), func() {
			b.done = len(b.recs)
			e.endBatch(w, b)
		})
		return
	}
	e.round(w, b)
}

// deliver counts records as handed to the handler.
func (e *Engine) deliver(recs []Record) {
	tp := recs[0].TopicPartition
	d := e.delivered[tp]
	if d == nil {
		d = &kpart.Counts{}
		e.delivered[tp] = d
	}
	for _, r := range recs {
		d.Inc(r.Offset)
	}
}

// round runs one round of HandlerParallel records of an eachBatch handler that
// resolves offsets itself or throws: the kafkajs pattern (ManualCommit: the same without
// the isStale() break, and `await commitOffsetsIfNecessary()` after the loop)
//
//	for (const m of batch.messages) {
//	  if (!isRunning() || isStale()) break;
//	  await process(m);
//	  resolveOffset(m.offset);
//	}
//
// with HandlerParallel records processed at a time (Promise.all: a round that throws
// resolves none of its records).
func (e *Engine) round(w *worker, b *batch) {
	e.maybePause(b.tp)
	e.maybeSeek(b.tp)
	n := min(e.s.HandlerParallel, len(b.recs)-b.done)
	part := b.recs[b.done : b.done+n]
	// Only records the handler reaches count as delivered: after a throw or a stale
	// break the rest of the batch never reached it.
	e.deliver(part)
	e.l.Schedule(e.s.HandlerDelay, func() {
		if e.failsIn(b.tp, part, true) {
			b.threw = true
			e.endBatch(w, b)
			return
		}
		b.done += n
		if !e.s.AutoResolve || e.s.ManualCommit {
			last := part[n-1]
			e.resolveOffset(b, last.Offset, last.LeaderEpoch)
		}
		if e.s.Heartbeat {
			// `await heartbeat()`: a no-op in the kafkajs-compat client (Settings.Heartbeat)
			e.emit(traceevent.Event{Ev: traceevent.Heartbeat, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition),
				Offset: traceevent.P(part[n-1].Offset), Reason: "no-op: the expiry and max.poll clocks run from the last fetch"})
		}
		if b.done == len(b.recs) && e.s.ManualCommit {
			e.commitBatch(b)
		}
		if b.done == len(b.recs) || (!e.s.AutoResolve && !e.s.ManualCommit && b.stale) {
			e.endBatch(w, b)
			return
		}
		e.round(w, b)
	})
}

// failsIn reports whether the handler throws on one of recs: an offset of FailAt it has
// not thrown on before in this partition. mark records the throw.
func (e *Engine) failsIn(tp kpart.TopicPartition, recs []Record, mark bool) bool {
	if len(e.failAt) == 0 {
		return false
	}
	for _, r := range recs {
		if e.failAt[r.Offset] && !e.failed[tp][r.Offset] {
			if mark {
				if e.failed[tp] == nil {
					e.failed[tp] = map[int64]bool{}
				}
				e.failed[tp][r.Offset] = true
			}
			return true
		}
	}
	return false
}

// StoredCommitter is a Source that commits its stored offsets itself: librdkafka's
// rd_kafka_commit with no list (confluent-kafka-go's Commit()), which commits the stored
// offsets of the assignment that differ from the committed ones.
type StoredCommitter interface {
	CommitStored() error
}

// commitStored is commitOffsets() with no argument, as
// #eachBatchPayload_commitOffsetsIfNecessary calls it when autoCommit is off: the client
// hands librdkafka no list, so what is committed is what was stored (resolved), on
// every partition of the assignment. A Source that is no StoredCommitter is given the
// engine's own record of the stored offsets not committed yet. The JS client treats
// ERR__NO_OFFSET (nothing stored) as success; a failure is logged and the handler goes
// on (the scenario's handler does not catch it: the batch would throw; not modelled).
func (e *Engine) commitStored() {
	if sc, ok := e.src.(StoredCommitter); ok {
		if err := sc.CommitStored(); err != nil {
			e.Errors = append(e.Errors, err)
		}
		return
	}
	if e.committed == nil {
		e.committed = map[kpart.TopicPartition]int64{}
	}
	offs := map[kpart.TopicPartition]int64{}
	for _, tp := range e.src.Assignment() {
		if o, ok := e.stored[tp]; ok {
			if c, done := e.committed[tp]; !done || c != o {
				offs[tp] = o
			}
		}
	}
	if len(offs) == 0 {
		return
	}
	if err := e.src.Commit(offs); err != nil {
		e.Errors = append(e.Errors, err)
		return
	}
	for tp, o := range offs {
		e.committed[tp] = o
	}
}

// commitBatch is the manual handler's last statement: `await commitOffsetsIfNecessary()`
// (commitStored), or with ExplicitCommit `await consumer.commitOffsets([{topic,
// partition, offset: last + 1}])`, the batch's own partition at its last record, which
// librdkafka commits as given (rd_kafka_commit with a list) whatever is stored.
func (e *Engine) commitBatch(b *batch) {
	if !e.s.ExplicitCommit {
		e.commitStored()
		return
	}
	e.commitExplicit(b.tp, b.recs[len(b.recs)-1].Offset+1)
}

// commitExplicit is commitOffsets([{topic, partition, offset}]) from the handler.
func (e *Engine) commitExplicit(tp kpart.TopicPartition, offset int64) {
	if err := e.src.Commit(map[kpart.TopicPartition]int64{tp: offset}); err != nil {
		e.Errors = append(e.Errors, err)
	}
}

// endBatch is the rest of #batchProcessor once eachBatch returns or throws.
func (e *Engine) endBatch(w *worker, b *batch) {
	last := b.recs[len(b.recs)-1]
	if e.s.AutoResolve && !e.s.ManualCommit && !b.stale && !b.threw {
		e.resolveOffset(b, last.Offset, last.LeaderEpoch)
	}
	delete(e.inflight, b.tp)
	e.busy--
	resolved := b.lastResolved == last.Offset
	reason := "resolved"
	switch {
	case resolved:
	case b.threw:
		reason = "handler threw"
	case b.stale:
		reason = "not resolved (stale)"
	default:
		reason = "not resolved"
	}
	if e.tracing {
		e.emit(traceevent.Event{Ev: traceevent.BatchEnd, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Worker: w.id,
			Offsets: offsets(b.recs), Reason: reason})
	}
	if e.OnBatchEnd != nil {
		switch done := resolvedPrefix(b); {
		case resolved:
			e.OnBatchEnd(b.recs, true)
		case len(done) > 0:
			e.OnBatchEnd(done, true)
		default:
			e.OnBatchEnd(b.recs, false)
		}
	}
	// "If any message is unprocessed, either due to an error or due to the user not
	// marking it processed, we must seek back": to the first record when nothing was
	// resolved, else past the last resolved one.
	if (!b.seeked || !e.s.Policy.seekedCheck()) && !resolved {
		to, epoch := b.recs[0].Offset, b.recs[0].LeaderEpoch
		if b.lastResolved != -1 {
			to, epoch = b.lastResolved+1, b.lastEpoch
		}
		e.Seek(b.tp, to, epoch, "batch not resolved")
	}
	e.step(w)
}

func resolvedPrefix(b *batch) []Record {
	for i, r := range b.recs {
		if r.Offset > b.lastResolved {
			return b.recs[:i]
		}
	}
	return b.recs
}

// serveMessage is #messageProcessor: one record to eachMessage.
func (e *Engine) serveMessage(w *worker, b *batch) {
	m := b.recs[0]
	e.maybePause(m.TopicPartition)
	e.maybeSeek(m.TopicPartition)
	if e.s.Policy.messageSetsBefore() {
		// 1.10.0 sets #lastConsumedOffsets before awaiting config.eachMessage, so a
		// clear rewinds to the record being handled (and, without the + 1 of 1.10.1,
		// hands it to the handler again). 1.10.1 moved the set after the store.
		e.lastConsumed[m.TopicPartition] = lastConsumed{offset: m.Offset, leaderEpoch: m.LeaderEpoch}
	}
	e.l.Schedule(e.s.BatchDuration(1), func() { e.endMessage(w, b) })
}

// endMessage is the rest of #messageProcessor once eachMessage returns or throws. No
// payload is registered for eachMessage (#topicPartitionToBatchPayload is eachBatch's),
// so neither a seek nor #checkMaxPollIntervalNotExceeded makes it stale: a record the
// handler finished is always stored.
func (e *Engine) endMessage(w *worker, b *batch) {
	m := b.recs[0]
	delete(e.inflight, b.tp)
	e.busy--
	if e.failsIn(b.tp, b.recs, true) {
		if e.tracing {
			e.emit(traceevent.Event{Ev: traceevent.BatchEnd, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Worker: w.id,
				Offsets: offsets(b.recs), Reason: "handler threw"})
		}
		if e.OnBatchEnd != nil {
			e.OnBatchEnd(b.recs, false)
		}
		// "If the message is unprocessed, due to an error ... we seek back."
		e.Seek(b.tp, m.Offset, m.LeaderEpoch, "eachMessage threw")
		e.step(w)
		return
	}
	if e.s.ExplicitCommit {
		// the handler's `await consumer.commitOffsets([{..., offset: offset + 1}])`, its
		// last statement, before #messageProcessor stores the offset
		e.commitExplicit(b.tp, m.Offset+1)
	}
	// _offsetsStoreSingle(offset + 1), then (1.10.1) #lastConsumedOffsets.set.
	if err := e.src.StoreOffset(b.tp, m.Offset+1, m.LeaderEpoch); err != nil {
		e.Errors = append(e.Errors, err)
	} else {
		e.stored[b.tp] = m.Offset + 1
		if e.tracing {
			e.emit(traceevent.Event{Ev: traceevent.Store, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Offset: traceevent.P(m.Offset + 1)})
		}
		if !e.s.Policy.messageSetsBefore() {
			e.lastConsumed[b.tp] = lastConsumed{offset: m.Offset, leaderEpoch: m.LeaderEpoch}
		}
	}
	if e.tracing {
		e.emit(traceevent.Event{Ev: traceevent.BatchEnd, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Worker: w.id,
			Offsets: offsets(b.recs), Reason: "resolved"})
	}
	if e.OnBatchEnd != nil {
		e.OnBatchEnd(b.recs, true)
	}
	e.step(w)
}

// resolveOffset is #eachBatchPayload_resolveOffsets.
func (e *Engine) resolveOffset(b *batch, offset int64, epoch int32) {
	if offset <= b.lastResolved {
		return
	}
	b.lastResolved, b.lastEpoch = offset, epoch
	if err := e.src.StoreOffset(b.tp, offset+1, epoch); err != nil {
		e.Errors = append(e.Errors, err)
		return
	}
	e.stored[b.tp] = offset + 1
	if e.tracing {
		e.emit(traceevent.Event{Ev: traceevent.Store, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Offset: traceevent.P(offset + 1)})
	}
	if e.s.Policy.resolveRecords() {
		// 1.10.1 (and PR #518) record the last consumed offset here; 1.10.0 does not, which is the bug.
		e.lastConsumed[b.tp] = lastConsumed{offset: offset, leaderEpoch: epoch}
	}
}

// pauseDue reports whether the handler is still to pause and the time has come (a
// batch then runs round by round, so the pause falls in the round it is due).
func (e *Engine) pauseDue() bool {
	return e.s.PauseAt > 0 && !e.s.PauseOutside && !e.pauseDone && !e.started.IsZero() && e.l.Now().Sub(e.started) >= e.s.PauseAt
}

// maybePause is the handler calling its payload's pause() when it is due: pause() marks
// the partition's batch payload stale (not seeked: #markBatchPayloadsStale without
// isSeek), records the partition as paused and queues #pauseInternal; the function it
// returns is called ResumeAfter later.
func (e *Engine) maybePause(tp kpart.TopicPartition) {
	if !e.pauseDue() {
		return
	}
	e.pauseDone = true
	if b := e.inflight[tp]; b != nil {
		b.stale = true
	}
	if e.paused == nil {
		e.paused = map[kpart.TopicPartition]bool{}
	}
	e.paused[tp] = true
	e.emit(traceevent.Event{Ev: traceevent.Pause, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Reason: "payload pause()"})
	e.addPendingOp(pendingOp{name: "pause", run: func() { e.pauseInternal(tp) }})
	e.l.Schedule(e.s.ResumeAfter, func() {
		// resume(): queued like every other operation (#resumeInternal)
		e.addPendingOp(pendingOp{name: "resume", run: func() { e.resumeInternal(tp) }})
	})
}

// pauseOutside is the application's `consumer.pause([{topic}])` from a timer, PauseAt
// after the consumer started (Settings.PauseOutside): the public pause() the payload's
// is bound to (_consumer.js pause 1978 / 1987). It flattens the topic to the assigned
// partitions (or takes the partitions named, Settings.PausePartitions), marks each one's batch payload in flight stale (#markBatchPayloadsStale
// without isSeek: the handler, mid-round, goes on), records them as paused and queues
// one #pauseInternal for all of them; the function it returns (resume() of the same
// partitions) is called ResumeAfter later. Nothing assigned: pause() returns without
// queueing anything, and there is nothing to resume.
func (e *Engine) pauseOutside() {
	if e.pauseDone || e.stopping {
		return
	}
	e.pauseDone = true
	tps := e.src.Assignment()
	if len(e.s.PausePartitions) > 0 {
		tps = e.namedPartitions(tps)
	}
	if len(tps) == 0 {
		e.emit(traceevent.Event{Ev: traceevent.Pause, Reason: "consumer pause(): nothing assigned"})
		return
	}
	if e.paused == nil {
		e.paused = map[kpart.TopicPartition]bool{}
	}
	for _, tp := range tps {
		if b := e.inflight[tp]; b != nil {
			b.stale = true
		}
		e.paused[tp] = true
		e.emit(traceevent.Event{Ev: traceevent.Pause, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Reason: "consumer pause()"})
	}
	e.addPendingOp(pendingOp{name: "pause", run: func() {
		for _, tp := range tps {
			e.pauseInternal(tp)
		}
	}})
	e.l.Schedule(e.s.ResumeAfter, func() {
		e.addPendingOp(pendingOp{name: "resume", run: func() {
			for _, tp := range tps {
				e.resumeInternal(tp)
			}
		}})
	})
}

// namedPartitions is the list `consumer.pause([{topic, partitions}])` names
// (Settings.PausePartitions), in the order named, of the assigned topic. A named partition
// not assigned is left out with a trace event: the JS client would hand it to librdkafka
// unchecked, which is not modelled.
func (e *Engine) namedPartitions(assigned []kpart.TopicPartition) []kpart.TopicPartition {
	var out []kpart.TopicPartition
	for _, p := range e.s.PausePartitions {
		i := slices.IndexFunc(assigned, func(tp kpart.TopicPartition) bool { return tp.Partition == p })
		if i < 0 {
			e.emit(traceevent.Event{Ev: traceevent.Pause, Partition: traceevent.P(p), Reason: "consumer pause(): not assigned, left out (not modelled)"})
			continue
		}
		out = append(out, assigned[i])
	}
	return out
}

// maybeSeek is the handler calling consumer.seek({topic, partition, offset}) for each
// seek that is due (Settings.SeekAt/SeekTo, Seeks), once each, in order: the public
// seek(), which marks the partition's batch in flight stale and seeked (the handler's own
// when the seek is of its partition) and queues #seekInternal. tp is the partition the
// handler is handling.
func (e *Engine) maybeSeek(tp kpart.TopicPartition) {
	if len(e.seeks) == 0 || e.started.IsZero() {
		return
	}
	since := e.l.Now().Sub(e.started)
	left := e.seeks[:0]
	var due []HandlerSeek
	for _, k := range e.seeks {
		if since >= k.At {
			due = append(due, k)
		} else {
			left = append(left, k)
		}
	}
	e.seeks = left
	for _, k := range due {
		to := tp
		if k.Partition >= 0 {
			to.Partition = k.Partition
		}
		e.Seek(to, k.Offset, -1, handlerSeek)
	}
}

// Pauser is a Source that can pause and resume fetching a partition (librdkafka's
// pause/resume: a paused partition returns nothing; resumed, it is fetched from the
// position the application reached, past what it already returned).
type Pauser interface {
	Pause(tp kpart.TopicPartition) error
	Resume(tp kpart.TopicPartition) error
}

// pauseInternal is #pauseInternal: MessageCache.markStale, internalClient.pause, and a
// seek to last-consumed + 1 where #lastConsumedOffsets has an entry.
func (e *Engine) pauseInternal(tp kpart.TopicPartition) {
	dropped := e.cache.contents()[tp]
	e.cache.markStale([]kpart.TopicPartition{tp})
	if p, ok := e.src.(Pauser); ok {
		if err := p.Pause(tp); err != nil {
			e.Errors = append(e.Errors, err)
		}
	}
	ev := traceevent.Event{Ev: traceevent.Pause, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Reason: "no last-consumed entry"}
	if len(dropped) > 0 {
		ev.Discarded = ranges(dropped)
	}
	last, has := e.lastConsumed[tp]
	if has {
		ev.Reason, ev.Offset = "last-consumed+1", traceevent.P(last.offset+1)
	}
	e.emit(ev)
	if len(dropped) > 0 && (!has || last.offset+1 > dropped[0].Offset) && !e.seekQueued(tp, dropped[0].Offset) && e.OnDiscard != nil {
		e.OnDiscard(dropped)
	}
	if has {
		e.seekInternal(tp, last.offset+1, last.leaderEpoch, "pause: last-consumed+1")
	}
}

// seekQueued reports whether a pending seek() of tp at or below offset is still to run
// (the batch-end seek of a batch the pause made stale repairs the position).
func (e *Engine) seekQueued(tp kpart.TopicPartition, offset int64) bool {
	for _, op := range e.pendingOps {
		if op.seekTP != nil && *op.seekTP == tp && op.seekOffset <= offset {
			return true
		}
	}
	return false
}

// resumeInternal is #resumeInternal: internalClient.resume, nothing else.
func (e *Engine) resumeInternal(tp kpart.TopicPartition) {
	delete(e.paused, tp)
	if p, ok := e.src.(Pauser); ok {
		if err := p.Resume(tp); err != nil {
			e.Errors = append(e.Errors, err)
		}
	}
	e.emit(traceevent.Event{Ev: traceevent.Resume, Topic: tp.Topic, Partition: traceevent.P(tp.Partition)})
}

// Seek is the public seek(): it marks the partition's batch stale and queues the seek
// as a pending operation.
func (e *Engine) Seek(tp kpart.TopicPartition, offset int64, epoch int32, reason string) {
	if b := e.inflight[tp]; b != nil {
		b.stale, b.seeked = true, true
	}
	e.addPendingOp(pendingOp{name: "seek", run: func() { e.seekInternal(tp, offset, epoch, reason) }, seekTP: &tp, seekOffset: offset})
}

func (e *Engine) exitWorker(w *worker) {
	w.done = true
	if e.cache.giveBack(w.ppc) {
		e.notifyAvailable()
	}
	w.ppc = nil
	for _, o := range e.workers {
		if !o.done {
			return
		}
	}
	e.allSettled()
}

// allSettled follows `await Promise.allSettled(this.#workers)`.
func (e *Engine) allSettled() {
	e.flushSpin()
	e.expiryTimer.Stop()
	e.maxPollTimer.Stop()
	e.runPendingOps()
}

// revokePending reports whether a revoke was served and its #unassign waits as a
// pending operation. librdkafka pauses every assigned partition before it hands the
// application a rebalance (rd_kafka_assignment_pause) and resumes them at its assign or
// unassign call: until the #unassign runs, a consume call returns no record (read by
// 0.x's waiting call, block.go).
func (e *Engine) revokePending() bool {
	for _, op := range e.pendingOps {
		if op.name == "unassign" {
			return true
		}
	}
	return false
}

func (e *Engine) runPendingOps() {
	for len(e.pendingOps) > 0 {
		op := e.pendingOps[0]
		e.pendingOps = e.pendingOps[1:]
		op.run()
	}
	if e.newGenFn == nil {
		e.newGenFn = e.newGeneration
	}
	e.l.Post(e.newGenFn)
}

type pendingOp struct {
	name string
	run  func()
	// a seek's partition and offset (seek() only), for pauseInternal to see a repair
	// queued after it
	seekTP     *kpart.TopicPartition
	seekOffset int64
}

func (e *Engine) addPendingOp(op pendingOp) {
	if len(e.pendingOps) == 0 {
		e.scheduleTermination()
	}
	e.pendingOps = append(e.pendingOps, op)
	e.emit(traceevent.Event{Ev: traceevent.Pending, Op: op.name})
}

// scheduleTermination is #resolveWorkerTerminationScheduled: workers stop at their next
// turn; waiting workers are woken (#queueNonEmptyCb) so they can see it.
func (e *Engine) scheduleTermination() {
	e.terminating = true
	if e.s.Policy.retries() {
		// 1.3.0 only resolves #workerTerminationScheduled: the workers taking turns at
		// the fetch see it when the fetch in progress returns; those on their
		// #nextFetchRetry timers, when the timers end.
		e.l.Post(e.endSpin)
		return
	}
	if e.terminateFn == nil {
		e.terminateFn = func() { e.notifyNonEmpty(WakeTermination) }
	}
	e.l.Post(e.terminateFn)
}

// NotifyNonEmpty is librdkafka's queue-non-empty callback (#queueNonEmptyCb): sources
// call it (posted on the loop) when records arrive after an empty consume.
func (e *Engine) NotifyNonEmpty() {
	if e.s.Policy.retries() {
		e.queueNonEmpty()
		return
	}
	if e.s.Policy.blocks() {
		e.arrived()
		return
	}
	e.notifyNonEmpty(WakeArrival)
}

// What ended a wait for the consumer queue (#nonEmpty), as the wake trace event's
// reason says.
const (
	// WakeArrival: the source said records arrived (queue_non_empty_cb).
	WakeArrival = "arrival"
	// WakeValve: #cacheExpirationLoop's valve, FetchValve after the last fetch.
	WakeValve = "valve"
	// WakeTermination: workers were told to stop (a pending operation, Stop).
	WakeTermination = "termination"
)

// notifyNonEmpty is #notifyNonEmpty. A wait it ends is traced as a wake event: how
// long #nonEmpty was set (it is set by an empty fetch, so since_fetch_ms), what ended
// it, and (emitted with the next consume call, see fetchSized) what that call returned.
// Records returned after a valve wake arrived during the wait: the JS client, woken
// by queue_non_empty_cb, would have fetched them when they arrived.
func (e *Engine) notifyNonEmpty(cause string) {
	if e.nonEmpty {
		e.nonEmpty = false
		ws := e.nonEmptyWaits
		e.nonEmptyWaits = nil
		if len(ws) > 0 && e.tracing {
			e.flushWake()
			ev := traceevent.Event{Ev: traceevent.Wake, Reason: cause, N: len(ws),
				SinceFetchMs: traceevent.P(ms(e.l.Now().Sub(e.lastFetch)))}
			if cause == WakeTermination {
				e.emit(ev) // no consume call follows
			} else {
				e.woken = &ev
			}
		}
		for _, w := range ws {
			e.l.Post(w.stepFn)
		}
	}
	e.notifyAvailable()
}

// flushWake emits a wake whose workers stopped before they consumed: no requested or
// returned count.
func (e *Engine) flushWake() {
	if e.woken != nil {
		e.emit(*e.woken)
		e.woken = nil
	}
}

// released follows a take from the cache, which may leave no partition held (a batch's
// removal of its emptied partition; markStale and clear run as pending operations, once
// the workers have ended, when none waits here). 0.x's worker that found every
// cached partition taken looks again every millisecond (#nextFetchRetry's
// Timer.withTimeout(1), policy V0_2_0, modelled as a wait in availWaiters): it sees the
// moment no partition is held (assignedSize 0) and fetches. Later releases wait on
// MessageCache.availablePartitions(), which a removal does not resolve
// (_consumer_cache.js #removeEmptyPartition), and 1.0.0 to 1.3.0 on their own timer.
func (e *Engine) released() {
	if e.s.Policy.blocks() && len(e.availWaiters) > 0 && e.cache.assignedSize() == 0 {
		e.notifyAvailable()
	}
}

func (e *Engine) notifyAvailable() {
	ws := e.availWaiters
	e.availWaiters = nil
	for _, w := range ws {
		e.l.Post(w.stepFn)
	}
}

func (e *Engine) flushSpin() { e.flushSpinAt(e.l.Now()) }

// flushSpinAt writes the spin counters as of t (coalesceIdle passes ticks it runs ahead
// of the loop's clock).
func (e *Engine) flushSpinAt(t time.Time) {
	if e.emptyReads == 0 && e.emptyFetches == 0 {
		return
	}
	if e.tracing {
		ev := traceevent.Event{Ev: traceevent.Spin, EmptyReads: e.emptyReads, EmptyFetches: e.emptyFetches}
		if !e.lastSpinFlush.IsZero() {
			ev.WindowMs = traceevent.P(ms(t.Sub(e.lastSpinFlush)))
		}
		e.emitAt(ev, t)
	}
	e.emptyReads, e.emptyFetches = 0, 0
	e.lastSpinFlush = t
}

// Quiescent reports whether nothing is left to deliver: the cache is empty, no batch is
// in flight, no operation is pending, the last fetch returned nothing and the source is
// at its end.
func (e *Engine) Quiescent() bool {
	return e.running && (!e.fetching || e.blocked != nil) && !e.fetchOpen && e.cache.size == 0 && e.busy == 0 && len(e.pendingOps) == 0 && len(e.paused) == 0 &&
		!e.terminating && e.lastFetchEmpty && e.src.AtEnd()
}

// Status is a snapshot for progress displays.
type Status struct {
	Delivered  int
	Cached     int
	InFlight   int
	UntilClear time.Duration // time until the cache expires (0 when not armed)
}

// Status returns a snapshot.
func (e *Engine) Status() Status {
	st := Status{Cached: e.cache.size, InFlight: e.busy}
	for _, d := range e.delivered {
		st.Delivered += d.Len()
	}
	if !e.terminating && !e.lastFetch.IsZero() {
		st.UntilClear = e.lastFetch.Add(e.s.MaxPollInterval).Sub(e.l.Now())
		if st.UntilClear < 0 {
			st.UntilClear = 0
		}
	}
	return st
}

// DeliveredTimes returns how many times the record at offset of tp reached the handler:
// a lookup, where Delivered copies every partition's deliveries (a run's "is the phase-2
// record delivered yet" asked after each task copied them all, quadratic in records).
func (e *Engine) DeliveredTimes(tp kpart.TopicPartition, offset int64) int {
	return e.delivered[tp].Get(offset)
}

// Delivered returns, per partition, how many times each offset reached the handler.
func (e *Engine) Delivered() map[kpart.TopicPartition]map[int64]int {
	out := make(map[kpart.TopicPartition]map[int64]int, len(e.delivered))
	for tp, d := range e.delivered {
		out[tp] = d.Map()
	}
	return out
}

// DeliveredCounts returns, per partition, how many times each offset reached the
// handler, as counts rather than Delivered's map of every offset (4 bytes an offset
// of a dense run where the map held about 40: issue 25). The counts are the engine's
// own: read them, merge them (kpart.Counts.Merge), never change them.
func (e *Engine) DeliveredCounts() map[kpart.TopicPartition]*kpart.Counts {
	out := make(map[kpart.TopicPartition]*kpart.Counts, len(e.delivered))
	for tp, d := range e.delivered {
		out[tp] = d
	}
	return out
}

// StoredOffset returns the last stored offset of tp: Stored's entry, without a copy of
// every partition's (asked per partition after every task, that was quadratic in the
// partitions).
func (e *Engine) StoredOffset(tp kpart.TopicPartition) (int64, bool) {
	o, ok := e.stored[tp]
	return o, ok
}

// Stored returns the last stored offset per partition.
func (e *Engine) Stored() map[kpart.TopicPartition]int64 {
	out := make(map[kpart.TopicPartition]int64, len(e.stored))
	for tp, o := range e.stored {
		out[tp] = o
	}
	return out
}

// FlushTrace writes pending counters to the trace.
func (e *Engine) FlushTrace() { e.flushSpin() }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func roundUp(v, m int) int {
	if m <= 0 {
		return v
	}
	return (v + m - 1) / m * m
}

func offsets(recs []Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

// ranges groups records into per-partition runs; a run is split where an offset is
// smaller than the previous one (never by gaps, which are counted instead).
func ranges(recs []Record) []traceevent.Range {
	var out []traceevent.Range
	idx := map[kpart.TopicPartition]int{}
	for _, r := range recs {
		if i, ok := idx[r.TopicPartition]; ok && r.Offset > out[i].Last {
			out[i].Last = r.Offset
			out[i].Count++
			continue
		}
		idx[r.TopicPartition] = len(out)
		out = append(out, traceevent.PartitionRange(r.Partition, r.Offset, r.Offset, 1))
	}
	return out
}
