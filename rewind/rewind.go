// Package rewind plans and applies the repair for lost records: moving a consumer
// group's committed offset on a partition back to the first record it committed past
// without delivering, so the group's next consumer delivers it again.
//
// The plan is built from exactly the analysis inspect does (inspect.Run: the group's
// committed offsets, the partition's offsets, the delivery evidence and a scan of what
// each offset holds); targets can also come from the operator (ParseTargets) or from a
// saved plan or undo file (ReadFile); an undo file restores a partition that had no
// committed offset by deleting the group's offset there (Delete). Decide is the pure
// safety rule for one partition: never below the log start offset, never beyond the
// high watermark, never forward unless allowed. Execute refuses while the group has
// members (Kafka only accepts an admin offset commit for an empty group, and a live
// member would overwrite it with its own position at its next commit), writes the undo
// file before committing, and reads the committed offsets back.
//
// Two writers at once. A read-back alone cannot tell two rewinds apart: both plan
// against the same offsets, each commits and reads its own commit back before the other
// commits, and both would report DONE while the group holds only the second one's
// target. Kafka accepts an admin offset commit (no member, generation -1) for any empty
// group from anyone, so nothing orders them. Execute therefore makes the commit a
// compare-and-set the broker enforces: it first holds the group (Cluster.Hold) by
// joining it as a classic member of protocol HoldProtocol and leading a generation; it
// then reads the committed offsets and refuses (nothing written, no undo file) unless
// they are still the ones planned against; only then it writes the undo file, commits
// with its member ID and generation, reads back and leaves. Only the leader of a
// generation commits, and a generation ends only when its leader leaves or its session
// expires, after which the broker rejects commits carrying it (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID): so between one rewind's compare and its commit no other rewind's
// compare can pass, and a second rewind waits in the group (bounded by the hold's
// session) and then finds the first one's commit, refusing with the offset and token
// the group holds. A consumer cannot join the held group (its assignors do not include
// HoldProtocol: INCONSISTENT_GROUP_PROTOCOL). This is the broker's own rule on both
// kfake and Kafka, not a delay; no sleep decides who won. The per-run token still
// tells this run's commit apart on read-back from a writer that ignores the hold (an
// admin commit made after the group emptied).
//
// Targets can also come from kafka-consumer-groups.sh's --reset-offsets rules (Reset:
// to an offset, the earliest, the latest, shifted, or by timestamp through ListOffsets),
// resolved against the same inspection and judged by the same rules.
//
// What it deliberately does not do: it does not stop consumers, clamp a target into the
// log as the Java tool does, or touch groups it was not asked about; it parses no flags and prints
// nothing. Its refusals and errors are shown to operators as they are, so they name the
// kstranded flag that changes the outcome (--allow-forward, --undo-file, --timeout).
package rewind

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
)

// Errors the command layer maps to exit codes.
var (
	// ErrUnsafe: a move breaks a safety rule (forward, below log start, beyond the high
	// watermark, a stale plan). Nothing was written.
	ErrUnsafe = errors.New("unsafe move")
	// ErrGroupActive: the group has members, or the broker rejected the commit because
	// the group is not empty. Nothing was written (or, if the broker rejected part of the
	// commit, the undo file says how to restore).
	ErrGroupActive = errors.New("group has members")
	// ErrUnknownPartition: a target names a partition that does not exist.
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrMismatch: the committed offsets read back after the commit differ from the plan.
	ErrMismatch = errors.New("committed offsets do not match the plan")
)

// Direction says which way a move goes.
type Direction string

// The directions.
const (
	Back    Direction = "back"    // re-delivers records: the repair
	Forward Direction = "forward" // skips records: only with AllowForward (restoring an undo file is one)
	Set     Direction = "set"     // the group has no committed offset on the partition yet
	// Delete removes the group's committed offset: restoring an undo file written for a
	// Set move (the partition had no committed offset). Only with AllowForward.
	Delete Direction = "delete"
	None   Direction = "none" // already at the target
)

// Source says where a target came from.
type Source string

// The sources.
const (
	FromEvidence Source = "first lost record" // inspect's safe rewind offset
	FromFlag     Source = "--to"
	FromPlan     Source = "plan file"
	FromUndo     Source = "undo file"
)

// Target asks for one partition's committed offset to be Offset.
type Target struct {
	Topic     string
	Partition int32
	Offset    int64
	// LeaderEpoch and Metadata are committed with the offset; undo files restore them.
	// -1 / "" for a plain target.
	LeaderEpoch int32
	Metadata    string
	// Expect, when set, is the committed offset the target was planned against; a plan
	// file applied after the group moved on is refused (re-plan instead).
	Expect *int64
	// Delete asks for the partition to have no committed offset at all (Offset is -1):
	// the way back from a Set move, read from an undo file.
	Delete bool
	// Undo: the target restores an undo file; Expect is then where the rewind left the
	// partition (rewound_to), and a group that moved on since is refused unless forced.
	Undo bool
}

// TP returns the target's partition.
func (t Target) TP() kpart.TopicPartition {
	return kpart.TopicPartition{Topic: t.Topic, Partition: t.Partition}
}

// Move is one partition of a plan.
type Move struct {
	Topic             string
	Partition         int32
	Committed         int64 // -1: the group has none
	CommittedEpoch    int32
	CommittedMetadata string
	Target            int64
	TargetEpoch       int32
	TargetMetadata    string
	LogStart          int64
	LastStable        int64
	HighWatermark     int64
	Direction         Direction
	Source            Source
	// Redeliver counts the records in [Target, Committed) a consumer is meant to receive
	// (read from the partition: markers and aborted records are not counted): what the
	// group will deliver again after a move back.
	Redeliver int64
	// Lost and AlreadyDelivered split Redeliver by the delivery evidence: records the
	// application never saw, and records it will see a second time. Nil without evidence.
	Lost             *int64
	AlreadyDelivered *int64
	// LostRanges are the lost records the move recovers (with evidence).
	LostRanges []kpart.RecordRange
	// Skip counts the records in [Committed, Target) a forward move passes over.
	Skip int64
	// CountTruncated: the scan stopped at --max-scan; the counts are lower bounds.
	CountTruncated bool
	// Refused says why the move must not be applied; empty when it may.
	Refused string
}

// TP returns the move's partition.
func (m Move) TP() kpart.TopicPartition {
	return kpart.TopicPartition{Topic: m.Topic, Partition: m.Partition}
}

// Applies reports whether Execute commits this move.
func (m Move) Applies() bool { return m.Refused == "" && m.Direction != None }

// Plan is what rewind would do, per partition.
type Plan struct {
	At    time.Time
	Group inspect.Group
	// Moves has a row per targeted partition, in topic/partition order.
	Moves []Move
	// Unchanged counts judged partitions with nothing lost (evidence mode).
	Unchanged int
	// Notes: partitions that could not be judged, evidence problems; the plan does not
	// cover them.
	Notes    []string
	Evidence *evidence.Set
	// Unrecoverable: per partition, offsets the evidence says were never delivered and
	// that were deleted below the log start since (inspect.Judgement.Unrecoverable). No
	// move restores them; the plan says so and the command exits 3.
	Unrecoverable []Unrecoverable
}

// Unrecoverable is what a plan cannot restore on one partition.
type Unrecoverable struct {
	Topic     string              `json:"topic"`
	Partition int32               `json:"partition"`
	LogStart  int64               `json:"log_start_offset"`
	Ranges    []kpart.RecordRange `json:"ranges"`
	Count     int64               `json:"count"` // offsets (a deleted record cannot be told from a marker)
}

// UnrecoverableCount totals p.Unrecoverable.
func (p *Plan) UnrecoverableCount() int64 {
	var n int64
	for _, u := range p.Unrecoverable {
		n += u.Count
	}
	return n
}

// Active returns the moves Execute would commit.
func (p *Plan) Active() []Move {
	var out []Move
	for _, m := range p.Moves {
		if m.Applies() {
			out = append(out, m)
		}
	}
	return out
}

// Refused returns the refused moves.
func (p *Plan) Refused() []Move {
	var out []Move
	for _, m := range p.Moves {
		if m.Refused != "" {
			out = append(out, m)
		}
	}
	return out
}

// Refusal says why the plan must not be executed: each refused move, "topic/0: why",
// joined by "; ". Empty when no move is refused. Execute refuses with it, and the dry
// run's exit is 5 on it, so the plan says it once for both.
func (p *Plan) Refusal() string {
	ref := p.Refused()
	parts := make([]string, len(ref))
	for i, m := range ref {
		parts[i] = fmt.Sprintf("%s: %s", m.TP(), m.Refused)
	}
	return strings.Join(parts, "; ")
}

// Busy says why the group cannot be written to now: its members (of either protocol,
// with the partitions each owns) or a state other than Empty, Dead or unknown. Empty
// when it can.
func (p *Plan) Busy() string {
	g := p.Group
	if why := Occupied(g, "", ""); why != "" {
		return why
	}
	// A consumer-protocol group reports its state in any case the broker chooses; the
	// member list above is what decides.
	switch strings.ToLower(g.State) {
	case "", "empty", "dead", inspect.StateUnknown:
		return ""
	}
	return fmt.Sprintf("group %s is in state %s", g.ID, g.State)
}

// Occupied says why group g cannot be shown to have no members ("" when it has none):
// it could not be described, or members are in it, each named (DescribeMember). other
// qualifies them ("other " for a run about to join) and when says when they were seen.
func Occupied(g inspect.Group, other, when string) string {
	if g.Err != "" {
		return fmt.Sprintf("group %s could not be described (%s), so it cannot be shown to have no %smembers", g.ID, g.Err, other)
	}
	if len(g.Members) == 0 {
		return ""
	}
	names := make([]string, 0, len(g.Members))
	for _, m := range g.Members {
		names = append(names, DescribeMember(m))
	}
	return fmt.Sprintf("group %s has %d %smember(s)%s: %s", g.ID, len(g.Members), other, when, strings.Join(names, "; "))
}

// DescribeMember names a member the way an operator finds it: member ID, client ID,
// host, and the partitions it owns (and, consumer protocol, is being given).
func DescribeMember(m inspect.Member) string {
	s := fmt.Sprintf("%s (client %s on %s", m.ID, m.ClientID, m.Host)
	if m.InstanceID != "" {
		s += ", instance " + m.InstanceID
	}
	s += ") owning " + m.Assigned.String()
	if m.Target != nil {
		s += ", target " + m.Target.String()
	}
	return s
}

// Options configures NewPlan.
type Options struct {
	Group  string
	Topics []string
	// Evidence is the delivery evidence (--delivered). Without Targets it decides the
	// targets (the first lost record per partition); with Targets it splits the counts.
	Evidence *evidence.Set
	// Targets, when non-nil, are the partitions to move and where.
	Targets []Target
	// Reset, when non-nil, computes the targets from the inspection
	// (kafka-consumer-groups.sh --reset-offsets); the cluster must implement TimeOffsets
	// for a reset by time.
	Reset        *Reset
	Source       Source // of Targets
	AllowForward bool
	// Force restores an undo file although the group moved on since the rewind; the
	// records it skips are counted in each move's Skip.
	Force   bool
	MaxScan int64 // offsets per partition scan; <= 0: unbounded
}

// NewPlan inspects the group as inspect does and plans the moves.
func NewPlan(ctx context.Context, cl inspect.Cluster, o Options) (*Plan, error) {
	if o.Targets == nil && o.Evidence == nil && o.Reset == nil {
		return nil, errors.New("rewind needs delivery evidence or targets")
	}
	topics := o.Topics
	if o.Reset != nil {
		topics = o.Reset.scopeTopics()
	}
	if o.Targets != nil {
		seen := map[string]bool{}
		topics = nil
		for _, t := range o.Targets {
			if !seen[t.Topic] {
				seen[t.Topic] = true
				topics = append(topics, t.Topic)
			}
		}
		sort.Strings(topics)
	}
	r, err := inspect.Run(ctx, cl, inspect.Options{Group: o.Group, Topics: topics, Evidence: o.Evidence, MaxScan: o.MaxScan})
	if err != nil {
		return nil, err
	}
	p := &Plan{At: r.At, Group: r.Group, Evidence: o.Evidence}
	byTP := map[kpart.TopicPartition]inspect.PartitionReport{}
	for _, pr := range r.Partitions {
		byTP[kpart.TopicPartition{Topic: pr.Topic, Partition: pr.Partition}] = pr
	}
	for _, n := range r.StrayEvidence {
		p.Notes = append(p.Notes, "invalid evidence: "+n.What)
	}
	for _, t := range r.DeletedTopics {
		p.Notes = append(p.Notes, fmt.Sprintf("topic %s no longer exists; the group still has offsets for it (not planned)", t))
	}
	targets := o.Targets
	source := o.Source
	if o.Reset != nil {
		ts, notes, err := o.Reset.targets(ctx, cl, r.Partitions)
		if err != nil {
			return nil, err
		}
		targets, source = ts, Source(o.Reset.Kind)
		p.Notes = append(p.Notes, notes...)
	} else if targets == nil {
		source = FromEvidence
		for _, pr := range r.Partitions {
			j := pr.Judgement
			name := kpart.TopicPartition{Topic: pr.Topic, Partition: pr.Partition}.String()
			if j != nil && j.UnrecoverableCount > 0 {
				p.Unrecoverable = append(p.Unrecoverable, Unrecoverable{Topic: pr.Topic, Partition: pr.Partition, LogStart: pr.LogStart,
					Ranges: j.Unrecoverable, Count: j.UnrecoverableCount})
			}
			switch {
			case j == nil:
				continue
			case j.SafeRewind != nil:
				targets = append(targets, Target{Topic: pr.Topic, Partition: pr.Partition, Offset: *j.SafeRewind, LeaderEpoch: -1})
				if j.Verdict == verdict.Lost && j.Reason != "" {
					p.Notes = append(p.Notes, fmt.Sprintf("%s: %s", name, j.Reason))
				}
			case j.Verdict == verdict.Incomplete || j.Verdict == verdict.Error:
				p.Notes = append(p.Notes, fmt.Sprintf("%s: not judged (%s): %s; not planned", name, j.Verdict, j.Reason))
			case j.Verdict == verdict.NoEvidence:
				p.Notes = append(p.Notes, fmt.Sprintf("%s: the evidence does not name this topic; not planned", name))
			case !j.Verdict.Judged():
				// not judged is never "nothing lost": the plan says so and plans nothing
				p.Notes = append(p.Notes, fmt.Sprintf("%s: not judged (%s): %s; not planned", name, j.Verdict, j.Reason))
			default:
				p.Unchanged++
			}
		}
	}
	for _, t := range targets {
		pr, ok := byTP[t.TP()]
		if !ok {
			return nil, fmt.Errorf("%w: %s does not exist", ErrUnknownPartition, t.TP())
		}
		m := Decide(pr.Offsets, t, source, Rules{AllowForward: o.AllowForward, Force: o.Force})
		if m.Direction == Back || m.Direction == Forward {
			var ev *evidence.Partition
			if o.Evidence != nil && o.Evidence.Covers(m.Topic) {
				ev = o.Evidence.Parts[m.TP()]
				if ev == nil {
					ev = &evidence.Partition{}
				}
			}
			if err := count(ctx, cl, &m, ev, o.MaxScan); err != nil {
				return nil, err
			}
		}
		if pr.Judgement != nil && m.Direction == Back {
			for _, l := range pr.Judgement.Lost {
				if l.Last >= m.Target {
					m.LostRanges = append(m.LostRanges, l)
				}
			}
		}
		p.Moves = append(p.Moves, m)
	}
	sort.Slice(p.Moves, func(i, j int) bool {
		a, b := p.Moves[i], p.Moves[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return p, nil
}

// movedBy says how far the committed offset moved from where it was expected.
func movedBy(expect, now int64) string {
	switch {
	case expect < 0 || now < 0:
		return ""
	case now > expect:
		return fmt.Sprintf(": a consumer committed %d offsets further", now-expect)
	default:
		return fmt.Sprintf(": moved back by %d offsets", expect-now)
	}
}

// Rules are the operator's exceptions to the safety rules.
type Rules struct {
	AllowForward bool // a move may skip records (restoring an undo file is such a move)
	Force        bool // an undo file may be restored although the group moved on since
}

// Decide applies the safety rules to one target against the partition's offsets. It is
// pure: the counts are filled in later by a scan.
func Decide(o inspect.Offsets, t Target, source Source, r Rules) Move {
	allowForward := r.AllowForward
	m := Move{
		Topic: o.Topic, Partition: o.Partition,
		Committed: o.Committed, CommittedEpoch: o.CommittedEpoch, CommittedMetadata: o.Metadata,
		Target: t.Offset, TargetEpoch: t.LeaderEpoch, TargetMetadata: t.Metadata,
		LogStart: o.LogStart, LastStable: o.LastStable, HighWatermark: o.HighWatermark,
		Source: source,
	}
	switch {
	case t.Delete && o.Committed < 0:
		m.Direction = None
	case t.Delete:
		m.Direction = Delete
	case o.Committed < 0:
		m.Direction = Set
	case t.Offset == o.Committed:
		m.Direction = None
	case t.Offset > o.Committed:
		m.Direction = Forward
	default:
		m.Direction = Back
	}
	switch {
	case o.Err != "":
		m.Refused = "the partition cannot be read: " + o.Err
	case t.Undo && t.Expect != nil && *t.Expect != o.Committed && !r.Force:
		// The undo file was written for the group as the rewind left it. A consumer
		// that committed since has delivered records past rewound_to: restoring the old
		// offset now moves the group past what it has not yet consumed (or back over
		// what it has), so the restore would not undo the rewind but make a new move.
		m.Refused = fmt.Sprintf("the group is no longer where the rewind left it (rewound to %s, now %s%s); restoring the undo file now would not undo the rewind; pass --force to restore anyway (the moved records are counted)",
			kpart.OffsetWord(*t.Expect), kpart.OffsetWord(o.Committed), movedBy(*t.Expect, o.Committed))
	case !t.Undo && t.Expect != nil && *t.Expect != o.Committed:
		m.Refused = fmt.Sprintf("the committed offset moved since the plan was made (planned against %d, now %s); make a new plan", *t.Expect, kpart.OffsetWord(o.Committed))
	case m.Direction == None:
	case m.Direction == Delete && !allowForward:
		// Without a committed offset the group's next consumer starts where its
		// auto.offset.reset says; with "latest" that skips every record after it.
		m.Refused = fmt.Sprintf("the group had no committed offset here; deleting the committed offset %d lets auto.offset.reset decide where the group starts, which can skip records, so it needs --allow-forward (restoring an undo file is a forward move)", o.Committed)
	case m.Direction == Delete:
		// Nothing is committed, so the log start and high watermark do not apply.
	case t.Offset < o.LogStart:
		// Records below the log start offset were deleted (retention, DeleteRecords);
		// a consumer fetching there gets OFFSET_OUT_OF_RANGE and jumps by
		// auto.offset.reset, possibly to the end.
		m.Refused = fmt.Sprintf("target %d is below the log start offset %d: records before %d were deleted (retention or DeleteRecords) and cannot be delivered again; the lowest possible target is %d", t.Offset, o.LogStart, o.LogStart, o.LogStart)
	case t.Offset > o.HighWatermark:
		m.Refused = fmt.Sprintf("target %d is beyond the high watermark %d: no record has that offset yet", t.Offset, o.HighWatermark)
	case m.Direction == Forward && !allowForward:
		m.Refused = fmt.Sprintf("moving forward from %d to %d skips offsets %d-%d without delivering them; pass --allow-forward if that is intended (restoring an undo file is a forward move)", o.Committed, t.Offset, o.Committed, t.Offset-1)
	case m.Direction == Set && !allowForward && t.Offset > o.LogStart:
		m.Refused = fmt.Sprintf("the group has no committed offset here (it starts wherever auto.offset.reset says); setting %d can skip records, so it needs --allow-forward", t.Offset)
	}
	return m
}

// count fills in the record counts of a move by scanning the offsets between the
// committed offset and the target, up to the last stable offset (what a read_committed
// consumer can reach).
func count(ctx context.Context, cl inspect.Cluster, m *Move, ev *evidence.Partition, maxScan int64) error {
	from, to := min(m.Committed, m.Target), max(m.Committed, m.Target)
	from = max(from, m.LogStart)
	to = min(to, m.LastStable)
	if from >= to {
		if ev != nil && m.Direction == Back {
			m.Lost, m.AlreadyDelivered = new(int64), new(int64)
		}
		return nil
	}
	if maxScan > 0 && to-from > maxScan {
		to = from + maxScan
		m.CountTruncated = true
	}
	sc, err := cl.Scan(ctx, m.Topic, m.Partition, from, to)
	if err != nil {
		return fmt.Errorf("counting the records of %s between %d and %d: %w", m.TP(), from, to, err)
	}
	records, delivered := CountRecords(sc.Spans, ev, from, to)
	if m.Direction == Forward {
		m.Skip = records
		return nil
	}
	m.Redeliver = records
	if ev != nil {
		lost, dup := records-delivered, delivered
		m.Lost, m.AlreadyDelivered = &lost, &dup
	}
	return nil
}

// CountRecords counts the deliverable records in [from, to) of spans, and how many of
// them ev says were delivered (ev may be nil).
func CountRecords(spans []inspect.Span, ev *evidence.Partition, from, to int64) (records, delivered int64) {
	for _, s := range spans {
		if !s.Kind.Deliverable() {
			continue
		}
		first, last := max(s.First, from), min(s.Last, to-1)
		if first > last {
			continue
		}
		records += last - first + 1
		if ev == nil {
			continue
		}
		for _, iv := range ev.Delivered {
			a, b := max(iv.First, first), min(iv.Last, last)
			if a <= b {
				delivered += b - a + 1
			}
		}
	}
	return records, delivered
}
