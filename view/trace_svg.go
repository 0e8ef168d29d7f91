package view

// This file draws trace parse's and repro's --svg picture. It is meant to explain a loss to
// someone who reads only the picture (issue 15 §2): the moment the committed offset passes
// records that were fetched and never delivered is marked and named; the window from the
// last fetch to the cache expiry is drawn and labelled with max.poll.interval; both axes
// have titles; time is the trace's own (a kstranded repro runs its scenario scaled by
// time_scale) with the full-scale figure beside it; the legend lists every mark drawn;
// labels are laid out in rows above each lane so that none overlaps another; and idle
// stretches between runs are cut out of the time axis (a broken axis, marked).

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/trace"
)

const (
	svgWidth   = 1200.0
	svgLeft    = 90.0 // the offset axis and its title
	svgRight   = 30.0
	plotH      = 150.0 // a lane's plot
	rowH       = 15.0  // a row of labels above a lane
	breakW     = 44.0  // a cut-out idle stretch on the time axis
	fontSize   = 11.0
	charW      = 0.62 * fontSize // DejaVu Sans (rsvg's default sans) averages about 0.6 em
	laneTitleH = 20.0
	laneGap    = 26.0
	// svgFonts names a font every viewer has, at worst the generic sans-serif: the
	// pictures embed none.
	svgFonts = "DejaVu Sans, Verdana, sans-serif"
)

// textW estimates the width of a label at the default font size.
func textW(s string) float64 { return textWAt(s, fontSize) }

// textWAt estimates the width of a text at a font size.
func textWAt(s string, size float64) float64 {
	return float64(len([]rune(s))) * charW / fontSize * size
}

// timeAxis maps trace time to x across segments, with the idle stretches between them cut.
type timeAxis struct {
	segs  []axisSeg
	start time.Time
	scale float64 // trace time / full-scale time; 1 when the trace is not scaled
}

type axisSeg struct {
	t0, t1 time.Time
	x0, x1 float64
}

// newTimeAxis cuts every gap between consecutive event times longer than a sixth of the
// whole span (at most four, the longest), so that a ten-minute pause between two runs does
// not squeeze the runs into slivers. A gap inside a kept stretch (the window from the last
// fetch to an expiry: its length is the point) is not cut.
func newTimeAxis(times []time.Time, scale float64, keep [][2]time.Time) timeAxis {
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	t0, t1 := times[0], times[len(times)-1]
	span := t1.Sub(t0)
	if span <= 0 {
		span, t1 = time.Second, t0.Add(time.Second)
	}
	type gap struct{ a, b time.Time }
	var gaps []gap
	for i := 1; i < len(times); i++ {
		kept := false
		for _, k := range keep {
			if times[i-1].Before(k[1]) && times[i].After(k[0]) {
				kept = true
			}
		}
		if d := times[i].Sub(times[i-1]); d > span/6 && !kept {
			gaps = append(gaps, gap{times[i-1], times[i]})
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].b.Sub(gaps[i].a) > gaps[j].b.Sub(gaps[j].a) })
	if len(gaps) > 4 {
		gaps = gaps[:4]
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].a.Before(gaps[j].a) })
	var segs []axisSeg
	from := t0
	for _, g := range gaps {
		segs = append(segs, axisSeg{t0: from, t1: g.a})
		from = g.b
	}
	segs = append(segs, axisSeg{t0: from, t1: t1})
	var live time.Duration
	for _, s := range segs {
		live += s.t1.Sub(s.t0)
	}
	// a segment of a single instant still gets some room
	minW := 40.0
	avail := svgWidth - svgLeft - svgRight - breakW*float64(len(segs)-1) - minW*float64(len(segs))
	x := svgLeft
	for i := range segs {
		w := minW
		if live > 0 {
			w += avail * float64(segs[i].t1.Sub(segs[i].t0)) / float64(live)
		}
		segs[i].x0, segs[i].x1 = x, x+w
		x += w + breakW
	}
	if scale <= 0 {
		scale = 1
	}
	return timeAxis{segs: segs, start: t0, scale: scale}
}

func (a timeAxis) x(t time.Time) float64 {
	if t.IsZero() {
		t = a.start
	}
	for i, s := range a.segs {
		if t.After(s.t1) {
			if i+1 < len(a.segs) && t.Before(a.segs[i+1].t0) { // inside a cut: its middle
				return s.x1 + breakW/2
			}
			continue
		}
		if t.Before(s.t0) {
			return s.x0
		}
		d := s.t1.Sub(s.t0)
		if d <= 0 {
			return (s.x0 + s.x1) / 2
		}
		return s.x0 + (s.x1-s.x0)*float64(t.Sub(s.t0))/float64(d)
	}
	return a.segs[len(a.segs)-1].x1
}

func (a timeAxis) end() float64 { return a.segs[len(a.segs)-1].x1 }

// full is the full-scale duration of a trace duration.
func (a timeAxis) full(d time.Duration) time.Duration {
	return time.Duration(float64(d) / a.scale)
}

// shortDur prints a duration for an axis: 0s, 450ms, 9.3s, 4m40s, 1h2m.
func shortDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64) + "s"
	case d < time.Hour:
		d = d.Round(time.Second)
		m, s := d/time.Minute, (d%time.Minute)/time.Second
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%ds", m, s)
	default:
		d = d.Round(time.Minute)
		h, m := d/time.Hour, (d%time.Hour)/time.Minute
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
}

// niceStep is a tick step of 1, 2 or 5 times a power of ten (in milliseconds) near raw.
func niceStep(raw time.Duration) time.Duration {
	return time.Duration(nice125(float64(raw.Milliseconds()))) * time.Millisecond
}

// nice125 is the least of 1, 2 or 5 times a power of ten that is at least x, and at
// least 1: a tick step for whole numbers.
func nice125(x float64) float64 {
	if x < 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// niceDur is a clock-friendly tick step at least raw: 1-2-5 below a second, then 1s, 2s,
// 5s, 10s, 15s, 30s, 1m, 2m, 5m, 10m, 15m, 30m, 1h, ...
func niceDur(raw time.Duration) time.Duration {
	if raw < time.Second {
		return niceStep(raw)
	}
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour} {
		if d >= raw {
			return d
		}
	}
	return raw.Round(time.Hour) + time.Hour
}

// label is a text laid out in a lane's rows of labels, with a leader to its mark.
type label struct {
	x     float64 // the mark's x
	text  string
	color string
	bold  bool
}

// layoutRows gives each label (sorted by x) the first row where it overlaps nothing; a
// label is placed from its mark's x rightwards, or leftwards when it would leave the plot.
func layoutRows(ls []label, right float64) (rows []int, lefts []float64, n int) {
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].x < ls[j].x })
	var ends [][][2]float64 // per row, the occupied spans
	for _, l := range ls {
		w := textW(l.text)
		left := l.x - 3
		if left+w > right {
			left = right - w
		}
		row := 0
		for ; row < len(ends); row++ {
			free := true
			for _, sp := range ends[row] {
				if left < sp[1]+8 && left+w+8 > sp[0] {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		if row == len(ends) {
			ends = append(ends, nil)
		}
		ends[row] = append(ends[row], [2]float64{left, left + w})
		rows, lefts = append(rows, row), append(lefts, left)
	}
	return rows, lefts, len(ends)
}

// legendItem is one entry of the legend: a swatch and what it means.
type legendItem struct{ key, swatch, text string }

// markStyle is how an event kind is drawn as a vertical mark, and what the legend says.
var markStyle = map[trace.Kind]struct{ color, legend string }{
	trace.KindExpiry:     {"#b8860b", "cache expiry"},
	trace.KindClear:      {"#d32f2f", "cache clear (records discarded)"},
	trace.KindRewindSkip: {"#8e24aa", "rewind skipped after a clear"},
	trace.KindRewind:     {"#ef6c00", "rewind"},
	trace.KindSeek:       {"#ef6c00", "seek"},
	trace.KindAssign:     {"#3949ab", "assign / revoke / max.poll exceeded (rebalance)"},
	trace.KindRevoke:     {"#3949ab", "assign / revoke / max.poll exceeded (rebalance)"},
	trace.KindMaxPoll:    {"#3949ab", "assign / revoke / max.poll exceeded (rebalance)"},
	trace.KindPause:      {"#888888", "pause / resume"},
	trace.KindResume:     {"#888888", "pause / resume"},
	trace.KindCommitFail: {"#c62828", "commit failed"},
}

func markText(e trace.Entry) string {
	switch e.Kind {
	case trace.KindExpiry:
		return "cache expired"
	case trace.KindClear:
		if n := kpart.RangeSet(e.Ranges).Count(); n > 0 {
			return fmt.Sprintf("clear: %d discarded", n)
		}
		return "cache clear"
	case trace.KindRewindSkip:
		return "no rewind"
	case trace.KindMaxPoll:
		return "max.poll exceeded"
	case trace.KindCommitFail:
		return "commit failed"
	case trace.KindSeek, trace.KindRewind:
		if e.Offset >= 0 {
			return fmt.Sprintf("%s to %d", e.Kind, e.Offset)
		}
	}
	return e.Kind.String()
}

// expiryWindow is the stretch from the last fetch to a cache expiry.
type expiryWindow struct {
	from, at time.Time
	atLeast  bool
}

// expiryWindows takes, for each expiry, the time since the last fetch that the
// CACHE-EXPIRY finding measured (the finding is matched by its evidence line).
func expiryWindows(r *trace.Report) map[trace.Ref]expiryWindow {
	ws := map[trace.Ref]expiryWindow{}
	byRef := map[trace.Ref]trace.Finding{}
	for _, f := range r.Findings {
		if f.Rule == trace.RuleCacheExpiry && len(f.Evidence) > 0 {
			byRef[f.Evidence[0].Ref] = f
		}
	}
	for _, e := range r.Timeline {
		if e.Kind != trace.KindExpiry || e.Time.IsZero() {
			continue
		}
		f := byRef[e.Ref]
		ms, err := strconv.ParseInt(f.Facts["since_fetch_ms"], 10, 64)
		atLeast := false
		if err != nil {
			if ms, err = strconv.ParseInt(f.Facts["since_fetch_at_least_ms"], 10, 64); err != nil {
				continue
			}
			atLeast = true
		}
		ws[e.Ref] = expiryWindow{from: e.Time.Add(-time.Duration(ms) * time.Millisecond), at: e.Time, atLeast: atLeast}
	}
	return ws
}

// WriteTraceSVG draws the report: one lane per partition (only one with only), time across,
// the offset up.
func WriteTraceSVG(w io.Writer, r *trace.Report, only *PartitionFilter) error {
	var parts []trace.PartitionSummary
	for _, p := range r.Partitions {
		pp := p.Partition
		if only == nil || only.Matches(p.Topic, &pp) {
			parts = append(parts, p)
		}
	}
	if len(parts) > 40 {
		parts = parts[:40]
	}
	windows := expiryWindows(r)
	var times []time.Time
	for _, t := range []time.Time{r.Start, r.End} {
		if !t.IsZero() {
			times = append(times, t)
		}
	}
	for _, e := range r.Timeline {
		if !e.Time.IsZero() {
			times = append(times, e.Time)
		}
	}
	var keep [][2]time.Time
	for _, win := range windows {
		times = append(times, win.from)
		keep = append(keep, [2]time.Time{win.from, win.at})
	}
	if len(times) == 0 {
		times = []time.Time{{}}
	}
	ax := newTimeAxis(times, r.TimeScale, keep)
	scaled := ax.scale != 1

	used := map[string]legendItem{}
	use := func(it legendItem) { used[it.key] = it }

	var body strings.Builder
	y := 0.0 // lanes are drawn from y 0 and moved under the header afterwards
	for _, p := range parts {
		y = drawLane(&body, r, p, ax, windows, y, use) + laneGap
	}
	if len(parts) == 0 {
		fmt.Fprintf(&body, `<text x="%.0f" y="20" fill="#555">no partition with records in these inputs</text>`+"\n", svgLeft)
		y = 40
	}

	// header: title, what the picture shows, the legend
	var head strings.Builder
	var names []string
	for _, f := range r.Files {
		names = append(names, fmt.Sprintf("%s (%s)", f.Name, f.Format))
	}
	fmt.Fprintf(&head, `<text x="10" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", esc(svgTitle(r, parts)))
	sub := strings.Join(names, ", ")
	if scaled {
		sub += fmt.Sprintf(" · a scaled run: time_scale %s, 1s here is %s at full scale", strconv.FormatFloat(ax.scale, 'g', -1, 64), shortDur(ax.full(time.Second)))
	}
	fmt.Fprintf(&head, `<text x="10" y="40" fill="#555">%s</text>`+"\n", esc(sub))
	_, legendEnd := writeLegend(&head, used, 56)
	top := legendEnd + 14

	// time axis
	var foot strings.Builder
	ay := y + 6
	drawTimeAxis(&foot, ax, ay, scaled)
	height := ay + 70
	if scaled {
		height += 14
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="%s" font-size="%.0f">`+"\n",
		svgWidth, height+top, svgWidth, height+top, svgFonts, fontSize)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	b.WriteString(head.String())
	fmt.Fprintf(&b, `<g transform="translate(0 %.0f)">`+"\n", top)
	b.WriteString(body.String())
	b.WriteString(foot.String())
	b.WriteString("</g>\n</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// svgTitle says the outcome in the picture's first line.
func svgTitle(r *trace.Report, parts []trace.PartitionSummary) string {
	for _, p := range parts {
		if n := p.Lost.Count(); n > 0 {
			return fmt.Sprintf("%s: %d records (%s) of %s were fetched, never delivered, and committed past", p.Verdict, n, p.Lost, partLabel(p))
		}
	}
	for _, p := range parts {
		if n := p.Stranded.Count(); n > 0 {
			return fmt.Sprintf("%s: %d records (%s) of %s were dropped undelivered, not yet committed past", p.Verdict, n, p.Stranded, partLabel(p))
		}
	}
	return fmt.Sprintf("%s: kstranded trace parse", r.Verdict)
}

func partLabel(p trace.PartitionSummary) string {
	if p.Topic == "" {
		return fmt.Sprintf("partition %d", p.Partition)
	}
	return fmt.Sprintf("%s/%d", p.Topic, p.Partition)
}

func sameLane(e trace.Entry, p trace.PartitionSummary) bool {
	return e.Partition == p.Partition && (e.Topic == p.Topic || e.Topic == "" || p.Topic == "")
}

// drawLane draws one partition from y0 and returns where it ends.
func drawLane(b *strings.Builder, r *trace.Report, p trace.PartitionSummary, ax timeAxis, windows map[trace.Ref]expiryWindow, y0 float64, use func(legendItem)) float64 {
	left, right := svgLeft, ax.end()
	// offsets shown: from the first fetched (or the committed, if lower) to past the last
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, s := range []kpart.RangeSet{p.Fetched, p.Delivered} {
		if len(s) > 0 {
			lo, hi = min(lo, s[0].First), max(hi, s[len(s)-1].Last+1)
		}
	}
	for _, v := range []int64{p.Committed, p.Position} {
		if v >= 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo == math.MaxInt64 {
		lo = 0
	}
	if hi <= lo {
		hi = lo + 1
	}

	// marks and their labels, collected first: the labels' rows decide where the plot starts
	var labels []label
	type vmark struct {
		x     float64
		color string
		title string
		width float64
	}
	var marks []vmark
	seen := map[string]bool{}
	var commitPass *trace.Entry
	for i := range r.Timeline {
		e := r.Timeline[i]
		lane := sameLane(e, p)
		if !lane && e.Partition != trace.AllPartitions {
			continue
		}
		if e.Kind == trace.KindCommit && lane && commitPass == nil {
			for _, l := range p.Lost {
				if e.Offset > l.First {
					commitPass = &r.Timeline[i]
					break
				}
			}
		}
		st, ok := markStyle[e.Kind]
		if !ok {
			continue
		}
		x := ax.x(e.Time)
		text := markText(e)
		key := fmt.Sprintf("%s@%.0f", text, x)
		if seen[key] { // the same event at the same moment (per line, per partition)
			continue
		}
		seen[key] = true
		labels = append(labels, label{x: x, text: text, color: st.color})
		marks = append(marks, vmark{x, st.color, fmt.Sprintf("%s %s (%s)", Clock(e.Time), e.Detail, e.Ref), 1})
		use(legendItem{"m-" + st.legend, "mark:" + st.color, st.legend})
	}
	maxPoll := r.MaxPollInterval
	var wins []expiryWindow
	for _, e := range r.Timeline {
		if e.Kind == trace.KindExpiry && (sameLane(e, p) || e.Partition == trace.AllPartitions) {
			if win, ok := windows[e.Ref]; ok {
				wins = append(wins, win)
				d := win.at.Sub(win.from)
				text := "last fetch → expiry: "
				if win.atLeast {
					text += "at least "
				}
				text += shortDur(d)
				if ax.scale != 1 {
					text += " (" + shortDur(ax.full(d)) + " at full scale)"
				}
				if maxPoll > 0 {
					text += ", max.poll.interval " + shortDur(maxPoll)
				}
				labels = append(labels, label{x: ax.x(win.from), text: text, color: "#8d6e00"})
				use(legendItem{"window", "band:#f9a825", "last fetch → cache expiry (labelled with max.poll.interval)"})
			}
		}
	}
	if commitPass != nil {
		var lost kpart.RangeSet
		for _, l := range p.Lost {
			if commitPass.Offset > l.First {
				lost = append(lost, kpart.Range{First: l.First, Last: min(l.Last, commitPass.Offset-1)})
			}
		}
		labels = append(labels, label{x: ax.x(commitPass.Time), text: fmt.Sprintf("LOST here: commit %d passes %d undelivered records (%s)", commitPass.Offset, lost.Count(), lost), color: "#b71c1c", bold: true})
		use(legendItem{"pass", "pass", "the commit passes undelivered records: they are lost"})
	}
	rows, lefts, nrows := layoutRows(labels, right)

	// lane title
	verdictText := string(p.Verdict)
	fmt.Fprintf(b, `<text x="10" y="%.0f" font-weight="bold">%s</text><text x="%.0f" y="%.0f" fill="%s" font-weight="bold">%s</text>`+"\n",
		y0+14, esc(partLabel(p)), 10+textW(partLabel(p))+14, y0+14, verdictColor(verdictText), esc(verdictText))
	py := y0 + laneTitleH + float64(nrows)*rowH + 6 // the plot's top
	yOf := func(o int64) float64 { return py + plotH - plotH*float64(o-lo)/float64(hi-lo) }

	// plot frame, broken where the axis is cut
	for i, s := range ax.segs {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="#fafafa" stroke="#ccc"/>`+"\n", s.x0, py, s.x1-s.x0, plotH)
		if i > 0 {
			cut(b, ax.segs[i-1].x1, s.x0, py, plotH)
			use(legendItem{"cut", "cut", "idle time cut out of the time axis"})
		}
	}
	// offset axis: ticks and title
	for _, o := range offsetTicks(lo, hi) {
		yy := yOf(o)
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#999"/><text x="%.0f" y="%.1f" text-anchor="end" fill="#555">%d</text>`+"\n", left-4, yy, left, yy, left-6, yy+4, o)
	}
	fmt.Fprintf(b, `<text x="18" y="%.1f" text-anchor="middle" fill="#333" transform="rotate(-90 18 %.1f)">offset</text>`+"\n", py+plotH/2, py+plotH/2)

	// expiry windows under everything
	for _, win := range wins {
		x0, x1 := ax.x(win.from), ax.x(win.at)
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="#f9a825" opacity="0.22"><title>last fetch %s → cache expiry %s</title></rect>`+"\n",
			x0, py, math.Max(x1-x0, 2), plotH, esc(Clock(win.from)), esc(Clock(win.at)))
		fmt.Fprintf(b, `<path d="M%.1f %.1f V%.1f H%.1f V%.1f" fill="none" stroke="#b8860b" stroke-width="1.5"/>`+"\n", x0, py+8, py+2, math.Max(x1, x0+2), py+8)
	}
	// lost records: a band at their offsets
	for _, l := range p.Lost {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#d32f2f" opacity="0.16"><title>lost %s</title></rect>`+"\n",
			left, yOf(l.Last+1), right-left, math.Max(yOf(l.First)-yOf(l.Last+1), 2), l)
		use(legendItem{"lost", "band:#d32f2f", "offsets lost (fetched, never delivered, committed past)"})
	}
	for _, l := range p.Stranded {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fb8c00" opacity="0.16"><title>stranded %s</title></rect>`+"\n",
			left, yOf(l.Last+1), right-left, math.Max(yOf(l.First)-yOf(l.Last+1), 2), l)
		use(legendItem{"stranded", "band:#fb8c00", "offsets stranded (dropped undelivered, not yet committed past)"})
	}
	// vertical marks
	for _, m := range marks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4,3"><title>%s</title></line>`+"\n", m.x, py, m.x, py+plotH, m.color, esc(m.title))
	}
	// fetched and delivered bars, committed and position steps
	var committed, position []pt
	for _, e := range r.Timeline {
		if !sameLane(e, p) {
			continue
		}
		ex := ax.x(e.Time)
		switch e.Kind {
		case trace.KindFetch:
			for _, rg := range e.Ranges {
				bar(b, ex-2, yOf(rg.Last+1), yOf(rg.First), "#9e9e9e", "fetched "+rg.String()+" "+Clock(e.Time))
				use(legendItem{"fetched", "bar:#9e9e9e", "fetched (offsets)"})
			}
			if len(e.Ranges) > 0 {
				position = append(position, pt{ex, yOf(e.Ranges[len(e.Ranges)-1].Last + 1)})
			}
		case trace.KindDeliver:
			for _, rg := range e.Ranges {
				bar(b, ex+2, yOf(rg.Last+1), yOf(rg.First), "#2e7d32", "delivered "+rg.String()+" "+Clock(e.Time))
				use(legendItem{"delivered", "bar:#2e7d32", "delivered to the handler (offsets)"})
			}
		case trace.KindCommit:
			committed = append(committed, pt{ex, yOf(e.Offset)})
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1565c0"><title>committed %d %s (%s)</title></circle>`+"\n", ex, yOf(e.Offset), e.Offset, esc(Clock(e.Time)), esc(e.Ref.String()))
		case trace.KindPosition, trace.KindSeek, trace.KindRewind:
			if e.Offset >= 0 {
				position = append(position, pt{ex, yOf(e.Offset)})
			}
		}
	}
	if len(committed) > 0 {
		use(legendItem{"committed", "line:#1565c0", "committed offset"})
	}
	if len(position) > 0 {
		use(legendItem{"position", "dash:#ef6c00", "fetch position"})
	}
	step(b, position, right, "#ef6c00", ` stroke-dasharray="5,3"`)
	step(b, committed, right, "#1565c0", "")
	if commitPass != nil {
		cx, cy := ax.x(commitPass.Time), yOf(commitPass.Offset)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b71c1c" stroke-width="2"/>`+"\n", cx, py, cx, py+plotH)
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="7" fill="none" stroke="#b71c1c" stroke-width="2.5"><title>commit %d at %s passes undelivered records (%s)</title></circle>`+"\n",
			cx, cy, commitPass.Offset, esc(Clock(commitPass.Time)), esc(commitPass.Ref.String()))
	}
	// labels in their rows, each with a leader down to the plot
	for i, l := range labels {
		ly := y0 + laneTitleH + float64(rows[i])*rowH + 11
		weight := ""
		if l.bold {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="0.6" opacity="0.7"/>`+"\n", l.x, ly+3, l.x, py, l.color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="%s"%s>%s</text>`+"\n", lefts[i], ly, l.color, weight, esc(l.text))
	}
	return py + plotH
}

func verdictColor(v string) string {
	switch v {
	case "LOST":
		return "#b71c1c"
	case "STRANDED":
		return "#e65100"
	case "OK":
		return "#2e7d32"
	}
	return "#555"
}

// offsetTicks: the lowest and highest offsets shown and a few round ones between.
func offsetTicks(lo, hi int64) []int64 {
	step := int64(niceStep(time.Duration((hi-lo)/4+1)*time.Millisecond) / time.Millisecond)
	ticks := []int64{lo}
	for o := (lo/step + 1) * step; o < hi; o += step {
		if float64(o-lo) > float64(hi-lo)*0.1 && float64(hi-o) > float64(hi-lo)*0.1 {
			ticks = append(ticks, o)
		}
	}
	return append(ticks, hi)
}

// cut draws the break between two segments: a gap with zigzags.
func cut(b *strings.Builder, x0, x1, y, h float64) {
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="#eeeeee"/>`+"\n", x0+3, y, x1-x0-6, h)
	for _, x := range []float64{x0 + 8, x1 - 8} {
		fmt.Fprintf(b, `<path d="M%.1f %.1f l-4 6 l8 6 l-4 6" fill="none" stroke="#777" stroke-width="1.2"/>`+"\n", x, y+h/2-9)
	}
}

// drawTimeAxis draws the axis under the lanes: ticks per segment in the trace's time since
// its start, the full-scale figure under each when scaled, the cut stretches' lengths, the
// title. Tick labels that would overlap a placed one are left out.
func drawTimeAxis(b *strings.Builder, ax timeAxis, ay float64, scaled bool) {
	var placed [][2]float64
	free := func(l, r float64) bool {
		for _, p := range placed {
			if l < p[1]+10 && r+10 > p[0] {
				return false
			}
		}
		return true
	}
	for i, s := range ax.segs {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", s.x0, ay, s.x1, ay)
		if i > 0 {
			prev := ax.segs[i-1]
			mid := (prev.x1 + s.x0) / 2
			fmt.Fprintf(b, `<path d="M%.1f %.1f l6 -8 M%.1f %.1f l6 -8" stroke="#333" stroke-width="1.5"/>`+"\n", prev.x1+2, ay+4, s.x0-8, ay+4)
			text := "idle " + shortDur(s.t0.Sub(prev.t1))
			w := textW(text)
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#777" font-style="italic">%s</text>`+"\n", mid, ay+30, esc(text))
			placed = append(placed, [2]float64{mid - w/2, mid + w/2})
		}
	}
	for _, s := range ax.segs {
		d := s.t1.Sub(s.t0)
		step := niceDur(time.Duration(float64(d) * 110 / math.Max(s.x1-s.x0, 1)))
		first := s.t0.Sub(ax.start)
		var ts []time.Duration
		ts = append(ts, first)
		for off := (first/step + 1) * step; off < s.t1.Sub(ax.start); off += step {
			ts = append(ts, off)
		}
		if d > 0 {
			ts = append(ts, s.t1.Sub(ax.start))
		}
		for _, off := range ts {
			x := ax.x(ax.start.Add(off))
			text := "+" + shortDur(off)
			if off == 0 {
				text = "0"
			}
			w := textW(text)
			if scaled {
				w = math.Max(w, textW("("+shortDur(ax.full(off))+")"))
			}
			if !free(x-w/2, x+w/2) {
				continue
			}
			placed = append(placed, [2]float64{x - w/2, x + w/2})
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x, ay, x, ay+5)
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`+"\n", x, ay+17, esc(text))
			if scaled {
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#777">(%s)</text>`+"\n", x, ay+30, esc(shortDur(ax.full(off))))
			}
		}
	}
	title := "time since " + Clock(ax.start)
	if scaled {
		title += " in the run's scaled time; in brackets the same at full scale (÷ time_scale " + strconv.FormatFloat(ax.scale, 'g', -1, 64) + ")"
	}
	ty := ay + 48
	if scaled {
		ty += 6
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`+"\n", (svgLeft+ax.end())/2, ty, esc(title))
}

// writeLegend lays the legend's items out in rows from y; it returns the first and the
// last row's y.
func writeLegend(b *strings.Builder, used map[string]legendItem, y float64) (float64, float64) {
	order := []string{"fetched", "delivered", "committed", "position", "lost", "stranded", "pass", "window", "cut"}
	var items []legendItem
	for _, k := range order {
		if it, ok := used[k]; ok {
			items = append(items, it)
		}
	}
	var marks []string
	for k := range used {
		if strings.HasPrefix(k, "m-") {
			marks = append(marks, k)
		}
	}
	sort.Strings(marks)
	for _, k := range marks {
		items = append(items, used[k])
	}
	return y, legendRows(b, items, 10, svgWidth-10, y)
}

// legendRows lays items out in rows between x0 and x1 from y, a swatch and its text
// each; it returns the last row's y.
func legendRows(b *strings.Builder, items []legendItem, x0, x1, y float64) float64 {
	x := x0
	for _, it := range items {
		w := 24 + textW(it.text) + 18
		if x+w > x1 && x > x0 {
			x, y = x0, y+18
		}
		swatch(b, it.swatch, x, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+22, y+4, esc(it.text))
		x += w
	}
	return y
}

func swatch(b *strings.Builder, s string, x, y float64) {
	kind, color, _ := strings.Cut(s, ":")
	switch kind {
	case "bar":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="4" height="12" fill="%s"/>`+"\n", x+6, y-6, color)
	case "band":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="16" height="10" fill="%s" opacity="0.35"/>`+"\n", x, y-5, color)
	case "line":
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", x, y, x+16, y, color)
	case "dash":
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="5,3"/>`+"\n", x, y, x+16, y, color)
	case "mark":
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4,3" stroke-width="1.5"/>`+"\n", x+8, y-7, x+8, y+7, color)
	case "pass":
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="6" fill="none" stroke="#b71c1c" stroke-width="2.5"/>`+"\n", x+8, y)
	case "series": // a sweep's line: its color, dashes and point
		color, dash, _ := strings.Cut(color, ":")
		if dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/><circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, x+16, y, color, dash, x+8, y, color)
	case "unsettled": // a point that never settled
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="#555" stroke-width="1.5"/>`+"\n", x+8, y)
	case "cut":
		fmt.Fprintf(b, `<path d="M%.1f %.1f l-4 6 l8 6" fill="none" stroke="#777" stroke-width="1.2"/><path d="M%.1f %.1f l-4 6 l8 6" fill="none" stroke="#777" stroke-width="1.2"/>`+"\n", x+6, y-6, x+12, y-6)
	}
}

type pt struct{ x, y float64 }

// esc escapes a string from outside (a topic, a file name) for XML text and attributes,
// control characters written visibly: html.EscapeString leaves ESC in, and no XML
// parser reads the document then.
func esc(s string) string { return render.XML(s) }

func bar(b *strings.Builder, x, y1, y2 float64, color, title string) {
	h := y2 - y1
	if h < 1.5 {
		h = 1.5
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="3" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n", x-1.5, y1, h, color, esc(title))
}

func step(b *strings.Builder, pts []pt, end float64, color, extra string) {
	if len(pts) == 0 {
		return
	}
	var d strings.Builder
	fmt.Fprintf(&d, "M%.1f %.1f", pts[0].x, pts[0].y)
	for i := 1; i < len(pts); i++ {
		fmt.Fprintf(&d, " H%.1f V%.1f", pts[i].x, pts[i].y)
	}
	fmt.Fprintf(&d, " H%.1f", end)
	fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", d.String(), color, extra)
}
