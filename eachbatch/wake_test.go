package eachbatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

func wakes(evs []traceevent.Event) []traceevent.Event {
	var out []traceevent.Event
	for _, ev := range evs {
		if ev.Ev == traceevent.Wake {
			out = append(out, ev)
		}
	}
	return out
}

// The live source (repro/source.go) has no queue_non_empty_cb: a worker waiting for
// the consumer queue is woken by the valve only. These cases pin, on virtual time, what
// the wake event says in either case for one record arriving 2.3 s into an idle run.
func TestWakeEventSaysWhatEndedTheWaitAndWhatTheNextConsumeReturned(t *testing.T) {
	for _, tc := range []struct {
		name     string
		callback bool // the source calls NotifyNonEmpty (queue_non_empty_cb)
		// the wake after which the record was fetched
		reason         string
		sinceFetchMs   float64
		emptyBefore    int // wakes whose consume returned nothing, before it
		deliveredAtSec float64
	}{
		{"a worker is woken when the record arrives when the source has the callback", true, eachbatch.WakeArrival, 300, 2, 2.3},
		{"a worker is woken by the valve, a second after the empty fetch, when the source has no callback", false, eachbatch.WakeValve, 1000, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := loop.NewVirtual(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))
			var evs []traceevent.Event
			tr := func(ev traceevent.Event) { evs = append(evs, ev) }
			sim := simkafka.New(l, 5*time.Second, tr)
			sim.Assign(p0)
			s := settings(eachbatch.V1_10_1)
			s.Concurrency = 1
			e, err := eachbatch.New(l, sim, s, tr)
			if err != nil {
				t.Fatal(err)
			}
			if tc.callback {
				sim.OnNonEmpty = e.NotifyNonEmpty
			}
			l.Post(e.Start)
			l.After(2300*time.Millisecond, func() { sim.Append(p0, simkafka.Data) })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var deliveredAt time.Duration
			if err := l.Run(ctx, func() bool {
				if deliveredAt == 0 && e.Delivered()[p0][0] > 0 {
					deliveredAt = l.Elapsed()
				}
				return deliveredAt > 0
			}); err != nil {
				t.Fatal(err)
			}
			ws := wakes(evs)
			if len(ws) != tc.emptyBefore+1 {
				t.Fatalf("%d wake events, want %d: %+v", len(ws), tc.emptyBefore+1, ws)
			}
			for _, w := range ws[:tc.emptyBefore] {
				if w.Reason != eachbatch.WakeValve || w.Returned != 0 || w.Requested != 1 || *w.SinceFetchMs != 1000 {
					t.Errorf("idle wake %+v, want the valve at 1000 ms with a consume of 1 returning nothing", w)
				}
			}
			last := ws[tc.emptyBefore]
			if last.Reason != tc.reason || last.Returned != 1 || last.N != 1 || *last.SinceFetchMs != tc.sinceFetchMs {
				t.Errorf("wake %+v, want reason %s after %v ms, 1 worker, 1 record returned", last, tc.reason, tc.sinceFetchMs)
			}
			if got := deliveredAt.Seconds(); got != tc.deliveredAtSec {
				t.Errorf("record delivered at %vs, want %vs", got, tc.deliveredAtSec)
			}
		})
	}
}

// With the callback wired (as in every simulated run), a wait that ends with records
// was ended by their arrival, never by the valve: the valve only ever wakes a wait that
// finds nothing. In the seed scenario this holds for the phase 2 record.
func TestInSimulatedRunsEveryWaitThatEndsWithRecordsEndsAtTheirArrival(t *testing.T) {
	r := runSeed(t, settings(eachbatch.V1_10_0))
	withRecords := 0
	for _, w := range wakes(r.events) {
		if w.Returned > 0 {
			withRecords++
			if w.Reason != eachbatch.WakeArrival {
				t.Errorf("wake %+v returned records but was not ended by their arrival", w)
			}
		}
	}
	if withRecords == 0 {
		t.Fatal("no wait ended with records: the phase 2 record should end one")
	}
}
