package watch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/verdict"
)

// fakeCluster is one topic's partition 0 in one group: the seed's 200 transactional
// records, the marker at 200, and whatever more the test appends.
type fakeCluster struct {
	committed int64
	high      int64
	down      bool
	scans     int
}

func (f *fakeCluster) Snapshot(ctx context.Context, group string, topics []string) (*inspect.Snapshot, error) {
	if f.down {
		return nil, errors.New("broker unreachable")
	}
	return &inspect.Snapshot{Group: inspect.Group{ID: group, State: "Empty"},
		Partitions: []inspect.Offsets{{Topic: "t", Partition: 0, Committed: f.committed, LogStart: 0, LastStable: f.high, HighWatermark: f.high}}}, nil
}

func (f *fakeCluster) Scan(ctx context.Context, topic string, partition int32, from, to int64) (*inspect.Scan, error) {
	f.scans++
	sc := &inspect.Scan{From: from, To: to}
	for _, s := range []inspect.Span{{First: 0, Last: 199, Kind: inspect.Record}, {First: 200, Last: 200, Kind: inspect.CommitMarker}, {First: 201, Last: 1 << 40, Kind: inspect.Record}} {
		if s.Last >= from && s.First < to {
			s.First, s.Last = max(s.First, from), min(s.Last, to-1)
			sc.Spans = append(sc.Spans, s)
		}
	}
	return sc, nil
}

func (f *fakeCluster) Snapshots(ctx context.Context, groups []string) (*inspect.Snapshots, error) {
	return inspect.SnapshotEach(ctx, f, groups)
}

func (f *fakeCluster) ListGroups(ctx context.Context) ([]inspect.Listing, error) {
	return []inspect.Listing{{ID: "g"}}, nil
}

func lines(first, last int64) []byte {
	var b bytes.Buffer
	for o := first; o <= last; o++ {
		b.WriteString("t 0 ")
		b.WriteString(itoa(o))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func itoa(o int64) string {
	if o == 0 {
		return "0"
	}
	var d []byte
	for ; o > 0; o /= 10 {
		d = append([]byte{byte('0' + o%10)}, d...)
	}
	return string(d)
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestALossIsFoundAtTheFirstEvaluationAfterTheCommitPassesTheStrandedRecords(t *testing.T) {
	cl := &fakeCluster{committed: 82, high: 201}
	ck := &clock{time.Unix(1_800_000_000, 0)}
	w := New(cl, Options{Groups: []string{"g"}, Now: ck.now, StallAfter: time.Hour})
	w.Feed("app.log", lines(0, 81))
	ch, err := w.Evaluate(context.Background())
	if err != nil || len(ch) != 1 || ch[0].To != verdict.Stranded || ch[0].Stranded != 118 {
		t.Fatalf("phase 1: %+v %v", ch, err)
	}
	// the seed's phase 2: one more record, delivered, and the commit jumps to 202
	cl.high, cl.committed = 202, 202
	w.Feed("app.log", lines(201, 201))
	ck.t = ck.t.Add(time.Second)
	ch, err = w.Evaluate(context.Background())
	if err != nil || len(ch) != 1 || ch[0].From != verdict.Stranded || ch[0].To != verdict.Lost || ch[0].Lost != 118 {
		t.Fatalf("phase 2: %+v %v", ch, err)
	}
	// the metrics say so
	var mu sync.Mutex
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(w, &mu))
	want := `# HELP kstranded_records_lost Records committed past but never delivered, now (0 once a rewind re-delivers them).
# TYPE kstranded_records_lost gauge
kstranded_records_lost{group="g",partition="0",topic="t"} 118
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kstranded_records_lost"); err != nil {
		t.Fatal(err)
	}
	// a rewind to 82 makes the lost records stranded again; their counter stays
	cl.committed = 82
	ch, _ = w.Evaluate(context.Background())
	if len(ch) != 1 || ch[0].To != verdict.Stranded {
		t.Fatalf("after the rewind: %+v", ch)
	}
	if p := w.Partitions()[0]; p.LostTotal != 118 {
		t.Fatalf("lost total %d, want 118", p.LostTotal)
	}
}

func TestDeliveriesBelowAJudgedCommitAreForgotten(t *testing.T) {
	cl := &fakeCluster{committed: 100, high: 201}
	w := New(cl, Options{Groups: []string{"g"}})
	w.Feed("app.log", lines(0, 99))
	if _, err := w.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := w.Partitions()[0]
	if p.Floor != 100 || len(p.Delivered) != 0 || p.Verdict != verdict.Stranded {
		t.Fatalf("floor %d delivered %v verdict %s, want 100, none, STRANDED", p.Floor, p.Delivered, p.Verdict)
	}
	// what lies below the floor is not read again
	cl.committed = 150
	w.Feed("app.log", lines(100, 149))
	scans := cl.scans
	if _, err := w.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	// (nor above it: the first evaluation read 100-200, which holds what it held then)
	if p := w.Partitions()[0]; p.Floor != 150 || p.Verdict != verdict.Stranded || p.Judgement.LostCount != 0 || cl.scans != scans {
		t.Fatalf("%+v", p)
	}
}

func TestAPartitionWithRecordsWaitingAndNoProgressIsStalled(t *testing.T) {
	cl := &fakeCluster{committed: 82, high: 201}
	ck := &clock{time.Unix(1_800_000_000, 0)}
	w := New(cl, Options{Groups: []string{"g"}, Now: ck.now, StallAfter: 5 * time.Minute})
	w.Feed("app.log", lines(0, 81))
	w.Evaluate(context.Background())
	ck.t = ck.t.Add(4 * time.Minute)
	if ch, _ := w.Evaluate(context.Background()); len(ch) != 0 {
		t.Fatalf("stalled too early: %+v", ch)
	}
	ck.t = ck.t.Add(2 * time.Minute)
	ch, _ := w.Evaluate(context.Background())
	if len(ch) != 1 || ch[0].To != Stalled || !ch[0].Stalled || ch[0].StalledSince == nil || !ch[0].StalledSince.Equal(time.Unix(1_800_000_000, 0)) {
		t.Fatalf("%+v", ch)
	}
	// a delivery is progress
	w.Feed("app.log", lines(82, 82))
	ch, _ = w.Evaluate(context.Background())
	if len(ch) != 1 || ch[0].To != verdict.Stranded {
		t.Fatalf("after a delivery: %+v", ch)
	}
}

func TestABrokerThatDoesNotAnswerGivesNoVerdictFromStaleData(t *testing.T) {
	cl := &fakeCluster{committed: 202, high: 202}
	w := New(cl, Options{Groups: []string{"g"}})
	w.Feed("app.log", lines(0, 81))
	w.Evaluate(context.Background())
	cl.down = true
	if _, err := w.Evaluate(context.Background()); err == nil {
		t.Fatal("no error from a broker that is down")
	}
	var mu sync.Mutex
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(w, &mu))
	n, err := testutil.GatherAndCount(reg, "kstranded_records_lost")
	if err != nil || n != 0 {
		t.Fatalf("%d lost series while the broker is down (%v)", n, err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader("# HELP kstranded_up 1 when the last evaluation read the cluster; 0 when the broker did not answer (no verdict is then given).\n# TYPE kstranded_up gauge\nkstranded_up 0\n"), "kstranded_up"); err != nil {
		t.Fatal(err)
	}
}

func TestASourceSurvivesRotationTruncationAndPartialLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	write := func(p, s string, flag int) {
		f, err := os.OpenFile(p, flag|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	s := NewSource(path, 0, 0)
	if b, err := s.Poll(); err != nil || len(b) != 0 {
		t.Fatalf("a file not yet there: %q %v", b, err)
	}
	write(path, "t 0 1\nt 0 2\nt 0 ", os.O_TRUNC)
	if b, _ := s.Poll(); string(b) != "t 0 1\nt 0 2\n" {
		t.Fatalf("first poll %q", b)
	}
	write(path, "3\n", os.O_APPEND)
	if b, _ := s.Poll(); string(b) != "t 0 3\n" {
		t.Fatalf("the partial line completed: %q", b)
	}
	// rotation: the old file renamed, a new one created; the old one's tail is read first
	write(path, "t 0 4\n", os.O_APPEND)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write(path, "t 0 5\n", os.O_TRUNC)
	if b, _ := s.Poll(); string(b) != "t 0 4\nt 0 5\n" {
		t.Fatalf("after rotation %q", b)
	}
	// truncation in place (copytruncate): the file is shorter than what was read
	write(path, "t 0 55\n", os.O_APPEND)
	if b, _ := s.Poll(); string(b) != "t 0 55\n" {
		t.Fatalf("before truncation %q", b)
	}
	write(path, "t 0 6\n", os.O_TRUNC)
	if b, _ := s.Poll(); string(b) != "t 0 6\n" {
		t.Fatalf("after truncation %q", b)
	}
	// a gzip rotated file is read once
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("t 0 7\nt 0 8"))
	zw.Close()
	os.WriteFile(path+".2.gz", gz.Bytes(), 0o644)
	g := NewSource(path+".2.gz", 0, 0)
	if b, _ := g.Poll(); string(b) != "t 0 7\nt 0 8\n" {
		t.Fatalf("gzip %q", b)
	}
	if b, _ := g.Poll(); len(b) != 0 {
		t.Fatalf("gzip read twice: %q", b)
	}
}

func TestACheckpointRestoresDeliveriesAndACorruptOneIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp.json")
	cl := &fakeCluster{committed: 202, high: 202}
	w := New(cl, Options{Groups: []string{"g"}})
	w.Feed("app.log", lines(0, 81))
	w.Feed("app.log", lines(201, 201))
	w.Evaluate(context.Background())
	if err := SaveCheckpoint(path, w); err != nil {
		t.Fatal(err)
	}
	cp, err := LoadCheckpoint(path)
	if err != nil || cp == nil {
		t.Fatal(err)
	}
	w2 := New(cl, Options{Groups: []string{"g"}})
	cp.Restore(w2)
	ch, _ := w2.Evaluate(context.Background())
	if p := w2.Partitions()[0]; p.Verdict != verdict.Lost || p.Judgement.LostCount != 118 || p.LostTotal != 118 || len(ch) != 0 {
		t.Fatalf("restored: %+v, changes %+v (the verdict it gave is remembered: no change)", p, ch)
	}
	os.WriteFile(path, []byte(`{"schema":"kstranded.watch-checkpoint/v1","partitions":[{"delivered":[{"first":5,"last":1}]}]}`), 0o644)
	if _, err := LoadCheckpoint(path); err == nil {
		t.Fatal("a corrupt checkpoint was trusted")
	}
	os.WriteFile(path, []byte("{not json"), 0o644)
	if _, err := LoadCheckpoint(path); err == nil {
		t.Fatal("a corrupt checkpoint was trusted")
	}
}

// TestTwoKindsOfDeliveryLineJudgeNothingUntilOneIsPicked: issue 21 §2 in watch. A pino
// log whose "processing" lines come in one chunk and "processed" lines in a later one is
// ambiguous over the two: nothing is judged (no false repair offset) until
// --delivered-when picks the kind that means delivered.
func TestTwoKindsOfDeliveryLineJudgeNothingUntilOneIsPicked(t *testing.T) {
	pino := func(msg string, first, last int64) []byte {
		var b bytes.Buffer
		for o := first; o <= last; o++ {
			b.WriteString(`{"level":30,"msg":"` + msg + `","topic":"t","partition":0,"offset":"` + itoa(o) + `"}` + "\n")
		}
		return b.Bytes()
	}
	cl := &fakeCluster{committed: 202, high: 202}
	w := New(cl, Options{Groups: []string{"g"}})
	w.Feed("app.log", pino("processing", 0, 81))
	w.Feed("app.log", pino("processed", 0, 69))
	w.Evaluate(context.Background())
	if p := w.Partitions()[0]; p.Verdict != verdict.NoEvidence || !strings.Contains(p.Judgement.Reason, "--delivered-when") {
		t.Fatalf("%s: %s", p.Verdict, p.Judgement.Reason)
	}
	when, err := evidence.ParseWhen("msg=processed")
	if err != nil {
		t.Fatal(err)
	}
	w = New(cl, Options{Groups: []string{"g"}, Configure: func(s *evidence.Set) { s.When = when }})
	w.Feed("app.log", pino("processing", 0, 81))
	w.Feed("app.log", pino("processed", 0, 69))
	w.Evaluate(context.Background())
	if p := w.Partitions()[0]; p.Verdict != verdict.Lost || *p.Judgement.SafeRewind != 70 {
		t.Fatalf("%+v", p.Judgement)
	}
}

func spanDeliveries(first, last int64) []evidence.SpanDelivery {
	var ds []evidence.SpanDelivery
	for o := first; o <= last; o++ {
		ds = append(ds, evidence.SpanDelivery{Topic: "t", Partition: 0, Offset: o})
	}
	return ds
}

// TestSpansAloneAreNotJudgedUnlessComplete: the seed's loss (0-81 and 201 delivered,
// commit 202) told by spans only. A sampled stream (no --otlp-complete) leaves the
// partition NO EVIDENCE with the reason, its highest delivery still shown (and nothing
// else below the commit kept: it will never be judged); stated complete, the same spans
// judge LOST 118. The span counts reach the metrics.
func TestSpansAloneAreNotJudgedUnlessComplete(t *testing.T) {
	for _, complete := range []bool{false, true} {
		cl := &fakeCluster{committed: 202, high: 202}
		w := New(cl, Options{Groups: []string{"g"}, Receivers: []string{"otlp"}, SpansComplete: complete})
		w.FeedDeliveries("otlp", spanDeliveries(0, 81), evidence.SpanCounts{Spans: 90, Deliveries: 82, Ignored: 8})
		w.FeedDeliveries("otlp", spanDeliveries(201, 201), evidence.SpanCounts{Spans: 1, Deliveries: 1})
		ch, err := w.Evaluate(context.Background())
		if err != nil || len(ch) != 1 {
			t.Fatalf("complete=%v: %+v %v", complete, ch, err)
		}
		p := w.Partitions()[0]
		if !complete {
			if ch[0].To != verdict.NoEvidence || ch[0].Reason != evidence.SampledSpans || p.Judged || len(p.Delivered) != 1 || p.Delivered[0].Last != 201 {
				t.Fatalf("sampled: %+v %+v", ch[0], p)
			}
			continue
		}
		if ch[0].To != verdict.Lost || ch[0].Lost != 118 {
			t.Fatalf("complete: %+v", ch[0])
		}
		var mu sync.Mutex
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(NewCollector(w, &mu))
		want := `# HELP kstranded_otlp_spans_total OpenTelemetry spans received (watch --otlp), by what became of them: counted (a consumer process span: a delivery), ignored (other spans), malformed (a process span without partition or offset).
# TYPE kstranded_otlp_spans_total counter
kstranded_otlp_spans_total{kind="counted",source="otlp"} 83
kstranded_otlp_spans_total{kind="ignored",source="otlp"} 8
kstranded_otlp_spans_total{kind="malformed",source="otlp"} 0
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kstranded_otlp_spans_total"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAFollowedOTLPFileIsEvidence: issue 24 §5, the fourth kind of evidence: an OTLP
// JSON file (the collector's file exporter) followed with --delivered. The spans are the
// committed capture of a real kafkajs consumer (evidence/testdata/otlp, 83 process spans:
// offsets 0-81 and 201), its topic renamed to the fake cluster's; the group committed at
// 202 after the seed's loss: the first evaluation says LOST 82-199, as inspect does on
// the same file.
func TestAFollowedOTLPFileIsEvidence(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "evidence", "testdata", "otlp", "kafkajs-0.33.0.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	spans := strings.ReplaceAll(string(raw), "otel-1796320724781029517", "t")
	path := filepath.Join(t.TempDir(), "spans.jsonl")
	if err := os.WriteFile(path, []byte(spans), 0o644); err != nil {
		t.Fatal(err)
	}
	cl := &fakeCluster{committed: 202, high: 202}
	// spans may be sampled: a file of them alone judges nothing, as in inspect
	w := New(cl, Options{Groups: []string{"g"}, Sources: []*Source{NewSource(path, 0, 0)}})
	ch, err := w.Evaluate(context.Background())
	if err != nil || len(ch) != 1 || ch[0].To != verdict.NoEvidence || ch[0].Reason != evidence.SampledSpans {
		t.Fatalf("without SpansComplete: %+v %v", ch, err)
	}
	w = New(cl, Options{Groups: []string{"g"}, Sources: []*Source{NewSource(path, 0, 0)}, SpansComplete: true})
	ch, err = w.Evaluate(context.Background())
	if err != nil || len(ch) != 1 || ch[0].To != verdict.Lost || ch[0].Lost != 118 {
		t.Fatalf("%+v %v", ch, err)
	}
	if got := w.Partitions()[0].Judgement.Lost; len(got) != 1 || got[0].First != 82 || got[0].Last != 199 {
		t.Fatalf("lost %+v, want 82-199", got)
	}
}

// TestEvidenceThatGaveNothingYetIsNoEvidenceNotLost: a followed file that does not exist
// yet, an empty one, a .gz not yet rotated in, an OTLP receiver that has had no span:
// each judged every record undelivered (LOST 201, and 201 added to the lost counter)
// where inspect says NO EVIDENCE. Now NO EVIDENCE naming why, until the evidence gives
// a delivery; then the seed's LOST 118 and a counter of 118.
func TestEvidenceThatGaveNothingYetIsNoEvidenceNotLost(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		opt  func(path string) Options
		give func(w *Watcher, path string)
		why  string
	}{
		{"a file not created yet", func(p string) Options { return Options{Sources: []*Source{NewSource(p, 0, 0)}} },
			func(w *Watcher, p string) { writeFile(t, p, append(lines(0, 81), lines(201, 201)...)) }, "does not exist (yet)"},
		{"an empty file", func(p string) Options {
			writeFile(t, p, nil)
			return Options{Sources: []*Source{NewSource(p, 0, 0)}}
		}, func(w *Watcher, p string) { writeFile(t, p, append(lines(0, 81), lines(201, 201)...)) }, "no delivery found"},
		{"a .gz not rotated in yet", func(p string) Options { return Options{Sources: []*Source{NewSource(p+".gz", 0, 0)}} },
			func(w *Watcher, p string) { writeGzip(t, p+".gz", append(lines(0, 81), lines(201, 201)...)) }, "does not exist (yet)"},
		{"an OTLP receiver with no span yet", func(string) Options { return Options{Receivers: []string{"otlp"}, SpansComplete: true} },
			func(w *Watcher, _ string) {
				w.FeedDeliveries("otlp", append(spanDeliveries(0, 81), spanDeliveries(201, 201)...), evidence.SpanCounts{Spans: 83, Deliveries: 83})
			}, "no delivery found"},
		{"stdin with no line yet", func(string) Options { return Options{Streams: []string{"stdin"}} },
			func(w *Watcher, _ string) { w.Feed("stdin", append(lines(0, 81), lines(201, 201)...)) }, "no delivery found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".log")
			o := c.opt(path)
			o.Groups = []string{"g"}
			w := New(&fakeCluster{committed: 202, high: 202}, o)
			ch, err := w.Evaluate(context.Background())
			if err != nil || len(ch) != 1 || ch[0].To != verdict.NoEvidence || !strings.Contains(ch[0].Reason, c.why) {
				t.Fatalf("before any delivery: %+v %v", ch, err)
			}
			if p := w.Partitions()[0]; p.LostTotal != 0 {
				t.Fatalf("lost counter %d before any evidence", p.LostTotal)
			}
			c.give(w, path)
			ch, err = w.Evaluate(context.Background())
			if err != nil || len(ch) != 1 || ch[0].To != verdict.Lost || ch[0].Lost != 118 {
				t.Fatalf("with the deliveries: %+v %v", ch, err)
			}
			if p := w.Partitions()[0]; p.LostTotal != 118 {
				t.Fatalf("lost counter %d, want 118", p.LostTotal)
			}
		})
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeGzip(t *testing.T, path string, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	writeFile(t, path, buf.Bytes())
}

// TestSpansOfAnotherGroupDoNotCountForThisOne: two groups consume one topic; spans name
// their consumer group. The other group's spans of 82-199 do not make this group's loss
// of 82-199 OK.
func TestSpansOfAnotherGroupDoNotCountForThisOne(t *testing.T) {
	w := New(&fakeCluster{committed: 202, high: 202}, Options{Groups: []string{"g"}, Receivers: []string{"otlp"}, SpansComplete: true})
	mine := append(spanDeliveries(0, 81), spanDeliveries(201, 201)...)
	for i := range mine {
		mine[i].Group = "g"
	}
	other := spanDeliveries(0, 201)
	for i := range other {
		other[i].Group = "someone-else"
	}
	w.FeedDeliveries("otlp", append(mine, other...), evidence.SpanCounts{Spans: len(mine) + len(other), Deliveries: len(mine) + len(other)})
	ch, err := w.Evaluate(context.Background())
	if err != nil || len(ch) != 1 || ch[0].To != verdict.Lost || ch[0].Lost != 118 {
		t.Fatalf("%+v %v", ch, err)
	}
}

// scanLog records the reads a fakeCluster was asked for.
type scanLog struct {
	*fakeCluster
	reads [][2]int64
}

func (s *scanLog) Scan(ctx context.Context, topic string, partition int32, from, to int64) (*inspect.Scan, error) {
	s.reads = append(s.reads, [2]int64{from, to})
	return s.fakeCluster.Scan(ctx, topic, partition, from, to)
}

func (s *scanLog) Snapshots(ctx context.Context, groups []string) (*inspect.Snapshots, error) {
	return inspect.SnapshotEach(ctx, s, groups)
}

// TestALostPartitionIsReadOnlyPastWhatWasReadBefore: after a loss the window starts at
// the first lost record for good; each evaluation read the partition from there to its
// end again (a read that grew with the partition). Now only what was written since is
// read, and the verdict stays the same.
func TestALostPartitionIsReadOnlyPastWhatWasReadBefore(t *testing.T) {
	cl := &scanLog{fakeCluster: &fakeCluster{committed: 202, high: 202}}
	w := New(cl, Options{Groups: []string{"g"}})
	w.Feed("app.log", append(lines(0, 81), lines(201, 201)...))
	for i, want := range []struct {
		high  int64
		read  [2]int64
		reads int
	}{{202, [2]int64{82, 202}, 1}, {1202, [2]int64{202, 1202}, 2}, {1202, [2]int64{202, 1202}, 2}, {5202, [2]int64{1202, 5202}, 3}} {
		cl.high, cl.committed = want.high, want.high
		w.Feed("app.log", lines(202, want.high-1))
		if _, err := w.Evaluate(context.Background()); err != nil {
			t.Fatal(err)
		}
		p := w.Partitions()[0]
		if p.Verdict != verdict.Lost || p.Judgement.LostCount != 118 {
			t.Fatalf("evaluation %d: %s %+v", i, p.Verdict, p.Judgement)
		}
		if len(cl.reads) != want.reads || cl.reads[len(cl.reads)-1] != want.read {
			t.Fatalf("evaluation %d: reads %v, want the last %v of %d", i, cl.reads, want.read, want.reads)
		}
	}
}

// groupsCluster is fakeCluster whose groups come and go, and whose group "new" has not
// committed until committedNew.
type groupsCluster struct {
	*fakeCluster
	groups       []string
	committedNew bool
}

func (g *groupsCluster) ListGroups(ctx context.Context) ([]inspect.Listing, error) {
	var out []inspect.Listing
	for _, id := range g.groups {
		out = append(out, inspect.Listing{ID: id})
	}
	return out, nil
}

func (g *groupsCluster) Snapshot(ctx context.Context, group string, topics []string) (*inspect.Snapshot, error) {
	if group == "new" && !g.committedNew {
		return nil, inspect.ErrNoOffsets
	}
	return g.fakeCluster.Snapshot(ctx, group, topics)
}

func (g *groupsCluster) Snapshots(ctx context.Context, groups []string) (*inspect.Snapshots, error) {
	return inspect.SnapshotEach(ctx, g, groups)
}

// TestDeliveriesReadBeforeAGroupCommitsAreKept: the evidence of a group that has not
// committed yet was read, then dropped at the evaluation; once the group committed,
// every record it had delivered looked undelivered (a false LOST).
func TestDeliveriesReadBeforeAGroupCommitsAreKept(t *testing.T) {
	cl := &groupsCluster{fakeCluster: &fakeCluster{committed: 202, high: 202}}
	w := New(cl, Options{Groups: []string{"new"}})
	w.Feed("app.log", append(lines(0, 199), lines(201, 201)...))
	if _, err := w.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(w.Partitions()) != 0 || w.Last().GroupErrs["new"] == "" {
		t.Fatalf("a group with no commit: %+v %+v", w.Partitions(), w.Last())
	}
	cl.committedNew = true
	if _, err := w.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := w.Partitions()[0]; p.Verdict != verdict.OK {
		t.Fatalf("%s %+v", p.Verdict, p.Judgement)
	}
}

// TestAGroupGoneFromTheWatchIsForgotten: with --group-regex, a group deleted from the
// cluster stayed in memory (and in the metrics) for good.
func TestAGroupGoneFromTheWatchIsForgotten(t *testing.T) {
	cl := &groupsCluster{fakeCluster: &fakeCluster{committed: 202, high: 202}, groups: []string{"pay-a", "pay-b"}, committedNew: true}
	w := New(cl, Options{GroupRegex: regexp.MustCompile("^pay-")})
	w.Feed("app.log", append(lines(0, 199), lines(201, 201)...))
	if _, err := w.Evaluate(context.Background()); err != nil || len(w.Partitions()) != 2 {
		t.Fatalf("%v %+v", err, w.Partitions())
	}
	cl.groups = []string{"pay-b"}
	if _, err := w.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ps := w.Partitions(); len(ps) != 1 || ps[0].Group != "pay-b" {
		t.Fatalf("%+v", ps)
	}
}

// TestACheckpointKeepsDeliveriesNotYetEvaluated: spans (or stdin lines) received after
// the last evaluation were not in the checkpoint a SIGTERM writes: the restart judged
// those records undelivered.
func TestACheckpointKeepsDeliveriesNotYetEvaluated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.json")
	cl := &fakeCluster{committed: 202, high: 202}
	opt := Options{Groups: []string{"g"}, Receivers: []string{"otlp"}, SpansComplete: true}
	w := New(cl, opt)
	ds := append(spanDeliveries(0, 199), spanDeliveries(201, 201)...)
	w.FeedDeliveries("otlp", ds, evidence.SpanCounts{Spans: len(ds), Deliveries: len(ds)})
	if err := SaveCheckpoint(path, w); err != nil {
		t.Fatal(err)
	}
	cp, err := LoadCheckpoint(path)
	if err != nil || cp == nil {
		t.Fatal(err)
	}
	w = New(cl, opt)
	cp.Restore(w)
	// no span since the restart: the checkpoint's counts say the receiver had given
	// deliveries, and its deliveries make the partition whole
	if _, err := w.Evaluate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := w.Partitions()[0]; p.Verdict != verdict.OK {
		t.Fatalf("%s %+v", p.Verdict, p.Judgement)
	}
}

// A rotated .gz is read a chunk a poll, as a plain file is: its decompressed size does
// not bound the read (it was read whole, up to 128 MiB, and cut there), and no poll gives
// more than MaxChunk and a line.
func TestALargeGzipIsReadAChunkAPollToItsEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deliveries.log.1.gz")
	var want bytes.Buffer
	for i := 0; want.Len() < 2*MaxChunk+12345; i++ {
		fmt.Fprintf(&want, "t %d %d\n", i%20, i)
	}
	writeFile(t, path, gzipFast(t, want.Bytes()))
	s := NewSource(path, 0, 0)
	var got bytes.Buffer
	polls := 0
	for !s.Done {
		b, err := s.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > MaxChunk+64<<10 {
			t.Fatalf("poll %d gave %d bytes, more than a chunk", polls, len(b))
		}
		got.Write(b)
		if polls++; polls > 10 {
			t.Fatalf("not done after %d polls (%d of %d bytes)", polls, got.Len(), want.Len())
		}
	}
	if polls < 2 || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("%d polls gave %d bytes, want %d in at least 2", polls, got.Len(), want.Len())
	}
	if b, _ := s.Poll(); len(b) != 0 {
		t.Fatalf("read again after its end: %d bytes", len(b))
	}
}

// A .gz still being written (its end not there yet) is an error at each poll; once
// whole, the read goes on from what was taken, giving nothing twice. A checkpoint taken
// between two polls resumes there too.
func TestAGzipCutShortResumesWithoutGivingALineTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "deliveries.log.2.gz")
	var lines bytes.Buffer
	for i := 0; lines.Len() < MaxChunk+1<<20; i++ {
		fmt.Fprintf(&lines, "t 0 %d\n", i)
	}
	gz := gzipFast(t, lines.Bytes())
	writeFile(t, path, gz[:len(gz)*3/4]) // three quarters written
	s := NewSource(path, 0, 0)
	var got bytes.Buffer
	sawErr := false
	for i := 0; i < 3 && !s.Done; i++ {
		b, err := s.Poll()
		got.Write(b)
		sawErr = sawErr || err != nil
	}
	if got.Len() == 0 {
		t.Fatal("nothing read before the cut: the resume is not tested")
	}
	if !sawErr || s.Done {
		t.Fatalf("a cut gzip: error %v, done %v", sawErr, s.Done)
	}
	// a checkpoint now, restored into a new source after the file is whole
	cp := SourcePosition{Path: s.Path, Inode: s.Inode, Offset: s.Offset - int64(len(s.rest))}
	writeFile(t, path+".tmp", gz)
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	// the same inode as far as the checkpoint knows: the rename made a new one, so take it
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cp.Inode = inodeOf(fi)
	r := NewSource(cp.Path, cp.Inode, cp.Offset)
	for i := 0; i < 5 && !r.Done; i++ {
		b, err := r.Poll()
		if err != nil {
			t.Fatal(err)
		}
		got.Write(b)
	}
	if !r.Done || !bytes.Equal(got.Bytes(), lines.Bytes()) {
		t.Fatalf("done %v; got %d bytes, want %d, every line once", r.Done, got.Len(), lines.Len())
	}
}

func gzipFast(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
