package cmd

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"sync"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/watch"
)

// otlpMaxBody bounds an OTLP/HTTP request body, compressed and decompressed.
const otlpMaxBody = 16 << 20

// otlpSource names the receiver's spans in the watcher's sources and metrics.
const otlpSource = "otlp"

// otlpReceiver serves POST /v1/traces as OTLP/HTTP specifies: protobuf
// (application/x-protobuf) or JSON (application/json) bodies, gzip Content-Encoding
// accepted; a success is 200 with an empty ExportTraceServiceResponse in the request's
// encoding; a body that cannot be decoded is 400 (not retryable), one too large 413. The
// deliveries its consumer process spans give go to the watcher under mu.
type otlpReceiver struct {
	w  *watch.Watcher
	mu *sync.Mutex
	// capture, when set, gets every request as one JSON line of TracesData (the
	// collector's file exporter format), for inspect --delivered and fixtures.
	capture   io.Writer
	captureMu sync.Mutex
}

func (o *otlpReceiver) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "POST only", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" && ct != "application/x-protobuf" {
		otlpError(rw, "application/json", http.StatusUnsupportedMediaType, "Content-Type must be application/x-protobuf or application/json")
		return
	}
	var body io.Reader = http.MaxBytesReader(rw, r.Body, otlpMaxBody)
	switch r.Header.Get("Content-Encoding") {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			otlpError(rw, ct, http.StatusBadRequest, "gzip: "+err.Error())
			return
		}
		body = zr
	default:
		otlpError(rw, ct, http.StatusUnsupportedMediaType, "Content-Encoding must be gzip or none")
		return
	}
	data, err := io.ReadAll(io.LimitReader(body, otlpMaxBody+1))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) || len(data) > otlpMaxBody {
		otlpError(rw, ct, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", otlpMaxBody))
		return
	}
	if err != nil {
		otlpError(rw, ct, http.StatusBadRequest, err.Error())
		return
	}
	var ds []evidence.SpanDelivery
	var c evidence.SpanCounts
	if ct == "application/json" {
		ds, c, _, err = evidence.DecodeOTLPJSON(data)
	} else {
		ds, c, _, err = evidence.DecodeOTLPProto(data)
	}
	if err != nil {
		otlpError(rw, ct, http.StatusBadRequest, "decoding the traces: "+err.Error())
		return
	}
	o.write(ct, data)
	o.mu.Lock()
	o.w.FeedDeliveries(otlpSource, ds, c)
	o.mu.Unlock()
	rw.Header().Set("Content-Type", ct)
	rw.WriteHeader(http.StatusOK)
	if ct == "application/json" {
		_, _ = rw.Write([]byte("{}"))
	} // an empty ExportTraceServiceResponse is zero bytes in protobuf
}

// write appends the request to the capture file as one JSON line.
func (o *otlpReceiver) write(ct string, data []byte) {
	if o.capture == nil {
		return
	}
	var line bytes.Buffer
	if ct == "application/json" {
		if json.Compact(&line, data) != nil {
			return
		}
	} else {
		var td tracepb.TracesData
		if proto.Unmarshal(data, &td) != nil {
			return
		}
		b, err := protojson.Marshal(&td) // ids in base64, not OTLP's hex: not read here
		if err != nil {
			return
		}
		_ = json.Compact(&line, b)
	}
	line.WriteByte('\n')
	o.captureMu.Lock()
	_, _ = o.capture.Write(line.Bytes())
	o.captureMu.Unlock()
}

// otlpError answers with a google.rpc.Status message (code 3, INVALID_ARGUMENT), in the
// request's encoding, as OTLP/HTTP asks.
func otlpError(rw http.ResponseWriter, ct string, code int, msg string) {
	var b []byte
	if ct == "application/x-protobuf" {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, 3)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, msg)
	} else {
		ct = "application/json"
		b, _ = json.Marshal(map[string]any{"code": 3, "message": msg})
	}
	rw.Header().Set("Content-Type", ct)
	rw.WriteHeader(code)
	_, _ = rw.Write(b)
}

// openCapture opens --otlp-capture FILE for appending.
func openCapture(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
}
