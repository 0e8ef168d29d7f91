package trace

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"
)

// Every parser reads outside input: none may panic, whatever the bytes. Seed corpora live
// in testdata/fuzz/<FuzzName>/.
func fuzzFormat(f *testing.F, format Format, pattern *regexp.Regexp) {
	f.Fuzz(func(t *testing.T, data []byte) {
		a := NewAnalyzer(Options{Pattern: pattern, TimelineCap: 64})
		st, err := a.Parse("fuzz", bytes.NewReader(data), format)
		if err == nil && st.Lines == 0 && st.Format != FormatEmpty {
			t.Fatalf("success on input without lines: %q", data)
		}
		r := a.Finish()
		_ = r.Lost()
	})
}

func FuzzKstranded(f *testing.F) {
	f.Add([]byte(`{"ts":"2026-03-02T14:03:39Z","at_ms":0,"ev":"fetch","ranges":[{"partition":0,"first":2,"last":199,"count":198}]}`))
	fuzzFormat(f, FormatKstranded, nil)
}

func FuzzKafkaJS(f *testing.F) {
	f.Add([]byte("14:26:59 clearCacheAndResetPositions {\"assignedSize\":0,\"lastConsumedKeys\":[]}\n<- x\n"))
	fuzzFormat(f, FormatKafkaJS, nil)
}

func FuzzLibrdkafka(f *testing.F) {
	f.Add([]byte("%7|1796225597.721|CONSUME|c| [thrd:b]: b: Enqueue 201 message(s) (690 bytes, 201 ops) on stranded [0] fetch queue (qlen 0, v2, last_offset 200, 1 ctrl msgs, 0 aborted msgsets, uncompressed)\n"))
	fuzzFormat(f, FormatLibrdkafka, nil)
}

func FuzzPattern(f *testing.F) {
	f.Add([]byte("2026-12-02T15:33:17.721Z handler delivered topic=stranded partition=0 offset=0\n"))
	fuzzFormat(f, FormatPattern, regexp.MustCompile(appPattern))
}

func FuzzAutoDetect(f *testing.F) {
	f.Add([]byte("consume-result {\"count\":1, \"offsets\":[\"0:0\"]}\n"))
	fuzzFormat(f, FormatAuto, regexp.MustCompile(appPattern))
}

// The JS client's log output, as the DefaultLogger and a JSON logger print it; seeds are
// excerpts of the real captures (testdata/jsclient). Each input is also read in chunks of
// 512 bytes, so objects and lines cut by chunk boundaries are exercised.
func fuzzJSClient(f *testing.F, format Format, pattern string) {
	re := regexp.MustCompile(pattern)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, size := range []int{1 << 20, 512} {
			func() {
				defer func(s int) { rdChunkSize = s }(rdChunkSize)
				rdChunkSize = size
				a := NewAnalyzer(Options{Pattern: re, TimelineCap: 64})
				st, err := a.Parse("fuzz", bytes.NewReader(data), format)
				if err == nil && st.Lines == 0 && st.Format != FormatEmpty {
					t.Fatalf("success on input without lines: %q", data)
				}
				if err == nil && st.Malformed > st.Lines {
					t.Fatalf("%d malformed of %d lines", st.Malformed, st.Lines)
				}
				_ = a.Finish().Lost()
			}()
		}
	})
}

func FuzzJSClient(f *testing.F) {
	f.Add([]byte("{\n  message: '[thrd:b/0]: b/0: Enqueue 2 message(s) (1 bytes, 2 ops) on t [0] fetch queue (qlen 0, v2, last_offset 1, 0 ctrl msgs, 0 aborted msgsets, uncompressed)',\n  fac: 'CONSUME',\n  timestamp: 1700000000000,\n  name: 'rdkafka#consumer-1'\n}\ndelivered topic=t partition=0 offset=0\n"))
	fuzzJSClient(f, FormatJSClient, `^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)$`)
}

func FuzzJSClientJSON(f *testing.F) {
	f.Add([]byte(`{"level":20,"fac":"CONSUME","timestamp":1700000000000,"name":"c","msg":"[thrd:b/0]: b/0: Enqueue 2 message(s) (1 bytes, 2 ops) on t [0] fetch queue (qlen 0, v2, last_offset 1, 0 ctrl msgs, 0 aborted msgsets, uncompressed)"}` + "\n" +
		`{"topic":"t","partition":0,"offset":"0","msg":"delivered"}` + "\n"))
	fuzzJSClient(f, FormatJSClientJSON, `"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"`)
}

// Issue 16 §7: many-partition inputs in every chunked and line format, with the fuzzer's
// bytes between the generated lines. Whatever the input, the analysis tracks at most
// MaxPartitions partitions, keeps the timeline within its budget, and says what it dropped.
func FuzzManyPartitions(f *testing.F) {
	f.Add(uint16(300), uint8(0), []byte(`{"ts":"2026-03-02T14:03:41Z","ev":"serve","partition":7,"offsets":[0,1,2]}`))
	f.Add(uint16(300), uint8(1), []byte("%7|1796225597.721|OFFSET|c| [thrd:main]: Topic stranded [9]: stored offset 5, committed offset 0\n"))
	f.Add(uint16(300), uint8(2), []byte(`{"topic":"stranded","partition":3,"offset":"4","msg":"delivered"}`))
	f.Fuzz(func(t *testing.T, parts uint16, shape uint8, data []byte) {
		const limit = 16
		formats := []Format{FormatKstranded, FormatLibrdkafka, FormatJSClientJSON}
		format := formats[int(shape)%len(formats)]
		var b bytes.Buffer
		for p := 0; p < int(parts)%2000; p++ {
			switch format {
			case FormatKstranded:
				fmt.Fprintf(&b, `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":%d,"first":0,"last":9,"count":10}]}`+"\n", p)
			case FormatLibrdkafka:
				fmt.Fprintf(&b, "%%7|1796225597.721|CONSUME|c| [thrd:b]: b: Enqueue 10 message(s) (690 bytes, 10 ops) on stranded [%d] fetch queue (qlen 0, v2, last_offset 9, 0 ctrl msgs, 0 aborted msgsets, uncompressed)\n", p)
			case FormatJSClientJSON:
				fmt.Fprintf(&b, `{"level":20,"fac":"CONSUME","timestamp":1700000000000,"name":"c","msg":"[thrd:b/0]: b/0: Enqueue 10 message(s) (1 bytes, 10 ops) on stranded [%d] fetch queue (qlen 0, v2, last_offset 9, 0 ctrl msgs, 0 aborted msgsets, uncompressed)"}`+"\n", p)
				fmt.Fprintf(&b, `{"topic":"stranded","partition":%d,"offset":"%d","msg":"delivered"}`+"\n", p, p%10)
			}
			if p%97 == 0 {
				b.Write(data)
				b.WriteByte('\n')
			}
		}
		a := NewAnalyzer(Options{MaxPartitions: limit, TimelineCap: 64, Pattern: regexp.MustCompile(`"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"`)})
		_, _ = a.Parse("fuzz", bytes.NewReader(b.Bytes()), format)
		r := a.Finish()
		if got := len(r.Partitions) + r.IdlePartitions; got > limit {
			t.Fatalf("%d partitions tracked, limit %d", got, limit)
		}
		if len(r.Timeline) > timelineBudget+64 {
			t.Fatalf("timeline of %d entries", len(r.Timeline))
		}
		if r.UntrackedEvents > 0 && len(r.Incomplete) == 0 {
			t.Fatal("events dropped at the limit, yet the report names nothing incomplete")
		}
	})
}
