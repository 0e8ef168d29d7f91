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
