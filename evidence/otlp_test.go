package evidence

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kstranded/kstranded/internal/kpart"
)

// kafkajsLine is the shape @opentelemetry/instrumentation-kafkajs 0.33.0 exports (semconv
// 1.30: "process <topic>", operation type, offset as a string, partition.id a string), plus
// its poll span (CLIENT, receive) and a producer span, which are not deliveries.
const kafkajsLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"app"}}]},"scopeSpans":[{"scope":{"name":"@opentelemetry/instrumentation-kafkajs","version":"0.33.0"},"spans":[` +
	`{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"process orders","kind":5,"attributes":[{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}},{"key":"messaging.system","value":{"stringValue":"kafka"}},{"key":"messaging.destination.name","value":{"stringValue":"orders"}},{"key":"messaging.operation.type","value":{"stringValue":"process"}},{"key":"messaging.operation.name","value":{"stringValue":"process"}},{"key":"messaging.kafka.offset","value":{"stringValue":"7"}}]},` +
	`{"name":"process orders","kind":5,"attributes":[{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}},{"key":"messaging.destination.name","value":{"stringValue":"orders"}},{"key":"messaging.operation.type","value":{"stringValue":"process"}},{"key":"messaging.kafka.offset","value":{"stringValue":"8"}}]},` +
	`{"name":"poll orders","kind":3,"attributes":[{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}},{"key":"messaging.operation.type","value":{"stringValue":"receive"}}]},` +
	`{"name":"send orders","kind":4,"attributes":[{"key":"messaging.destination.name","value":{"stringValue":"orders"}},{"key":"messaging.operation.type","value":{"stringValue":"send"}}]}` +
	`]}]}]}`

func TestOTLPJSONKafkajs(t *testing.T) {
	ds, c, bad, err := DecodeOTLPJSON([]byte(kafkajsLine))
	if err != nil {
		t.Fatal(err)
	}
	want := []SpanDelivery{{Topic: "orders", Partition: 0, Offset: 7}, {Topic: "orders", Partition: 0, Offset: 8}}
	if !reflect.DeepEqual(ds, want) || c != (SpanCounts{Spans: 4, Deliveries: 2, Ignored: 2}) || len(bad) != 0 {
		t.Fatalf("got %+v %+v %v", ds, c, bad)
	}
}

// TestOTLPJSONEverySemconvVersion: the attribute names before 1.25/1.27 (message.offset,
// kafka.partition, kafka.destination.partition, messaging.operation, "<topic> process",
// kafka.consumer.group) and the 1.27+ ones (consumer.group.name); 64-bit integers as JSON
// strings and as numbers, the kind as its enum name.
func TestOTLPJSONEverySemconvVersion(t *testing.T) {
	doc := `{"resourceSpans":[{"scopeSpans":[{"spans":[
	{"name":"t1 process","kind":5,"attributes":[{"key":"messaging.kafka.message.offset","value":{"intValue":"9007199254740993"}},{"key":"messaging.kafka.partition","value":{"intValue":3}},{"key":"messaging.operation","value":{"stringValue":"process"}},{"key":"messaging.kafka.consumer.group","value":{"stringValue":"g-old"}}]},
	{"name":"t2 process","kind":"SPAN_KIND_CONSUMER","attributes":[{"key":"messaging.kafka.message.offset","value":{"intValue":12}},{"key":"messaging.kafka.destination.partition","value":{"intValue":"1"}},{"key":"messaging.destination.name","value":{"stringValue":"t2"}}]},
	{"name":"process t3","kind":5,"attributes":[{"key":"messaging.kafka.offset","value":{"intValue":"40"}},{"key":"messaging.destination.partition.id","value":{"stringValue":"2"}},{"key":"messaging.destination.name","value":{"stringValue":"t3"}},{"key":"messaging.operation.type","value":{"stringValue":"process"}},{"key":"messaging.consumer.group.name","value":{"stringValue":"g-new"}}]},
	{"name":"process t4","kind":5,"attributes":[{"key":"messaging.kafka.offset","value":{"doubleValue":41}},{"key":"messaging.destination.partition.id","value":{"intValue":0}}]}
	]}]}],"unknownField":1}`
	ds, c, bad, err := DecodeOTLPJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []SpanDelivery{{Topic: "t1", Partition: 3, Offset: 9007199254740993, Group: "g-old"}, {Topic: "t2", Partition: 1, Offset: 12},
		{Topic: "t3", Partition: 2, Offset: 40, Group: "g-new"}, {Topic: "t4", Partition: 0, Offset: 41}}
	if !reflect.DeepEqual(ds, want) || c.Deliveries != 4 || len(bad) != 0 {
		t.Fatalf("got %+v %+v %v", ds, c, bad)
	}
}

func TestOTLPJSONNotDeliveries(t *testing.T) {
	doc := `{"resourceSpans":[{"scopeSpans":[{"spans":[
	{"name":"process t","kind":5,"attributes":[{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}}]},
	{"name":"process t","kind":5,"attributes":[{"key":"messaging.kafka.offset","value":{"intValue":"-1"}},{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}}]},
	{"name":"process t","kind":5,"attributes":[{"key":"messaging.kafka.offset","value":{"doubleValue":1.5}},{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}}]},
	{"name":"process t","kind":5,"attributes":[{"key":"messaging.system","value":{"stringValue":"rabbitmq"}},{"key":"messaging.kafka.offset","value":{"intValue":"1"}},{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}}]},
	{"name":"process t","kind":1,"attributes":[{"key":"messaging.kafka.offset","value":{"intValue":"1"}},{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}}]},
	{"name":"t receive","kind":5,"attributes":[{"key":"messaging.operation","value":{"stringValue":"receive"}},{"key":"messaging.kafka.offset","value":{"intValue":"1"}},{"key":"messaging.kafka.partition","value":{"intValue":"0"}}]},
	{"name":"GET /","kind":2}
	]}]}]}`
	ds, c, bad, err := DecodeOTLPJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 0 || c != (SpanCounts{Spans: 7, Malformed: 3, Ignored: 4}) || len(bad) != 3 {
		t.Fatalf("got %+v %+v %v", ds, c, bad)
	}
	if _, _, _, err := DecodeOTLPJSON([]byte(`{"partition":0,"offset":1}`)); err != ErrNotOTLP {
		t.Fatalf("a JSON line without resourceSpans: %v", err)
	}
}

func TestOTLPProto(t *testing.T) {
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	i64 := func(n int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
	}
	td := &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
		{Name: "process orders", Kind: tracepb.Span_SPAN_KIND_CONSUMER, Attributes: []*commonpb.KeyValue{
			{Key: "messaging.destination.name", Value: str("orders")}, {Key: "messaging.destination.partition.id", Value: str("4")},
			{Key: "messaging.operation.type", Value: str("process")}, {Key: "messaging.kafka.offset", Value: i64(1 << 40)}}},
		{Name: "send orders", Kind: tracepb.Span_SPAN_KIND_PRODUCER},
	}}}}}}
	b, err := proto.Marshal(td)
	if err != nil {
		t.Fatal(err)
	}
	ds, c, _, err := DecodeOTLPProto(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ds, []SpanDelivery{{Topic: "orders", Partition: 4, Offset: 1 << 40}}) || c != (SpanCounts{Spans: 2, Deliveries: 1, Ignored: 1}) {
		t.Fatalf("got %+v %+v", ds, c)
	}
	if _, _, _, err := DecodeOTLPProto([]byte{0xff, 0xff}); err == nil {
		t.Fatal("garbage decoded")
	}
}

// TestSetReadsOTLPJSONLines: the collector's file exporter output (JSON lines of
// TracesData, gzipped here) is evidence for inspect --delivered; its Source counts spans.
func TestSetReadsOTLPJSONLines(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(kafkajsLine + "\n" + strings.Replace(kafkajsLine, `"7"`, `"9"`, 1) + "\nnot json\n"))
	zw.Close()
	s := NewSet()
	if err := s.Read(&buf, "spans.jsonl.gz"); err != nil {
		t.Fatal(err)
	}
	src := s.Sources[0]
	if src.Format != FormatOTLP || !src.Gzip || src.Spans != 8 || src.Lines != 4 || src.Ignored != 4 || src.Malformed != 1 {
		t.Fatalf("source %+v", src)
	}
	p := s.Parts[kpart.TopicPartition{Topic: "orders", Partition: 0}]
	if p == nil || !reflect.DeepEqual(p.Delivered, []kpart.Range{{First: 7, Last: 9}}) || p.Duplicates != 1 {
		t.Fatalf("parts %+v", s.Parts)
	}
	if d := s.Describe(); !strings.Contains(d, "8 spans, 4 counted as deliveries, 4 ignored, 1 malformed") {
		t.Fatalf("Describe: %s", d)
	}
	// spans may be sampled: alone they support no verdict unless stated complete
	if s.Insufficient() != SampledSpans || !strings.Contains(s.Settle(), "--otlp-complete") {
		t.Fatalf("%q / %q", s.Insufficient(), s.Settle())
	}
	s.SpansComplete = true
	if s.Insufficient() != "" {
		t.Fatal(s.Insufficient())
	}
}

// TestSpansBesideADeliveryLogAreEvidence: a complete delivery log beside the spans
// makes the set sufficient without --otlp-complete (the spans only add deliveries).
func TestSpansBesideADeliveryLogAreEvidence(t *testing.T) {
	s := NewSet()
	if err := s.Read(strings.NewReader(kafkajsLine+"\n"), "spans.jsonl"); err != nil {
		t.Fatal(err)
	}
	if s.Insufficient() != SampledSpans {
		t.Fatalf("spans alone: %q", s.Insufficient())
	}
	if err := s.Read(strings.NewReader("orders 0 7\n"), "app.log"); err != nil {
		t.Fatal(err)
	}
	if s.Insufficient() != "" {
		t.Fatalf("with a delivery log: %q (%+v)", s.Insufficient(), s.Sources)
	}
}

func FuzzDecodeOTLPJSON(f *testing.F) {
	f.Add([]byte(kafkajsLine))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"t process","kind":"SPAN_KIND_CONSUMER","attributes":[{"key":"messaging.kafka.message.offset","value":{"intValue":1e3}}]}]}]}]}`))
	f.Add([]byte(`{"resourceSpans":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, c, bad, err := DecodeOTLPJSON(data)
		if err != nil {
			if len(ds) != 0 || c != (SpanCounts{}) {
				t.Fatal("deliveries with an error")
			}
			return
		}
		if len(ds) != c.Deliveries || c.Deliveries+c.Ignored+c.Malformed != c.Spans || len(bad) > c.Malformed {
			t.Fatalf("counts %+v for %d deliveries", c, len(ds))
		}
		for _, d := range ds {
			if d.Partition < 0 || d.Offset < 0 || (d.Topic != "" && !validTopic(d.Topic)) {
				t.Fatalf("delivery %+v", d)
			}
		}
		// the file reader takes the same line without panicking
		NewSet().Parse(data, "fuzz")
	})
}

// TestOTLPFixtureFromARealKafkajsConsumer: the spans a real kafkajs 2.2.4 consumer with
// @opentelemetry/instrumentation-kafkajs 0.33.0 exported (testenv/otel/capture.sh): 0-81
// and 201 handled, as the application did; nothing else.
func TestOTLPFixtureFromARealKafkajsConsumer(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "otlp", "kafkajs-0.33.0.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewSet()
	if err := s.Read(f, "kafkajs-0.33.0.jsonl.gz"); err != nil {
		t.Fatal(err)
	}
	src := s.Sources[0]
	if src.Format != FormatOTLP || src.Spans != 83 || src.Lines != 83 || src.Ignored != 0 || src.Malformed != 0 {
		t.Fatalf("source %+v", src)
	}
	if len(s.Parts) != 1 {
		t.Fatalf("parts %+v", s.Parts)
	}
	for tp, p := range s.Parts {
		if !strings.HasPrefix(tp.Topic, "otel-") || tp.Partition != 0 ||
			!reflect.DeepEqual(p.Delivered, []kpart.Range{{First: 0, Last: 81}, {First: 201, Last: 201}}) || p.Duplicates != 0 {
			t.Fatalf("%v: %+v", tp, p)
		}
	}
}
