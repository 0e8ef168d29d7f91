package repro

import (
	"fmt"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/workload"
)

// commitOffsets([{topic, partition, offset: last + 1}]) at the end of each batch, on the
// seed at max.poll 3 s (5 min at full scale), as the agreement suite's explicit-commit
// shape runs it: on one partition the handler names what commitOffsetsIfNecessary() would
// commit, so the commits and the loss are --commit manual's: 1.10.0 loses 42-199 to the
// clear, 1.10.1 rewinds to 42 and commits every batch.
func TestExplicitCommitCommitsEachBatchsLastOffsetAndLosesWhatManualLoses(t *testing.T) {
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
			o.Policy, o.Commit = tc.policy, CommitExplicit
			o.MaxPollInterval = 5 * time.Minute
			got, res := commitsOf(t, o)
			if fmt.Sprint(got) != fmt.Sprint(tc.commits) {
				t.Errorf("commits %v, want %v", got, tc.commits)
			}
			if lost := fmt.Sprint(res.Partitions[0].Lost); lost != tc.lost {
				t.Errorf("lost %s, want %s", lost, tc.lost)
			}
		})
	}
}

// eachMessage with commitOffsets([{..., offset: offset + 1}]) after each record (the idiom
// --commit manual refuses for eachMessage): 40 records at max.poll 5 min on 1.10.0,
// committed one by one. The cache clears every 7 or 8 records; each clear rewinds to the
// record in hand's last-consumed entry itself (1.10.0 sets it before the handler runs), so
// 9, 16, 23, 30 and 37 are handled and committed twice, and nothing is lost.
func TestExplicitCommitFromEachMessageCommitsEveryRecord(t *testing.T) {
	o := DefaultOptions()
	o.Commit, o.Handler = CommitExplicit, eachbatch.EachMessage
	o.MaxPollInterval = 5 * time.Minute
	o.Workload = workload.Spec{Parts: []workload.Part{{Partition: 0, Records: 40}}, Transactions: 1}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	got, res := commitsOf(t, o)
	want := "[1 2 3 4 5 6 7 8 9 10 10 11 12 13 14 15 16 17 17 18 19 20 21 22 23 24 24 25 26 27 28 29 30 31 31 32 33 34 35 36 37 38 38 39 40 42]"
	if fmt.Sprint(got) != want {
		t.Errorf("commits %v, want %s", got, want)
	}
	if p := res.Partitions[0]; len(p.Lost) != 0 || p.Duplicates != 5 || p.CommittedByPhase[0] != 40 {
		t.Errorf("lost %v, duplicates %d, committed by phase %v, want nothing lost, 5 and 40 at phase 1", p.Lost, p.Duplicates, p.CommittedByPhase)
	}
}

// The application's consumer.pause([{topic}]) at 3m20s with the manual-commit handler:
// as the payload's pause() (TestPauseFromTheBatch...), the batch of 2-21 is finished and
// committed (22), #pauseInternal drops 22-199, and only 1.10.1 repairs the position.
func TestPauseFromOutsideLosesThePrefetchedRecordsOnlyWhereNothingRecordsTheLastConsumed(t *testing.T) {
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
			o.PauseAt, o.ResumeAfter, o.PauseFrom = 200*time.Second, 50*time.Second, PauseFromOutside
			got, res := commitsOf(t, o)
			if fmt.Sprint(got) != fmt.Sprint(tc.commits) {
				t.Errorf("commits %v, want %v", got, tc.commits)
			}
			if lost := fmt.Sprint(res.Partitions[0].Lost); lost != tc.lost {
				t.Errorf("lost %s, want %s", lost, tc.lost)
			}
		})
	}
	o := DefaultOptions()
	o.PauseFrom = "timer"
	o.PauseAt = time.Second
	if err := o.Validate(); err == nil {
		t.Error("--pause-from timer was accepted")
	}
}

// consumer.pause([{topic, partitions: [1]}]) from outside (--pause-partitions 1) on the
// agreement suite's outside-pause-named-em-2p shape (eachMessage, 0:10,1:10, one worker,
// unbounded fetches, the pause at 5 min): the partitions hold the same records, but the
// pause names one, so no order stands for the others (EveryOrder false) and both are
// simulated: partition 0 served first, partition 1 never served loses 0-9; partition 1
// served first, it is repaired and partition 0 keeps its cached records: nothing lost.
func TestAPauseOfNamedPartitionsTellsAlikePartitionsApart(t *testing.T) {
	o := DefaultOptions()
	o.Handler, o.Concurrency, o.BatchSize = eachbatch.EachMessage, 1, -1
	o.Workload = workload.Spec{Parts: []workload.Part{{Partition: 0, Records: 10}, {Partition: 1, Records: 10}}, Transactions: 1}
	o.PauseAt, o.ResumeAfter, o.PauseFrom, o.PausePartitions = 5*time.Minute, 50*time.Second, PauseFromOutside, []int32{1}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	res := simulate(t, o)
	if len(res.FetchOrders) != 2 || res.FetchOrders[0].EveryOrder {
		t.Fatalf("fetch orders %+v, want both partitions served first, neither standing for every order", res.FetchOrders)
	}
	for i, want := range []string{"[0 1]: [0:OK[] 1:LOST[0-9]]", "[1 0]: [0:OK[] 1:OK[]]"} {
		var got []string
		for _, p := range res.FetchOrders[i].Partitions {
			got = append(got, fmt.Sprintf("%d:%s%v", p.Partition, p.Verdict, p.Lost))
		}
		if s := fmt.Sprintf("%v: %v", res.FetchOrders[i].Order, got); s != want {
			t.Errorf("order %s, want %s", s, want)
		}
	}
	for _, bad := range [][]int32{{1, 1}, {o.Partitions}, {-1}} {
		o := o
		o.PausePartitions = bad
		if err := o.Validate(); err == nil {
			t.Errorf("--pause-partitions %v was accepted", bad)
		}
	}
	o.PauseFrom = PauseFromHandler
	if err := o.Validate(); err == nil {
		t.Error("--pause-partitions with the handler's pause was accepted")
	}
}
