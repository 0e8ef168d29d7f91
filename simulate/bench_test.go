package simulate

import (
	"context"
	"testing"

	"github.com/kstranded/kstranded/repro"
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
