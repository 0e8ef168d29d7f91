package repro

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kstranded/kstranded/workload"
)

// BenchmarkSimulateScale is issue 25 §1's growth curve: `kstranded simulate --spread PxN
// --partitions P --concurrency 20 --max-poll-interval 5m --handler-delay 10ms` from 10^4
// to 10^7 records on 100 partitions, and 10 to 10,000 partitions at 10^5 and 10^6
// records, past the CLI's limits (MaxSimulatedRecords, MaxPartitions, the event budget:
// Options.simScale). It reports ns/record and the Go heap's peak is read from
// -benchmem's B/op only as an allocation total; bench/simulate-scale.sh measures the
// whole process's peak RSS. The 10^7 and 10^4-partition points run only with
// KSTRANDED_BENCH_SCALE=large (each takes seconds).
func BenchmarkSimulateScale(b *testing.B) {
	type point struct{ parts, n int }
	points := []point{
		{100, 100}, {100, 1000}, {100, 10000}, {100, 100000}, // 10^4 to 10^7 records, 100 partitions
		{10, 10000}, {1000, 100}, {10000, 10}, // 10 to 10^4 partitions, 10^5 records
		{10, 100000}, {1000, 1000}, {10000, 100}, // 10 to 10^4 partitions, 10^6 records
	}
	for _, p := range points {
		records := p.parts * p.n
		b.Run(fmt.Sprintf("records=%d/partitions=%d", records, p.parts), func(b *testing.B) {
			if (records > 1_000_000 || p.parts > 1000) && !largeScale() {
				b.Skip("KSTRANDED_BENCH_SCALE=large runs the 10^7-record and 10^4-partition points")
			}
			o := DefaultOptions()
			spec, err := workload.Flags{Spread: fmt.Sprintf("%dx%d", p.parts, p.n), SpreadSet: true}.Resolve()
			if err != nil {
				b.Fatal(err)
			}
			o.Workload, o.Partitions, o.simScale = spec, int32(p.parts), true
			o.Concurrency, o.MaxPollInterval, o.HandlerDelay = 20, 5*time.Minute, 10*time.Millisecond
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Simulate(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/record")
		})
	}
}

func largeScale() bool { return os.Getenv("KSTRANDED_BENCH_SCALE") == "large" }
