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
