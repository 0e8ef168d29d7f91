package eachbatch

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// The counted ticks of coalesceIdle give the same spin events, counters and expiry
// deadline as stepping the stretch tick by tick, on random stretches, valve periods,
// tick floors and last flushes.
func TestCoalescedTicksEqualSteppedTicks(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 3000; i++ {
		s := Settings{FetchValve: time.Duration(1+rng.Intn(3000)) * time.Millisecond,
			MinWake: time.Duration(1+rng.Intn(700)) * time.Millisecond}
		now := start.Add(time.Duration(rng.Intn(100_000)) * time.Millisecond)
		limit := now.Add(time.Duration(rng.Intn(60_000)-100) * time.Millisecond)
		var lastFlush time.Time
		if rng.Intn(4) > 0 {
			lastFlush = now.Add(-time.Duration(rng.Intn(5000)) * time.Millisecond)
		}
		reads, fetches := rng.Intn(3), rng.Intn(2)
		waiting := 1 + rng.Intn(20)
		tracing := i%2 == 0 // without a trace, flushes that leave no trace are skipped
		run := func(coalesced bool) ([]traceevent.Event, int, int, time.Time, time.Time) {
			var evs []traceevent.Event
			l := loop.NewVirtual(start)
			e := &Engine{l: l, s: s, trace: func(ev traceevent.Event) { evs = append(evs, ev) }, tracing: tracing,
				emptyReads: reads, emptyFetches: fetches, lastSpinFlush: lastFlush}
			if coalesced {
				e.countIdleTicks(now, limit, waiting)
			} else {
				e.coalesceIdleStepped(now, limit, waiting)
			}
			next, _, _ := l.Idle()
			return evs, e.emptyReads, e.emptyFetches, next, e.lastSpinFlush
		}
		ce, cr, cf, cn, cl := run(true)
		se, sr, sf, sn, sl := run(false)
		if !reflect.DeepEqual(ce, se) || cr != sr || cf != sf || !cn.Equal(sn) || !cl.Equal(sl) {
			t.Fatalf("case %d (%+v now %s limit %s last flush %s, %d waiting, tracing %v): counted %d events, %d/%d, expiry %s, flushed %s; stepped %d events, %d/%d, expiry %s, flushed %s",
				i, s, now, limit, lastFlush, waiting, tracing, len(ce), cr, cf, cn, cl, len(se), sr, sf, sn, sl)
		}
	}
}
