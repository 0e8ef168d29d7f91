package repro

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/workload"
)

// ProduceResult is what the producer wrote, from its own delivery reports.
type ProduceResult struct {
	Topic      string
	Spec       workload.Spec
	Partitions []ProducedPartition // sorted by partition
	Elapsed    time.Duration
}

// ProducedPartition is one partition's records.
type ProducedPartition struct {
	Partition int32
	Offsets   []int64 // offset of every record, from the delivery reports
	High      int64   // the partition's high watermark once the workload was written
}

// First offset written.
func (p ProducedPartition) First() int64 { return p.Offsets[0] }

// Last offset written.
func (p ProducedPartition) Last() int64 { return p.Offsets[len(p.Offsets)-1] }

// Records is the number of records written.
func (p ProduceResult) Records() int {
	n := 0
	for _, pp := range p.Partitions {
		n += len(pp.Offsets)
	}
	return n
}

// clientDefaults apply to every librdkafka client kstranded creates; the user's
// properties override them.
var clientDefaults = map[string]string{
	"client.id": "kstranded",
	// KIP-714 client metrics: not every broker (kfake) implements them.
	"enable.metrics.push": "false",
}

// clientConfig is the properties of one librdkafka client, for kafkaconf.NewProducer
// and NewConsumer. It checks the client key first, so a wrong ssl.key.password is named
// as such rather than as librdkafka's "ssl.key.location failed: ... PEM lib".
func clientConfig(cfg kafkaconf.Config, owned map[string]string) (map[string]string, error) {
	if err := cfg.CheckKey(); err != nil {
		return nil, err
	}
	return cfg.Merged(clientDefaults, owned), nil
}

// Produce writes the workload: with spec.Transactions > 0, one transaction after the
// other (transactional.id, idempotence, acks=all), each committed before the next
// begins, so every partition holds its chunks in order, each followed by a commit
// marker; with 0, plain records (idempotence, acks=all). It reports each record's
// offset and, per partition, the high watermark once it is past the last record (and
// its marker).
func Produce(ctx context.Context, cfg kafkaconf.Config, topic string, spec workload.Spec, txnID string, timeout time.Duration) (ProduceResult, error) {
	start := time.Now()
	props := map[string]string{"enable.idempotence": "true", "acks": "all"}
	if spec.Transactions > 0 {
		props["transactional.id"] = txnID
		props["transaction.timeout.ms"] = fmt.Sprint(max(60000, int(timeout/time.Millisecond)))
	}
	cm, err := clientConfig(cfg, props)
	if err != nil {
		return ProduceResult{}, err
	}
	p, err := kafkaconf.NewProducer(cm)
	if err != nil {
		return ProduceResult{}, fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	var berrs brokerErrors
	go berrs.drain(p.Events())
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	txn := spec.Transactions > 0
	if txn {
		if err := p.InitTransactions(tctx); err != nil {
			return ProduceResult{}, reachError(cfg.Brokers, "init transactions", err, tctx, berrs.last())
		}
	}
	total := spec.Total()
	offsets := map[int32][]int64{}
	seq := 0
	for ti, tx := range spec.Layout() {
		if txn {
			if err := p.BeginTransaction(); err != nil {
				return ProduceResult{}, fmt.Errorf("begin transaction %d: %w", ti+1, err)
			}
		}
		n := 0
		for _, part := range tx {
			n += part.Records
		}
		reports := make(chan kafka.Event, n)
		for _, part := range tx {
			for i := 0; i < part.Records; i++ {
				err := p.Produce(&kafka.Message{
					TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part.Partition},
					Key:            []byte(fmt.Sprintf("k%d", seq)),
					Value:          []byte(fmt.Sprintf("kstranded record %d of %d", seq, total)),
				}, reports)
				if err != nil {
					if txn {
						_ = p.AbortTransaction(tctx)
					}
					return ProduceResult{}, fmt.Errorf("produce record %d: %w", seq, err)
				}
				seq++
			}
		}
		for got := 0; got < n; {
			select {
			case ev := <-reports:
				m, ok := ev.(*kafka.Message)
				if !ok {
					continue
				}
				if m.TopicPartition.Error != nil {
					if txn {
						_ = p.AbortTransaction(tctx)
					}
					return ProduceResult{}, fmt.Errorf("delivery: %w", m.TopicPartition.Error)
				}
				offsets[m.TopicPartition.Partition] = append(offsets[m.TopicPartition.Partition], int64(m.TopicPartition.Offset))
				got++
			case <-tctx.Done():
				return ProduceResult{}, fmt.Errorf("produce: records of transaction %d not acknowledged before --timeout %s: %w", ti+1, timeout, tctx.Err())
			}
		}
		if txn {
			if err := p.CommitTransaction(tctx); err != nil {
				return ProduceResult{}, fmt.Errorf("commit transaction %d: %w", ti+1, err)
			}
		}
	}
	res := ProduceResult{Topic: topic, Spec: spec}
	for _, part := range spec.Parts {
		offs := offsets[part.Partition]
		slices.Sort(offs)
		// A commit marker is written to the partition after CommitTransaction returns
		// (the coordinator writes markers asynchronously): wait until the partition's end
		// is past it, so the high watermark we report (and phases wait for) is the real one.
		want := offs[len(offs)-1] + 1
		if txn {
			want++
		}
		high, err := waitHigh(tctx, p, topic, part.Partition, want, timeout)
		if err != nil {
			return ProduceResult{}, err
		}
		res.Partitions = append(res.Partitions, ProducedPartition{Partition: part.Partition, Offsets: offs, High: high})
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// ProduceEach writes one non-transactional record to each partition and returns, per
// partition, its offset and the new high watermark.
func ProduceEach(ctx context.Context, cfg kafkaconf.Config, topic string, partitions []int32, timeout time.Duration) (map[int32]int64, map[int32]int64, error) {
	cm, err := clientConfig(cfg, map[string]string{"acks": "all"})
	if err != nil {
		return nil, nil, err
	}
	p, err := kafkaconf.NewProducer(cm)
	if err != nil {
		return nil, nil, fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	var berrs brokerErrors
	go berrs.drain(p.Events())
	reports := make(chan kafka.Event, len(partitions))
	for _, part := range partitions {
		if err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part},
			Value:          []byte("kstranded phase 2 record"),
		}, reports); err != nil {
			return nil, nil, err
		}
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	offs, highs := map[int32]int64{}, map[int32]int64{}
	for len(offs) < len(partitions) {
		select {
		case ev := <-reports:
			m, ok := ev.(*kafka.Message)
			if !ok {
				continue
			}
			if m.TopicPartition.Error != nil {
				return nil, nil, fmt.Errorf("delivery: %w", m.TopicPartition.Error)
			}
			offs[m.TopicPartition.Partition] = int64(m.TopicPartition.Offset)
		case <-tctx.Done():
			return nil, nil, reachError(cfg.Brokers, "produce", tctx.Err(), tctx, berrs.last())
		}
	}
	for _, part := range partitions {
		high, err := waitHigh(tctx, p, topic, part, offs[part]+1, timeout)
		if err != nil {
			return nil, nil, err
		}
		highs[part] = high
	}
	return offs, highs, nil
}

// EnsureTopic creates the topic if it does not exist.
func EnsureTopic(ctx context.Context, cfg kafkaconf.Config, topic string, partitions int32, timeout time.Duration) error {
	a, berrs, closeAdmin, err := newAdmin(cfg)
	if err != nil {
		return err
	}
	defer closeAdmin()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	md, err := a.GetMetadata(&topic, false, int(timeout/time.Millisecond))
	if err != nil {
		return reachError(cfg.Brokers, "metadata", err, tctx, berrs.last())
	}
	if t, ok := md.Topics[topic]; ok && t.Error.Code() == kafka.ErrNoError && len(t.Partitions) > 0 {
		return nil
	}
	res, err := a.CreateTopics(tctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: int(partitions), ReplicationFactor: -1}})
	if err != nil {
		return reachError(cfg.Brokers, "create topic", err, tctx, berrs.last())
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError && r.Error.Code() != kafka.ErrTopicAlreadyExists {
			return fmt.Errorf("create topic %s: %w", topic, r.Error)
		}
	}
	return nil
}

// DeleteTopic deletes a topic created for a run.
func DeleteTopic(ctx context.Context, cfg kafkaconf.Config, topic string, timeout time.Duration) error {
	a, _, closeAdmin, err := newAdmin(cfg)
	if err != nil {
		return err
	}
	defer closeAdmin()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := a.DeleteTopics(tctx, []string{topic})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return r.Error
		}
	}
	return nil
}

// newAdmin returns an admin client derived from a producer, whose event channel carries
// the errors of the client's broker connections (a plain AdminClient has no event
// channel, so it could only say "Broker transport failure"). done closes both.
func newAdmin(cfg kafkaconf.Config) (a *kafka.AdminClient, berrs *brokerErrors, done func(), err error) {
	cm, err := clientConfig(cfg, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := kafkaconf.NewProducer(cm)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("admin client: %w", err)
	}
	berrs = &brokerErrors{}
	go berrs.drain(p.Events())
	a, err = kafka.NewAdminClientFromProducer(p)
	if err != nil {
		p.Close()
		return nil, nil, nil, fmt.Errorf("admin client: %w", err)
	}
	return a, berrs, func() { a.Close(); p.Close() }, nil
}

// reachError names the brokers when an operation could not complete: the most common
// cause is an unreachable or misconfigured (TLS/SASL) bootstrap address. lastBroker is
// the last connection error librdkafka reported (a TLS alert, an authentication
// failure), which says why; "" if none.
func reachError(brokers, op string, err error, ctx context.Context, lastBroker string) error {
	why := ""
	if lastBroker != "" {
		why = "; last broker error: " + lastBroker
		if h := kafkaconf.TLSHint(lastBroker); h != "" {
			why = "; " + h + why
		}
	}
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		switch kerr.Code() {
		case kafka.ErrTransport, kafka.ErrAllBrokersDown, kafka.ErrTimedOut, kafka.ErrTimedOutQueue, kafka.ErrResolve, kafka.ErrSsl, kafka.ErrAuthentication:
			return fmt.Errorf("%s: cannot reach brokers %s: %w%s", op, brokers, err, why)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: no answer from brokers %s within --timeout: %w%s", op, brokers, err, why)
	}
	return fmt.Errorf("%s (brokers %s): %w%s", op, brokers, err, why)
}

// brokerErrors keeps the last connection error a librdkafka client reported on its
// event channel, for reachError. "All brokers down" is not kept: it is the consequence,
// not the cause.
type brokerErrors struct {
	mu  sync.Mutex
	msg string
}

func (b *brokerErrors) drain(ch chan kafka.Event) {
	for ev := range ch {
		e, ok := ev.(kafka.Error)
		if !ok || e.Code() == kafka.ErrAllBrokersDown {
			continue
		}
		b.mu.Lock()
		b.msg = strings.TrimSpace(e.Error())
		b.mu.Unlock()
	}
}

func (b *brokerErrors) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.msg
}

// waitHigh polls the partition's high watermark until it reaches at least want, bounded
// by ctx; it returns the high watermark seen.
func waitHigh(ctx context.Context, p *kafka.Producer, topic string, partition int32, want int64, timeout time.Duration) (int64, error) {
	for {
		left := timeout
		if d, ok := ctx.Deadline(); ok {
			left = time.Until(d)
		}
		if left < time.Millisecond {
			left = time.Millisecond
		}
		_, high, err := p.QueryWatermarkOffsets(topic, partition, int(left/time.Millisecond))
		if err != nil {
			return 0, fmt.Errorf("watermarks of %s/%d: %w", topic, partition, err)
		}
		if high >= want {
			return high, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("high watermark of %s/%d stayed at %d, below %d, until --timeout: %w", topic, partition, high, want, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ClusterID returns the cluster's ID (used to recognise the embedded broker behind
// --brokers, e.g. `kstranded broker`).
func ClusterID(ctx context.Context, cfg kafkaconf.Config, timeout time.Duration) (string, error) {
	a, berrs, closeAdmin, err := newAdmin(cfg)
	if err != nil {
		return "", err
	}
	defer closeAdmin()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := a.ClusterID(tctx)
	if err != nil {
		return "", reachError(cfg.Brokers, "cluster id", err, tctx, berrs.last())
	}
	return id, nil
}

// GroupCommitted reads a group's committed offsets on topic with an admin client of
// its own: it answers after the group's consumer closed, so it sees the commit that
// close made (librdkafka commits what is stored when a consumer closes). topic "": every
// topic the group has offsets on. The read is inspect's (CommittedOffsets, the one
// reader of committed offsets on the cluster's side): -1 is no committed offset, a group
// the coordinator does not know is inspect.ErrGroupNotFound.
func GroupCommitted(ctx context.Context, cfg kafkaconf.Config, group, topic string, timeout time.Duration) (map[kpart.TopicPartition]int64, error) {
	opts, err := cfg.KgoOpts()
	if err != nil {
		return nil, err
	}
	k, err := inspect.NewKafka(opts, timeout)
	if err != nil {
		return nil, err
	}
	defer k.Close()
	gs, err := k.CommittedOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("committed offsets of group %s (brokers %s): %w", group, cfg.Brokers, err)
	}
	g := gs[group]
	if g.Err != nil {
		return nil, g.Err
	}
	for tp, e := range g.Failed {
		if topic == "" || tp.Topic == topic {
			return nil, fmt.Errorf("committed offset of %s: %w", tp, e)
		}
	}
	out := map[kpart.TopicPartition]int64{}
	for tp, o := range g.Offsets {
		if topic == "" || tp.Topic == topic {
			out[tp] = o.Offset
		}
	}
	return out, nil
}
