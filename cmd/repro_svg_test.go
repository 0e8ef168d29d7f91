package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repro --svg draws what the run wrote as its trace: here a real run's trace (the one
// repro wrote for trace/testdata) goes through the same reader and picture.
func TestReproSVGDrawsTheRunsTraceWithTheLossMarked(t *testing.T) {
	fh, err := os.Open(fixture("repro-v1.10.0.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	out := filepath.Join(t.TempDir(), "run.svg")
	if err := reproSVG(out, "repro v1.10.0/each-batch/auto", fh); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"repro v1.10.0/each-batch/auto", "LOST here: commit 202 passes 118 undelivered records (82-199)", "max.poll.interval 15m", "time_scale 0.01"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
	if got := svgFileOf("runs.svg", 3, "head", "each-batch", "ledger"); got != "runs-head-each-batch-ledger.svg" {
		t.Errorf("several runs: %s", got)
	}
}
