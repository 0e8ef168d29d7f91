package rewind

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
)

// Cluster is what rewind needs from Kafka: inspect's view, plus committing offsets for
// the group, deleting them, and reading them back.
type Cluster interface {
	inspect.Cluster
	// Hold makes this run the one writer of group until Holder.Release: it joins the
	// group as a member (protocol HoldProtocol), waits while another rewind holds it, and
	// commits as the leader of its generation (see the package doc).
	Hold(ctx context.Context, group string) (Holder, error)
	// DeleteOffsets deletes group's committed offsets on tps (OffsetDelete, Kafka 2.4+;
	// the broker accepts it for an empty group) and returns the per-partition errors.
	DeleteOffsets(ctx context.Context, group string, tps []kpart.TopicPartition) (map[kpart.TopicPartition]error, error)
	// Committed reads the group's committed offsets with their metadata (Execute's
	// read-back compares both: the metadata carries the run's token).
	Committed(ctx context.Context, group string) (map[kpart.TopicPartition]CommittedOffset, error)
}

// CommittedOffset is a committed offset read back with the metadata committed with it
// (inspect's, the one reader of committed offsets).
type CommittedOffset = inspect.CommittedOffset

// Kafka implements Cluster with inspect's franz-go client: the analysis, the hold and
// the offset commit go through one client (one set of connections and metadata), and
// the read-back is inspect's (Committed, its one reader of committed offsets).
type Kafka struct {
	*inspect.Kafka
	adm     *kadm.Client
	timeout time.Duration
}

// NewKafka connects with opts (from kafkaconf.Config.KgoOpts); timeout bounds every
// broker operation.
func NewKafka(opts []kgo.Opt, timeout time.Duration) (*Kafka, error) {
	ik, err := inspect.NewKafka(opts, timeout)
	if err != nil {
		return nil, err
	}
	return &Kafka{Kafka: ik, adm: kadm.NewClient(ik.Client()), timeout: timeout}, nil
}

// DeleteOffsets implements Cluster.
func (k *Kafka) DeleteOffsets(ctx context.Context, group string, tps []kpart.TopicPartition) (map[kpart.TopicPartition]error, error) {
	set := kadm.TopicsSet{}
	for _, tp := range tps {
		set.Add(tp.Topic, tp.Partition)
	}
	c, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	resp, err := k.adm.DeleteOffsets(c, group, set)
	if err != nil {
		return nil, k.Explain("deleting committed offsets", err)
	}
	out := map[kpart.TopicPartition]error{}
	for t, ps := range resp {
		for p, e := range ps {
			out[kpart.TopicPartition{Topic: t, Partition: p}] = e
		}
	}
	return out, nil
}

// OffsetsAfter implements TimeOffsets with ListOffsets by timestamp (kadm: a partition
// with no record that late answers its end offset).
func (k *Kafka) OffsetsAfter(ctx context.Context, topics []string, millis int64) (map[kpart.TopicPartition]int64, error) {
	c, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	ls, err := k.adm.ListOffsetsAfterMilli(c, millis, topics...)
	if err == nil {
		err = ls.Error()
	}
	if err != nil {
		return nil, k.Explain("listing offsets by timestamp", err)
	}
	out := map[kpart.TopicPartition]int64{}
	ls.Each(func(o kadm.ListedOffset) {
		out[kpart.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	})
	return out, nil
}

// groupBusy reports whether a commit or offset-delete error means the group is not
// empty: Kafka accepts an offset commit without a member ID and generation only for an
// empty group (GroupCoordinator.handleCommitOffsets), and answers these otherwise; it
// deletes offsets of a group with members only for topics it is not subscribed to
// (GroupCoordinator.handleDeleteOffsets: NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC).
func groupBusy(err error) bool {
	return errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) ||
		errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.StaleMemberEpoch) ||
		errors.Is(err, kerr.FencedInstanceID) || errors.Is(err, kerr.NonEmptyGroup) ||
		errors.Is(err, kerr.GroupSubscribedToTopic)
}
