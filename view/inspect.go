package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
)

// InspectSchema versions the JSON document `kstranded inspect -o json` writes.
const InspectSchema = "kstranded.inspect/v2"

// InspectWatchSchema versions the JSON documents `inspect --watch -o json` writes after
// the first report: what changed since the previous inspection.
const InspectWatchSchema = "kstranded.inspect-changes/v2"

// NoEvidenceNote is what an inspection without --delivered says about loss.
const NoEvidenceNote = "NOT JUDGED: no delivery evidence, so nothing is said about lost or stranded records (lag 0 is not an all-clear); give --delivered FILE to judge"

// Inspect is the JSON document of `kstranded inspect`.
type Inspect struct {
	render.Meta
	At            time.Time          `json:"at"`
	Group         GroupDoc           `json:"group"`
	Evidence      *InspectEvidence   `json:"evidence"`
	Partitions    []InspectPartition `json:"partitions"`
	DeletedTopics []string           `json:"deleted_topics"`
	StrayEvidence []NoteDoc          `json:"stray_evidence"`
	Summary       inspect.Summary    `json:"summary"`
	// Complete: every partition was fully judged, and the inspection was not interrupted.
	Complete bool `json:"complete"`
	// Verdict is the worst partition verdict; NO EVIDENCE when the evidence judged
	// nothing; null without delivery evidence (the offsets view judges nothing).
	Verdict *verdict.Verdict `json:"verdict"`
	// NoEvidence says why the evidence could not support a verdict, and Settle what would.
	NoEvidence Text `json:"no_evidence"`
	Settle     Text `json:"settle"`
	Note       Text `json:"note"`
	Requests   int  `json:"requests"`
	// Interrupted: the inspection was stopped (Ctrl-C) during the scans; the report is
	// partial.
	Interrupted bool `json:"interrupted"`

	group inspect.Group // for the text, which names members as the domain describes them
}

// InspectEvidence is the delivery evidence an inspection read.
type InspectEvidence struct {
	Sources        []SourceDoc          `json:"sources"`
	MalformedTotal int                  `json:"malformed_total"`
	Malformed      []evidence.Malformed `json:"malformed"`
}

// InspectPartition is one partition: its offsets, its lag and, with evidence, its
// judgement.
type InspectPartition struct {
	OffsetsDoc
	Lag       *int64        `json:"lag"`       // nil when the group has no committed offset
	Judgement *JudgementDoc `json:"judgement"` // nil without delivery evidence
}

// NewInspect builds the view of one inspection.
func NewInspect(r *inspect.Report) Inspect {
	v := Inspect{
		Meta:          render.NewMeta(InspectSchema, "inspect"),
		At:            r.At.UTC(),
		Group:         groupDoc(r.Group),
		group:         r.Group,
		Partitions:    make([]InspectPartition, 0, len(r.Partitions)),
		DeletedTopics: r.DeletedTopics,
		StrayEvidence: notesDoc(r.StrayEvidence),
		Summary:       r.Summarize(),
		Requests:      r.Requests,
		Interrupted:   r.Interrupted,
		Verdict:       verdictOrNull(r.Verdict()),
		NoEvidence:    Text(r.NoEvidence),
	}
	if v.DeletedTopics == nil {
		v.DeletedTopics = []string{}
	}

	for _, p := range r.Partitions {
		pv := InspectPartition{OffsetsDoc: offsetsDoc(p.Offsets), Judgement: judgementDoc(p.Judgement)}
		if l := p.Lag(); l >= 0 {
			pv.Lag = &l
		}
		v.Partitions = append(v.Partitions, pv)
	}
	v.Complete = v.Summary.Incomplete == 0 && v.Summary.Errors == 0 && !v.Interrupted
	if r.Evidence == nil {
		v.Note = NoEvidenceNote
	} else {
		if v.Verdict != nil && *v.Verdict == verdict.NoEvidence {
			v.Settle = Text(r.Evidence.Settle())
			if v.NoEvidence == "" {
				v.Settle = "to judge every partition, give evidence that names its topic, or limit the inspection with --topic"
			}
		}
		v.Evidence = newInspectEvidence(r.Evidence)
	}
	return v
}

// PrintInspect prints the view: JSON, or the group, the evidence read, a row per
// partition, the details of each partition that has any, and a summary line.
func PrintInspect(w io.Writer, v Inspect, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	st := render.NewStyles(nw)
	grp := v.group
	printGroup(nw, st, grp)
	if v.Evidence != nil {
		printEvidence(nw, st, v.Evidence, grp.ID)
	}
	if err := render.WriteGrid(w, inspectGrid(st, v, pretty), pretty); err != nil {
		return err
	}
	// Details: the ranges and what the scan found, per partition that has any.
	for _, p := range v.Partitions {
		name := render.Safef("%s/%d", p.Topic, p.Partition)
		if p.Err != "" {
			fmt.Fprintf(nw, "%s: %s %s\n", name, st.Bad.Render("error:"), render.Safe(string(p.Err)))
		}
		j := p.Judgement
		if j == nil {
			continue
		}
		if len(j.Lost) > 0 {
			fmt.Fprintf(nw, "%s: %s %s (%d records); safe rewind offset %d\n", name, st.Bad.Render("LOST"), kpart.Join(j.Lost), j.LostCount, *j.SafeRewind)
		}
		if len(j.Unrecoverable) > 0 {
			fmt.Fprintf(render.Prose(w), "%s: %s %s (%d offsets never delivered, deleted since: below the log start %d, no rewind restores them)\n",
				name, st.Bad.Render("UNRECOVERABLE"), kpart.Join(j.Unrecoverable), j.UnrecoverableCount, p.LogStart)
		}
		if len(j.Stranded) > 0 {
			fmt.Fprintf(nw, "%s: stranded %s (%d records, not yet committed past: the consumer will still get them)\n", name, kpart.Join(j.Stranded), j.StrandedCount)
		}
		for _, n := range j.NotDeliverable {
			fmt.Fprintf(nw, "%s: %s: %s, not lost\n", name, kpart.Range{First: n.First, Last: n.Last}, render.Safe(n.What))
		}
		for _, n := range j.InvalidEvidence {
			fmt.Fprintf(nw, "%s: %s %s: %s\n", name, st.Warn.Render("invalid evidence"), kpart.Range{First: n.First, Last: n.Last}, render.Safe(n.What))
		}
		if j.Reason != nil && p.Err == "" && j.Verdict != verdict.NoEvidence {
			fmt.Fprintf(nw, "%s: %s\n", name, render.Safe(*j.Reason))
		}
	}
	for _, n := range v.StrayEvidence {
		fmt.Fprintf(nw, "%s %s\n", st.Warn.Render("invalid evidence:"), render.Safe(n.What))
	}
	for _, t := range v.DeletedTopics {
		fmt.Fprintf(nw, "%s topic %s no longer exists; the group still has committed offsets for it\n", st.Bad.Render("error:"), render.Safe(t))
	}
	fmt.Fprintln(nw, inspectSummaryLine(st, v))
	return nil
}

// GroupProtocolText names the group's protocol: "classic (consumer/range)", "consumer
// (assignor uniform, group epoch 5, assignment epoch 5)", or "-" for an unknown group.
func GroupProtocolText(g inspect.Group) string {
	switch g.GroupProtocol {
	case "":
		return "-"
	case inspect.ProtocolConsumer:
		var parts []string
		if g.Protocol != "" {
			parts = append(parts, "assignor "+g.Protocol)
		}
		if g.Epoch != nil {
			parts = append(parts, fmt.Sprintf("group epoch %d", *g.Epoch))
		}
		if g.AssignmentEpoch != nil {
			parts = append(parts, fmt.Sprintf("assignment epoch %d", *g.AssignmentEpoch))
		}
		if len(parts) == 0 {
			return g.GroupProtocol
		}
		return g.GroupProtocol + " (" + strings.Join(parts, ", ") + ")"
	}
	proto := g.ProtocolType
	if g.Protocol != "" {
		proto += "/" + g.Protocol
	}
	if proto == "" {
		return g.GroupProtocol
	}
	return g.GroupProtocol + " (" + proto + ")"
}

// MemberText describes a member with its partitions: "ID (client c, host h, epoch 3):
// 2 partitions t/0,1", and the target assignment when it differs.
func MemberText(m inspect.Member) string {
	extra := ""
	if m.InstanceID != "" {
		extra += ", instance " + m.InstanceID
	}
	if m.MemberEpoch != nil {
		extra += fmt.Sprintf(", epoch %d", *m.MemberEpoch)
	}
	s := fmt.Sprintf("%s (client %s, host %s%s): %d partitions", m.ID, m.ClientID, m.Host, extra, m.Partitions)
	if m.Partitions > 0 {
		s += " " + m.Assigned.String()
	}
	if m.Target != nil {
		s += "; target " + m.Target.String()
	}
	return render.Safe(s) // ID, client.id, host and instance are the consumer's own words
}

// inspectGrid is the table of partitions: the offsets, and with evidence the judgement.
func inspectGrid(st render.Styles, v Inspect, pretty bool) render.Grid {
	hasMeta := false
	for _, p := range v.Partitions {
		if p.Metadata != "" {
			hasMeta = true
		}
	}
	grid := render.Grid{Header: []string{"TOPIC", "PARTITION", "COMMITTED", "EPOCH"}}
	if hasMeta {
		grid.Header = append(grid.Header, "METADATA")
	}
	grid.Header = append(grid.Header, "LOG-START", "LAST-STABLE", "HIGH-WATERMARK", "LAG", "OWNER")
	if v.Evidence != nil {
		grid.Header = append(grid.Header, "DELIVERED", "LOST", "STRANDED", "DUP", "REWIND", "VERDICT")
	}
	// a narrow terminal hides these, the first first, until topic, partition, committed,
	// lost and verdict fit whole (a pipe and -o json always carry every column; the
	// details under the table repeat the rewind offset and the stranded ranges)
	for _, opt := range []string{"METADATA", "EPOCH", "DUP", "LAST-STABLE", "LOG-START", "OWNER", "HIGH-WATERMARK", "REWIND", "DELIVERED", "LAG", "STRANDED"} {
		for i, h := range grid.Header {
			if h == opt {
				grid.Optional = append(grid.Optional, i)
			}
		}
	}
	for _, h := range grid.Header {
		switch h {
		case "TOPIC", "METADATA", "OWNER", "VERDICT":
			grid.Align = append(grid.Align, render.Left)
		default:
			grid.Align = append(grid.Align, render.Right)
		}
	}
	for _, p := range v.Partitions {
		epoch := "-"
		if p.CommittedEpoch >= 0 {
			epoch = strconv.Itoa(int(p.CommittedEpoch))
		}
		lag := "-"
		if p.Lag != nil {
			lag = strconv.FormatInt(*p.Lag, 10)
		}
		owner := string(p.Owner)
		if owner == "" {
			owner = "-"
		}
		row := []string{render.Safe(p.Topic), strconv.Itoa(int(p.Partition)), kpart.OffsetText(p.Committed), epoch}
		if hasMeta {
			row = append(row, render.Safe(p.Metadata))
		}
		row = append(row, kpart.OffsetText(p.LogStart), kpart.OffsetText(p.LastStable), kpart.OffsetText(p.HighWatermark), lag, render.Safe(owner))
		if v.Evidence != nil {
			j := p.Judgement
			rewind := "-"
			if j.SafeRewind != nil {
				rewind = strconv.FormatInt(*j.SafeRewind, 10)
			}
			word := string(j.Verdict)
			if pretty {
				word = st.Verdict(j.Verdict)
			}
			row = append(row, strconv.FormatInt(j.Delivered, 10), strconv.FormatInt(j.LostCount, 10),
				strconv.FormatInt(j.StrandedCount, 10), strconv.FormatInt(j.Duplicates, 10), rewind, word)
		}
		grid.Rows = append(grid.Rows, row)
	}
	return grid
}

func inspectSummaryLine(st render.Styles, v Inspect) string {
	prefix := ""
	if v.Interrupted {
		prefix = st.Warn.Render("INTERRUPTED") + " (partial: the inspection was stopped before every partition was read) "
	}
	return prefix + inspectVerdictLine(st, v)
}

func inspectVerdictLine(st render.Styles, v Inspect) string {
	s := v.Summary
	if v.Evidence == nil {
		return fmt.Sprintf("%s\n%d partitions, total lag %d.", st.Warn.Render(NoEvidenceNote+"."), s.Partitions, s.Lag)
	}
	incomplete := ""
	if !v.Complete {
		incomplete = " " + st.Warn.Render(fmt.Sprintf("INCOMPLETE: %d partitions not fully judged.", max(s.Incomplete, s.Errors)))
	}
	if s.Lost > 0 || s.Unrecoverable > 0 {
		gone := ""
		if s.Unrecoverable > 0 {
			gone = fmt.Sprintf(" UNRECOVERABLE: %d more offsets never delivered were deleted below the log start; no rewind restores them.", s.Unrecoverable)
		}
		return st.Bad.Render(fmt.Sprintf("LOST: %d records on %d of %d partitions were committed past without being delivered.%s", s.Lost, s.LostPartitions, s.Partitions, gone)) +
			fmt.Sprintf(" stranded %d, delivered %d, duplicates %d.", s.Stranded, s.Delivered, s.Duplicates) + incomplete
	}
	if s.Stranded > 0 {
		return st.Warn.Render(fmt.Sprintf("No records lost; %d stranded (not yet delivered, not committed past).", s.Stranded)) +
			fmt.Sprintf(" delivered %d, duplicates %d.", s.Delivered, s.Duplicates) + incomplete
	}
	if !v.Complete {
		return incomplete[1:]
	}
	if v.NoEvidence != "" {
		return st.Warn.Render("NO EVIDENCE: "+string(v.NoEvidence)+"; no partition judged.") + " " + string(v.Settle) + "."
	}
	if v.Verdict != nil && *v.Verdict == verdict.NoEvidence {
		return st.Warn.Render(fmt.Sprintf("NO EVIDENCE for %d of %d partitions", s.Partitions-s.Judged, s.Partitions)) +
			fmt.Sprintf(" (nothing lost on the %d judged; delivered %d, duplicates %d): %s.", s.Judged, s.Delivered, s.Duplicates, v.Settle)
	}
	return st.Good.Render(fmt.Sprintf("OK: no records lost on %d partitions.", s.Judged)) + fmt.Sprintf(" delivered %d, duplicates %d.", s.Delivered, s.Duplicates)
}

// InspectChanges is one JSON document of `inspect --watch` after the first report.
type InspectChanges struct {
	render.Meta
	At      time.Time        `json:"at"`
	Changes []inspect.Change `json:"changes"`
	Summary inspect.Summary  `json:"summary"`
	// Clock is the inspection's wall-clock time (the operator's time zone) the table
	// prefixes each change with.
	Clock string `json:"-"`
}

// NewInspectChanges builds the view of what changed, cs, as of the inspection r.
func NewInspectChanges(r *inspect.Report, cs []inspect.Change) InspectChanges {
	if cs == nil {
		cs = []inspect.Change{}
	}
	return InspectChanges{Meta: render.NewMeta(InspectWatchSchema, "inspect"), At: r.At.UTC(), Changes: cs, Summary: r.Summarize(), Clock: r.At.Format("15:04:05")}
}

// PrintInspectChanges prints the changes: JSON, or a line per change ("no change" when
// there is none), each prefixed with the time.
func PrintInspectChanges(w io.Writer, v InspectChanges, f render.Format) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	if len(v.Changes) == 0 {
		_, err := fmt.Fprintf(w, "%s no change\n", v.Clock)
		return err
	}
	for _, c := range v.Changes {
		if _, err := fmt.Fprint(w, render.Safef("%s %s\n", v.Clock, c)); err != nil {
			return err
		}
	}
	return nil
}

// printEvidence says what was read from each evidence file, and the first malformed lines.
func printEvidence(w io.Writer, st render.Styles, ev *InspectEvidence, group string) {
	for _, s := range ev.Sources {
		extra := ""
		if s.Gzip {
			extra = " (gzip)"
		}
		if s.Topic != "" {
			extra += ", topic " + render.Safe(string(s.Topic))
		}
		if s.Group != "" {
			extra += ", group " + render.Safe(string(s.Group))
			if group != "" && string(s.Group) != group {
				extra += " " + st.Warn.Render("(not the inspected group)")
			}
		}
		if s.Format == evidence.FormatOTLP {
			fmt.Fprintf(w, "evidence %s: %s%s, %d deliveries from %d consumer process spans, %d other spans ignored, %d malformed (lines or spans)\n",
				s.Name, s.Format, extra, s.Records, s.Lines, s.Ignored, s.Malformed)
			continue
		}
		ignored := ""
		if s.Ignored > 0 {
			ignored = fmt.Sprintf(", %d lines ignored", s.Ignored)
		}
		fmt.Fprintf(w, "evidence %s: %s%s, %d deliveries%s, %d malformed lines\n", render.Safe(s.Name), render.Safe(string(s.Format)), extra, s.Records, ignored, s.Malformed)
		printKinds(w, st, s.Kinds)
	}
	for _, m := range ev.Malformed {
		fmt.Fprint(w, render.Safef("  %s:%d: %s: %s\n", m.Source, m.Line, m.Reason, strconv.Quote(m.Text)))
	}
	if shown := len(ev.Malformed); ev.MalformedTotal > shown {
		fmt.Fprintf(w, "  ... %d more malformed lines\n", ev.MalformedTotal-shown)
	}
}

// printKinds says, per kind of line, what was counted and what was ignored:
//
//	counted msg=processed: 71 lines, offsets 0-201
//	ignored msg=processing: 83 lines, offsets 0-201 (not --delivered-when msg=processed)
func printKinds(w io.Writer, st render.Styles, ks []KindDoc) {
	for _, k := range ks {
		ek := evidence.Kind{Lines: k.Lines, First: -1, Last: -1}
		if k.First != nil {
			ek.First, ek.Last = *k.First, *k.Last
		}
		tally := ek.Tally()
		if k.Counted {
			fmt.Fprintf(w, "  counted %s: %s\n", k.Name, tally)
			continue
		}
		why := ""
		if k.Why != "" {
			why = " (" + string(k.Why) + ")"
		}
		fmt.Fprintf(w, "  %s %s: %s%s\n", st.Dim.Render("ignored"), k.Name, tally, why)
	}
}

// PrintEvidenceRead says what was read from evidence files, for a command that stops
// before its own report (rewind with evidence that cannot support a plan).
func PrintEvidenceRead(w io.Writer, s *evidence.Set) error {
	printEvidence(w, render.NewStyles(w), newInspectEvidence(s), "")
	return nil
}

// newInspectEvidence is the document of what was read from evidence files.
func newInspectEvidence(s *evidence.Set) *InspectEvidence {
	ev := &InspectEvidence{Sources: sourcesDoc(s.Sources), MalformedTotal: s.MalformedTotal(), Malformed: s.Malformed}
	if ev.Malformed == nil {
		ev.Malformed = []evidence.Malformed{}
	}
	return ev
}

// verdictOrNull is nil for no verdict, so JSON says null rather than "".
func verdictOrNull(v verdict.Verdict) *verdict.Verdict {
	if v == "" {
		return nil
	}
	return &v
}

// printGroup writes the group's line and a line per member (inspect and rewind).
func printGroup(w io.Writer, st render.Styles, grp inspect.Group) {
	state := grp.State
	if state == "" {
		state = "-"
	}
	fmt.Fprintf(w, "group %s  state %s  protocol %s  members %d\n", st.Bold.Render(render.Safe(grp.ID)), render.Safe(state), render.Safe(GroupProtocolText(grp)), len(grp.Members))
	if grp.Err != "" {
		fmt.Fprintf(w, "  group description failed: %s\n", render.Safe(grp.Err))
	}
	for _, m := range grp.Members {
		fmt.Fprintf(w, "  member %s\n", MemberText(m))
	}
}
