package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/simulate"
	"github.com/kstranded/kstranded/workload"
)

// SweepSchema versions the JSON of `kstranded simulate --sweep`. v2: values are numbers
// (milliseconds for a duration, see Unit) and each boundary an edge, not words.
const SweepSchema = "kstranded.sweep/v2"

// AdviceSchema versions the JSON of `kstranded simulate --advise`. v2: the current value,
// the safe ranges and the margin are numbers in the setting's unit, not words.
const AdviceSchema = "kstranded.advice/v2"

// The units of a setting's numbers in the simulate documents: durations in milliseconds
// (as elapsed_ms and the other _ms fields of kstranded's documents), counts as they are,
// and a spread by its records in all.
const (
	UnitMs      = "ms"
	UnitCount   = "count"
	UnitRecords = "records"
)

func unitOf(k simulate.Kind) string {
	switch k {
	case simulate.Duration:
		return UnitMs
	case simulate.Spread:
		return UnitRecords
	}
	return UnitCount
}

// inUnit is a setting's number (nanoseconds for a duration) in its unit.
func inUnit(k simulate.Kind, x int64) int64 {
	if k == simulate.Duration {
		return x / int64(time.Millisecond)
	}
	return x
}

// valueOf is a swept value in its unit.
func valueOf(k simulate.Kind, v simulate.Value) int64 {
	switch k {
	case simulate.Duration:
		return inUnit(k, int64(v.Duration))
	case simulate.Spread:
		return int64(workload.Spec{Parts: v.Parts}.Total())
	}
	return int64(v.Count)
}

// Sweep is the JSON document of `kstranded simulate --sweep`.
type Sweep struct {
	render.Meta
	Flag      string `json:"flag"`
	Unit      string `json:"unit"` // of the values and edges: ms, count, or records (a spread's)
	Simulated bool   `json:"simulated"`
	// Verdict is the worst of the points' verdicts: INCOMPLETE where a point never
	// settled (and nothing worse was found), never OK unless every point judged OK.
	Verdict     verdict.Verdict `json:"verdict"`
	Stalled     int             `json:"stalled"` // points (value and case) that never settled
	Rows        []SweepRow      `json:"rows"`
	Boundaries  []SweepBoundary `json:"boundaries"`
	Interrupted bool            `json:"interrupted"`
}

// SweepRow is one value of the swept setting.
type SweepRow struct {
	Value int64 `json:"value"` // in the sweep's unit
	// Parts is a spread's records per partition; null for other settings.
	Parts []SweepPart `json:"parts" schema:"nullable"`
	Cells []SweepCell `json:"cases"`
	Text  string      `json:"-"` // the value as the flag takes it: 1h0m0s, 0:100,1:40
}

// SweepPart is one partition of a swept spread.
type SweepPart struct {
	Partition int32 `json:"partition"`
	Records   int   `json:"records"`
}

// SweepBoundary says where one case loses records over the sweep.
type SweepBoundary struct {
	Policy string `json:"policy"`
	Commit string `json:"commit"`
	// Loses: nowhere, everywhere, below (values < edge), from (values >= edge), some
	// (no single edge: the rows say where) or unsettled (no point settled).
	Loses simulate.Loses `json:"loses"`
	// Edge is where the loss switches, bisected on the model to 1 s or 1, in the sweep's
	// unit; null unless loses is below or from.
	Edge *int64 `json:"edge"`
	Text string `json:"-"` // the same in words, for the table's notes
}

// SweepCell is one policy and commit mode at one value.
type SweepCell struct {
	Policy         string `json:"policy"`
	Commit         string `json:"commit"`
	Lost           int    `json:"lost"`
	LostPartitions int    `json:"lost_partitions"`
	Stranded       int    `json:"stranded"`
	Stalled        bool   `json:"stalled"`
	// Verdict is the judge's verdict of the point's run.
	Verdict verdict.Verdict `json:"verdict"`
}

// NewSweep builds the view of a sweep.
func NewSweep(r *simulate.Result) Sweep {
	k := r.Sweep.Kind
	v := Sweep{Meta: render.NewMeta(SweepSchema, "simulate"), Flag: r.Sweep.Flag, Unit: unitOf(k), Simulated: true,
		Rows: []SweepRow{}, Boundaries: []SweepBoundary{}, Interrupted: r.Interrupted, Verdict: r.Verdict()}
	v.Stalled, _ = r.Stalled()
	for _, row := range r.Rows {
		sr := SweepRow{Value: valueOf(k, row.Value), Text: row.Value.Text, Cells: []SweepCell{}}
		if k == simulate.Spread {
			sr.Parts = []SweepPart{}
			for _, p := range row.Value.Parts {
				sr.Parts = append(sr.Parts, SweepPart{Partition: p.Partition, Records: p.Records})
			}
		}
		for _, c := range row.Cells {
			sr.Cells = append(sr.Cells, SweepCell{Policy: string(c.Policy), Commit: string(c.Commit), Lost: c.Lost,
				LostPartitions: c.LostPartitions, Stranded: c.Stranded, Stalled: c.Stalled, Verdict: c.Verdict})
		}
		v.Rows = append(v.Rows, sr)
	}
	for _, b := range r.Boundaries {
		sb := SweepBoundary{Policy: string(b.Policy), Commit: string(b.Commit), Loses: b.Loses, Text: b.Text}
		if b.Edge != nil {
			e := valueOf(k, *b.Edge)
			sb.Edge = &e
		}
		if len(r.Cases) > 1 && hasCommitModes(r.Cases) {
			sb.Text = fmt.Sprintf("%s (commit %s)", b.Text, b.Commit)
		}
		v.Boundaries = append(v.Boundaries, sb)
	}
	return v
}

func hasCommitModes(cs []simulate.Case) bool {
	for _, c := range cs {
		if c.Commit != cs[0].Commit {
			return true
		}
	}
	return false
}

// PrintSweep prints a sweep: one row per value, lost records (and partitions) per case,
// then the boundaries in words.
func PrintSweep(w io.Writer, v Sweep, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	g := render.Grid{Header: []string{v.Flag}, Align: []render.Align{render.Right}}
	if len(v.Rows) > 0 {
		for _, c := range v.Rows[0].Cells {
			// "v1.10.0 auto": the header folds at the space on a narrow terminal; what
			// the cells count is said once, below the table
			g.Header = append(g.Header, fmt.Sprintf("%s %s", c.Policy, c.Commit))
			g.Align = append(g.Align, render.Right)
		}
	}
	for _, r := range v.Rows {
		row := []string{r.Text}
		for _, c := range r.Cells {
			cell := fmt.Sprintf("%d (%d)", c.Lost, c.LostPartitions)
			if c.Verdict == verdict.Error {
				cell = "ERROR (not run)" // the error follows: no count was made here
			} else if c.Stalled {
				cell += fmt.Sprintf(" stalled, %d stranded", c.Stranded)
			}
			row = append(row, cell)
		}
		g.Rows = append(g.Rows, row)
	}
	if err := render.WriteGrid(w, g, pretty); err != nil {
		return err
	}
	fmt.Fprintln(nw, "each cell: records lost (partitions that lost records), per client policy and commit mode")
	if v.Interrupted {
		fmt.Fprintf(nw, "INTERRUPTED: %d rows finished\n", len(v.Rows))
	}
	for _, b := range v.Boundaries {
		fmt.Fprintln(nw, b.Text)
	}
	if v.Verdict == verdict.Incomplete && !v.Interrupted {
		fmt.Fprintf(nw, "%s: %d of %d points never settled: the sweep has no verdict there\n", v.Verdict, v.Stalled, points(v))
	}
	return nil
}

func points(v Sweep) int {
	n := 0
	for _, r := range v.Rows {
		n += len(r.Cells)
	}
	return n
}

// Advice is the JSON document of `kstranded simulate --advise`.
type Advice struct {
	render.Meta
	Simulated bool   `json:"simulated"`
	Policy    string `json:"policy"`
	Commit    string `json:"commit"`
	Lost      int    `json:"lost"`
	// Verdict at the user's settings: LOST, OK, or INCOMPLETE when a phase never
	// settled there (lost is then 0 for want of a verdict).
	Verdict  string        `json:"verdict"`
	Settings []AdviceRange `json:"settings"`
	Policies []AdvicePol   `json:"policies"`
	// NeverSettles: the points of the searches that never settled (FLAG=VALUE), counted
	// unsafe.
	NeverSettles []string `json:"never_settles"`
}

// AdviceRange is the safe range of one setting, the others at the user's values. Its
// numbers are in Unit: milliseconds for a duration, else a count.
type AdviceRange struct {
	Flag    string `json:"flag"`
	Unit    string `json:"unit"`
	Current int64  `json:"current"`
	// Safe are the runs of safe values found, ascending; [] when none was found.
	Safe []ValueRange `json:"safe"`
	// Searched is what the search covered, assuming (as it does) that the loss is
	// monotone in the setting.
	Searched ValueRange `json:"searched"`
	// Margin is how far current is inside (> 0) or outside (< 0) the safe range's one
	// edge; null where there is none (concurrency, none found, larger not searched).
	Margin *int64 `json:"margin"`
	IsSafe bool   `json:"current_is_safe"`

	// The same in words, for the table.
	CurrentText string `json:"-"`
	SafeText    string `json:"-"`
	MarginText  string `json:"-"`
}

// ValueRange is an inclusive run of a setting's values; last is null when it is open
// above (max-poll-interval >= its edge).
type ValueRange struct {
	First int64  `json:"first"`
	Last  *int64 `json:"last"`
}

func valueRange(k simulate.Kind, s simulate.Span) ValueRange {
	r := ValueRange{First: inUnit(k, s.First)}
	if s.Last != nil {
		l := inUnit(k, *s.Last)
		r.Last = &l
	}
	return r
}

// AdvicePol is one version at the user's settings.
type AdvicePol struct {
	Policy   string   `json:"policy"`
	Releases []string `json:"releases"` // the client versions this policy models (docs/releases.md)
	Lost     int      `json:"lost"`
	Stranded int      `json:"stranded"`      // never delivered, not committed past at the run's end
	Stalled  bool     `json:"never_settles"` // no verdict at the user's settings
	// FixedBatchSize: these releases have no js.consumer.max.batch.size (1.6.0 and
	// earlier): eachBatch got batches of this size, not the user's; absent when the
	// user's batch size applied.
	FixedBatchSize int `json:"fixed_batch_size,omitempty"`
}

// NewAdvice builds the view of an advice.
func NewAdvice(a *simulate.Advice) Advice {
	v := Advice{Meta: render.NewMeta(AdviceSchema, "simulate"), Simulated: true, Policy: string(a.Policy),
		Commit: string(a.Commit), Lost: a.Lost, Settings: []AdviceRange{}, Policies: []AdvicePol{}, NeverSettles: append([]string{}, a.NeverSettles...)}
	switch {
	case a.Stalled:
		v.Verdict = string(verdict.Incomplete)
	case a.Lost > 0:
		v.Verdict = string(verdict.Lost)
	default:
		v.Verdict = string(verdict.OK)
	}
	for _, s := range a.Settings {
		r := AdviceRange{Flag: s.Flag, Unit: unitOf(s.Kind), Current: inUnit(s.Kind, s.Current), Safe: []ValueRange{},
			Searched: valueRange(s.Kind, s.Searched), IsSafe: s.IsSafe,
			CurrentText: s.CurrentText, SafeText: s.SafeText, MarginText: s.MarginText}
		for _, sp := range s.Safe {
			r.Safe = append(r.Safe, valueRange(s.Kind, sp))
		}
		if s.Margin != nil {
			m := inUnit(s.Kind, *s.Margin)
			r.Margin = &m
		}
		v.Settings = append(v.Settings, r)
	}
	for _, p := range a.Policies {
		v.Policies = append(v.Policies, AdvicePol{Policy: string(p.Policy), Releases: append([]string{}, p.Releases...), Lost: p.Lost, Stranded: p.Stranded, Stalled: p.Stalled, FixedBatchSize: p.FixedBatchSize})
	}
	return v
}

// PrintAdvice prints an advice.
func PrintAdvice(w io.Writer, v Advice, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	if v.Verdict == string(verdict.Incomplete) {
		fmt.Fprintf(nw, "%s/%s at your settings: never settles (stale batches delivered again and again): no verdict (model, simulated)\n", v.Policy, v.Commit)
	} else if v.Lost > 0 {
		fmt.Fprintf(nw, "%s/%s at your settings: LOST %d records (model, simulated)\n", v.Policy, v.Commit, v.Lost)
	} else {
		fmt.Fprintf(nw, "%s/%s at your settings: no records lost (model, simulated)\n", v.Policy, v.Commit)
	}
	g := render.Grid{Header: []string{"SETTING", "YOURS", "SAFE (OTHERS AS YOURS)", "MARGIN"},
		Align: []render.Align{render.Left, render.Right, render.Left, render.Left}}
	for _, s := range v.Settings {
		g.Rows = append(g.Rows, []string{s.Flag, s.CurrentText, s.SafeText, orDash(s.MarginText)})
	}
	if err := render.WriteGrid(w, g, pretty); err != nil {
		return err
	}
	var safe []string
	for _, p := range v.Policies {
		state := "no loss"
		switch {
		case p.Stalled:
			state = "never settles: no verdict"
		case p.Lost > 0:
			state = fmt.Sprintf("loses %d", p.Lost)
		case p.Stranded > 0:
			state = fmt.Sprintf("strands %d: never delivered, not committed past (the consumer stops delivering)", p.Stranded)
		default:
			safe = append(safe, p.Releases...)
		}
		if p.FixedBatchSize > 0 {
			state += fmt.Sprintf(" (batches of %d whatever --batch-size says: no js.consumer.max.batch.size)", p.FixedBatchSize)
		}
		fmt.Fprintf(nw, "%s: %s\n", releaseGroup(p), state)
	}
	if len(safe) > 0 {
		fmt.Fprintf(nw, "safe at your settings: %s\n", strings.Join(safe, ", "))
	} else {
		fmt.Fprintln(nw, "no modelled release or patch is safe at your settings: change a setting")
	}
	if len(v.NeverSettles) > 0 {
		fmt.Fprintf(nw, "never settled, counted unsafe: %s\n", strings.Join(v.NeverSettles, ", "))
	}
	if nm := notModelled(); nm != "" {
		fmt.Fprintf(nw, "known, not modelled (docs/releases.md): %s\n", nm)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// releaseGroup names a policy's row by its client versions: "1.8.0, 1.8.2, 1.9.0, 1.9.1,
// 1.10.0 (policy v1.10.0)".
func releaseGroup(p AdvicePol) string {
	if len(p.Releases) == 0 {
		return "policy " + p.Policy
	}
	return fmt.Sprintf("%s (policy %s)", strings.Join(p.Releases, ", "), p.Policy)
}

// notModelled lists the known versions the model cannot run, by rule group.
func notModelled() string {
	var out []string
	for _, g := range eachbatch.Rules() {
		if g.Policy == "" {
			out = append(out, g.Name)
		}
	}
	return strings.Join(out, ", ")
}
