package eachbatch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

var p0 = kpart.TopicPartition{Topic: "stranded", Partition: 0}

type seedRun struct {
	l          *loop.Loop
	sim        *simkafka.Client
	e          *eachbatch.Engine
	events     []traceevent.Event
	committed1 int64
	delivered1 map[int64]int
	committed2 int64
	delivered2 map[int64]int
	phase1At   time.Duration
}

// runSeed runs the bug report's scenario at full scale on virtual time: 20 partitions,
// 200 records in one transaction on partition 0, a 4m40s eachBatch, then one more record.
func runSeed(t testing.TB, s eachbatch.Settings) *seedRun {
	t.Helper()
	r := &seedRun{l: loop.NewVirtual(time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC))}
	tr := func(ev traceevent.Event) { r.events = append(r.events, ev) }
	r.sim = simkafka.New(r.l, 5*time.Second, tr)
	var tps []kpart.TopicPartition
	for p := int32(0); p < 20; p++ {
		tps = append(tps, kpart.TopicPartition{Topic: "stranded", Partition: p})
	}
	r.sim.Transaction(p0, 200)
	r.sim.Assign(tps...)
	e, err := eachbatch.New(r.l, r.sim, s, tr)
	if err != nil {
		t.Fatal(err)
	}
	r.e = e
	r.sim.OnNonEmpty = e.NotifyNonEmpty
	r.l.Post(e.Start)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	settled := func() bool {
		st, ok := e.Stored()[p0]
		return e.Quiescent() && ok && r.sim.Committed(p0) == st
	}
	if err := r.l.Run(ctx, settled); err != nil {
		t.Fatalf("phase 1: %v", err)
	}
	r.phase1At = r.l.Elapsed()
	r.committed1 = r.sim.Committed(p0)
	r.delivered1 = e.Delivered()[p0]
	r.sim.Append(p0, simkafka.Data) // offset 201: one non-transactional record
	if err := r.l.Run(ctx, func() bool { return r.e.Delivered()[p0][201] > 0 && settled() }); err != nil {
		t.Fatalf("phase 2: %v", err)
	}
	r.committed2 = r.sim.Committed(p0)
	r.delivered2 = e.Delivered()[p0]
	return r
}

func settings(p eachbatch.Policy) eachbatch.Settings {
	s := eachbatch.DefaultSettings()
	s.Policy = p
	return s
}

func distinctBelow(d map[int64]int, end int64) int {
	n := 0
	for o := range d {
		if o < end {
			n++
		}
	}
	return n
}

func TestV1100LosesRecords82To199AtFullScale(t *testing.T) {
	r := runSeed(t, settings(eachbatch.V1_10_0))
	if got := len(r.delivered1); got != 82 {
		t.Errorf("phase 1 delivered %d distinct records, want 82", got)
	}
	for o := int64(0); o < 82; o++ {
		if r.delivered1[o] != 1 {
			t.Fatalf("offset %d delivered %d times in phase 1, want 1", o, r.delivered1[o])
		}
	}
	if r.committed1 != 82 {
		t.Errorf("phase 1 committed %d, want 82", r.committed1)
	}
	if r.committed2 != 202 {
		t.Errorf("phase 2 committed %d, want 202 (the high watermark)", r.committed2)
	}
	if r.sim.HighWatermark(p0) != 202 {
		t.Errorf("high watermark %d", r.sim.HighWatermark(p0))
	}
	if got := distinctBelow(r.delivered2, 200); got != 82 {
		t.Errorf("after phase 2, %d of 0..199 delivered, want 82: phase 2 must deliver only the new record", got)
	}
	if r.delivered2[201] != 1 {
		t.Errorf("record 201 delivered %d times", r.delivered2[201])
	}
}

func TestV1100ClearDiscards118RecordsAndSkipsEveryRewind(t *testing.T) {
	r := runSeed(t, settings(eachbatch.V1_10_0))
	var clears []traceevent.Event
	for _, ev := range r.events {
		if ev.Ev == traceevent.Clear {
			clears = append(clears, ev)
		}
	}
	if len(clears) != 1 {
		t.Fatalf("%d clears, want 1", len(clears))
	}
	c := clears[0]
	if len(c.Discarded) != 1 || c.Discarded[0] != (traceevent.PartitionRange(0, 82, 199, 118)) {
		t.Errorf("discarded %+v, want partition 0 82..199 (118)", c.Discarded)
	}
	if len(c.Rewinds) != 0 || len(c.Skipped) != 20 {
		t.Errorf("rewinds %d skipped %d, want 0 and 20", len(c.Rewinds), len(c.Skipped))
	}
	if len(c.LastConsumedKeys) != 0 {
		t.Errorf("lastConsumedKeys %v, want empty", c.LastConsumedKeys)
	}
}

func TestTheSeedTimelineHolds(t *testing.T) {
	// Fetches of 1, 1 and 198 records; batches served every 4m40s; expiry 900 s after
	// the last productive fetch, the clear when the 4th batch of 20 returns.
	r := runSeed(t, settings(eachbatch.V1_10_0))
	var fetches []int
	var serves []float64
	var expiry, clear float64
	for _, ev := range r.events {
		switch ev.Ev {
		case traceevent.Fetch:
			if ev.Returned > 0 {
				fetches = append(fetches, ev.Returned)
			}
		case traceevent.Serve:
			serves = append(serves, ev.AtMs)
		case traceevent.Expiry:
			if expiry == 0 {
				expiry = ev.AtMs
				if *ev.TimeoutMs != 900000 {
					t.Errorf("expiry timeout %v ms", *ev.TimeoutMs)
				}
			}
		case traceevent.Clear:
			clear = ev.AtMs
		}
	}
	if len(fetches) < 3 || fetches[0] != 1 || fetches[1] != 1 || fetches[2] != 198 {
		t.Fatalf("productive fetches %v, want 1, 1, 198 first", fetches)
	}
	if len(serves) < 6 {
		t.Fatalf("serves %v", serves)
	}
	third := serves[2] // first batch of 20, right after the 198 fetch
	for i := 3; i < 6; i++ {
		if d := serves[i] - serves[i-1]; d != 280000 {
			t.Errorf("serve %d came %v ms after the previous, want 280000", i, d)
		}
	}
	if d := expiry - third; d != 900000 {
		t.Errorf("expiry %v ms after the last productive fetch, want 900000", d)
	}
	if d := clear - serves[5]; d != 280000 {
		t.Errorf("clear %v ms after the last serve, want 280000 (when the slow batch returns)", d)
	}
}

func TestV1101AndHeadDeliverAll200(t *testing.T) {
	for _, p := range []eachbatch.Policy{eachbatch.V1_10_1, eachbatch.Head} {
		t.Run(string(p), func(t *testing.T) {
			r := runSeed(t, settings(p))
			if got := distinctBelow(r.delivered1, 200); got != 200 {
				t.Errorf("phase 1 delivered %d of 200", got)
			}
			for o, n := range r.delivered1 {
				if n != 1 {
					t.Errorf("offset %d delivered %d times", o, n)
				}
			}
			if r.committed1 != 200 || r.committed2 != 202 {
				t.Errorf("committed %d then %d, want 200 then 202", r.committed1, r.committed2)
			}
		})
	}
}

func TestShortBatchesNeverExpireTheCache(t *testing.T) {
	s := settings(eachbatch.V1_10_0)
	s.HandlerDelay = time.Second
	r := runSeed(t, s)
	if got := distinctBelow(r.delivered1, 200); got != 200 {
		t.Errorf("delivered %d of 200 with 7 s batches", got)
	}
	for _, ev := range r.events {
		if ev.Ev == traceevent.Clear {
			t.Fatalf("cache cleared at %v ms with 7 s batches", ev.AtMs)
		}
	}
}

func TestHeadRewindsAPartitionThatWasNeverServed(t *testing.T) {
	// Two partitions with data, one worker and unbounded batches: the first fetch caches
	// both partitions, partition 0 is served as one 22-minute batch while partition 1's
	// records wait in the cache; when the cache expires, partition 1 has no last-consumed
	// entry. v1.10.1 skips its rewind and loses its records; head rewinds it to its
	// oldest cached record.
	for _, tc := range []struct {
		p        eachbatch.Policy
		wantLost bool
	}{{eachbatch.V1_10_1, true}, {eachbatch.Head, false}} {
		t.Run(string(tc.p), func(t *testing.T) {
			l := loop.NewVirtual(time.Unix(0, 0))
			sim := simkafka.New(l, 5*time.Second, nil)
			p1 := kpart.TopicPartition{Topic: "stranded", Partition: 1}
			sim.Transaction(p0, 100)
			sim.Transaction(p1, 40)
			sim.Assign(p0, p1)
			s := settings(tc.p)
			s.Concurrency = 1
			s.BatchSize = -1
			e, err := eachbatch.New(l, sim, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			l.Post(e.Start)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := l.Run(ctx, e.Quiescent); err != nil {
				t.Fatal(err)
			}
			got := len(e.Delivered()[p1])
			if lost := got < 40; lost != tc.wantLost {
				t.Fatalf("partition 1 delivered %d of 40; lost=%v, want lost=%v", got, lost, tc.wantLost)
			}
			if len(e.Delivered()[p0]) != 100 {
				t.Fatalf("partition 0 delivered %d of 100", len(e.Delivered()[p0]))
			}
		})
	}
}

func TestTheSameInputsGiveTheSameTrace(t *testing.T) {
	a := runSeed(t, settings(eachbatch.V1_10_0))
	b := runSeed(t, settings(eachbatch.V1_10_0))
	if len(a.events) != len(b.events) {
		t.Fatalf("%d events vs %d", len(a.events), len(b.events))
	}
	for i := range a.events {
		if a.events[i].Ev != b.events[i].Ev || a.events[i].AtMs != b.events[i].AtMs {
			t.Fatalf("event %d differs: %+v vs %+v", i, a.events[i], b.events[i])
		}
	}
}

// BenchmarkSeedScenarioFullScaleVirtual runs the bug report's whole scenario (phase 1
// and 2, 900 s expiry, 40 s per record) on virtual time.
func BenchmarkSeedScenarioFullScaleVirtual(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := runSeed(b, settings(eachbatch.V1_10_0))
		if r.committed2 != 202 {
			b.Fatalf("committed %d", r.committed2)
		}
	}
}

// 1.3.1 to 1.6.0 size fetches by doubling after two full ones (#increaseMaxSize): the
// real 1.6.0 asked 1, 1, 2, 2, 4, 4, ..., 64, 64 on the seed at 1/100 (its capture,
// testenv/jsclient/captures/v1.6.0-seed.log.gz), took batches of 32 and lost nothing.
func TestV160DoublesItsFetchesAndBatches32(t *testing.T) {
	r := runSeed(t, settings(eachbatch.V1_6_0))
	var sizes []string
	for _, ev := range r.events {
		if ev.Ev == traceevent.Fetch && ev.Returned > 0 && len(sizes) < 14 {
			sizes = append(sizes, fmt.Sprintf("%d/%d", ev.Requested, ev.Returned))
		}
		if ev.Ev == traceevent.Serve && len(ev.Offsets) > 32 {
			t.Errorf("a batch of %d records, want at most 32", len(ev.Offsets))
		}
	}
	want := "1/1 1/1 2/2 2/2 4/4 4/4 8/8 8/8 16/16 16/16 32/32 32/32 64/64 64/10"
	if got := strings.Join(sizes, " "); got != want {
		t.Errorf("fetches (requested/returned) %s, want %s", got, want)
	}
	if r.committed1 != 200 || len(r.delivered1) != 200 {
		t.Errorf("phase 1 committed %d, delivered %d; want 200 and 200", r.committed1, len(r.delivered1))
	}
	if len(r.e.Errors) != 1 || !strings.Contains(r.e.Errors[0].Error(), "batches of 32, not 20") {
		t.Errorf("errors %v, want the one notice that the batch size is 32", r.e.Errors)
	}
}

// eachMessage on 1.6.0 takes one record at a time (#runInternal's fetcher is
// #consumeSingleCached; maxBatchSize is eachBatch's alone): the batch size it was given
// is no one's, so there is no notice about it, and -1 does not unbind the cache.
func TestV160EachMessageHasNoBatchSizeToWarnAbout(t *testing.T) {
	for _, size := range []int{20, -1} {
		s := settings(eachbatch.V1_6_0)
		s.Handler, s.BatchSize = eachbatch.EachMessage, size
		r := runSeed(t, s)
		for _, err := range r.e.Errors {
			if strings.Contains(err.Error(), "max.batch.size") {
				t.Errorf("batch size %d: notice %q, want none for eachMessage", size, err)
			}
		}
		if r.committed1 != 200 || len(r.delivered1) != 200 {
			t.Errorf("batch size %d: phase 1 committed %d, delivered %d; want 200 and 200", size, r.committed1, len(r.delivered1))
		}
		for _, ev := range r.events {
			if ev.Ev == traceevent.Fetch && ev.Requested > 1024 {
				t.Fatalf("batch size %d: a fetch of %d records: the cache is unbounded, want 1.6.0's sizing (at most 1024)", size, ev.Requested)
			}
		}
	}
}
