package repro

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

// rdSource is the live eachbatch.Source: a librdkafka consumer (confluent-kafka-go) in
// the run's group. All its methods run on the engine's loop goroutine, which is the
// only goroutine that touches the consumer (librdkafka callbacks are served in Poll).
type rdSource struct {
	c          *kafka.Consumer
	topic      string
	lostCount  int // assignments librdkafka revoked as lost (max.poll.interval.ms exceeded)
	assignment []kpart.TopicPartition
	// eof holds the offset of the last partition-EOF event seen for a partition since
	// its last record or seek (-1: none). Together with expect it tells when the
	// client has consumed everything there is (quiescence), without idle timers.
	eof    map[kpart.TopicPartition]int64
	expect map[kpart.TopicPartition]int64
	trace  func(traceevent.Event)
	now    func() (time.Time, float64)
	errs   []error
	fatal  error
	// troubleSince is when the client first reported an error since its last contact
	// with the cluster (a record, a partition EOF, a commit, a committed-offsets read);
	// zero while in contact. trouble is the last such error. A phase ends on them once
	// the absence outlasts --timeout (settle), instead of waiting for a quiescence a
	// dead broker never brings.
	troubleSince time.Time
	trouble      error
	lastContact  time.Time
	// unassignedSince is when the consumer lost its last partition (a revocation or a
	// lost assignment: session timeout, max.poll.interval exceeded); zero while it has
	// some. A consumer that never gets them back cannot finish a phase (see orphaned).
	unassignedSince time.Time
	// onAssign and onRevoke tell the application ledger about rebalances; they run in
	// Poll, on the loop goroutine.
	onAssign func(tps []kpart.TopicPartition)
	onRevoke func(tps []kpart.TopicPartition, lost bool)
	// onRebalance, once the engine runs, is its #rebalanceCallback: the engine assigns
	// at once and unassigns as a pending operation, through GroupAssign and
	// GroupUnassign. Before (waiting for the first assignment) and after (close) the
	// source assigns and unassigns itself: no engine, nothing cached.
	onRebalance func(eachbatch.Rebalance)
	// member names the consumer in traces when the group has several (empty: one).
	member      string
	groupCalled bool // the engine called GroupAssign or GroupUnassign in this callback
}

// consumerProps are the librdkafka settings the run owns, from the seed's consumer.
func consumerProps(o Options, group string, kfake bool) map[string]string {
	iso := "read_committed"
	if !o.ReadCommitted {
		iso = "read_uncommitted"
	}
	reset := "earliest"
	if !o.FromBeginning {
		reset = "latest"
	}
	fetchWait := o.FetchWaitMax
	if kfake && !o.FetchWaitMaxSet {
		// A broker holds an empty fetch for fetch.wait.max.ms (kfake and Kafka alike).
		// On kfake (embedded, or `kstranded broker`) the wait is cut to 10 ms to keep
		// runs short; on a user's cluster the scenario's value (the seed's 5 s) is kept.
		// The verdicts are the same either way (testenv/kafka/README.md).
		fetchWait = 10 * time.Millisecond
	}
	scaledPoll := o.scale(o.MaxPollInterval)
	// The JS client hands librdkafka twice the configured max.poll.interval.ms
	// (lib/kafkajs/_consumer.js: rdKafkaConfig['max.poll.interval.ms'] = maxPoll * 2);
	// librdkafka also requires it to be at least session.timeout.ms.
	rdPoll := 2 * scaledPoll
	protocol := o.groupProtocol()
	if protocol == kafkaconf.GroupProtocolClassic && rdPoll < o.SessionTimeout {
		rdPoll = o.SessionTimeout
	}
	autoCommit := o.scale(o.AutoCommitInterval)
	if autoCommit < time.Millisecond {
		autoCommit = time.Millisecond
	}
	m := map[string]string{
		"group.id":                 group,
		"isolation.level":          iso,
		"auto.offset.reset":        reset,
		"enable.auto.commit":       fmt.Sprint(o.AutoCommit && o.Commit == CommitAuto),
		"auto.commit.interval.ms":  fmt.Sprint(autoCommit.Milliseconds()),
		"enable.auto.offset.store": "false", // the JS client stores offsets itself
		"enable.partition.eof":     "true",  // quiescence evidence only
		"session.timeout.ms":       fmt.Sprint(o.SessionTimeout.Milliseconds()),
		"heartbeat.interval.ms":    fmt.Sprint(o.HeartbeatInterval.Milliseconds()),
		// kafkajs-compat maps maxBytesPerPartition to max.partition.fetch.bytes and then
		// maxBytes to fetch.message.max.bytes, an alias of the same property, so maxBytes
		// wins (lib/kafkajs/_consumer.js, #kafkaJSToConsumerConfig).
		"fetch.message.max.bytes": fmt.Sprint(o.MaxBytes),
		"fetch.wait.max.ms":       fmt.Sprint(max(1, fetchWait.Milliseconds())),
		"max.poll.interval.ms":    fmt.Sprint(rdPoll.Milliseconds()),
		// The assignor the JS client sets when the application names none
		// (lib/kafkajs/_consumer.js, #kafkaJSToConsumerConfig: roundrobin, as
		// simkafka.Group deals partitions); librdkafka's own default, range,roundrobin,
		// would give one member the first half of the partitions. range stays second so
		// that --allow-shared-group can still join a group whose other members only
		// speak range (the broker picks a protocol every member lists: roundrobin among
		// the run's own members, range with such strangers).
		"partition.assignment.strategy": "roundrobin,range",
	}
	// Under KIP-848 the broker owns the session timeout, heartbeat interval and
	// assignor: librdkafka refuses the classic settings (kafkaconf.ClassicOnly).
	return kafkaconf.ForGroupProtocol(protocol, m)
}

func newRDSource(cfg kafkaconf.Config, props map[string]string, topic string, trace func(traceevent.Event), now func() (time.Time, float64)) (*rdSource, error) {
	cm, err := clientConfig(cfg, props)
	if err != nil {
		return nil, err
	}
	c, err := kafkaconf.NewConsumer(cm)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	s := &rdSource{c: c, topic: topic, eof: map[kpart.TopicPartition]int64{}, expect: map[kpart.TopicPartition]int64{}, trace: trace, now: now,
		lastContact: time.Now()}
	if err := c.SubscribeTopics([]string{topic}, s.rebalance); err != nil {
		c.Close()
		return nil, fmt.Errorf("subscribe %s: %w", topic, err)
	}
	return s, nil
}

func (s *rdSource) emit(ev traceevent.Event) {
	ev.Time, ev.AtMs = s.now()
	if s.member != "" {
		ev.Member = s.member
	}
	s.trace(ev)
}

func tpsOf(ps []kafka.TopicPartition) []kpart.TopicPartition {
	out := make([]kpart.TopicPartition, 0, len(ps))
	for _, p := range ps {
		out = append(out, kpart.TopicPartition{Topic: *p.Topic, Partition: p.Partition})
	}
	return out
}

// kafkaTPs are partitions to assign or unassign. The offset is OFFSET_INVALID: an
// assignment then starts at the group's committed offset (the zero value, 0, would
// start it at offset 0).
func kafkaTPs(tps []kpart.TopicPartition) []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(tps))
	for _, tp := range tps {
		tp := tp
		out = append(out, kafka.TopicPartition{Topic: &tp.Topic, Partition: tp.Partition, Offset: kafka.OffsetInvalid})
	}
	return out
}

func (s *rdSource) rebalance(c *kafka.Consumer, ev kafka.Event) error {
	if s.onRebalance != nil {
		return s.rebalanceThroughEngine(c, ev)
	}
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		var err error
		if c.GetRebalanceProtocol() == "COOPERATIVE" {
			err = c.IncrementalAssign(e.Partitions)
		} else {
			err = c.Assign(e.Partitions)
		}
		var added []kpart.TopicPartition
		for _, p := range e.Partitions {
			tp := kpart.TopicPartition{Topic: *p.Topic, Partition: p.Partition}
			s.assignment = append(s.assignment, tp)
			s.unassignedSince = time.Time{}
			s.eof[tp] = -1
			added = append(added, tp)
		}
		if s.onAssign != nil {
			s.onAssign(added)
		}
		kpart.Sort(s.assignment)
		s.emit(traceevent.Event{Ev: traceevent.Assign, Topic: s.topic, N: len(e.Partitions), Partitions: partitionList(e.Partitions)})
		return err
	case kafka.RevokedPartitions:
		lost := c.AssignmentLost()
		if s.onRevoke != nil {
			// Before unassigning: a revoked partition may still commit its completed
			// frontier here, its last window; a lost one may not.
			var tps []kpart.TopicPartition
			for _, p := range e.Partitions {
				tps = append(tps, kpart.TopicPartition{Topic: *p.Topic, Partition: p.Partition})
			}
			s.onRevoke(tps, lost)
		}
		var err error
		if c.GetRebalanceProtocol() == "COOPERATIVE" {
			err = c.IncrementalUnassign(e.Partitions)
		} else {
			err = c.Unassign()
		}
		gone := map[kpart.TopicPartition]bool{}
		for _, p := range e.Partitions {
			gone[kpart.TopicPartition{Topic: *p.Topic, Partition: p.Partition}] = true
		}
		kept := s.assignment[:0]
		for _, tp := range s.assignment {
			if !gone[tp] {
				kept = append(kept, tp)
			}
		}
		s.assignment = kept
		if len(kept) == 0 {
			s.unassignedSince = time.Now()
		}
		reason := "revoked"
		if lost {
			reason = "lost"
		}
		s.emit(traceevent.Event{Ev: traceevent.Revoke, Topic: s.topic, N: len(e.Partitions), Reason: reason, Partitions: partitionList(e.Partitions)})
		return err
	}
	return nil
}

// rebalanceThroughEngine hands a rebalance to the engine's #rebalanceCallback, as the
// JS client's librdkafka rebalance callback does (lib/kafkajs/_consumer.js): an
// assignment is applied at once (GroupAssign), a revocation is queued as a pending
// #unassign that runs once the batches in flight have finished (GroupUnassign).
//
// librdkafka lets the application call unassign later: the group waits in
// wait-unassign-call until it does. confluent-kafka-go (kafka/consumer.go,
// handleRebalanceEvent, v2.11.1) however unassigns by itself after the callback unless
// the callback called one of the *Assign/*Unassign methods. To defer the unassign as
// the JS client does, the callback then makes the call of the other protocol with no
// partitions (IncrementalAssign under EAGER, Assign under COOPERATIVE): it marks the
// event handled, and librdkafka refuses it with __STATE before touching the assignment
// (rd_kafka_cgrp_handle_assign_op, src/rdkafka_cgrp.c), logging one ASSIGN warning.
func (s *rdSource) rebalanceThroughEngine(c *kafka.Consumer, ev kafka.Event) error {
	var rb eachbatch.Rebalance
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		rb = eachbatch.Rebalance{Assign: true, Partitions: tpsOf(e.Partitions)}
		if s.onAssign != nil {
			s.onAssign(rb.Partitions)
		}
		s.emit(traceevent.Event{Ev: traceevent.Assign, Topic: s.topic, N: len(e.Partitions), Partitions: partitionList(e.Partitions)})
	case kafka.RevokedPartitions:
		rb = eachbatch.Rebalance{Partitions: tpsOf(e.Partitions), Lost: c.AssignmentLost()}
		if s.onRevoke != nil {
			s.onRevoke(rb.Partitions, rb.Lost)
		}
		reason := "revoked"
		if rb.Lost {
			reason = "lost"
			s.lostCount++
		}
		s.emit(traceevent.Event{Ev: traceevent.Revoke, Topic: s.topic, N: len(e.Partitions), Reason: reason, Partitions: partitionList(e.Partitions)})
	default:
		return nil
	}
	s.groupCalled = false
	s.onRebalance(rb)
	if !s.groupCalled {
		if s.RebalanceProtocol() == eachbatch.Cooperative {
			_ = c.Assign(nil)
		} else {
			_ = c.IncrementalAssign(nil)
		}
	}
	return nil
}

// RebalanceProtocol implements eachbatch.GroupSource.
func (s *rdSource) RebalanceProtocol() string {
	if s.c.GetRebalanceProtocol() == "COOPERATIVE" {
		return eachbatch.Cooperative
	}
	return eachbatch.Eager
}

// GroupAssign implements eachbatch.GroupSource: assign() or incrementalAssign();
// librdkafka starts each partition at the group's committed offset.
func (s *rdSource) GroupAssign(tps []kpart.TopicPartition, incremental bool) error {
	s.groupCalled = true
	var err error
	if incremental {
		err = s.c.IncrementalAssign(kafkaTPs(tps))
	} else {
		err = s.c.Assign(kafkaTPs(tps))
		s.assignment = nil
	}
	for _, tp := range tps {
		if !slices.Contains(s.assignment, tp) {
			s.assignment = append(s.assignment, tp)
		}
		s.eof[tp] = -1
	}
	if len(tps) > 0 {
		s.unassignedSince = time.Time{}
	}
	kpart.Sort(s.assignment)
	return err
}

// GroupUnassign implements eachbatch.GroupSource: unassign() (every partition) or
// incrementalUnassign(tps). With auto-commit, librdkafka commits the stored offsets of
// what it removes, unless the assignment was lost.
func (s *rdSource) GroupUnassign(tps []kpart.TopicPartition, incremental bool) error {
	s.groupCalled = true
	var err error
	if incremental {
		err = s.c.IncrementalUnassign(kafkaTPs(tps))
	} else {
		err = s.c.Unassign()
		tps = s.Assignment()
	}
	kept := s.assignment[:0]
	for _, tp := range s.assignment {
		if !slices.Contains(tps, tp) {
			kept = append(kept, tp)
		}
	}
	s.assignment = kept
	if len(kept) == 0 {
		s.unassignedSince = time.Now()
	}
	return err
}

// waitAssigned polls until the group assigns partitions. Polling before the engine
// starts returns no records: fetching only begins once partitions are assigned, and
// the loop stops at the assignment.
func (s *rdSource) waitAssigned(ctx context.Context, brokers string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for len(s.assignment) == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			if lastErr != nil {
				if h := kafkaconf.TLSHint(lastErr.Error()); h != "" {
					return fmt.Errorf("no partition assignment from brokers %s within --timeout %s: %s: %w", brokers, timeout, h, lastErr)
				}
				return fmt.Errorf("no partition assignment from brokers %s within --timeout %s: %w", brokers, timeout, lastErr)
			}
			return fmt.Errorf("no partition assignment from brokers %s within --timeout %s", brokers, timeout)
		}
		switch e := s.c.Poll(50).(type) {
		case kafka.Error:
			lastErr = e
			if e.IsFatal() {
				return fmt.Errorf("consumer: %w", e)
			}
		case *kafka.Message:
			// Cannot happen before assignment; never drop a record silently if it does.
			return fmt.Errorf("consumer returned a record before assignment: %v", e.TopicPartition)
		}
	}
	return nil
}

// No queue-non-empty wake-up: the JS client enables librdkafka's callback event on the
// consumer queue (src/kafka-consumer.cc: rd_kafka_queue_cb_event_enable on
// rd_kafka_queue_get_consumer; lib/kafkajs/_consumer.js sets queue_non_empty_cb to
// #queueNonEmptyCb), which librdkafka calls when an op is enqueued on an empty queue
// (rdkafka.h), so workers awaiting #nonEmpty fetch as soon as records arrive. Live
// workers are woken only by the valve of #cacheExpirationLoop (FetchValve after the
// empty fetch), because confluent-kafka-go v2.11.1 offers no faithful equivalent:
//   - it calls none of rd_kafka_queue_cb_event_enable, rd_kafka_queue_io_event_enable or
//     rd_kafka_queue_length, and keeps the rd_kafka_t and the consumer queue
//     (handle.rk, handle.rkq) unexported; reaching them takes reflect and unsafe on
//     private fields plus cgo of our own against the bundled library: not offered, and
//     not safe to rely on;
//   - its channel consumer (go.events.channel.enable, deprecated) drains the queue
//     into a buffered Go channel from a goroutine of its own (consumerReader,
//     kafka/consumer.go), which also runs the rebalance callback there
//     (eventPoll -> handleRebalanceEvent, kafka/event.go), outside the engine's consume
//     call, and holds records a later seek would have purged (its documented "outdated
//     events and messages");
//   - a poll-based watcher must call Poll, which dequeues (there is no peek) and serves
//     rebalance events inside that poll, again outside the engine's consume call, and
//     would have to buffer records across seeks.
//
// The timing difference is measured (bench/wake.sh, BENCHMARKS.md "Live wake-up"): the
// engine traces every wait (the wake event), and in live runs a valve wake followed by
// records is one the JS client would have ended earlier.
//
// Consume implements eachbatch.Source like KafkaConsumerConsumeNum with a consume
// timeout of 0 and timeout-only-for-first-message: the first poll does not wait, later
// ones wait 1 ms, and it stops at the first empty poll.
func (s *rdSource) Consume(max int) ([]eachbatch.Record, error) {
	var out []eachbatch.Record
	timeout := 0
	for len(out) < max {
		ev := s.c.Poll(timeout)
		if ev == nil {
			break
		}
		switch e := ev.(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				// Like KafkaConsumerConsumeNum: an error ends the batch; with records
				// already taken it is not raised (they are returned), only recorded.
				if len(out) > 0 {
					s.errs = append(s.errs, e.TopicPartition.Error)
					return out, nil
				}
				return out, e.TopicPartition.Error
			}
			tp := kpart.TopicPartition{Topic: *e.TopicPartition.Topic, Partition: e.TopicPartition.Partition}
			epoch := int32(-1)
			if e.TopicPartition.LeaderEpoch != nil {
				epoch = *e.TopicPartition.LeaderEpoch
			}
			out = append(out, eachbatch.Record{TopicPartition: tp, Offset: int64(e.TopicPartition.Offset), LeaderEpoch: epoch, Size: len(e.Key) + len(e.Value)})
			s.eof[tp] = -1
			s.contact()
			timeout = 1
		case kafka.PartitionEOF:
			tp := kpart.TopicPartition{Topic: *e.Topic, Partition: e.Partition}
			s.eof[tp] = int64(e.Offset)
			s.contact()
			if len(out) > 0 {
				timeout = 1
			}
		case kafka.OffsetsCommitted:
			ce := traceevent.Event{Ev: traceevent.Commit, Reason: "auto"}
			if e.Error != nil {
				ce.Error = e.Error.Error()
				s.troubled(e.Error)
			} else {
				s.contact()
			}
			for _, p := range e.Offsets {
				if p.Offset >= 0 {
					ce.Committed = append(ce.Committed, traceevent.PartitionOffset{Partition: p.Partition, Offset: int64(p.Offset)})
				}
			}
			if len(ce.Committed) > 0 || ce.Error != "" {
				s.emit(ce)
			}
		case kafka.Error:
			if e.IsFatal() {
				s.fatal = e
				return out, e
			}
			s.errs = append(s.errs, e)
			s.troubled(e)
		}
	}
	return out, nil
}

// contact records evidence that the cluster answers.
func (s *rdSource) contact() {
	s.troubleSince, s.trouble, s.lastContact = time.Time{}, nil, time.Now()
}

// troubled records an error the client reported (all brokers down, a transport error,
// a session timeout, max.poll.interval exceeded, a failed commit).
func (s *rdSource) troubled(err error) {
	if s.troubleSince.IsZero() {
		s.troubleSince = time.Now()
	}
	s.trouble = err
}

// unreachable returns an error once the client has reported errors, with no contact
// since, for longer than limit. While in trouble it probes the coordinator with a
// committed-offsets read (bounded by probe): an answer is contact, so a transient error
// (a broker restart, a rebalance after max.poll.interval) never ends a phase.
//
// A frozen broker (SIGSTOP, a stalled host) keeps its connections open and makes the
// client report nothing for a long time (socket.timeout.ms, 60 s): a silence longer
// than probe is probed the same way, and a failed probe dates the trouble from the
// last contact.
func (s *rdSource) unreachable(limit, probe time.Duration) error {
	if s.troubleSince.IsZero() {
		if time.Since(s.lastContact) < probe {
			return nil
		}
		if _, err := s.committed(probe); err != nil {
			s.unanswered(fmt.Errorf("committed offsets unreadable: %w", err))
		}
		return nil
	}
	since := time.Since(s.troubleSince)
	if since < limit {
		// One probe, never past the limit: a probe that outlasts it is a failed one.
		if _, err := s.committed(min(probe, limit-since)); err == nil {
			s.contact()
			return nil
		} else if s.trouble == nil {
			s.trouble = err
		}
		since = time.Since(s.troubleSince)
	}
	if since >= limit {
		return fmt.Errorf("%w: no answer from the cluster for %s (a phase ends after half of --timeout); last error: %v", ErrUnreachable, since.Round(time.Millisecond), s.trouble)
	}
	return nil
}

// unanswered records a read the cluster did not answer: trouble since the last contact
// (not since now), so that the unreachable bound counts from when the cluster went
// quiet.
func (s *rdSource) unanswered(err error) {
	if s.troubleSince.IsZero() {
		s.troubleSince = s.lastContact
	}
	s.trouble = err
}

// silent says, once the run was interrupted or failed on another error (no assignment, a
// lost one), whether the cluster had stopped answering: no contact within probe (the
// client reported errors since, or heard nothing), and one probe, bounded by probe, got
// no answer either. The clean-up is then bounded as after an unreachable broker: a close
// and a read-back waiting --timeout each on a killed broker held the exit 11.8 s past the
// SIGINT at --timeout 5s (issue 27 §5); and a failure says ErrUnreachable (unreachableErr).
func (s *rdSource) silent(probe time.Duration) bool {
	if s.troubleSince.IsZero() && time.Since(s.lastContact) < probe {
		return false
	}
	tps := s.assignment
	if len(tps) == 0 {
		// nothing assigned (the wait for an assignment failed): a read of nothing asks
		// the cluster nothing, so the group's offset of the topic's first partition,
		// which the coordinator must answer all the same
		tps = []kpart.TopicPartition{{Topic: s.topic, Partition: 0}}
	}
	_, err := s.committedOf(tps, probe)
	return err != nil
}

// orphaned returns an error once the consumer has had no partition for longer than
// limit: under load librdkafka can lose the session (session timeout, then
// max.poll.interval exceeded) and, until it rejoins, nothing it owns can become
// quiescent; waiting for the derived phase timeout made runs outlast --timeout by
// minutes.
func (s *rdSource) orphaned(limit time.Duration) error {
	if s.unassignedSince.IsZero() || len(s.assignment) > 0 {
		return nil
	}
	if since := time.Since(s.unassignedSince); since >= limit {
		last := ""
		if s.trouble != nil {
			last = "; last error: " + s.trouble.Error()
		} else if n := len(s.errs); n > 0 {
			last = "; last error: " + s.errs[n-1].Error()
		}
		return fmt.Errorf("the consumer lost its partitions and was not assigned any again for %s (a phase ends after half of --timeout)%s", since.Round(time.Millisecond), last)
	}
	return nil
}

// Seek implements eachbatch.Source.
func (s *rdSource) Seek(tp kpart.TopicPartition, offset int64, epoch int32) error {
	s.eof[tp] = -1
	p := kafka.TopicPartition{Topic: &tp.Topic, Partition: tp.Partition, Offset: kafka.Offset(offset)}
	if epoch >= 0 {
		p.LeaderEpoch = &epoch
	}
	res, err := s.c.SeekPartitions([]kafka.TopicPartition{p})
	return firstPartitionError(res, err)
}

// StoreOffset implements eachbatch.Source.
func (s *rdSource) StoreOffset(tp kpart.TopicPartition, offset int64, epoch int32) error {
	p := kafka.TopicPartition{Topic: &tp.Topic, Partition: tp.Partition, Offset: kafka.Offset(offset)}
	if epoch >= 0 {
		p.LeaderEpoch = &epoch
	}
	res, err := s.c.StoreOffsets([]kafka.TopicPartition{p})
	return firstPartitionError(res, err)
}

// Commit implements eachbatch.Source.
func (s *rdSource) Commit(offsets map[kpart.TopicPartition]int64) error {
	ps := make([]kafka.TopicPartition, 0, len(offsets))
	ev := traceevent.Event{Ev: traceevent.Commit, Reason: "manual"}
	for tp, o := range offsets {
		tp := tp
		ps = append(ps, kafka.TopicPartition{Topic: &tp.Topic, Partition: tp.Partition, Offset: kafka.Offset(o)})
		ev.Committed = append(ev.Committed, traceevent.PartitionOffset{Partition: tp.Partition, Offset: o})
	}
	res, err := s.c.CommitOffsets(ps)
	err = firstPartitionError(res, err)
	if err != nil {
		ev.Error = err.Error()
		s.troubled(err)
	} else {
		s.contact()
	}
	s.emit(ev)
	return err
}

// CommitStored implements eachbatch.StoredCommitter: confluent-kafka-go's Commit(),
// rd_kafka_commit with no list, which commits the stored offsets of the assignment, as
// the JS client's commitOffsets() with no argument does (--commit manual). "No offset
// stored" (ERR__NO_OFFSET) is no error, as the JS client resolves it.
func (s *rdSource) CommitStored() error {
	res, err := s.c.Commit()
	if kerr, ok := err.(kafka.Error); ok && kerr.Code() == kafka.ErrNoOffset {
		return nil
	}
	err = firstPartitionError(res, err)
	ev := traceevent.Event{Ev: traceevent.Commit, Reason: "manual"}
	for _, p := range res {
		if p.Offset >= 0 && p.Error == nil {
			ev.Committed = append(ev.Committed, traceevent.PartitionOffset{Partition: p.Partition, Offset: int64(p.Offset)})
		}
	}
	if err != nil {
		ev.Error = err.Error()
		s.troubled(err)
	} else {
		s.contact()
	}
	s.emit(ev)
	return err
}

// firstPartitionError returns err, or the first per-partition error of a result: the
// client returns err == nil when only some partitions failed.
func firstPartitionError(res []kafka.TopicPartition, err error) error {
	if err != nil {
		return err
	}
	for _, p := range res {
		if p.Error != nil {
			return fmt.Errorf("%s/%d: %w", *p.Topic, p.Partition, p.Error)
		}
	}
	return nil
}

// Assignment implements eachbatch.Source.
func (s *rdSource) Assignment() []kpart.TopicPartition {
	return append([]kpart.TopicPartition(nil), s.assignment...)
}

// AtEnd implements eachbatch.Source: every assigned partition that should hold records
// has reported EOF at or past the end expected for this phase.
func (s *rdSource) AtEnd() bool {
	if len(s.assignment) == 0 {
		return false
	}
	for _, tp := range s.assignment {
		want := s.expect[tp]
		if want <= 0 {
			continue
		}
		if s.eof[tp] < want {
			return false
		}
	}
	return true
}

// committed reads the group's committed offsets of the assignment from the coordinator.
func (s *rdSource) committed(timeout time.Duration) (map[kpart.TopicPartition]int64, error) {
	return s.committedOf(s.assignment, timeout)
}

// name is the member's name for messages.
func (s *rdSource) name() string {
	if s.member == "" {
		return "the consumer"
	}
	return s.member
}

// committedOf reads the group's committed offsets of tps from the coordinator, as the
// member sees them: through its own client (librdkafka's Committed, on its coordinator
// connection), which is the view the scenario measures (what this consumer would resume
// from). It is deliberately not inspect.CommittedOffsets, the one reader from the
// cluster's side (an admin's OffsetFetch), which GroupCommitted uses after the members
// closed.
func (s *rdSource) committedOf(tps []kpart.TopicPartition, timeout time.Duration) (map[kpart.TopicPartition]int64, error) {
	ps := make([]kafka.TopicPartition, 0, len(tps))
	for _, tp := range tps {
		tp := tp
		ps = append(ps, kafka.TopicPartition{Topic: &tp.Topic, Partition: tp.Partition})
	}
	res, err := s.c.Committed(ps, int(timeout/time.Millisecond))
	if err != nil {
		return nil, err
	}
	s.contact()
	out := map[kpart.TopicPartition]int64{}
	for _, p := range res {
		// librdkafka says "no committed offset" with OFFSET_INVALID (-1001); the results
		// say -1, as the simulated client does.
		off := int64(p.Offset)
		if off < 0 {
			off = -1
		}
		out[kpart.TopicPartition{Topic: *p.Topic, Partition: p.Partition}] = off
	}
	return out, nil
}

// Pause stops fetching tp (back-pressure); librdkafka purges what it prefetched, so
// the client re-fetches from its position on Resume.
//
// confluent-kafka-go's Pause and Resume (kafka/consumer.go, v2.11.1) return only the
// call's error: rd_kafka_pause_partitions writes each partition's error into the C list,
// which the wrapper destroys without copying back, so the Go slice never carries one.
// The per-partition failure librdkafka reports is an unknown partition; the source
// checks that itself against its assignment.
func (s *rdSource) Pause(tp kpart.TopicPartition) error {
	return s.pauseResume("pause", tp, s.c.Pause)
}

// Resume resumes tp (see Pause for how errors are checked).
func (s *rdSource) Resume(tp kpart.TopicPartition) error {
	return s.pauseResume("resume", tp, s.c.Resume)
}

func (s *rdSource) pauseResume(op string, tp kpart.TopicPartition, f func([]kafka.TopicPartition) error) error {
	if !slices.Contains(s.assignment, tp) {
		return fmt.Errorf("%s %s: not assigned to this consumer", op, tp)
	}
	if err := f([]kafka.TopicPartition{{Topic: &tp.Topic, Partition: tp.Partition}}); err != nil {
		return fmt.Errorf("%s %s: %w", op, tp, err)
	}
	return nil
}

// EndEvidence is librdkafka's end-of-partition position (from the partition-EOF event),
// which lies past a trailing transaction marker.
func (s *rdSource) EndEvidence(tp kpart.TopicPartition) (int64, bool) {
	if o := s.eof[tp]; o >= 0 {
		return o, true
	}
	return 0, false
}

// close closes the consumer (librdkafka leaves the group and, with auto-commit, commits
// what is stored), bounded by timeout: a consumer whose brokers stopped answering is
// abandoned rather than waited for.
func (s *rdSource) close(timeout time.Duration) error {
	// Close serves a last revocation; nobody listens now, and the source unassigns it.
	s.onAssign, s.onRevoke, s.onRebalance = nil, nil, nil
	done := make(chan error, 1)
	go func() { done <- s.c.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("consumer close did not finish within %s: abandoned", timeout)
	}
}

func partitionList(ps []kafka.TopicPartition) []traceevent.PartitionState {
	out := make([]traceevent.PartitionState, len(ps))
	for i, p := range ps {
		out[i] = traceevent.PartitionState{Partition: p.Partition, Committed: -1}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}
