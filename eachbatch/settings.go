package eachbatch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Policy is what the cache clear does with the fetch position.
type Policy string

// The policies.
const (
	// V1_10_0 (also 1.8.0 to 1.9.1, see Releases): a partition is rewound only when it has a last-consumed
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
	// V1_7_0: 1.10.0's rules with 1.7.0's fetch size. #updateMaxMessageCacheSize
	// (_consumer.js 994-1014 of 1.7.0) rounds the per-worker estimate with Math.round
	// (line 1010) where 1.8.0 takes Math.ceil: a slow handler's estimate rounds to 0, and
	// the next fetch calls consume(0, cb), which KafkaConsumer.consume (lib/kafka-consumer.js
	// 477-504: `number && ...` is false for 0) turns into _consumeLoop: a background loop
	// that takes every record the client receives and hands each to a callback that
	// already resolved. The fetch throws (addMessages of one message object: not
	// iterable) before #saveFetchStats, so the estimate never changes again, and every
	// later consume(0) throws "Consume was already called" (src/kafka-consumer.cc 1354):
	// the consumer is wedged, delivering only what it had cached (1.8.0's #424 fixed it).
	V1_7_0 Policy = "v1.7.0"
	// PR518: 1.10.0 with upstream PR #518 (open): #eachBatchPayload_resolveOffsets records
	// the resolved offset in #lastConsumedOffsets ("mirroring #messageProcessor"), while the
	// clear still seeks to the entry itself (no + 1: the last resolved record is delivered
	// again) and #messageProcessor still sets it before the handler.
	PR518 Policy = "pr518"
	// V1_6_0 (1.3.1 to 1.6.0): 1.10.0's rules with the older machinery around them.
	// The fetch size doubles after two full fetches in a row (to at most 1024) and falls
	// to 80% of a short fetch (#increaseMaxSize, #decreaseMaxSize, _consumer.js 853-872 of
	// 1.6.0), and the clear resets it to 1 (314-315). eachBatch gets batches of 32:
	// #runInternal's `const maxBatchSize = 32` (1563); there is no
	// js.consumer.max.batch.size. A worker that took records when an operation is pending
	// drops them (#discardMessages, 1395-1410: a last-consumed entry of first - 1 where
	// there is none, nothing given back to the cache) and leaves its loop.
	V1_6_0 Policy = "v1.6.0"
	// V1_3_0 (1.2.0 and 1.3.0): v1.6.0's rules, fetch size, batches of 32 and
	// #discardMessages, with 1.3.0's way of waiting for records (_consumer.js of 1.3.0;
	// 1.3.1 replaced it). There is no #nonEmpty and no valve in #cacheExpirationLoop
	// (1449-1471: it sleeps until the expiry, at least 100 ms, restarted by a fetch). A
	// worker whose fetcher returned nothing (#worker 1394-1421) calls #nextFetchRetry
	// (1357-1379): it awaits the fetch in progress when there is one, and otherwise waits
	// on a timer of its own, Timer.withTimeout(1000, waiter), which only the
	// queue-non-empty callback ends early (#queueNonEmptyCb 1351-1355 resolves every
	// waiter): not a partition becoming available (#consumeCachedN returns null while a
	// partition is assigned, 996-1013, with no MessageCache.availablePartitions), not the
	// termination of the workers (#addPendingOperation 1663-1668 resolves
	// #workerTerminationScheduled only), so a pending operation waits for the timers.
	// Workers that reach the fetch together, all but the first awaiting its
	// #fetchInProgress, go on fetching one after another without pause while the fetches
	// come back empty (RetryWait, Engine.nextFetchRetry). #batchProcessor's end-of-batch
	// seek has no `!payload._seeked` check (1319): a batch the handler seeked is still
	// sought back to its first unresolved record.
	V1_3_0 Policy = "v1.3.0"
	// V1_0_0 (1.0.0): v1.3.0 (_consumer.js is byte-identical) with 1.0.0's
	// MessageCache.nextN (_consumer_cache.js 236-252): a batch that comes back shorter
	// than asked (or any, with no limit) takes the partition's last records, and the
	// partition is removed from the cache there and then (#removeEmptyPartition), not at
	// the worker's next call. The worker serving that batch holds no partition, so the
	// others fetch while it works, and records of the same partition fetched meanwhile
	// form a new partition cache that another worker can take: two workers handle one
	// partition at once (each batch registered under the partition's key in
	// #topicPartitionToBatchPayload, the later one replacing the earlier, and the first
	// to end deleting it). 1.2.0 removes a partition only once it is empty. eachMessage
	// (MessageCache.next) is 1.3.0's.
	V1_0_0 Policy = "v1.0.0"
	// V0_2_0 (0.2.0, 0.2.1 and 0.3.0): 1.0.0's rules, fetch size, batches of 32,
	// #discardMessages, MessageCache.nextN (a short batch lets go of the partition) and
	// end-of-batch seek without the _seeked check, with 0.x's way of waiting for records
	// (_consumer.js of 0.2.1, byte-identical in the three). The consume call waits for
	// its first record up to node-rdkafka's default consume timeout (ConsumeTimeout,
	// 1000 ms: lib/kafka-consumer.js 22, 144, 464; 0.x never calls
	// setDefaultConsumeTimeout(0), and #readyCb sets timeout-only-for-first-message, so
	// the rest come with 1 ms waits: src/workers.cc 820-875). There is no
	// queue-non-empty callback and no #nonEmpty: a worker that finds every cached
	// partition taken, or the fetch in progress, goes round again after 1 ms
	// (#nextFetchRetry 1266-1275: Timer.withTimeout(1)), which the model runs as a wait
	// for a partition to become available or for none to be held (Engine.step,
	// Engine.released), and fetches it with fetchBlocking. #cacheExpirationLoop
	// (1343-1368) has no valve; its wait also ends on the workers' termination.
	V0_2_0 Policy = "v0.2.0"
)

// Policies lists the policies in comparison order. Releases maps each client version to
// one (ParsePolicy).
var Policies = []Policy{V1_10_0, V1_10_1, Head, V1_7_0, PR518, V1_6_0, V1_3_0, V1_0_0, V0_2_0}

// rewindsToEntry: the clear seeks a partition with a last-consumed entry to the entry
// itself (1.10.0's #clearCacheAndResetPositions, line 346), not to entry + 1 (1.10.1).
func (p Policy) rewindsToEntry() bool {
	return p == V1_10_0 || p == V1_7_0 || p == PR518 || p == V1_6_0 || p == V1_3_0 || p == V1_0_0 || p == V0_2_0
}

// messageSetsBefore: #messageProcessor records the last-consumed entry before the
// handler runs (1.10.0 line 1339), not after the store (1.10.1 line 1377).
func (p Policy) messageSetsBefore() bool { return p.rewindsToEntry() }

// resolveRecords: #eachBatchPayload_resolveOffsets records the last-consumed entry
// (1.10.1 line 882, PR #518); 1.10.0 and earlier never do.
func (p Policy) resolveRecords() bool { return p == V1_10_1 || p == Head || p == PR518 }

// roundsEstimate: #updateMaxMessageCacheSize takes Math.round of the per-worker estimate
// (1.7.0), which can make the fetch size 0 (see V1_7_0).
func (p Policy) roundsEstimate() bool { return p == V1_7_0 }

// oldFetch: 1.6.0 and earlier: the doubling fetch size, batches of 32, and taken records
// dropped when an operation is pending (see V1_6_0).
func (p Policy) oldFetch() bool { return p == V1_6_0 || p == V1_3_0 || p == V1_0_0 || p == V0_2_0 }

// retries: 1.3.0's wait for records (see V1_3_0): #nextFetchRetry's timer or the fetch
// in progress, no #nonEmpty, no valve, no MessageCache.availablePartitions.
func (p Policy) retries() bool { return p == V1_3_0 || p == V1_0_0 }

// blocks: 0.x's consume call waits for its first record (see V0_2_0, Engine.fetchBlocking).
func (p Policy) blocks() bool { return p == V0_2_0 }

// valve: #cacheExpirationLoop wakes the fetchers FetchValve after the last fetch (from
// 1.3.1); before, it sleeps until the expiry.
func (p Policy) valve() bool { return !p.retries() && !p.blocks() }

// releasesShort: MessageCache.nextN removes a partition whose batch came back short at
// once (1.0.0, see V1_0_0).
func (p Policy) releasesShort() bool { return p == V1_0_0 || p == V0_2_0 }

// seekedCheck: #batchProcessor skips its end-of-batch seek when the handler seeked the
// batch's partition (`!payload._seeked`, from 1.3.1).
func (p Policy) seekedCheck() bool { return p != V1_3_0 && p != V1_0_0 && p != V0_2_0 }

// oldBatchSize is eachBatch's batch size before js.consumer.max.batch.size (1.7.0).
const oldBatchSize = 32

// FixedBatchSize is the eachBatch batch size of a release without
// js.consumer.max.batch.size (1.6.0 and earlier: #runInternal's maxBatchSize, whatever
// the setting), 0 when the batch size is a setting or the handler is eachMessage (one
// record at a time: no batch to size).
func (p Policy) FixedBatchSize(h Handler) int {
	if p.oldFetch() && h != EachMessage {
		return oldBatchSize
	}
	return 0
}

// Handler is which run() callback the application gives the consumer.
type Handler string

// The handlers.
const (
	// EachBatch: config.eachBatch, served by #batchProcessor with up to
	// js.consumer.max.batch.size records of one partition (#consumeCachedN).
	EachBatch Handler = "each-batch"
	// EachMessage: config.eachMessage, served by #messageProcessor one record at a time
	// (#consumeSingleCached, MessageCache.next).
	EachMessage Handler = "each-message"
)

// Handlers lists the handlers in comparison order.
var Handlers = []Handler{EachBatch, EachMessage}

// ParseHandler parses a handler name (eachBatch and eachMessage, the JS names, too).
func ParseHandler(s string) (Handler, error) {
	switch strings.ReplaceAll(strings.ToLower(s), "-", "") {
	case "eachbatch", "batch":
		return EachBatch, nil
	case "eachmessage", "message":
		return EachMessage, nil
	}
	return "", fmt.Errorf("unknown handler %q (want each-batch or each-message)", s)
}

// Settings are the consumer settings that shape the outcome, with the seed's values as
// defaults (DefaultSettings). Durations are already scaled.
type Settings struct {
	Policy          Policy
	Handler         Handler       // eachBatch (the default, also when empty) or eachMessage
	Concurrency     int           // partitionsConsumedConcurrently
	BatchSize       int           // js.consumer.max.batch.size (-1: unbounded)
	MaxPollInterval time.Duration // max.poll.interval.ms; the cache expires this long after the last fetch
	HandlerDelay    time.Duration // time per record in eachBatch
	HandlerParallel int           // records processed at a time in eachBatch
	// Client internals, scaled with the rest.
	CacheSizePerWorker time.Duration // js.consumer.max.cache.size.per.worker.ms (1500 ms)
	FetchValve         time.Duration // the cache expiry loop wakes fetchers this long after a fetch (1 s)
	MinWake            time.Duration // the expiry loop never sleeps less than this (100 ms)
	// RetryWait is 1.3.0's #nextFetchRetry timer (Timer.withTimeout(1000, waiter)): how
	// long a worker that found nothing waits before it looks again (V1_3_0 and V1_0_0 only; 0: 1 s).
	RetryWait time.Duration
	// ConsumeTimeout is how long 0.x's consume call waits for its first record
	// (node-rdkafka's default consume timeout, 1000 ms; V0_2_0 only; 0: 1 s).
	ConsumeTimeout time.Duration
	// AutoResolve is eachBatchAutoResolve (true unless the application resolves offsets).
	// When false, the modeled eachBatch follows the kafkajs pattern of resolving
	// offsets itself: after each round of HandlerParallel records it calls
	// resolveOffset(last of the round), and it stops early (returns) once the payload
	// is stale (`if (!isRunning() || isStale()) break`).
	AutoResolve bool
	// ManualCommit is kafkaJS autoCommit: false with the idiom of upstream #476: the
	// eachBatch handler runs with eachBatchAutoResolve false, calls resolveOffset() for
	// every record it processed (after each round of HandlerParallel records, without
	// an isStale() check: it finishes the batch), and ends with
	// `await commitOffsetsIfNecessary()`, which in manual mode is commitOffsets() with
	// no argument: librdkafka commits the stored offsets of the assignment
	// (#eachBatchPayload_commitOffsetsIfNecessary, _consumer.js 892-901 in 1.10.0,
	// 898-907 in 1.10.1; commitOffsets 1697-1723 and 1706-1732). No auto-commit, and #seekInternal
	// commits nothing (CommitOnSeek must be false). eachBatch only: eachMessage has no
	// commitOffsetsIfNecessary.
	ManualCommit bool
	// PauseAt, when > 0, makes the handler call its payload's pause() once: at the first
	// round (eachBatch) or record (eachMessage) that starts at least PauseAt after the
	// consumer started, after which it goes on with its batch; ResumeAfter later the
	// function pause() returned is called (resume()). pause() marks the batch stale and
	// queues #pauseInternal as a pending operation: MessageCache.markStale drops the
	// partition's cached records, librdkafka pauses it (its fetch position stays past
	// what it returned), and the position is repaired by a seek to last-consumed + 1
	// only where #lastConsumedOffsets has an entry (_consumer.js pause 1978 / 1987,
	// #pauseInternal 1857-1881 / 1866-1890 in 1.10.0 / 1.10.1). 1.10.0's eachBatch never
	// records one (upstream #517): a handler that resolves its whole batch leaves no
	// repair, and the dropped records are never fetched again.
	PauseAt     time.Duration
	ResumeAfter time.Duration
	// PauseOutside makes PauseAt's pause the application's own call from outside the
	// handler (a timer, back-pressure): `consumer.pause([{topic}])` exactly PauseAt after
	// the consumer started, which pauses every assigned partition of the topic
	// (#getAllAssignedPartition), and the function it returned called ResumeAfter later.
	// The payload's pause() is the same function bound to the batch's partition
	// (_consumer.js 842 / 982 in 1.10.0, 988 in 1.10.1: `this.pause.bind(this, ...)`), so
	// the machinery is the same: #markBatchPayloadsStale marks the batch of each paused
	// partition in flight stale (mid-round: the handler goes on, the auto-resolve handler
	// to its end), #pauseInternal drops the partitions' cached records, served or not,
	// and repairs only where #lastConsumedOffsets has an entry; resume() queues
	// #resumeInternal. What differs is when and what: any moment, not a round's start,
	// and partitions whose records wait in the cache with no batch in flight (1.10.1 has
	// no entry for a partition none of whose batches was resolved yet either).
	PauseOutside bool
	// PausePartitions, with PauseOutside, names the partitions the application pauses:
	// `consumer.pause([{topic, partitions: [...]}])`, and the function it returned resumes
	// the same ones (resume() of the same list). Empty: the whole topic. pause() takes the
	// list as given (`toppar.partitions = [...topic.partitions]`, _consumer.js 1997 /
	// 2006 in 1.10.0 / 1.10.1; no check that they are assigned), so only the named partitions' batches in
	// flight go stale and only their cached records are dropped by #pauseInternal, which
	// repairs each of them where #lastConsumedOffsets has an entry; the other partitions
	// keep their cached records and their batches (the pending operation still stops every
	// worker at its batch's end, as any pending operation does). A named partition not
	// assigned at the pause is not modelled (the JS client hands it to librdkafka as it
	// is): the trace says so and it is left out.
	PausePartitions []int32
	// ExplicitCommit is the other manual-commit idiom (autoCommit false): the handler
	// commits an offset it names, `await consumer.commitOffsets([{topic, partition,
	// offset: last + 1}])` (commitOffsets with a list, _consumer.js 1697-1723 in 1.10.0,
	// 1706-1732 in 1.10.1: librdkafka commits exactly that offset, whatever is stored).
	// eachBatch: the ManualCommit handler (resolveOffset per round, no isStale() break)
	// with that call, for its batch's last record, in place of commitOffsetsIfNecessary();
	// eachMessage: after each record the handler processed, before #messageProcessor
	// stores its offset. #seekInternal commits nothing (CommitOnSeek must be false).
	ExplicitCommit bool
	// SeekAt, when > 0, makes the handler call consumer.seek({topic, partition, offset:
	// SeekTo}) once, on the partition it is handling: at the first round (eachBatch) or
	// record (eachMessage) that starts at least SeekAt after the consumer started; it then
	// goes on as it would without the seek (the auto-resolve and manual-commit handlers
	// finish the batch; the resolving handler, AutoResolve false, breaks at its next
	// isStale() check). seek() (_consumer.js 1906-1927 in 1.10.0, 1915-1936 in 1.10.1)
	// marks the partition's batch payload stale and seeked (#markBatchPayloadsStale with
	// isSeek, 1845 / 1854) and queues #seekInternal (1785-1843 / 1794-1852) as a pending
	// operation: it deletes the partition's last-consumed entry, drops its cached records
	// (MessageCache.markStale), seeks librdkafka to SeekTo and, with enable.auto.commit
	// on, commits SeekTo. A seeked batch is neither resolved by eachBatchAutoResolve (the
	// payload is stale: #batchProcessor 1414 / 1420) nor sought back at its end
	// (`!payload._seeked`, 1447 / 1453). The rules are the same text in both releases.
	SeekAt time.Duration
	SeekTo int64
	// Seeks are more seek() calls from the handler, each once, in the order given when
	// several fall due at the same round (SeekAt/SeekTo, when set, is the first): each
	// at the first round (record) starting at least At after the consumer started, of
	// whichever partition the handler is handling then. A seek of another partition than
	// the handler's (HandlerSeek.Partition) goes through the same public seek(): the
	// payload marked stale and seeked is that partition's batch in flight, if another
	// worker holds one (#markBatchPayloadsStale looks the payload up by the partition
	// sought), so the handler's own batch goes on unmarked and is resolved; #seekInternal
	// drops that partition's cached records, deletes its last-consumed entry, seeks it
	// and commits the offset. A seek backwards makes the client fetch the records again
	// (they are delivered again: no loss). A partition not assigned when #seekInternal
	// runs is kept by the JS client as a pending seek for a later assignment (1813 /
	// 1822, #pendingSeeks): not modelled, the trace says so and nothing is sought.
	Seeks []HandlerSeek
	// Heartbeat makes the eachBatch handler `await heartbeat()` after every round of
	// HandlerParallel records (the kafkajs idiom). In the kafkajs-compat client the
	// payload's heartbeat is `async () => { /* no op */ }` (_consumer.js 981 in 1.10.0,
	// 987 in 1.10.1; eachMessage's 841): it restarts neither the cache expiry nor
	// #checkMaxPollIntervalNotExceeded, both measured from the last fetch, so a handler
	// that heartbeats loses what one that does not loses. The model only traces the calls.
	Heartbeat bool
	// FailAt lists offsets at which the handler throws, the first time it reaches the
	// offset in each partition (a transient failure: the redelivered record succeeds).
	// eachBatch throws in the round holding the offset, after the earlier rounds;
	// eachMessage throws on that record.
	FailAt []int64
	// CommitOnSeek: #seekInternal commits the offset it seeks to, which the JS client
	// does only when enable.auto.commit is on.
	CommitOnSeek bool
	// ConsumeTime is how long one consume call takes to return (0: at once, the
	// simulated client's default). With a duration, the cache can expire while a call
	// is still collecting, which is the path where #returnMessages gives a partition a
	// last-consumed entry.
	ConsumeTime time.Duration
	// StepIdle steps through idle virtual time one valve tick at a time instead of
	// coalescing it (the outcome and the trace are the same; tests compare the two).
	StepIdle bool
}

// HandlerSeek is one consumer.seek({topic, partition, offset}) the handler calls
// (Settings.Seeks).
type HandlerSeek struct {
	// At: the handler calls it at its first round (record) starting at least this long
	// after the consumer started.
	At time.Duration
	// Partition: the partition sought; -1 is the handler's own (the batch's).
	Partition int32
	Offset    int64
}

// DefaultSettings are the seed's settings at scale 1.
func DefaultSettings() Settings {
	return Settings{
		Policy:             V1_10_0,
		Handler:            EachBatch,
		Concurrency:        20,
		BatchSize:          20,
		MaxPollInterval:    900 * time.Second,
		HandlerDelay:       40 * time.Second,
		HandlerParallel:    3,
		CacheSizePerWorker: 1500 * time.Millisecond,
		FetchValve:         time.Second,
		MinWake:            100 * time.Millisecond,
		RetryWait:          time.Second,
		ConsumeTimeout:     time.Second,
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
	if s.Handler != "" && s.Handler != EachBatch && s.Handler != EachMessage {
		errs = append(errs, fmt.Sprintf("unknown handler %q", s.Handler))
	}
	if s.Handler == EachMessage && !s.AutoResolve {
		errs = append(errs, "auto-resolve=false applies to eachBatch only (eachMessage resolves each record when the handler returns)")
	}
	if s.ManualCommit && s.Handler == EachMessage {
		errs = append(errs, "manual commit (resolveOffset, commitOffsetsIfNecessary) applies to eachBatch only: eachMessage's payload has no commitOffsetsIfNecessary")
	}
	if s.ExplicitCommit && s.CommitOnSeek {
		errs = append(errs, "explicit commit turns enable.auto.commit off, and with it #seekInternal's commit (CommitOnSeek)")
	}
	if s.ExplicitCommit && s.Handler != EachMessage && s.AutoResolve {
		errs = append(errs, "explicit commit with eachBatch is the manual handler's (eachBatchAutoResolve false): AutoResolve must be false")
	}
	if s.PauseOutside && s.PauseAt <= 0 {
		errs = append(errs, "a pause from outside the handler needs PauseAt > 0")
	}
	if len(s.PausePartitions) > 0 && !s.PauseOutside {
		errs = append(errs, "pause partitions name what the application pauses from outside the handler (PauseOutside); the payload's pause() pauses its own partition")
	}
	for i, p := range s.PausePartitions {
		if p < 0 || slices.Contains(s.PausePartitions[:i], p) {
			errs = append(errs, fmt.Sprintf("pause partitions %v: each a partition >= 0, named once", s.PausePartitions))
			break
		}
	}
	if s.ManualCommit && s.CommitOnSeek {
		errs = append(errs, "manual commit turns enable.auto.commit off, and with it #seekInternal's commit (CommitOnSeek)")
	}
	for _, o := range s.FailAt {
		if o < 0 {
			errs = append(errs, "handler-fail-at offsets must be >= 0")
			break
		}
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
	if s.PauseAt < 0 || s.ResumeAfter < 0 {
		errs = append(errs, "pause-at and resume-after must be >= 0")
	}
	if s.SeekAt < 0 {
		errs = append(errs, "seek-at must be >= 0")
	}
	for _, k := range s.Seeks {
		if k.At <= 0 || k.Offset < 0 || k.Partition < -1 {
			errs = append(errs, fmt.Sprintf("seek %+v: a time > 0, an offset >= 0 and a partition (-1: the handler's own)", k))
			break
		}
	}
	if s.SeekAt > 0 && s.SeekTo < 0 {
		errs = append(errs, "seek-to must be an offset >= 0")
	}
	if s.Heartbeat && s.Handler == EachMessage {
		errs = append(errs, "heartbeat applies to eachBatch only (the handler awaits heartbeat() after each round)")
	}
	if s.ConsumeTime < 0 {
		errs = append(errs, "consume time must be >= 0")
	}
	if s.CacheSizePerWorker <= 0 || s.FetchValve <= 0 || s.MinWake <= 0 || s.RetryWait < 0 || s.ConsumeTimeout < 0 {
		errs = append(errs, "client internal durations must be > 0")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// retryWait is RetryWait, 1 s when unset.
func (s Settings) retryWait() time.Duration {
	if s.RetryWait > 0 {
		return s.RetryWait
	}
	return time.Second
}

// EachMessage reports whether the handler is eachMessage.
func (s Settings) EachMessage() bool { return s.Handler == EachMessage }

// BatchDuration is how long the modeled handler takes for n records.
func (s Settings) BatchDuration(n int) time.Duration {
	rounds := (n + s.HandlerParallel - 1) / s.HandlerParallel
	return time.Duration(rounds) * s.HandlerDelay
}

// consumeTimeout is ConsumeTimeout, 1 s when unset.
func (s Settings) consumeTimeout() time.Duration {
	if s.ConsumeTimeout > 0 {
		return s.ConsumeTimeout
	}
	return time.Second
}
