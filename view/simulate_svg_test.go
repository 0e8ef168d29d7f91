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

// parseTransform reads the scale, translate and rotate steps of an SVG transform.
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
		case step[1] == "rotate" && (len(args) == 1 || len(args) == 3):
			r := args[0] * math.Pi / 180
			n = affine{a: math.Cos(r), b: math.Sin(r), c: -math.Sin(r), d: math.Cos(r)}
			if len(args) == 3 { // about (cx, cy): translate(cx cy) rotate(a) translate(-cx -cy)
				to := affine{a: 1, d: 1, e: args[1], f: args[2]}
				back := affine{a: 1, d: 1, e: -args[1], f: -args[2]}
				n = to.then(n).then(back)
			}
		default:
			t.Fatalf("transform %q: step %s not understood", s, step[0])
		}
		m = m.then(n)
	}
	return m
}

// plotBox is the box a <text> fills in the SVG's viewport coordinates, or a drawn
// shape's (a line, a polyline, a circle, a rect but the background).
type plotBox struct {
	text                   string
	minX, minY, maxX, maxY float64
}

func newBox(text string) plotBox {
	return plotBox{text: text, minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
}

func (b *plotBox) add(m affine, x, y float64) {
	px, py := m.apply(x, y)
	b.minX, b.maxX = math.Min(b.minX, px), math.Max(b.maxX, px)
	b.minY, b.maxY = math.Min(b.minY, py), math.Max(b.maxY, py)
}

// The measure of a text's glyphs the test takes, in em, a little wider than the layout's
// estimate (charW): DejaVu Sans's ascent and descent, and 0.66 em a character.
const testCharW, testAscent, testDescent = 0.66, 0.93, 0.24

// plotBoxes finds every <text> of an SVG with the box its glyphs fill (anchored at x as
// its text-anchor says, the ascent above the baseline y, the descent below; its own or an
// inherited font size), through the transforms of the element and its groups; the boxes
// of the shapes; and the viewBox, which must be the size the SVG declares.
func plotBoxes(t *testing.T, svg []byte) (texts, shapes []plotBox, width, height float64) {
	type frame struct {
		m            affine
		size, anchor string
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	stack := []frame{{m: identity, anchor: "start"}}
	num := func(attr map[string]string, k string) float64 {
		v, err := strconv.ParseFloat(attr[k], 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", k, attr[k], err)
		}
		return v
	}
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
			top := stack[len(stack)-1]
			f := frame{m: top.m.then(parseTransform(t, attr["transform"])), size: top.size, anchor: top.anchor}
			if s, ok := attr["font-size"]; ok {
				f.size = s
			}
			if s, ok := attr["text-anchor"]; ok {
				f.anchor = s
			}
			stack = append(stack, f)
			m := f.m
			switch el.Name.Local {
			case "svg":
				if _, err := fmt.Sscanf(attr["viewBox"], "0 0 %g %g", &width, &height); err != nil {
					t.Fatalf("viewBox %q: %v", attr["viewBox"], err)
				}
				if attr["width"] != strconv.FormatFloat(width, 'f', -1, 64) || attr["height"] != strconv.FormatFloat(height, 'f', -1, 64) {
					t.Fatalf("%sx%s drawn on a viewBox of %gx%g", attr["width"], attr["height"], width, height)
				}
				if !strings.HasSuffix(attr["font-family"], "sans-serif") {
					t.Fatalf("font-family %q: not falling back to the generic sans-serif", attr["font-family"])
				}
			case "text":
				var body string
				if err := dec.DecodeElement(&body, &el); err != nil {
					t.Fatal(err)
				}
				stack = stack[:len(stack)-1] // DecodeElement consumed the end
				size, err := strconv.ParseFloat(f.size, 64)
				if err != nil {
					t.Fatalf("text %q: font size %q", body, f.size)
				}
				x, y := num(attr, "x"), num(attr, "y")
				w := float64(len([]rune(body))) * testCharW * size
				switch f.anchor {
				case "middle":
					x -= w / 2
				case "end":
					x -= w
				}
				box := newBox(body)
				for _, c := range [][2]float64{{x, y - testAscent*size}, {x + w, y - testAscent*size}, {x, y + testDescent*size}, {x + w, y + testDescent*size}} {
					box.add(m, c[0], c[1])
				}
				texts = append(texts, box)
			case "line":
				box := newBox("line")
				box.add(m, num(attr, "x1"), num(attr, "y1"))
				box.add(m, num(attr, "x2"), num(attr, "y2"))
				shapes = append(shapes, box)
			case "polyline":
				box := newBox("polyline " + attr["points"])
				for _, p := range strings.Fields(attr["points"]) {
					var x, y float64
					if _, err := fmt.Sscanf(p, "%g,%g", &x, &y); err != nil {
						t.Fatalf("points %q: %v", attr["points"], err)
					}
					box.add(m, x, y)
				}
				shapes = append(shapes, box)
			case "circle":
				box := newBox("circle")
				cx, cy, r := num(attr, "cx"), num(attr, "cy"), num(attr, "r")
				box.add(m, cx-r, cy-r)
				box.add(m, cx+r, cy+r)
				shapes = append(shapes, box)
			case "rect":
				if attr["width"] == "100%" {
					continue // the background: the frame itself
				}
				box := newBox("rect")
				x, y := num(attr, "x"), num(attr, "y")
				box.add(m, x, y)
				box.add(m, x+num(attr, "width"), y+num(attr, "height"))
				shapes = append(shapes, box)
			case "g", "title":
			default:
				t.Fatalf("<%s> not understood", el.Name.Local)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return texts, shapes, width, height
}

// sweepResult is a sweep's result with the given lost records per value and case, all
// policies and commit modes (the longest legend).
func sweepResult(t *testing.T, sweep string, lost func(row, c int) int) *simulate.Result {
	sw, err := simulate.ParseSweep(sweep)
	if err != nil {
		t.Fatal(err)
	}
	r := &simulate.Result{Sweep: sw}
	// the three policies of the 1.8.0+ releases and the patch: with v1.7.0 and pr518 too,
	// ten columns do not fit 80 (the terminal table then cuts cells with "…")
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1, eachbatch.Head} {
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

// TestTheSweepPlotDrawsEveryTextInsideItsFrame: the title, the axis titles, the tick
// labels and the legend (its words and its marks), the lines and the grid lie inside the
// SVG's viewBox with a margin, for the longest flag names, wide tick labels at both ends
// of the axes and every case in the legend; and the legend lies below the plot, where it
// hides no line.
func TestTheSweepPlotDrawsEveryTextInsideItsFrame(t *testing.T) {
	const margin = 2.0 // px
	for _, tc := range sweepCases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := SweepSVG(&b, NewSweep(sweepResult(t, tc.sweep, tc.lost))); err != nil {
				t.Fatal(err)
			}
			texts, shapes, w, h := plotBoxes(t, b.Bytes())
			if len(texts) < 3+3*2 {
				t.Fatalf("%d texts: want at least the title, two axis labels and a legend of %d", len(texts), 3*2)
			}
			for _, x := range texts {
				if x.minX < margin || x.minY < margin || x.maxX > w-margin || x.maxY > h-margin {
					t.Errorf("%q spans x %.1f..%.1f y %.1f..%.1f: outside %gx%g less %g", x.text, x.minX, x.maxX, x.minY, x.maxY, w, h, margin)
				}
			}
			plotBottom := math.Inf(-1)
			for _, p := range shapes { // the frame, the grid, the ticks, the lines, their points and the legend's marks
				if p.minX < margin || p.minY < margin || p.maxX > w-margin || p.maxY > h-margin {
					t.Errorf("%.60s spans x %.1f..%.1f y %.1f..%.1f: outside %gx%g less %g", p.text, p.minX, p.maxX, p.minY, p.maxY, w, h, margin)
				}
				if strings.HasPrefix(p.text, "polyline") {
					plotBottom = math.Max(plotBottom, p.maxY)
				}
			}
			for _, x := range texts {
				if strings.Contains(x.text, "/") && !strings.Contains(x.text, "kstranded") && x.minY <= plotBottom {
					t.Errorf("legend %q at y %.1f: not below the plot's lines (to %.1f)", x.text, x.minY, plotBottom)
				}
			}
		})
	}
}

// sweepCases are sweeps that stretch the chart's layout.
var sweepCases = []struct {
	name  string
	sweep string
	lost  func(row, c int) int
}{
	{"a duration, the seed's losses", "max-poll-interval=30m..60m/10m", func(row, c int) int { return max(0, 58-20*row-c) }},
	{"the longest flag, no loss", "auto-commit-interval=1s..10s/1s", func(int, int) int { return 0 }},
	{"a count to 100000, large losses", "batch-size=1,50000,100000", func(row, c int) int { return 1_000_000 * (3 - row) }},
	{"a spread", "spread=0:100;0:50,1:50;0:10,1:10,2:10,3:10,4:10,5:10", func(row, c int) int { return 7 * row * c }},
}

// TestTheSweepChartOfTheSeed: the seed's sweep of max-poll-interval, every case, as the
// golden file simulate-sweep-svg (also rendered to PNG by TestThePictureRendersToAPNG).
func TestTheSweepChartOfTheSeed(t *testing.T) {
	var b bytes.Buffer
	if err := SweepSVG(&b, NewSweep(sweepResult(t, sweepCases[0].sweep, sweepCases[0].lost))); err != nil {
		t.Fatal(err)
	}
	golden(t, "simulate-sweep-svg", b.Bytes())
}
