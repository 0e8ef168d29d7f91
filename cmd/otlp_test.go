package cmd

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kstranded/kstranded/watch"
)

const otlpJSONBody = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"process t","kind":5,"attributes":[` +
	`{"key":"messaging.destination.name","value":{"stringValue":"t"}},{"key":"messaging.destination.partition.id","value":{"stringValue":"0"}},` +
	`{"key":"messaging.operation.type","value":{"stringValue":"process"}},{"key":"messaging.kafka.offset","value":{"stringValue":"5"}}]},` +
	`{"name":"poll t","kind":3}]}]}]}`

// TestOTLPReceiver: POST /v1/traces as OTLP/HTTP exporters send it (JSON, protobuf,
// gzip), the answers OTLP/HTTP asks for, and what reaches the watcher and the capture.
func TestOTLPReceiver(t *testing.T) {
	var mu sync.Mutex
	w := watch.New(nil, watch.Options{})
	var capture bytes.Buffer
	srv := httptest.NewServer(&otlpReceiver{w: w, mu: &mu, capture: &capture})
	defer srv.Close()
	post := func(ct, enc string, body []byte) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	if resp, body := post("application/json", "", []byte(otlpJSONBody)); resp.StatusCode != 200 || body != "{}" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("JSON: %d %q", resp.StatusCode, body)
	}
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	pb, _ := proto.Marshal(&tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
		{Name: "process t", Kind: tracepb.Span_SPAN_KIND_CONSUMER, Attributes: []*commonpb.KeyValue{{Key: "messaging.destination.partition.id", Value: str("0")},
			{Key: "messaging.kafka.offset", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 6}}}}}}}}}}})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(pb)
	zw.Close()
	if resp, body := post("application/x-protobuf", "gzip", gz.Bytes()); resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("protobuf gzip: %d %q", resp.StatusCode, body)
	}
	if resp, _ := post("text/plain", "", []byte(otlpJSONBody)); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %d", resp.StatusCode)
	}
	if resp, body := post("application/json", "", []byte(`{"resourceSpans":`)); resp.StatusCode != 400 || !strings.Contains(body, `"code":3`) {
		t.Fatalf("truncated JSON: %d %q", resp.StatusCode, body)
	}
	if resp, _ := post("application/x-protobuf", "", bytes.Repeat([]byte{0}, otlpMaxBody+1)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large: %d", resp.StatusCode)
	}
	if resp, err := http.Get(srv.URL); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %v %v", resp, err)
	}
	src := w.Sources()
	if len(src) != 1 || src[0].Path != otlpSource || !src[0].Spans || src[0].Lines != 3 || src[0].Counted != 2 || src[0].Ignored != 1 {
		t.Fatalf("sources %+v", src)
	}
	if n := strings.Count(capture.String(), "\n"); n != 2 || !strings.Contains(capture.String(), `"messaging.kafka.offset"`) {
		t.Fatalf("capture:\n%s", capture.String())
	}
}
