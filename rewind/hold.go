package rewind

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
)

// HoldProtocol is the classic group protocol a rewind joins with while it holds a group
// (protocol type "consumer", so describing the group shows it as a consumer member). No
// consumer's assignor has this name, so a consumer joining the held group is refused by
// the broker (INCONSISTENT_GROUP_PROTOCOL) until the rewind leaves; another rewind
// joins and waits its turn.
const HoldProtocol = "kstranded-rewind"

// Holder is a group this run holds (Cluster.Hold): it is the leader of the group's
// current generation, and commits as that member with that generation, so the broker
// rejects its commit once the generation has ended. Release leaves the group.
type Holder interface {
	// Commit commits moves as the holding member and returns the per-partition errors.
	Commit(ctx context.Context, moves []Move) (map[kpart.TopicPartition]error, error)
	// Release leaves the group; the next rewind waiting in it, if any, then holds it.
	Release(ctx context.Context) error
}

// MayBeHeld reports whether g's members may be rewinds holding it: a classic group whose
// protocol is HoldProtocol (its members all support the protocol it chose), or not
// chosen yet (mid-rebalance). Execute then tries to hold it: the broker refuses the
// join if a consumer is among the members (INCONSISTENT_GROUP_PROTOCOL), and a rewind
// waits its turn.
func MayBeHeld(g inspect.Group) bool {
	return g.Err == "" && g.GroupProtocol == inspect.ProtocolClassic && (g.ProtocolType == "consumer" || g.ProtocolType == "") &&
		(g.Protocol == HoldProtocol || g.Protocol == "")
}

// hold is Kafka's Holder.
type hold struct {
	k      *Kafka
	group  string
	member string
	gen    int32
	stop   chan struct{}
	done   chan struct{}
}

// holdSession is the session and rebalance timeout the hold joins with: long enough
// for the commit and its read-back (heartbeats keep the session), short enough that a
// rewind killed while holding frees the group soon. Kafka's minimum session is 6 s.
func (k *Kafka) holdSession() time.Duration {
	return min(max(2*k.timeout, 10*time.Second), 60*time.Second)
}

// Hold implements Cluster: it joins group as a member of protocol HoldProtocol, waits
// until it leads a generation (another rewind holding the group leads it until it
// leaves: this run waits, bounded by the timeout), and returns the hold.
func (k *Kafka) Hold(ctx context.Context, group string) (Holder, error) {
	ctx, cancel := context.WithTimeout(ctx, k.holdSession())
	defer cancel()
	cl := k.Client()
	session := int32(k.holdSession() / time.Millisecond)
	meta := kmsg.NewConsumerMemberMetadata() // subscribed to nothing: OffsetDelete is still accepted
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name, proto.Metadata = HoldProtocol, meta.AppendTo(nil)
	h := &hold{k: k, group: group}
	waited := false
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, h.member, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = session, session
		req.Protocols = []kmsg.JoinGroupRequestProtocol{proto}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, k.holdErr(ctx, group, waited, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			switch {
			case errors.Is(err, kerr.MemberIDRequired):
				h.member = resp.MemberID
				continue
			case errors.Is(err, kerr.UnknownMemberID):
				h.member = ""
				continue
			case errors.Is(err, kerr.RebalanceInProgress):
				continue
			case errors.Is(err, kerr.InconsistentGroupProtocol), errors.Is(err, kerr.GroupMaxSizeReached):
				return nil, refusal{ErrGroupActive, fmt.Sprintf("group %s gained a member before this run could hold it: the broker answered %v to its join; describe it (kstranded inspect --group %s) and stop its consumers; nothing was changed", group, err, group)}
			}
			return nil, fmt.Errorf("joining group %s to hold it for the commit: %w; nothing was changed", group, err)
		}
		h.member, h.gen = resp.MemberID, resp.Generation
		leader := resp.LeaderID == resp.MemberID
		sreq := kmsg.NewPtrSyncGroupRequest()
		sreq.Group, sreq.Generation, sreq.MemberID = group, h.gen, h.member
		sreq.ProtocolType, sreq.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr(HoldProtocol)
		if leader {
			empty := kmsg.NewConsumerMemberAssignment()
			for _, m := range resp.Members {
				a := kmsg.NewSyncGroupRequestGroupAssignment()
				a.MemberID, a.MemberAssignment = m.MemberID, empty.AppendTo(nil)
				sreq.GroupAssignment = append(sreq.GroupAssignment, a)
			}
		}
		sresp, err := sreq.RequestWith(ctx, cl)
		if err != nil {
			return nil, k.holdErr(ctx, group, waited, err)
		}
		if err := kerr.ErrorForCode(sresp.ErrorCode); err != nil {
			if errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.UnknownMemberID) {
				continue
			}
			return nil, fmt.Errorf("joining group %s to hold it for the commit: %w; nothing was changed", group, err)
		}
		if leader {
			// The leader of a generation holds the group for it: only the leader
			// commits, and with this generation, which ends only after it leaves (or
			// its session expires, when the broker rejects its commits).
			h.stop, h.done = make(chan struct{}), make(chan struct{})
			go h.heartbeat()
			return h, nil
		}
		// Another rewind leads this generation: wait until it ends (the leader left),
		// then join the next.
		waited = true
		if err := h.waitGeneration(ctx); err != nil {
			return nil, k.holdErr(ctx, group, waited, err)
		}
	}
}

// holdErr is the error of a hold that could not be won.
func (k *Kafka) holdErr(ctx context.Context, group string, waited bool, err error) error {
	if waited && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
		return refusal{ErrGroupActive, fmt.Sprintf("another kstranded rewind holds group %s and did not leave within %s; nothing was changed; describe the group (kstranded inspect --group %s)", group, k.holdSession(), group)}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return k.Explain(fmt.Sprintf("joining group %s to hold it for the commit (nothing was changed)", group), err)
}

// waitGeneration heartbeats as a follower until the generation ends.
func (h *hold) waitGeneration(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = h.group, h.gen, h.member
		resp, err := req.RequestWith(ctx, h.k.Client())
		if err != nil {
			return err
		}
		switch err := kerr.ErrorForCode(resp.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.UnknownMemberID):
			h.member = ""
			return nil
		default: // REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION: the generation ended
			return nil
		}
	}
}

// heartbeat keeps the leader's session until Release.
func (h *hold) heartbeat() {
	defer close(h.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = h.group, h.gen, h.member
		ctx, cancel := context.WithTimeout(context.Background(), h.k.timeout)
		_, _ = req.RequestWith(ctx, h.k.Client())
		cancel()
	}
}

// Commit implements Holder.
func (h *hold) Commit(ctx context.Context, moves []Move) (map[kpart.TopicPartition]error, error) {
	c, cancel := context.WithTimeout(ctx, h.k.timeout)
	defer cancel()
	var topics []string
	seen := map[string]bool{}
	for _, m := range moves {
		if !seen[m.Topic] {
			seen[m.Topic] = true
			topics = append(topics, m.Topic)
		}
	}
	details, err := h.k.adm.ListTopics(c, topics...)
	if err != nil {
		return nil, h.k.Explain("committing offsets (looking up the topics' IDs)", err)
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = h.group, h.gen, h.member
	byTopic := map[string]int{}
	for _, m := range moves {
		i, ok := byTopic[m.Topic]
		if !ok {
			t := kmsg.NewOffsetCommitRequestTopic()
			t.Topic, t.TopicID = m.Topic, [16]byte(details[m.Topic].ID)
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[m.Topic] = i
		}
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = m.Partition, m.Target, m.TargetEpoch
		p.Metadata = kmsg.StringPtr(m.TargetMetadata)
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := req.RequestWith(c, h.k.Client())
	if err != nil {
		return nil, h.k.Explain("committing offsets", err)
	}
	names := map[[16]byte]string{}
	for _, t := range req.Topics {
		names[t.TopicID] = t.Topic
	}
	out := map[kpart.TopicPartition]error{}
	for _, t := range resp.Topics {
		name := t.Topic
		if name == "" {
			name = names[t.TopicID]
		}
		for _, p := range t.Partitions {
			out[kpart.TopicPartition{Topic: name, Partition: p.Partition}] = kerr.ErrorForCode(p.ErrorCode)
		}
	}
	return out, nil
}

// Release implements Holder.
func (h *hold) Release(ctx context.Context) error {
	close(h.stop)
	<-h.done
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.k.timeout)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = h.group, h.member
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = h.member
	req.Members = []kmsg.LeaveGroupRequestMember{m}
	resp, err := req.RequestWith(c, h.k.Client())
	if err != nil {
		return h.k.Explain("leaving the group after the commit", err)
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}
