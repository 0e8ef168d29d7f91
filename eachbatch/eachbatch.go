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
// The handlers (Settings.Handler): eachBatch (#batchProcessor, with eachBatchAutoResolve
// or a handler that calls resolveOffset after each round and stops at a stale payload)
// and eachMessage (#messageProcessor: one record at a time, MessageCache.next, with its
// own last-consumed bookkeeping: 1.10.0 records the entry before the handler runs,
// 1.10.1 after the offset is stored). A handler that throws (Settings.FailAt) makes the
// client seek back: to the batch's first record, or past its last resolved one, or to
// the message. A consume call can take time (Settings.ConsumeTime): the cache can
// then expire while a call collects, and the records it returns are given back
// (#returnMessages) with a last-consumed entry of first - 1.
//
// What the model still does not cover:
//   - rebalances: several members, the rebalance callback (#rebalanceCallback,
//     #unassign: the cache cleared on an eager revoke, marked stale per partition on
//     an incremental one under group.protocol=consumer), worker respawn on a new
//     partition count, and librdkafka leaving the group when its max.poll.interval.ms
//     (twice the configured value, #finalizedConfig) passes without a poll;
//   - pause/resume by the application, heartbeat() and commitOffsetsIfNecessary(),
//     manual commitOffsets() from the handler (only resolveOffset is modeled);
//   - a handler that throws on every attempt (FailAt throws once per offset and
//     partition), and handler time that varies per record;
//   - the queue-non-empty callback in live runs: the live source (repro/source.go)
//     wires no equivalent of queue_non_empty_cb from confluent-kafka-go, so live
//     workers waiting for records are woken by the expiry loop's valve (FetchValve)
//     only; the difference in timing was not measured;
//   - librdkafka internals: fetch requests, fetch.max.bytes, record-batch boundaries
//     and broker errors (the Source stands for them; the simulated one interleaves
//     partitions in runs of a fixed number of records, see simkafka.Client.Chunk).
//
// Where things are: settings.go (settings and policies), engine.go (workers, fetches,
// batches, pending operations), expiry.go (the cache expiry and the clear, where the
// loss happens), cache.go (the per-partition message cache).
package eachbatch

import (
	"github.com/kstranded/kstranded/internal/kpart"
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
