package view

import (
	"bytes"
	"testing"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/rewind"
)

// dryRunPlan is the repair of the bug report's loss, planned from the evidence.
func dryRunPlan() *rewind.Plan {
	return &rewind.Plan{
		At:    fixedAt,
		Group: inspect.Group{ID: "g", GroupProtocol: inspect.ProtocolClassic, State: "Empty", ProtocolType: "consumer", Members: []inspect.Member{}},
		Moves: []rewind.Move{
			{Topic: "stranded", Partition: 0, Committed: 202, CommittedEpoch: 0, Target: 82, TargetEpoch: -1, LogStart: 0, LastStable: 202, HighWatermark: 202,
				Direction: rewind.Back, Source: rewind.FromEvidence, Redeliver: 119, Lost: i64(118), AlreadyDelivered: i64(1),
				LostRanges: []kpart.RecordRange{kpart.Counted(82, 199, 118)}},
			{Topic: "stranded", Partition: 1, Committed: -1, CommittedEpoch: -1, Target: 0, TargetEpoch: -1, LogStart: 0, LastStable: 40, HighWatermark: 40,
				Direction: rewind.Set, Source: rewind.FromEvidence},
			{Topic: "stranded", Partition: 3, Committed: 9, CommittedEpoch: 2, Target: 9, TargetEpoch: -1, LogStart: 0, LastStable: 9, HighWatermark: 9,
				Direction: rewind.None, Source: rewind.FromEvidence},
		},
		Unchanged: 2,
		Notes:     []string{"stranded/4: not judged (INCOMPLETE): the scan stopped at --max-scan; not planned"},
		Evidence: &evidence.Set{Sources: []evidence.Source{{Name: "trace.jsonl", Format: evidence.FormatTrace, Topic: "stranded", Group: "g", Records: 83, Lines: 5, Ignored: 2,
			Kinds: []evidence.Kind{
				{Name: "serve events", Counted: true, Lines: 5, First: 0, Last: 201, Sample: `{"ev":"serve","partition":0,"offsets":[0,1,2]}`},
				{Name: "other trace events", Lines: 2, First: -1, Last: -1, Sample: `{"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","group":"g"}`, Why: "only serve events name deliveries"},
			}}}},
	}
}

// refusedPlan has a member in the group and a forward move.
func refusedPlan() *rewind.Plan {
	p := dryRunPlan()
	p.Group.State = "Stable"
	p.Group.Members = []inspect.Member{{ID: "consumer-1-abc", ClientID: "billing", Host: "/10.0.0.7", Partitions: 2,
		Assigned: inspect.Assignment{{Topic: "stranded", Partitions: []int32{0, 1}}}}}
	p.Moves = append(p.Moves, rewind.Move{Topic: "stranded", Partition: 5, Committed: 50, Target: 60, TargetEpoch: -1, LogStart: 0, LastStable: 70, HighWatermark: 70,
		Direction: rewind.Forward, Source: rewind.FromFlag, Skip: 10, CountTruncated: true,
		Refused: "moving forward from 50 to 60 skips offsets 50-59 without delivering them; pass --allow-forward if that is intended (restoring an undo file is a forward move)"})
	return p
}

// executedResult is what Execute returns for dryRunPlan.
func executedResult() *rewind.Result {
	return &rewind.Result{
		UndoPath: "kstranded-undo-g-20260102T030405Z.json",
		Undo:     rewind.Undo{Restore: "kstranded rewind --brokers kafka:9092 --group g --from-file kstranded-undo-g-20260102T030405Z.json --allow-forward --execute"},
		Checks: []rewind.Check{
			{Topic: "stranded", Partition: 0, Before: 202, Target: 82, Now: 82, OK: true},
			{Topic: "stranded", Partition: 1, Before: -1, Target: 0, Now: 0, OK: true},
		},
	}
}

func TestRewindDryRunOfTheSeedLoss(t *testing.T) {
	v := NewRewindPlan(dryRunPlan())
	if v.Mode != "dry-run" || v.Refused != "" || v.Summary.Partitions != 2 || v.Summary.Redeliver != 119 || v.Summary.Lost != 118 {
		t.Fatalf("view %+v", v)
	}
	for _, c := range []struct {
		name   string
		format render.Format
		pretty bool
	}{{"rewind-dryrun-pipe", render.Table, false}, {"rewind-dryrun-terminal", render.Table, true}, {"rewind-dryrun-json", render.JSON, false}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintRewind(&b, v, c.format, c.pretty); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

func TestARefusedPlanSaysWhyAndThatNothingChanged(t *testing.T) {
	v := NewRewindPlan(refusedPlan())
	if v.Summary.Refused != 1 || v.Busy == "" {
		t.Fatalf("view %+v", v)
	}
	if want := "stranded/5: moving forward from 50 to 60"; len(v.Refused) < len(want) || string(v.Refused[:len(want)]) != want {
		t.Fatalf("refused %q", v.Refused)
	}
	var b bytes.Buffer
	if err := PrintRewind(&b, v, render.Table, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "rewind-refused-pipe", b.Bytes())
}

func TestAnExecutedRewindShowsTheOffsetsReadBackAndTheWayBack(t *testing.T) {
	v := NewRewindExecution(dryRunPlan(), executedResult(), nil)
	if v.Mode != "execute" || v.Executed == nil || !v.Executed.OK {
		t.Fatalf("view %+v", v)
	}
	for _, c := range []struct {
		name   string
		format render.Format
	}{{"rewind-executed-pipe", render.Table}, {"rewind-executed-json", render.JSON}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintRewind(&b, v, c.format, false); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

// TestRestoringAPartitionWithoutACommitShowsADelete: the undo of a set move deletes the
// group's offset; the table shows no target and says where the group starts.
func TestRestoringAPartitionWithoutACommitShowsADelete(t *testing.T) {
	p := &rewind.Plan{
		At:    fixedAt,
		Group: inspect.Group{ID: "g", GroupProtocol: inspect.ProtocolClassic, State: "Empty", Members: []inspect.Member{}},
		Moves: []rewind.Move{
			{Topic: "stranded", Partition: 0, Committed: 82, CommittedEpoch: -1, Target: 202, TargetEpoch: 0, LogStart: 0, LastStable: 202, HighWatermark: 202,
				Direction: rewind.Forward, Source: rewind.FromUndo, Skip: 119},
			{Topic: "stranded", Partition: 1, Committed: 0, CommittedEpoch: -1, Target: -1, TargetEpoch: -1, LogStart: 0, LastStable: 40, HighWatermark: 40,
				Direction: rewind.Delete, Source: rewind.FromUndo},
			{Topic: "stranded", Partition: 2, Committed: -1, CommittedEpoch: -1, Target: -1, TargetEpoch: -1, LogStart: 0, LastStable: 40, HighWatermark: 40,
				Direction: rewind.None, Source: rewind.FromUndo},
		},
	}
	res := &rewind.Result{
		UndoPath: "u2.json",
		Undo:     rewind.Undo{Restore: "kstranded rewind --brokers kafka:9092 --group g --from-file u2.json --allow-forward --execute"},
		Checks: []rewind.Check{
			{Topic: "stranded", Partition: 0, Before: 82, Target: 202, Now: 202, OK: true},
			{Topic: "stranded", Partition: 1, Before: 0, Target: -1, Now: -1, OK: true},
		},
	}
	v := NewRewindExecution(p, res, nil)
	if v.Summary.Partitions != 2 {
		t.Fatalf("summary %+v: the delete is a move", v.Summary)
	}
	var b bytes.Buffer
	if err := PrintRewind(&b, v, render.Table, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "rewind-restore-pipe", b.Bytes())
}
