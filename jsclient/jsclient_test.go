package jsclient

import (
	"bytes"
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
			shape: Seed, scenario: nil, simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "2m30s"}},
		{name: "max.poll scales by 100",
			shape:    Shape{MaxPoll: 3 * time.Second},
			scenario: []string{"--max-poll-ms", "3000"}, simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "2m30s", "--max-poll-interval", "5m0s"}},
		{name: "eachMessage is simulate's each-message",
			shape:    Shape{Handler: "eachMessage", Spread: "0:40"},
			scenario: []string{"--spread", "0:40", "--handler", "eachMessage"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "2m30s", "--spread", "0:40", "--handler", "each-message"}},
		{name: "one record at a time is simulate's handler-parallel, its work scaled",
			shape:    Shape{Spread: "8x5", Concurrency: 2, Parallel: 1, Delay: 400 * time.Millisecond, BatchSize: 5},
			scenario: []string{"--spread", "8x5", "--concurrency", "2", "--parallel", "1", "--delay-ms", "400", "--batch-size", "5"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "2m30s", "--spread", "8x5", "--concurrency", "2", "--handler-parallel", "1", "--handler-delay", "40s", "--batch-size", "5"}},
		{name: "the client's manual commit is simulate's --commit manual, not the ledger",
			shape:    Shape{Commit: "manual"},
			scenario: []string{"--commit", "manual"}, simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "2m30s", "--commit", "manual"}},
		{name: "a pause from the payload scales like every other time",
			shape:    Shape{Commit: "manual", PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond},
			scenario: []string{"--commit", "manual", "--pause-at-ms", "2000", "--resume-after-ms", "500"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "2m30s", "--commit", "manual", "--pause-at", "3m20s", "--resume-after", "50s"}},
		{name: "a cache size per worker scales like every other time",
			shape:    Shape{CacheSizePerWorker: 15 * time.Millisecond},
			scenario: []string{"--cache-size-per-worker-ms", "15"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--cache-size-per-worker", "1.5s"}},
		{name: "a commit scenario.js has not is refused with its reason",
			shape: Shape{Commit: "ledger"}, scenario: []string{"--commit", "ledger"}, refused: "commits auto or manual"},
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
delivered topic=stranded partition=0 offset=1
committed phase=1 topic=stranded partition=0 offset=6 low=0 high=6
produced phase=2 topic=stranded partition=0 count=1 transactional=false
delivered topic=stranded partition=0 offset=6
committed phase=2 topic=stranded partition=0 offset=7 low=0 high=7
`
	l, err := ParseLog(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
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
