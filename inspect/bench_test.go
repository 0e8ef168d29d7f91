package inspect

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// wideGroup makes a topic of n partitions, one record each, and a group committed at 1
// on every partition.
func wideGroup(t testing.TB, n int32) (string, string) {
	b := startBroker(t, 1)
	cl := client(t, b.Addr())
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, n, 1, nil, "wide"); err != nil {
		t.Fatal(err)
	}
	rs := make([]*kgo.Record, n)
	var os kadm.Offsets
	for p := range n {
		rs[p] = &kgo.Record{Topic: "wide", Partition: p, Value: []byte("v")}
		os.Add(kadm.Offset{Topic: "wide", Partition: p, At: 1, LeaderEpoch: -1})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CommitOffsets(ctx, "wide-group", os); err != nil {
		t.Fatal(err)
	}
	return b.Addr(), "wide-group"
}

// TestInspectingTwoThousandPartitionsTakesSevenRequests: one request per kind
// (offsets, the two group describes, metadata, three ListOffsets), whatever the
// partition count. How long it takes is BenchmarkInspect2000Partitions's (under a
// second per inspect; BENCHMARKS.md).
func TestInspectingTwoThousandPartitionsTakesSevenRequests(t *testing.T) {
	addr, group := wideGroup(t, 2000)
	k := newKafka(t, addr)
	start := time.Now()
	r, err := Run(context.Background(), k, Options{Group: group})
	d := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Partitions) != 2000 || r.Partitions[1999].HighWatermark != 1 || r.Partitions[1999].Committed != 1 {
		t.Fatalf("partitions = %d, last = %+v", len(r.Partitions), r.Partitions[len(r.Partitions)-1])
	}
	if r.Requests != 7 {
		t.Errorf("requests = %d, want 7", r.Requests)
	}
	t.Logf("inspect of 2000 partitions: %s, %d requests", d, r.Requests)
}

// BenchmarkInspect2000Partitions times an inspect of 2,000 partitions and fails above a
// second per inspect (the bound the test above once held on a shared machine).
func BenchmarkInspect2000Partitions(b *testing.B) {
	addr, group := wideGroup(b, 2000)
	k := newKafka(b, addr)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Run(context.Background(), k, Options{Group: group}); err != nil {
			b.Fatal(err)
		}
	}
	if per := b.Elapsed() / time.Duration(b.N); per > time.Second {
		b.Errorf("inspect of 2000 partitions took %s per run, want under a second", per)
	}
}

// fill produces n records of 16 bytes to stranded/0 in batches of about 1,000.
func fill(t testing.TB, addr string, n int) {
	cl := client(t, addr, kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(200_000))
	ctx := context.Background()
	val := []byte("0123456789abcdef")
	const chunk = 50_000
	for done := 0; done < n; done += chunk {
		rs := make([]*kgo.Record, min(chunk, n-done))
		for i := range rs {
			rs[i] = &kgo.Record{Partition: 0, Value: val}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScanRateVersusKcat measures, in one run against the same embedded broker and the
// same range, the scan's classification rate and the rate at which kcat reads the
// records. Run with KSTRANDED_BENCH_KCAT=1 (bench/inspect.sh).
func TestScanRateVersusKcat(t *testing.T) {
	if os.Getenv("KSTRANDED_BENCH_KCAT") == "" {
		t.Skip("set KSTRANDED_BENCH_KCAT=1 (needs kcat) to compare scan and kcat rates")
	}
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat not installed: apt-get install -y kcat")
	}
	n := 1_000_000
	if s := os.Getenv("KSTRANDED_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	b := startBroker(t, 1)
	fill(t, b.Addr(), n)
	k := newKafka(t, b.Addr())
	ctx := context.Background()

	var scanBest, kcatBest time.Duration
	for round := range 3 {
		start := time.Now()
		sc, err := k.Scan(ctx, "stranded", 0, 0, int64(n))
		d := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if sc.To != int64(n) || len(sc.Spans) != 1 || sc.Spans[0].Kind != Record {
			t.Fatalf("scan = %d..%d %d spans", sc.From, sc.To, len(sc.Spans))
		}
		if scanBest == 0 || d < scanBest {
			scanBest = d
		}

		cmd := exec.Command(kcat, "-C", "-b", b.Addr(), "-t", "stranded", "-p", "0", "-o", "beginning",
			"-c", strconv.Itoa(n), "-e", "-q", "-f", "%o\n", "-X", "fetch.wait.max.ms=10")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		start = time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("kcat: %v: %s", err, stderr.String())
		}
		d = time.Since(start)
		if lines := bytes.Count(out.Bytes(), []byte("\n")); lines != n {
			t.Fatalf("kcat read %d records, want %d", lines, n)
		}
		if kcatBest == 0 || d < kcatBest {
			kcatBest = d
		}
		t.Logf("round %d: scan %s, kcat %s", round+1, scanBest, kcatBest)
	}
	scanRate := float64(n) / scanBest.Seconds()
	kcatRate := float64(n) / kcatBest.Seconds()
	ratio := scanRate / kcatRate
	fmt.Printf("BENCH offsets=%d scan=%s scan_rate=%.0f/s kcat=%s kcat_rate=%.0f/s ratio=%.2f\n", n, scanBest, scanRate, kcatBest, kcatRate, ratio)
	if ratio < 0.7 {
		t.Fatalf("scan rate %.0f/s is %.0f%% of kcat's %.0f/s (want >= 70%%)", scanRate, ratio*100, kcatRate)
	}
}

// BenchmarkScanClassify measures the classifier alone on 1,000,000 offsets already
// fetched (no broker in the loop).
func BenchmarkScanClassify(b *testing.B) {
	br := startBroker(b, 1)
	fill(b, br.Addr(), 1_000_000)
	k := newKafka(b, br.Addr())
	b.ResetTimer()
	for b.Loop() {
		if _, err := k.Scan(context.Background(), "stranded", 0, 0, 1_000_000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(1_000_000*b.N)/b.Elapsed().Seconds(), "offsets/s")
}

// TestBenchScriptsNamedHereExistAndRunTheTest keeps the pointers in this package's
// comments true: every bench/*.sh a comment names exists, and a test whose comment names
// a script is run by that script.
func TestBenchScriptsNamedHereExistAndRunTheTest(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	script := regexp.MustCompile(`bench/[A-Za-z0-9_.-]+\.sh`)
	testFunc := regexp.MustCompile(`(?m)^func (Test\w+)`)
	named := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Each test function with the comment block above it.
		funcs := testFunc.FindAllSubmatchIndex(src, -1)
		for _, loc := range script.FindAllIndex(src, -1) {
			named++
			name := string(src[loc[0]:loc[1]])
			body, err := os.ReadFile(filepath.Join("..", name))
			if err != nil {
				t.Errorf("%s names %s, which does not exist: %v", f, name, err)
				continue
			}
			for _, fn := range funcs {
				if fn[0] > loc[1] {
					if test := string(src[fn[2]:fn[3]]); !bytes.Contains(body, []byte(test)) {
						t.Errorf("%s: the comment of %s names %s, which does not run it", f, test, name)
					}
					break
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("no comment names a bench script; this test would check nothing")
	}
}
