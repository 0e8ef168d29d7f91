package integration

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/testenv"
)

// The repro JSON document (kstranded.repro/v2), the fields the tests read.
type reproDoc struct {
	Schema  string     `json:"schema"`
	Verdict string     `json:"verdict"`
	Lost    int        `json:"lost"`
	Runs    []reproRun `json:"runs"`
}

type reproRun struct {
	Topic    string `json:"topic"`
	Group    string `json:"group"`
	Policy   string `json:"policy"`
	Embedded bool   `json:"embedded_broker"`
	Produced struct {
		Partition int32 `json:"partition"`
		Count     int   `json:"count"`
		First     int64 `json:"first_offset"`
		Last      int64 `json:"last_offset"`
		High      int64 `json:"high_watermark"`
	} `json:"produced"`
	Phases []struct {
		Phase      int `json:"phase"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Delivered int   `json:"delivered"`
			Committed int64 `json:"committed"`
			High      int64 `json:"high_watermark"`
		} `json:"partitions"`
	} `json:"phases"`
	Partitions []struct {
		Partition        int32       `json:"partition"`
		Produced         int         `json:"produced"`
		Delivered        int         `json:"delivered"`
		CommittedByPhase []int64     `json:"committed_by_phase"`
		Lost             []rangeJSON `json:"lost"`
		LostCount        int         `json:"lost_count"`
		Stranded         []rangeJSON `json:"stranded"`
		High             int64       `json:"high_watermark"`
		Verdict          string      `json:"verdict"`
	} `json:"partitions"`
	Verdict  string   `json:"verdict"`
	Lost     int      `json:"lost"`
	Warnings []string `json:"warnings"`
	Members  []struct {
		Name      string `json:"name"`
		Delivered int    `json:"delivered"`
	} `json:"members"`
	FetchOrders []struct {
		FirstPartition int32   `json:"first_partition"`
		Order          []int32 `json:"order"`
		Phase2Order    []int32 `json:"phase2_order"`
		EveryOrder     bool    `json:"every_order"`
		Partitions     []struct {
			Partition int32       `json:"partition"`
			Verdict   string      `json:"verdict"`
			Lost      []rangeJSON `json:"lost"`
			Committed int64       `json:"committed"`
		} `json:"partitions"`
	} `json:"fetch_orders"`
}

type rangeJSON struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	Count int64 `json:"count"`
}

// reproLimit bounds one policy run: at the default time scale ~13-25 s (v1.10.0) and
// ~30-60 s (v1.10.1, head), more on a busy machine.
const reproLimit = 4 * time.Minute

// reproArgs are the arguments of one policy run against brokers (plus extra). They are
// the same in both modes: repro recognises kfake behind --brokers by its cluster ID and
// shortens fetch.wait.max.ms there (5 s in the scenario; both brokers hold a fetch that
// finds no records that long, and the modeled consumer's seeks wait for it), which
// keeps `make test` short; the real broker runs the scenario's settings, as users do.
// The verdicts are the same either way (testenv/kafka/README.md, "Differences from
// kfake").
func reproArgs(brokers, policy string, extra ...string) []string {
	args := []string{"repro", "--brokers", brokers, "--policy", policy, "-o", "json", "--timeout", "30s"}
	return append(args, extra...)
}

// runRepro runs one policy and returns its single run, checking what every run must
// show whatever the policy: the schema, one run on partition 0, the producer's
// transaction, and the commit marker at offset 200.
func runRepro(t *testing.T, policy string, wantCode int, args []string) reproRun {
	t.Helper()
	r := kstranded(t, reproLimit, args...)
	if r.Code != wantCode {
		t.Fatalf("exit %d, want %d\n%s", r.Code, wantCode, r)
	}
	doc := decode[reproDoc](t, r)
	if doc.Schema != "kstranded.repro/v2" || len(doc.Runs) != 1 {
		t.Fatalf("schema %q with %d runs, want kstranded.repro/v2 with 1\n%s", doc.Schema, len(doc.Runs), r)
	}
	run := doc.Runs[0]
	if run.Policy != policy || run.Embedded {
		t.Errorf("run policy %q embedded %v, want %s on the given brokers", run.Policy, run.Embedded, policy)
	}
	if len(run.Warnings) > 0 {
		t.Errorf("warnings: %v", run.Warnings)
	}
	assertMarkerAt200(t, run)
	if len(run.Partitions) != 1 || run.Partitions[0].Partition != 0 || run.Partitions[0].Produced != 201 {
		t.Fatalf("want one partition (0) with 201 records produced, got %+v", run.Partitions)
	}
	return run
}

// assertMarkerAt200 checks that offset 200 is the transaction's commit marker, not a
// record: the 200 records are offsets 0-199, the high watermark after phase 1 is 201,
// and phase 2's record lands at 201 (high watermark 202).
func assertMarkerAt200(t *testing.T, run reproRun) {
	t.Helper()
	p := run.Produced
	if p.Partition != 0 || p.Count != 200 || p.First != 0 || p.Last != 199 || p.High != 201 {
		t.Errorf("produced partition %d: %d records, offsets %d-%d, high watermark %d; want 200 records, offsets 0-199, high watermark 201 (the commit marker takes offset 200)",
			p.Partition, p.Count, p.First, p.Last, p.High)
	}
	if len(run.Phases) != 2 {
		t.Fatalf("%d phases, want 2", len(run.Phases))
	}
	for i, wantHigh := range []int64{201, 202} {
		ps := run.Phases[i].Partitions
		if len(ps) != 1 || ps[0].Partition != 0 || ps[0].High != wantHigh {
			t.Errorf("phase %d: partitions %+v, want partition 0 with high watermark %d", i+1, ps, wantHigh)
		}
	}
	for _, part := range run.Partitions {
		for _, l := range part.Lost {
			if l.Last >= 200 && l.First <= 200 {
				t.Errorf("partition %d: lost range %d-%d covers offset 200, the commit marker", part.Partition, l.First, l.Last)
			}
		}
	}
}

// The v1.10.0 run is shared: inspect reads the group and topic it keeps. It goes over
// the mTLS listener when there is one, so repro over mTLS is covered without another run.
type lossFixture struct {
	run     reproRun
	trace   string // the run's kstranded.trace/v1 file
	brokers string // the listener the run used
}

var loss struct {
	once sync.Once
	f    *lossFixture
}

func lossRun(t *testing.T) *lossFixture {
	t.Helper()
	loss.once.Do(func() {
		trace := filepath.Join(workDir, "v1.10.0.trace.jsonl")
		brokers, extra := env.Brokers, []string{"--keep", "--trace", trace}
		if env.SSLBrokers != "" {
			brokers = env.SSLBrokers
			extra = append(extra, "--config", env.SSLConfig)
		}
		run := runRepro(t, "v1.10.0", 3, reproArgs(brokers, "v1.10.0", extra...))
		keep(run.Topic)
		keepGroup(run.Group)
		loss.f = &lossFixture{run: run, trace: trace, brokers: brokers}
	})
	if loss.f == nil {
		t.Fatal("the shared v1.10.0 repro run failed (see the first test that ran it)")
	}
	return loss.f
}

func TestReproV1100LosesRecords82To199(t *testing.T) {
	testenv.MustLive(t) // the live v1.10.0 run (lossRun)
	f := lossRun(t)
	t.Logf("ran over %s", f.brokers)
	run := f.run
	if run.Verdict != "LOST" || run.Lost != 118 {
		t.Errorf("verdict %s lost %d, want LOST 118", run.Verdict, run.Lost)
	}
	if got := run.Phases[0].Partitions[0]; got.Delivered != 82 || got.Committed != 82 {
		t.Errorf("phase 1: delivered %d committed %d, want 82 and 82", got.Delivered, got.Committed)
	}
	if got := run.Phases[1].Partitions[0]; got.Delivered != 83 || got.Committed != 202 {
		t.Errorf("phase 2: delivered %d committed %d, want 83 and 202 (auto-commit moved past 82-199)", got.Delivered, got.Committed)
	}
	p := run.Partitions[0]
	if p.Verdict != "LOST" || p.LostCount != 118 || !slices.Equal(p.Lost, []rangeJSON{{82, 199, 118}}) {
		t.Errorf("partition 0: verdict %s lost %+v (%d), want LOST [82-199] (118)", p.Verdict, p.Lost, p.LostCount)
	}
	if !slices.Equal(p.CommittedByPhase, []int64{82, 202}) {
		t.Errorf("committed by phase %v, want [82 202]", p.CommittedByPhase)
	}
}

func TestReproFixedPoliciesLoseNothing(t *testing.T) {
	testenv.MustLive(t) // a live repro at scaled time
	for _, policy := range []string{"v1.10.1", "head"} {
		t.Run(policy, func(t *testing.T) {
			run := runRepro(t, policy, 0, reproArgs(env.Brokers, policy))
			keepGroup(run.Group)
			p := run.Partitions[0]
			if run.Verdict != "OK" || run.Lost != 0 || p.Verdict != "OK" || len(p.Lost) != 0 || len(p.Stranded) != 0 || p.Delivered != 201 {
				t.Errorf("verdict %s lost %d; partition 0: verdict %s delivered %d lost %+v stranded %+v; want OK, all 201 records delivered",
					run.Verdict, run.Lost, p.Verdict, p.Delivered, p.Lost, p.Stranded)
			}
			// Phase 1 commits 200, the offset after the last record delivered, not 201:
			// the consumer never delivers the marker, it stores offsets itself.
			if !slices.Equal(p.CommittedByPhase, []int64{200, 202}) {
				t.Errorf("committed by phase %v, want [200 202]", p.CommittedByPhase)
			}
			if !topicGone(t, run.Topic) {
				t.Errorf("topic %s still exists after a run without --keep", run.Topic)
				keep(run.Topic)
			}
		})
	}
}
