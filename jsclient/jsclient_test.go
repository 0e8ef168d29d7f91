package jsclient

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/exitcode"
)

func TestShapesMapToScenarioAndSimulateArguments(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shape    Shape
		scenario []string
		simulate []string
		refused  string
	}{
		{name: "the seed is every default on both sides, with the client's unscaled auto-commit interval and cache size per worker",
			shape: Seed, scenario: nil, simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s"}},
		{name: "max.poll scales by 100",
			shape:    Shape{MaxPoll: 3 * time.Second},
			scenario: []string{"--max-poll-ms", "3000"}, simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--max-poll-interval", "5m0s"}},
		{name: "eachMessage is simulate's each-message",
			shape:    Shape{Handler: "eachMessage", Spread: "0:40"},
			scenario: []string{"--spread", "0:40", "--handler", "eachMessage"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--spread", "0:40", "--handler", "each-message"}},
		{name: "one record at a time is simulate's handler-parallel, its work scaled",
			shape:    Shape{Spread: "8x5", Concurrency: 2, Parallel: 1, Delay: 400 * time.Millisecond, BatchSize: 5},
			scenario: []string{"--spread", "8x5", "--concurrency", "2", "--parallel", "1", "--delay-ms", "400", "--batch-size", "5"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--spread", "8x5", "--concurrency", "2", "--handler-parallel", "1", "--handler-delay", "40s", "--batch-size", "5"}},
		{name: "the client's manual commit is simulate's --commit manual, not the ledger",
			shape:    Shape{Commit: "manual"},
			scenario: []string{"--commit", "manual"}, simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--commit", "manual"}},
		{name: "a pause from the payload scales like every other time",
			shape:    Shape{Commit: "manual", PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond},
			scenario: []string{"--commit", "manual", "--pause-at-ms", "2000", "--resume-after-ms", "500"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--commit", "manual", "--pause-at", "3m20s", "--resume-after", "50s"}},
		{name: "a member joining mid-run is scenario.js's second consumer and simulate's join, scaled",
			shape:    Shape{JoinAt: 5 * time.Second},
			scenario: []string{"--join-at-ms", "5000"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--rebalance-at", "8m20s:join"}},
		{name: "a member leaving is named on both sides: m1 unless Leave says m2",
			shape:    Shape{JoinAt: 50 * time.Millisecond, LeaveAt: 5 * time.Second},
			scenario: []string{"--join-at-ms", "50", "--leave-at-ms", "5000", "--leave", "m1"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--rebalance-at", "5s:join", "--rebalance-at", "8m20s:leave=1"}},
		{name: "a leave with one member is refused: nobody would be left",
			shape: Shape{LeaveAt: time.Second}, scenario: []string{"--leave-at-ms", "1000", "--leave", "m1"}, refused: "needs a second member"},
		{name: "a third member is refused: scenario.js runs two",
			shape: Shape{JoinAt: time.Second, LeaveAt: 2 * time.Second, Leave: 3}, scenario: []string{"--join-at-ms", "1000", "--leave-at-ms", "2000", "--leave", "m3"}, refused: "runs m1 and m2"},
		{name: "a pause from outside the handler is simulate's --pause-from outside",
			shape:    Shape{PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond, PauseFrom: "outside"},
			scenario: []string{"--pause-at-ms", "2000", "--resume-after-ms", "500", "--pause-from", "outside"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--pause-at", "3m20s", "--resume-after", "50s", "--pause-from", "outside"}},
		{name: "a pause of named partitions from outside names them to both",
			shape:    Shape{PauseAt: 3 * time.Second, ResumeAfter: 500 * time.Millisecond, PauseFrom: "outside", PausePartitions: "1,3"},
			scenario: []string{"--pause-at-ms", "3000", "--resume-after-ms", "500", "--pause-from", "outside", "--pause-partitions", "1,3"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--pause-at", "5m0s", "--resume-after", "50s", "--pause-from", "outside", "--pause-partitions", "1,3"}},
		{name: "named partitions are refused for the handler's pause",
			shape:    Shape{PauseAt: time.Second, PausePartitions: "1"},
			scenario: []string{"--pause-at-ms", "1000", "--resume-after-ms", "0", "--pause-partitions", "1"},
			refused:  "the application's pause from outside"},
		{name: "several seeks, of named partitions or the handler's own, scale their times",
			shape:    Shape{Seeks: "1:5@3s,22@5300ms"},
			scenario: []string{"--seek", "1:5@3000", "--seek", "22@5300"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--seek", "1:5@5m0s", "--seek", "22@8m50s"}},
		{name: "a seek without a time is refused",
			shape: Shape{Seeks: "1:5"}, refused: "want [P:]OFFSET@TIME"},
		{name: "the handler's commitOffsets([...]) is simulate's --commit explicit",
			shape:    Shape{Commit: "explicit", Handler: "eachMessage"},
			scenario: []string{"--handler", "eachMessage", "--commit", "explicit"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--handler", "each-message", "--commit", "explicit"}},
		{name: "a seek from the handler scales its time, not its offset",
			shape:    Shape{SeekAt: 2300 * time.Millisecond, SeekTo: 100},
			scenario: []string{"--seek-at-ms", "2300", "--seek-to", "100"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--seek-at", "3m50s", "--seek-to", "100"}},
		{name: "a seek to offset 0 is a seek",
			shape:    Shape{SeekAt: time.Second},
			scenario: []string{"--seek-at-ms", "1000", "--seek-to", "0"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--seek-at", "1m40s", "--seek-to", "0"}},
		{name: "heartbeat and the isStale() idiom are flags on both sides",
			shape:    Shape{Heartbeat: true, ResolveEachRound: true},
			scenario: []string{"--heartbeat", "--auto-resolve", "false"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--heartbeat", "--auto-resolve=false"}},
		{name: "resolving each round is not the manual-commit handler",
			shape: Shape{Commit: "manual", ResolveEachRound: true}, scenario: []string{"--commit", "manual", "--auto-resolve", "false"}, refused: "manual commit has its own"},
		{name: "a cache size per worker scales like every other time",
			shape:    Shape{CacheSizePerWorker: 15 * time.Millisecond},
			scenario: []string{"--cache-size-per-worker-ms", "15"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "1.5s"}},
		{name: "a commit scenario.js has not is refused with its reason",
			shape: Shape{Commit: "ledger"}, scenario: []string{"--commit", "ledger"}, refused: "commits auto, manual or explicit"},
		{name: "a pause scenario.js has not is refused with its reason",
			shape: Shape{PauseAt: time.Second, PauseFrom: "timer"}, scenario: []string{"--pause-at-ms", "1000", "--resume-after-ms", "0", "--pause-from", "timer"},
			refused: "pauses from the handler or outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.shape.ScenarioArgs(); !slices.Equal(got, tc.scenario) {
				t.Errorf("scenario args %q, want %q", got, tc.scenario)
			}
			got, err := tc.shape.SimulateArgs()
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("simulate args %q, %v; want refused with %q", got, err, tc.refused)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.simulate) {
				t.Errorf("simulate args %q, %v; want %q", got, err, tc.simulate)
			}
		})
	}
}

func TestEnsureRefusesWhatIsNotARelease(t *testing.T) {
	t.Setenv("KSTRANDED_CACHE", t.TempDir())
	for _, v := range []string{"head", "1.10", "1.10.1-pr518", "v1.10.1", ""} {
		_, err := Ensure(context.Background(), v, nil)
		if !errors.Is(err, exitcode.ErrUsage) || exitcode.Code(err) != exitcode.Usage {
			t.Errorf("Ensure(%q) = %v, want a usage error (exit 2)", v, err)
		}
	}
}

func TestEnsureNamesAMissingTool(t *testing.T) {
	t.Setenv("KSTRANDED_CACHE", t.TempDir())
	bin := t.TempDir()
	// node and npm there, no C compiler
	for _, tool := range []string{"node", "npm"} {
		if err := os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	_, err := Ensure(context.Background(), "1.10.1", nil)
	if err == nil || !strings.Contains(err.Error(), "gcc is missing") || exitcode.Code(err) != exitcode.Error {
		t.Fatalf("Ensure without gcc = %v, want gcc named, exit 1", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Ensure(context.Background(), "1.10.1", nil); err == nil || !strings.Contains(err.Error(), "node is missing") {
		t.Fatalf("Ensure without node = %v, want node named", err)
	}
}

func TestEnsureReusesACachedInstallWithoutTools(t *testing.T) {
	root := t.TempDir()
	t.Setenv("KSTRANDED_CACHE", root)
	t.Setenv("PATH", t.TempDir()) // nothing to install with: the cache must be enough
	dir := filepath.Join(root, "jsclient-1.10.0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Ensure(context.Background(), "1.10.0", nil)
	if err != nil || got != dir {
		t.Fatalf("Ensure = %q, %v; want the cached %q", got, err, dir)
	}
}

func TestTheBinaryCarriesTheScenario(t *testing.T) {
	onDisk, err := os.ReadFile("scenario.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Scenario(), onDisk) || !bytes.Contains(onDisk, []byte("console.log(`delivered topic=")) {
		t.Fatal("the embedded scenario.js is not the file beside the package, or prints no delivery line")
	}
}

func TestTheLogGivesRecordsDeliveriesAndCommits(t *testing.T) {
	in := `scenario client=1.10.0 librdkafka=2.12.0 node=v22 logger=default debug=- group=g topic=stranded records=5
produced phase=1 topic=stranded partition=0 count=5 transactional=true
%7|1|CGRP|rdkafka#consumer-1| some client line partition=0 offset=9
delivered topic=stranded partition=0 offset=0
delivered topic=stranded partition=0 offset=1
delivered topic=stranded partition=0 offset=1 member=m2
member member=m2 event=join at_ms=5000
committed phase=1 topic=stranded partition=0 offset=6 low=0 high=6
produced phase=2 topic=stranded partition=0 count=1 transactional=false
delivered topic=stranded partition=0 offset=6
committed phase=2 topic=stranded partition=0 offset=7 low=0 high=7
`
	l, err := ParseLog(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// a second member's delivery line names it, and counts as any other
	if l.Client != "1.10.0" || l.Delivered[0][1] != 2 || len(l.Delivered[0]) != 3 {
		t.Fatalf("client %q deliveries %v", l.Client, l.Delivered)
	}
	if !slices.Equal(l.Committed[0], []int64{6, 7}) || l.High[0] != 7 {
		t.Fatalf("committed %v high %d", l.Committed[0], l.High[0])
	}
	// the transaction's marker (5) is not a record; phase 2's record is 6
	if got := l.Records(0); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 6}) {
		t.Fatalf("records %v", got)
	}
}

// TestFirstServedIsTheOrderOfTheFirstPhase1Deliveries reads two captures of the real
// client (testenv/jsclient/captures, FIDELITY.md): which partitions it served first is
// librdkafka's fetch list, not the partitions' numbers.
func TestFirstServedIsTheOrderOfTheFirstPhase1Deliveries(t *testing.T) {
	for name, want := range map[string][]int32{
		"v1.10.0-8x5-c2.log.gz":  {7, 0, 1, 2},
		"v1.10.1-20x3-c2.log.gz": {19, 18, 9, 10, 11, 12, 13, 5, 4, 0, 1, 2, 3},
	} {
		f, err := os.Open(filepath.Join("..", "testenv", "jsclient", "captures", name))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		l, err := ParseLog(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.FirstServed, want) {
			t.Errorf("%s: first served %v, want %v", name, l.FirstServed, want)
		}
	}
}
