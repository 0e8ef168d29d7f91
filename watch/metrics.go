package watch

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstranded/kstranded/internal/verdict"
)

// Collector exposes a watcher's state as Prometheus metrics, built fresh at every scrape
// from the last evaluation (the exporter convention: no state of its own in the
// registry). Evaluate and Collect may run concurrently: Lock guards the watcher.
type Collector struct {
	W  *Watcher
	mu *sync.Mutex
}

// NewCollector returns the collector of w; mu guards w (the caller holds it around
// Evaluate).
func NewCollector(w *Watcher, mu *sync.Mutex) *Collector { return &Collector{W: w, mu: mu} }

var partLabels = []string{"group", "topic", "partition"}

var (
	descLost          = prometheus.NewDesc("kstranded_records_lost", "Records committed past but never delivered, now (0 once a rewind re-delivers them).", partLabels, nil)
	descLostTotal     = prometheus.NewDesc("kstranded_records_lost_total", "Records seen lost since the watcher started (or its checkpoint).", partLabels, nil)
	descStranded      = prometheus.NewDesc("kstranded_records_stranded", "Records not delivered and not yet committed past.", partLabels, nil)
	descStalled       = prometheus.NewDesc("kstranded_partition_stalled", "1 when records wait past the committed offset and neither a delivery nor a commit came for --stall-after.", partLabels, nil)
	descStalledSecs   = prometheus.NewDesc("kstranded_partition_stalled_seconds", "Seconds since the last progress of a stalled partition (0 when not stalled).", partLabels, nil)
	descCommitted     = prometheus.NewDesc("kstranded_committed_offset", "The group's committed offset (-1: none).", partLabels, nil)
	descDelivered     = prometheus.NewDesc("kstranded_delivered_offset", "The highest offset the evidence shows delivered (-1: none).", partLabels, nil)
	descJudged        = prometheus.NewDesc("kstranded_partition_judged", "1 when the partition was judged (OK, STRANDED or LOST); 0 with the verdict that judged nothing in the label why.", append(partLabels, "why"), nil)
	descVerdict       = prometheus.NewDesc("kstranded_partition_verdict", "1 for the partition's current verdict.", append(partLabels, "verdict"), nil)
	descEvidenceAge   = prometheus.NewDesc("kstranded_evidence_age_seconds", "Seconds since a source last gave a delivery line (-1: never).", []string{"source"}, nil)
	descEvidenceLines = prometheus.NewDesc("kstranded_evidence_lines_total", "Evidence lines read, by what became of them.", []string{"source", "kind"}, nil)
	descSpans         = prometheus.NewDesc("kstranded_otlp_spans_total", "OpenTelemetry spans received (watch --otlp), by what became of them: counted (a consumer process span: a delivery), ignored (other spans), malformed (a process span without partition or offset).", []string{"source", "kind"}, nil)
	descUp            = prometheus.NewDesc("kstranded_up", "1 when the last evaluation read the cluster; 0 when the broker did not answer (no verdict is then given).", nil, nil)
	descEvalDuration  = prometheus.NewDesc("kstranded_evaluation_duration_seconds", "How long the last evaluation took.", nil, nil)
	descEvalErrors    = prometheus.NewDesc("kstranded_evaluation_errors_total", "Evaluations that failed.", nil, nil)
	descEvals         = prometheus.NewDesc("kstranded_evaluations_total", "Evaluations run.", nil, nil)
	descGroupUp       = prometheus.NewDesc("kstranded_group_up", "1 when the last evaluation read the group's committed offsets; 0 when the cluster answered but not for this group (unknown, no committed offsets, an error for it alone).", []string{"group"}, nil)
	descEvalRequests  = prometheus.NewDesc("kstranded_evaluation_requests", "Admin requests the last evaluation's reading of every watched group's commits took (one round for all groups; scans of the records not included).", nil, nil)
)

// Describe sends every descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLost, descLostTotal, descStranded, descStalled, descStalledSecs, descCommitted, descDelivered,
		descJudged, descVerdict, descEvidenceAge, descEvidenceLines, descSpans, descUp, descEvalDuration, descEvalErrors, descEvals, descGroupUp, descEvalRequests} {
		ch <- d
	}
}

// why is the label of a verdict that judges nothing.
func why(v verdict.Verdict) string {
	switch v {
	case verdict.NoEvidence:
		return "no_evidence"
	case verdict.NoCommitEvidence:
		return "no_commit"
	case verdict.NoRecordEvidence:
		return "no_record_evidence"
	case verdict.Incomplete:
		return "incomplete"
	case verdict.Error:
		return "error"
	}
	return ""
}

// Collect builds the metrics from the watcher's state.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.W
	last := w.Last()
	now := w.opt.Now()
	gauge := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	up := 0.0
	if last.Up && !last.At.IsZero() {
		up = 1
	}
	gauge(descUp, up)
	gauge(descEvalDuration, last.Duration.Seconds())
	if up == 1 {
		gauge(descEvalRequests, float64(last.Requests))
		for _, g := range last.Watched {
			v := 1.0
			if _, bad := last.GroupErrs[g]; bad {
				v = 0
			}
			gauge(descGroupUp, v, g)
		}
	}
	ch <- prometheus.MustNewConstMetric(descEvalErrors, prometheus.CounterValue, float64(w.Errors()))
	ch <- prometheus.MustNewConstMetric(descEvals, prometheus.CounterValue, float64(w.Evaluations()))
	for _, s := range w.Sources() {
		age := -1.0
		if !s.LastLine.IsZero() {
			age = now.Sub(s.LastLine).Seconds()
		}
		gauge(descEvidenceAge, age, s.Path)
		if s.Spans {
			for kind, n := range map[string]int64{"counted": s.Counted, "ignored": s.Ignored, "malformed": s.Malformed} {
				ch <- prometheus.MustNewConstMetric(descSpans, prometheus.CounterValue, float64(n), s.Path, kind)
			}
			continue
		}
		for kind, n := range map[string]int64{"counted": s.Counted, "ignored": s.Ignored, "malformed": s.Malformed, "too_long": s.Skipped} {
			ch <- prometheus.MustNewConstMetric(descEvidenceLines, prometheus.CounterValue, float64(n), s.Path, kind)
		}
	}
	for _, p := range w.Partitions() {
		l := []string{p.Group, p.Topic, strconv.Itoa(int(p.Partition))}
		ch <- prometheus.MustNewConstMetric(descLostTotal, prometheus.CounterValue, float64(p.LostTotal), l...)
		if !p.Seen || up == 0 {
			// the broker did not answer, or the group no longer has the partition:
			// no verdict from stale data
			continue
		}
		gauge(descCommitted, float64(p.Committed), l...)
		hi := -1.0
		if n := len(p.Delivered); n > 0 {
			hi = float64(p.Delivered[n-1].Last)
		}
		gauge(descDelivered, hi, l...)
		judged, w := 0.0, why(p.Judgement.Verdict)
		if p.Judged {
			judged = 1
		}
		gauge(descJudged, judged, append(l, w)...)
		gauge(descVerdict, 1, append(l, string(p.Verdict))...)
		if p.Judged {
			gauge(descLost, float64(p.Judgement.LostCount+p.Judgement.UnrecoverableCount), l...)
			gauge(descStranded, float64(p.Judgement.StrandedCount), l...)
		}
		stalled, secs := 0.0, 0.0
		if !p.StalledSince.IsZero() {
			stalled, secs = 1, now.Sub(p.StalledSince).Seconds()
		}
		gauge(descStalled, stalled, l...)
		gauge(descStalledSecs, secs, l...)
	}
}
