package inspect

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSnapshotsOfManyGroupsTakeTheRequestsOfOne: watch reads every group it follows
// each interval; Snapshots asks for all of them in the seven requests one Snapshot takes
// (one OffsetFetch, the two describes, one Metadata, three ListOffsets), and gives each
// group what Snapshot gives it alone. A group the cluster does not know is an error of
// its own, not the call's.
func TestSnapshotsOfManyGroupsTakeTheRequestsOfOne(t *testing.T) {
	b := startBroker(t, 1)
	cl := client(t, b.Addr())
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	for _, tc := range []struct {
		topic string
		n     int32
	}{{"a", 3}, {"b", 2}} {
		if _, err := adm.CreateTopic(ctx, tc.n, 1, nil, tc.topic); err != nil {
			t.Fatal(err)
		}
		for p := range tc.n {
			var rs []*kgo.Record
			for i := 0; i < int(p)+3; i++ {
				rs = append(rs, &kgo.Record{Topic: tc.topic, Partition: p, Value: []byte("v")})
			}
			if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var groups []string
	for i := 0; i < 30; i++ {
		g := fmt.Sprintf("g%02d", i)
		groups = append(groups, g)
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: "a", Partition: int32(i % 3), At: int64(i % 4), LeaderEpoch: -1})
		if i%2 == 1 {
			os.Add(kadm.Offset{Topic: "b", Partition: 1, At: 2, LeaderEpoch: -1})
		}
		if _, err := adm.CommitOffsets(ctx, g, os); err != nil {
			t.Fatal(err)
		}
	}
	groups = append(groups, "nope")
	k := newKafka(t, b.Addr())
	ss, err := k.Snapshots(ctx, groups)
	if err != nil {
		t.Fatal(err)
	}
	if ss.Requests != 7 {
		t.Errorf("requests = %d for %d groups, want 7", ss.Requests, len(groups))
	}
	if len(ss.Groups) != 30 {
		t.Errorf("%d groups snapshotted, want 30", len(ss.Groups))
	}
	if !errors.Is(ss.Errs["nope"], ErrGroupNotFound) {
		t.Errorf("unknown group: %v, want ErrGroupNotFound", ss.Errs["nope"])
	}
	for _, g := range groups {
		one, err := k.Snapshot(ctx, g, nil)
		if g == "nope" {
			if err == nil || err.Error() != ss.Errs[g].Error() {
				t.Errorf("Snapshot(nope) = %v, Snapshots said %v", err, ss.Errs[g])
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		many := ss.Groups[g]
		if !reflect.DeepEqual(one.Group, many.Group) || !reflect.DeepEqual(one.Partitions, many.Partitions) || !reflect.DeepEqual(one.DeletedTopics, many.DeletedTopics) {
			t.Errorf("%s: alone %+v\nwith the others %+v", g, one, many)
		}
	}
	if p := ss.Groups["g05"].Partitions; len(p) != 2 || p[0].Topic != "a" || p[0].Partition != 2 || p[0].Committed != 1 || p[0].HighWatermark != 5 || p[1].Topic != "b" || p[1].Committed != 2 || p[1].HighWatermark != 4 {
		t.Errorf("g05 = %+v", p)
	}
}
