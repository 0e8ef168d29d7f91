package inspect

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kstranded/kstranded/internal/kpart"
)

// CommittedOffset is a group's committed offset on one partition, with the leader epoch
// and the metadata committed with it. Offset -1: no committed offset.
type CommittedOffset struct {
	Offset      int64
	LeaderEpoch int32
	Metadata    string
}

// GroupOffsets is what the coordinator answered for one group's committed offsets.
type GroupOffsets struct {
	// Offsets has every partition the group has an offset on (-1 for one the broker
	// answered without a committed offset).
	Offsets map[kpart.TopicPartition]CommittedOffset
	// Failed has the partitions the broker answered with an error, and the error; they
	// are not in Offsets.
	Failed map[kpart.TopicPartition]error
	// Err is the broker's error for the group: ErrGroupNotFound when the coordinator
	// does not know it (kfake's answer for a group it never saw; Kafka's is no offsets).
	Err error
}

// CommittedOffsets is the one reader of groups' committed offsets from the cluster's
// side (an admin's OffsetFetch, kadm sends it per coordinator): inspect's snapshots,
// rewind's read-back and repro's read after its consumers closed all ask it, so they
// agree on what "no committed offset" (-1) and "no such group" (ErrGroupNotFound) are.
// An error the broker gives for a group is in its GroupOffsets.Err; only a request
// that was not answered (timeout, closed connection) fails the call.
//
// A consumer reading its own committed offsets through its client (repro's librdkafka
// member, rdSource.committedOf) is not this: it asks through the member's coordinator
// connection, which is what the scenario measures.
func (k *Kafka) CommittedOffsets(ctx context.Context, ids ...string) (map[string]GroupOffsets, error) {
	c, cancel := k.bound(ctx)
	defer cancel()
	fetched := k.adm.FetchManyOffsets(c, ids...)
	out := make(map[string]GroupOffsets, len(ids))
	for _, id := range ids {
		f := fetched[id]
		g := GroupOffsets{Offsets: map[kpart.TopicPartition]CommittedOffset{}, Failed: map[kpart.TopicPartition]error{}}
		if err := f.Err; err != nil {
			var ke *kerr.Error
			if !errors.As(err, &ke) {
				return nil, k.timeoutErr("fetching the group's committed offsets", err)
			}
			if errors.Is(err, kerr.GroupIDNotFound) {
				g.Err = fmt.Errorf("%w: the coordinator does not know %q (%v)", ErrGroupNotFound, id, err)
			} else {
				g.Err = fmt.Errorf("fetching the committed offsets of %q: %w", id, err)
			}
			out[id] = g
			continue
		}
		for t, ps := range f.Fetched {
			for p, o := range ps {
				tp := kpart.TopicPartition{Topic: t, Partition: p}
				if o.Err != nil {
					g.Failed[tp] = o.Err
					continue
				}
				off := o.At
				if off < 0 {
					off = -1
				}
				g.Offsets[tp] = CommittedOffset{Offset: off, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
			}
		}
		out[id] = g
	}
	return out, nil
}

// Committed is CommittedOffsets for one group: its offsets, or the group's error.
func (k *Kafka) Committed(ctx context.Context, group string) (map[kpart.TopicPartition]CommittedOffset, error) {
	gs, err := k.CommittedOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	g := gs[group]
	return g.Offsets, g.Err
}
