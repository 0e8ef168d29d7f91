package watch

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/embedded"
)

// generatedCluster fills an embedded broker with topics × 20 partitions of records
// records each and groups groups, group i committed at committed on every partition of
// topic i mod topics; it returns the broker and the groups.
func generatedCluster(b *testing.B, groups, topics, records int, committed int64) (*embedded.Broker, []string) {
	br, err := embedded.Start(embedded.Options{Topic: "t000", Partitions: 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(br.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(br.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	var rs []*kgo.Record
	for t := 0; t < topics; t++ {
		name := fmt.Sprintf("t%03d", t)
		if t > 0 {
			if _, err := adm.CreateTopic(ctx, 20, 1, nil, name); err != nil {
				b.Fatal(err)
			}
		}
		for p := int32(0); p < 20; p++ {
			for i := 0; i < records; i++ {
				rs = append(rs, &kgo.Record{Topic: name, Partition: p, Value: []byte("v")})
			}
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	var gs []string
	for g := 0; g < groups; g++ {
		id := fmt.Sprintf("g%04d", g)
		gs = append(gs, id)
		var os kadm.Offsets
		for p := int32(0); p < 20; p++ {
			os.Add(kadm.Offset{Topic: fmt.Sprintf("t%03d", g%topics), Partition: p, At: committed, LeaderEpoch: -1})
		}
		if _, err := adm.CommitOffsets(ctx, id, os); err != nil {
			b.Fatal(err)
		}
	}
	return br, gs
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEvaluateEmbeddedBroker1000Groups20Partitions: issue 24 §4 / 25 §3 on a
// generated cluster: 1,000 groups × 20 partitions (50 topics of 20 partitions, 100
// records each, every group committed at 100) on the embedded broker, every record
// delivered but 40-49 of topic t000's partitions (the groups reading t000 lose 10
// records a partition; the others are OK). The first evaluation reads the records of
// every committed range (first-eval-ms); the benchmarked evaluations are the steady
// state: every group's commits read in one round of requests (requests/op), the lost
// partitions read again, the OK ones forgotten below their commit. cpu-ms/op is the
// process's CPU, the in-process broker's included; heap-MB is what the watcher and the
// broker hold after the first evaluation.
func BenchmarkEvaluateEmbeddedBroker1000Groups20Partitions(b *testing.B) {
	br, gs := generatedCluster(b, 1000, 50, 100, 100)
	k, err := inspect.NewKafka([]kgo.Opt{kgo.SeedBrokers(br.Addr())}, 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	w := New(k, Options{Groups: gs})
	var lines []byte
	for t := 0; t < 50; t++ {
		for p := 0; p < 20; p++ {
			if t == 0 {
				lines = fmt.Appendf(lines, "t%03d/%d:0-39\nt%03d/%d:50-99\n", t, p, t, p)
			} else {
				lines = fmt.Appendf(lines, "t%03d/%d:0-99\n", t, p)
			}
		}
	}
	w.Feed("app.log", lines)
	ctx := context.Background()
	start := time.Now()
	if _, err := w.Evaluate(ctx); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap := float64(ms.HeapAlloc) / (1 << 20)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := w.Evaluate(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(first.Milliseconds()), "first-eval-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(heap, "heap-MB")
	b.ReportMetric(float64(w.Last().Requests), "requests/op")
	lost, ok := 0, 0
	for _, p := range w.Partitions() {
		switch {
		case p.Judgement.LostCount == 10:
			lost++
		case p.Judged && p.Judgement.LostCount == 0:
			ok++
		}
	}
	if lost != 20*20 || ok != 20000-400 {
		b.Fatalf("lost on %d partitions, OK on %d; want 400 and 19600", lost, ok)
	}
}
