package view

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/trace"
)

func report(t *testing.T, file string) *trace.Report {
	t.Helper()
	fh, err := os.Open("../trace/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	a := trace.NewAnalyzer(trace.Options{})
	if _, err := a.Parse(file, fh, trace.FormatAuto); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

func TestTheSummaryNamesTheLossAndTheEvidenceLines(t *testing.T) {
	d := NewTrace(report(t, "kstranded-v1.10.0.trace"), "trace parse", false)
	var out bytes.Buffer
	st := render.NewStyles(&out)
	if err := render.WriteGrid(&out, SummaryGrid(d, st), false); err != nil {
		t.Fatal(err)
	}
	WriteFindings(&out, d, st)
	for _, want := range []string{"stranded/0\t201\t83\t118 (82-199)\t202\t202\t1 (118 discarded)\tLOST", "kstranded-v1.10.0.trace:42  committed 202, past offset 82"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	if d.Timeline != nil {
		t.Fatal("the timeline is only in the document when asked for")
	}
}

func TestTheSVGHasALanePerPartitionAndTheLostBand(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTraceSVG(&b, report(t, "kstranded-v1.10.0.trace"), nil); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"<svg", "stranded/0", "lost 82-199", "committed 202", "clear: 118 discarded", "cache expired",
		"LOST here: commit 202 passes 118 undelivered records (82-199)", "last fetch → expiry: 1m, max.poll.interval 15m", ">offset<", "time since ", "idle 10m", "</svg>"} {
		if !strings.Contains(s, want) {
			t.Fatalf("svg lacks %q", want)
		}
	}
}
