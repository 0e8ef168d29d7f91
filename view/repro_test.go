package view

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// seedLoss is the v1.10.0 outcome as repro reports it (values from a real run).
func seedLoss() *repro.Result {
	offs := make([]int64, 200)
	for i := range offs {
		offs[i] = int64(i)
	}
	return &repro.Result{
		RunID: "04e9d516", Topic: "stranded", Group: "kstranded-v1.10.0-auto-04e9d516", Brokers: "127.0.0.1:42503", Embedded: true,
		Policy: eachbatch.V1_10_0, Commit: repro.CommitAuto,
		Settings: map[string]string{"time_scale": "0.01", "batch_size": "20", "concurrency": "20", "handler_delay": "40s",
			"handler_parallel": "3", "max_poll_interval": "15m0s"},
		Produced: repro.ProduceResult{Topic: "stranded", Spec: workload.Seed(), Partitions: []repro.ProducedPartition{{Partition: 0, Offsets: offs, High: 201}}},
		Phases: []repro.Phase{
			{N: 1, Elapsed: 12900 * time.Millisecond, Partitions: []repro.PhasePartition{{Partition: 0, Delivered: 82, Committed: 82, Frontier: 82, High: 201, Verdict: "STRANDED", Stranded: 118}}},
			{N: 2, Elapsed: 13500 * time.Millisecond, Partitions: []repro.PhasePartition{{Partition: 0, Delivered: 83, Committed: 202, Frontier: 82, High: 202, Verdict: verdict.Lost, Lost: 118}}},
		},
		Partitions: []repro.PartitionResult{{
			Partition: 0, Produced: 201, High: 202, CommittedByPhase: []int64{82, 202}, FrontierByPhase: []int64{82, 82},
			VerdictByPhase: []verdict.Verdict{verdict.Stranded, verdict.Lost},
			PartitionVerdict: repro.PartitionVerdict{Records: 201, Delivered: 83, Verdict: verdict.Lost,
				Lost: []traceevent.Range{{Partition: 0, RecordRange: kpart.Counted(82, 199, 118)}}},
		}},
		Verdict: verdict.Lost, LossAt: 12800 * time.Millisecond, Elapsed: 13500 * time.Millisecond, Complete: true,
	}
}

// brokerDied is a run whose broker was killed in phase 1 (values from a real run with
// `kstranded broker` killed by SIGKILL): 82 records delivered, the rest not yet.
func brokerDied() *repro.Result {
	r := seedLoss()
	r.Phases, r.LossAt = nil, 0
	r.Partitions[0].CommittedByPhase, r.Partitions[0].FrontierByPhase, r.Partitions[0].VerdictByPhase = nil, nil, nil
	r.Partitions[0].PartitionVerdict = repro.PartitionVerdict{Records: 201, Delivered: 83, Verdict: verdict.Incomplete,
		Stranded: []traceevent.Range{{Partition: 0, RecordRange: kpart.Counted(83, 200, 118)}}}
	r.Verdict, r.Complete = verdict.Incomplete, false
	r.Error = "broker unreachable: the consumer reported errors and no answer came for 5.1s (a phase ends after half of --timeout); last error: 1/1 brokers are down"
	return r
}

func TestARunCutShortSaysSoAndCarriesNoVerdictItDidNotReach(t *testing.T) {
	v := NewRepro([]*repro.Result{brokerDied()})
	if v.Complete || v.Runs[0].Complete || v.Verdict != verdict.Incomplete {
		t.Fatalf("a run cut short must be incomplete with verdict INCOMPLETE: %+v", v)
	}
	var table, doc bytes.Buffer
	if err := PrintRepro(&table, v, render.Table, false); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(table.String(), "\n")
	for _, want := range []string{"INCOMPLETE", "stopped in phase 1", "broker unreachable", "83 records delivered", "118 not delivered so far"} {
		if !strings.Contains(head, want) {
			t.Errorf("the headline %q does not say %q", head, want)
		}
	}
	for _, never := range []string{"STRANDED", "LOST", "OK"} {
		if strings.Contains(head, never) {
			t.Errorf("the headline %q carries %s, a verdict the run never reached", head, never)
		}
	}
	if err := PrintRepro(&doc, v, render.JSON, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"complete": false`, `"error": "broker unreachable`, `"verdict": "INCOMPLETE"`} {
		if !strings.Contains(doc.String(), want) {
			t.Errorf("the JSON does not say %s:\n%s", want, doc.String())
		}
	}
	if strings.Contains(doc.String(), `"verdict": "STRANDED"`) {
		t.Errorf("the JSON carries STRANDED for a run that never reached it")
	}
}

var (
	ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// the build's version differs between builds; golden files say "VERSION"
	jsonVersion = regexp.MustCompile(`"_version": "[^"]*"`)
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = ansi.ReplaceAll(got, nil)
	got = jsonVersion.ReplaceAll(got, []byte(`"_version": "VERSION"`))
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./view -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestReproViewOfTheSeedLoss(t *testing.T) {
	v := NewRepro([]*repro.Result{seedLoss()})
	if v.Verdict != "LOST" || v.Lost != 118 || *v.Runs[0].Partitions[0].SafeRewind != 82 {
		t.Fatalf("view %+v", v)
	}
	for _, c := range []struct {
		name   string
		format render.Format
		pretty bool
	}{{"repro-loss-pipe", render.Table, false}, {"repro-loss-terminal", render.Table, true}, {"repro-loss-json", render.JSON, false}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintRepro(&b, v, c.format, c.pretty); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

func TestAComparisonOfSeveralRunsIsOneTable(t *testing.T) {
	ok := seedLoss()
	ok.Policy, ok.Verdict = eachbatch.Head, "OK"
	ok.Partitions[0].PartitionVerdict = repro.PartitionVerdict{Records: 201, Delivered: 201, Verdict: "OK"}
	ok.Partitions[0].CommittedByPhase, ok.Partitions[0].FrontierByPhase = []int64{200, 202}, []int64{201, 202}
	ok.Partitions[0].VerdictByPhase = []verdict.Verdict{verdict.OK, verdict.OK}
	ok.LossAt = 0
	v := NewRepro([]*repro.Result{seedLoss(), ok})
	if v.Verdict != "LOST" || v.Lost != 118 {
		t.Fatalf("overall verdict %s lost %d: any loss makes the comparison a loss", v.Verdict, v.Lost)
	}
	var b bytes.Buffer
	if err := PrintRepro(&b, v, render.Table, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "repro-comparison-pipe", b.Bytes())
}

// The live progress line is redrawn in place with "\r": wider than the terminal, it
// wrapped and left a fragment at every redraw (at 100 columns repro's line was 105).
// It fits by dropping the least telling parts first, then by cutting with "…".
func TestProgressLineFitsTheTerminal(t *testing.T) {
	p := repro.Progress{Phase: 1, Elapsed: 9200 * time.Millisecond}
	p.Delivered, p.Cached, p.InFlight, p.UntilClear = 62, 138, 1, 900*time.Millisecond
	label := "v1.10.0/each-batch/auto"
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, "v1.10.0/each-batch/auto phase 1 · delivered 62 · cached 138 · in flight 1 · cache expires in 900ms · 9.2s"},
		{100, "v1.10.0/each-batch/auto phase 1 · delivered 62 · cached 138 · cache expires in 900ms · 9.2s"},
		{80, "v1.10.0/each-batch/auto phase 1 · delivered 62 · cache expires in 900ms · 9.2s"},
		{75, "v1.10.0/each-batch/auto phase 1 · delivered 62 · cache expires in 900ms"},
		{50, "v1.10.0/each-batch/auto phase 1 · delivered 62"},
		{20, "v1.10.0/each-batch/…"},
	} {
		got := ProgressLine(label, p, c.width)
		if got != c.want {
			t.Errorf("at %d columns:\n got %q\nwant %q", c.width, got, c.want)
		}
		if c.width > 0 && lipgloss.Width(got) > c.width {
			t.Errorf("at %d columns the line is %d wide", c.width, lipgloss.Width(got))
		}
	}
}

// The header says the batch the handler got, not only the one asked for: a release without
// js.consumer.max.batch.size batches 32 whatever --batch-size says (the engine's warning
// says so too), and eachMessage has no batch.
func TestTheSettingsLineSaysTheBatchTheHandlerGot(t *testing.T) {
	s := map[string]string{"time_scale": "1", "batch_size": "20", "concurrency": "20", "handler_delay": "40s",
		"handler_parallel": "3", "max_poll_interval": "15m0s"}
	for _, c := range []struct {
		policy  eachbatch.Policy
		handler eachbatch.Handler
		batch   string
		want    string
	}{
		{eachbatch.V1_10_0, eachbatch.EachBatch, "20", "· batch 20 × concurrency 20 ·"},
		{eachbatch.V1_10_0, "", "20", "· batch 20 × concurrency 20 ·"},
		{eachbatch.V1_6_0, eachbatch.EachBatch, "20", "· batch 32 (v1.6.0's fixed size; --batch-size 20 not applied) × concurrency 20 ·"},
		{eachbatch.V0_2_0, "", "20", "· batch 32 (v0.2.0's fixed size; --batch-size 20 not applied) × concurrency 20 ·"},
		{eachbatch.V1_6_0, eachbatch.EachBatch, "32", "· batch 32 × concurrency 20 ·"},
		{eachbatch.V1_10_1, eachbatch.EachMessage, "20", "· eachMessage × concurrency 20 · 40s per record, one at a time (eachMessage) ·"},
		{eachbatch.V1_10_1, eachbatch.EachMessage, "-1", "· eachMessage (max.batch.size -1: cache unbounded) × concurrency 20 ·"},
		{eachbatch.V1_6_0, eachbatch.EachMessage, "20", "· eachMessage × concurrency 20 ·"},
	} {
		s["batch_size"] = c.batch
		got := "· " + settingsLine(s, string(c.policy), string(c.handler)) + " ·"
		if !strings.Contains(got, c.want) {
			t.Errorf("%s/%s batch %s: %q, want it to hold %q", c.policy, c.handler, c.batch, got, c.want)
		}
	}
}
