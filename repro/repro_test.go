package repro

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/traceevent"
)

// testKafka returns the brokers of a real cluster when KSTRANDED_TEST_BROKERS is set
// (testenv/kafka starts one), else the embedded broker.
func testKafka(t *testing.T) kafkaconf.Config {
	t.Helper()
	var files []string
	if f := os.Getenv("KSTRANDED_TEST_CONFIG"); f != "" {
		files = append(files, f)
	}
	c, err := kafkaconf.Load(os.Getenv("KSTRANDED_TEST_BROKERS"), files, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runPolicy(t *testing.T, p eachbatch.Policy) (*Result, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a live consumer for ~15-30 s")
	}
	o := DefaultOptions()
	o.Kafka = testKafka(t)
	o.Policy = p
	var buf bytes.Buffer
	o.Trace = traceevent.NewWriter(&buf)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("Run(%s): %v", p, err)
	}
	if err := o.Trace.Flush(); err != nil {
		t.Fatal(err)
	}
	return res, buf.String()
}

func TestLiveV1100LosesRecords82To199(t *testing.T) {
	res, trace := runPolicy(t, eachbatch.V1_10_0)
	if len(res.Phases) != 2 {
		t.Fatalf("phases %d", len(res.Phases))
	}
	p := res.Partitions[0]
	if p.Partition != 0 || p.Produced != 201 {
		t.Fatalf("partition %d produced %d", p.Partition, p.Produced)
	}
	if got := res.Phases[0].Partitions[0]; got.Delivered != 82 || got.Committed != 82 {
		t.Errorf("phase 1: delivered %d committed %d, want 82 and 82", got.Delivered, got.Committed)
	}
	if got := res.Phases[1].Partitions[0]; got.Delivered != 83 || got.Committed != 202 || got.High != 202 {
		t.Errorf("phase 2: delivered %d committed %d high %d, want 83, 202, 202", got.Delivered, got.Committed, got.High)
	}
	if p.Verdict != VerdictLoss || len(p.Lost) != 1 || p.Lost[0].First != 82 || p.Lost[0].Last != 199 || p.Lost[0].Count != 118 {
		t.Errorf("verdict %s lost %+v, want LOSS 82..199 (118)", p.Verdict, p.Lost)
	}
	if res.Verdict != VerdictLoss || res.Lost() != 118 {
		t.Errorf("run verdict %s lost %d", res.Verdict, res.Lost())
	}
	for _, want := range []string{`"ev":"run"`, `"ev":"clear"`, `"last_consumed_keys":[]`, `"ev":"phase-end"`, `"ev":"verdict"`} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %s", want)
		}
	}
}

func TestLiveFixedPoliciesDeliverAll200(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_1, eachbatch.Head} {
		t.Run(string(p), func(t *testing.T) {
			res, _ := runPolicy(t, p)
			pr := res.Partitions[0]
			if pr.Delivered != 201 || pr.Verdict != VerdictOK || res.Lost() != 0 {
				t.Errorf("delivered %d verdict %s lost %d, want 201 OK 0", pr.Delivered, pr.Verdict, res.Lost())
			}
			if got := res.Phases[1].Partitions[0].Committed; got != 202 {
				t.Errorf("final commit %d, want 202", got)
			}
		})
	}
}

func TestLiveLedgerCommitStrandsInsteadOfLosingAndARestartDelivers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live consumer for ~30 s")
	}
	o := DefaultOptions()
	o.Kafka = testKafka(t)
	o.Policy, o.Commit = eachbatch.V1_10_0, CommitLedger
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Partitions[0]
	if got := p.CommittedByPhase; len(got) != 3 || got[0] != 82 || got[1] != 82 || got[2] != 202 {
		t.Errorf("committed by phase %v, want [82 82 202]", got)
	}
	if got := p.VerdictByPhase; len(got) != 3 || got[0] != VerdictStranded || got[1] != VerdictStranded || got[2] != VerdictOK {
		t.Errorf("verdict by phase %v, want STRANDED, STRANDED, OK", got)
	}
	if res.Lost() != 0 || p.Delivered != 201 || p.Duplicates < 1 {
		t.Errorf("lost %d delivered %d duplicates %d, want 0, 201 and at least 1 (record 201 again after the restart)", res.Lost(), p.Delivered, p.Duplicates)
	}
	if res.Restarts < 1 {
		t.Errorf("restarts %d", res.Restarts)
	}
}
