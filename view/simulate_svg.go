package view

// This file draws `simulate --sweep --svg`: records lost against the swept value, one
// line per policy and commit mode. It draws with trace_svg.go's primitives (esc, the
// text width estimate, the 1-2-5 and clock steps, the legend's rows and swatches) and
// embeds no font, so that kstranded needs no plotting library (issue 22, item 7).

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The chart's layout, in px (the viewBox's units): its width, its padding on every side
// (nothing is drawn in it, so that no viewer crops a glyph), the plot's height.
const (
	sweepWidth     = 800.0
	sweepPad       = 10.0
	sweepPlotH     = 300.0
	sweepTitleSize = 15.0
	// The ascent and descent of DejaVu Sans, in em: how far a glyph reaches from its
	// baseline.
	emAscent  = 0.93
	emDescent = 0.24
)

// sweepColors tells the policies apart, sweepDashes the commit modes.
var (
	sweepColors = []string{"#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#5d4037", "#455a64"}
	sweepDashes = []string{"", "6,3", "2,3"}
)

// chartAxis is a linear axis from lo to hi, both multiples of step, with a tick at each.
type chartAxis struct {
	lo, hi, step float64
	label        func(float64) string
}

func (a chartAxis) ticks() []float64 {
	var ts []float64
	for i := 0; ; i++ {
		v := a.lo + float64(i)*a.step
		if v > a.hi+a.step/1e6 {
			return ts
		}
		ts = append(ts, v)
	}
}

// at maps v onto the pixels from p0 (lo) to p1 (hi).
func (a chartAxis) at(v, p0, p1 float64) float64 {
	return p0 + (p1-p0)*(v-a.lo)/(a.hi-a.lo)
}

// widest is the widest tick label's width.
func (a chartAxis) widest() float64 {
	w := 0.0
	for _, t := range a.ticks() {
		w = math.Max(w, textW(a.label(t)))
	}
	return w
}

// niceAxis covers lo..hi with about n steps of step(raw), widened to whole steps; a
// single value is shown with zero below it and as much above.
func niceAxis(lo, hi float64, n int, step func(raw float64) float64, label func(float64) string) chartAxis {
	if hi <= lo {
		lo, hi = 0, math.Max(2*hi, 1)
	}
	s := step((hi - lo) / float64(n))
	return chartAxis{lo: math.Floor(lo/s) * s, hi: math.Ceil(hi/s) * s, step: s, label: label}
}

// countLabel prints a whole number for an axis: 950, 5000, 25k, 1.5M.
func countLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// sweepXAxis is the swept value's axis, in the sweep's unit: a duration's ticks fall on
// clock steps (1s, 15s, 1m, 5m, 30m, 1h) and read as durations, a count's on 1-2-5 steps.
// It takes fewer ticks until their labels, 10 px apart, fit the plot's width.
func sweepXAxis(v Sweep, width float64) chartAxis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range v.Rows {
		lo, hi = math.Min(lo, float64(r.Value)), math.Max(hi, float64(r.Value))
	}
	if len(v.Rows) == 0 {
		lo, hi = 0, 0
	}
	step, label := nice125, countLabel
	if v.Unit == UnitMs {
		step = func(raw float64) float64 {
			return float64(niceDur(time.Duration(math.Ceil(raw)) * time.Millisecond).Milliseconds())
		}
		label = func(ms float64) string { return shortDur(time.Duration(ms) * time.Millisecond) }
	}
	var a chartAxis
	for n := 6; n >= 1; n-- {
		a = niceAxis(lo, hi, n, step, label)
		if a.step/(a.hi-a.lo)*width >= a.widest()+10 {
			break
		}
	}
	return a
}

// sweepSeries is how one case's line is drawn and named.
type sweepSeries struct {
	name, color, dash string
}

// SweepSVG draws a sweep's records lost against the swept value, one line per policy and
// commit mode (a color per policy, dashes per commit mode), with the legend below the
// plot; a point that never settled is drawn hollow.
func SweepSVG(w io.Writer, v Sweep) error {
	// the cases, from the first row: every row has the same
	var series []sweepSeries
	policies, commits := map[string]int{}, map[string]int{}
	if len(v.Rows) > 0 {
		for _, c := range v.Rows[0].Cells {
			if _, ok := policies[c.Policy]; !ok {
				policies[c.Policy] = len(policies)
			}
			if _, ok := commits[c.Commit]; !ok {
				commits[c.Commit] = len(commits)
			}
			series = append(series, sweepSeries{name: c.Policy + "/" + c.Commit,
				color: sweepColors[policies[c.Policy]%len(sweepColors)], dash: sweepDashes[commits[c.Commit]%len(sweepDashes)]})
		}
	}
	maxLost, unsettled := 0, false
	for _, r := range v.Rows {
		for _, c := range r.Cells {
			maxLost = max(maxLost, c.Lost)
			unsettled = unsettled || c.Stalled
		}
	}

	// the frame from the outside in: the title, the y axis's title and tick labels on
	// the left, the last x tick label's half on the right
	y := chartAxis{lo: 0, hi: 1, step: 1, label: countLabel}
	if maxLost > 0 {
		y = niceAxis(0, float64(maxLost), 5, nice125, countLabel)
	}
	yTitleX := sweepPad + emAscent*fontSize + 1 // the rotated title's baseline
	left := yTitleX + emDescent*fontSize + 8 + y.widest() + 6
	top := sweepPad + emAscent*sweepTitleSize + 2 + 22
	right := sweepWidth - sweepPad - 4
	x := sweepXAxis(v, right-left)
	right -= x.widest() / 2
	x = sweepXAxis(v, right-left)
	bottom := top + sweepPlotH

	var b strings.Builder
	title := "kstranded simulate: records lost by " + v.Flag
	if v.Interrupted {
		title += fmt.Sprintf(" (interrupted: %d values finished)", len(v.Rows))
	}
	size := sweepTitleSize                                             // less for a title too long for the width
	if tw := textWAt(title, size) * 1.08; tw > sweepWidth-2*sweepPad { // bold is wider
		size = math.Floor(size*(sweepWidth-2*sweepPad)/tw*10) / 10
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%g" font-weight="bold">%s</text>`+"\n", sweepPad, sweepPad+emAscent*sweepTitleSize+2, size, esc(title))

	// the plot's frame, the grid and the ticks
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#999"/>`+"\n", left, top, right-left, bottom-top)
	for _, t := range y.ticks() {
		py := y.at(t, bottom, top)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, py, right, py)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/><text x="%.1f" y="%.1f" text-anchor="end" fill="#333">%s</text>`+"\n",
			left-4, py, left, py, left-6, py+4, esc(y.label(t)))
	}
	for _, t := range x.ticks() {
		px := x.at(t, left, right)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", px, top, px, bottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/><text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`+"\n",
			px, bottom, px, bottom+5, px, bottom+17, esc(x.label(t)))
	}
	// the axes' titles
	xTitle := v.Flag
	if v.Unit == UnitRecords {
		xTitle = "workload records (" + v.Flag + ")"
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`+"\n", (left+right)/2, bottom+36, esc(xTitle))
	mid := (top + bottom) / 2
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333" transform="rotate(-90 %.1f %.1f)">records lost</text>`+"\n", yTitleX, mid, yTitleX, mid)
	if len(v.Rows) == 0 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">no value of the sweep finished</text>`+"\n", (left+right)/2, mid)
	}

	// the lines and their points
	for ci, s := range series {
		var pts []string
		for _, r := range v.Rows {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x.at(float64(r.Value), left, right), y.at(float64(r.Cells[ci].Lost), bottom, top)))
		}
		dash := ""
		if s.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.dash)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), s.color, dash)
		for _, r := range v.Rows {
			c := r.Cells[ci]
			px, py := x.at(float64(r.Value), left, right), y.at(float64(c.Lost), bottom, top)
			what := fmt.Sprintf("%s at %s: %d records lost", s.name, x.label(float64(r.Value)), c.Lost)
			if c.Stalled {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="%s" stroke-width="1.5"><title>%s so far, never settled</title></circle>`+"\n", px, py, s.color, esc(what))
				continue
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s</title></circle>`+"\n", px, py, s.color, esc(what))
		}
	}

	// the legend, in rows under the plot: outside it, so it hides no line
	var items []legendItem
	for _, s := range series {
		items = append(items, legendItem{swatch: "series:" + s.color + ":" + s.dash, text: s.name})
	}
	if unsettled {
		items = append(items, legendItem{swatch: "unsettled", text: "never settled: lost so far"})
	}
	last := legendRows(&b, items, left, right, bottom+58)
	height := math.Ceil(last + 8 + sweepPad)

	_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="%s" font-size="%.0f">`+"\n"+
		`<rect width="100%%" height="100%%" fill="white"/>`+"\n%s</svg>\n",
		sweepWidth, height, sweepWidth, height, svgFonts, fontSize, b.String())
	return err
}
