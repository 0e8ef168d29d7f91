package rewind

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
)

// Cluster is what rewind needs from Kafka: inspect's view, plus committing offsets for
// the group and reading them back.
type Cluster interface {
	inspect.Cluster
	// Commit commits offsets for group (as an admin: no member, generation -1) and
	// returns the per-partition errors.
	Commit(ctx context.Context, group string, moves []Move) (map[evidence.TP]error, error)
	// Committed reads the group's committed offsets.
	Committed(ctx context.Context, group string) (map[evidence.TP]int64, error)
}

// Kafka implements Cluster with inspect's franz-go client for the analysis and a kadm
// client for the offset commit.
type Kafka struct {
	*inspect.Kafka
	cl      *kgo.Client
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
	cl, err := kgo.NewClient(append(opts, kgo.DialTimeout(timeout), kgo.RetryTimeout(timeout), kgo.RequestRetries(3))...)
	if err != nil {
		ik.Close()
		return nil, err
	}
	return &Kafka{Kafka: ik, cl: cl, adm: kadm.NewClient(cl), timeout: timeout}, nil
}

// Close closes both clients.
func (k *Kafka) Close() {
	k.cl.Close()
	k.Kafka.Close()
}

// Commit implements Cluster.
func (k *Kafka) Commit(ctx context.Context, group string, moves []Move) (map[evidence.TP]error, error) {
	os := kadm.Offsets{}
	for _, m := range moves {
		os.Add(kadm.Offset{Topic: m.Topic, Partition: m.Partition, At: m.Target, LeaderEpoch: m.TargetEpoch, Metadata: m.TargetMetadata})
	}
	c, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	resp, err := k.adm.CommitOffsets(c, group, os)
	if err != nil {
		return nil, timeoutErr(k.timeout, "committing offsets", err)
	}
	out := map[evidence.TP]error{}
	for t, ps := range resp {
		for p, r := range ps {
			out[evidence.TP{Topic: t, Partition: p}] = r.Err
		}
	}
	return out, nil
}

// Committed implements Cluster.
func (k *Kafka) Committed(ctx context.Context, group string) (map[evidence.TP]int64, error) {
	c, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	resp, err := k.adm.FetchOffsets(c, group)
	if err != nil {
		return nil, timeoutErr(k.timeout, "reading the committed offsets back", err)
	}
	out := map[evidence.TP]int64{}
	for t, ps := range resp {
		for p, r := range ps {
			if r.Err == nil {
				out[evidence.TP{Topic: t, Partition: p}] = r.At
			}
		}
	}
	return out, nil
}

func timeoutErr(d time.Duration, op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s (--timeout): %w", op, d, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// groupBusy reports whether a commit error means the group is not empty: Kafka accepts
// an offset commit without a member ID and generation only for an empty group
// (GroupCoordinator.handleCommitOffsets), and answers these otherwise.
func groupBusy(err error) bool {
	return errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) ||
		errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.StaleMemberEpoch) ||
		errors.Is(err, kerr.FencedInstanceID)
}
