package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kstranded/kstranded/internal/kpart"
)

// OpenTelemetry spans as delivery evidence.
//
// A consumer instrumented with OpenTelemetry (kafkajs with
// @opentelemetry/instrumentation-kafkajs, and the other clients' instrumentations) ends a
// CONSUMER span with the "process" operation for every message handed to the handler;
// its attributes name the topic, the partition and the offset. This file decodes OTLP
// traces, as JSON (the OTLP/HTTP JSON encoding and the collector's file exporter: one
// TracesData per line) and as protobuf (an OTLP/HTTP request body), and takes a delivery
// from every such span.
//
// A trace stream is usually sampled: a span proves a delivery, a missing span proves
// nothing. Callers (watch) judge from spans alone only when told every delivery is
// exported.

// FormatOTLP names OTLP JSON files (the collector's file exporter, JSON lines of TracesData).
const FormatOTLP Format = "OTLP JSON traces (consumer process spans)"

// SpanDelivery is one record a span says was handed to the application.
type SpanDelivery struct {
	Topic     string
	Partition int32
	Offset    int64
	Group     string // the consumer group, when the span names it
}

// SpanCounts counts what a batch of spans gave.
type SpanCounts struct {
	Spans      int // spans read
	Deliveries int // consumer process spans that named a partition and an offset
	Ignored    int // other spans (producer, poll/receive, other systems)
	Malformed  int // consumer process spans without a usable partition or offset
}

// Add sums counts.
func (c *SpanCounts) Add(o SpanCounts) {
	c.Spans += o.Spans
	c.Deliveries += o.Deliveries
	c.Ignored += o.Ignored
	c.Malformed += o.Malformed
}

// The attribute names of every semantic-convention version, newest first.
var (
	offsetAttrs    = []string{"messaging.kafka.offset", "messaging.kafka.message.offset"}
	partitionAttrs = []string{"messaging.destination.partition.id", "messaging.kafka.destination.partition", "messaging.kafka.partition"}
	topicAttrs     = []string{"messaging.destination.name", "messaging.destination"}
	groupAttrs     = []string{"messaging.consumer.group.name", "messaging.kafka.consumer.group", "messaging.kafka.consumer_group"}
	operationAttrs = []string{"messaging.operation.type", "messaging.operation", "messaging.operation.name"}
)

// spanKindConsumer is SPAN_KIND_CONSUMER.
const spanKindConsumer = 5

// span is what this file reads of an OTLP span, from JSON or protobuf: its name, kind and
// attributes as text (an int as its decimal digits, a double only when integral).
type span struct {
	name  string
	kind  int
	attrs map[string]string
}

// deliveryOf reads one span: a delivery (ok), or why not (ignored: not a consumer
// process span; bad: one without a usable partition or offset).
func deliveryOf(s span) (d SpanDelivery, ok bool, bad string) {
	if s.kind != spanKindConsumer {
		return d, false, ""
	}
	if sys, has := s.attrs["messaging.system"]; has && sys != "kafka" {
		return d, false, ""
	}
	op := first(s.attrs, operationAttrs)
	isProcess := op == "process" || strings.HasPrefix(s.name, "process ") || strings.HasSuffix(s.name, " process")
	if !isProcess || (op != "" && op != "process") {
		return d, false, ""
	}
	ps, os := first(s.attrs, partitionAttrs), first(s.attrs, offsetAttrs)
	part, err1 := parsePartition(ps)
	off, err2 := parseOffset(os)
	if ps == "" || os == "" || err1 != nil || err2 != nil {
		return d, false, fmt.Sprintf("a consumer process span %q with partition %q and offset %q", s.name, ps, os)
	}
	d = SpanDelivery{Topic: first(s.attrs, topicAttrs), Partition: part, Offset: off, Group: first(s.attrs, groupAttrs)}
	if d.Topic == "" {
		// the old span name "<topic> process"
		if t, isOld := strings.CutSuffix(s.name, " process"); isOld && validTopic(t) {
			d.Topic = t
		} else if t, isNew := strings.CutPrefix(s.name, "process "); isNew && validTopic(t) {
			d.Topic = t
		}
	}
	if d.Topic != "" && !validTopic(d.Topic) {
		return SpanDelivery{}, false, "a consumer process span with an invalid topic name " + quoteShort(d.Topic)
	}
	return d, true, ""
}

func first(attrs map[string]string, names []string) string {
	for _, n := range names {
		if v, ok := attrs[n]; ok && v != "" {
			return v
		}
	}
	return ""
}

func collect(spans []span) ([]SpanDelivery, SpanCounts, []string) {
	var ds []SpanDelivery
	var c SpanCounts
	var bad []string
	for _, s := range spans {
		c.Spans++
		d, ok, why := deliveryOf(s)
		switch {
		case ok:
			c.Deliveries++
			ds = append(ds, d)
		case why != "":
			c.Malformed++
			if len(bad) < MaxShownMalformed {
				bad = append(bad, why)
			}
		default:
			c.Ignored++
		}
	}
	return ds, c, bad
}

// JSON: the protobuf JSON mapping OTLP uses (lowerCamelCase names; int64 as a string or a
// number; enums as integers, their names accepted too). Fields not read are skipped.
type jsonTraces struct {
	ResourceSpans []struct {
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
		// before OTLP 1.0
		InstrumentationLibrarySpans []jsonScopeSpans `json:"instrumentationLibrarySpans"`
	} `json:"resourceSpans"`
}

type jsonScopeSpans struct {
	Spans []struct {
		Name       string          `json:"name"`
		Kind       json.RawMessage `json:"kind"`
		Attributes []jsonKeyValue  `json:"attributes"`
	} `json:"spans"`
}

type jsonKeyValue struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string         `json:"stringValue"`
		IntValue    json.RawMessage `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"`
		BoolValue   *bool           `json:"boolValue"`
	} `json:"value"`
}

var kindNames = map[string]int{"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
	"SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}

func jsonKind(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return kindNames[s]
	}
	return -1
}

// jsonNumber gives an intValue's or doubleValue's decimal digits: "5" from 5 and "5";
// a double only when integral and exact (below 2^53).
func jsonNumber(raw json.RawMessage, double bool) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	s := string(raw)
	if s[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
	}
	if !double {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return "", false
		}
		return s, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// ErrNotOTLP is returned for JSON that holds no resourceSpans.
var ErrNotOTLP = errors.New("not OTLP traces: no resourceSpans")

// DecodeOTLPJSON reads one OTLP JSON traces document (a TracesData, or an OTLP/HTTP
// ExportTraceServiceRequest: the same shape) and returns the deliveries its consumer
// process spans name, the counts, and the first few reasons spans were malformed.
func DecodeOTLPJSON(data []byte) ([]SpanDelivery, SpanCounts, []string, error) {
	spans, err := jsonSpans(data)
	if err != nil {
		return nil, SpanCounts{}, nil, err
	}
	ds, c, bad := collect(spans)
	return ds, c, bad, nil
}

func jsonSpans(data []byte) ([]span, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	if _, ok := probe["resourceSpans"]; !ok {
		return nil, ErrNotOTLP
	}
	var t jsonTraces
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	var out []span
	for _, rs := range t.ResourceSpans {
		for _, ss := range append(rs.ScopeSpans, rs.InstrumentationLibrarySpans...) {
			for _, js := range ss.Spans {
				s := span{name: js.Name, kind: jsonKind(js.Kind), attrs: map[string]string{}}
				for _, kv := range js.Attributes {
					v := kv.Value
					switch {
					case v.StringValue != nil:
						s.attrs[kv.Key] = *v.StringValue
					case v.IntValue != nil:
						if n, ok := jsonNumber(v.IntValue, false); ok {
							s.attrs[kv.Key] = n
						} else {
							s.attrs[kv.Key] = "?" + string(v.IntValue)
						}
					case v.DoubleValue != nil:
						if n, ok := jsonNumber(v.DoubleValue, true); ok {
							s.attrs[kv.Key] = n
						} else {
							s.attrs[kv.Key] = "?" + string(v.DoubleValue)
						}
					case v.BoolValue != nil:
						s.attrs[kv.Key] = strconv.FormatBool(*v.BoolValue)
					}
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// DecodeOTLPProto reads an OTLP/HTTP protobuf body. An ExportTraceServiceRequest and a
// TracesData are the same message on the wire (field 1, repeated ResourceSpans), so the
// body is read as a TracesData: the gRPC service package is not needed.
func DecodeOTLPProto(data []byte) ([]SpanDelivery, SpanCounts, []string, error) {
	var td tracepb.TracesData
	if err := proto.Unmarshal(data, &td); err != nil {
		return nil, SpanCounts{}, nil, err
	}
	var spans []span
	for _, rs := range td.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, ps := range ss.GetSpans() {
				s := span{name: ps.GetName(), kind: int(ps.GetKind()), attrs: map[string]string{}}
				for _, kv := range ps.GetAttributes() {
					if v, ok := protoValue(kv.GetValue()); ok {
						s.attrs[kv.GetKey()] = v
					}
				}
				spans = append(spans, s)
			}
		}
	}
	ds, c, bad := collect(spans)
	return ds, c, bad, nil
}

func protoValue(v *commonpb.AnyValue) (string, bool) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue, true
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10), true
	case *commonpb.AnyValue_DoubleValue:
		f := x.DoubleValue
		if f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return "?", true
		}
		return strconv.FormatInt(int64(f), 10), true
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue), true
	}
	return "", false
}

// isOTLP reports whether a file is OTLP JSON: its first JSON object (the first line, or
// the whole document when it is pretty-printed) has the resourceSpans key.
func isOTLP(trimmed []byte) bool {
	line := trimmed
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(line), &probe) != nil {
		if json.Unmarshal(trimmed, &probe) != nil {
			return false
		}
	}
	_, ok := probe["resourceSpans"]
	return ok
}

// otlpFile reads an OTLP JSON file into the set: JSON lines of TracesData (the
// collector's file exporter), or one pretty-printed document. Lines counts the spans
// that gave a delivery, Ignored the other spans, Malformed the lines that are not OTLP
// JSON and the process spans without a partition or offset.
func (p *parser) otlpFile(trimmed []byte) {
	p.src.Format = FormatOTLP
	docs := [][]byte{trimmed}
	if !json.Valid(trimmed) {
		docs = bytes.Split(trimmed, []byte{'\n'})
	}
	groups := map[string]bool{}
	for i, doc := range docs {
		p.otlpDoc(i+1, bytes.TrimSpace(doc), groups)
	}
	p.otlpGroup(groups)
}

// otlpDoc reads one OTLP JSON document (line n of a file), noting the groups its spans name.
func (p *parser) otlpDoc(n int, doc []byte, groups map[string]bool) {
	if len(doc) == 0 {
		return
	}
	ds, c, bad, err := DecodeOTLPJSON(doc)
	if err != nil {
		p.bad(n, string(doc), "not OTLP JSON traces: "+jsonReason(err))
		return
	}
	p.src.Spans += c.Spans
	p.src.Lines += c.Deliveries
	p.src.Ignored += c.Ignored
	for _, why := range bad {
		p.bad(n, "", why)
	}
	p.src.Malformed += c.Malformed - len(bad)
	for _, d := range ds {
		if d.Group != "" && len(groups) < 2 {
			groups[d.Group] = true
		}
		p.add(d.Topic, d.Partition, kpart.Range{First: d.Offset, Last: d.Offset})
	}
}

// otlpGroup names the source's group when its spans named one only.
func (p *parser) otlpGroup(groups map[string]bool) {
	if len(groups) == 1 {
		for g := range groups {
			p.src.Group = g
		}
	}
}
