package integration

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/testenv"
)

// The inspect JSON document (kstranded.inspect/v2), the fields the tests read.
type inspectDoc struct {
	Schema  string `json:"schema"`
	Summary struct {
		Partitions     int   `json:"partitions"`
		Judged         int   `json:"judged"`
		LostPartitions int   `json:"lost_partitions"`
		Lost           int64 `json:"lost"`
		Pending        int64 `json:"pending"`
		Delivered      int64 `json:"delivered"`
	} `json:"summary"`
	Complete   bool `json:"complete"`
	Partitions []struct {
		Topic         string `json:"topic"`
		Partition     int32  `json:"partition"`
		Committed     int64  `json:"committed"`
		LastStable    int64  `json:"last_stable_offset"`
		HighWatermark int64  `json:"high_watermark"`
		Judgement     *struct {
			Delivered      int64       `json:"delivered"`
			Lost           []rangeJSON `json:"lost"`
			LostCount      int64       `json:"lost_count"`
			Stranded       []rangeJSON `json:"stranded"`
			SafeRewind     *int64      `json:"safe_rewind_offset"`
			NotDeliverable []struct {
				First int64  `json:"first"`
				Last  int64  `json:"last"`
				What  string `json:"what"`
			} `json:"not_deliverable"`
			Verdict string `json:"verdict"`
		} `json:"judgement"`
	} `json:"partitions"`
}

// TestInspectFindsTheLossOfV1100 reads the group the v1.10.0 repro run kept, with the
// run's trace as delivery evidence, over each listener the broker has.
func TestInspectFindsTheLossOfV1100(t *testing.T) {
	testenv.MustLive(t) // reads the group and trace of the live v1.10.0 run (lossRun)
	f := lossRun(t)
	listeners := []struct {
		name string
		args []string
	}{
		{"plaintext", []string{"--brokers", env.Brokers}},
		{"mTLS", []string{"--brokers", env.SSLBrokers, "--config", env.SSLConfig}},
	}
	for _, l := range listeners {
		t.Run(l.name, func(t *testing.T) {
			if l.name == "mTLS" && env.SSLBrokers == "" {
				t.Skip(skipNoSSL)
			}
			args := append(append([]string{"inspect"}, l.args...), "--group", f.run.Group, "--delivered", f.trace, "--timeout", "20s", "-o", "json")
			r := kstranded(t, time.Minute, args...)
			if r.Code != 3 {
				t.Fatalf("exit %d, want 3 (records lost)\n%s", r.Code, r)
			}
			doc := decode[inspectDoc](t, r)
			if doc.Schema != "kstranded.inspect/v2" || !doc.Complete {
				t.Errorf("schema %q complete %v", doc.Schema, doc.Complete)
			}
			if s := doc.Summary; s.Partitions != 1 || s.LostPartitions != 1 || s.Lost != 118 || s.Pending != 0 || s.Delivered != 83 {
				t.Errorf("summary %+v, want 1 partition, 118 lost, 0 pending, 83 delivered", s)
			}
			if len(doc.Partitions) != 1 {
				t.Fatalf("partitions %+v, want partition 0 of %s only", doc.Partitions, f.run.Topic)
			}
			p := doc.Partitions[0]
			if p.Topic != f.run.Topic || p.Partition != 0 || p.Committed != 202 || p.LastStable != 202 || p.HighWatermark != 202 {
				t.Errorf("%s/%d committed %d last stable %d high watermark %d, want %s/0 at 202, 202, 202",
					p.Topic, p.Partition, p.Committed, p.LastStable, p.HighWatermark, f.run.Topic)
			}
			j := p.Judgement
			if j == nil {
				t.Fatal("partition 0 has no judgement")
			}
			if j.Verdict != "LOST" || j.LostCount != 118 || !slices.Equal(j.Lost, []rangeJSON{{82, 199, 118}}) || j.SafeRewind == nil || *j.SafeRewind != 82 {
				t.Errorf("judgement %s lost %+v (%d) safe rewind %v, want LOST [82-199] (118), rewind to 82", j.Verdict, j.Lost, j.LostCount, j.SafeRewind)
			}
			marker := false
			for _, n := range j.NotDeliverable {
				if n.First == 200 && n.Last == 200 && strings.Contains(n.What, "control marker") {
					marker = true
				}
			}
			if !marker {
				t.Errorf("offset 200 not classified as a control marker: not_deliverable %+v", j.NotDeliverable)
			}
		})
	}
}
