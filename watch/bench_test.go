package watch

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/kstranded/kstranded/inspect"
)

// manyGroups is a cluster of groups × partitions, each partition with 1,000 records,
// committed at 900, all delivered but 500-509 (lost on every partition).
type manyGroups struct {
	groups, partitions int
}

func (m manyGroups) Snapshot(ctx context.Context, group string, topics []string) (*inspect.Snapshot, error) {
	s := &inspect.Snapshot{Group: inspect.Group{ID: group, State: "Empty"}}
	for p := 0; p < m.partitions; p++ {
		s.Partitions = append(s.Partitions, inspect.Offsets{Topic: "t-" + group, Partition: int32(p), Committed: 900, LogStart: 0, LastStable: 1000, HighWatermark: 1000})
	}
	return s, nil
}

func (m manyGroups) Scan(ctx context.Context, topic string, partition int32, from, to int64) (*inspect.Scan, error) {
	return &inspect.Scan{From: from, To: to, Spans: []inspect.Span{{First: from, Last: to - 1, Kind: inspect.Record}}}, nil
}

func (m manyGroups) ListGroups(ctx context.Context) ([]inspect.Listing, error) { return nil, nil }

// BenchmarkEvaluate1000Groups20Partitions: issue 24 §4 / 25 §3, one evaluation of 1,000
// groups × 20 partitions (the watcher's own cost: the cluster is in memory; what a real
// cluster adds is its requests). Reports the heap the state holds after the first
// evaluation as heap-MB.
func BenchmarkEvaluate1000Groups20Partitions(b *testing.B) {
	m := manyGroups{groups: 1000, partitions: 20}
	var gs []string
	for g := 0; g < m.groups; g++ {
		gs = append(gs, fmt.Sprintf("g%04d", g))
	}
	w := New(m, Options{Groups: gs})
	var lines []byte
	for g := 0; g < m.groups; g++ {
		for p := 0; p < m.partitions; p++ {
			lines = fmt.Appendf(lines, "t-g%04d/%d:0-499\nt-g%04d/%d:510-950\n", g, p, g, p)
		}
	}
	w.Feed("app.log", lines)
	lines = nil
	if _, err := w.Evaluate(context.Background()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapAlloc) / (1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.Evaluate(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(heap, "heap-MB")
	if p := w.Partitions(); len(p) != 20000 || p[0].Judgement.LostCount != 10 {
		b.Fatalf("%d partitions, lost %d", len(p), p[0].Judgement.LostCount)
	}
}

func (m manyGroups) Snapshots(ctx context.Context, groups []string) (*inspect.Snapshots, error) {
	return inspect.SnapshotEach(ctx, m, groups)
}
