package view

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/simulate"
)

// affine is an SVG transform matrix [a c e; b d f; 0 0 1].
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

func (m affine) then(n affine) affine { // m applied after n: m·n
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

var transformStep = regexp.MustCompile(`(\w+)\(([^)]*)\)`)

// parseTransform reads the scale, translate and rotate steps gonum's SVG canvas writes.
func parseTransform(t *testing.T, s string) affine {
	m := identity
	for _, step := range transformStep.FindAllStringSubmatch(s, -1) {
		var args []float64
		for _, f := range strings.FieldsFunc(step[2], func(r rune) bool { return r == ',' || r == ' ' }) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("transform %q: %v", s, err)
			}
			args = append(args, v)
		}
		var n affine
		switch {
		case step[1] == "scale" && len(args) == 2:
			n = affine{a: args[0], d: args[1]}
		case step[1] == "translate" && len(args) == 2:
			n = affine{a: 1, d: 1, e: args[0], f: args[1]}
		case step[1] == "rotate" && len(args) == 1:
			r := args[0] * math.Pi / 180
			n = affine{a: math.Cos(r), b: math.Sin(r), c: -math.Sin(r), d: math.Cos(r)}
		default:
			t.Fatalf("transform %q: step %s not understood", s, step[0])
		}
		m = m.then(n)
	}
	return m
}

var pathPoint = regexp.MustCompile(`[ML]([-0-9.e]+),([-0-9.e]+)`)

// plotText is a <text> element's box in the SVG's viewport coordinates, or a <path>'s
// (its move and line points; the arcs of the point marks are near them).
type plotText struct {
	text                   string
	minX, minY, maxX, maxY float64
}

var svgFontSize = regexp.MustCompile(`font-size:([0-9.]+)px`)

// plotTexts finds every <text> of an SVG written by gonum's canvas, with the box its
// glyphs fill (measured with the plot's font: start-anchored at x, ascent above the
// baseline y, descent below), through the transforms of the element and its groups;
// the boxes of the paths but the background; and the viewBox.
func plotTexts(t *testing.T, svg []byte) (texts, paths []plotText, width, height float64) {
	dec := xml.NewDecoder(bytes.NewReader(svg))
	stack := []affine{identity}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			m := stack[len(stack)-1].then(parseTransform(t, attr["transform"]))
			stack = append(stack, m)
			switch el.Name.Local {
			case "svg":
				if _, err := fmt.Sscanf(attr["viewBox"], "0 0 %g %g", &width, &height); err != nil {
					t.Fatalf("viewBox %q: %v", attr["viewBox"], err)
				}
			case "text":
				var body string
				if err := dec.DecodeElement(&body, &el); err != nil {
					t.Fatal(err)
				}
				stack = stack[:len(stack)-1] // DecodeElement consumed the end
				x, _ := strconv.ParseFloat(attr["x"], 64)
				y, _ := strconv.ParseFloat(attr["y"], 64)
				fs := svgFontSize.FindStringSubmatch(attr["style"])
				if fs == nil {
					t.Fatalf("text %q without a font size", body)
				}
				size, _ := strconv.ParseFloat(fs[1], 64)
				face := font.DefaultCache.Lookup(plot.DefaultFont, vg.Length(size))
				ext := face.Extents()
				w := float64(face.Width(body))
				box := plotText{text: body, minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
				for _, c := range [][2]float64{{x, y - float64(ext.Ascent)}, {x + w, y - float64(ext.Ascent)}, {x, y + float64(ext.Descent)}, {x + w, y + float64(ext.Descent)}} {
					px, py := m.apply(c[0], c[1])
					box.minX, box.maxX = math.Min(box.minX, px), math.Max(box.maxX, px)
					box.minY, box.maxY = math.Min(box.minY, py), math.Max(box.maxY, py)
				}
				texts = append(texts, box)
			case "path":
				if strings.Contains(attr["style"], "fill:#FFFFFF") {
					continue // the background: the frame itself
				}
				box := plotText{text: attr["d"], minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
				for _, p := range pathPoint.FindAllStringSubmatch(attr["d"], -1) {
					x, _ := strconv.ParseFloat(p[1], 64)
					y, _ := strconv.ParseFloat(p[2], 64)
					px, py := m.apply(x, y)
					box.minX, box.maxX = math.Min(box.minX, px), math.Max(box.maxX, px)
					box.minY, box.maxY = math.Min(box.minY, py), math.Max(box.maxY, py)
				}
				paths = append(paths, box)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return texts, paths, width, height
}

// sweepResult is a sweep's result with the given lost records per value and case, all
// policies and commit modes (the longest legend).
func sweepResult(t *testing.T, sweep string, lost func(row, c int) int) *simulate.Result {
	sw, err := simulate.ParseSweep(sweep)
	if err != nil {
		t.Fatal(err)
	}
	r := &simulate.Result{Sweep: sw}
	for _, p := range eachbatch.Policies {
		for _, c := range []repro.CommitMode{repro.CommitAuto, repro.CommitLedger} {
			r.Cases = append(r.Cases, simulate.Case{Policy: p, Commit: c})
		}
	}
	for i, v := range sw.Values {
		row := simulate.Row{Value: v}
		for ci, c := range r.Cases {
			row.Cells = append(row.Cells, simulate.Cell{Case: c, Lost: lost(i, ci)})
		}
		r.Rows = append(r.Rows, row)
	}
	return r
}

// TestTheSweepPlotDrawsEveryTextInsideItsFrame: the title, the axis labels, the tick
// labels and the legend (its words and its marks) lie inside the SVG's viewBox with a margin, for the longest
// flag names, wide tick labels at both ends of the axes and every case in the legend.
// gonum's default layout puts the title's and the rotated y label's baselines 9.4 pt
// from the edge with a 12 pt font, and the last x tick label and the legend against
// the right edge.
func TestTheSweepPlotDrawsEveryTextInsideItsFrame(t *testing.T) {
	const margin = 2.0 // points
	cases := []struct {
		name  string
		sweep string
		lost  func(row, c int) int
	}{
		{"a duration, the seed's losses", "max-poll-interval=30m..60m/10m", func(row, c int) int { return max(0, 58-20*row-c) }},
		{"the longest flag, no loss", "auto-commit-interval=1s..10s/1s", func(int, int) int { return 0 }},
		{"a count to 100000, large losses", "batch-size=1,50000,100000", func(row, c int) int { return 1_000_000 * (3 - row) }},
		{"a spread", "spread=0:100;0:50,1:50;0:10,1:10,2:10,3:10,4:10,5:10", func(row, c int) int { return 7 * row * c }},
	}
	sizes := []struct{ w, h vg.Length }{{sweepSVGWidth, sweepSVGHeight}}
	for _, tc := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s at %gx%g", tc.name, sz.w, sz.h), func(t *testing.T) {
				var b bytes.Buffer
				if err := sweepSVG(&b, sweepResult(t, tc.sweep, tc.lost), sz.w, sz.h); err != nil {
					t.Fatal(err)
				}
				texts, paths, w, h := plotTexts(t, b.Bytes())
				if w != float64(sz.w) || h != float64(sz.h) {
					t.Fatalf("viewBox %gx%g, want %gx%g", w, h, sz.w, sz.h)
				}
				if len(texts) < 3+len(eachbatch.Policies)*2 {
					t.Fatalf("%d texts: want at least the title, two axis labels and a legend of %d", len(texts), len(eachbatch.Policies)*2)
				}
				for _, x := range texts {
					if x.minX < margin || x.minY < margin || x.maxX > w-margin || x.maxY > h-margin {
						t.Errorf("%q spans x %.1f..%.1f y %.1f..%.1f: outside %gx%g less %g pt", x.text, x.minX, x.maxX, x.minY, x.maxY, w, h, margin)
					}
				}
				for _, p := range paths { // the axes, the grid, the lines and the legend's marks
					if p.minX < margin || p.minY < margin || p.maxX > w-margin || p.maxY > h-margin {
						t.Errorf("path %.60s spans x %.1f..%.1f y %.1f..%.1f: outside %gx%g less %g pt", p.text, p.minX, p.maxX, p.minY, p.maxY, w, h, margin)
					}
				}
			})
		}
	}
}
