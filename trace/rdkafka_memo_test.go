package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/kstranded/kstranded/trace/tracegen"
)

// readBothWays parses data with the memo of messages and without it, in 1 MiB chunks and
// in 4 KiB ones (so a memo entry outlives many chunk boundaries), and fails when any of the
// reports differs from the first.
func readBothWays(t testing.TB, name string, data []byte, format Format, pattern string) {
	t.Helper()
	var first *Report
	for _, off := range []bool{false, true} {
		for _, size := range []int{1 << 20, 4096} {
			func() {
				defer func(m bool, s int) { noMemo, rdChunkSize = m, s }(noMemo, rdChunkSize)
				noMemo, rdChunkSize = off, size
				opt := Options{TimelineCap: 256}
				if pattern != "" {
					opt.Pattern = regexp.MustCompile(pattern)
				}
				a := NewAnalyzer(opt)
				if _, err := a.Parse(name, bytes.NewReader(data), format); err != nil {
					t.Fatalf("%s (memo off %v, chunks of %d): %v", name, off, size, err)
				}
				r := a.Finish()
				if first == nil {
					first = r
				} else if !reflect.DeepEqual(first, r) {
					t.Fatalf("%s: memo off %v, chunks of %d: the report differs", name, off, size)
				}
			}()
		}
	}
}

// The memo of librdkafka's messages (rdkafka_memo.go) changes no reading: the real
// captures and the generated shapes give the same report with it and without it.
func TestTheMemoOfMessagesChangesNoReport(t *testing.T) {
	for _, c := range []struct {
		file, pattern string
		format        Format
	}{
		{"rdkafka-go-consumer.log", "", FormatLibrdkafka},
		{"repro-v1.10.0-rdkafka.log", "", FormatLibrdkafka},
		{"jsclient/v1.10.1-default-debug.log.gz", jsPlainPattern, FormatAuto},
		{"jsclient/v1.10.1-json.log.gz", jsJSONPattern, FormatAuto},
		{"jsclient/v1.10.0-default-debug.log.gz", jsPlainPattern, FormatAuto},
	} {
		var data []byte
		if filepath.Ext(c.file) == ".gz" {
			data = jsCapture(t, filepath.Base(c.file))
		} else {
			var err error
			if data, err = os.ReadFile(filepath.Join("testdata", c.file)); err != nil {
				t.Fatal(err)
			}
		}
		readBothWays(t, c.file, data, c.format, c.pattern)
	}
	for _, parts := range []int{6, 1000} {
		var rd, busy, js bytes.Buffer
		if err := tracegen.WriteRdkafkaLog(&rd, 2<<20, parts); err != nil {
			t.Fatal(err)
		}
		if err := tracegen.WriteBusyRdkafkaLog(&busy, 2<<20, parts); err != nil {
			t.Fatal(err)
		}
		if err := tracegen.WriteJSClientLog(&js, 2<<20, parts, false); err != nil {
			t.Fatal(err)
		}
		readBothWays(t, "long-poll", rd.Bytes(), FormatLibrdkafka, "")
		readBothWays(t, "busy", busy.Bytes(), FormatLibrdkafka, "")
		readBothWays(t, "jsclient", js.Bytes(), FormatJSClient, jsPlainPattern)
	}
}

// FuzzMemoOfMessages: whatever the librdkafka log, the memo changes nothing.
func FuzzMemoOfMessages(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "rdkafka-go-consumer.log")); err == nil {
		f.Add(data[:min(len(data), 8192)])
	}
	f.Add([]byte("%7|1.0|FETCH|c| [thrd:b]: b: Fetch topic t [0] at offset 5 (v2)\n%7|1.1|FETCH|c| [thrd:b]: b: Fetch topic t [0] at offset 5 (v2)\n%7|1.2|FETCHERR|c| [thrd:b]: b: t [0]: Fetch failed at offset 5 (leader epoch 0): _PARTITION_EOF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var reps [2]*Report
		for i, off := range []bool{false, true} {
			func() {
				defer func(m bool) { noMemo = m }(noMemo)
				noMemo = off
				a := NewAnalyzer(Options{TimelineCap: 64})
				if _, err := a.Parse("fuzz", bytes.NewReader(data), FormatLibrdkafka); err != nil {
					reps[i] = &Report{}
					return
				}
				reps[i] = a.Finish()
			}()
		}
		if !reflect.DeepEqual(reps[0], reps[1]) {
			t.Fatalf("%q: the memo changed the report", data)
		}
	})
}
