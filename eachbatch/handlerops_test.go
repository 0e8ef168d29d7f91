package eachbatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/traceevent"
)

// deliveredRanges reads a partition's delivered offsets as ranges (FIRST-LAST,...).
func deliveredRanges(d map[int64]int, end int64) string {
	var s string
	for o := int64(0); o < end; o++ {
		if d[o] == 0 || (o > 0 && d[o-1] > 0) {
			continue
		}
		last := o
		for last+1 < end && d[last+1] > 0 {
			last++
		}
		if s != "" {
			s += ","
		}
		s += fmt.Sprintf("%d-%d", o, last)
	}
	return s
}

// consumer.seek() from the handler on the seed (issue 23 §1): at 3m40s the handler is in
// the batch of 2-21 (served at 80 s, rounds every 40 s: 14-16 starts at 240 s, the first
// round at or after 220 s) and seeks its partition to 100. seek() marks the payload stale
// and seeked: the auto-resolve handler finishes 2-21 (at 360 s), which is neither
// resolved nor sought back; the handler breaking at isStale() stops after 14-16 (at
// 280 s). #seekInternal then runs, drops the cache, seeks to 100 and (auto-commit)
// commits 100: 22-99 (17-99) are never delivered (200 is the transaction's marker).
// From 100 on the run is the seed's shifted: with auto-resolve 1.10.0's cache expiry
// drops 180-199 (the seek deleted the last-consumed entry and 1.10.0's eachBatch records
// none), 1.10.1 rewinds to them; the same with the handler breaking at isStale().
func TestASeekFromTheHandlerSkipsToItsOffsetAndIsNeitherResolvedNorSoughtBack(t *testing.T) {
	for _, tc := range []struct {
		name        string
		autoResolve bool
		policy      eachbatch.Policy
		seekAtMs    float64
		delivered   string
	}{
		{"auto-resolve", true, eachbatch.V1_10_0, 360000, "0-21,100-179,201-201"},
		{"auto-resolve", true, eachbatch.V1_10_1, 360000, "0-21,100-199,201-201"},
		{"isStale break", false, eachbatch.V1_10_0, 280000, "0-16,100-179,201-201"},
		{"isStale break", false, eachbatch.V1_10_1, 280000, "0-16,100-199,201-201"},
	} {
		t.Run(tc.name+"/"+string(tc.policy), func(t *testing.T) {
			s := settings(tc.policy)
			s.AutoResolve, s.SeekAt, s.SeekTo = tc.autoResolve, 220*time.Second, 100
			r := runSeed(t, s)
			var seeks []traceevent.Event
			var staleEnds int
			for _, ev := range r.events {
				switch {
				case ev.Ev == traceevent.Seek && ev.Reason != "last-consumed+1":
					seeks = append(seeks, ev)
				case ev.Ev == traceevent.BatchEnd && ev.Reason == "not resolved (stale)":
					staleEnds++
				}
			}
			if len(seeks) != 1 || *seeks[0].Offset != 100 || seeks[0].Reason != "handler seek()" || seeks[0].AtMs != tc.seekAtMs {
				t.Errorf("seeks %+v, want one: the handler's, to 100 at %v ms (no seek back of the stale batch)", seeks, tc.seekAtMs)
			}
			if tc.autoResolve && staleEnds != 1 {
				t.Errorf("%d batches ended stale, want 1 (2-21)", staleEnds)
			}
			if got := deliveredRanges(r.delivered2, 202); got != tc.delivered {
				t.Errorf("delivered %s, want %s", got, tc.delivered)
			}
			var seekCommit []int64
			for _, c := range r.sim.Commits() {
				if c.TP == p0 && !c.Auto && c.At == time.Duration(tc.seekAtMs)*time.Millisecond {
					seekCommit = append(seekCommit, c.Offset)
				}
			}
			if fmt.Sprint(seekCommit) != "[100]" {
				t.Errorf("commits at the seek %v, want its 100", seekCommit)
			}
			if r.committed2 != 202 {
				t.Errorf("committed %d at the end, want 202", r.committed2)
			}
		})
	}
}

// heartbeat() is a no-op in the kafkajs-compat client: a handler awaiting it after every
// round loses exactly what the seed loses (1.10.0: 82-199), at the same time, and the
// trace holds one heartbeat per round (1 + 1 + 4 rounds of 7 for the batches 0, 1, 2-21,
// 22-41, 42-61, 62-81: 30 before the clear).
func TestAHandlerCallingHeartbeatLosesWhatTheSeedLoses(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1} {
		t.Run(string(p), func(t *testing.T) {
			plain := runSeed(t, settings(p))
			s := settings(p)
			s.Heartbeat = true
			hb := runSeed(t, s)
			if a, b := deliveredRanges(plain.delivered2, 202), deliveredRanges(hb.delivered2, 202); a != b {
				t.Errorf("delivered %s with heartbeat, %s without", b, a)
			}
			if plain.committed1 != hb.committed1 || plain.committed2 != hb.committed2 || plain.phase1At != hb.phase1At {
				t.Errorf("with heartbeat committed %d, %d at %s; without %d, %d at %s", hb.committed1, hb.committed2, hb.phase1At,
					plain.committed1, plain.committed2, plain.phase1At)
			}
			beats, before := 0, 0
			var clearAt float64
			for _, ev := range hb.events {
				if ev.Ev == traceevent.Clear && clearAt == 0 {
					clearAt = ev.AtMs
				}
				if ev.Ev == traceevent.Heartbeat {
					beats++
					if clearAt == 0 {
						before++
					}
				}
			}
			if beats == 0 {
				t.Fatal("no heartbeat event")
			}
			if p == eachbatch.V1_10_0 {
				if got := deliveredRanges(hb.delivered2, 202); got != "0-81,201-201" {
					t.Errorf("delivered %s, want 0-81,201-201", got)
				}
				if before != 30 {
					t.Errorf("%d heartbeats before the clear, want 30", before)
				}
			}
		})
	}
}

// A seek backwards from eachMessage: ten records on one partition, one at a time (40 s
// each); the first record starting at or after 100 s is 3 (at 120 s), whose handler
// seeks to 0. No batch payload is registered for eachMessage, so 3 is stored when it
// returns (4) and the pending #seekInternal then seeks to 0 and commits 0: 0-3 are
// delivered twice, nothing is lost.
func TestASeekBackFromEachMessageDeliversTheRecordsAgain(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1} {
		t.Run(string(p), func(t *testing.T) {
			s := settings(p)
			s.Handler, s.Concurrency, s.SeekAt, s.SeekTo = eachbatch.EachMessage, 1, 100*time.Second, 0
			r := runShape(t, s, 10)
			if got := r.seeks("handler seek()"); fmt.Sprint(got) != "[0]" {
				t.Errorf("handler seeks %v, want [0]", got)
			}
			var twice []int64
			d := r.e.Delivered()[p0]
			for o := int64(0); o < 10; o++ {
				if d[o] == 0 {
					t.Errorf("record %d never delivered", o)
				}
				if d[o] > 1 {
					twice = append(twice, o)
				}
			}
			if fmt.Sprint(twice) != "[0 1 2 3]" {
				t.Errorf("delivered twice %v, want 0-3", twice)
			}
			var seekAt float64
			for _, ev := range r.events {
				if ev.Ev == traceevent.Seek && ev.Reason == "handler seek()" {
					seekAt = ev.AtMs
				}
			}
			if seekAt != 160000 {
				t.Errorf("the seek ran at %v ms, want 160000 (when record 3's handler returns)", seekAt)
			}
			if st := r.e.Stored()[p0]; st != 10 {
				t.Errorf("stored %d at the end, want 10", st)
			}
		})
	}
}

// Several seeks, one back (issue 23 §1): on the seed the handler seeks its partition to
// 100 at its round starting at or after 230 s (240 s, the batch of 2-21), then to 60 at
// its round starting at or after 500 s (520 s, the batch of 100-119). Each seek makes the
// batch in flight stale and seeked, neither resolved nor sought back; each #seekInternal
// drops the cache, seeks and commits its offset (100 at 360 s, 60 at 640 s, when the
// batches end). The second seek goes back: 60-199 are fetched again, 100-119 delivered
// twice, and only what the first skipped and the second did not reach back to, 22-59, is
// never delivered. 1.10.0's expiry still drops 140-199 after the second seek deleted the
// last-consumed entry (its eachBatch writes none); 1.10.1 rewinds to 140.
func TestSeveralSeeksFromTheHandlerASeekBackDeliversAgain(t *testing.T) {
	for _, tc := range []struct {
		policy    eachbatch.Policy
		delivered string
	}{
		{eachbatch.V1_10_0, "0-21,60-139,201-201"},
		{eachbatch.V1_10_1, "0-21,60-199,201-201"},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := settings(tc.policy)
			s.Seeks = []eachbatch.HandlerSeek{{At: 230 * time.Second, Partition: -1, Offset: 100}, {At: 500 * time.Second, Partition: 0, Offset: 60}}
			r := runSeed(t, s)
			var seeks []string
			for _, ev := range r.events {
				if ev.Ev == traceevent.Seek && ev.Reason == "handler seek()" {
					seeks = append(seeks, fmt.Sprintf("%d@%v", *ev.Offset, ev.AtMs))
				}
			}
			if got := fmt.Sprint(seeks); got != "[100@360000 60@640000]" {
				t.Errorf("handler seeks %s, want 100 at 360 s and 60 at 640 s", got)
			}
			for _, ev := range r.events {
				if ev.Ev == traceevent.Seek && ev.Reason == "batch not resolved" {
					t.Errorf("a stale batch sought back: %+v (it was seeked)", ev)
				}
			}
			if got := deliveredRanges(r.delivered2, 202); got != tc.delivered {
				t.Errorf("delivered %s, want %s", got, tc.delivered)
			}
			var twice []int64
			for o, n := range r.delivered2 {
				if n > 1 {
					twice = append(twice, o)
				}
			}
			if len(twice) != 20 || r.delivered2[100] != 2 || r.delivered2[119] != 2 || r.delivered2[120] != 1 {
				t.Errorf("delivered twice: %d records (100: %d, 119: %d, 120: %d), want 100-119", len(twice), r.delivered2[100], r.delivered2[119], r.delivered2[120])
			}
			var atSeeks []string
			for _, c := range r.sim.Commits() {
				if !c.Auto && (c.At == 360*time.Second || c.At == 640*time.Second) {
					atSeeks = append(atSeeks, fmt.Sprint(c.Offset))
				}
			}
			if got := fmt.Sprint(atSeeks); got != "[100 60]" {
				t.Errorf("commits at the seeks %s, want [100 60]: the seek back commits backwards", got)
			}
		})
	}
}

// seek() of another partition than the handler's (issue 23 §1). eachMessage, one worker,
// unbounded fetches: the first fetch caches 0:0-9 and 1:0-9, the worker serves partition
// 0 and its handler, at the first record starting at or after 100 s (record 3, 120 s),
// seeks partition 1 to 5. No payload is marked (partition 1 has no batch in flight, and
// eachMessage registers none); #seekInternal, once record 3 is stored, drops partition
// 1's cached 0-9, seeks it to 5 and commits 5: 0-4 are committed past and never
// delivered. Partition 1 served first, the seek is of the handler's own partition, from
// record 3 to 5: 4 is skipped (committed past: lost), 0-3 and 5-9 delivered once.
func TestASeekOfAnotherPartitionDropsItsCachedRecords(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_0, eachbatch.V1_10_1} {
		for _, first := range []int32{0, 1} {
			t.Run(fmt.Sprintf("%s/partition %d served first", p, first), func(t *testing.T) {
				s := settings(p)
				s.Handler, s.Concurrency, s.BatchSize = eachbatch.EachMessage, 1, -1
				s.Seeks = []eachbatch.HandlerSeek{{At: 100 * time.Second, Partition: 1, Offset: 5}}
				r := runShapeFrom(t, 0, first, s, 10, 10)
				if got := r.seeks("handler seek()"); fmt.Sprint(got) != "[5]" {
					t.Errorf("handler seeks %v, want [5]", got)
				}
				d := r.e.Delivered()
				want := "0-3,5-9"
				if first == 0 {
					want = "5-9"
				}
				if got := deliveredRanges(d[p1], 10); got != want {
					t.Errorf("partition 1 delivered %s, want %s", got, want)
				}
				if got := deliveredRanges(d[p0], 10); got != "0-9" {
					t.Errorf("partition 0 delivered %s, want 0-9", got)
				}
				var seekCommits []int64
				for _, c := range r.sim.Commits() {
					if c.TP == p1 && !c.Auto {
						seekCommits = append(seekCommits, c.Offset)
					}
				}
				if fmt.Sprint(seekCommits) != "[5]" {
					t.Errorf("partition 1's commits at the seek %v, want [5]", seekCommits)
				}
				for o, n := range d[p1] {
					if n > 1 {
						t.Errorf("partition 1 record %d delivered %d times, want once", o, n)
					}
				}
			})
		}
	}
}

// eachBatch, two workers: the seek of partition 1 is called by whichever handler's round
// starts first at or after 100 s (120 s; both are running), and marks partition 1's
// batch in flight (0-11: the fetch of 40 holds 0:2-29 and 1:0-11) stale and seeked,
// whoever calls it: that batch runs to its end (240 s) and is neither resolved nor sought
// back, while partition 0's batch of 2-21 is resolved. #seekInternal runs when both have
// settled (360 s), drops nothing of partition 1 (its cache is empty), seeks it to 25 and
// commits 25: 12-24 are never fetched, never delivered.
func TestASeekOfAnotherPartitionMarksItsBatchInFlightStale(t *testing.T) {
	s := settings(eachbatch.V1_10_1)
	s.Concurrency = 2
	s.Seeks = []eachbatch.HandlerSeek{{At: 100 * time.Second, Partition: 1, Offset: 25}}
	r := runShape(t, s, 30, 30)
	ends := map[string]string{}
	for _, ev := range r.eventsOf(traceevent.BatchEnd) {
		ends[fmt.Sprintf("%d:%d", *ev.Partition, ev.Offsets[0])] = fmt.Sprintf("%s@%v", ev.Reason, ev.AtMs)
	}
	if got := ends["1:0"]; got != "not resolved (stale)@240000" {
		t.Errorf("partition 1's batch of 0-11 ended %q, want not resolved (stale) at 240000 ms", got)
	}
	if got := ends["0:2"]; got != "resolved@360000" {
		t.Errorf("partition 0's batch of 2-21 ended %q, want resolved at 360000 ms", got)
	}
	if got := fmt.Sprint(r.seeks("batch not resolved")); got != "[]" {
		t.Errorf("sought back to %s, want nothing (the batch was seeked)", got)
	}
	var seek []string
	for _, ev := range r.events {
		if ev.Ev == traceevent.Seek && ev.Reason == "handler seek()" {
			seek = append(seek, fmt.Sprintf("%d:%d@%v", *ev.Partition, *ev.Offset, ev.AtMs))
		}
	}
	if fmt.Sprint(seek) != "[1:25@360000]" {
		t.Errorf("handler seeks %v, want partition 1 to 25 at 360000 ms", seek)
	}
	d := r.e.Delivered()
	if got := deliveredRanges(d[p1], 30); got != "0-11,25-29" {
		t.Errorf("partition 1 delivered %s, want 0-11,25-29", got)
	}
	if got := deliveredRanges(d[p0], 30); got != "0-29" {
		t.Errorf("partition 0 delivered %s, want 0-29", got)
	}
}
