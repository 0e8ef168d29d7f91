package view

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/trace"
)

// WriteTraceSVG draws the timeline: time across, one lane per partition; in a lane the offset
// goes up. Delivered ranges are green bars at the time they were delivered, fetched
// ranges grey, lost ranges a red band; the committed offset (blue) and the fetch position
// (orange, dashed) are step lines; markers show expiry, clears, commits and rebalances.
func WriteTraceSVG(w io.Writer, r *trace.Report) error {
	const (
		width, left, right, top = 1200.0, 150.0, 30.0, 60.0
		laneH, laneGap          = 180.0, 40.0
	)
	parts := r.Partitions
	if len(parts) > 40 {
		parts = parts[:40]
	}
	t0, t1 := r.Start, r.End
	for _, e := range r.Timeline {
		if e.Time.IsZero() {
			continue
		}
		if t0.IsZero() || e.Time.Before(t0) {
			t0 = e.Time
		}
		if t1.IsZero() || e.Time.After(t1) {
			t1 = e.Time
		}
	}
	span := t1.Sub(t0)
	if span <= 0 {
		span = time.Second
	}
	height := top + float64(max(len(parts), 1))*(laneH+laneGap) + 40
	x := func(t time.Time) float64 {
		if t.IsZero() {
			t = t0
		}
		return left + (width-left-right)*float64(t.Sub(t0))/float64(span)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := "kstranded trace parse"
	var names []string
	for _, f := range r.Files {
		names = append(names, fmt.Sprintf("%s (%s)", f.Name, f.Format))
	}
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
	fmt.Fprintf(&b, `<text x="10" y="38" fill="#555">%s — %s … %s</text>`+"\n", esc(strings.Join(names, ", ")), esc(Clock(t0)), esc(Clock(t1)))
	legend := []struct{ color, label string }{{"#2e7d32", "delivered"}, {"#bbb", "fetched"}, {"#d32f2f", "lost"}, {"#1565c0", "committed"}, {"#ef6c00", "fetch position"}}
	lx := 600.0
	for _, l := range legend {
		fmt.Fprintf(&b, `<rect x="%.0f" y="8" width="12" height="10" fill="%s"/><text x="%.0f" y="17">%s</text>`+"\n", lx, l.color, lx+16, l.label)
		lx += 100
	}
	for i, p := range parts {
		y0 := top + float64(i)*(laneH+laneGap)
		lo, hi := int64(0), int64(1)
		for _, s := range []kpart.RangeSet{p.Fetched, p.Delivered} {
			if len(s) > 0 && s[len(s)-1].Last+1 > hi {
				hi = s[len(s)-1].Last + 1
			}
		}
		for _, v := range []int64{p.Committed, p.Position} {
			if v > hi {
				hi = v
			}
		}
		if len(p.Fetched) > 0 {
			lo = p.Fetched[0].First
		}
		if p.Committed >= 0 && p.Committed < lo {
			lo = p.Committed
		}
		hi++
		y := func(o int64) float64 { return y0 + laneH - laneH*float64(o-lo)/float64(hi-lo) }
		name := fmt.Sprintf("partition %d", p.Partition)
		if p.Topic != "" {
			name = fmt.Sprintf("%s [%d]", p.Topic, p.Partition)
		}
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="#fafafa" stroke="#ddd"/>`+"\n", left, y0, width-left-right, laneH)
		fmt.Fprintf(&b, `<text x="10" y="%.0f" font-weight="bold">%s</text>`+"\n", y0+14, esc(name))
		fmt.Fprintf(&b, `<text x="10" y="%.0f" fill="#555">%s</text>`+"\n", y0+30, esc(string(p.Verdict)))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end" fill="#777">%d</text>`+"\n", left-4, y0+laneH, lo)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end" fill="#777">%d</text>`+"\n", left-4, y0+10, hi)
		for _, l := range p.Lost {
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.0f" height="%.1f" fill="#d32f2f" opacity="0.18"><title>lost %s</title></rect>`+"\n",
				left, y(l.Last+1), width-left-right, y(l.First)-y(l.Last+1), l)
			fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="#d32f2f" text-anchor="end">lost %s</text>`+"\n", width-right-4, y(l.Last+1)+12, l)
		}
		var committed, position []pt
		for _, e := range r.Timeline {
			if e.Partition != p.Partition || e.Topic != p.Topic {
				if e.Partition == trace.AllPartitions && (e.Kind == trace.KindRevoke || e.Kind == trace.KindAssign || e.Kind == trace.KindExpiry || e.Kind == trace.KindClear || e.Kind == trace.KindMaxPoll) {
					marker(&b, e, x(e.Time), y0, laneH)
				}
				continue
			}
			ex := x(e.Time)
			switch e.Kind {
			case trace.KindFetch:
				for _, rg := range e.Ranges {
					bar(&b, ex, y(rg.Last+1), y(rg.First), "#bbb", "fetched "+rg.String()+" "+Clock(e.Time))
				}
				position = append(position, pt{ex, y(e.Ranges[len(e.Ranges)-1].Last + 1)})
			case trace.KindDeliver:
				for _, rg := range e.Ranges {
					bar(&b, ex+3, y(rg.Last+1), y(rg.First), "#2e7d32", "delivered "+rg.String()+" "+Clock(e.Time))
				}
			case trace.KindCommit:
				committed = append(committed, pt{ex, y(e.Offset)})
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1565c0"><title>committed %d %s (%s)</title></circle>`+"\n", ex, y(e.Offset), e.Offset, esc(Clock(e.Time)), e.Ref)
			case trace.KindPosition, trace.KindSeek, trace.KindRewind:
				if e.Offset >= 0 {
					position = append(position, pt{ex, y(e.Offset)})
				}
				if e.Kind != trace.KindPosition {
					marker(&b, e, ex, y0, laneH)
				}
			default:
				marker(&b, e, ex, y0, laneH)
			}
		}
		step(&b, committed, width-right, "#1565c0", "")
		step(&b, position, width-right, "#ef6c00", ` stroke-dasharray="5,3"`)
	}
	// time axis
	ay := height - 30
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`+"\n", left, ay, width-right, ay)
	for i := 0; i <= 6; i++ {
		t := t0.Add(time.Duration(float64(span) * float64(i) / 6))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" fill="#333">%s</text>`+"\n", x(t), ay+15, esc(shortClock(t)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type pt struct{ x, y float64 }

func shortClock(t time.Time) string {
	return t.UTC().Format("15:04:05")
}

func esc(s string) string { return html.EscapeString(s) }

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

func marker(b *strings.Builder, e trace.Entry, x, y0, h float64) {
	var color, label string
	switch e.Kind {
	case trace.KindExpiry:
		color, label = "#f9a825", "expiry"
	case trace.KindClear:
		color, label = "#d32f2f", "clear"
		if e.Count > 0 {
			label = fmt.Sprintf("clear −%d", e.Count)
		}
	case trace.KindAssign, trace.KindRevoke, trace.KindMaxPoll:
		color, label = "#6a1b9a", e.Kind.String()
	case trace.KindSeek, trace.KindRewind:
		color, label = "#ef6c00", e.Kind.String()
	case trace.KindRewindSkip:
		color, label = "#d32f2f", "no rewind"
	case trace.KindPause, trace.KindResume:
		color, label = "#888", e.Kind.String()
	default:
		return
	}
	ly := y0 + h - 4 // labels start at the bottom; "no rewind" and rebalances higher, so they do not overlap a clear
	if e.Kind == trace.KindRewindSkip || e.Kind == trace.KindRevoke || e.Kind == trace.KindSeek || e.Kind == trace.KindRewind {
		ly = y0 + h*0.45
	}
	fmt.Fprintf(b, `<g><title>%s %s (%s)</title><line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s" stroke-dasharray="3,2"/>`+
		`<text x="%.1f" y="%.0f" fill="%s" font-size="10" transform="rotate(-90 %.1f %.0f)">%s</text></g>`+"\n",
		esc(Clock(e.Time)), esc(e.Detail), e.Ref, x, y0, x, y0+h, color, x-2, ly, color, x-2, ly, esc(label))
}
