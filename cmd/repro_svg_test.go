package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/trace"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/view"
)

// repro --svg draws what the run wrote as its trace: here a real run's events (those
// repro wrote for trace/testdata), handed over as a run hands them, draw the same
// picture, byte for byte, as trace parse draws from the file.
func TestReproSVGDrawsTheRunsTraceWithTheLossMarked(t *testing.T) {
	const name = "repro v1.10.0/each-batch/auto"
	data, err := os.ReadFile(fixture("repro-v1.10.0.trace"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []traceevent.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev traceevent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run.svg")
	if err := reproSVG(out, name, evs); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	a := trace.NewAnalyzer(trace.Options{})
	if _, err := a.Parse(name, bytes.NewReader(data), trace.FormatKstranded); err != nil {
		t.Fatal(err)
	}
	var fromFile bytes.Buffer
	if err := view.WriteTraceSVG(&fromFile, a.Finish(), nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(svg, fromFile.Bytes()) {
		t.Errorf("the events handed over draw another picture than the trace file (%d bytes, the file's %d)", len(svg), fromFile.Len())
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
