package view

// This file turns a trace.Report into what kstranded trace parse prints: the JSON
// document (schema kstranded.trace-parse/v2), the summary and timeline tables, and the
// SVG picture (trace_svg.go). It decides nothing: every verdict comes from package trace.

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/trace"
)

// TraceSchema names the JSON document.
const TraceSchema = "kstranded.trace-parse/v2"

// Trace is the JSON document. Per partition it carries the delivered offsets as ranges, so
// it is also evidence for `inspect --delivered`.
type Trace struct {
	render.Meta
	// Interrupted: the parse was stopped (SIGINT, SIGTERM); Complete: every line of every
	// input was read and every partition tracked; Incomplete says what is not covered.
	Interrupted       bool              `json:"interrupted"`
	Complete          bool              `json:"complete"`
	Incomplete        []string          `json:"incomplete"`
	StoppedAt         *trace.Ref        `json:"stopped_at"`
	Files             []TraceFile       `json:"files"`
	Settings          map[string]string `json:"settings"`
	MaxPollIntervalMs *int64            `json:"max_poll_interval_ms"`
	MaxPollSource     Text              `json:"max_poll_interval_source"`
	DeliveryEvidence  bool              `json:"delivery_evidence"`
	// Verdict is the worst partition verdict; NO EVIDENCE when the inputs judge nothing.
	Verdict         verdict.Verdict  `json:"verdict"`
	NoEvidence      Text             `json:"no_evidence"`
	Settle          []string         `json:"settle"`
	Start           Text             `json:"start"`
	End             Text             `json:"end"`
	Lost            bool             `json:"lost"`
	Partitions      []TracePartition `json:"partitions"`
	Findings        []trace.Finding  `json:"findings"`
	Counters        []trace.Counter  `json:"counters"`
	Timeline        []TraceEntry     `json:"timeline" schema:"nullable"` // null without --timeline
	TimelineDropped int              `json:"timeline_dropped"`
	// TimelineFilter names the one partition the timeline was narrowed to (--partition).
	TimelineFilter Text `json:"timeline_partition"`
	IdlePartitions int  `json:"idle_partitions"`
}

// TraceFile is one input as it was read; a delivery log says, per kind of line, what was
// counted and what was ignored (kinds, as inspect's evidence sources do).
type TraceFile struct {
	trace.FileStats
	KindDocs []KindDoc `json:"kinds"`
}

func traceFiles(fs []trace.FileStats) []TraceFile {
	out := make([]TraceFile, len(fs))
	for i, f := range fs {
		out[i] = TraceFile{FileStats: f, KindDocs: kindsDoc(f.Kinds)}
	}
	return out
}

// TracePartition is one partition's end state.
type TracePartition struct {
	Topic            Text            `json:"topic"`
	Partition        int32           `json:"partition"`
	Verdict          verdict.Verdict `json:"verdict"`
	Reason           Text            `json:"reason"`
	Fetched          kpart.RangeSet  `json:"fetched"`
	FetchedCount     int64           `json:"fetched_count"`
	ControlMarkers   kpart.RangeSet  `json:"control_markers"`
	Delivered        kpart.RangeSet  `json:"delivered"`
	DeliveredCount   int64           `json:"delivered_count"`
	DeliveredUnknown int             `json:"delivered_offsets_unknown"`
	Undelivered      kpart.RangeSet  `json:"undelivered"`
	Lost             kpart.RangeSet  `json:"lost"`
	Stranded         kpart.RangeSet  `json:"stranded"`
	Committed        *int64          `json:"committed"`
	Stored           *int64          `json:"stored"`
	FetchPosition    *int64          `json:"fetch_position"`
	Clears           int             `json:"clears"`
	Discarded        int64           `json:"discarded"`
	// Judgement is the one judge's answer, the same document inspect gives.
	Judgement *JudgementDoc `json:"judgement"`
}

// TraceEntry is one timeline line.
type TraceEntry struct {
	Time      string         `json:"time"`
	Topic     Text           `json:"topic"`
	Partition *int32         `json:"partition"`
	Event     string         `json:"event"`
	Offsets   kpart.RangeSet `json:"offsets"`
	Offset    *int64         `json:"offset"`
	Detail    string         `json:"detail"`
	Source    trace.Ref      `json:"source"`
}

func opt(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// Clock prints a time for people: the trace's own precision, UTC.
func Clock(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	if t.Year() == 0 {
		return t.Format("15:04:05.000")
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// NewTrace makes the JSON document; timeline adds the chronological entries.
func NewTrace(r *trace.Report, command string, timeline bool) Trace {
	d := Trace{Meta: render.NewMeta(TraceSchema, command), Files: traceFiles(r.Files), Settings: r.Settings, DeliveryEvidence: r.DeliveryEvidence,
		Lost: r.Lost(), Verdict: r.Verdict, NoEvidence: Text(r.NoEvidence), Settle: nonNil(r.Settle), Findings: nonNil(r.Findings), Counters: nonNil(r.Counters), MaxPollSource: Text(r.MaxPollSource), IdlePartitions: r.IdlePartitions}
	d.Interrupted, d.Complete, d.Incomplete = r.Interrupted, r.Complete(), nonNil(r.Incomplete)
	if r.Partial {
		at := r.StoppedAt
		d.StoppedAt = &at
	}
	if r.MaxPollInterval >= 0 {
		ms := r.MaxPollInterval.Milliseconds()
		d.MaxPollIntervalMs = &ms
	}
	if !r.Start.IsZero() {
		d.Start, d.End = Text(Clock(r.Start)), Text(Clock(r.End))
	}
	for _, p := range r.Partitions {
		d.Partitions = append(d.Partitions, TracePartition{Topic: Text(p.Topic), Partition: p.Partition, Verdict: p.Verdict, Reason: Text(p.Reason),
			Fetched: nonNil(p.Fetched), FetchedCount: p.FetchedCount, ControlMarkers: nonNil(p.Control),
			Delivered: nonNil(p.Delivered), DeliveredCount: p.Delivered.Count() + int64(p.DeliveredUnknown), DeliveredUnknown: p.DeliveredUnknown,
			Undelivered: nonNil(p.Undelivered), Lost: nonNil(p.Lost), Stranded: nonNil(p.Stranded),
			Committed: opt(p.Committed), Stored: opt(p.Stored), FetchPosition: opt(p.Position), Clears: p.Clears, Discarded: p.Discarded,
			Judgement: JudgeDoc(p.Judgement)})
	}
	if d.Partitions == nil {
		d.Partitions = []TracePartition{}
	}
	if timeline {
		for _, e := range r.Timeline {
			d.Timeline = append(d.Timeline, traceEntry(e))
		}
		d.TimelineDropped = r.TimelineDropped
	}
	return d
}

func traceEntry(e trace.Entry) TraceEntry {
	x := TraceEntry{Time: Clock(e.Time), Topic: Text(e.Topic), Event: e.Kind.String(), Offsets: e.Ranges, Detail: e.Detail, Source: e.Ref}
	if e.Partition != trace.AllPartitions {
		p := e.Partition
		x.Partition = &p
	}
	if e.Kind == trace.KindCommit || e.Kind == trace.KindStore || e.Kind == trace.KindPosition || e.Kind == trace.KindSeek || e.Kind == trace.KindRewind {
		x.Offset = opt(e.Offset)
	}
	return x
}

func num(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func partName(topic string, p *int32) string {
	if p == nil {
		return "*"
	}
	if topic == "" {
		return strconv.Itoa(int(*p))
	}
	return render.Safef("%s/%d", topic, *p)
}

// cellRanges is how many ranges a table cell lists before it says how many more.
const cellRanges = 8

// SummaryGrid is the per-partition table.
func SummaryGrid(d Trace, st render.Styles) render.Grid {
	g := render.Grid{Header: []string{"PARTITION", "FETCHED", "DELIVERED", "UNDELIVERED", "COMMITTED", "POSITION", "CLEARS", "VERDICT"},
		Align: []render.Align{render.Left, render.Right, render.Right, render.Right, render.Right, render.Right, render.Right, render.Left}}
	for _, p := range d.Partitions {
		pp := p.Partition
		undel := "-"
		if d.DeliveryEvidence {
			undel = fmt.Sprintf("%d", p.Undelivered.Count())
			if len(p.Undelivered) > 0 {
				// a cell, not the list: 350,000 ranges printed 1.7 MB on one line (-o json
				// keeps every range)
				undel += " (" + p.Undelivered.Summary(cellRanges) + ")"
			}
		}
		deliv := "-"
		if d.DeliveryEvidence {
			deliv = strconv.FormatInt(p.DeliveredCount, 10)
		}
		clears := strconv.Itoa(p.Clears)
		if p.Discarded > 0 {
			clears += fmt.Sprintf(" (%d discarded)", p.Discarded)
		}
		g.Rows = append(g.Rows, []string{partName(string(p.Topic), &pp), strconv.FormatInt(p.FetchedCount, 10), deliv, undel,
			num(p.Committed), num(p.FetchPosition), clears, st.Verdict(p.Verdict)})
	}
	return g
}

// WriteHeader prints the inputs (format, lines, malformed lines with their numbers).
func WriteHeader(w io.Writer, d Trace, st render.Styles) {
	switch {
	case d.Interrupted:
		fmt.Fprintln(w, st.Warn.Render("INTERRUPTED")+" (partial result: the parse was stopped before the end of its inputs)")
	case !d.Complete:
		fmt.Fprintln(w, st.Warn.Render("INCOMPLETE")+" (partial result: the inputs exceed the analysis limits)")
	}
	for _, why := range d.Incomplete {
		fmt.Fprintf(w, "  %s\n", render.Safe(why))
	}
	for _, f := range d.Files {
		how := "forced"
		if f.Detected {
			how = "detected"
		}
		if f.Detected && f.DetectedAtLine > 1 {
			how = fmt.Sprintf("detected at line %d", f.DetectedAtLine)
		}
		fmt.Fprint(w, render.Safef("%s: %s (%s), %d lines, %d events", f.Name, f.Format, how, f.Lines, f.Events))
		if f.Stopped {
			fmt.Fprint(w, ", "+st.Warn.Render("not read to the end"))
		}
		if f.Format == trace.FormatPattern {
			fmt.Fprintf(w, ", %d matched --pattern", f.PatternMatched)
		} else if f.Format == trace.FormatJSClient || f.Format == trace.FormatJSClientJSON {
			fmt.Fprintf(w, ", %d client log lines, %d matched --pattern", f.Matched, f.PatternMatched)
		}
		if f.Malformed > 0 {
			fmt.Fprintf(w, ", %s", st.Warn.Render(fmt.Sprintf("%d malformed", f.Malformed)))
		}
		fmt.Fprintln(w)
		printKinds(w, st, f.KindDocs)
		for _, m := range f.FirstErrors {
			fmt.Fprint(w, render.Safef("  %s:%d: %s: %s\n", f.Name, m.Line, m.Reason, m.Text))
		}
		if f.Malformed > len(f.FirstErrors) {
			fmt.Fprintf(w, "  ... %d more malformed lines\n", f.Malformed-len(f.FirstErrors))
		}
	}
	if d.MaxPollIntervalMs != nil {
		fmt.Fprint(w, render.Safef("max.poll.interval.ms: %d (from %s)\n", *d.MaxPollIntervalMs, d.MaxPollSource))
	}
	if !d.DeliveryEvidence {
		fmt.Fprintln(w, st.Dim.Render("no delivery evidence in these inputs: LOST and STRANDED need what the handler received (add the application's own delivery log: JSON or text lines with partition and offset, or any log with --pattern)"))
	}
	if d.IdlePartitions > 0 {
		fmt.Fprintf(w, "%d more partitions are named in the inputs but never had a record\n", d.IdlePartitions)
	}
	if d.TimelineDropped > 0 {
		fmt.Fprintf(w, "timeline: %d entries left out in the middle (kept the first and the last)\n", d.TimelineDropped)
	}
	if d.TimelineFilter != "" {
		fmt.Fprint(w, render.Safef("timeline: %s only, and the events about every partition\n", d.TimelineFilter))
	}
	fmt.Fprintln(w)
}

// WriteFindings prints the findings under the table.
func WriteFindings(w io.Writer, d Trace, st render.Styles) {
	fmt.Fprintln(w)
	defer writeTraceVerdict(w, d, st)
	if len(d.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	fmt.Fprintf(w, "Findings (%d):\n", len(d.Findings))
	for _, f := range d.Findings {
		rule := f.Rule
		switch f.Severity {
		case trace.SevLoss:
			rule = st.Bad.Render(rule)
		case trace.SevWarn:
			rule = st.Warn.Render(rule)
		}
		head, details := findingLines(f.Message)
		// 100 columns on a pipe, the terminal's width on a terminal: whole lines, which
		// the prose writer then leaves as they are
		width := 100
		if tw := render.Width(w); tw > 0 && tw < width {
			width = tw
		}
		fmt.Fprintf(w, "\n%s\n", render.WrapLine(rule+"  "+render.Safe(head), width))
		for _, d := range details {
			fmt.Fprintf(w, "%s\n", render.WrapLine("  - "+render.Safe(d), width))
		}
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "    %s  %s\n", st.Dim.Render(render.Safe(e.Ref.String())), render.Safe(e.What))
		}
	}
}

// PrintTrace prints the trace-parse document: JSON, or the header, the summary (or with
// timeline the chronological table) and the findings.
func PrintTrace(w io.Writer, d Trace, f render.Format, pretty, timeline bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, d)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	st := render.NewStyles(nw)
	WriteHeader(nw, d, st)
	grid := SummaryGrid(d, st)
	if timeline {
		grid = TimelineGrid(d)
	}
	if err := render.WriteGrid(w, grid, pretty); err != nil {
		return err
	}
	WriteFindings(nw, d, st)
	return nil
}

// writeTraceVerdict ends the table output with the verdict and, when the inputs judge
// nothing, why and what would settle it: "no findings" alone is not an all-clear.
func writeTraceVerdict(w io.Writer, d Trace, st render.Styles) {
	fmt.Fprintln(w)
	word := st.Verdict(d.Verdict)
	switch d.Verdict {
	case verdict.OK:
		fmt.Fprintf(w, "%s: every fetched record was delivered or is not yet committed past, on %d partitions\n", word, len(d.Partitions))
	case verdict.Incomplete:
		fmt.Fprintf(w, "%s: no verdict for what was not read or not tracked; the %d partitions read show no loss\n", word, len(d.Partitions))
	case verdict.NoEvidence, verdict.NoCommitEvidence, verdict.NoRecordEvidence:
		why := d.NoEvidence
		if why == "" {
			n := 0
			for _, p := range d.Partitions {
				if !p.Verdict.Judged() {
					n++
				}
			}
			why = Text(fmt.Sprintf("%d of %d partitions could not be judged", n, len(d.Partitions)))
		}
		fmt.Fprintf(w, "%s: %s\n", word, render.Safe(string(why)))
	case verdict.Lost, verdict.Stranded:
		var lost, stranded int64
		var lp, sp int
		for _, p := range d.Partitions {
			if n := p.Lost.Count(); n > 0 {
				lost, lp = lost+n, lp+1
			}
			if n := p.Stranded.Count(); n > 0 {
				stranded, sp = stranded+n, sp+1
			}
		}
		if d.Verdict == verdict.Lost {
			// one write: the prose writer fits whole lines to the terminal
			line := fmt.Sprintf("%s: %d records on %d of %d partitions were fetched, never delivered and committed past", word, lost, lp, len(d.Partitions))
			if stranded > 0 {
				line += fmt.Sprintf("; %d more stranded on %d", stranded, sp)
			}
			fmt.Fprintln(w, line+" (findings above)")
		} else {
			fmt.Fprintf(w, "%s: %d records on %d of %d partitions were fetched, never delivered, not yet committed past (findings above)\n", word, stranded, sp, len(d.Partitions))
		}
	default:
		fmt.Fprintf(w, "%s\n", word)
	}
	for _, s := range d.Settle {
		fmt.Fprintf(w, "  to settle it: %s\n", render.Safe(string(s)))
	}
}
