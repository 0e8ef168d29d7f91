package rewind

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Check is one partition read back after the commit.
type Check struct {
	Topic     string
	Partition int32
	Before    int64
	Target    int64 // -1: the committed offset was deleted
	Now       int64 // -1: no committed offset read back
	OK        bool
	Err       string // the broker's answer to this partition's commit
}

// Result is what Execute did.
type Result struct {
	UndoPath string
	Undo     Undo
	Checks   []Check
}

// ExecOptions configures Execute.
type ExecOptions struct {
	UndoPath string // where the undo file goes; must not exist (see UniqueUndo)
	// UniqueUndo: UndoPath is a default name; if it is taken, a suffix makes it unique
	// (Result.UndoPath says which) rather than failing.
	UniqueUndo bool
	Version    string // kstranded's version, stamped into the undo file
	// Restore renders the command that applies the undo file at path (shown in the file).
	Restore func(path string) string
	// Token is committed as the metadata of every move that does not restore an undo
	// file, so that the read-back can tell this run's commit from another writer's with
	// the same offset; empty: a random one (NewToken).
	Token string
}

// TokenPrefix starts the offset metadata a rewind commits (see ExecOptions.Token).
const TokenPrefix = "kstranded-rewind:"

// NewToken returns a per-run token for ExecOptions.Token.
func NewToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return TokenPrefix + hex.EncodeToString(b)
}

// stampToken sets the metadata the plan's applied moves commit: an undo file's move
// restores its metadata exactly (the original commit's, and the read-back compares
// against that); every other move carries token. Two rewinds that commit the same
// offsets at once then differ in their metadata, and the one whose commit the broker
// applied first sees the other's token on read-back. The plan is stamped, not a copy,
// so that what is shown (target_metadata) is what was committed.
func stampToken(p *Plan, token string) {
	for i, m := range p.Moves {
		if m.Applies() && m.Source != FromUndo && m.Direction != Delete {
			p.Moves[i].TargetMetadata = token
		}
	}
}

// Execute applies p: it refuses while the group has members or any move is refused,
// writes the undo file, commits the active moves, and reads the committed offsets back.
// A nil Result with a nil error means there was nothing to move. Once the undo file is
// written the Result is returned even with an error, so the caller can say how to
// restore.
func Execute(ctx context.Context, cl Cluster, p *Plan, o ExecOptions) (*Result, error) {
	const stopThem = "; stop every consumer of the group first: a live member commits its own position and would overwrite the rewound offset (and Kafka accepts an admin offset commit only for an empty group)"
	busy := p.Busy()
	if busy != "" && !MayBeHeld(p.Group) {
		return nil, refusal{ErrGroupActive, busy + stopThem}
	}
	if why := p.Refusal(); why != "" {
		return nil, refusal{ErrUnsafe, why + "; nothing was changed"}
	}
	active := p.Active()
	if len(active) == 0 {
		return nil, nil
	}
	if o.Token == "" {
		o.Token = NewToken()
	}
	stampToken(p, o.Token)
	active = p.Active()
	// Hold the group, then compare it with the plan: the compare-and-set the broker
	// enforces (see the package doc).
	h, err := cl.Hold(ctx, p.Group.ID)
	if err != nil {
		if busy != "" && errors.Is(err, ErrGroupActive) {
			return nil, refusal{ErrGroupActive, busy + stopThem + " (" + err.Error() + ")"}
		}
		return nil, err
	}
	defer func() { _ = h.Release(ctx) }()
	if err := unmoved(ctx, cl, p, active); err != nil {
		return nil, err
	}
	f, path, err := createUndoFile(o.UndoPath, o.UniqueUndo)
	if err != nil {
		return nil, err
	}
	res := &Result{UndoPath: path, Undo: NewUndo(p, o.Version)}
	o.UndoPath = path
	if o.Restore != nil {
		res.Undo.Restore = o.Restore(path)
	}
	if err := writeUndo(f, res.Undo); err != nil {
		return nil, err
	}
	var commits []Move
	var deletes []kpart.TopicPartition
	for _, m := range active {
		if m.Direction == Delete {
			deletes = append(deletes, m.TP())
		} else {
			commits = append(commits, m)
		}
	}
	perr := map[kpart.TopicPartition]error{}
	// interrupted: the run was interrupted (ctx canceled) once the commit was sent; the
	// commit may have been applied, so the offsets are still read back.
	var interrupted error
	if len(commits) > 0 {
		pe, err := h.Commit(ctx, commits)
		if err != nil && ctx.Err() != nil {
			interrupted = err
		} else if err != nil {
			return res, fmt.Errorf("the commit failed, offsets may be unchanged or partly changed (compare with the undo file %s): %w", o.UndoPath, err)
		}
		maps.Copy(perr, pe)
	}
	if len(deletes) > 0 && interrupted == nil {
		pe, err := cl.DeleteOffsets(ctx, p.Group.ID, deletes)
		if err != nil && ctx.Err() != nil {
			interrupted = err
		} else if err != nil {
			if groupBusy(err) {
				return res, refusal{ErrGroupActive, fmt.Sprintf("the broker refused to delete the committed offsets, answering %v; nothing says more about why (describe the group: kstranded inspect --group %s); compare with the undo file %s", err, p.Group.ID, o.UndoPath)}
			}
			return res, fmt.Errorf("deleting the committed offsets failed, offsets may be unchanged or partly changed (compare with the undo file %s): %w", o.UndoPath, err)
		}
		maps.Copy(perr, pe)
	}
	if ctx.Err() != nil && interrupted == nil {
		interrupted = ctx.Err()
	}
	rctx := ctx
	if interrupted != nil {
		rctx = context.WithoutCancel(ctx) // Committed is bounded by the client's timeout
	}
	got, rerr := cl.Committed(rctx, p.Group.ID)
	var rejected, failed, intervened []string
	for _, m := range active {
		c := Check{Topic: m.Topic, Partition: m.Partition, Before: m.Committed, Target: m.Target, Now: -1}
		if e := perr[m.TP()]; e != nil {
			c.Err = e.Error()
			if groupBusy(e) {
				rejected = append(rejected, fmt.Sprintf("%s: %v", m.TP(), e))
			} else {
				failed = append(failed, fmt.Sprintf("%s: %v", m.TP(), e))
			}
		}
		now, ok := got[m.TP()]
		if ok {
			c.Now = now.Offset
		}
		c.OK = c.Err == "" && c.Now == m.Target
		if c.OK && m.Direction != Delete && now.Metadata != m.TargetMetadata {
			// the offset is the one written, the commit is not: another writer
			// committed the same offset after this run did
			c.OK = false
			intervened = append(intervened, fmt.Sprintf("%s: offset %d committed with metadata %q, not this run's %q", m.TP(), now.Offset, now.Metadata, m.TargetMetadata))
		} else if !c.OK && c.Err == "" && rerr == nil {
			intervened = append(intervened, fmt.Sprintf("%s: wrote %d, read back %s (metadata %q, not this run's %q)", m.TP(), m.Target, kpart.OffsetWord(c.Now), now.Metadata, m.TargetMetadata))
		}
		res.Checks = append(res.Checks, c)
	}
	sort.Slice(res.Checks, func(i, j int) bool {
		a, b := res.Checks[i], res.Checks[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	if interrupted != nil {
		return res, interruptedErr(p, res, o.UndoPath, interrupted, rerr)
	}
	switch {
	case len(rejected) > 0:
		// The broker's answer is quoted, not explained: the codes groupBusy matches
		// also come from a group the check could not see members of.
		return res, refusal{ErrGroupActive, fmt.Sprintf("the broker rejected the commit this run made as the member holding the group, answering %s, so the broker no longer counted this run as the member of the generation it held the group in; before the commit the group was described as %s; describe it again (kstranded inspect --group %s) and stop its consumers; compare with the undo file %s", strings.Join(rejected, "; "), groupWords(p), p.Group.ID, o.UndoPath)}
	case len(failed) > 0:
		return res, fmt.Errorf("the broker rejected the commit for %s", strings.Join(failed, "; "))
	case rerr != nil:
		return res, fmt.Errorf("the commit was accepted but %w", rerr)
	}
	if len(intervened) > 0 {
		return res, fmt.Errorf("%w: another writer intervened between this run's commit and its read-back (a consumer of the group, or a second rewind): %s; describe the group (kstranded inspect --group %s) and compare with the undo file %s", ErrMismatch, strings.Join(intervened, "; "), p.Group.ID, o.UndoPath)
	}
	return res, nil
}

// interruptedErr says what an interruption after the commit was sent leaves: the commit
// may have been applied; what the broker answered to the read-back; the undo file.
func interruptedErr(p *Plan, res *Result, undo string, cause, rerr error) error {
	var now string
	if rerr != nil {
		now = fmt.Sprintf("the committed offsets could not be read back (%v): describe the group (kstranded inspect --group %s)", rerr, p.Group.ID)
	} else {
		parts := make([]string, len(res.Checks))
		for i, c := range res.Checks {
			word := "the target"
			if !c.OK {
				word = "not the target " + kpart.OffsetWord(c.Target)
			}
			parts[i] = fmt.Sprintf("%s/%d at %s (%s)", c.Topic, c.Partition, kpart.OffsetWord(c.Now), word)
		}
		now = "read back after the interruption: " + strings.Join(parts, ", ")
	}
	restore := ""
	if res.Undo.Restore != "" {
		restore = "; to restore: " + res.Undo.Restore
	}
	return interruptedError(fmt.Sprintf("interrupted after the commit was sent (%v): it may have been applied; %s; the offsets before it are in the undo file %s%s", cause, now, undo, restore))
}

// interruptedError is an interruption after the commit was sent; it matches
// context.Canceled.
type interruptedError string

func (e interruptedError) Error() string { return string(e) }
func (e interruptedError) Unwrap() error { return context.Canceled }

// unmoved reads the group's committed offsets while this run holds it and refuses the
// plan if any active move's partition is no longer where the plan found it (offset and
// metadata): another rewind, or a consumer, committed since.
func unmoved(ctx context.Context, cl Cluster, p *Plan, active []Move) error {
	now, err := cl.Committed(ctx, p.Group.ID)
	if err != nil {
		return fmt.Errorf("reading the committed offsets before the commit: %w; nothing was changed", err)
	}
	var moved []string
	for _, m := range active {
		c, ok := now[m.TP()]
		if !ok {
			c = CommittedOffset{Offset: -1}
		}
		if c.Offset == m.Committed && (!ok || c.Metadata == m.CommittedMetadata) {
			continue
		}
		moved = append(moved, fmt.Sprintf("%s: planned against %s, now %s%s", m.TP(), kpart.OffsetWord(m.Committed), kpart.OffsetWord(c.Offset), whose(c.Metadata)))
	}
	if len(moved) == 0 {
		return nil
	}
	return refusal{ErrUnsafe, fmt.Sprintf("group %s changed after this plan was made, before this run held it: %s; nothing was changed; the group's committed offsets are the ones named now (describe it: kstranded inspect --group %s); make a new plan if a rewind is still wanted", p.Group.ID, strings.Join(moved, "; "), p.Group.ID)}
}

// whose says who committed an offset with metadata meta.
func whose(meta string) string {
	switch {
	case strings.HasPrefix(meta, TokenPrefix):
		return fmt.Sprintf(" (committed by another kstranded rewind, token %s)", meta)
	case meta != "":
		return fmt.Sprintf(" (metadata %q)", meta)
	}
	return " (a consumer's or an admin's commit, no metadata)"
}

// groupWords names the group's protocol and state as described before the commit.
func groupWords(p *Plan) string {
	g := p.Group
	if g.GroupProtocol == "" {
		return "unknown to the broker"
	}
	return fmt.Sprintf("a %s group in state %s", g.GroupProtocol, g.State)
}

// IsRefusal reports whether err from Execute is a refusal for safety (the group has
// members, a move breaks a safety rule) rather than a failure.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrGroupActive) || errors.Is(err, ErrUnsafe)
}

// refusal is a refused execution: its message says why, and it matches its kind
// (ErrGroupActive, ErrUnsafe) with errors.Is.
type refusal struct {
	kind error
	msg  string
}

func (r refusal) Error() string { return r.msg }
func (r refusal) Unwrap() error { return r.kind }
