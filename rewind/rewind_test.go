package rewind

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
)

// seedOffsets is partition 0 after the bug report's loss: 200 records in one
// transaction (0-199), its commit marker (200), one more record (201), committed 202.
func seedOffsets() inspect.Offsets {
	return inspect.Offsets{Topic: "stranded", Partition: 0, Committed: 202, CommittedEpoch: 0, LogStart: 0, LastStable: 202, HighWatermark: 202}
}

func ptr(v int64) *int64 { return &v }

func TestDecide(t *testing.T) {
	cases := []struct {
		name         string
		off          func(o *inspect.Offsets)
		target       Target
		allowForward bool
		dir          Direction
		refused      string // substring; "" means allowed
	}{
		{"moving back to the first lost record is allowed", nil, Target{Offset: 82}, false, Back, ""},
		{"moving forward is refused", nil, Target{Offset: 210}, false, Forward, "beyond the high watermark"},
		{"moving forward inside the log is refused without --allow-forward", func(o *inspect.Offsets) { o.Committed = 82 }, Target{Offset: 202}, false, Forward, "--allow-forward"},
		{"moving forward is allowed with --allow-forward", func(o *inspect.Offsets) { o.Committed = 82 }, Target{Offset: 202}, true, Forward, ""},
		{"a target below the log start offset is refused", func(o *inspect.Offsets) { o.LogStart = 100 }, Target{Offset: 82}, false, Back, "below the log start offset 100"},
		{"a target below the log start offset is refused even with --allow-forward", func(o *inspect.Offsets) { o.LogStart = 100 }, Target{Offset: 82}, true, Back, "lowest possible target is 100"},
		{"a target at the log start offset is allowed", func(o *inspect.Offsets) { o.LogStart = 82 }, Target{Offset: 82}, false, Back, ""},
		{"a target beyond the high watermark is refused even with --allow-forward", nil, Target{Offset: 203}, true, Forward, "beyond the high watermark 202"},
		{"the current offset is no move", nil, Target{Offset: 202}, false, None, ""},
		{"a partition without a commit needs --allow-forward", func(o *inspect.Offsets) { o.Committed = -1 }, Target{Offset: 82}, false, Set, "no committed offset"},
		{"a partition without a commit may be set to the log start", func(o *inspect.Offsets) { o.Committed = -1 }, Target{Offset: 0}, false, Set, ""},
		{"an unreadable partition is refused", func(o *inspect.Offsets) { o.Err = "topic no longer exists" }, Target{Offset: 82}, false, Back, "cannot be read"},
		{"a plan made against another committed offset is refused", nil, Target{Offset: 82, Expect: ptr(150)}, false, Back, "moved since the plan was made (planned against 150, now 202)"},
		{"a plan made against the current committed offset is allowed", nil, Target{Offset: 82, Expect: ptr(202)}, false, Back, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := seedOffsets()
			if c.off != nil {
				c.off(&o)
			}
			c.target.Topic, c.target.LeaderEpoch = "stranded", -1
			m := Decide(o, c.target, FromFlag, Rules{AllowForward: c.allowForward})
			if m.Direction != c.dir {
				t.Errorf("direction %s, want %s", m.Direction, c.dir)
			}
			if c.refused == "" && m.Refused != "" {
				t.Errorf("refused: %s", m.Refused)
			}
			if c.refused != "" && !strings.Contains(m.Refused, c.refused) {
				t.Errorf("refusal %q, want it to say %q", m.Refused, c.refused)
			}
		})
	}
}

func TestParseTargets(t *testing.T) {
	good := []struct {
		name string
		in   []string
		want []Target
	}{
		{"one target", []string{"stranded/0=82"}, []Target{{Topic: "stranded", Partition: 0, Offset: 82, LeaderEpoch: -1}}},
		{"comma separated and repeated values add up", []string{"a/0=1, a/1=2", "b.c_d-e/7=0"},
			[]Target{{Topic: "a", Offset: 1, LeaderEpoch: -1}, {Topic: "a", Partition: 1, Offset: 2, LeaderEpoch: -1}, {Topic: "b.c_d-e", Partition: 7, Offset: 0, LeaderEpoch: -1}}},
		{"kafka-consumer-groups.sh's TOPIC:PARTITION spelling is the same target", []string{"stranded:0=5,b.c_d-e:7=0"},
			[]Target{{Topic: "stranded", Offset: 5, LeaderEpoch: -1}, {Topic: "b.c_d-e", Partition: 7, Offset: 0, LeaderEpoch: -1}}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTargets(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %+v", got)
			}
			for i := range got {
				if got[i].TP() != c.want[i].TP() || got[i].Offset != c.want[i].Offset || got[i].LeaderEpoch != -1 {
					t.Fatalf("target %d: got %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
	bad := []struct {
		name, in, says string
	}{
		{"a target without an offset is an error", "stranded/0", "want TOPIC/PARTITION=OFFSET"},
		{"a target without a topic is an error", "0=82", "no topic"},
		{"an empty topic is an error", "/0=82", "empty topic"},
		{"a partition that is not a number is an error", "stranded/x=82", `partition "x"`},
		{"a negative offset is an error", "stranded/0=-1", `offset "-1"`},
		{"an offset that is not a number is an error", "stranded/0=latest", `offset "latest"`},
		{"a partition named twice is an error", "stranded/0=82,stranded/0=90", "already given a target"},
		{"a partition named twice in both spellings is an error", "stranded/0=82,stranded:0=90", "already given a target"},
		{"a topic cannot hold both separators", "a:b/0=1", `topic "a:b" is not a valid topic name`},
		{"the colon spelling without an offset says both spellings", "stranded:0", "or TOPIC:PARTITION=OFFSET"},
		{"no targets at all is an error", " , ", "no targets"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTargets([]string{c.in})
			var te *TargetError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("ParseTargets(%q) = %v, want a TargetError saying %q", c.in, err, c.says)
			}
		})
	}
}

func TestUndoFileRoundTripRestoresOffsetEpochAndMetadata(t *testing.T) {
	p := &Plan{Group: inspect.Group{ID: "billing/eu"}, Moves: []Move{
		{Topic: "orders", Partition: 3, Committed: 1200, CommittedEpoch: 7, CommittedMetadata: "app-meta", Target: 1100, Direction: Back},
		{Topic: "orders", Partition: 4, Committed: 50, Target: 60, Direction: Forward, Refused: "no"},
		{Topic: "orders", Partition: 5, Committed: 9, Target: 9, Direction: None},
	}}
	u := NewUndo(p, "test")
	if len(u.Offsets) != 1 {
		t.Fatalf("the undo file must hold only the moves that are applied, got %+v", u.Offsets)
	}
	path := DefaultUndoPath(t.TempDir(), p.Group.ID, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if filepath.Base(path) != "kstranded-undo-billing_eu-20260102T030405Z.json" {
		t.Fatalf("default name %s", filepath.Base(path))
	}
	if err := WriteUndoFile(path, u); err != nil {
		t.Fatal(err)
	}
	if err := WriteUndoFile(path, u); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Fatalf("a second write must not overwrite the undo file: %v", err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	data, err := io.ReadAll(fh)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadUndo(data, path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != FromUndo || f.Group != "billing/eu" || len(f.Targets) != 1 {
		t.Fatalf("read back %+v", f)
	}
	got := f.Targets[0]
	if got.Topic != "orders" || got.Partition != 3 || got.Offset != 1200 || got.LeaderEpoch != 7 || got.Metadata != "app-meta" || !got.Undo || got.Expect == nil || *got.Expect != 1100 {
		t.Fatalf("target %+v", got)
	}
	// Restoring is a forward move: refused without --allow-forward, allowed with it.
	now := inspect.Offsets{Topic: "orders", Partition: 3, Committed: 1100, LogStart: 0, LastStable: 1300, HighWatermark: 1300}
	if m := Decide(now, got, FromUndo, Rules{AllowForward: false}); m.Refused == "" {
		t.Fatal("restoring without --allow-forward must be refused")
	}
	if m := Decide(now, got, FromUndo, Rules{AllowForward: true}); m.Refused != "" || m.TargetEpoch != 7 || m.TargetMetadata != "app-meta" {
		t.Fatalf("restore %+v", m)
	}
}

func TestCountRecordsSkipsMarkersAndSplitsByEvidence(t *testing.T) {
	spans := []inspect.Span{{First: 0, Last: 199, Kind: inspect.Record}, {First: 200, Last: 200, Kind: inspect.CommitMarker}, {First: 201, Last: 201, Kind: inspect.Record}}
	ev := &evidence.Partition{Delivered: []kpart.Range{{First: 0, Last: 81}, {First: 201, Last: 201}}}
	records, delivered := CountRecords(spans, ev, 82, 202)
	if records != 119 || delivered != 1 {
		t.Fatalf("records %d delivered %d, want 119 and 1 (118 lost, the marker not counted)", records, delivered)
	}
	if r, d := CountRecords(spans, nil, 82, 202); r != 119 || d != 0 {
		t.Fatalf("without evidence: %d %d", r, d)
	}
}

// fakeCluster serves one partition's offsets and spans, and records commits.
type fakeCluster struct {
	group     inspect.Group
	off       inspect.Offsets
	spans     []inspect.Span
	committed []Move
	deleted   []kpart.TopicPartition
	commitErr map[kpart.TopicPartition]error
	// afterCommit runs after each commit is applied: another writer committing
	// between this run's commit and its read-back.
	afterCommit func(f *fakeCluster)
	beforeHold  func(f *fakeCluster)
	// interruptCommit: the commit is applied, then this runs (cancelling the run) and
	// the commit's answer never arrives.
	interruptCommit func()
	holds           int
	released        int
}

func (f *fakeCluster) Snapshot(ctx context.Context, group string, topics []string) (*inspect.Snapshot, error) {
	return &inspect.Snapshot{Group: f.group, Partitions: []inspect.Offsets{f.off}}, nil
}

func (f *fakeCluster) Scan(ctx context.Context, topic string, partition int32, from, to int64) (*inspect.Scan, error) {
	var out []inspect.Span
	for _, s := range f.spans {
		a, b := max(s.First, from), min(s.Last, to-1)
		if a <= b {
			out = append(out, inspect.Span{First: a, Last: b, Kind: s.Kind})
		}
	}
	return &inspect.Scan{From: from, To: to, Spans: out}, nil
}

// Hold implements Cluster: beforeHold, when set, runs first (another writer committing
// between the plan and the hold).
func (f *fakeCluster) Hold(ctx context.Context, group string) (Holder, error) {
	if f.beforeHold != nil {
		f.beforeHold(f)
	}
	f.holds++
	return fakeHold{f}, nil
}

type fakeHold struct{ f *fakeCluster }

func (h fakeHold) Commit(ctx context.Context, moves []Move) (map[kpart.TopicPartition]error, error) {
	if h.f.interruptCommit != nil {
		// the commit reaches the broker and is applied; the run is interrupted before
		// the answer arrives
		_, _ = h.f.commit(moves)
		h.f.interruptCommit()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.f.commit(moves)
}

func (h fakeHold) Release(ctx context.Context) error { h.f.released++; return nil }

func (f *fakeCluster) commit(moves []Move) (map[kpart.TopicPartition]error, error) {
	if f.commitErr != nil {
		return f.commitErr, nil
	}
	f.committed = append(f.committed, moves...)
	for _, m := range moves {
		f.off.Committed, f.off.Metadata = m.Target, m.TargetMetadata
	}
	if f.afterCommit != nil {
		f.afterCommit(f)
	}
	return map[kpart.TopicPartition]error{}, nil
}

func (f *fakeCluster) DeleteOffsets(ctx context.Context, group string, tps []kpart.TopicPartition) (map[kpart.TopicPartition]error, error) {
	out := map[kpart.TopicPartition]error{}
	for _, tp := range tps {
		f.deleted = append(f.deleted, tp)
		if tp == (kpart.TopicPartition{Topic: f.off.Topic, Partition: f.off.Partition}) {
			f.off.Committed, f.off.CommittedEpoch, f.off.Metadata = -1, -1, ""
		}
		out[tp] = nil
	}
	return out, nil
}

func (f *fakeCluster) Committed(ctx context.Context, group string) (map[kpart.TopicPartition]CommittedOffset, error) {
	if f.off.Committed < 0 {
		return map[kpart.TopicPartition]CommittedOffset{}, nil // as FetchOffsets: a partition without a commit is absent
	}
	return map[kpart.TopicPartition]CommittedOffset{{Topic: f.off.Topic, Partition: f.off.Partition}: {Offset: f.off.Committed, Metadata: f.off.Metadata}}, nil
}

func seedCluster() *fakeCluster {
	return &fakeCluster{
		group: inspect.Group{ID: "g", State: "Empty", Members: []inspect.Member{}},
		off:   seedOffsets(),
		spans: []inspect.Span{{First: 0, Last: 199, Kind: inspect.Record}, {First: 200, Last: 200, Kind: inspect.CommitMarker}, {First: 201, Last: 201, Kind: inspect.Record}},
	}
}

func seedEvidence(t *testing.T) *evidence.Set {
	s := evidence.NewSet()
	if err := s.Read(bytes.NewBufferString("stranded/0:0-81\nstranded/0:201\n"), "ev"); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanFromEvidenceMovesToTheFirstLostRecord(t *testing.T) {
	cl := seedCluster()
	p, err := NewPlan(context.Background(), cl, Options{Group: "g", Evidence: seedEvidence(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Moves) != 1 {
		t.Fatalf("moves %+v", p.Moves)
	}
	m := p.Moves[0]
	if m.Committed != 202 || m.Target != 82 || m.Direction != Back || m.Redeliver != 119 || *m.Lost != 118 || *m.AlreadyDelivered != 1 || m.Source != FromEvidence {
		t.Fatalf("move %+v", m)
	}
	if len(m.LostRanges) != 1 || m.LostRanges[0].First != 82 || m.LostRanges[0].Last != 199 {
		t.Fatalf("lost ranges %+v", m.LostRanges)
	}
}

func TestExecute(t *testing.T) {
	member := inspect.Member{ID: "consumer-1-abc", ClientID: "billing", Host: "10.0.0.7"}
	cases := []struct {
		name    string
		prepare func(cl *fakeCluster)
		targets []Target
		wantErr error
		says    string
	}{
		{"an empty group is rewound and verified", nil, nil, nil, ""},
		{"a group with members is refused and the member named", func(cl *fakeCluster) {
			cl.group.State, cl.group.Members = "Stable", []inspect.Member{member}
		}, nil, ErrGroupActive, "consumer-1-abc (client billing on 10.0.0.7)"},
		{"a consumer-protocol group with a member is refused, naming the member and its partitions", func(cl *fakeCluster) {
			cl.group.GroupProtocol, cl.group.State = inspect.ProtocolConsumer, "Stable"
			m := member
			m.Assigned = inspect.Assignment{{Topic: "stranded", Partitions: []int32{0, 1}}}
			cl.group.Members = []inspect.Member{m}
		}, nil, ErrGroupActive, "consumer-1-abc (client billing on 10.0.0.7) owning stranded/0,1"},
		{"a group rebalancing is refused", func(cl *fakeCluster) { cl.group.State = "PreparingRebalance" }, nil, ErrGroupActive, "state PreparingRebalance"},
		{"a forward move is refused", func(cl *fakeCluster) { cl.off.Committed = 82 }, []Target{{Topic: "stranded", Offset: 202, LeaderEpoch: -1}}, ErrUnsafe, "--allow-forward"},
		{"a target below the log start is refused", func(cl *fakeCluster) { cl.off.LogStart = 100 }, []Target{{Topic: "stranded", Offset: 82, LeaderEpoch: -1}}, ErrUnsafe, "below the log start offset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := seedCluster()
			if c.prepare != nil {
				c.prepare(cl)
			}
			o := Options{Group: "g", Evidence: seedEvidence(t), Targets: c.targets, Source: FromFlag}
			p, err := NewPlan(context.Background(), cl, o)
			if err != nil {
				t.Fatal(err)
			}
			undo := filepath.Join(t.TempDir(), "undo.json")
			res, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: undo, Version: "test"})
			if c.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Checks) != 1 || !res.Checks[0].OK || res.Checks[0].Now != 82 || cl.off.Committed != 82 {
					t.Fatalf("result %+v, committed %d", res, cl.off.Committed)
				}
				if _, err := os.Stat(undo); err != nil {
					t.Fatalf("no undo file: %v", err)
				}
				return
			}
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err %v, want %v saying %q", err, c.wantErr, c.says)
			}
			if len(cl.committed) != 0 {
				t.Fatal("a refused plan must commit nothing")
			}
			if _, err := os.Stat(undo); !os.IsNotExist(err) {
				t.Fatal("a refused plan must not write an undo file")
			}
		})
	}
}

// TestACommitTheBrokerRejectsQuotesTheBrokersAnswer: the check saw no member, the
// broker answered UNKNOWN_MEMBER_ID to the holding member's commit anyway; the message
// quotes that answer and the state the check saw, and does not invent a consumer that
// joined in between.
func TestACommitTheBrokerRejectsQuotesTheBrokersAnswer(t *testing.T) {
	cl := seedCluster()
	cl.group.GroupProtocol = inspect.ProtocolClassic
	cl.commitErr = map[kpart.TopicPartition]error{{Topic: "stranded", Partition: 0}: kerr.UnknownMemberID}
	p, err := NewPlan(context.Background(), cl, Options{Group: "g", Evidence: seedEvidence(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), cl, p, ExecOptions{UndoPath: filepath.Join(t.TempDir(), "undo.json"), Version: "test"})
	if !errors.Is(err, ErrGroupActive) {
		t.Fatalf("err %v, want ErrGroupActive", err)
	}
	for _, want := range []string{"answering stranded/0: " + kerr.UnknownMemberID.Error(), "a classic group in state Empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "joined") {
		t.Errorf("%q guesses at a reason", err)
	}
}

// TestUndoOfASetMoveRestoresTheMissingCommitByDeletingIt walks the round trip of a
// partition the group had no committed offset for: the rewind sets one, the undo file
// says there was none, and restoring it deletes the group's offset again.
func TestUndoOfASetMoveRestoresTheMissingCommitByDeletingIt(t *testing.T) {
	cl := seedCluster()
	cl.off.Committed, cl.off.CommittedEpoch = -1, -1
	dir := t.TempDir()
	p, err := NewPlan(context.Background(), cl, Options{Group: "g", Targets: []Target{{Topic: "stranded", Offset: 0, LeaderEpoch: -1}}, Source: FromFlag})
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Moves[0]; m.Direction != Set || m.Refused != "" {
		t.Fatalf("move %+v, want an allowed set", m)
	}
	undo := filepath.Join(dir, "undo.json")
	if _, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: undo, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if cl.off.Committed != 0 {
		t.Fatalf("committed %d after the set, want 0", cl.off.Committed)
	}
	data, err := os.ReadFile(undo)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"no_committed_offset": true`) {
		t.Fatalf("the undo file must say the partition had no committed offset:\n%s", data)
	}

	f, err := ReadUndo(data, undo)
	if err != nil {
		t.Fatalf("the undo file of a set move must read back: %v", err)
	}
	if got := f.Targets[0]; !got.Delete || got.Offset != -1 {
		t.Fatalf("target %+v, want a delete", got)
	}
	restore := Options{Group: "g", Targets: f.Targets, Source: f.Kind}
	p, err = NewPlan(context.Background(), cl, restore)
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Moves[0]; m.Direction != Delete || !strings.Contains(m.Refused, "--allow-forward") {
		t.Fatalf("restoring without --allow-forward: move %+v, want a refused delete", m)
	}
	restore.AllowForward = true
	if p, err = NewPlan(context.Background(), cl, restore); err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: filepath.Join(dir, "undo2.json"), Version: "test"})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if cl.off.Committed != -1 || len(cl.deleted) != 1 || len(cl.committed) != 1 {
		t.Fatalf("after the restore: committed %d, deleted %v, commits %v; want the offset deleted and nothing else committed", cl.off.Committed, cl.deleted, cl.committed)
	}
	if c := res.Checks[0]; !c.OK || c.Before != 0 || c.Target != -1 || c.Now != -1 {
		t.Fatalf("check %+v, want 0 -> none read back as none", c)
	}
	// The restore's own undo file leads back to 0.
	if res.Undo.Offsets[0].Offset != 0 || res.Undo.Offsets[0].NoCommittedOffset {
		t.Fatalf("undo of the restore %+v, want offset 0", res.Undo.Offsets[0])
	}
	// Restoring again finds nothing to do.
	if p, err = NewPlan(context.Background(), cl, restore); err != nil || p.Moves[0].Direction != None {
		t.Fatalf("restoring twice: %v %+v", err, p.Moves)
	}
}

func TestReadFileReadsAMissingCommitOnlyAsOffsetMinusOne(t *testing.T) {
	cases := []struct {
		name, offset string
		delete       bool
		says         string
	}{
		{"the marker with offset -1 is a delete", `"offset":-1,"no_committed_offset":true`, true, ""},
		{"offset -1 alone (undo files before the marker) is a delete", `"offset":-1`, true, ""},
		{"the marker with a real offset is contradictory", `"offset":5,"no_committed_offset":true`, false, "want offset -1"},
		{"another negative offset is an error", `"offset":-2`, false, "offset >= 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := `{"schema":"kstranded.rewind-undo/v1","group":"g","offsets":[{"topic":"t","partition":0,` + c.offset + `}]}`
			f, err := ReadUndo([]byte(in), "undo.json")
			if c.says != "" {
				if err == nil || !strings.Contains(err.Error(), c.says) {
					t.Fatalf("got %v, want an error saying %q", err, c.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Targets[0]; got.Delete != c.delete || got.Offset != -1 {
				t.Fatalf("target %+v", got)
			}
		})
	}
}

func TestDecideDelete(t *testing.T) {
	del := Target{Topic: "stranded", Offset: -1, LeaderEpoch: -1, Delete: true}
	if m := Decide(seedOffsets(), del, FromUndo, Rules{AllowForward: true}); m.Direction != Delete || m.Refused != "" || m.Target != -1 {
		t.Fatalf("deleting a committed offset with --allow-forward: %+v", m)
	}
	o := seedOffsets()
	o.LogStart = 100 // no bound applies: nothing is committed
	if m := Decide(o, del, FromUndo, Rules{AllowForward: true}); m.Refused != "" {
		t.Fatalf("a delete is not bounded by the log start: %s", m.Refused)
	}
	if m := Decide(seedOffsets(), del, FromUndo, Rules{AllowForward: false}); !strings.Contains(m.Refused, "auto.offset.reset") {
		t.Fatalf("a delete without --allow-forward must be refused: %+v", m)
	}
	o.Committed = -1
	if m := Decide(o, del, FromUndo, Rules{AllowForward: false}); m.Direction != None || m.Refused != "" {
		t.Fatalf("a partition without a commit is already restored: %+v", m)
	}
}

// After a rewind to 100, a consumer advanced the group to 142: restoring the undo file
// (202) now would skip 142-201, which the consumer has not delivered since the rewind.
func TestRestoringAnUndoFileIsRefusedWhenTheGroupMovedOnSinceTheRewind(t *testing.T) {
	rewoundTo := int64(100)
	undo := Target{Topic: "stranded", Offset: 202, LeaderEpoch: -1, Expect: &rewoundTo, Undo: true}
	o := seedOffsets()
	o.Committed = 142
	m := Decide(o, undo, FromUndo, Rules{AllowForward: true})
	if !strings.Contains(m.Refused, "no longer where the rewind left it (rewound to 100, now 142: a consumer committed 42 offsets further)") || !strings.Contains(m.Refused, "--force") {
		t.Fatalf("refusal %q", m.Refused)
	}
	if m := Decide(o, undo, FromUndo, Rules{AllowForward: true, Force: true}); m.Refused != "" || m.Direction != Forward {
		t.Fatalf("--force restores anyway: %+v", m)
	}
	o.Committed = 100
	if m := Decide(o, undo, FromUndo, Rules{AllowForward: true}); m.Refused != "" {
		t.Fatalf("the group where the rewind left it is restored: %q", m.Refused)
	}
}

func TestAnEditedRewoundToIsCheckedLikeAnyOther(t *testing.T) {
	in := `{"schema":"kstranded.rewind-undo/v1","group":"g","offsets":[{"topic":"stranded","partition":0,"offset":202,"leader_epoch":-1,"metadata":"","rewound_to":150}]}`
	f, err := ReadUndo([]byte(in), "undo.json")
	if err != nil {
		t.Fatal(err)
	}
	o := seedOffsets()
	o.Committed = 82
	if m := Decide(o, f.Targets[0], FromUndo, Rules{AllowForward: true}); !strings.Contains(m.Refused, "rewound to 150, now 82: moved back by 68 offsets") {
		t.Fatalf("refusal %q", m.Refused)
	}
	bad := strings.Replace(in, `"rewound_to":150`, `"rewound_to":-7`, 1)
	if _, err := ReadUndo([]byte(bad), "undo.json"); err == nil || !strings.Contains(err.Error(), "rewound_to -7") {
		t.Fatalf("a negative rewound_to: %v", err)
	}
}

func TestATakenDefaultUndoNameGetsASuffixAndAnExplicitOneIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kstranded-undo-g-20260102T030405Z.json")
	var got []string
	for range 3 {
		f, p, err := createUndoFile(path, true)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		got = append(got, filepath.Base(p))
	}
	want := []string{"kstranded-undo-g-20260102T030405Z.json", "kstranded-undo-g-20260102T030405Z-2.json", "kstranded-undo-g-20260102T030405Z-3.json"}
	if !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	if _, _, err := createUndoFile(path, false); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Fatalf("an explicit --undo-file that exists: %v", err)
	}
}

// TestAnotherWriterBetweenTheCommitAndTheReadBackIsNamed: two rewinds of one group at
// once both used to read back the offsets they wrote and report DONE. Each run commits
// its own token as the offset metadata; the read-back compares offset and metadata.
func TestAnotherWriterBetweenTheCommitAndTheReadBackIsNamed(t *testing.T) {
	cases := []struct {
		name  string
		other func(f *fakeCluster)
		says  string
	}{
		{"a second rewind committing the same offset is told apart by its token", func(f *fakeCluster) {
			f.off.Metadata = TokenPrefix + "0123456789abcdef"
		}, `offset 82 committed with metadata "kstranded-rewind:0123456789abcdef", not this run's "kstranded-rewind:run-a"`},
		{"a consumer committing further is named with the offset it left", func(f *fakeCluster) {
			f.off.Committed, f.off.Metadata = 150, ""
		}, `wrote 82, read back 150`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := seedCluster()
			cl.afterCommit = c.other
			p, err := NewPlan(context.Background(), cl, Options{Group: "g", Evidence: seedEvidence(t)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: filepath.Join(t.TempDir(), "undo.json"), Version: "test", Token: TokenPrefix + "run-a"})
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "another writer intervened") || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err %v, want ErrMismatch saying another writer intervened and %q", err, c.says)
			}
			if res == nil || len(res.Checks) != 1 || res.Checks[0].OK {
				t.Fatalf("result %+v, want the partition checked and not OK", res)
			}
		})
	}
}

func TestARewindCommitsItsTokenAndAnUndoRestoresTheOriginalMetadataExactly(t *testing.T) {
	cl := seedCluster()
	cl.off.Metadata = "the application's own"
	dir := t.TempDir()
	p, err := NewPlan(context.Background(), cl, Options{Group: "g", Evidence: seedEvidence(t)})
	if err != nil {
		t.Fatal(err)
	}
	undo := filepath.Join(dir, "undo.json")
	if _, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: undo, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cl.off.Metadata, TokenPrefix) || p.Moves[0].TargetMetadata != cl.off.Metadata {
		t.Fatalf("committed metadata %q, plan shows %q; want the run's token in both", cl.off.Metadata, p.Moves[0].TargetMetadata)
	}
	data, err := os.ReadFile(undo)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadUndo(data, undo)
	if err != nil {
		t.Fatal(err)
	}
	p, err = NewPlan(context.Background(), cl, Options{Group: "g", Targets: f.Targets, Source: f.Kind, AllowForward: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: filepath.Join(dir, "undo2.json"), Version: "test"}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if cl.off.Committed != 202 || cl.off.Metadata != "the application's own" {
		t.Fatalf("after the restore: %d %q, want 202 with the original metadata", cl.off.Committed, cl.off.Metadata)
	}
}

// TestAWriterBetweenThePlanAndTheHoldRefusesTheRewind: issue 27 §1. Two rewinds planned
// against 202 at once: the one that holds the group second finds the first one's commit
// and changes nothing, naming the offset and token the group holds now.
func TestAWriterBetweenThePlanAndTheHoldRefusesTheRewind(t *testing.T) {
	cl := seedCluster()
	p, err := NewPlan(context.Background(), cl, Options{Group: "g", Evidence: seedEvidence(t)})
	if err != nil {
		t.Fatal(err)
	}
	cl.beforeHold = func(f *fakeCluster) { f.off.Committed, f.off.Metadata = 60, TokenPrefix+"0123456789abcdef" }
	undo := filepath.Join(t.TempDir(), "undo.json")
	res, err := Execute(context.Background(), cl, p, ExecOptions{UndoPath: undo, Version: "test"})
	if !errors.Is(err, ErrUnsafe) || !IsRefusal(err) || !strings.Contains(err.Error(), "planned against 202, now 60 (committed by another kstranded rewind, token kstranded-rewind:0123456789abcdef)") {
		t.Fatalf("err %v, want a refusal naming the offset and token the group holds now", err)
	}
	if res != nil || len(cl.committed) != 0 || cl.released != 1 {
		t.Fatalf("result %+v, commits %v, released %d: want nothing committed and the hold released", res, cl.committed, cl.released)
	}
	if _, err := os.Stat(undo); !os.IsNotExist(err) {
		t.Fatalf("an undo file was written for a rewind that changed nothing: %v", err)
	}
}

// TestAnExecuteInterruptedAfterItsCommitWasSentReadsBack: issue 27 §6. Interrupted once
// the commit was sent, Execute used to say only "interrupted", with nothing verified.
// It says the commit may have been applied, reads the offsets back, and names the undo
// file.
func TestAnExecuteInterruptedAfterItsCommitWasSentReadsBack(t *testing.T) {
	cl := seedCluster()
	p, err := NewPlan(context.Background(), cl, Options{Group: "g", Evidence: seedEvidence(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl.interruptCommit = cancel
	undo := filepath.Join(t.TempDir(), "undo.json")
	res, err := Execute(ctx, cl, p, ExecOptions{UndoPath: undo, Version: "test", Restore: func(p string) string { return "kstranded rewind --from-file " + p }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want an interruption", err)
	}
	for _, want := range []string{"interrupted after the commit was sent", "it may have been applied", "stranded/0 at 82 (the target)", "undo file " + undo, "to restore: kstranded rewind --from-file " + undo} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if res == nil || len(res.Checks) != 1 || res.Checks[0].Now != 82 || !res.Checks[0].OK || cl.released != 1 {
		t.Fatalf("result %+v released %d, want the offset read back (82) and the hold released", res, cl.released)
	}
}
