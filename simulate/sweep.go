// Package simulate answers "am I safe with these settings?" on the model: it runs
// repro.Simulate (the eachBatch engine over the simulated log, on virtual time) over a
// sweep of one setting, finds where the loss starts, and searches the safe range of the
// settings an operator can change.
//
// Points run in parallel (GOMAXPROCS workers) and are placed by index, so the output of
// a parallel run is the same as a serial one. It knows nothing of flags beyond the names
// a sweep is given in; printing is the caller's business.
package simulate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/workload"
)

// MaxPoints bounds a sweep.
const MaxPoints = 100_000

// Kind is what a swept setting holds.
type Kind int

// Kinds of settings.
const (
	Duration Kind = iota
	Count
	Spread
)

// param is a setting a sweep can vary.
type param struct {
	kind  Kind
	min   float64 // smallest valid value (durations in ns)
	apply func(o *repro.Options, v Value)
}

var params = map[string]param{
	"max-poll-interval":    {Duration, 1, func(o *repro.Options, v Value) { o.MaxPollInterval = v.Duration }},
	"handler-delay":        {Duration, 0, func(o *repro.Options, v Value) { o.HandlerDelay = v.Duration }},
	"auto-commit-interval": {Duration, 1, func(o *repro.Options, v Value) { o.AutoCommitInterval = v.Duration }},
	"batch-size":           {Count, 1, func(o *repro.Options, v Value) { o.BatchSize = v.Count }},
	"concurrency":          {Count, 1, func(o *repro.Options, v Value) { o.Concurrency = v.Count }},
	"handler-parallel":     {Count, 1, func(o *repro.Options, v Value) { o.HandlerParallel = v.Count }},
	"transactions":         {Count, 0, func(o *repro.Options, v Value) { o.Workload.Transactions = v.Count }},
	"records": {Count, 1, func(o *repro.Options, v Value) {
		if len(o.Workload.Parts) == 1 {
			o.Workload.Parts = []workload.Part{{Partition: o.Workload.Parts[0].Partition, Records: v.Count}}
		}
	}},
	"spread": {Spread, 0, func(o *repro.Options, v Value) { o.Workload.Parts = v.Parts }},
}

// Sweepable lists the settings a sweep can vary.
func Sweepable() []string {
	out := make([]string, 0, len(params))
	for k := range params {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Value is one value of a swept setting.
type Value struct {
	Text     string
	Duration time.Duration
	Count    int
	Parts    []workload.Part
}

// Sweep is one setting and its values.
type Sweep struct {
	Flag   string
	Kind   Kind
	Values []Value
	// Progress, when set, is called after each finished point with how many are
	// finished (a terminal's progress line); it runs with the sweep's lock held.
	Progress func(finished, total int)
}

// ParseSweep parses FLAG=VALUES: a list (1m,5m,15m) or a range (1m..30m/1m, or 1..20
// for counts, step 1 by default). Errors name the flag.
func ParseSweep(s string) (Sweep, error) {
	flag, vals, ok := strings.Cut(s, "=")
	flag = strings.TrimPrefix(strings.TrimSpace(flag), "--")
	if !ok || flag == "" {
		return Sweep{}, fmt.Errorf("--sweep %q: want FLAG=VALUES, e.g. max-poll-interval=1m..30m/1m", s)
	}
	p, ok := params[flag]
	if !ok {
		return Sweep{}, fmt.Errorf("--sweep %s: cannot be swept (sweepable: %s)", flag, strings.Join(Sweepable(), ", "))
	}
	sw := Sweep{Flag: flag, Kind: p.kind}
	vals = strings.TrimSpace(vals)
	if vals == "" {
		return Sweep{}, fmt.Errorf("--sweep %s: no values", flag)
	}
	var err error
	if lo, rest, isRange := strings.Cut(vals, ".."); isRange && p.kind != Spread {
		sw.Values, err = parseRange(p, lo, rest)
	} else {
		for _, item := range strings.Split(vals, ",") {
			if p.kind == Spread {
				// A spread holds commas itself; list spreads with ";".
				break
			}
			var v Value
			if v, err = parseValue(p, strings.TrimSpace(item)); err != nil {
				break
			}
			sw.Values = append(sw.Values, v)
		}
		if p.kind == Spread {
			for _, item := range strings.Split(vals, ";") {
				var parts []workload.Part
				if parts, err = workload.ParseSpread(item); err != nil {
					break
				}
				sw.Values = append(sw.Values, Value{Text: workload.Spec{Parts: parts}.String(), Parts: parts})
			}
		}
	}
	if err != nil {
		return Sweep{}, fmt.Errorf("--sweep %s: %w", flag, err)
	}
	if len(sw.Values) == 0 {
		return Sweep{}, fmt.Errorf("--sweep %s: the range is empty", flag)
	}
	return sw, nil
}

func parseValue(p param, s string) (Value, error) {
	switch p.kind {
	case Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return Value{}, fmt.Errorf("%q is not a duration", s)
		}
		if float64(d) < p.min {
			return Value{}, fmt.Errorf("%s is below the smallest valid value", s)
		}
		return Value{Text: d.String(), Duration: d}, nil
	default:
		n, err := strconv.Atoi(s)
		if err != nil {
			return Value{}, fmt.Errorf("%q is not an integer", s)
		}
		if float64(n) < p.min {
			return Value{}, fmt.Errorf("%d is below %v", n, p.min)
		}
		return Value{Text: strconv.Itoa(n), Count: n}, nil
	}
}

func parseRange(p param, lo, rest string) ([]Value, error) {
	hi, step, hasStep := strings.Cut(rest, "/")
	a, err := parseValue(p, strings.TrimSpace(lo))
	if err != nil {
		return nil, err
	}
	b, err := parseValue(p, strings.TrimSpace(hi))
	if err != nil {
		return nil, err
	}
	var from, to, by float64
	switch p.kind {
	case Duration:
		if !hasStep {
			return nil, errors.New("a duration range needs a step: FROM..TO/STEP")
		}
		d, err := time.ParseDuration(strings.TrimSpace(step))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("step %q: want a duration > 0", step)
		}
		from, to, by = float64(a.Duration), float64(b.Duration), float64(d)
	default:
		by = 1
		if hasStep {
			n, err := strconv.Atoi(strings.TrimSpace(step))
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("step %q: want an integer > 0", step)
			}
			by = float64(n)
		}
		from, to = float64(a.Count), float64(b.Count)
	}
	if to < from {
		return nil, fmt.Errorf("the range is empty (%s is below %s)", strings.TrimSpace(hi), strings.TrimSpace(lo))
	}
	n := int((to-from)/by) + 1
	if n > MaxPoints {
		return nil, fmt.Errorf("%d points: at most %d", n, MaxPoints)
	}
	out := make([]Value, 0, n)
	for i := 0; i < n; i++ {
		x := from + float64(i)*by
		if p.kind == Duration {
			d := time.Duration(x)
			out = append(out, Value{Text: d.String(), Duration: d})
		} else {
			out = append(out, Value{Text: strconv.Itoa(int(x)), Count: int(x)})
		}
	}
	return out, nil
}

// Case is one policy with one commit mode.
type Case struct {
	Policy eachbatch.Policy
	Commit repro.CommitMode
}

// Cell is one case at one value.
type Cell struct {
	Case
	Lost           int // records lost
	LostPartitions int
	Stranded       int
	// Stalled: a phase never settled (for example batches running past twice
	// max.poll.interval become stale and are delivered again, forever); Lost and Stranded
	// are as of the phase limit.
	Stalled bool
	// Verdict is the judge's verdict of the point's run (repro.Result.Verdict): a
	// stalled point is INCOMPLETE unless a committed offset already passed undelivered
	// records (LOST).
	Verdict verdict.Verdict
	Err     error
}

// Row is one value of the sweep.
type Row struct {
	Value Value
	Cells []Cell // in the order of the cases
}

// Result is a sweep.
type Result struct {
	Sweep       Sweep
	Cases       []Case
	Rows        []Row // the finished rows, in sweep order (all of them unless Interrupted)
	Boundaries  []Boundary
	Interrupted bool
}

// Verdict is the sweep's verdict: the worst of its points' (verdict.Worse), so a sweep
// none of whose points settled is INCOMPLETE, never OK. A sweep without rows (cut short
// before any finished) is INCOMPLETE.
func (r *Result) Verdict() verdict.Verdict {
	if len(r.Rows) == 0 {
		return verdict.Incomplete
	}
	worst := verdict.OK
	for _, row := range r.Rows {
		for _, c := range row.Cells {
			worst = verdict.Worse(worst, c.Verdict)
		}
	}
	return worst
}

// Stalled counts the points (value and case) that never settled.
func (r *Result) Stalled() (stalled, points int) {
	for _, row := range r.Rows {
		for _, c := range row.Cells {
			points++
			if c.Stalled {
				stalled++
			}
		}
	}
	return stalled, points
}

// Boundary says where a case starts or stops losing records.
type Boundary struct {
	Case
	Loses Loses
	// Edge is the first value at which the outcome switches, found by bisection on the
	// model (to 1 s, or 1), where Loses is Below or From; nil otherwise.
	Edge *Value
	Text string // the same in words
}

// Loses is where over a sweep a case loses records.
type Loses string

// Where a case loses records.
const (
	Nowhere    Loses = "nowhere"    // at no value swept that settled
	Everywhere Loses = "everywhere" // at every value swept
	Below      Loses = "below"      // at values below Edge
	From       Loses = "from"       // at Edge and above
	Some       Loses = "some"       // at some values, with no single edge (the rows say which)
	Unsettled  Loses = "unsettled"  // no point settled: no verdict
)

// Run runs the sweep: every value for every case, in parallel on workers goroutines
// (0: GOMAXPROCS). On ctx's end it returns the rows finished before it, in order.
func Run(ctx context.Context, base repro.Options, cases []Case, sw Sweep, workers int) (*Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := params[sw.Flag]
	res := &Result{Sweep: sw, Cases: cases}
	rows := make([]Row, len(sw.Values))
	done := make([]bool, len(sw.Values))
	type job struct{ i int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	finished := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				v := sw.Values[j.i]
				row := Row{Value: v}
				for _, c := range cases {
					o := base
					o.Trace, o.Progress = nil, nil
					o.Policy, o.Commit = c.Policy, c.Commit
					p.apply(&o, v)
					row.Cells = append(row.Cells, simulateCell(ctx, o, c))
				}
				mu.Lock()
				if ctx.Err() == nil {
					rows[j.i], done[j.i] = row, true
					finished++
					if sw.Progress != nil {
						sw.Progress(finished, len(sw.Values))
					}
				}
				for _, c := range row.Cells {
					if c.Err != nil && firstErr == nil && ctx.Err() == nil {
						firstErr = fmt.Errorf("--sweep %s=%s: %w", sw.Flag, v.Text, c.Err)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range sw.Values {
		select {
		case jobs <- job{i}:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for i := range rows {
		if !done[i] {
			res.Interrupted = true
			break
		}
		res.Rows = append(res.Rows, rows[i])
	}
	if firstErr != nil {
		return res, firstErr
	}
	if res.Interrupted {
		return res, ctx.Err()
	}
	for ci, c := range cases {
		res.Boundaries = append(res.Boundaries, boundary(ctx, base, c, sw, res.Rows, ci))
	}
	return res, nil
}

func simulateCell(ctx context.Context, o repro.Options, c Case) Cell {
	cell := Cell{Case: c}
	r, err := repro.Simulate(ctx, o)
	switch {
	case errors.Is(err, repro.ErrPhaseTimeout) && r != nil:
		cell.Stalled = true
	case err != nil:
		cell.Err, cell.Verdict = err, verdict.Error
		return cell
	}
	cell.Verdict = r.Verdict
	cell.Lost = r.Lost()
	for _, p := range r.Partitions {
		if p.LostCount() > 0 {
			cell.LostPartitions++
		}
		cell.Stranded += p.StrandedCount()
	}
	return cell
}

// lost reports whether the case loses records at v (a fresh simulation, for bisection).
func lost(ctx context.Context, base repro.Options, c Case, flag string, v Value) (bool, error) {
	o := base
	o.Trace, o.Progress = nil, nil
	o.Policy, o.Commit = c.Policy, c.Commit
	params[flag].apply(&o, v)
	cell := simulateCell(ctx, o, c)
	return cell.Lost > 0, cell.Err
}

// boundary states, in words, where the case loses records over the sweep; where the
// loss switches once between two neighbouring values of a duration or count, the switch
// is found exactly by bisection on the model (to 1 s, or 1).
func boundary(ctx context.Context, base repro.Options, c Case, sw Sweep, rows []Row, ci int) Boundary {
	name := sw.Flag
	var stalled []string
	for _, r := range rows {
		if r.Cells[ci].Stalled {
			stalled = append(stalled, r.Value.Text)
		}
	}
	if len(stalled) == len(rows) && len(rows) > 0 {
		return Boundary{Case: c, Loses: Unsettled,
			Text: fmt.Sprintf("%s never settles (stale batches delivered again and again) at any %s swept: no verdict (%s)", c.Policy, name, verdict.Incomplete)}
	}
	b := lossBoundary(ctx, base, c, sw, rows, ci, name)
	if len(stalled) > 0 {
		b.Text = fmt.Sprintf("%s never settles (stale batches delivered again and again) at %s %s; %s", c.Policy, name, shortList(stalled), b.Text)
	}
	if fixed := c.Policy.FixedBatchSize(base.Handler); name == "batch-size" && fixed > 0 {
		b.Text += fmt.Sprintf(" (not a setting of %s: every row ran batches of %d, js.consumer.max.batch.size came with 1.7.0)", c.Policy, fixed)
	}
	return b
}

func lossBoundary(ctx context.Context, base repro.Options, c Case, sw Sweep, rows []Row, ci int, name string) Boundary {
	b := Boundary{Case: c}
	var losing []int
	stalled := 0
	for i, r := range rows {
		if r.Cells[ci].Lost > 0 {
			losing = append(losing, i)
		}
		if r.Cells[ci].Stalled {
			stalled++
		}
	}
	switch {
	case len(losing) == 0 && stalled > 0:
		b.Loses, b.Text = Nowhere, fmt.Sprintf("%s loses no records at the other %d of %d values of %s swept", c.Policy, len(rows)-stalled, len(rows), name)
		return b
	case len(losing) == 0:
		b.Loses, b.Text = Nowhere, fmt.Sprintf("%s loses no records at any %s swept", c.Policy, name)
		return b
	case len(losing) == len(rows):
		b.Loses, b.Text = Everywhere, fmt.Sprintf("%s loses records at every %s swept", c.Policy, name)
		return b
	}
	switches := 0
	at := -1
	for i := 1; i < len(rows); i++ {
		if (rows[i].Cells[ci].Lost > 0) != (rows[i-1].Cells[ci].Lost > 0) {
			switches++
			at = i
		}
	}
	if switches != 1 || sw.Kind == Spread {
		var vals []string
		for _, i := range losing {
			vals = append(vals, rows[i].Value.Text)
		}
		b.Loses, b.Text = Some, fmt.Sprintf("%s loses records at %s %s (%d of %d values)", c.Policy, name, shortList(vals), len(losing), len(rows))
		return b
	}
	lo, hi := rows[at-1].Value, rows[at].Value
	lossBelow := rows[at-1].Cells[ci].Lost > 0
	edge := bisect(ctx, base, c, sw, lo, hi, lossBelow)
	b.Edge = &edge
	if lossBelow {
		b.Loses, b.Text = Below, fmt.Sprintf("%s loses records when %s < %s at these settings", c.Policy, name, edge.Text)
		return b
	}
	b.Loses, b.Text = From, fmt.Sprintf("%s loses records when %s >= %s at these settings", c.Policy, name, edge.Text)
	return b
}

// bisect finds the first value in (lo, hi] whose outcome is hi's.
func bisect(ctx context.Context, base repro.Options, c Case, sw Sweep, lo, hi Value, lossBelow bool) Value {
	unit := 1.0
	get := func(v Value) float64 { return float64(v.Count) }
	mk := func(x float64) Value { n := int(x); return Value{Text: strconv.Itoa(n), Count: n} }
	if sw.Kind == Duration {
		unit = float64(time.Second)
		get = func(v Value) float64 { return float64(v.Duration) }
		mk = func(x float64) Value { d := time.Duration(x); return Value{Text: d.String(), Duration: d} }
	}
	a, b := get(lo), get(hi) // outcome(a) = lossBelow, outcome(b) = !lossBelow
	for b-a > unit {
		m := a + float64(int64((b-a)/unit/2))*unit
		if m <= a {
			m = a + unit
		}
		l, err := lost(ctx, base, c, sw.Flag, mk(m))
		if err != nil {
			return hi
		}
		if l == lossBelow {
			a = m
		} else {
			b = m
		}
	}
	return mk(b)
}

// shortList joins values, the first 8 and a count of the rest.
func shortList(vals []string) string {
	if len(vals) <= 8 {
		return strings.Join(vals, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(vals[:8], ", "), len(vals)-8)
}
