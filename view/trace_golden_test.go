package view

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/trace"
)

// reportOf parses fixtures of trace/testdata as trace parse does.
func reportOf(t *testing.T, pattern string, files ...string) *trace.Report {
	t.Helper()
	opt := trace.Options{}
	if pattern != "" {
		opt.Pattern = regexp.MustCompile(pattern)
	}
	a := trace.NewAnalyzer(opt)
	for _, file := range files {
		fh, err := os.Open("../trace/testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := a.Parse(file, fh, trace.FormatAuto); err != nil {
			t.Fatal(err)
		}
	}
	return a.Finish()
}

// trace parse's output, every shape of it, in golden files (issue 11 §6: it had only
// Contains checks).
func TestTraceParseOutputMatchesTheGoldenFiles(t *testing.T) {
	const appPattern = `^(?P<time>\S+) handler delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)`
	const jsPattern = `"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"`
	loss := reportOf(t, "", "kstranded-v1.10.0.trace")
	rdkafka := reportOf(t, appPattern, "rdkafka-go-consumer.log", "rdkafka-go-app-delivered.log")
	seed := reportOf(t, "", "kafkajs-seed.trace")
	js := reportOf(t, jsPattern, "jsclient/v1.10.0-json.log.gz")
	for _, c := range []struct {
		name     string
		r        *trace.Report
		format   render.Format
		pretty   bool
		timeline bool
	}{
		{"trace-loss-pipe", loss, render.Table, false, false},
		{"trace-loss-terminal", loss, render.Table, true, false},
		{"trace-loss-json", loss, render.JSON, false, false},
		{"trace-loss-timeline-pipe", loss, render.Table, false, true},
		{"trace-loss-timeline-json", loss, render.JSON, false, true},
		{"trace-rdkafka-app-pipe", rdkafka, render.Table, false, false},
		{"trace-rdkafka-app-timeline-terminal", rdkafka, render.Table, true, true},
		{"trace-kafkajs-seed-pipe", seed, render.Table, false, false},
		{"trace-jsclient-json-pipe", js, render.Table, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PrintTrace(&b, NewTrace(c.r, "trace parse", c.timeline), c.format, c.pretty, c.timeline); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
	for _, c := range []struct {
		name string
		r    *trace.Report
	}{{"trace-loss-svg", loss}, {"trace-rdkafka-app-svg", rdkafka}, {"trace-repro-svg", reportOf(t, "", "repro-v1.10.0.trace")}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTraceSVG(&b, c.r, nil); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}
