package repro

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// 0.x's consume call waits for its first record whatever it serves meanwhile: the
// first generation's one worker (spawned before the assignment: workersToSpawn is
// max(1, min(concurrency, #partitionCount)), 0 partitions) is in a consume call when the
// assignment comes; the call goes on to return the first record, which that worker
// handles before it ends and the two workers of the next generation spawn. The real
// 0.2.1 and 0.2.0 log it so ("Spawning 1 workers", a fetch of 1, its record delivered,
// then "Spawning 2 workers": the 20x3-c2 captures of FIDELITY.md). A call ended by the
// rebalance had the second generation spawn at once, a record earlier.
func TestV020TheConsumeCallThatServedTheAssignmentReturnsItsFirstRecord(t *testing.T) {
	o := DefaultOptions()
	o.Policy, o.Concurrency, o.Partitions = eachbatch.V0_2_0, 2, 2
	o.Workload = workload.Spec{Parts: []workload.Part{{Partition: 0, Records: 3}, {Partition: 1, Records: 3}}, Transactions: 1}
	var buf bytes.Buffer
	o.Trace = traceevent.NewWriter(&buf)
	simulate(t, o)
	if err := o.Trace.Flush(); err != nil {
		t.Fatal(err)
	}
	var seq []string // spawn n, serve by worker, batch-end by worker: the first five
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && len(seq) < 5 {
		ev, err := traceevent.Decode(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Ev {
		case traceevent.Spawn:
			seq = append(seq, "spawn "+strconv.Itoa(ev.N))
		case traceevent.Serve:
			seq = append(seq, "serve w"+strconv.Itoa(ev.Worker))
		case traceevent.BatchEnd:
			seq = append(seq, "end w"+strconv.Itoa(ev.Worker))
		}
	}
	want := []string{"spawn 1", "serve w1", "end w1", "spawn 2", "serve w2"}
	if !slices.Equal(seq, want) {
		t.Fatalf("events %v, want %v", seq, want)
	}
}

// A revoke served inside 0.x's waiting consume call: librdkafka pauses every assigned
// partition before it hands the application a rebalance and resumes them only at its
// unassign, which #rebalanceCallback queues as a pending operation that waits for this
// call. So the call returns nothing until its timeout, and no record is taken only to be
// dropped as the worker breaks for the operation. Here (the consumer protocol, m2 joining
// at 1 s) the model's call used to read on, take partition 1's 92-123 and drop them: a
// loss the real client does not have.
func TestV020AWaitingCallTakesNothingWhileARevokeWaitsForItsUnassign(t *testing.T) {
	o := DefaultOptions()
	o.Policy, o.Concurrency, o.GroupProtocol = eachbatch.V0_2_0, 1, "consumer"
	o.HandlerDelay = 10 * time.Millisecond
	o.Workload = twoPartitions(300, 300)
	o.RebalanceAt = steps(t, "1s:join")
	res := simulate(t, o)
	if res.Verdict != verdict.OK || lostText(res) != "p0 -; p1 -" {
		t.Errorf("verdict %s, lost %s; want OK, nothing lost", res.Verdict, lostText(res))
	}
}
