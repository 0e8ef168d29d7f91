package simulate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/workload"
)

// BenchmarkSimulateSeed is `kstranded simulate` of the seed scenario, one policy:
// phases 1 and 2 at full scale on virtual time, with the ledger watching.
func BenchmarkSimulateSeed(b *testing.B) {
	o := repro.DefaultOptions()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := repro.Simulate(context.Background(), o)
		if err != nil || r.Lost() != 118 {
			b.Fatalf("lost %v, %v", r, err)
		}
	}
}

// spreadOptions is `kstranded simulate --spread PxN --partitions parts --concurrency 20
// --max-poll-interval 5m --handler-delay 10ms` (issue 25's shape).
func spreadOptions(b *testing.B, parts, n int, partitions int32) repro.Options {
	o := repro.DefaultOptions()
	spec, err := workload.Flags{Spread: fmt.Sprintf("%dx%d", parts, n), SpreadSet: true}.Resolve()
	if err != nil {
		b.Fatal(err)
	}
	o.Workload, o.Partitions = spec, partitions
	o.Concurrency, o.MaxPollInterval, o.HandlerDelay = 20, 5*time.Minute, 10*time.Millisecond
	return o
}

func benchSpread(b *testing.B, parts, n int, partitions int32) {
	o := spreadOptions(b, parts, n, partitions)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := repro.Simulate(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(parts*n), "ns/record")
}

// BenchmarkSimulateSpread is issue 25's shape at 10^4 to 10^6 records (100 partitions)
// and 10 to 1,000 partitions (10^5 records).
func BenchmarkSimulateSpread(b *testing.B) {
	for _, c := range []struct{ parts, n int }{{100, 100}, {100, 1000}, {100, 5000}, {100, 10000}} {
		b.Run(fmt.Sprintf("records=%d", c.parts*c.n), func(b *testing.B) { benchSpread(b, c.parts, c.n, 100) })
	}
	for _, parts := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) { benchSpread(b, parts, 100_000/parts, int32(parts)) })
	}
}

// BenchmarkSimulateSeedMaxPoll is one point of the seed's max.poll.interval sweep.
func BenchmarkSimulateSeedMaxPoll(b *testing.B) {
	for _, d := range []time.Duration{time.Second, 10 * time.Second, 100 * time.Second, 1000 * time.Second} {
		b.Run(d.String(), func(b *testing.B) {
			o := repro.DefaultOptions()
			o.MaxPollInterval = d
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := repro.Simulate(context.Background(), o); err != nil && !errors.Is(err, repro.ErrPhaseTimeout) {
					b.Fatal(err)
				}
			}
		})
	}
}
