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

	"github.com/kstranded/kstranded/internal/kafkaconf"
)

// ProduceResult is what the producer wrote, from its own delivery reports.
type ProduceResult struct {
	Topic     string
	Partition int32
	Offsets   []int64 // offset of every record, from the delivery reports
	High      int64   // the partition's high watermark after the commit
	Elapsed   time.Duration
}

// First and Last offsets written.
func (p ProduceResult) First() int64 { return p.Offsets[0] }

// Last offset written.
func (p ProduceResult) Last() int64 { return p.Offsets[len(p.Offsets)-1] }

// clientDefaults apply to every librdkafka client kstranded creates; the user's
// properties override them.
var clientDefaults = map[string]string{
	"client.id": "kstranded",
	// KIP-714 client metrics: not every broker (kfake) implements them.
	"enable.metrics.push": "false",
}

// clientConfig is the ConfigMap of one librdkafka client. It checks the client key
// first, so a wrong ssl.key.password is named as such rather than as librdkafka's
// "ssl.key.location failed: ... PEM lib".
func clientConfig(cfg kafkaconf.Config, owned map[string]string) (*kafka.ConfigMap, error) {
	if err := cfg.CheckKey(); err != nil {
		return nil, err
	}
	return kafkaconf.ConfigMap(cfg.Merged(clientDefaults, owned)), nil
}

// Produce writes n records to one partition in ONE transaction (transactional.id,
// idempotence, acks=all), commits, and reports each record's offset and the high
// watermark; the commit marker takes the offset after the last record.
func Produce(ctx context.Context, cfg kafkaconf.Config, topic string, partition int32, n int, txnID string, timeout time.Duration) (ProduceResult, error) {
	start := time.Now()
	cm, err := clientConfig(cfg, map[string]string{
		"transactional.id":       txnID,
		"enable.idempotence":     "true",
		"acks":                   "all",
		"transaction.timeout.ms": fmt.Sprint(max(60000, int(timeout/time.Millisecond))),
	})
	if err != nil {
		return ProduceResult{}, err
	}
	p, err := kafka.NewProducer(cm)
	if err != nil {
		return ProduceResult{}, fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	var berrs brokerErrors
	go berrs.drain(p.Events())
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := p.InitTransactions(tctx); err != nil {
		return ProduceResult{}, reachError(cfg.Brokers, "init transactions", err, tctx, berrs.last())
	}
	if err := p.BeginTransaction(); err != nil {
		return ProduceResult{}, fmt.Errorf("begin transaction: %w", err)
	}
	reports := make(chan kafka.Event, n)
	for i := 0; i < n; i++ {
		err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: partition},
			Key:            []byte(fmt.Sprintf("k%d", i)),
			Value:          []byte(fmt.Sprintf("kstranded record %d of %d", i, n)),
		}, reports)
		if err != nil {
			_ = p.AbortTransaction(tctx)
			return ProduceResult{}, fmt.Errorf("produce record %d: %w", i, err)
		}
	}
	offsets := make([]int64, 0, n)
	for len(offsets) < n {
		select {
		case ev := <-reports:
			m, ok := ev.(*kafka.Message)
			if !ok {
				continue
			}
			if m.TopicPartition.Error != nil {
				_ = p.AbortTransaction(tctx)
				return ProduceResult{}, fmt.Errorf("delivery: %w", m.TopicPartition.Error)
			}
			offsets = append(offsets, int64(m.TopicPartition.Offset))
		case <-tctx.Done():
			return ProduceResult{}, fmt.Errorf("produce: %d of %d records acknowledged before --timeout %s: %w", len(offsets), n, timeout, tctx.Err())
		}
	}
	if err := p.CommitTransaction(tctx); err != nil {
		return ProduceResult{}, fmt.Errorf("commit transaction: %w", err)
	}
	slices.Sort(offsets)
	// The commit marker is written to the partition after CommitTransaction returns
	// (the coordinator writes markers asynchronously): wait until the partition's end is
	// past it, so the high watermark we report (and phases wait for) is the real one.
	high, err := waitHigh(tctx, p, topic, partition, offsets[len(offsets)-1]+2, timeout)
	if err != nil {
		return ProduceResult{}, err
	}
	return ProduceResult{Topic: topic, Partition: partition, Offsets: offsets, High: high, Elapsed: time.Since(start)}, nil
}

// ProduceOne writes one non-transactional record and returns its offset and the new
// high watermark.
func ProduceOne(ctx context.Context, cfg kafkaconf.Config, topic string, partition int32, timeout time.Duration) (int64, int64, error) {
	cm, err := clientConfig(cfg, map[string]string{"acks": "all"})
	if err != nil {
		return 0, 0, err
	}
	p, err := kafka.NewProducer(cm)
	if err != nil {
		return 0, 0, fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	var berrs brokerErrors
	go berrs.drain(p.Events())
	report := make(chan kafka.Event, 1)
	if err := p.Produce(&kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: partition},
		Value:          []byte("kstranded phase 2 record"),
	}, report); err != nil {
		return 0, 0, err
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case ev := <-report:
		m := ev.(*kafka.Message)
		if m.TopicPartition.Error != nil {
			return 0, 0, fmt.Errorf("delivery: %w", m.TopicPartition.Error)
		}
		high, err := waitHigh(tctx, p, topic, partition, int64(m.TopicPartition.Offset)+1, timeout)
		return int64(m.TopicPartition.Offset), high, err
	case <-tctx.Done():
		return 0, 0, reachError(cfg.Brokers, "produce", tctx.Err(), tctx, berrs.last())
	}
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
	p, err := kafka.NewProducer(cm)
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
