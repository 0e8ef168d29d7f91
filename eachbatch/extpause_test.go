package eachbatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/traceevent"
)

func (r *shapeRun) eventsOf(ev string) []traceevent.Event {
	var out []traceevent.Event
	for _, e := range r.events {
		if e.Ev == ev {
			out = append(out, e)
		}
	}
	return out
}

// commitsOf lists the simulated group's commits as partition:offset in order.
func (r *shapeRun) commitsOf() []string {
	var out []string
	for _, c := range r.sim.Commits() {
		out = append(out, fmt.Sprintf("%d:%d", c.TP.Partition, c.Offset))
	}
	return out
}

// consumer.pause([{topic}]) from a timer at 190 s of the seed: the batch of 2-21 (served
// at 80 s, rounds at 80, 120, 160, 200 s...) is mid-round. The handler's payload pause()
// would fall at 200 s, the next round's start; the application's falls at 190 s and marks
// the batch stale there. The auto-resolve handler runs its batch to its end (360 s), the
// stale batch is not resolved and is sought back to 2; #pauseInternal (1.10.0: no
// last-consumed entry from eachBatch) drops 22-199 without a repair of its own, and the
// batch-end seek queued after it repairs the position: 2-21 are delivered twice.
func TestPauseFromOutsideMarksTheBatchInFlightStaleMidRound(t *testing.T) {
	s := settings(eachbatch.V1_10_0)
	s.PauseAt, s.ResumeAfter, s.PauseOutside = 190*time.Second, 50*time.Second, true
	r := runShapeFor(t, 700*time.Second, s, 200)
	ps := r.eventsOf(traceevent.Pause)
	if len(ps) != 2 {
		t.Fatalf("pause events %+v, want the call and #pauseInternal", ps)
	}
	if ps[0].AtMs != 190000 || ps[0].Reason != "consumer pause()" || *ps[0].Partition != 0 {
		t.Errorf("the call: %+v, want consumer pause() of partition 0 at 190000 ms", ps[0])
	}
	in := ps[1]
	if in.AtMs != 360000 || in.Reason != "no last-consumed entry" || in.Offset != nil ||
		len(in.Discarded) != 1 || in.Discarded[0] != traceevent.PartitionRange(0, 22, 199, 178) {
		t.Errorf("#pauseInternal: %+v, want at 360000 ms, 22-199 dropped, no repair seek", in)
	}
	var stale bool
	for _, ev := range r.eventsOf(traceevent.BatchEnd) {
		if ev.AtMs == 360000 && ev.Offsets[0] == 2 && ev.Reason == "not resolved (stale)" {
			stale = true
		}
	}
	if !stale {
		t.Error("the batch of 2-21 did not end stale at 360000 ms")
	}
	if got := fmt.Sprint(r.seeks("batch not resolved")); got != "[2]" {
		t.Errorf("batch-end seeks %s, want [2]", got)
	}
	if rs := r.eventsOf(traceevent.Resume); len(rs) != 1 || rs[0].AtMs != 360000 {
		// resume() was queued at 240 s behind the pause: both run when the batch ends
		t.Errorf("resume %+v, want one at 360000 ms", rs)
	}
	d := r.e.Delivered()[p0]
	for o := int64(2); o <= 21; o++ {
		if d[o] != 2 {
			t.Fatalf("record %d delivered %d times, want 2", o, d[o])
		}
	}
	if d[22] != 1 {
		t.Errorf("record 22 delivered %d times, want once (after the repair)", d[22])
	}
}

// The same pause with the manual-commit handler, which resolves its whole batch and
// commits 22: nothing seeks back, and the pause's own repair is all there is. 1.10.0 has
// no last-consumed entry and the fetch position stays past 199 (upstream #517, as from the
// payload); 1.10.1's resolve recorded 21 and #pauseInternal seeks to 22.
func TestPauseFromOutsideRepairsOnlyWhereTheResolveRecordedTheLastConsumed(t *testing.T) {
	for _, tc := range []struct {
		p      eachbatch.Policy
		reason string
		repair string
	}{
		{eachbatch.V1_10_0, "no last-consumed entry", "[]"},
		{eachbatch.V1_10_1, "last-consumed+1", "[22]"},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			s := settings(tc.p)
			s.ManualCommit, s.AutoResolve, s.CommitOnSeek = true, false, false
			s.PauseAt, s.ResumeAfter, s.PauseOutside = 190*time.Second, 50*time.Second, true
			r := runShapeFor(t, 700*time.Second, s, 200)
			ps := r.eventsOf(traceevent.Pause)
			if len(ps) != 2 || ps[1].AtMs != 360000 || ps[1].Reason != tc.reason {
				t.Fatalf("pause events %+v, want #pauseInternal at 360000 ms: %s", ps, tc.reason)
			}
			if got := fmt.Sprint(r.seeks("pause: last-consumed+1")); got != tc.repair {
				t.Errorf("repair seeks %s, want %s", got, tc.repair)
			}
			if got := r.commitsOf(); fmt.Sprint(got[:3]) != "[0:1 0:2 0:22]" {
				t.Errorf("commits %v, want 0:1 0:2 0:22 first", got)
			}
			if d := r.e.Delivered()[p0]; (d[22] == 0) != (tc.p == eachbatch.V1_10_0) {
				t.Errorf("record 22 delivered %d times", d[22])
			}
		})
	}
}

// Two partitions, eachMessage, one worker, unbounded fetches: the first fetch caches both,
// the worker serves partition 0 a record at a time and partition 1 waits in the cache.
// The application pauses the topic at 100 s (record 2 of partition 0 in the handler):
// partition 0's record is not stale (eachMessage has no payload) and is stored, and its
// last-consumed entry repairs it; partition 1 was never served, has no entry in any
// release, and #pauseInternal drops its 10 records with the position past them. The
// payload's pause() pauses partition 0 only and loses nothing.
func TestPauseFromOutsideDropsAPartitionNeverServedInEveryRelease(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1, eachbatch.Head} {
		for _, outside := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/outside=%v", p, outside), func(t *testing.T) {
				s := settings(p)
				s.Handler, s.Concurrency, s.BatchSize = eachbatch.EachMessage, 1, -1
				s.PauseAt, s.ResumeAfter, s.PauseOutside = 100*time.Second, 50*time.Second, outside
				r := runShape(t, s, 10, 10)
				d := r.e.Delivered()
				if len(d[p0]) != 10 {
					t.Errorf("partition 0: %d of 10 delivered", len(d[p0]))
				}
				want := 10
				if outside {
					want = 0
				}
				if len(d[p1]) != want {
					t.Errorf("partition 1: %d of 10 delivered, want %d", len(d[p1]), want)
				}
				if !outside {
					return
				}
				var in []traceevent.Event
				for _, ev := range r.eventsOf(traceevent.Pause) {
					if ev.Reason != "consumer pause()" {
						in = append(in, ev)
					}
				}
				if len(in) != 2 || in[0].AtMs != 120000 || in[0].Reason != "last-consumed+1" || *in[0].Offset != 3 ||
					in[1].Reason != "no last-consumed entry" || len(in[1].Discarded) != 1 || in[1].Discarded[0] != traceevent.PartitionRange(1, 0, 9, 10) {
					t.Errorf("#pauseInternal %+v, want partition 0 sought to 3 and partition 1's 0-9 dropped at 120000 ms", in)
				}
			})
		}
	}
}

// commitOffsets([{topic, partition, offset}]) from the handler commits the offset it
// names, one partition at a time: eachBatch at the end of each batch (its last record
// + 1), where commitOffsetsIfNecessary() commits every partition's stored offset;
// eachMessage after each record.
func TestExplicitCommitCommitsTheOffsetTheHandlerNames(t *testing.T) {
	t.Run("eachBatch", func(t *testing.T) {
		s := settings(eachbatch.V1_10_1)
		s.ExplicitCommit, s.AutoResolve, s.CommitOnSeek = true, false, false
		s.Concurrency = 2
		r := runShapeFor(t, 400*time.Second, s, 30, 30)
		for _, ev := range r.eventsOf(traceevent.Commit) {
			if ev.Reason != "manual" || len(ev.Committed) != 1 {
				t.Errorf("commit %+v: want one partition, manual", ev)
			}
		}
		// fetches of one record (0/0, then 0/1), then 0/2-29 and 1/0-11 at 80 s: the batch
		// of 1/0-11 ends at 240 s, 0/2-21 at 360 s; commitOffsetsIfNecessary would have
		// committed partition 0's resolved offset (14) with 1/12
		if got, want := fmt.Sprint(r.commitsOf()), "[0:1 0:2 1:12 0:22]"; got != want {
			t.Errorf("commits %s, want %s", got, want)
		}
	})
	t.Run("eachBatch with commitOffsetsIfNecessary", func(t *testing.T) {
		s := settings(eachbatch.V1_10_1)
		s.ManualCommit, s.AutoResolve, s.CommitOnSeek = true, false, false
		s.Concurrency = 2
		r := runShapeFor(t, 400*time.Second, s, 30, 30)
		var both bool
		for _, ev := range r.eventsOf(traceevent.Commit) {
			both = both || len(ev.Committed) == 2
		}
		if !both {
			t.Error("commitOffsetsIfNecessary never committed both partitions' stored offsets at once")
		}
	})
	t.Run("eachMessage", func(t *testing.T) {
		s := settings(eachbatch.V1_10_0)
		s.Handler, s.ExplicitCommit, s.CommitOnSeek = eachbatch.EachMessage, true, false
		r := runShape(t, s, 5)
		if got, want := fmt.Sprint(r.commitsOf()), "[0:1 0:2 0:3 0:4 0:5]"; got != want {
			t.Errorf("commits %s, want %s", got, want)
		}
	})
	t.Run("refused with auto-resolve or the seek's commit", func(t *testing.T) {
		s := settings(eachbatch.V1_10_0)
		s.ExplicitCommit = true
		if err := s.Validate(); err == nil {
			t.Error("explicit commit with eachBatch auto-resolve and CommitOnSeek was accepted")
		}
	})
}

// consumer.pause([{topic, partitions: [1]}]) from a timer at 100 s, on the shape above
// (eachMessage, one worker, both partitions cached by the first fetch): only partition 1
// goes stale and loses its cached records; partition 0 keeps its own, and no pause of it
// is queued. Partition 0 served first: partition 1 was never served, has no last-consumed
// entry, and its 0-9 are dropped with the position past them (lost, as with the whole
// topic's pause); partition 0 is delivered once each, never sought. Partition 1 served
// first: its entry repairs it (seek to 3), and partition 0's records, still cached, are
// all delivered (the whole topic's pause drops them: see the test above, outside=true).
func TestAPauseOfNamedPartitionsFromOutsideLeavesTheOthersCached(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1} {
		for _, first := range []int32{0, 1} {
			t.Run(fmt.Sprintf("%s/partition %d served first", p, first), func(t *testing.T) {
				s := settings(p)
				s.Handler, s.Concurrency, s.BatchSize = eachbatch.EachMessage, 1, -1
				s.PauseAt, s.ResumeAfter, s.PauseOutside = 100*time.Second, 50*time.Second, true
				s.PausePartitions = []int32{1}
				r := runShapeFrom(t, 0, first, s, 10, 10)
				var calls, internal []traceevent.Event
				for _, ev := range r.eventsOf(traceevent.Pause) {
					if ev.Reason == "consumer pause()" {
						calls = append(calls, ev)
					} else {
						internal = append(internal, ev)
					}
				}
				if len(calls) != 1 || *calls[0].Partition != 1 || calls[0].AtMs != 100000 {
					t.Errorf("pause() calls %+v, want partition 1's only, at 100000 ms", calls)
				}
				if len(internal) != 1 || *internal[0].Partition != 1 {
					t.Fatalf("#pauseInternal %+v, want partition 1's only", internal)
				}
				d := r.e.Delivered()
				if first == 0 {
					if in := internal[0]; in.Reason != "no last-consumed entry" || len(in.Discarded) != 1 || in.Discarded[0] != traceevent.PartitionRange(1, 0, 9, 10) {
						t.Errorf("#pauseInternal %+v, want partition 1's 0-9 dropped, no repair", in)
					}
					if len(d[p1]) != 0 {
						t.Errorf("partition 1: %d records delivered, want none", len(d[p1]))
					}
				} else {
					if in := internal[0]; in.Reason != "last-consumed+1" || *in.Offset != 3 || len(in.Discarded) != 1 || in.Discarded[0] != traceevent.PartitionRange(1, 3, 9, 7) {
						t.Errorf("#pauseInternal %+v, want partition 1's 3-9 dropped and sought back to 3", in)
					}
					if len(d[p1]) != 10 {
						t.Errorf("partition 1: %d of 10 delivered", len(d[p1]))
					}
				}
				for o := int64(0); o < 10; o++ {
					if d[p0][o] != 1 {
						t.Errorf("partition 0 record %d delivered %d times, want once (never paused)", o, d[p0][o])
					}
				}
				for _, ev := range r.events {
					if ev.Ev == traceevent.Seek && *ev.Partition == 0 {
						t.Errorf("partition 0 sought: %+v", ev)
					}
				}
				if rs := r.eventsOf(traceevent.Resume); len(rs) != 1 || *rs[0].Partition != 1 {
					t.Errorf("resume %+v, want partition 1's only", rs)
				}
			})
		}
	}
}
