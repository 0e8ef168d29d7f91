package trace

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/kstranded/kstranded/trace/tracegen"
)

func benchParse(b *testing.B, data []byte, format Format, pattern string) {
	opt := Options{}
	if pattern != "" {
		opt.Pattern = regexp.MustCompile(pattern)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := NewAnalyzer(opt)
		if _, err := a.Parse("bench.log", bytes.NewReader(data), format); err != nil {
			b.Fatal(err)
		}
		a.Finish()
	}
}

// The long-poll shape: mostly "Fetch topic" lines repeating their partition's position.
func BenchmarkParseRdkafka(b *testing.B) {
	var buf bytes.Buffer
	if err := tracegen.WriteRdkafkaLog(&buf, 32<<20, 6); err != nil {
		b.Fatal(err)
	}
	benchParse(b, buf.Bytes(), FormatLibrdkafka, "")
}

// A busy consumer: 20 partitions all fetching, enqueueing, storing and committing, about a
// third of the lines offset events (issue 13 §4); and the same with 1,000 partitions.
func BenchmarkParseBusy(b *testing.B) {
	for _, parts := range []int{20, 1000} {
		b.Run(itoa(int64(parts))+"-partitions", func(b *testing.B) {
			var buf bytes.Buffer
			if err := tracegen.WriteBusyRdkafkaLog(&buf, 64<<20, parts); err != nil {
				b.Fatal(err)
			}
			benchParse(b, buf.Bytes(), FormatLibrdkafka, "")
		})
	}
}

// The JS client's log output shaped like the captures, with the application's deliveries.
func BenchmarkParseJSClient(b *testing.B) {
	for _, c := range []struct {
		name    string
		json    bool
		format  Format
		pattern string
	}{
		{"default-logger", false, FormatJSClient, jsPlainPattern},
		{"json-logger", true, FormatJSClientJSON, jsJSONPattern},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf bytes.Buffer
			if err := tracegen.WriteJSClientLog(&buf, 64<<20, 20, c.json); err != nil {
				b.Fatal(err)
			}
			benchParse(b, buf.Bytes(), c.format, c.pattern)
		})
	}
}
