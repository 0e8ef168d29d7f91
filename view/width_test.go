package view

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/rewind"
	"github.com/kstranded/kstranded/simulate"
)

func TestMain(m *testing.M) {
	// the golden files without a width in their name are drawn with no width limit,
	// whatever the terminal running the tests exports
	os.Unsetenv("COLUMNS")
	os.Exit(m.Run())
}

// longTopic is a topic named as repro names its own (stranded-RUNID), as long as
// operators' topics often are: at 80 columns it was cut to "stranded-cdbb…".
const longTopic = "stranded-cdbb04e9d516-orders"

// TestTerminalTablesFitTheirWidth draws the terminal views at 80, 100 and 200 columns:
// no line, table or prose, is wider than the terminal (ANSI stripped, display width),
// nothing is cut with "…" (the columns an operator needs stay readable, long names
// fold; the others hide, named in a note), and the golden files show the layout chosen at each width
// (boxed, or without a box under 120 columns).
func TestTerminalTablesFitTheirWidth(t *testing.T) {
	ok := seedLoss()
	ok.Policy, ok.Verdict = eachbatch.Head, verdict.OK
	ok.Partitions[0].PartitionVerdict = repro.PartitionVerdict{Records: 201, Delivered: 201, Verdict: verdict.OK}
	ok.Partitions[0].CommittedByPhase, ok.Partitions[0].FrontierByPhase = []int64{200, 202}, []int64{201, 202}
	ok.Partitions[0].VerdictByPhase = []verdict.Verdict{verdict.OK, verdict.OK}
	ok.LossAt = 0
	views := []struct {
		name  string
		print func(*bytes.Buffer) error
	}{
		{"repro-loss", func(b *bytes.Buffer) error {
			return PrintRepro(b, NewRepro([]*repro.Result{seedLoss()}), render.Table, true)
		}},
		{"repro-comparison", func(b *bytes.Buffer) error {
			return PrintRepro(b, NewRepro([]*repro.Result{seedLoss(), ok}), render.Table, true)
		}},
		{"inspect-loss", func(b *bytes.Buffer) error { return PrintInspect(b, NewInspect(lossReport()), render.Table, true) }},
		{"rewind-dryrun", func(b *bytes.Buffer) error { return PrintRewind(b, NewRewindPlan(dryRunPlan()), render.Table, true) }},
		{"rewind-unrecoverable", func(b *bytes.Buffer) error {
			p := dryRunPlan()
			p.Unrecoverable = []rewind.Unrecoverable{{Topic: longTopic, Partition: 0, LogStart: 60, Ranges: []kpart.RecordRange{kpart.Counted(40, 59, 20)}, Count: 20}}
			return PrintRewind(b, NewRewindPlan(p), render.Table, true)
		}},
		{"inspect-long-topic", func(b *bytes.Buffer) error {
			r := lossReport()
			for i := range r.Partitions {
				r.Partitions[i].Offsets.Topic = longTopic
			}
			return PrintInspect(b, NewInspect(r), render.Table, true)
		}},
		{"trace-loss", func(b *bytes.Buffer) error {
			return PrintTrace(b, NewTrace(reportOf(t, "", "kstranded-v1.10.0.trace"), "trace parse", false), render.Table, true, false)
		}},
		{"trace-loss-timeline", func(b *bytes.Buffer) error {
			return PrintTrace(b, NewTrace(reportOf(t, "", "kstranded-v1.10.0.trace"), "trace parse", true), render.Table, true, true)
		}},
		{"simulate-sweep", func(b *bytes.Buffer) error {
			return PrintSweep(b, NewSweep(sweepResult(t, sweepCases[0].sweep, sweepCases[0].lost)), render.Table, true)
		}},
		{"simulate-advice", func(b *bytes.Buffer) error {
			safe := int64(2520 * time.Second)
			margin := int64(-1620 * time.Second)
			four := int64(4)
			a := &simulate.Advice{Case: simulate.Case{Policy: eachbatch.V1_10_0, Commit: repro.CommitAuto}, Lost: 118,
				Settings: []simulate.Range{
					{Flag: "max-poll-interval", Kind: simulate.Duration, Current: int64(15 * time.Minute), Safe: []simulate.Span{{First: safe}},
						Margin: &margin, CurrentText: "15m0s", SafeText: ">= 42m0s", MarginText: "27m0s short"},
					{Flag: "concurrency", Kind: simulate.Count, Current: 20, Safe: []simulate.Span{{First: 1, Last: &four}},
						CurrentText: "20", SafeText: "safe at 1-4"},
				},
				Policies: []simulate.Policy{{Policy: eachbatch.V1_10_0, Releases: eachbatch.ReleasesOf(eachbatch.V1_10_0), Lost: 118},
					{Policy: eachbatch.V1_10_1, Releases: eachbatch.ReleasesOf(eachbatch.V1_10_1)}}}
			return PrintAdvice(b, NewAdvice(a), render.Table, true)
		}},
		{"inspect-list", func(b *bytes.Buffer) error {
			return PrintGroups(b, NewGroups([]inspect.Listing{{ID: "kstranded-v1.10.0-auto-04e9d516", State: "Empty", GroupProtocol: "classic", ProtocolType: "consumer"},
				{ID: longTopic + "-billing-consumers", State: "Stable", GroupProtocol: "consumer", ProtocolType: "consumer"}}), render.Table, true)
		}},
		{"repro-consume", func(b *bytes.Buffer) error {
			var lost kpart.RangeSet
			lost.Add(82, 199)
			r := &repro.ConsumeResult{Topic: longTopic, Group: "billing", Policy: eachbatch.V1_10_0, Commit: repro.CommitAuto, Elapsed: 12800 * time.Millisecond,
				Verdict: verdict.Lost, Partitions: []repro.ConsumedPartition{{Partition: 0, Delivered: 83, Committed: 202, StartCommitted: -1, High: 202,
					Lost: lost, Verdict: verdict.Lost}}}
			return PrintConsume(b, NewConsume(r), render.Table, true)
		}},
		{"rewind-long-topic", func(b *bytes.Buffer) error {
			p := dryRunPlan()
			for i := range p.Moves {
				p.Moves[i].Topic = longTopic
			}
			return PrintRewind(b, NewRewindPlan(p), render.Table, true)
		}},
	}
	for _, v := range views {
		for _, width := range []int{80, 100, 200} {
			name := fmt.Sprintf("%s-terminal-%d", v.name, width)
			t.Run(name, func(t *testing.T) {
				t.Setenv("COLUMNS", fmt.Sprint(width))
				var b bytes.Buffer
				if err := v.print(&b); err != nil {
					t.Fatal(err)
				}
				assertFits(t, b.String(), width)
				if strings.Contains(b.String(), "…") {
					t.Errorf("a header or a cell is cut with \"…\" at %d columns:\n%s", width, b.String())
				}
				golden(t, name, b.Bytes())
			})
		}
	}
}

func TestProseWrapsAtWordBoundaries(t *testing.T) {
	got := render.Wrap("topic stranded · group kstranded-v1.10.0-auto · brokers 127.0.0.1:42503 (embedded)", 40, "  ")
	for _, l := range strings.Split(got, "\n") {
		if lipgloss.Width(l) > 40 {
			t.Fatalf("line %q is wider than 40", l)
		}
	}
	if strings.ReplaceAll(strings.ReplaceAll(got, "\n  ", " "), "\n", " ") != "topic stranded · group kstranded-v1.10.0-auto · brokers 127.0.0.1:42503 (embedded)" {
		t.Fatalf("words lost or split:\n%s", got)
	}
}

// assertFits fails for every line of out wider than width columns, ANSI stripped and
// counted in display columns (lipgloss.Width: a wide rune is two, an escape none).
func assertFits(t *testing.T, out string, width int) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if lw := lipgloss.Width(ansi.ReplaceAllString(line, "")); lw > width {
			t.Errorf("line %d is %d columns wide at %d:\n%s", i+1, lw, width, line)
		}
	}
}
