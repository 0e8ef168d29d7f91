// Package eachbatch models the kafkajs-compatible eachBatch consumer of
// confluent-kafka-javascript (lib/kafkajs/_consumer.js and _consumer_cache.js, versions
// 1.9.0 to 1.10.1 and the reporter's patch), closely enough that the same settings give
// the same outcome: which records reach the handler, which offsets are stored, what the
// cache expiry clears and where the fetch position is (or is not) rewound.
//
// The engine runs on an injected event loop (internal/loop) and reads records from an
// injected Source, so the same code runs live over librdkafka (confluent-kafka-go) on the
// wall clock, and in tests over a simulated partition log on virtual time, where the
// seed's full 15-minute scenario takes milliseconds and is deterministic.
//
// What is modeled, with the JS names: the per-partition message cache (#messageCache),
// up to partitionsConsumedConcurrently workers (#worker) serving up to
// js.consumer.max.batch.size records of one partition to eachBatch, the adaptive fetch
// size (#messageCacheMaxSize, #updateMaxMessageCacheSize), the queue-non-empty wait
// (#nonEmpty) with its 1 s valve, the cache expiry loop (#cacheExpirationLoop) measured
// from the last fetch against max.poll.interval.ms, pending operations that run only
// after every worker has settled (#addPendingOperation, #executePendingOperations), the
// clear (#clearCacheAndResetPositions) with each policy's rewind rule, offsets stored on
// batch resolve (#eachBatchPayload_resolveOffsets), stale payloads past twice the poll
// interval, and seeks that commit their offset in auto-commit mode (#seekInternal).
//
// What is not modeled: the handler itself (it is a timer of --handler-delay per round of
// --handler-parallel records), eachMessage, pause/resume, and librdkafka internals (the
// Source stands for them).
package eachbatch

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// Record is one record as the client returns it.
type Record struct {
	kpart.TopicPartition
	Offset      int64
	LeaderEpoch int32
	Size        int // key and value bytes
}

// Source is the client under the cache: librdkafka live, a simulated log in tests.
type Source interface {
	// Consume returns up to max records the client already holds, without waiting for
	// the network: the JS client consumes with a timeout of 0 (setDefaultConsumeTimeout(0)
	// and timeout-only-for-first-message in KafkaConsumerConsumeNum).
	Consume(max int) ([]Record, error)
	// Seek moves the fetch position; buffered records of the partition are dropped.
	Seek(tp kpart.TopicPartition, offset int64, leaderEpoch int32) error
	// StoreOffset stores the next offset to commit (rd_kafka_offsets_store); auto-commit
	// commits what is stored.
	StoreOffset(tp kpart.TopicPartition, offset int64, leaderEpoch int32) error
	// Commit commits offsets now (seekInternal does this in auto-commit mode).
	Commit(offsets map[kpart.TopicPartition]int64) error
	// Assignment is the current assignment.
	Assignment() []kpart.TopicPartition
	// AtEnd reports whether every assigned partition has been consumed to the end the
	// source was told to expect, with nothing left buffered.
	AtEnd() bool
}

// Policy is what the cache clear does with the fetch position.
type Policy string

// The policies.
const (
	// V1_10_0 (also 1.9.0): a partition is rewound only when it has a last-consumed
	// entry, and the eachBatch path never records one: every cached record is dropped
	// and the fetch position stays past them.
	V1_10_0 Policy = "v1.10.0"
	// V1_10_1: the eachBatch resolve records the last consumed offset and the clear
	// rewinds those partitions to last-consumed + 1; partitions with no entry are skipped.
	V1_10_1 Policy = "v1.10.1"
	// Head: v1.10.1 plus the reporter's patch: before clearing, remember each
	// partition's oldest cached record and rewind to it where there is no last-consumed
	// entry.
	Head Policy = "head"
)

// Policies lists the policies in comparison order.
var Policies = []Policy{V1_10_0, V1_10_1, Head}

// ParsePolicy parses a policy name (1.9.0 is an alias of v1.10.0).
func ParsePolicy(s string) (Policy, error) {
	switch strings.TrimPrefix(strings.ToLower(s), "v") {
	case "1.10.0", "1.9.0":
		return V1_10_0, nil
	case "1.10.1":
		return V1_10_1, nil
	case "head":
		return Head, nil
	}
	return "", fmt.Errorf("unknown policy %q (want v1.10.0, v1.10.1 or head)", s)
}

// Settings are the consumer settings that shape the outcome, with the seed's values as
// defaults (DefaultSettings). Durations are already scaled.
type Settings struct {
	Policy          Policy
	Concurrency     int           // partitionsConsumedConcurrently
	BatchSize       int           // js.consumer.max.batch.size (-1: unbounded)
	MaxPollInterval time.Duration // max.poll.interval.ms; the cache expires this long after the last fetch
	HandlerDelay    time.Duration // time per record in eachBatch
	HandlerParallel int           // records processed at a time in eachBatch
	// Client internals, scaled with the rest.
	CacheSizePerWorker time.Duration // js.consumer.max.cache.size.per.worker.ms (1500 ms)
	FetchValve         time.Duration // the cache expiry loop wakes fetchers this long after a fetch (1 s)
	MinWake            time.Duration // the expiry loop never sleeps less than this (100 ms)
	// AutoResolve is eachBatchAutoResolve (true unless the application resolves offsets).
	AutoResolve bool
	// CommitOnSeek: #seekInternal commits the offset it seeks to, which the JS client
	// does only when enable.auto.commit is on.
	CommitOnSeek bool
}

// DefaultSettings are the seed's settings at scale 1.
func DefaultSettings() Settings {
	return Settings{
		Policy:             V1_10_0,
		Concurrency:        20,
		BatchSize:          20,
		MaxPollInterval:    900 * time.Second,
		HandlerDelay:       40 * time.Second,
		HandlerParallel:    3,
		CacheSizePerWorker: 1500 * time.Millisecond,
		FetchValve:         time.Second,
		MinWake:            100 * time.Millisecond,
		AutoResolve:        true,
		CommitOnSeek:       true,
	}
}

// Validate checks the settings.
func (s Settings) Validate() error {
	var errs []string
	if _, err := ParsePolicy(string(s.Policy)); err != nil {
		errs = append(errs, err.Error())
	}
	if s.Concurrency <= 0 {
		errs = append(errs, "concurrency must be > 0")
	}
	if s.BatchSize == 0 || s.BatchSize < -1 {
		errs = append(errs, "batch size must be > 0 or -1")
	}
	if s.MaxPollInterval <= 0 {
		errs = append(errs, "max poll interval must be > 0")
	}
	if s.HandlerDelay < 0 {
		errs = append(errs, "handler delay must be >= 0")
	}
	if s.HandlerParallel <= 0 {
		errs = append(errs, "handler parallelism must be > 0")
	}
	if s.CacheSizePerWorker <= 0 || s.FetchValve <= 0 || s.MinWake <= 0 {
		errs = append(errs, "client internal durations must be > 0")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// BatchDuration is how long the modeled handler takes for n records.
func (s Settings) BatchDuration(n int) time.Duration {
	rounds := (n + s.HandlerParallel - 1) / s.HandlerParallel
	return time.Duration(rounds) * s.HandlerDelay
}

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
}

type worker struct {
	id      int
	ppc     *ppc
	gen     int
	done    bool
	waiting bool
}

// Engine is the modeled consumer. All methods must be called on its loop.
type Engine struct {
	l     *loop.Loop
	src   Source
	s     Settings
	trace func(traceevent.Event)

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
	expiryTimer    *loop.Timer
	maxPollTimer   *loop.Timer
	lastFetchEmpty bool
	stopping       bool
	running        bool

	emptyReads, emptyFetches int
	lastSpinFlush            time.Time // spin counters reach the trace at most once per valve period

	delivered map[kpart.TopicPartition]map[int64]int
	stored    map[kpart.TopicPartition]int64
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
	if trace == nil {
		trace = func(traceevent.Event) {}
	}
	e := &Engine{
		l: l, src: src, s: s, trace: trace,
		cache:        newCache(),
		cacheMaxSize: 1, // #messageCacheMaxSize starts at 1
		lastConsumed: map[kpart.TopicPartition]lastConsumed{},
		inflight:     map[kpart.TopicPartition]*batch{},
		delivered:    map[kpart.TopicPartition]map[int64]int{},
		stored:       map[kpart.TopicPartition]int64{},
	}
	if s.BatchSize == -1 {
		e.cacheMaxSize = int(^uint(0) >> 1)
	}
	e.batchesSize = s.BatchSize * s.Concurrency // #maxBatchesSize for eachBatch
	if s.BatchSize <= 0 {
		e.batchesSize = s.Concurrency
	}
	return e, nil
}

func (e *Engine) emit(ev traceevent.Event) {
	ev.Time = e.l.Now().UTC()
	ev.AtMs = float64(e.l.Elapsed()) / float64(time.Millisecond)
	e.trace(ev)
}

// Start begins consuming (#runInternal's first generation).
func (e *Engine) Start() {
	if e.running {
		return
	}
	e.running = true
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
		e.workers = append(e.workers, w)
		e.l.Post(func() { e.step(w) })
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
		e.exitWorker(w)
		return
	}
	recs, p := e.cache.nextN(w.ppc, e.s.BatchSize)
	if recs == nil {
		w.ppc = nil
		e.emptyReads++
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
		var err error
		recs, p, err = e.fetch()
		if err != nil {
			// The JS worker logs the error and loops; back off instead of spinning.
			e.l.After(e.s.MinWake, func() { e.step(w) })
			return
		}
		if recs == nil {
			e.l.Post(func() { e.step(w) })
			return
		}
	}
	w.ppc = p
	if len(e.pendingOps) > 0 {
		// Don't process messages anymore, execute the operations first (#returnMessages).
		e.returnMessages(recs, p)
		e.l.Post(func() { e.step(w) })
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
	recs, err := e.src.Consume(size)
	if err != nil {
		// Records the source returned with the error were taken from the client: they
		// go to the cache like any others, never dropped here.
		e.Errors = append(e.Errors, err)
	}
	if e.cache.addMessages(recs) {
		e.notifyAvailable()
	}
	got, p := e.cache.nextN(nil, e.s.BatchSize)
	e.saveFetchStats(recs)
	e.lastFetchEmpty = len(recs) == 0
	if len(recs) == 0 {
		e.emptyFetches++
	}
	if len(recs) > 0 || err != nil {
		ev := traceevent.Event{Ev: traceevent.Fetch, Requested: size, Returned: len(recs), Ranges: ranges(recs)}
		if err != nil {
			ev.Error = err.Error()
		}
		e.emit(ev)
		if e.OnFetch != nil && len(recs) > 0 {
			e.OnFetch(recs)
		}
	}
	e.restartExpiry() // this.#maxPollIntervalRestart.resolve()
	if e.cache.assignedSize() == 0 && got == nil && err == nil {
		e.nonEmpty = true
	}
	return got, p, err
}

func (e *Engine) updateMaxMessageCacheSize() {
	if e.s.BatchSize == -1 {
		return
	}
	now := e.l.Now()
	if e.lastFetchedCnt > 0 && !e.lastFetch.IsZero() && now.After(e.lastFetch) {
		durMs := float64(now.Sub(e.lastFetch)) / float64(time.Millisecond)
		perMsPerWorker := float64(e.lastFetchedCnt) / float64(e.lastFetchedCon) / durMs
		perWorkerMs := float64(e.s.CacheSizePerWorker) / float64(time.Millisecond)
		need := int(math.Ceil(perWorkerMs*perMsPerWorker)) * e.s.Concurrency
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
	if e.cache.returnMessages(recs) {
		e.notifyAvailable()
	}
	e.emit(traceevent.Event{Ev: traceevent.Returned, Partition: traceevent.P(tp.Partition), Offsets: offsets(recs)})
}

func (e *Engine) serve(w *worker, recs []Record) {
	tp := recs[0].TopicPartition
	b := &batch{tp: tp, recs: recs, lastResolved: -1}
	e.inflight[tp] = b
	e.lastServe = e.l.Now()
	d := e.delivered[tp]
	if d == nil {
		d = map[int64]int{}
		e.delivered[tp] = d
	}
	for _, r := range recs {
		d[r.Offset]++
	}
	remaining := 0
	if w.ppc != nil {
		remaining = len(w.ppc.recs)
	}
	e.emit(traceevent.Event{Ev: traceevent.Serve, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Worker: w.id,
		Offsets: offsets(recs), Remaining: traceevent.P(remaining)})
	e.l.After(e.s.BatchDuration(len(recs)), func() { e.endBatch(w, b) })
}

// endBatch is the rest of #batchProcessor once eachBatch returns.
func (e *Engine) endBatch(w *worker, b *batch) {
	last := b.recs[len(b.recs)-1]
	if e.s.AutoResolve && !b.stale {
		e.resolveOffset(b, last.Offset, last.LeaderEpoch)
	}
	delete(e.inflight, b.tp)
	resolved := b.lastResolved == last.Offset
	e.emit(traceevent.Event{Ev: traceevent.BatchEnd, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Worker: w.id,
		Offsets: offsets(b.recs), Reason: map[bool]string{true: "resolved", false: "not resolved (stale)"}[resolved]})
	if e.OnBatchEnd != nil {
		e.OnBatchEnd(b.recs, resolved)
	}
	if !b.seeked && !resolved {
		to, epoch := b.recs[0].Offset, b.recs[0].LeaderEpoch
		if b.lastResolved != -1 {
			to, epoch = b.lastResolved+1, -1
		}
		e.Seek(b.tp, to, epoch, "batch not resolved")
	}
	e.step(w)
}

// resolveOffset is #eachBatchPayload_resolveOffsets.
func (e *Engine) resolveOffset(b *batch, offset int64, epoch int32) {
	if offset <= b.lastResolved {
		return
	}
	b.lastResolved = offset
	if err := e.src.StoreOffset(b.tp, offset+1, epoch); err != nil {
		e.Errors = append(e.Errors, err)
		return
	}
	e.stored[b.tp] = offset + 1
	e.emit(traceevent.Event{Ev: traceevent.Store, Topic: b.tp.Topic, Partition: traceevent.P(b.tp.Partition), Offset: traceevent.P(offset + 1)})
	if e.s.Policy != V1_10_0 {
		// 1.10.1 records the last consumed offset here; 1.10.0 does not, which is the bug.
		e.lastConsumed[b.tp] = lastConsumed{offset: offset, leaderEpoch: epoch}
	}
}

// Seek is the public seek(): it marks the partition's batch stale and queues the seek
// as a pending operation.
func (e *Engine) Seek(tp kpart.TopicPartition, offset int64, epoch int32, reason string) {
	if b := e.inflight[tp]; b != nil {
		b.stale, b.seeked = true, true
	}
	e.addPendingOp(pendingOp{name: "seek", run: func() { e.seekInternal(tp, offset, epoch, reason) }})
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
	if e.expiryTimer != nil {
		e.expiryTimer.Stop()
		e.expiryTimer = nil
	}
	if e.maxPollTimer != nil {
		e.maxPollTimer.Stop()
		e.maxPollTimer = nil
	}
	e.runPendingOps()
}

func (e *Engine) runPendingOps() {
	for len(e.pendingOps) > 0 {
		op := e.pendingOps[0]
		e.pendingOps = e.pendingOps[1:]
		op.run()
	}
	e.l.Post(e.newGeneration)
}

type pendingOp struct {
	name string
	run  func()
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
	e.l.Post(e.notifyNonEmpty)
}

// NotifyNonEmpty is librdkafka's queue-non-empty callback (#queueNonEmptyCb): sources
// call it (posted on the loop) when records arrive after an empty consume.
func (e *Engine) NotifyNonEmpty() { e.notifyNonEmpty() }

func (e *Engine) notifyNonEmpty() {
	if e.nonEmpty {
		e.nonEmpty = false
		ws := e.nonEmptyWaits
		e.nonEmptyWaits = nil
		for _, w := range ws {
			w := w
			e.l.Post(func() { e.step(w) })
		}
	}
	e.notifyAvailable()
}

func (e *Engine) notifyAvailable() {
	ws := e.availWaiters
	e.availWaiters = nil
	for _, w := range ws {
		w := w
		e.l.Post(func() { e.step(w) })
	}
}

// armExpiry (re)starts #cacheExpirationLoop's wait.
func (e *Engine) armExpiry(d time.Duration) {
	if e.expiryTimer != nil {
		e.expiryTimer.Stop()
	}
	gen := e.gen
	e.expiryTimer = e.l.After(d, func() {
		e.expiryTimer = nil
		if gen == e.gen {
			e.expiryTick()
		}
	})
}

// restartExpiry is #maxPollIntervalRestart.resolve(): the expiry loop re-evaluates now.
func (e *Engine) restartExpiry() {
	if e.expiryTimer != nil {
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
		gen := e.gen
		e.maxPollTimer = e.l.After(wait, func() {
			e.maxPollTimer = nil
			if gen != e.gen {
				return
			}
			for _, b := range e.inflight {
				b.stale = true
			}
		})
		return
	}
	if now.After(maxFetch) {
		// The valve: keep fetching even when nothing arrives.
		if now.Sub(e.lastSpinFlush) >= max(e.s.FetchValve, time.Second) {
			e.flushSpin()
		}
		e.notifyNonEmpty()
	}
	awake := cacheExp
	if maxFetch.Before(awake) {
		awake = maxFetch
	}
	wait := awake.Sub(now)
	if wait < e.s.MinWake {
		wait = e.s.MinWake
	}
	e.armExpiry(wait)
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
		case has && e.s.Policy == V1_10_0:
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

// seekInternal is #seekInternal: forget last-consumed, drop the partition's cache,
// seek librdkafka, and, in auto-commit mode, commit the offset sought.
func (e *Engine) seekInternal(tp kpart.TopicPartition, offset int64, epoch int32, reason string) {
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

func (e *Engine) flushSpin() {
	if e.emptyReads == 0 && e.emptyFetches == 0 {
		return
	}
	ev := traceevent.Event{Ev: traceevent.Spin, EmptyReads: e.emptyReads, EmptyFetches: e.emptyFetches}
	if !e.lastSpinFlush.IsZero() {
		ev.WindowMs = traceevent.P(ms(e.l.Now().Sub(e.lastSpinFlush)))
	}
	e.emit(ev)
	e.emptyReads, e.emptyFetches = 0, 0
	e.lastSpinFlush = e.l.Now()
}

// Quiescent reports whether nothing is left to deliver: the cache is empty, no batch is
// in flight, no operation is pending, the last fetch returned nothing and the source is
// at its end.
func (e *Engine) Quiescent() bool {
	return e.running && e.cache.size == 0 && len(e.inflight) == 0 && len(e.pendingOps) == 0 &&
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
	st := Status{Cached: e.cache.size, InFlight: len(e.inflight)}
	for _, d := range e.delivered {
		st.Delivered += len(d)
	}
	if !e.terminating && !e.lastFetch.IsZero() {
		st.UntilClear = e.lastFetch.Add(e.s.MaxPollInterval).Sub(e.l.Now())
		if st.UntilClear < 0 {
			st.UntilClear = 0
		}
	}
	return st
}

// Delivered returns, per partition, how many times each offset reached the handler.
func (e *Engine) Delivered() map[kpart.TopicPartition]map[int64]int {
	out := make(map[kpart.TopicPartition]map[int64]int, len(e.delivered))
	for tp, d := range e.delivered {
		m := make(map[int64]int, len(d))
		for o, n := range d {
			m[o] = n
		}
		out[tp] = m
	}
	return out
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
