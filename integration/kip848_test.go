package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/testenv"
)

// Consumer groups of KIP-848's protocol (group.protocol=consumer, Kafka 4). kfake
// implements ConsumerGroupHeartbeat and ConsumerGroupDescribe (v0-1) with the uniform
// and range assignors, so these run in both modes; what kfake does differently is that
// its ConsumerGroupDescribe names the assignment's topics only by ID (no topic name),
// which inspect resolves through Metadata on both brokers alike.

// The group part of the inspect JSON document.
type groupDoc struct {
	Group struct {
		ID              string `json:"group"`
		GroupProtocol   string `json:"group_protocol"`
		State           string `json:"state"`
		Epoch           *int32 `json:"group_epoch"`
		AssignmentEpoch *int32 `json:"assignment_epoch"`
		Members         []struct {
			ID          string `json:"member_id"`
			Partitions  int    `json:"assigned_partitions"`
			MemberEpoch *int32 `json:"member_epoch"`
			Assigned    []struct {
				Topic      string  `json:"topic"`
				Partitions []int32 `json:"partitions"`
			} `json:"assigned"`
		} `json:"members"`
		Err string `json:"error"`
	} `json:"group"`
	Partitions []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Committed int64  `json:"committed"`
		Owner     string `json:"owner"`
	} `json:"partitions"`
}

// liveConsumerGroup creates a 2-partition topic with records on both partitions and
// starts a franz-go consumer in a new consumer-protocol group (kgo.ServerSideBalancer);
// it returns once the member owns both partitions and has committed what it read. The
// member stays in the group (franz-go heartbeats in the background) until the test ends.
func liveConsumerGroup(t *testing.T) (topic, group string, committed map[int32]int64) {
	t.Helper()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	topic, group = "kip848-"+suffix, "kip848-group-"+suffix
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	keep(topic)
	opts, err := kafkaconf.Config{Brokers: env.Brokers}.KgoOpts()
	if err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 5; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var (
		mu    sync.Mutex
		owned = map[int32]bool{}
	)
	cons, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ServerSideBalancer(),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range a[topic] {
				owned[p] = true
			}
		}))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	keepGroup(group)
	seen := map[int32]bool{}
	for {
		mu.Lock()
		ready := len(owned) == 2 && len(seen) == 2
		mu.Unlock()
		if ready {
			break
		}
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("the consumer-protocol member of %s did not get both partitions and records within 30s", group)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[r.Partition] = true })
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	committed = offsetsOf(resp, topic)
	if len(committed) != 2 {
		t.Fatalf("committed %v, want both partitions", committed)
	}
	return topic, group, committed
}

func offsetsOf(resp kadm.OffsetResponses, topic string) map[int32]int64 {
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.Err == nil {
			out[p] = o.At
		}
	}
	return out
}

func TestALiveConsumerProtocolGroupIsDescribedAndRewindRefusesIt(t *testing.T) {
	topic, group, before := liveConsumerGroup(t)

	r := kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", group, "--timeout", "20s", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("inspect: exit %d, want 0\n%s", r.Code, r)
	}
	doc := decode[groupDoc](t, r)
	g := doc.Group
	if g.GroupProtocol != "consumer" || g.State != "Stable" || len(g.Members) != 1 || g.Err != "" {
		t.Fatalf("group protocol %q state %q members %d error %q; want a Stable consumer-protocol group with one member\n%s", g.GroupProtocol, g.State, len(g.Members), g.Err, r)
	}
	m := g.Members[0]
	if m.Partitions != 2 || len(m.Assigned) != 1 || m.Assigned[0].Topic != topic || !slices.Equal(m.Assigned[0].Partitions, []int32{0, 1}) {
		t.Errorf("member %s owns %d partitions %+v, want %s/0,1", m.ID, m.Partitions, m.Assigned, topic)
	}
	if m.MemberEpoch == nil || *m.MemberEpoch < 1 || g.Epoch == nil || *g.Epoch < 1 || g.AssignmentEpoch == nil {
		t.Errorf("member epoch %v group epoch %v assignment epoch %v, want epochs >= 1", m.MemberEpoch, g.Epoch, g.AssignmentEpoch)
	}
	for _, p := range doc.Partitions {
		if p.Owner != m.ID || p.Committed != before[p.Partition] {
			t.Errorf("%s/%d: owner %q committed %d, want %s and %d", p.Topic, p.Partition, p.Owner, p.Committed, m.ID, before[p.Partition])
		}
	}

	undo := filepath.Join(t.TempDir(), "undo.json")
	r = kstranded(t, time.Minute, "rewind", "--brokers", env.Brokers, "--group", group, "--to", topic+"/0=0", "--execute", "--undo-file", undo, "--timeout", "20s")
	if r.Code != 5 {
		t.Fatalf("rewind --execute: exit %d, want 5 (group has members)\n%s", r.Code, r)
	}
	if out := r.Stdout + r.Stderr; !strings.Contains(out, m.ID) || !strings.Contains(out, topic+"/0,1") {
		t.Errorf("the refusal does not name member %s and its partitions %s/0,1:\n%s", m.ID, topic, r)
	}
	if _, err := os.Stat(undo); !os.IsNotExist(err) {
		t.Errorf("a refused rewind wrote the undo file %s", undo)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := admin(t).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if after := offsetsOf(resp, topic); !mapsEqual(after, before) {
		t.Errorf("committed offsets %v after the refused rewind, want unchanged %v", after, before)
	}
}

func mapsEqual(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestReproUnderTheConsumerProtocolLosesTheSameRecords runs v1.10.0 with
// group.protocol=consumer and inspects the group it leaves with the run's trace.
func TestReproUnderTheConsumerProtocolLosesTheSameRecords(t *testing.T) {
	testenv.MustLive(t) // a live repro at scaled time
	trace := filepath.Join(t.TempDir(), "kip848.trace.jsonl")
	args := reproArgs(env.Brokers, "v1.10.0", "--group-protocol", "consumer", "--keep", "--trace", trace)
	run := runRepro(t, "v1.10.0", 3, args)
	keep(run.Topic)
	keepGroup(run.Group)
	p := run.Partitions[0]
	if run.Verdict != "LOST" || run.Lost != 118 || !slices.Equal(p.Lost, []rangeJSON{{82, 199, 118}}) || !slices.Equal(p.CommittedByPhase, []int64{82, 202}) {
		t.Errorf("verdict %s lost %d; partition 0 lost %+v committed by phase %v; want LOST [82-199] (118), committed [82 202]",
			run.Verdict, run.Lost, p.Lost, p.CommittedByPhase)
	}

	r := kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", run.Group, "--delivered", trace, "--timeout", "20s", "-o", "json")
	if r.Code != 3 {
		t.Fatalf("inspect: exit %d, want 3 (records lost)\n%s", r.Code, r)
	}
	g := decode[groupDoc](t, r).Group
	if g.GroupProtocol != "consumer" || g.State != "Empty" || len(g.Members) != 0 {
		t.Errorf("group protocol %q state %q members %d, want the consumer-protocol group, Empty: its member left", g.GroupProtocol, g.State, len(g.Members))
	}
	doc := decode[inspectDoc](t, r)
	if s := doc.Summary; s.LostPartitions != 1 || s.Lost != 118 || s.Delivered != 83 {
		t.Errorf("summary %+v, want 118 lost on one partition, 83 delivered", s)
	}
	if len(doc.Partitions) != 1 || doc.Partitions[0].Judgement == nil || doc.Partitions[0].Judgement.Verdict != "LOST" ||
		!slices.Equal(doc.Partitions[0].Judgement.Lost, []rangeJSON{{82, 199, 118}}) {
		t.Errorf("partitions %+v, want partition 0 LOST 82-199", doc.Partitions)
	}
}
