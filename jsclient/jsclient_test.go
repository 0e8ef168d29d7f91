package jsclient

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
			shape: Seed, scenario: nil, simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s"}},
		{name: "max.poll scales by 100",
			shape:    Shape{MaxPoll: 3 * time.Second},
			scenario: []string{"--max-poll-ms", "3000"}, simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--max-poll-interval", "5m0s"}},
		{name: "eachMessage is simulate's each-message",
			shape:    Shape{Handler: "eachMessage", Spread: "0:40"},
			scenario: []string{"--spread", "0:40", "--handler", "eachMessage"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--spread", "0:40", "--handler", "each-message"}},
		{name: "one record at a time is simulate's handler-parallel, its work scaled",
			shape:    Shape{Spread: "8x5", Concurrency: 2, Parallel: 1, Delay: 400 * time.Millisecond, BatchSize: 5},
			scenario: []string{"--spread", "8x5", "--concurrency", "2", "--parallel", "1", "--delay-ms", "400", "--batch-size", "5"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--spread", "8x5", "--concurrency", "2", "--handler-parallel", "1", "--handler-delay", "40s", "--batch-size", "5"}},
		{name: "the client's manual commit is simulate's --commit manual, not the ledger",
			shape:    Shape{Commit: "manual"},
			scenario: []string{"--commit", "manual"}, simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--commit", "manual"}},
		{name: "a pause from the payload scales like every other time",
			shape:    Shape{Commit: "manual", PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond},
			scenario: []string{"--commit", "manual", "--pause-at-ms", "2000", "--resume-after-ms", "500"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--commit", "manual", "--pause-at", "3m20s", "--resume-after", "50s"}},
		{name: "a member joining mid-run is scenario.js's second consumer and simulate's join, scaled",
			shape:    Shape{JoinAt: 5 * time.Second},
			scenario: []string{"--join-at-ms", "5000"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--rebalance-at", "8m20s:join"}},
		{name: "a member leaving is named on both sides: m1 unless Leave says m2",
			shape:    Shape{JoinAt: 50 * time.Millisecond, LeaveAt: 5 * time.Second},
			scenario: []string{"--join-at-ms", "50", "--leave-at-ms", "5000", "--leave", "m1"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--rebalance-at", "5s:join", "--rebalance-at", "8m20s:leave=1"}},
		{name: "a leave with one member is refused: nobody would be left",
			shape: Shape{LeaveAt: time.Second}, scenario: []string{"--leave-at-ms", "1000", "--leave", "m1"}, refused: "needs a second member"},
		{name: "a member that never joined cannot leave",
			shape: Shape{JoinAt: time.Second, LeaveAt: 2 * time.Second, Leave: 3}, scenario: []string{"--join-at-ms", "1000", "--leave-at-ms", "2000", "--leave", "m3"}, refused: "m3 is not in the group then"},
		{name: "three members, two joining at their times, are steps on both sides in time order",
			shape:    Shape{Spread: "3x150", Rebalance: []Step{{At: 9 * time.Second, Join: true}, {At: 3 * time.Second, Join: true}}},
			scenario: []string{"--spread", "3x150", "--rebalance-at", "9000:join", "--rebalance-at", "3000:join"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--spread", "3x150", "--rebalance-at", "5m0s:join", "--rebalance-at", "15m0s:join"}},
		{name: "members started together, the latest leaving, and a named one",
			shape:    Shape{Members: 3, Rebalance: []Step{{At: 4 * time.Second}, {At: 5 * time.Second, Member: 1}}},
			scenario: []string{"--members", "3", "--rebalance-at", "4000:leave", "--rebalance-at", "5000:leave=1"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--members", "3", "--rebalance-at", "6m40s:leave", "--rebalance-at", "8m20s:leave=1"}},
		{name: "JoinAt and LeaveAt come before Rebalance's steps at the same time, as in scenario.js",
			shape:    Shape{JoinAt: time.Second, LeaveAt: 2 * time.Second, Rebalance: []Step{{At: time.Second, Join: true}}},
			scenario: []string{"--join-at-ms", "1000", "--leave-at-ms", "2000", "--leave", "m1", "--rebalance-at", "1000:join"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--rebalance-at", "1m40s:join", "--rebalance-at", "1m40s:join", "--rebalance-at", "3m20s:leave=1"}},
		{name: "the last member leaving is refused",
			shape: Shape{Members: 2, Rebalance: []Step{{At: time.Second}, {At: 2 * time.Second}}}, scenario: []string{"--members", "2", "--rebalance-at", "1000:leave", "--rebalance-at", "2000:leave"},
			refused: "the last member would leave"},
		{name: "the consumer protocol (KIP-848) is a flag on both sides, the broker's heartbeat interval simulate's, scaled",
			shape:    Shape{GroupProtocol: "consumer", JoinAt: 3 * time.Second},
			scenario: []string{"--join-at-ms", "3000", "--group-protocol", "consumer"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--rebalance-at", "5m0s:join", "--group-protocol", "consumer", "--consumer-heartbeat-interval", "8m20s"}},
		{name: "a group protocol neither side has is refused",
			shape: Shape{GroupProtocol: "share"}, scenario: []string{"--group-protocol", "share"}, refused: "classic or consumer"},
		{name: "a pause from outside the handler is simulate's --pause-from outside",
			shape:    Shape{PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond, PauseFrom: "outside"},
			scenario: []string{"--pause-at-ms", "2000", "--resume-after-ms", "500", "--pause-from", "outside"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--pause-at", "3m20s", "--resume-after", "50s", "--pause-from", "outside"}},
		{name: "a pause of named partitions from outside names them to both",
			shape:    Shape{PauseAt: 3 * time.Second, ResumeAfter: 500 * time.Millisecond, PauseFrom: "outside", PausePartitions: "1,3"},
			scenario: []string{"--pause-at-ms", "3000", "--resume-after-ms", "500", "--pause-from", "outside", "--pause-partitions", "1,3"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--pause-at", "5m0s", "--resume-after", "50s", "--pause-from", "outside", "--pause-partitions", "1,3"}},
		{name: "named partitions are refused for the handler's pause",
			shape:    Shape{PauseAt: time.Second, PausePartitions: "1"},
			scenario: []string{"--pause-at-ms", "1000", "--resume-after-ms", "0", "--pause-partitions", "1"},
			refused:  "the application's pause from outside"},
		{name: "several seeks, of named partitions or the handler's own, scale their times",
			shape:    Shape{Seeks: "1:5@3s,22@5300ms"},
			scenario: []string{"--seek", "1:5@3000", "--seek", "22@5300"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--seek", "1:5@5m0s", "--seek", "22@8m50s"}},
		{name: "a seek without a time is refused",
			shape: Shape{Seeks: "1:5"}, refused: "want [P:]OFFSET@TIME"},
		{name: "the handler's commitOffsets([...]) is simulate's --commit explicit",
			shape:    Shape{Commit: "explicit", Handler: "eachMessage"},
			scenario: []string{"--handler", "eachMessage", "--commit", "explicit"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--handler", "each-message", "--commit", "explicit"}},
		{name: "a seek from the handler scales its time, not its offset",
			shape:    Shape{SeekAt: 2300 * time.Millisecond, SeekTo: 100},
			scenario: []string{"--seek-at-ms", "2300", "--seek-to", "100"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--seek-at", "3m50s", "--seek-to", "100"}},
		{name: "a seek to offset 0 is a seek",
			shape:    Shape{SeekAt: time.Second},
			scenario: []string{"--seek-at-ms", "1000", "--seek-to", "0"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--seek-at", "1m40s", "--seek-to", "0"}},
		{name: "heartbeat and the isStale() idiom are flags on both sides",
			shape:    Shape{Heartbeat: true, ResolveEachRound: true},
			scenario: []string{"--heartbeat", "--auto-resolve", "false"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "2m30s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s", "--heartbeat", "--auto-resolve=false"}},
		{name: "resolving each round is not the manual-commit handler",
			shape: Shape{Commit: "manual", ResolveEachRound: true}, scenario: []string{"--commit", "manual", "--auto-resolve", "false"}, refused: "--commit manual has its own"},
		{name: "nor the handler's explicit commit (scenario.js refuses both)",
			shape: Shape{Commit: "explicit", ResolveEachRound: true}, scenario: []string{"--commit", "explicit", "--auto-resolve", "false"}, refused: "--commit explicit has its own"},
		{name: "a cache size per worker scales like every other time",
			shape:    Shape{CacheSizePerWorker: 15 * time.Millisecond},
			scenario: []string{"--cache-size-per-worker-ms", "15"},
			simulate: []string{"--auto-commit-interval", "8m20s", "--heartbeat-interval", "2m30s", "--cache-size-per-worker", "1.5s", "--retry-wait", "1m40s", "--consume-timeout", "1m40s"}},
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

// TestScenarioJSPlansTheMembersAsTheShapeDoes runs scenario.js's own argument check
// (it runs before the client is loaded, so no install is needed): the member plans
// Shape refuses, scenario.js refuses with the same reason, and the others it accepts.
func TestScenarioJSPlansTheMembersAsTheShapeDoes(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH (make test-jsclient's tier has it)")
	}
	script := filepath.Join(t.TempDir(), "scenario.js")
	if err := os.WriteFile(script, Scenario(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shape   Shape
		refused string
	}{
		{shape: Shape{JoinAt: time.Second, LeaveAt: 2 * time.Second, Leave: 3}, refused: "m3 is not in the group then"},
		{shape: Shape{LeaveAt: time.Second}, refused: "the last member would leave"},
		{shape: Shape{Members: 2, Rebalance: []Step{{At: time.Second}, {At: 2 * time.Second}}}, refused: "the last member would leave"},
		{shape: Shape{Rebalance: []Step{{At: time.Second, Join: true}, {At: time.Second, Member: 2}, {At: time.Second}}}, refused: "the last member would leave"},
		{shape: Shape{Members: 3, Rebalance: []Step{{At: 4 * time.Second}, {At: 5 * time.Second, Member: 1}}}},
		{shape: Shape{JoinAt: 50 * time.Millisecond, LeaveAt: 5 * time.Second}},
		{shape: Shape{Rebalance: []Step{{At: 3 * time.Second, Join: true}, {At: 9 * time.Second, Join: true}}, GroupProtocol: "consumer"}},
	} {
		_, goErr := tc.shape.SimulateArgs()
		args := append([]string{script, "--brokers", "127.0.0.1:1", "--module", filepath.Join(t.TempDir(), "none")}, tc.shape.ScenarioArgs()...)
		out, err := exec.Command("node", args...).CombinedOutput()
		if err == nil {
			t.Fatalf("%v: scenario.js ran without a client", args[1:])
		}
		planned := !bytes.Contains(out, []byte("Error: leave of"))
		switch {
		case tc.refused != "" && (goErr == nil || !strings.Contains(goErr.Error(), tc.refused)):
			t.Errorf("%+v: SimulateArgs err %v, want %q", tc.shape, goErr, tc.refused)
		case tc.refused != "" && (planned || !bytes.Contains(out, []byte(tc.refused))):
			t.Errorf("%+v: scenario.js said\n%s\nwant it to refuse with %q", tc.shape, out, tc.refused)
		case tc.refused == "" && (goErr != nil || !planned || !bytes.Contains(out, []byte("Cannot find module"))):
			t.Errorf("%+v: SimulateArgs err %v; scenario.js said\n%s\nwant both to accept it (and scenario.js to stop at loading the client)", tc.shape, goErr, out)
		}
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
	// the member named delivered one distinct record; unnamed deliveries are a lone member's
	if len(l.ByMember) != 1 || l.ByMember["m2"] != 1 {
		t.Fatalf("by member %v", l.ByMember)
	}
	if !slices.Equal(l.Committed[0], []int64{6, 7}) || l.High[0] != 7 {
		t.Fatalf("committed %v high %d", l.Committed[0], l.High[0])
	}
	// the transaction's marker (5) is not a record; phase 2's record is 6
	if got := l.Records(0); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 6}) {
		t.Fatalf("records %v", got)
	}
}

// 0.x's package.json spells its version with a v (v0.2.1): the log names the release
// as the suite and --real-client name it.
func TestTheLogNamesAReleaseSpelledWithAV(t *testing.T) {
	l, err := ParseLog(strings.NewReader("scenario client=v0.2.1 librdkafka=2.5.3 node=v20 logger=default debug=- group=g topic=stranded records=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Client != "0.2.1" {
		t.Fatalf("client %q, want 0.2.1", l.Client)
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

func TestTwoEnsuresOfOneReleaseInstallItOnce(t *testing.T) {
	root := t.TempDir()
	t.Setenv("KSTRANDED_CACHE", root)
	bin, runs := t.TempDir(), filepath.Join(t.TempDir(), "npm-runs")
	// a slow npm that leaves a marker and counts its runs; the other tools do nothing
	npm := "#!/bin/sh\necho run >> " + runs + "\n/bin/sleep 0.5\n/bin/mkdir -p node_modules && echo ok > node_modules/marker\n"
	for tool, script := range map[string]string{"npm": npm, "node": "#!/bin/sh\nexit 0\n", "gcc": "", "g++": "", "make": "", "python3": ""} {
		if script == "" {
			script = "#!/bin/sh\nexit 0\n"
		}
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	var wg sync.WaitGroup
	dirs, errs := make([]string, 2), make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = Ensure(context.Background(), "1.10.1", nil)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || dirs[i] != filepath.Join(root, "jsclient-1.10.1") {
			t.Fatalf("Ensure %d = %q, %v", i, dirs[i], errs[i])
		}
	}
	got, err := os.ReadFile(runs)
	if err != nil || string(got) != "run\n" {
		t.Fatalf("npm ran %q (%v), want once: the second Ensure waits for the first's install", got, err)
	}
	if _, err := os.Stat(filepath.Join(root, "jsclient-1.10.1", "node_modules", "marker")); err != nil {
		t.Fatalf("the install the first Ensure made is gone: %v", err)
	}
}

func TestEnsureGivesUpWaitingForAnotherInstallWhenCancelled(t *testing.T) {
	root := t.TempDir()
	t.Setenv("KSTRANDED_CACHE", root)
	t.Setenv("PATH", t.TempDir()) // past the lock, Ensure would stop at the missing tools
	held, err := lockInstall(context.Background(), filepath.Join(root, "jsclient-1.10.1.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Ensure(ctx, "1.10.1", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ensure while another install holds the lock, cancelled = %v, want context.Canceled", err)
	}
}

func TestPhase2ServedIsTheOrderOfThePhase2Deliveries(t *testing.T) {
	for name, want := range map[string][]int32{
		// its summary: delivered_phase2=6:4,7:4,18:4,19:4,0:4,...,4:4,8:4,...,14:4 (5, 15,
		// 16, 17 stranded)
		"2026-12-05-fetchorder/v1.10.0-20x3-c2-1796457179.log.gz": {6, 7, 18, 19, 0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14},
		// delivered_phase2=6:6,7:6,0:6,1:6,2:6,3:6,4:6,5:6
		"v1.10.0-8x5-c2.log.gz": {6, 7, 0, 1, 2, 3, 4, 5},
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
		if !slices.Equal(l.Phase2Served, want) {
			t.Errorf("%s: phase 2 served %v, want %v", name, l.Phase2Served, want)
		}
	}
}
