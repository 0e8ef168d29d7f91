package repro

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/traceevent"
)

// commitsOf runs the simulation with a trace and returns partition 0's committed
// offsets in the order the commits completed.
func commitsOf(t *testing.T, o Options) ([]int64, *Result) {
	t.Helper()
	var buf bytes.Buffer
	o.Trace = traceevent.NewWriter(&buf)
	res := simulate(t, o)
	if err := o.Trace.Flush(); err != nil {
		t.Fatal(err)
	}
	var out []int64
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		ev, err := traceevent.Decode(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Ev != traceevent.Commit {
			continue
		}
		if ev.Reason != "manual" {
			t.Errorf("a %s commit in manual mode: %+v", ev.Reason, ev)
		}
		for _, c := range ev.Committed {
			if c.Partition == 0 {
				out = append(out, c.Offset)
			}
		}
	}
	return out, res
}

// The client's own manual commit (upstream #476's idiom) on the seed at max.poll 3 s
// (5 min at full scale), as the agreement suite's manual-commit shape runs it: 1.10.0
// commits after each batch what its handler resolved and loses 42-199 to the clear all
// the same (nothing records the last consumed offset); 1.10.1's resolve records it, the
// clear rewinds to 42, and every batch after it is committed.
func TestManualCommitCommitsWhatEachBatchResolvedAndLosesWhatAutoCommitLoses(t *testing.T) {
	for _, tc := range []struct {
		policy  eachbatch.Policy
		commits []int64
		lost    string
	}{
		{eachbatch.V1_10_0, []int64{1, 2, 22, 42, 202}, "[42-199]"},
		{eachbatch.V1_10_1, []int64{1, 2, 22, 42, 62, 82, 102, 122, 142, 162, 182, 200, 202}, "[]"},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			o := DefaultOptions()
			o.Policy, o.Commit = tc.policy, CommitManual
			o.MaxPollInterval = 5 * time.Minute
			got, res := commitsOf(t, o)
			if fmt.Sprint(got) != fmt.Sprint(tc.commits) {
				t.Errorf("commits %v, want %v", got, tc.commits)
			}
			p := res.Partitions[0]
			if lost := fmt.Sprint(p.Lost); lost != tc.lost {
				t.Errorf("lost %v, want %s", p.Lost, tc.lost)
			}
			if c := p.CommittedByPhase; len(c) == 0 || c[len(c)-1] != 202 {
				t.Errorf("committed by phase %v, want 202 at the end", c)
			}
		})
	}
}

// pause() from the eachBatch payload (upstream #517) with the manual-commit handler,
// which resolves its whole batch: the pause falls in the batch of 2-21 (3m20s), the
// handler finishes it and commits 22, then #pauseInternal drops 22-199 from the cache.
// 1.10.0 has no last-consumed entry to repair the position from: 22-199 are never
// fetched again and phase 2's commit passes them. 1.10.1's resolve recorded 21: the
// pause seeks to 22 and everything is delivered.
func TestPauseFromTheBatchLosesThePrefetchedRecordsOnlyWhereNothingRecordsTheLastConsumed(t *testing.T) {
	for _, tc := range []struct {
		policy  eachbatch.Policy
		commits []int64
		lost    string
	}{
		{eachbatch.V1_10_0, []int64{1, 2, 22, 202}, "[22-199]"},
		{eachbatch.V1_10_1, []int64{1, 2, 22, 42, 62, 82, 102, 122, 142, 162, 182, 200, 202}, "[]"},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			o := DefaultOptions()
			o.Policy, o.Commit = tc.policy, CommitManual
			o.PauseAt, o.ResumeAfter = 200*time.Second, 50*time.Second
			got, res := commitsOf(t, o)
			if fmt.Sprint(got) != fmt.Sprint(tc.commits) {
				t.Errorf("commits %v, want %v", got, tc.commits)
			}
			p := res.Partitions[0]
			if lost := fmt.Sprint(p.Lost); lost != tc.lost {
				t.Errorf("lost %v, want %s", p.Lost, tc.lost)
			}
			if tc.policy == eachbatch.V1_10_0 && res.LossAt != 6*time.Minute {
				t.Errorf("loss at %s, want 6m0s (the batch of 2-21 ends and the pause runs)", res.LossAt)
			}
		})
	}
	// With auto-resolve the pause makes the batch stale: it is not resolved, and the
	// client seeks back to its first record (#batchProcessor), which repairs the
	// position on 1.10.0 too: 2-21 are delivered twice, and only the seed's own loss
	// (the cache expiry, 82-199) remains.
	o := DefaultOptions()
	o.PauseAt, o.ResumeAfter = 200*time.Second, 50*time.Second
	res := simulate(t, o)
	if p := res.Partitions[0]; fmt.Sprint(p.Lost) != "[82-199]" || p.Duplicates != 20 {
		t.Errorf("auto-commit: lost %v duplicates %d, want 82-199 and 20 (2-21 again)", p.Lost, p.Duplicates)
	}
}
