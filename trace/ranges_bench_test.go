package trace

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kstranded/kstranded/trace/tracegen"
)

// BenchmarkManyRanges: issue 27 §10, a trace whose deliveries make n distinct ranges on
// one partition (every other offset served; the rest lost). The parse and the analysis
// must grow about linearly with n (it was quadratic: 10k 1.8 s, 40k 35 s). Figures in
// BENCHMARKS.md.
func BenchmarkManyRanges(b *testing.B) {
	for _, n := range []int{10000, 40000, 160000} {
		for _, reverse := range []bool{false, true} {
			var buf bytes.Buffer
			if err := tracegen.WriteManyRangesTrace(&buf, n, reverse); err != nil {
				b.Fatal(err)
			}
			data := buf.Bytes()
			b.Run(fmt.Sprintf("ranges=%d/reverse=%v", n, reverse), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					a := NewAnalyzer(Options{NoTimeline: true})
					if _, err := a.Parse("many.trace", bytes.NewReader(data), FormatKstranded); err != nil {
						b.Fatal(err)
					}
					r := a.Finish()
					if len(r.Partitions) != 1 {
						b.Fatalf("%d partitions", len(r.Partitions))
					}
				}
			})
		}
	}
}
