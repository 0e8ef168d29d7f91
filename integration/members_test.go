package integration

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/testenv"
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
// agree on, on either broker: the verdict; per partition the verdict, whether records were
// lost or stranded and where the loss ends (the workload's tail), the committed offset at
// the end (at each phase end, and the delivered count, for a partition with nothing lost);
// the members' names, which joined and which left, and, when nothing was lost, the records
// all members delivered. The partitions' lines are compared as a sorted list, without
// their numbers: the tests give every partition the same records, so the outcome must not
// depend on which partition the broker's assignor gave to which member (the simulated
// target is sticky in member order; kfake's and Kafka's assignors choose their own).
// Not compared: where a loss starts (and phase 1's committed offset, which is where it
// starts, and so the members' total when something was lost) and how deliveries split
// between members, which follow librdkafka's fetches (measured: live 82-99 and 80-99
// where the simulated log, interleaving runs of 81 records per partition, gives 81-99 on
// both; BENCHMARKS.md).
func groupShape(t *testing.T, r result) string {
	t.Helper()
	doc := decode[groupRunDoc](t, r)
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want 1\n%s", len(doc.Runs), r)
	}
	run := doc.Runs[0]
	tail := func(rs []rangeJSON) string {
		if len(rs) == 0 {
			return "none"
		}
		return fmt.Sprintf("ending at %d", rs[len(rs)-1].Last)
	}
	var lines []string
	lost := false
	for _, p := range run.Partitions {
		l := fmt.Sprintf("%s lost %s stranded %s", p.Verdict, tail(p.Lost), tail(p.Stranded))
		if len(p.Lost) == 0 {
			l += fmt.Sprintf(" committed %v delivered %d of %d", p.CommittedByPhase, p.Delivered, p.Produced)
		} else if n := len(p.CommittedByPhase); n > 0 {
			lost = true
			l += fmt.Sprintf(" committed at the end %d", p.CommittedByPhase[n-1])
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	var b strings.Builder
	fmt.Fprintf(&b, "verdict %s\n%s\n", run.Verdict, strings.Join(lines, "\n"))
	total := 0
	for _, m := range run.Members {
		fmt.Fprintf(&b, "%s joined %v left %v\n", m.Name, m.JoinedMs > 0, m.LeftMs != nil)
		total += m.Delivered
	}
	if !lost {
		fmt.Fprintf(&b, "members delivered %d\n", total)
	}
	return b.String()
}

// Several members in a consumer-protocol group (KIP-848: group.protocol=consumer, the
// broker's assignor, COOPERATIVE rebalances through the engine's #rebalanceCallback),
// with members leaving and joining mid-run, live and simulated. On kfake and on Apache
// Kafka 4.3.1 (make test-kafka) alike. Only the partitions that move are revoked, so the
// partition that stays keeps v1.10.0's expiry loss and the one that moves is fetched
// again by its new owner from the committed offset:
//   - two members on two partitions of 100, m2 leaves at 8m: one partition LOST (the tail
//     from about 81), the other OK;
//   - one member, m2 joins at 5m: the same (under the classic protocol the join's eager
//     revoke saves both: TestLiveAndSimulatedAgreeWhenAMemberJoins in repro);
//   - two members, m3 joins at 5m and m1 leaves at 8m, ten records on each of 20
//     partitions: both changes move partitions with records and nothing is lost.
func TestReproMembersUnderTheConsumerProtocolAgreeWithSimulate(t *testing.T) {
	testenv.MustLive(t) // a live repro at scaled time
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"a leave: the partition that stays loses its tail, the one that moves does not",
			[]string{"--members", "2", "--partitions", "2", "--spread", "0:100,1:100", "--rebalance-at", "8m:leave"}, 3},
		{"a join: the partition that stays loses its tail, the one that moves does not",
			[]string{"--partitions", "2", "--spread", "0:100,1:100", "--rebalance-at", "5m:join"}, 3},
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
