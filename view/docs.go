package view

import (
	"encoding/json"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
	"github.com/kstranded/kstranded/rewind"
)

// The parts of kstranded's JSON documents that come from domain results. The domain
// types (inspect.Group, inspect.Offsets, inspect.Judgement, rewind.Move, rewind.Check,
// evidence.Source) carry no json tags: a document is declared once, here, in the layer
// that owns the output, and a file read back (a saved rewind plan) is read through the
// same declaration (ReadRewindFile). Where a field has the same shape as the domain's,
// the builder converts it (Go converts structs whose fields differ only in tags).
//
// Every key is present in every document; a value that is missing is null, never an
// absent key (scripts test one thing).

// GroupDoc is a consumer group as inspect and rewind describe it.
type GroupDoc struct {
	ID string `json:"group"`
	// GroupProtocol is classic or consumer; null when the group is unknown.
	GroupProtocol *string `json:"group_protocol"`
	// State is as the broker reports it, or "unknown".
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Protocol     string `json:"protocol"`
	// Epoch and AssignmentEpoch: the consumer protocol's group epoch and target
	// assignment epoch; null for classic groups.
	Epoch           *int32      `json:"group_epoch"`
	AssignmentEpoch *int32      `json:"assignment_epoch"`
	Members         []MemberDoc `json:"members"`
	Err             *string     `json:"error"`
}

// MemberDoc is one member of a group.
type MemberDoc struct {
	ID         string  `json:"member_id"`
	InstanceID *string `json:"instance_id"` // static membership; null without
	ClientID   string  `json:"client_id"`
	Host       string  `json:"client_host"`
	Partitions int     `json:"assigned_partitions"`
	// Assigned are the partitions the member owns now.
	Assigned []AssignmentDoc `json:"assigned"`
	// Target is the consumer protocol's target assignment, when it differs from
	// Assigned (the member is reconciling); else null.
	Target      []AssignmentDoc `json:"target_assignment"`
	MemberEpoch *int32          `json:"member_epoch"`
}

// AssignmentDoc is a member's partitions of one topic.
type AssignmentDoc struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// OffsetsDoc is one partition's offsets.
type OffsetsDoc struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the group's committed offset, -1 when the group has none.
	Committed      int64  `json:"committed"`
	CommittedEpoch int32  `json:"committed_leader_epoch"`
	Metadata       string `json:"committed_metadata"`
	LogStart       int64  `json:"log_start_offset"`
	LastStable     int64  `json:"last_stable_offset"`
	HighWatermark  int64  `json:"high_watermark"`
	Owner          Text   `json:"owner"` // member ID of the member assigned the partition; null for none
	Err            Text   `json:"error"` // why the partition could not be read; null when it could
}

// NoteDoc is a run of offsets and what they are.
type NoteDoc struct {
	First int64  `json:"first"`
	Last  int64  `json:"last"`
	What  string `json:"what"`
}

// JudgementDoc is the verdict on one partition and its grounds.
type JudgementDoc struct {
	Delivered          int64               `json:"delivered"`
	Duplicates         int64               `json:"duplicates"`
	Lost               []kpart.RecordRange `json:"lost"`
	LostCount          int64               `json:"lost_count"`
	Stranded           []kpart.RecordRange `json:"stranded"`
	StrandedCount      int64               `json:"stranded_count"`
	Unrecoverable      []kpart.RecordRange `json:"unrecoverable"`
	UnrecoverableCount int64               `json:"unrecoverable_count"`
	// Unjudged: committed past, not delivered, contents unknown (offsets, not records).
	Unjudged        []kpart.RecordRange `json:"unjudged"`
	UnjudgedCount   int64               `json:"unjudged_count"`
	InFlightCount   int64               `json:"in_flight_count"` // records the client still held at the evidence's end
	SafeRewind      *int64              `json:"safe_rewind_offset"`
	NotDeliverable  []NoteDoc           `json:"not_deliverable"`
	InvalidEvidence []NoteDoc           `json:"invalid_evidence"`
	// ScanFrom, ScanTo: the offsets inspect read from the partition (0, 0 when none).
	ScanFrom      int64           `json:"scan_from"`
	ScanTo        int64           `json:"scan_to"` // exclusive
	ScanTruncated bool            `json:"scan_truncated"`
	Verdict       verdict.Verdict `json:"verdict"`
	Judged        bool            `json:"judged"` // OK, STRANDED or LOST; false: NOT JUDGED (the reason says what would settle it)
	Reason        *string         `json:"reason"`
	// Basis: one sentence per kind of evidence the judgement rests on.
	Basis []string `json:"basis"`
}

// SourceDoc is one evidence file as it was read.
type SourceDoc struct {
	Name      string          `json:"name"`
	Format    evidence.Format `json:"format"`
	Topic     Text            `json:"topic"` // the trace's topic, null when the file names none
	Group     Text            `json:"group"` // the trace's group, null when the file names none
	Gzip      bool            `json:"gzip"`
	Records   int64           `json:"records"`
	Lines     int             `json:"lines"`
	Ignored   int             `json:"ignored"`
	Malformed int             `json:"malformed"`
	// Kinds says what was counted and what was ignored, per kind of line (their lines
	// add up to lines + ignored).
	Kinds []KindDoc `json:"kinds"`
}

// KindDoc is one kind of line of an evidence file (evidence.Kind).
type KindDoc struct {
	// Name: msg=processed for JSON log lines told apart by their message, else what the
	// lines are ("serve events", "text (ranges)", "other log lines").
	Name string `json:"name"`
	// Field and Value: the message field (msg or message) and its value; null for a
	// kind not told apart by a message.
	Field Text    `json:"field"`
	Value *string `json:"value"`
	// Varies: the lines hold many messages that differ in words holding a digit (an
	// id, a count), which value shows as <n>.
	Varies bool `json:"varies"`
	// AppLog: application log lines that carry a partition and an offset, the kinds
	// --delivered-when picks among.
	AppLog  bool `json:"app_log"`
	Counted bool `json:"counted"`
	Lines   int  `json:"lines"`
	// First and Last: the lowest and highest offset its lines name (over all
	// partitions); null when they name none.
	First  *int64 `json:"first_offset"`
	Last   *int64 `json:"last_offset"`
	Sample string `json:"sample"`
	// Why: for a kind not counted, why its lines were ignored; else null.
	Why Text `json:"ignored_because"`
}

// MoveDoc is one partition of a rewind plan.
type MoveDoc struct {
	Topic             string              `json:"topic"`
	Partition         int32               `json:"partition"`
	Committed         int64               `json:"committed"` // -1: the group has none
	CommittedEpoch    int32               `json:"committed_leader_epoch"`
	CommittedMetadata string              `json:"committed_metadata"`
	Target            int64               `json:"target"`
	TargetEpoch       int32               `json:"target_leader_epoch"`
	TargetMetadata    string              `json:"target_metadata"`
	LogStart          int64               `json:"log_start_offset"`
	LastStable        int64               `json:"last_stable_offset"`
	HighWatermark     int64               `json:"high_watermark"`
	Direction         rewind.Direction    `json:"direction"`
	Source            rewind.Source       `json:"source"`
	Redeliver         int64               `json:"redeliver"`
	Lost              *int64              `json:"lost"`
	AlreadyDelivered  *int64              `json:"already_delivered"`
	LostRanges        []kpart.RecordRange `json:"lost_ranges"`
	Skip              int64               `json:"skip"`
	CountTruncated    bool                `json:"count_truncated"`
	Refused           Text                `json:"refused"` // why the move must not be applied; null when it may
}

// CheckDoc is one partition read back after a rewind's commit.
type CheckDoc struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    int64  `json:"before"`
	Target    int64  `json:"target"` // -1: the committed offset was deleted
	Now       int64  `json:"now"`    // -1: no committed offset read back
	OK        bool   `json:"ok"`
	Err       Text   `json:"error"` // the broker's answer to this partition's commit; null for none
}

func offsetsDoc(o inspect.Offsets) OffsetsDoc {
	return OffsetsDoc{Topic: o.Topic, Partition: o.Partition, Committed: o.Committed, CommittedEpoch: o.CommittedEpoch,
		Metadata: o.Metadata, LogStart: o.LogStart, LastStable: o.LastStable, HighWatermark: o.HighWatermark,
		Owner: Text(o.Owner), Err: Text(o.Err)}
}

func strOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func assignmentDoc(a inspect.Assignment) []AssignmentDoc {
	if a == nil {
		return nil
	}
	out := make([]AssignmentDoc, len(a))
	for i, ta := range a {
		out[i] = AssignmentDoc(ta)
	}
	return out
}

func groupDoc(g inspect.Group) GroupDoc {
	d := GroupDoc{ID: g.ID, GroupProtocol: strOrNull(g.GroupProtocol), State: g.State, ProtocolType: g.ProtocolType,
		Protocol: g.Protocol, Epoch: g.Epoch, AssignmentEpoch: g.AssignmentEpoch, Members: []MemberDoc{}, Err: strOrNull(g.Err)}
	for _, m := range g.Members {
		md := MemberDoc{ID: m.ID, InstanceID: strOrNull(m.InstanceID), ClientID: m.ClientID, Host: m.Host, Partitions: m.Partitions,
			Assigned: assignmentDoc(m.Assigned), Target: assignmentDoc(m.Target), MemberEpoch: m.MemberEpoch}
		if md.Assigned == nil {
			md.Assigned = []AssignmentDoc{}
		}
		d.Members = append(d.Members, md)
	}
	return d
}

func notesDoc(ns []inspect.Note) []NoteDoc {
	out := make([]NoteDoc, len(ns))
	for i, n := range ns {
		out[i] = NoteDoc(n)
	}
	return out
}

func judgementDoc(j *inspect.Judgement) *JudgementDoc {
	if j == nil {
		return nil
	}
	d := JudgeDoc(j.Judgement)
	d.ScanFrom, d.ScanTo, d.ScanTruncated = j.ScanFrom, j.ScanTo, j.ScanTruncated
	return d
}

// JudgeDoc is the one judge's answer as every command's JSON carries it.
func JudgeDoc(j judge.Judgement) *JudgementDoc {
	if j.Verdict == "" {
		return nil // not judged by the judge (a document built by hand)
	}
	return &JudgementDoc{Delivered: j.Delivered, Duplicates: j.Duplicates,
		Lost: nonNil(j.Lost), LostCount: j.LostCount, Stranded: nonNil(j.Stranded), StrandedCount: j.StrandedCount,
		Unrecoverable: nonNil(j.Unrecoverable), UnrecoverableCount: j.UnrecoverableCount,
		Unjudged: nonNil(j.Unjudged), UnjudgedCount: j.UnjudgedCount, InFlightCount: j.InFlightCount, SafeRewind: j.SafeRewind,
		NotDeliverable: notesDoc(j.NotDeliverable), InvalidEvidence: notesDoc(j.InvalidEvidence),
		Verdict: j.Verdict, Judged: j.Verdict.Judged(), Reason: strOrNull(j.Reason), Basis: nonNil(j.Basis)}
}

func sourcesDoc(ss []evidence.Source) []SourceDoc {
	out := make([]SourceDoc, len(ss))
	for i, s := range ss {
		out[i] = SourceDoc{Name: s.Name, Format: s.Format, Topic: Text(s.Topic), Group: Text(s.Group), Gzip: s.Gzip,
			Records: s.Records, Lines: s.Lines, Ignored: s.Ignored, Malformed: s.Malformed, Kinds: kindsDoc(s.Kinds)}
	}
	return out
}

func kindsDoc(ks []evidence.Kind) []KindDoc {
	out := make([]KindDoc, len(ks))
	for i, k := range ks {
		d := KindDoc{Name: k.Name, Field: Text(k.Field), Varies: k.Varies, AppLog: k.AppLog, Counted: k.Counted, Lines: k.Lines, Sample: k.Sample, Why: Text(k.Why)}
		if k.Field != "" {
			v := k.Value
			d.Value = &v
		}
		if k.First >= 0 {
			first, last := k.First, k.Last
			d.First, d.Last = &first, &last
		}
		out[i] = d
	}
	return out
}

func movesDoc(ms []rewind.Move) []MoveDoc {
	out := make([]MoveDoc, len(ms))
	for i, m := range ms {
		out[i] = MoveDoc{Topic: m.Topic, Partition: m.Partition, Committed: m.Committed, CommittedEpoch: m.CommittedEpoch,
			CommittedMetadata: m.CommittedMetadata, Target: m.Target, TargetEpoch: m.TargetEpoch, TargetMetadata: m.TargetMetadata,
			LogStart: m.LogStart, LastStable: m.LastStable, HighWatermark: m.HighWatermark, Direction: m.Direction, Source: m.Source,
			Redeliver: m.Redeliver, Lost: m.Lost, AlreadyDelivered: m.AlreadyDelivered, LostRanges: nonNil(m.LostRanges),
			Skip: m.Skip, CountTruncated: m.CountTruncated, Refused: Text(m.Refused)}
	}
	return out
}

func checksDoc(cs []rewind.Check) []CheckDoc {
	out := make([]CheckDoc, len(cs))
	for i, c := range cs {
		out[i] = CheckDoc{Topic: c.Topic, Partition: c.Partition, Before: c.Before, Target: c.Target, Now: c.Now, OK: c.OK, Err: Text(c.Err)}
	}
	return out
}

// Text is a string that a document sends as null when it is empty: an optional value
// that is missing is null in every document, never "" in one place and absent in another.
type Text string

// MarshalJSON writes null for "".
func (t Text) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(t))
}

// UnmarshalJSON reads null as "".
func (t *Text) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = ""
		return nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	*t = Text(s)
	return err
}
