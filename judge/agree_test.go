package judge_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/judge"
	"github.com/kstranded/kstranded/trace"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "trace", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

type answer struct {
	Verdict    string
	Lost       []kpart.RecordRange
	SafeRewind int64
}

func answerOf(j judge.Judgement) answer {
	a := answer{Verdict: string(j.Verdict), Lost: j.Lost, SafeRewind: -1}
	if len(a.Lost) == 0 {
		a.Lost = nil
	}
	if j.SafeRewind != nil {
		a.SafeRewind = *j.SafeRewind
	}
	return a
}

// TestRealCapturesGetTheSameJudgementFromTraceParseAndInspect: issue 21 §1 on inputs this
// project did not write: the real confluent-kafka-javascript captures (1.10.0 lost 82-199,
// 1.10.1 nothing; trace/testdata/jsclient/README.md) and the librdkafka log with the
// application's own delivery log. trace parse reads each whole; inspect reads the same
// file's deliveries with the same --pattern (the evidence reader) and judges them against
// the partition the capture ran on (200 transactional records, the marker at 200, one
// more record; committed 202, the capture's own `committed` lines). Both go through the
// one judge and must agree with each other and with the capture's ground truth.
func TestRealCapturesGetTheSameJudgementFromTraceParseAndInspect(t *testing.T) {
	const (
		jsPlain = `^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)$`
		jsJSON  = `"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"`
	)
	seed := inspect.Offsets{Topic: "stranded", Partition: 0, Committed: 202, LogStart: 0, LastStable: 202, HighWatermark: 202}
	spans := []inspect.Span{{First: 0, Last: 199, Kind: inspect.Record}, {First: 200, Last: 200, Kind: inspect.CommitMarker}, {First: 201, Last: 201, Kind: inspect.Record}}
	lost := answer{"LOST", []kpart.RecordRange{kpart.Counted(82, 199, 118)}, 82}
	ok := answer{"OK", nil, -1}
	cases := []struct {
		files   []string
		pattern string
		want    answer
	}{
		{[]string{"jsclient/v1.10.0-default-debug.log.gz"}, jsPlain, lost},
		{[]string{"jsclient/v1.10.0-json.log.gz"}, jsJSON, lost},
		{[]string{"jsclient/v1.10.1-default-debug.log.gz"}, jsPlain, ok},
		{[]string{"jsclient/v1.10.1-json.log.gz"}, jsJSON, ok},
		{[]string{"repro-v1.10.0.trace"}, "", lost},
		{[]string{"repro-v1.10.0-rdkafka.log", "repro-v1.10.0.trace"}, "", lost},
	}
	for _, c := range cases {
		t.Run(c.files[0], func(t *testing.T) {
			opt := trace.Options{NoTimeline: true}
			set := evidence.NewSet()
			if c.pattern != "" {
				opt.Pattern = regexp.MustCompile(c.pattern)
				p, err := evidence.CompilePattern(c.pattern)
				if err != nil {
					t.Fatal(err)
				}
				set.Pattern = p
			}
			a := trace.NewAnalyzer(opt)
			for _, f := range c.files {
				if _, err := a.Parse(f, bytes.NewReader(read(t, f)), trace.FormatAuto); err != nil {
					t.Fatal(err)
				}
			}
			rep := a.Finish()
			var tp *trace.PartitionSummary
			for i := range rep.Partitions {
				if rep.Partitions[i].Partition == 0 {
					tp = &rep.Partitions[i]
				}
			}
			if tp == nil {
				t.Fatalf("trace parse: no partition 0 in %+v", rep.Partitions)
			}
			// inspect reads the deliveries of the last file (the one naming them)
			last := c.files[len(c.files)-1]
			if err := set.Read(bytes.NewReader(read(t, last)), last); err != nil {
				t.Fatal(err)
			}
			set.ResolveTopic("stranded")
			ev := set.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
			from, to, _, need := inspect.ScanWindow(seed, ev, 0)
			var sc *inspect.Scan
			if need {
				sc = &inspect.Scan{From: from, To: to}
				for _, s := range spans {
					if s.Last >= from && s.First < to {
						s.First, s.Last = max(s.First, from), min(s.Last, to-1)
						sc.Spans = append(sc.Spans, s)
					}
				}
			}
			ij := inspect.Judge(seed, ev, sc)
			got := map[string]answer{"trace parse": answerOf(tp.Judgement), "inspect": answerOf(ij.Judgement)}
			for cmd, a := range got {
				if !reflect.DeepEqual(a, c.want) {
					t.Errorf("%s: %+v, want %+v", cmd, a, c.want)
				}
			}
		})
	}
}
