package view

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/trace"
)

// svgText is a <text> of the picture, where it is laid out.
type svgText struct {
	x, y, w float64
	anchor  string
	s       string
	rotated bool
}

// textsOf reads every <text> with its position (inside the one translated group: lanes and
// axis), estimating its width as the layout does.
func textsOf(t *testing.T, svg []byte) []svgText {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []svgText
	dy := 0.0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		if se.Name.Local == "g" && strings.HasPrefix(attr["transform"], "translate(0 ") {
			dy, _ = strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(attr["transform"], "translate(0 "), ")"), 64)
		}
		if se.Name.Local != "text" {
			continue
		}
		var s string
		if err := dec.DecodeElement(&s, &se); err != nil {
			t.Fatal(err)
		}
		x, _ := strconv.ParseFloat(attr["x"], 64)
		y, _ := strconv.ParseFloat(attr["y"], 64)
		w := textW(s)
		if attr["font-size"] != "" {
			fs, _ := strconv.ParseFloat(attr["font-size"], 64)
			w = w * fs / fontSize
		}
		out = append(out, svgText{x: x, y: y + dy, w: w, anchor: attr["text-anchor"], s: s, rotated: attr["transform"] != ""})
	}
	return out
}

func (s svgText) box() (l, r, top, bottom float64) {
	l = s.x
	switch s.anchor {
	case "middle":
		l -= s.w / 2
	case "end":
		l -= s.w
	}
	return l, l + s.w, s.y - fontSize, s.y + 2
}

func svgOf(t *testing.T, r *trace.Report, only *PartitionFilter) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTraceSVG(&b, r, only); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNoTwoLabelsOfThePictureOverlap(t *testing.T) {
	const appPattern = `^(?P<time>\S+) handler delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)`
	for _, c := range []struct {
		name string
		r    *trace.Report
	}{
		{"a hand-written v1.10.0 trace", reportOf(t, "", "kstranded-v1.10.0.trace")},
		{"a real, scaled repro trace", reportOf(t, "", "repro-v1.10.0.trace")},
		{"a librdkafka log with the application's", reportOf(t, appPattern, "rdkafka-go-consumer.log", "rdkafka-go-app-delivered.log")},
		{"the kafkajs seed", reportOf(t, "", "kafkajs-seed.trace")},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := textsOf(t, svgOf(t, c.r, nil))
			if len(ts) < 10 {
				t.Fatalf("only %d texts", len(ts))
			}
			for i, a := range ts {
				if a.rotated {
					continue
				}
				al, ar, at, ab := a.box()
				if ar > svgWidth || al < 0 {
					t.Errorf("%q leaves the picture (%.0f-%.0f)", a.s, al, ar)
				}
				for _, b := range ts[i+1:] {
					if b.rotated {
						continue
					}
					bl, br, bt, bb := b.box()
					if al < br && bl < ar && at < bb && bt < ab {
						t.Errorf("%q (%.0f,%.0f) overlaps %q (%.0f,%.0f)", a.s, a.x, a.y, b.s, b.x, b.y)
					}
				}
			}
		})
	}
}

func TestAScaledTraceIsDrawnInItsTimeWithTheFullScaleBeside(t *testing.T) {
	s := string(svgOf(t, reportOf(t, "", "repro-v1.10.0.trace"), nil))
	for _, want := range []string{"time_scale 0.01", "at full scale", "in brackets the same at full scale", "LOST here: commit"} {
		if !strings.Contains(s, want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
}

func TestThePictureOfOnePartitionHasOneLane(t *testing.T) {
	r := reportOf(t, "", "kstranded-v1.10.0.trace")
	if s := string(svgOf(t, r, &PartitionFilter{Partition: 3})); strings.Contains(s, "stranded[0]") || !strings.Contains(s, "no partition with records") {
		t.Fatal("partition 3 (no records) drew partition 0's lane")
	}
}

// The picture as a user sees it: rendered to PNG by rsvg-convert (librsvg, what GNOME's
// image viewer and many converters use), checked for its size, that it is not blank,
// and that nothing is drawn in its outer 2 px (measured with the font the viewer has, not
// the layout's estimate); the PNGs stay in testdata/png/ (not committed) with -update, to
// be looked at. The trace pictures and simulate --sweep's chart.
func TestThePictureRendersToAPNG(t *testing.T) {
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert not found (Debian: apt-get install librsvg2-bin): the SVG is not rendered to PNG")
	}
	for _, c := range []struct {
		name  string
		width int
	}{{"trace-loss-svg", svgWidth}, {"trace-rdkafka-app-svg", svgWidth}, {"trace-repro-svg", svgWidth}, {"simulate-sweep-svg", sweepWidth}} {
		name := c.name
		t.Run(name, func(t *testing.T) {
			svg, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), name+".png")
			if *update {
				os.MkdirAll(filepath.Join("testdata", "png"), 0o755)
				out = filepath.Join("testdata", "png", name+".png")
			}
			cmd := exec.Command(bin, "-o", out)
			cmd.Stdin = bytes.NewReader(svg)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("rsvg-convert: %v: %s", err, msg)
			}
			fh, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			img, err := png.Decode(fh)
			if err != nil {
				t.Fatal(err)
			}
			bnd := img.Bounds()
			if bnd.Dx() != c.width || bnd.Dy() < 300 {
				t.Fatalf("a %dx%d picture", bnd.Dx(), bnd.Dy())
			}
			ink, red, edge := 0, 0, 0
			for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
				for x := bnd.Min.X; x < bnd.Max.X; x++ {
					r, g, b, _ := img.At(x, y).RGBA()
					if r < 0xf000 || g < 0xf000 || b < 0xf000 {
						ink++
						if x < bnd.Min.X+2 || y < bnd.Min.Y+2 || x >= bnd.Max.X-2 || y >= bnd.Max.Y-2 {
							edge++
						}
					}
					if r > 0xa000 && g < 0x4000 && b < 0x4000 {
						red++
					}
				}
			}
			total := bnd.Dx() * bnd.Dy()
			if ink < total/50 || ink > total*9/10 {
				t.Fatalf("%d of %d pixels not white: blank or a blot", ink, total)
			}
			if edge > 0 {
				t.Errorf("%d pixels drawn within 2 px of the edge: a text or a line leaves the frame", edge)
			}
			if red == 0 {
				t.Fatal("no red in a picture of a loss: the loss is not drawn")
			}
		})
	}
}
