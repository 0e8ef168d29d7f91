// Package eachbatch models the kafkajs-compatible eachBatch consumer of
// confluent-kafka-javascript (lib/kafkajs/_consumer.js and _consumer_cache.js, versions
// 1.8.0 to 1.10.1 and the reporter's patch; Releases and docs/releases.md map every
// release from 0.2.0 to its rule), closely enough that the same settings give the same
// outcome: which records reach the handler, which offsets are stored, what the
// cache expiry clears and where the fetch position is (or is not) rewound.
//
// The engine runs on an injected event loop (internal/loop) and reads records from an
// injected Source, so the same code runs live over librdkafka (confluent-kafka-go) on the
// wall clock, and in tests over a simulated partition log on virtual time, where the
// seed's full 15-minute scenario takes milliseconds and is deterministic.
//
// The engine covers the per-partition message cache, the workers serving eachBatch or
// eachMessage, the adaptive fetch size, the queue-non-empty wait and its valve, the cache
// expiry loop, pending operations, the clear with each release's rewind rule, handler
// errors, the client's manual commit (commitOffsetsIfNecessary), and rebalances (with
// simkafka.Group as the source). What is modelled, with the JS names, and what the model
// still leaves out (pause/resume, commits of explicit offsets, live member ordering,
// librdkafka internals, ...) is in docs/model.md.
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
	//
	// The engine keeps the slice (its cache and batches share its array): a Source
	// returns a new one each call and does not change it afterwards.
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
