package trace

import (
	"bytes"
	"testing"

	"github.com/kstranded/kstranded/trace/tracegen"
)

func BenchmarkParseRdkafka(b *testing.B) {
	var buf bytes.Buffer
	if err := tracegen.WriteRdkafkaLog(&buf, 32<<20, 6); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := NewAnalyzer(Options{})
		if _, err := a.Parse("bench.log", bytes.NewReader(data), FormatLibrdkafka); err != nil {
			b.Fatal(err)
		}
		a.Finish()
	}
}
