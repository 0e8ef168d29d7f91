package integration

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/evidence"
)

// metric reads one sample of /metrics whose name and labels start with prefix (the
// labels in Prometheus' sorted order), or false.
func metric(url, prefix string) (float64, bool) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, prefix) {
			f := strings.Fields(l)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// otelApp installs testenv/otel (npm ci into the cache, once per lock file) and returns
// its node_modules; it skips without node and npm, except under CI.
func otelApp(t *testing.T) string {
	t.Helper()
	if os.Getenv("KSTRANDED_TEST_OTEL") == "" {
		t.Skip("the OpenTelemetry pipeline (Node.js, an npm install) runs with make test-otel (KSTRANDED_TEST_OTEL=1); CI runs it")
	}
	missing := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: the OpenTelemetry pipeline test needs Node.js >= 20 and npm (.ci/run installs them)", what)
		}
		t.Skipf("%s: the OpenTelemetry pipeline test needs Node.js >= 20 and npm", what)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(tool + " not installed")
		}
	}
	if v, err := exec.Command("node", "-p", "process.versions.node.split('.')[0]").Output(); err != nil {
		missing("node does not run: " + err.Error())
	} else if major, _ := strconv.Atoi(strings.TrimSpace(string(v))); major < 20 {
		missing("node " + strings.TrimSpace(string(v)) + " is too old")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join("..", "testenv", "otel", "install.sh")).Output()
	if err != nil {
		var stderr string
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("testenv/otel/install.sh: %v\n%s", err, stderr)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "node_modules")
}

// TestWatchJudgesAKafkajsConsumerFromItsOpenTelemetrySpans: issue 24 §3, a real
// OpenTelemetry pipeline. A kafkajs 2.2.4 consumer instrumented by
// @opentelemetry/instrumentation-kafkajs 0.33.0 (testenv/otel/consumer.js) exports its
// spans over OTLP/HTTP to two `kstranded watch --otlp`. It plays the seed: it handles
// 0-81, seeks past 82-199 (never handed to it: no span), handles 201 and commits 202. No
// evidence file: the watch told the spans are complete (--otlp-complete) judges LOST
// 82-199 (118) from the spans alone; the one not told so leaves the partition NO EVIDENCE
// (a sampled stream cannot prove a record was not delivered). The first one's capture is
// then evidence for inspect --delivered, which gives the same 118.
func TestWatchJudgesAKafkajsConsumerFromItsOpenTelemetrySpans(t *testing.T) {
	modules := otelApp(t)
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := fmt.Sprintf("otel-%d", time.Now().UnixNano())
	group := topic + "-group"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	keep(topic)
	keepGroup(group)
	// 0-199, the marker at 200, 201; uncompressed: kafkajs has no snappy codec of its own
	writePartition(t, topic, []batch{{n: 200, txn: true}, {n: 1}}, kgo.ProducerBatchCompression(kgo.NoCompression()))

	dir := t.TempDir()
	capture := filepath.Join(dir, "spans.jsonl")
	complete, sampled := freePort(t), freePort(t)
	cout := background(t, bin, "watch", "--brokers", env.Brokers, "--group", group, "--otlp", "--otlp-complete", "--otlp-capture", capture,
		"--interval", "1s", "--listen", fmt.Sprintf("127.0.0.1:%d", complete), "--timeout", "10s", "-o", "json")
	background(t, bin, "watch", "--brokers", env.Brokers, "--group", group, "--otlp",
		"--interval", "1s", "--listen", fmt.Sprintf("127.0.0.1:%d", sampled), "--timeout", "10s")
	metrics := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d/metrics", port) }
	until(t, 30*time.Second, "both watches to serve /metrics", func() bool {
		_, a := metric(metrics(complete), "kstranded_up")
		_, b := metric(metrics(sampled), "kstranded_up")
		return a && b
	})

	actx, acancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer acancel()
	app := exec.CommandContext(actx, "node", filepath.Join("..", "testenv", "otel", "consumer.js"), "--brokers", env.Brokers,
		"--topic", topic, "--group", group, "--deliver-through", "81", "--seek", "201",
		"--otlp", fmt.Sprintf("http://127.0.0.1:%d/v1/traces", complete), "--otlp", fmt.Sprintf("http://127.0.0.1:%d/v1/traces", sampled))
	app.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := app.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"handled":83,"first":0,"last":201,"committed":202`) {
		t.Fatalf("consumer.js: %v\n%s", err, out)
	}
	t.Logf("consumer.js: %s", strings.TrimSpace(string(out)))

	part := fmt.Sprintf(`{group=%q,partition="0",topic=%q}`, group, topic)
	until(t, 30*time.Second, "watch --otlp --otlp-complete to judge 118 records lost from the spans", func() bool {
		v, ok := metric(metrics(complete), "kstranded_records_lost"+part)
		return ok && v == 118
	})
	for _, port := range []int{complete, sampled} {
		if v, ok := metric(metrics(port), `kstranded_otlp_spans_total{kind="counted",source="otlp"}`); !ok || v != 83 {
			t.Errorf("port %d: %d process spans counted (%v), want 83", port, int(v), ok)
		}
	}
	// judged before any span arrived, every record looked undelivered: 201 counted lost
	if v, ok := metric(metrics(complete), "kstranded_records_lost_total"+part); !ok || v != 118 {
		t.Errorf("kstranded_records_lost_total %v (%v), want 118", v, ok)
	}
	if !strings.Contains(cout.String(), `"to":"LOST","lost":118`) {
		t.Errorf("no JSON change line to LOST 118:\n%s", cout.String())
	}
	until(t, 30*time.Second, "watch --otlp (sampled) to say NO EVIDENCE, not a verdict", func() bool {
		v, ok := metric(metrics(sampled), fmt.Sprintf(`kstranded_partition_judged{group=%q,partition="0",topic=%q,why="no_evidence"}`, group, topic))
		return ok && v == 0
	})
	if v, ok := metric(metrics(sampled), "kstranded_delivered_offset"+part); !ok || v != 201 {
		t.Errorf("the sampled watch's delivered offset %v (%v), want 201: its spans are still shown", v, ok)
	}
	if _, ok := metric(metrics(sampled), "kstranded_records_lost"+part); ok {
		t.Errorf("the sampled watch gives kstranded_records_lost from spans alone")
	}

	// the capture: OTLP JSON lines, evidence for inspect, by the same rule (complete only
	// when the operator says so)
	r := kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", group, "--delivered", capture, "--timeout", "20s", "-o", "json")
	if r.Code != 6 || !strings.Contains(r.Stdout, "may be sampled") {
		t.Fatalf("inspect --delivered the capture without --otlp-complete: exit %d, want 6 (NO EVIDENCE: spans may be sampled)\n%s", r.Code, r)
	}
	r = kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", group, "--delivered", capture, "--otlp-complete", "--timeout", "20s", "-o", "json")
	if r.Code != 3 {
		t.Fatalf("inspect --delivered the capture: exit %d, want 3\n%s", r.Code, r)
	}
	if s := decode[inspectDoc](t, r).Summary; s.Lost != 118 || s.Delivered != 83 {
		t.Errorf("inspect --delivered the capture: %+v, want 118 lost, 83 delivered", s)
	}
	if dst := os.Getenv("KSTRANDED_OTEL_CAPTURE"); dst != "" { // testenv/otel/capture.sh
		b, err := os.ReadFile(capture)
		if err != nil || os.WriteFile(dst, b, 0o644) != nil {
			t.Fatalf("copying the capture to %s: %v", dst, err)
		}
	}
}

// TestInspectReadsTheCapturedOpenTelemetrySpans: the committed OTLP JSON fixture (the
// spans a real kafkajs consumer exported, testenv/otel/capture.sh) is evidence for
// inspect --delivered: on a topic named as the fixture's, with the seed's records and
// commit 202, it says LOST 82-199 (118) from the spans with --otlp-complete, the source
// counted as spans, and NO EVIDENCE without it (spans may be sampled). Needs no Node.
func TestInspectReadsTheCapturedOpenTelemetrySpans(t *testing.T) {
	fixture := filepath.Join("..", "evidence", "testdata", "otlp", "kafkajs-0.33.0.jsonl.gz")
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	set := evidence.NewSet()
	err = set.Read(f, fixture)
	f.Close()
	if err != nil || len(set.Topics()) != 1 {
		t.Fatalf("the fixture: %v, topics %v", err, set.Topics())
	}
	topic := set.Topics()[0]
	group := fmt.Sprintf("%s-fixture-%d", topic, time.Now().UnixNano())
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	keep(topic)
	keepGroup(group)
	writePartition(t, topic, []batch{{n: 200, txn: true}, {n: 1}})
	commitAt(t, adm, group, topic, 202)
	// spans alone may be sampled: NO EVIDENCE, naming the flag that settles it
	r := kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", group, "--delivered", fixture, "--timeout", "20s")
	if r.Code != 6 || !strings.Contains(r.Stdout+r.Stderr, "--otlp-complete") {
		t.Fatalf("exit %d, want 6 naming --otlp-complete\n%s", r.Code, r)
	}
	r = kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", group, "--delivered", fixture, "--otlp-complete", "--timeout", "20s")
	if r.Code != 3 || !strings.Contains(r.Stderr, "83 deliveries from 83 consumer process spans, 0 other spans ignored") {
		t.Fatalf("exit %d, want 3 and the spans counted\n%s", r.Code, r)
	}
	r = kstranded(t, time.Minute, "inspect", "--brokers", env.Brokers, "--group", group, "--delivered", fixture, "--otlp-complete", "--timeout", "20s", "-o", "json")
	doc := decode[inspectDoc](t, r)
	if s := doc.Summary; s.Lost != 118 || s.Delivered != 83 || len(doc.Partitions) != 1 || doc.Partitions[0].Judgement == nil ||
		!slices.Equal(doc.Partitions[0].Judgement.Lost, []rangeJSON{{82, 199, 118}}) {
		t.Errorf("inspect: %+v %+v, want LOST 82-199 (118), 83 delivered", s, doc.Partitions)
	}
}
