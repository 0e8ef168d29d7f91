package trace

import (
	"bytes"
	"regexp"
	"testing"
)

// Every parser reads outside input: none may panic, whatever the bytes. Seed corpora live
// in testdata/fuzz/<FuzzName>/.
func fuzzFormat(f *testing.F, format Format, pattern *regexp.Regexp) {
	f.Fuzz(func(t *testing.T, data []byte) {
		a := NewAnalyzer(Options{Pattern: pattern, TimelineCap: 64})
		st, err := a.Parse("fuzz", bytes.NewReader(data), format)
		if err == nil && st.Lines == 0 {
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
				if err == nil && st.Lines == 0 {
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
