package trace

import (
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"testing"
)

// BenchmarkParseFile parses the file KSTRANDED_TRACE_FILE as trace parse does (no
// timeline, the 32 MiB soft memory limit), with KSTRANDED_TRACE_PATTERN as --pattern (KSTRANDED_TRACE_CHUNK: the chunk size in bytes): for
// profiling the whole-file path (bench/trace-parse-shapes.sh writes the files), e.g.
//
//	KSTRANDED_TRACE_FILE=/tmp/busy-1000.log go test ./trace -run '^$' -bench ParseFile -benchtime 3x -cpuprofile cpu.prof
func BenchmarkParseFile(b *testing.B) {
	name := os.Getenv("KSTRANDED_TRACE_FILE")
	if name == "" {
		b.Skip("KSTRANDED_TRACE_FILE not set")
	}
	opt := Options{NoTimeline: true}
	if p := os.Getenv("KSTRANDED_TRACE_PATTERN"); p != "" {
		opt.Pattern = regexp.MustCompile(p)
	}
	if v := os.Getenv("KSTRANDED_TRACE_CHUNK"); v != "" { // the chunk size, in bytes
		n, err := strconv.Atoi(v)
		if err != nil || n < 1<<12 {
			b.Fatalf("KSTRANDED_TRACE_CHUNK=%q: a number of bytes, at least 4096", v)
		}
		defer func(old int) { rdChunkSize = old }(rdChunkSize)
		rdChunkSize = n
	}
	fi, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(32 << 20))
	b.SetBytes(fi.Size())
	for i := 0; i < b.N; i++ {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		a := NewAnalyzer(opt)
		if _, err := a.Parse(name, f, FormatAuto); err != nil {
			b.Fatal(err)
		}
		a.Finish()
		f.Close()
	}
}

// BenchmarkScanRdkafkaLines is the first stage alone (rdScanner.scan, one goroutine, no
// fold) over every line of the librdkafka log KSTRANDED_TRACE_FILE, in ns a line: for
// measuring the readers of one kind of line, e.g. a busy log's Enqueue lines:
//
//	grep '|CONSUME|' /tmp/busy-20.log | head -100000 > /tmp/consume.log
//	KSTRANDED_TRACE_FILE=/tmp/consume.log go test ./trace -run '^$' -bench ScanRdkafkaLines -count 6
func BenchmarkScanRdkafkaLines(b *testing.B) {
	name := os.Getenv("KSTRANDED_TRACE_FILE")
	if name == "" {
		b.Skip("KSTRANDED_TRACE_FILE not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	for rest := data; len(rest) > 0; {
		var l []byte
		l, rest = nextLine(rest)
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		b.Skip("no lines")
	}
	sc := newRdScanner()
	var r rdRec
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		sc.reset()
		for _, l := range lines {
			sc.scan(l, &r)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}
