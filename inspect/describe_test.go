package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// joinGroup starts a franz-go consumer of topic "stranded" in group, with the consumer
// protocol (KIP-848, kgo.ServerSideBalancer) or the classic one, and waits until it owns
// partitions and has committed.
func joinGroup(t *testing.T, addr, group string, consumerProtocol bool) *kgo.Client {
	t.Helper()
	assigned := make(chan struct{}, 1)
	opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics("stranded"), kgo.FetchMaxWait(50 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		})}
	if consumerProtocol {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	cl := client(t, addr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("group %s: no assignment and records within 20s", group)
		}
		select {
		case <-assigned:
			done = fs.NumRecords() > 0
			if !done {
				assigned <- struct{}{}
			}
		default:
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestGroupsAreDescribedThroughTheAPIOfTheirProtocol(t *testing.T) {
	b := startBroker(t, 3)
	for p := int32(0); p < 3; p++ {
		produce(t, b.Addr(), p, 5)
	}
	cases := []struct {
		name     string
		consumer bool
		protocol string
	}{
		{"a KIP-848 group is described by ConsumerGroupDescribe with member epochs and partitions", true, ProtocolConsumer},
		{"a classic group is described by DescribeGroups with its member's partitions", false, ProtocolClassic},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			group := "g-" + c.protocol
			cl := joinGroup(t, b.Addr(), group, c.consumer)
			snap, err := newKafka(t, b.Addr()).Snapshot(context.Background(), group, nil)
			if err != nil {
				t.Fatal(err)
			}
			g := snap.Group
			if g.GroupProtocol != c.protocol || g.State != "Stable" || len(g.Members) != 1 || g.Err != "" {
				t.Fatalf("group %+v, want %s, Stable, one member", g, c.protocol)
			}
			m := g.Members[0]
			want := Assignment{{Topic: "stranded", Partitions: []int32{0, 1, 2}}}
			if !m.Assigned.Equal(want) || m.Partitions != 3 || m.Target != nil {
				t.Errorf("member assigned %v (%d), target %v; want %v, no differing target", m.Assigned, m.Partitions, m.Target, want)
			}
			if c.consumer != (m.MemberEpoch != nil && g.Epoch != nil && g.AssignmentEpoch != nil) {
				t.Errorf("epochs member %v group %v assignment %v: want them exactly for the consumer protocol", m.MemberEpoch, g.Epoch, g.AssignmentEpoch)
			}
			if c.consumer && (*m.MemberEpoch < 1 || *g.Epoch < 1) {
				t.Errorf("member epoch %d group epoch %d, want >= 1", *m.MemberEpoch, *g.Epoch)
			}
			var owners []string
			for _, p := range snap.Partitions {
				owners = append(owners, p.Owner)
			}
			if !slices.Equal(owners, []string{m.ID, m.ID, m.ID}) {
				t.Errorf("owners %v, want %s on each partition", owners, m.ID)
			}
			cl.Close()
		})
	}
}

func TestAGroupNeitherAPIKnowsIsNotFound(t *testing.T) {
	b := startBroker(t, 1)
	_, err := newKafka(t, b.Addr()).Snapshot(context.Background(), "nobody", nil)
	if !errors.Is(err, ErrGroupNotFound) {
		t.Fatalf("err %v, want ErrGroupNotFound", err)
	}
}

func TestAGroupWithOnlyCommittedOffsetsIsNotCalledDead(t *testing.T) {
	b := startBroker(t, 1)
	commit(t, b.Addr(), "offsets-only", map[int32]int64{0: 0})
	snap, err := newKafka(t, b.Addr()).Snapshot(context.Background(), "offsets-only", nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := snap.Group; g.State == "Dead" || len(g.Members) != 0 || g.Err != "" {
		t.Errorf("group %+v, want no members and a state other than Dead", g)
	}
	t.Logf("kfake: a group with only an admin commit is %q %q", snap.Group.GroupProtocol, snap.Group.State)
}

func TestACoordinatorNotYetAvailableIsAskedAgain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{kerr.CoordinatorNotAvailable, true},
		{kerr.CoordinatorLoadInProgress, true},
		{kerr.NotCoordinator, true},
		{fmt.Errorf("describing: %w", kerr.CoordinatorNotAvailable), true},
		{kerr.GroupAuthorizationFailed, false},
		{kerr.GroupIDNotFound, false},
		{errors.New("COORDINATOR_NOT_AVAILABLE in a message is not the code"), false},
		{nil, false},
	} {
		if got := coordinatorMoving(tc.err); got != tc.want {
			t.Errorf("coordinatorMoving(%v) = %v", tc.err, got)
		}
	}
}

// ListGroups names each group with its protocol as the broker's ListGroups (v5) types it:
// a KIP-848 group is "consumer", a classic one "classic", both Stable with members, and
// a group that only has offsets committed by an admin is a classic Empty one.
func TestListGroupsNamesEachGroupsProtocolAndState(t *testing.T) {
	b := startBroker(t, 2)
	for p := int32(0); p < 2; p++ {
		produce(t, b.Addr(), p, 3)
	}
	joinGroup(t, b.Addr(), "g-consumer", true)
	joinGroup(t, b.Addr(), "g-classic", false)
	ls, err := newKafka(t, b.Addr()).ListGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Listing{
		{ID: "g-classic", State: "Stable", GroupProtocol: ProtocolClassic, ProtocolType: "consumer"},
		{ID: "g-consumer", State: "Stable", GroupProtocol: ProtocolConsumer, ProtocolType: "consumer"},
	}
	if !slices.Equal(ls, want) {
		t.Fatalf("listed %+v\nwant     %+v", ls, want)
	}
}
