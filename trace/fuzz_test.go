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
