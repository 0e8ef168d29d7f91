package view

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/rewind"
)

// RewindSchema versions the JSON document `kstranded rewind -o json` writes; rewind
// --from-file reads it back as a plan.
const RewindSchema = rewind.PlanSchema

// Rewind is the JSON document of `kstranded rewind`: the plan and, with --execute, what
// was done.
type Rewind struct {
	render.Meta
	At    time.Time `json:"at"`
	Mode  string    `json:"mode"` // dry-run or execute
	Group GroupDoc  `json:"group"`
	// Evidence is what --delivered read, per file and per kind of line; null without it.
	Evidence  *InspectEvidence `json:"evidence"`
	Moves     []MoveDoc        `json:"moves"`
	Unchanged int              `json:"unchanged"`
	Notes     []string         `json:"notes"`
	// Unrecoverable: what no move restores, per partition (deleted below the log start).
	Unrecoverable []rewind.Unrecoverable `json:"unrecoverable"`
	Summary       RewindSummary          `json:"summary"`
	// Busy: why --execute would refuse now because of the group (members, state).
	Busy Text `json:"group_busy"`
	// Refused: why this run refused (exit 5).
	Refused  Text            `json:"refused"`
	Executed *RewindExecuted `json:"executed"`

	group inspect.Group // for the text, as the domain describes the group
	moves []rewind.Move // for the text
}

// RewindSummary totals the moves.
type RewindSummary struct {
	Partitions int   `json:"partitions"` // moves that would be (or were) committed
	Refused    int   `json:"refused"`
	Redeliver  int64 `json:"redeliver"`
	Lost       int64 `json:"lost"`
	Skip       int64 `json:"skip"`
	// Unrecoverable counts offsets never delivered and deleted below the log start:
	// what no rewind restores (listed per partition in the document's unrecoverable).
	Unrecoverable int64 `json:"unrecoverable"`
}

// RewindExecuted is what --execute did.
type RewindExecuted struct {
	UndoFile string     `json:"undo_file"`
	Restore  string     `json:"restore_command"`
	Verified []CheckDoc `json:"verified"`
	OK       bool       `json:"ok"`
	// Error is why the execution is not verified (an interruption after the commit was
	// sent says the commit may have been applied and what was read back).
	Error Text `json:"error,omitempty"`
}

// NewRewindPlan builds the view of a dry run: the plan, and why it would be refused.
func NewRewindPlan(p *rewind.Plan) Rewind {
	v := newRewind(p, "dry-run")
	v.Refused = Text(p.Refusal())
	return v
}

// NewRewindExecution builds the view of --execute: the plan, and what rewind.Execute
// returned for it (res may be nil: nothing was written).
func NewRewindExecution(p *rewind.Plan, res *rewind.Result, err error) Rewind {
	v := newRewind(p, "execute")
	if res != nil {
		v.Executed = &RewindExecuted{UndoFile: res.UndoPath, Restore: res.Undo.Restore, Verified: checksDoc(res.Checks), OK: err == nil}
		if err != nil && !rewind.IsRefusal(err) {
			v.Executed.Error = Text(err.Error())
		}
	}
	if rewind.IsRefusal(err) {
		v.Refused = Text(err.Error())
	}
	return v
}

func newRewind(p *rewind.Plan, mode string) Rewind {
	v := Rewind{
		Meta:      render.NewMeta(RewindSchema, "rewind"),
		At:        p.At.UTC(),
		Mode:      mode,
		Group:     groupDoc(p.Group),
		Moves:     movesDoc(p.Moves),
		group:     p.Group,
		moves:     p.Moves,
		Unchanged: p.Unchanged,
		Notes:     p.Notes,
		Busy:      Text(p.Busy()),

		Unrecoverable: append([]rewind.Unrecoverable{}, p.Unrecoverable...),
	}
	v.Summary.Unrecoverable = p.UnrecoverableCount()
	if p.Evidence != nil {
		v.Evidence = newInspectEvidence(p.Evidence)
	}
	if v.Notes == nil {
		v.Notes = []string{}
	}
	for _, m := range p.Moves {
		if m.Refused != "" {
			v.Summary.Refused++
			continue
		}
		if !m.Applies() {
			continue
		}
		v.Summary.Partitions++
		v.Summary.Redeliver += m.Redeliver
		v.Summary.Skip += m.Skip
		if m.Lost != nil {
			v.Summary.Lost += *m.Lost
		}
	}
	return v
}

// PrintRewind prints the view: JSON, or the group, a row per move with what it does,
// and the outcome (dry run, refusal, or the offsets read back after --execute).
func PrintRewind(w io.Writer, v Rewind, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	st := render.NewStyles(nw)
	printGroup(nw, st, v.group)
	if v.Evidence != nil {
		printEvidence(nw, st, v.Evidence, v.group.ID)
	}
	if len(v.Moves) == 0 {
		for _, n := range v.Notes {
			fmt.Fprintf(nw, "%s %s\n", st.Warn.Render("note:"), render.Safe(string(n)))
		}
		fmt.Fprintf(nw, "Nothing to rewind: no records lost on %d judged partitions.\n", v.Unchanged)
		return nil
	}
	grid := render.Grid{
		Header: []string{"TOPIC", "PARTITION", "COMMITTED", "TARGET", "REDELIVER", "LOST", "ALREADY-DELIVERED", "ACTION"},
		Align:  []render.Align{render.Left, render.Right, render.Right, render.Right, render.Right, render.Right, render.Right, render.Left},
		// a narrow terminal hides these before the topic, offsets, lost and action
		// narrow (the line per move under the table says both counts)
		Optional: []int{6, 4}, // ALREADY-DELIVERED, REDELIVER
	}
	for _, m := range v.moves {
		action := render.Safe(rewindAction(m))
		if pretty && m.Refused != "" {
			action = st.Bad.Render(action)
		}
		grid.Rows = append(grid.Rows, []string{render.Safe(m.Topic), strconv.Itoa(int(m.Partition)), kpart.OffsetText(m.Committed), kpart.OffsetText(m.Target),
			strconv.FormatInt(m.Redeliver, 10), countOrDash(m.Lost), countOrDash(m.AlreadyDelivered), action})
	}
	if err := render.WriteGrid(w, grid, pretty); err != nil {
		return err
	}
	for _, m := range v.moves {
		fmt.Fprintln(nw, moveLine(st, m))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(nw, "%s %s\n", st.Warn.Render("note:"), render.Safe(string(n)))
	}
	for _, u := range v.Unrecoverable {
		fmt.Fprintf(render.Prose(w), "%s/%d: %s %s (%s never delivered, deleted below the log start %d): no rewind restores them\n",
			render.Safe(u.Topic), u.Partition, st.Bad.Render("UNRECOVERABLE"), kpart.Join(u.Ranges), countWord(u.Count, "offset", "offsets"), u.LogStart)
	}
	defer func() {
		if v.Summary.Unrecoverable > 0 {
			fmt.Fprintln(render.Prose(w), st.Bad.Render(fmt.Sprintf("UNRECOVERABLE: this rewind cannot restore %s never delivered and deleted since (retention or a delete moved the log start past them).",
				countWord(v.Summary.Unrecoverable, "offset", "offsets"))))
		}
	}()
	s := v.Summary
	if v.Mode == "dry-run" {
		switch {
		case v.Refused != "":
			fmt.Fprintln(nw, st.Bad.Render("REFUSED: the plan breaks a safety rule (see above); nothing was changed."))
		case s.Partitions == 0:
			fmt.Fprintln(nw, "Nothing to change: every partition is already at its target.")
		default:
			fmt.Fprintf(nw, "DRY RUN: %s would move; %s delivered again (%d lost). Nothing was changed; add --execute to apply.\n",
				countWord(int64(s.Partitions), "partition", "partitions"), countWord(s.Redeliver, "record", "records"), s.Lost)
			if v.Busy != "" {
				fmt.Fprintf(nw, "%s %s: --execute refuses until every consumer of the group is stopped.\n", st.Warn.Render("warning:"), render.Safe(string(v.Busy)))
			}
		}
		return nil
	}
	x := v.Executed
	if x == nil {
		if v.Refused != "" {
			fmt.Fprintln(nw, st.Bad.Render("REFUSED:")+" "+render.Safe(string(v.Refused)))
		} else if s.Partitions == 0 {
			fmt.Fprintln(nw, "Nothing to change: every partition is already at its target.")
		}
		return nil
	}
	fmt.Fprintf(nw, "undo file: %s (the committed offsets before this change)\n", render.Safe(string(x.UndoFile)))
	if len(x.Verified) > 0 {
		fmt.Fprintln(nw, "read back after the commit:")
		vg := render.Grid{
			Header: []string{"TOPIC", "PARTITION", "BEFORE", "TARGET", "NOW", "MATCH"},
			Align:  []render.Align{render.Left, render.Right, render.Right, render.Right, render.Right, render.Left},
		}
		for _, c := range x.Verified {
			match := "yes"
			if !c.OK {
				match = "NO"
				if c.Err != "" {
					match += ": " + render.Safe(string(c.Err))
				}
			}
			vg.Rows = append(vg.Rows, []string{render.Safe(c.Topic), strconv.Itoa(int(c.Partition)), kpart.OffsetText(c.Before), kpart.OffsetText(c.Target), kpart.OffsetText(c.Now), match})
		}
		if err := render.WriteGrid(w, vg, pretty); err != nil {
			return err
		}
	}
	if x.OK {
		fmt.Fprintln(nw, st.Good.Render(fmt.Sprintf("DONE: committed offsets read back match the plan on %s.", countWord(int64(len(x.Verified)), "partition", "partitions")))+
			" The group's next consumer starts at the targets.")
	}
	fmt.Fprintf(nw, "to restore the previous offsets: %s\n", render.Safe(string(x.Restore)))
	return nil
}

// moveLine says what one move does, in words.
func moveLine(st render.Styles, m rewind.Move) string {
	name := render.Safef("%s/%d", m.Topic, m.Partition)
	approx := ""
	if m.CountTruncated {
		approx = "at least "
	}
	switch {
	case m.Refused != "":
		return fmt.Sprintf("%s: %s %s", name, st.Bad.Render("REFUSED:"), render.Safe(m.Refused))
	case m.Direction == rewind.Back:
		line := fmt.Sprintf("%s: %d -> %d: %s%s will be delivered again", name, m.Committed, m.Target, approx, countWord(m.Redeliver, "record", "records"))
		if m.Lost != nil {
			line += fmt.Sprintf(": %d lost", *m.Lost)
			if len(m.LostRanges) > 0 {
				line += " (" + kpart.Join(m.LostRanges) + ")"
			}
			line += fmt.Sprintf(" and %d already delivered (the application sees those twice)", *m.AlreadyDelivered)
		}
		return line
	case m.Direction == rewind.Forward:
		return fmt.Sprintf("%s: %d -> %d: forward, %s%s skipped (never delivered to this group)", name, m.Committed, m.Target, approx, countWord(m.Skip, "record", "records"))
	case m.Direction == rewind.Set:
		return fmt.Sprintf("%s: no committed offset -> %d", name, m.Target)
	case m.Direction == rewind.Delete:
		return fmt.Sprintf("%s: %d -> no committed offset (deleted, as before the rewind: the group's next consumer starts where its auto.offset.reset says)", name, m.Committed)
	case m.Target < 0:
		return fmt.Sprintf("%s: already without a committed offset", name)
	}
	return fmt.Sprintf("%s: already at %d", name, m.Target)
}

func rewindAction(m rewind.Move) string {
	switch {
	case m.Refused != "":
		return "REFUSED"
	case m.Direction == rewind.Back:
		return "rewind"
	case m.Direction == rewind.Forward:
		return "forward"
	case m.Direction == rewind.Set:
		return "set"
	case m.Direction == rewind.Delete:
		return "delete"
	}
	return "unchanged"
}

func countOrDash(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func countWord(n int64, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteRewindCSV writes the plan as kafka-consumer-groups.sh --reset-offsets --export
// does: topic,partition,offset per partition, no header; --from-file (kstranded's or the
// Java tool's) reads it back. A refused move, or one that deletes the committed offset
// (no offset to write), is left out: the plan's table and exit code say why.
func WriteRewindCSV(w io.Writer, p *rewind.Plan) error {
	for _, m := range p.Moves {
		if m.Refused != "" || m.Direction == rewind.Delete {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s,%d,%d\n", m.Topic, m.Partition, m.Target); err != nil {
			return err
		}
	}
	return nil
}
