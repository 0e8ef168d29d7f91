// Package eachbatch models the kafkajs-compatible eachBatch consumer of
// confluent-kafka-javascript (lib/kafkajs/_consumer.js and _consumer_cache.js, versions
// 1.8.0 to 1.10.1 and the reporter's patch; Releases and docs/releases.md map every release from 0.2.0 to its rule), closely enough that the same settings give
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
// Rebalances (rebalance.go, with a managed simkafka.Group as the source): the rebalance
// callback (#rebalanceCallback) served from inside a consume call, #unassign as a
// pending operation (EAGER: unassign() and MessageCache.clear(); COOPERATIVE:
// incrementalUnassign and markStale of the revoked partitions only), worker respawn
// when max(1, min(concurrency, partitions)) changes, and a new generation restarting
// the expiry clock. simkafka.Group models librdkafka's side: roundrobin (the JS default
// under the classic protocol) or a sticky balanced target (consumer protocol), the
// max.poll.interval.ms leave (librdkafka is given twice the JS value, #finalizedConfig)
// with a lost assignment that commits nothing and a rejoin at the next poll, commits on
// unassign, a new owner starting at the committed offset, and librdkafka's join state
// wait-unassign-call under the classic protocol (seen live with -X debug=cgrp,
// BENCHMARKS.md): a member with a revoke to serve auto-commits nothing, and its close()
// sends LeaveGroup before the unassign's commit, which the broker refuses (Unknown
// member), so a member leaving soon after a join hands over at older offsets.
//
// What the model still does not cover:
//   - in live runs, which member gets which partition: `kstranded repro --members N`
//     and `--rebalance-at TIME:join|leave` run each member's engine on its own
//     librdkafka client with every rebalance through RebalanceCallback (the unassign
//     deferred as a pending operation; a joined member's engine starts unassigned and
//     gets its partitions through its callback; a partition assigned mid-run starts its
//     ledger at the committed offset, as simulated), but roundrobin orders members by
//     their random member id and the broker's consumer-protocol assignor is its own: the
//     outcome is the simulated one only when it does not depend on the owner (see
//     repro's TestLiveAndSimulatedAgreeWhenAMemberJoins and BENCHMARKS.md);
//   - in the simulated group: the rebalance timeout (an eager rebalance waits for every
//     member to unassign, however long), session timeouts, static membership, member
//     order by member id (roundrobin deals partitions in join order here), a user
//     rebalance_cb, pending seeks applied on assign (#assignAsPerSeekedOffsets), and
//     whether the broker accepts commits sent with a stale generation (all refused here);
//   - pause/resume by the application, heartbeat() and commitOffsetsIfNecessary(),
//     manual commitOffsets() from the handler (only resolveOffset is modeled);
//   - a handler that throws on every attempt (FailAt throws once per offset and
//     partition), and handler time that varies per record;
//   - the queue-non-empty callback in live runs: confluent-kafka-go v2.11.1 offers no
//     faithful equivalent of queue_non_empty_cb (repro/source.go says why), so live
//     workers waiting for records are woken by the expiry loop's valve (FetchValve)
//     only. Each wait is a wake trace event; measured by bench/wake.sh (`kstranded
//     repro --trace` on the embedded broker at scale 0.01, 12 runs of 4 shapes, see
//     BENCHMARKS.md "Live wake-up"): 17 to 24 waits per run, 2 or 3 of which ended with
//     records, all at a valve tick. Those records arrived at most one valve period
//     before the wake: 10.0 to 12.6 ms scaled (1.0 to 1.26 s unscaled) after the later
//     of the wait's start and the last produce, median 5.6 to 10.2 ms (raw wait
//     lengths reach 21 s unscaled, but only across the pause between two phases, when
//     the loop stops and no record exists yet). So a live run fetches at most about
//     one second (unscaled) later than the JS client would, at the start and after
//     each produce; verdicts and lost ranges matched `kstranded simulate` in 11 of 12
//     runs; in the 12th librdkafka returned partition 1 first, and the simulation of
//     that order (simkafka.Client.StartAt = 1) gives its outcome;
//   - librdkafka internals: fetch requests, fetch.max.bytes, record-batch boundaries
//     and broker errors (the Source stands for them; the simulated one interleaves
//     partitions in runs of a fixed number of records, see simkafka.Client.Chunk;
//     which partition the first consume call serves first is simkafka.Client.StartAt,
//     and repro.Simulate judges a single member's run over 2 to 8 partitions holding
//     data by every such order; runs of several members, and of more partitions, are
//     simulated with the lowest partition served first only).
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

// Rebalance is one rebalance event librdkafka serves to the rebalance callback from
// inside a consume call (ERR__ASSIGN_PARTITIONS or ERR__REVOKE_PARTITIONS).
type Rebalance struct {
	Assign     bool // false: revoke
	Partitions []kpart.TopicPartition
	// Lost is assignmentLost(): the partitions were taken away (max.poll.interval.ms
	// exceeded, session timeout) rather than given up; librdkafka then commits nothing
	// of them.
	Lost bool
}

// The rebalance protocols, as rebalanceProtocol() names them: the classic protocol with
// the roundrobin assignor the JS client defaults to is EAGER (every partition revoked
// at each rebalance); group.protocol=consumer (KIP-848) is COOPERATIVE (only the
// partitions that move are revoked).
const (
	Eager       = "EAGER"
	Cooperative = "COOPERATIVE"
)

// GroupSource is a Source in a consumer group, whose rebalance events the engine
// handles (Engine.RebalanceCallback) the way #rebalanceCallback does.
type GroupSource interface {
	Source
	// RebalanceProtocol is rebalanceProtocol(): Eager or Cooperative.
	RebalanceProtocol() string
	// GroupAssign is assign() (eager) or incrementalAssign() (cooperative).
	GroupAssign(tps []kpart.TopicPartition, incremental bool) error
	// GroupUnassign is unassign() (eager: every partition) or incrementalUnassign(tps).
	GroupUnassign(tps []kpart.TopicPartition, incremental bool) error
}
