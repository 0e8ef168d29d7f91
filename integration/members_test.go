package integration

import (
	"fmt"
	"strings"
	"testing"
)

// The group document of repro and simulate JSON, the fields the members test reads.
type groupRunDoc struct {
	Verdict string `json:"verdict"`
	Runs    []struct {
		Simulated  bool `json:"simulated"`
		Partitions []struct {
			Partition        int32       `json:"partition"`
			Produced         int         `json:"produced"`
			Delivered        int         `json:"delivered"`
			CommittedByPhase []int64     `json:"committed_by_phase"`
			Lost             []rangeJSON `json:"lost"`
			Stranded         []rangeJSON `json:"stranded"`
			Verdict          string      `json:"verdict"`
		} `json:"partitions"`
		Members []struct {
			Name      string   `json:"name"`
			Delivered int      `json:"delivered"`
			JoinedMs  float64  `json:"joined_ms"`
			LeftMs    *float64 `json:"left_ms"`
		} `json:"members"`
		Verdict  string   `json:"verdict"`
		Warnings []string `json:"warnings"`
	} `json:"runs"`
}

// groupShape is what a live group run and the simulation of the same settings must
// agree on, on either broker: per partition the verdict, whether records were lost or
// stranded and where the loss ends (the workload's tail), the committed offset at the end
// (at each phase end, and the delivered count, for a partition with nothing lost); the
// members' names, which joined and which left, and the records delivered by all of them.
// Not compared: where a loss starts (and phase 1's committed offset, which is where it
// starts) and how deliveries split between members, which
// follow librdkafka's fetches (measured: live 82-99 and 80-99 where the simulated log,
// interleaving runs of 81 records per partition, gives 81-99 on both; BENCHMARKS.md).
func groupShape(t *testing.T, r result) string {
	t.Helper()
	doc := decode[groupRunDoc](t, r)
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want 1\n%s", len(doc.Runs), r)
	}
	run := doc.Runs[0]
	var b strings.Builder
	fmt.Fprintf(&b, "verdict %s\n", run.Verdict)
	tail := func(rs []rangeJSON) string {
		if len(rs) == 0 {
			return "none"
		}
		return fmt.Sprintf("ending at %d", rs[len(rs)-1].Last)
	}
	for _, p := range run.Partitions {
		fmt.Fprintf(&b, "p%d %s lost %s stranded %s", p.Partition, p.Verdict, tail(p.Lost), tail(p.Stranded))
		if len(p.Lost) == 0 {
			fmt.Fprintf(&b, " committed %v delivered %d of %d", p.CommittedByPhase, p.Delivered, p.Produced)
		} else if n := len(p.CommittedByPhase); n > 0 {
			// Phase 1 ends committed where the loss starts: left out with it.
			fmt.Fprintf(&b, " committed at the end %d", p.CommittedByPhase[n-1])
		}
		b.WriteString("\n")
	}
	total := 0
	for _, m := range run.Members {
		fmt.Fprintf(&b, "%s joined %v left %v\n", m.Name, m.JoinedMs > 0, m.LeftMs != nil)
		total += m.Delivered
	}
	fmt.Fprintf(&b, "members delivered %d\n", total)
	return b.String()
}

// Several members in a consumer-protocol group (KIP-848: group.protocol=consumer, the
// broker's assignor, COOPERATIVE rebalances through the engine's #rebalanceCallback),
// with members leaving and joining mid-run, live and simulated. On kfake and on Apache
// Kafka 4.3.1 (make test-kafka) alike.
//   - two members, m2 leaves at 8m, records on p0 and p1 of 20 partitions: the broker
//     gives m1 both p0 and p1 (as the simulated sticky target does), m2's leave moves no
//     partition with records, and v1.10.0 loses the tail of both at the expiry clear, as
//     with one member: LOST;
//   - two members, m3 joins at 5m and m1 leaves at 8m, ten records on each of the 20
//     partitions: both changes move partitions with records (incrementalUnassign and
//     markStale of the revoked ones only), their new owners start at the committed
//     offsets, and nothing is lost: OK.
func TestReproMembersUnderTheConsumerProtocolAgreeWithSimulate(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"a leave that moves no partition with records: LOST as with one member",
			[]string{"--members", "2", "--spread", "0:100,1:100", "--rebalance-at", "8m:leave"}, 3},
		{"a join and a leave that move partitions with records: OK",
			[]string{"--members", "2", "--spread", "20x10", "--rebalance-at", "5m:join", "--rebalance-at", "8m:leave=1"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			common := append([]string{"--group-protocol", "consumer", "--policy", "v1.10.0", "-o", "json"}, tc.args...)
			sim := kstranded(t, reproLimit, append([]string{"simulate"}, common...)...)
			if sim.Code != tc.code {
				t.Fatalf("simulate exit %d, want %d\n%s", sim.Code, tc.code, sim)
			}
			live := kstranded(t, reproLimit, append([]string{"repro", "--brokers", env.Brokers, "--timeout", "30s"}, common...)...)
			if live.Code != tc.code {
				t.Fatalf("repro exit %d, want %d (simulate's)\n%s", live.Code, tc.code, live)
			}
			got, want := groupShape(t, live), groupShape(t, sim)
			t.Logf("repro on %s in %s:\n%s", env.name(), live.Elapsed.Round(100_000_000), got)
			if got != want {
				t.Errorf("repro and simulate differ:\nrepro:\n%s\nsimulate:\n%s\n%s", got, want, live)
			}
			if doc := decode[groupRunDoc](t, live); len(doc.Runs) == 1 && len(doc.Runs[0].Warnings) > 0 {
				t.Logf("warnings: %v", doc.Runs[0].Warnings)
			}
		})
	}
}
