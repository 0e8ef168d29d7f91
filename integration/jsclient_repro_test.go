package integration

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// `kstranded repro --real-client` end to end (make test-jsclient): the seed on the real
// 1.10.0 beside the model (--compare-model), on the embedded broker, judged by repro's
// judge. The real client loses 82-199 and commits 202, as the agreement suite's seed.
func TestJSClientReproRealClientLosesTheSeedsRecordsAsTheModelDoes(t *testing.T) {
	if os.Getenv("KSTRANDED_TEST_JSCLIENT") == "" {
		t.Skip("the real confluent-kafka-javascript runs with make test-jsclient (KSTRANDED_TEST_JSCLIENT=1); CI runs it")
	}
	start := time.Now()
	r := kstranded(t, 10*time.Minute, "repro", "--real-client", "--client", "1.10.0", "--compare-model", "-o", "json")
	t.Logf("repro --real-client --client 1.10.0 --compare-model: exit %d in %s", r.Code, time.Since(start).Round(time.Second))
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3 (lost)\n%s", r.Code, r)
	}
	var doc struct {
		Runs []struct {
			Client     string `json:"client"`
			Partitions []struct {
				Partition        int32       `json:"partition"`
				Verdict          string      `json:"verdict"`
				Lost             []rangeJSON `json:"lost"`
				CommittedByPhase []int64     `json:"committed_by_phase"`
			} `json:"partitions"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	want := []string{"@confluentinc/kafka-javascript 1.10.0", "model (simulated)"}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want the real client's and the model's\n%s", len(doc.Runs), r)
	}
	for i, run := range doc.Runs {
		if run.Client != want[i] || len(run.Partitions) != 1 {
			t.Fatalf("run %d: client %q, %d partitions; want %q on one\n%s", i, run.Client, len(run.Partitions), want[i], r)
		}
		p := run.Partitions[0]
		c := p.CommittedByPhase
		if p.Verdict != "LOST" || ranges(p.Lost) != "82-199" || len(c) == 0 || c[len(c)-1] != 202 {
			t.Errorf("%s: %s %s committed %v; want LOST 82-199 committed 202", run.Client, p.Verdict, ranges(p.Lost), c)
		}
	}
}
