package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
)

// Rules name the findings.
const (
	RuleLoss             = "LOST"                      // committed past fetched, never-delivered records
	RuleClearNoRewind    = "CLEAR-NO-REWIND"           // a cache clear discarded undelivered records and did not rewind
	RuleCacheExpiry      = "CACHE-EXPIRY"              // the cache expired: since fetch / since serve / max.poll.interval.ms
	RuleHotSpin          = "HOT-SPIN"                  // empty cache reads or empty fetches in a storm
	RuleCommitRegression = "COMMIT-REGRESSION"         // a commit lower than one already committed
	RulePositionPast     = "POSITION-PAST-UNDELIVERED" // the fetch position was left past undelivered records
	RuleMaxPoll          = "MAX-POLL-EXCEEDED"         // the client left the group: max.poll.interval.ms exceeded
)

// Severities.
const (
	SevLoss = "loss"
	SevWarn = "warn"
	SevInfo = "info"
)

// SpinRate is the rate (per second) from which empty reads or fetches are a hot spin.
const SpinRate = 50

// Evidence is one log line that proves part of a finding.
type Evidence struct {
	Ref  Ref    `json:"ref"`
	What string `json:"what"`
}

// Finding is one rule that fired, with its proof.
type Finding struct {
	Rule      string            `json:"rule"`
	Severity  string            `json:"severity"`
	Topic     string            `json:"topic,omitempty"`
	Partition int32             `json:"partition"` // -1: all partitions / not partition-specific
	Ranges    kpart.RangeSet    `json:"offsets,omitempty"`
	Count     int64             `json:"count,omitempty"`
	Message   string            `json:"message"`
	Facts     map[string]string `json:"facts,omitempty"`
	Evidence  []Evidence        `json:"evidence"`
}

// PartitionSummary is the end state of one partition.
type PartitionSummary struct {
	Topic            string
	Partition        int32
	Fetched          kpart.RangeSet
	FetchedCount     int64
	Control          kpart.RangeSet
	Delivered        kpart.RangeSet
	DeliveredUnknown int
	DeliveryEvidence bool
	Undelivered      kpart.RangeSet
	Lost             kpart.RangeSet
	Stranded         kpart.RangeSet
	Committed        int64
	Stored           int64
	Position         int64
	Clears           int
	Discarded        int64
	Verdict          verdict.Verdict
	// Reason says, for a verdict that judges nothing, what is missing.
	Reason string
	// Judgement is the one judge's answer (package judge), the same shape as every
	// command's.
	Judgement judge.Judgement
}

// judgeInput is what the inputs say of one partition, for the one judge: deliveries
// when any input delivered, the last commit seen (or read live), and what its offsets
// hold: read from the partition with --group and --brokers (then judged from the log
// start, as inspect judges), else the fetch lines (records, control records) from the
// first offset the inputs name. Fetched records neither delivered nor let go of (dropped
// holds those a clear or seek let go of) are still held by the client: not stranded.
func (a *Analyzer) judgeInput(ps *partState, s PartitionSummary, dropped *Finding) judge.Input {
	in := judge.Input{Topic: ps.key.Topic, Partition: ps.key.Partition, From: judge.Unknown,
		LogStart: judge.Unknown, LastStable: judge.Unknown, HighWatermark: judge.Unknown}
	if a.anyDelivery {
		in.Deliveries = &judge.Deliveries{Ranges: ps.delivered, Source: a.deliverySources()}
	}
	peak := int64(judge.Unknown)
	for _, c := range ps.commits {
		peak = max(peak, c.offset)
	}
	in.Commit = judge.Commit{Known: ps.committed != Unknown, Offset: ps.committed, Peak: peak, Source: "the inputs' commit lines"}
	if lr := ps.live; lr != nil {
		in.Commit = judge.Commit{Known: true, Offset: lr.Committed, Peak: peak, Source: "the group's committed offsets, read live"}
		in.LogStart, in.LastStable, in.HighWatermark, in.Err = lr.LogStart, lr.LastStable, lr.HighWatermark, lr.Err
		in.Contents = lr.Contents
	} else {
		ctrl := ps.ctrl
		for _, r := range ps.fetched {
			for _, piece := range (kpart.RangeSet{r}).Minus(ctrl) {
				in.Contents.Spans = append(in.Contents.Spans, judge.Span{First: piece.First, Last: piece.Last, Kind: judge.Record})
			}
		}
		for _, c := range ctrl {
			in.Contents.Spans = append(in.Contents.Spans, judge.Span{First: c.First, Last: c.Last, Kind: judge.Control})
		}
		for i := 1; i < len(ps.fetched); i++ {
			g1, g2 := ps.fetched[i-1].Last+1, ps.fetched[i].First-1
			if len(ps.seekTo.Within(g1+1, g2+2)) == 0 {
				in.Contents.Spans = append(in.Contents.Spans, judge.Span{First: g1, Last: g2, Kind: judge.Skipped})
			}
		}
		sort.Slice(in.Contents.Spans, func(i, k int) bool { return in.Contents.Spans[i].First < in.Contents.Spans[k].First })
		in.Contents.Source = "the inputs' fetch lines"
		first := int64(-1)
		if len(ps.fetched) > 0 {
			first = ps.fetched[0].First
		}
		if len(ps.delivered) > 0 && (first < 0 || ps.delivered[0].First < first) {
			first = ps.delivered[0].First
		}
		if first >= 0 {
			in.From = first
		}
	}
	held := s.Undelivered
	if dropped != nil {
		held = held.Minus(dropped.Ranges)
	}
	in.InFlight = held
	return in
}

// deliverySources names the inputs that delivered, for the judgement's basis.
func (a *Analyzer) deliverySources() string {
	var names []string
	for _, f := range a.files {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "the inputs"
	}
	return strings.Join(names, ", ")
}

// Counter is a count of one source event name: declared by a counts-summary line, seen as lines.
type Counter struct {
	Name     string `json:"name"`
	Declared int    `json:"declared,omitempty"`
	Seen     int    `json:"seen,omitempty"`
}

// Report is the result of an analysis.
type Report struct {
	Files           []FileStats
	Settings        map[string]string
	MaxPollInterval time.Duration // Unknown when neither the flag nor the trace gave it
	MaxPollSource   string
	// TimeScale is the factor the trace's durations were multiplied by (kstranded repro runs
	// scenarios faster than real time: time_scale 0.01 turns 15 minutes into 9 seconds); 1
	// when the trace does not say.
	TimeScale        float64
	TimeScaleSource  string
	Partitions       []PartitionSummary
	Findings         []Finding
	Timeline         []Entry
	TimelineDropped  int
	IdlePartitions   int // partitions named in the inputs that never had a record, left out of Partitions
	Counters         []Counter
	DeliveryEvidence bool
	Start, End       time.Time
	// Interrupted: the parse was stopped (SIGINT, SIGTERM) before the end of its inputs.
	// Partial: some input was not read to its end (an interrupt or a limit); partitions
	// it judged OK or without evidence are INCOMPLETE instead. StoppedAt is where.
	Interrupted bool
	Partial     bool
	StoppedAt   Ref
	// Incomplete says, one sentence each, what this report does not cover: the input not
	// read, the partitions past MaxPartitions, the names past the limit.
	Incomplete []string
	// UntrackedEvents counts the events about partitions past MaxPartitions, dropped.
	UntrackedEvents int
	// Verdict is the worst partition verdict (verdict.Worse); NO EVIDENCE when no
	// partition could be judged or an input was mostly malformed.
	Verdict verdict.Verdict
	// NoEvidence says why the inputs as a whole support no verdict ("" when they do).
	NoEvidence string
	// Settle lists what would settle the verdicts that judge nothing.
	Settle []string
}

// The ways to settle a verdict that judges nothing, named in Report.Settle.
const (
	SettleDeliveries = "no delivery seen: add the application's own log of what its handler received (JSON lines with partition and offset as pino/winston/bunyan write them, text lines TOPIC PARTITION OFFSET, or any log read with --pattern REGEXP naming (?P<partition>...) and (?P<offset>...))"
	// librdkafka logs its offset commits ("OffsetCommit for N partition(s) ...
	// returned", facility COMMIT) under the cgrp debug context (rdkafka_cgrp.c;
	// CONFIGURATION.md lists consumer,cgrp,topic,fetch for consumers).
	SettleCommits   = "no commit seen for a partition with deliveries: " + settleLive + "the group's committed offsets live" + settleOr + "debug=cgrp (it logs OffsetCommit)" + settleDebug
	SettleMalformed = "most lines of an input are malformed: check --format, or give --pattern REGEXP for an application log"
	// librdkafka logs what each fetch returned ("Enqueue N message(s) ... last_offset L,
	// C ctrl msgs", facility CONSUME) under the fetch debug context
	// (rdkafka_msgset_reader.c: MSG | FETCH).
	SettleRecords = "the commit passed undelivered offsets that nothing in the inputs describes (records or transaction markers): " + settleLive + "what the partition's offsets hold" + settleOr + "debug=fetch (it logs what each fetch returned)" + settleDebug

	// the three ways to what a log lacks, the same for commits and for records
	settleLive  = "add --group GROUP with --brokers to read "
	settleOr    = ", run `kstranded inspect --group GROUP --delivered FILE`, or capture the client's log with librdkafka "
	settleDebug = ", e.g. debug=consumer,cgrp,fetch"
)

// judge sets the report's verdict and what would settle it.
func (r *Report) judge(unread []string) {
	r.Verdict = verdict.OK
	judged := false
	settle := map[string]bool{}
	for _, p := range r.Partitions {
		r.Verdict = verdict.Worse(r.Verdict, p.Verdict)
		judged = judged || p.Verdict.Judged()
		switch p.Verdict {
		case verdict.NoEvidence:
			settle[SettleDeliveries] = true
		case verdict.NoCommitEvidence:
			settle[SettleCommits] = true
		case verdict.NoRecordEvidence:
			settle[SettleRecords] = true
		}
	}
	for _, f := range r.Files {
		if f.Malformed > 0 && f.Malformed*2 >= f.Lines {
			r.NoEvidence = fmt.Sprintf("%s: %d of %d lines malformed", f.Name, f.Malformed, f.Lines)
			settle[SettleMalformed] = true
			break
		}
	}
	if len(unread) > 0 {
		r.NoEvidence = strings.Join(unread, "; ")
		settle[SettleDeliveries] = true
	}
	switch {
	case r.NoEvidence != "":
	case len(r.Partitions) == 0:
		r.NoEvidence = "no partition had a record in these inputs"
		if !r.DeliveryEvidence {
			settle[SettleDeliveries] = true
		}
	case !judged:
		r.NoEvidence = "no partition could be judged"
	}
	if len(unread) > 0 {
		// a delivery log not read: what it delivered is unknown, so no loss is proven
		r.Verdict = verdict.NoEvidence
	} else if r.NoEvidence != "" && r.Verdict != verdict.Lost && r.Verdict != verdict.Stranded {
		// LOST and STRANDED stand on the evidence lines they name; anything less is not
		// an all-clear
		r.Verdict = verdict.Worse(r.Verdict, verdict.NoEvidence)
	}
	if !r.Complete() && r.Verdict == verdict.OK {
		// part of the inputs was not read or not tracked (an interrupt, a limit): what
		// was read being clean says nothing of the rest
		r.Verdict = verdict.Incomplete
	}
	for _, k := range []string{SettleMalformed, SettleDeliveries, SettleCommits, SettleRecords} {
		if settle[k] {
			r.Settle = append(r.Settle, k)
		}
	}
}

// Complete reports whether the report covers every line of its inputs.
func (r *Report) Complete() bool { return !r.Partial && r.UntrackedEvents == 0 }

// Lost reports whether any LOST finding exists.
func (r *Report) Lost() bool {
	for _, f := range r.Findings {
		if f.Rule == RuleLoss {
			return true
		}
	}
	return false
}

func (ps *partState) fetchRef(o int64) (Ref, bool) {
	for _, fr := range ps.fetchRefs {
		if fr.First <= o && o <= fr.Last {
			return fr.ref, true
		}
	}
	return Ref{}, false
}

// Finish evaluates the rules and returns the report.
func (a *Analyzer) Finish() *Report {
	r := &Report{Files: a.files, Settings: a.settings, MaxPollInterval: Unknown, DeliveryEvidence: a.anyDelivery,
		Start: a.first, End: a.last, TimeScale: 1}
	a.readSettings(r)
	skipsAll, skipsAllRef := 0, Ref{}
	for _, s := range a.skipsAll {
		skipsAll += int(s.offset)
		skipsAllRef = s.ref
	}
	if d := a.declared["clearCache-skip-rewind"]; d > skipsAll {
		skipsAll, skipsAllRef = d, a.counterRefs["clearCache-skip-rewind"]
	}
	keys := make([]kpart.TopicPartition, len(a.order))
	copy(keys, a.order)
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	r.Interrupted, r.Partial, r.StoppedAt, r.UntrackedEvents = a.interrupted, a.partial, a.stoppedAt, a.untracked
	switch {
	case a.interrupted:
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("interrupted: the inputs were read up to %s only", a.stoppedAt))
	case a.halt != nil:
		r.Incomplete = append(r.Incomplete, a.halt.Error())
	}
	if a.untracked > 0 {
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("the inputs name more than %d partitions (the limit, --max-partitions): %d events about the partitions named after the first %d were not tracked (the first, %s, at %s)",
			a.opt.MaxPartitions, a.untracked, a.opt.MaxPartitions, tpName(a.untrackedPart.Topic, a.untrackedPart.Partition), a.untrackedFirst))
	}
	if a.namesDropped > 0 {
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("%d events and settings with names past the first %d distinct ones were not counted", a.namesDropped, maxNames))
	}
	var tl []Entry
	tl = append(tl, a.global.all()...)
	r.TimelineDropped = a.global.dropped
	for _, k := range keys {
		ps := a.parts[k]
		tl = append(tl, ps.tl.all()...)
		r.TimelineDropped += ps.tl.dropped
		if len(ps.fetched) == 0 && len(ps.delivered) == 0 && ps.committed == Unknown && ps.unknownDeliv == 0 && len(ps.clears) == 0 {
			// named in a trace (a skipped rewind, an assignment, an empty fetch at its
			// start position) but never had a record nor a commit
			r.IdlePartitions++
			continue
		}
		a.summarise(r, k, ps, skipsAll, skipsAllRef)
	}
	r.Findings = append(r.Findings, a.regressions...)
	for _, x := range a.expiries {
		r.Findings = append(r.Findings, a.expiryFinding(x, r))
	}
	r.Findings = append(r.Findings, a.spinFindings()...)
	r.Findings = append(r.Findings, a.maxPollFindings()...)
	sort.SliceStable(r.Findings, func(i, j int) bool { return sevRank(r.Findings[i].Severity) < sevRank(r.Findings[j].Severity) })
	r.Timeline = sortTimeline(tl)
	r.Counters = a.counters()
	r.judge(a.unread)
	return r
}

// summarise judges one partition that had records or a commit: its summary, and the
// findings of the rules about one partition (loss, clears that did not rewind, the
// position left past undelivered records).
func (a *Analyzer) summarise(r *Report, k kpart.TopicPartition, ps *partState, skipsAll int, skipsAllRef Ref) {
	s := PartitionSummary{Topic: k.Topic, Partition: k.Partition, Fetched: ps.fetched, FetchedCount: ps.fetched.Count() - ps.ctrl.Count(),
		Control: ps.ctrl, Delivered: ps.delivered, DeliveredUnknown: ps.unknownDeliv, DeliveryEvidence: a.anyDelivery,
		Committed: ps.committed, Stored: ps.stored, Position: ps.position, Clears: len(ps.clears), Discarded: ps.discarded}
	if a.anyDelivery {
		s.Undelivered = ps.fetched.Minus(ps.delivered).Minus(ps.ctrl)
	}
	// the fetch position left past undelivered records (not yet committed past): the
	// client let go of them (a clear or a seek that nothing rewound)
	var dropped *Finding
	if a.anyDelivery && ps.position != Unknown {
		low := int64(0)
		if ps.committed != Unknown {
			low = ps.committed
		}
		past := s.Undelivered.Within(low, ps.position)
		if f, ok := a.positionFinding(ps, past); ok {
			dropped = &f
		}
	}
	j := judge.Judge(a.judgeInput(ps, s, dropped))
	s.Judgement = j
	s.Verdict, s.Reason = j.Verdict, j.Reason
	for _, r := range j.Lost {
		s.Lost.Add(r.First, r.Last)
	}
	s.Lost = s.Lost.Minus(ps.ctrl)
	for _, r := range j.Stranded {
		s.Stranded.Add(r.First, r.Last)
	}
	s.Stranded = s.Stranded.Minus(ps.ctrl)
	if len(s.Lost) > 0 {
		r.Findings = append(r.Findings, a.lossFinding(ps, s.Lost))
	}
	// clears that discarded undelivered records and did not rewind
	for _, c := range ps.clears {
		if len(c.discarded) == 0 {
			continue
		}
		if f, ok := a.clearFinding(ps, c, skipsAll, skipsAllRef); ok {
			r.Findings = append(r.Findings, f)
		}
	}
	if dropped != nil {
		if past := dropped.Ranges.Minus(s.Lost); len(past) > 0 {
			dropped.Ranges, dropped.Count = past, past.Count()
			r.Findings = append(r.Findings, *dropped)
		}
	}
	if a.partial && s.Verdict != verdict.Lost && s.Verdict != verdict.Stranded {
		// the rest of the input could deliver, commit or lose: no clean bill of health
		s.Verdict = verdict.Incomplete
	}
	r.Partitions = append(r.Partitions, s)
}

// sortTimeline puts the entries in time order (the order of the input within one time)
// and renders their details.
func sortTimeline(tl []Entry) []Entry {
	sort.SliceStable(tl, func(i, j int) bool {
		if !tl[i].Time.Equal(tl[j].Time) {
			return tl[i].Time.Before(tl[j].Time)
		}
		return tl[i].seq < tl[j].seq
	})
	for i := range tl {
		tl[i].render()
	}
	return tl
}

// counters are the event names counted, declared by counts-summary lines or seen as lines,
// by name.
func (a *Analyzer) counters() []Counter {
	var out []Counter
	names := map[string]bool{}
	for n := range a.declared {
		names[n] = true
	}
	for n := range a.seen {
		names[n] = true
	}
	for n := range names {
		seen := 0
		if p := a.seen[n]; p != nil {
			seen = *p
		}
		out = append(out, Counter{Name: n, Declared: a.declared[n], Seen: seen})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// readSettings takes max.poll.interval and the time scale from the flag or the trace:
// librdkafka logs and hand-written traces name max.poll.interval.ms (milliseconds);
// kstranded repro traces name max_poll_interval (a Go duration, "15m0s") and time_scale.
func (a *Analyzer) readSettings(r *Report) {
	if a.opt.MaxPollInterval > 0 {
		r.MaxPollInterval, r.MaxPollSource = a.opt.MaxPollInterval, "--max-poll-interval"
	} else if v, ok := a.settings["max.poll.interval.ms"]; ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			r.MaxPollInterval = time.Duration(ms) * time.Millisecond
			r.MaxPollSource = a.settingRef["max.poll.interval.ms"].String()
		}
	} else if v, ok := a.settings["max_poll_interval"]; ok {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			r.MaxPollInterval, r.MaxPollSource = d, a.settingRef["max_poll_interval"].String()
		}
	}
	if v, ok := a.settings["time_scale"]; ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f <= 1e6 {
			r.TimeScale, r.TimeScaleSource = f, a.settingRef["time_scale"].String()
		}
	}
}

func sevRank(s string) int {
	switch s {
	case SevLoss:
		return 0
	case SevWarn:
		return 1
	}
	return 2
}

// messageRanges: the ranges a message lists before saying how many more (Summary; 40,000
// ranges printed 2.1 MB on stderr, issue 27 §10); -o json's Ranges list them all.
const messageRanges = 8

func tpName(topic string, p int32) string {
	if topic == "" {
		return fmt.Sprintf("partition %d", p)
	}
	return fmt.Sprintf("%s/%d", topic, p)
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		return "unknown"
	}
	return d.Round(time.Millisecond).String()
}

// clock prints a time; the kafkajs trace has times of day only.
func clock(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	if t.Year() == 0 {
		return t.Format("15:04:05.999")
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
