package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
)

// fixedAt is the time every fixture was taken at.
var fixedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func i64(v int64) *int64 { return &v }

// lossReport is the bug report's loss on stranded/0 as inspect reports it, with a
// partition still pending, one that could not be read, stray evidence and a deleted topic.
func lossReport() *inspect.Report {
	ev := &evidence.Set{
		Sources: []evidence.Source{
			{Name: "trace.jsonl", Format: evidence.FormatTrace, Topic: "stranded", Group: "g", Records: 83},
			{Name: "app.txt", Format: evidence.FormatText, Group: "other", Records: 10, Malformed: 3},
			{Name: "app.log", Format: evidence.FormatJSONLines, Records: 71, Lines: 71, Ignored: 86, Kinds: []evidence.Kind{
				{Name: "msg=processed", Field: "msg", Value: "processed", AppLog: true, Counted: true, Lines: 71, First: 0, Last: 201,
					Sample: `{"level":30,"msg":"processed","topic":"stranded","partition":0,"offset":"0"}`},
				{Name: "other log lines", Lines: 3, First: -1, Last: -1, Sample: `{"level":30,"msg":"consumer connected"}`, Why: "no partition and offset"},
				{Name: "msg=processing", Field: "msg", Value: "processing", AppLog: true, Lines: 83, First: 0, Last: 201,
					Sample: `{"level":30,"msg":"processing","topic":"stranded","partition":0,"offset":"0"}`, Why: "not --delivered-when msg=processed"},
			}},
		},
		Malformed: []evidence.Malformed{{Source: "app.txt", Line: 7, Text: "not a line", Reason: "want TOPIC PARTITION OFFSET"}},
		Parts:     map[kpart.TopicPartition]*evidence.Partition{},
	}
	return &inspect.Report{
		At: fixedAt,
		Group: inspect.Group{ID: "g", GroupProtocol: inspect.ProtocolClassic, State: "Stable", ProtocolType: "consumer", Protocol: "cooperative-sticky",
			Members: []inspect.Member{{ID: "consumer-1-abc", InstanceID: "billing-0", ClientID: "billing", Host: "/10.0.0.7", Partitions: 1,
				Assigned: inspect.Assignment{{Topic: "stranded", Partitions: []int32{1}}}}}},
		Evidence: ev,
		Requests: 7,
		Partitions: []inspect.PartitionReport{
			{Offsets: inspect.Offsets{Topic: "stranded", Partition: 0, Committed: 202, CommittedEpoch: 0, LogStart: 0, LastStable: 202, HighWatermark: 202},
				Judgement: &inspect.Judgement{ScanFrom: 82, ScanTo: 202, Judgement: judge.Judgement{Delivered: 83, Lost: []kpart.RecordRange{kpart.Counted(82, 199, 118)}, LostCount: 118,
					Stranded: []kpart.RecordRange{}, SafeRewind: i64(82), NotDeliverable: []inspect.Note{{First: 200, Last: 200, What: "control marker (commit)"}},
					InvalidEvidence: []inspect.Note{}, Verdict: verdict.Lost}}},
			{Offsets: inspect.Offsets{Topic: "stranded", Partition: 1, Committed: 10, CommittedEpoch: 3, Metadata: "app-meta", LogStart: 0, LastStable: 15, HighWatermark: 16, Owner: "consumer-1-abc"},
				Judgement: &inspect.Judgement{ScanFrom: 10, ScanTo: 15, Judgement: judge.Judgement{Delivered: 10, Duplicates: 2, Lost: []kpart.RecordRange{}, Stranded: []kpart.RecordRange{kpart.Counted(10, 14, 5)}, StrandedCount: 5,
					NotDeliverable: []inspect.Note{}, InvalidEvidence: []inspect.Note{{First: 20, Last: 20, What: "delivered offsets at or beyond the high watermark 16"}},
					Verdict: verdict.Stranded}}},
			{Offsets: inspect.Offsets{Topic: "stranded", Partition: 2, Committed: 100, CommittedEpoch: -1, LogStart: 0, LastStable: 120, HighWatermark: 120,
				Err: "scan of offsets 0-99 failed: no answer within 30s (--timeout)"},
				Judgement: &inspect.Judgement{Judgement: judge.Judgement{Lost: []kpart.RecordRange{}, Stranded: []kpart.RecordRange{}, NotDeliverable: []inspect.Note{}, InvalidEvidence: []inspect.Note{},
					Verdict: verdict.Error, Reason: "the partition could not be read"}}},
		},
		StrayEvidence: []inspect.Note{{First: 3, Last: 3, What: "stranded/7: 1 delivered offsets, but the group has no committed offset for this partition"}},
		DeletedTopics: []string{"gone"},
	}
}

// offsetsReport is an inspection without evidence: offsets only.
func offsetsReport() *inspect.Report {
	return &inspect.Report{
		At:    fixedAt,
		Group: inspect.Group{ID: "g", GroupProtocol: inspect.ProtocolClassic, State: "Empty", ProtocolType: "consumer", Members: []inspect.Member{}},
		Partitions: []inspect.PartitionReport{
			{Offsets: inspect.Offsets{Topic: "stranded", Partition: 0, Committed: 202, CommittedEpoch: 0, LogStart: 0, LastStable: 202, HighWatermark: 202}},
			{Offsets: inspect.Offsets{Topic: "stranded", Partition: 1, Committed: -1, CommittedEpoch: -1, LogStart: 0, LastStable: 0, HighWatermark: 0}},
		},
		Requests: 4,
	}
}

// watchReports are two inspections --watch compares.
func watchReports() (*inspect.Report, *inspect.Report) {
	prev := offsetsReport()
	cur := offsetsReport()
	cur.At = fixedAt.Add(5 * time.Second)
	cur.Partitions[0].Committed = 100
	return prev, cur
}

func TestInspectViewOfTheSeedLoss(t *testing.T) {
	v := NewInspect(lossReport())
	if v.Complete || v.Summary.Lost != 118 || *v.Partitions[0].Lag != 0 || v.Partitions[2].Lag != nil {
		t.Fatalf("view %+v", v)
	}
	for _, c := range []struct {
		name   string
		format render.Format
		pretty bool
	}{{"inspect-loss-pipe", render.Table, false}, {"inspect-loss-terminal", render.Table, true}, {"inspect-loss-json", render.JSON, false}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintInspect(&b, v, c.format, c.pretty); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

func TestInspectWithoutEvidenceShowsOffsetsAndSaysLossCannotBeJudged(t *testing.T) {
	v := NewInspect(offsetsReport())
	if v.Evidence != nil || v.Note != NoEvidenceNote || !v.Complete {
		t.Fatalf("view %+v", v)
	}
	var b bytes.Buffer
	if err := PrintInspect(&b, v, render.Table, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "inspect-offsets-pipe", b.Bytes())
}

func TestAnInterruptedInspectionIsMarkedPartial(t *testing.T) {
	r := lossReport()
	r.Interrupted = true
	v := NewInspect(r)
	if v.Complete || !v.Interrupted {
		t.Fatalf("an interrupted report must not be complete: %+v", v)
	}
	var b bytes.Buffer
	if err := PrintInspect(&b, v, render.Table, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "inspect-interrupted-pipe", b.Bytes())
	b.Reset()
	if err := PrintInspect(&b, v, render.JSON, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted bool `json:"interrupted"`
		Complete    bool `json:"complete"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || !doc.Interrupted || doc.Complete {
		t.Fatalf("json %s: %v", b.Bytes(), err)
	}
	// A finished report says it was not interrupted (the key is always there).
	b.Reset()
	_ = PrintInspect(&b, NewInspect(lossReport()), render.JSON, false)
	if !strings.Contains(b.String(), `"interrupted": false`) {
		t.Fatalf("a finished report does not say it was not interrupted:\n%s", b.String())
	}
}

func TestWatchPrintsWhatChangedSinceThePreviousInspection(t *testing.T) {
	prev, cur := watchReports()
	for _, c := range []struct {
		name   string
		format render.Format
	}{{"inspect-changes-pipe", render.Table}, {"inspect-changes-json", render.JSON}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintInspectChanges(&b, NewInspectChanges(cur, inspect.Changes(prev, cur)), c.format); err != nil {
				t.Fatal(err)
			}
			if err := PrintInspectChanges(&b, NewInspectChanges(cur, inspect.Changes(cur, cur)), c.format); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

// TestAConsumerProtocolGroupShowsEpochsAssignmentsAndTheTargetWhereItDiffers: a KIP-848
// group mid-reconciliation, one member still to receive a partition, one unknown group.
func TestAConsumerProtocolGroupShowsEpochsAssignmentsAndTheTargetWhereItDiffers(t *testing.T) {
	r := offsetsReport()
	r.Group = inspect.Group{ID: "g", GroupProtocol: inspect.ProtocolConsumer, State: "Reconciling", ProtocolType: "consumer", Protocol: "uniform",
		Epoch: i32(7), AssignmentEpoch: i32(7), Members: []inspect.Member{
			{ID: "m-1", ClientID: "billing", Host: "/10.0.0.7", Partitions: 1, MemberEpoch: i32(7),
				Assigned: inspect.Assignment{{Topic: "stranded", Partitions: []int32{0}}}},
			{ID: "m-2", ClientID: "billing", Host: "/10.0.0.8", Partitions: 0, MemberEpoch: i32(6),
				Assigned: inspect.Assignment{}, Target: inspect.Assignment{{Topic: "stranded", Partitions: []int32{1}}}},
		}}
	r.Partitions[0].Owner = "m-1"
	for _, c := range []struct {
		name   string
		format render.Format
	}{{"inspect-consumer-protocol-pipe", render.Table}, {"inspect-consumer-protocol-json", render.JSON}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintInspect(&b, NewInspect(r), c.format, false); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
	r.Group = inspect.Group{ID: "g", State: inspect.StateUnknown, Members: []inspect.Member{}}
	var b bytes.Buffer
	if err := PrintInspect(&b, NewInspect(r), render.Table, false); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "group g  state unknown  protocol -  members 0" {
		t.Errorf("unknown group: first line %q", first)
	}
}

func i32(v int32) *int32 { return &v }
