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
	SettleCommits   = "no commit seen for a partition with deliveries: add --group GROUP with --brokers to read the group's committed offsets live, run `kstranded inspect --group GROUP --delivered FILE`, or capture the client's log with librdkafka debug=cgrp (it logs OffsetCommit), e.g. debug=consumer,cgrp,fetch"
	SettleMalformed = "most lines of an input are malformed: check --format, or give --pattern REGEXP for an application log"
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
	for _, k := range []string{SettleMalformed, SettleDeliveries, SettleCommits} {
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
		out = append(out, Counter{Name: n, Declared: a.declared[n], Seen: a.seen[n]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// maxPollFindings are the times the client left the group for not polling in time.
func (a *Analyzer) maxPollFindings() []Finding {
	var out []Finding
	for _, m := range a.maxPolls {
		out = append(out, Finding{Rule: RuleMaxPoll, Severity: SevWarn, Partition: AllPartitions,
			Message:  fmt.Sprintf("the application did not poll within max.poll.interval.ms (%s): the consumer left the group and its partitions were revoked", fmtDur(m.Timeout)),
			Evidence: []Evidence{{m.Ref, "max.poll.interval.ms exceeded"}}})
	}
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

func tpName(topic string, p int32) string {
	if topic == "" {
		return fmt.Sprintf("partition %d", p)
	}
	return fmt.Sprintf("%s [%d]", topic, p)
}

func (a *Analyzer) lossFinding(ps *partState, lost kpart.RangeSet) Finding {
	f := Finding{Rule: RuleLoss, Severity: SevLoss, Topic: ps.key.Topic, Partition: ps.key.Partition, Ranges: lost, Count: lost.Count()}
	var ev []Evidence
	for _, r := range lost {
		if ref, ok := ps.fetchRef(r.First); ok {
			ev = append(ev, Evidence{ref, fmt.Sprintf("offset %d fetched", r.First)})
		}
	}
	var cause string
	for _, c := range ps.clears {
		if len(c.discarded.Within(lost[0].First, lost[0].Last+1)) > 0 {
			ev = append(ev, Evidence{c.ref, fmt.Sprintf("cache clear discarded %s", c.discarded)})
			cause = "discarded by a cache clear that did not rewind"
			break
		}
	}
	if cause == "" {
		for _, s := range ps.seeks {
			if s.offset > lost[0].First {
				ev = append(ev, Evidence{s.ref, fmt.Sprintf("seek to %d skipped them", s.offset)})
				cause = fmt.Sprintf("skipped by a seek to %d", s.offset)
				break
			}
		}
	}
	committed := ps.committed
	for _, c := range ps.commits {
		if c.offset > lost[0].First {
			ev = append(ev, Evidence{c.ref, fmt.Sprintf("committed %d, past offset %d", c.offset, lost[0].First)})
			committed = c.offset
			break
		}
	}
	how := "were fetched"
	if len(ps.fetched.Within(lost[0].First, lost[len(lost)-1].Last+1)) == 0 {
		how = "hold records (read from the partition)"
		if ps.live != nil {
			ev = append(ev, Evidence{Ref{File: "the partition, read live"}, fmt.Sprintf("records at %s", lost)})
		}
	}
	f.Message = fmt.Sprintf("%s: %d records (%s) %s, never delivered, and the committed offset moved past them (committed %d)",
		tpName(ps.key.Topic, ps.key.Partition), lost.Count(), lost, how, committed)
	if cause != "" {
		f.Message += "; " + cause
	}
	f.Evidence = ev
	return f
}

func (a *Analyzer) rewoundAfter(ps *partState, seq int, first int64) (offRef, bool) {
	for _, rw := range ps.rewinds {
		if rw.seq >= seq && (rw.offset == Unknown || rw.offset <= first) {
			return rw, true
		}
	}
	return offRef{}, false
}

func (a *Analyzer) clearFinding(ps *partState, c clearRec, skipsAll int, skipsAllRef Ref) (Finding, bool) {
	if _, ok := a.rewoundAfter(ps, c.seq, c.discarded[0].First); ok {
		return Finding{}, false
	}
	n := c.discarded.Count()
	f := Finding{Rule: RuleClearNoRewind, Severity: SevWarn, Topic: ps.key.Topic, Partition: ps.key.Partition,
		Ranges: c.discarded, Count: n, Facts: map[string]string{"discarded": strconv.FormatInt(n, 10)}}
	why := []string{}
	what := "cache cleared"
	if c.reason != "" {
		what += " (" + c.reason + ")"
	}
	ev := []Evidence{{c.ref, what}}
	if ref, ok := ps.fetchRef(c.discarded[0].First); ok {
		ev = append([]Evidence{{ref, fmt.Sprintf("offset %d fetched into the cache", c.discarded[0].First)}}, ev...)
	}
	if c.keysKnown {
		f.Facts["last_consumed_keys"] = fmt.Sprint(c.keys)
		if len(c.keys) == 0 {
			why = append(why, "lastConsumedKeys is empty, so there was nothing to rewind to")
		}
	}
	for _, s := range ps.skips {
		if s.seq >= c.seq {
			ev = append(ev, Evidence{s.ref, "rewind skipped: " + s.reason})
			why = append(why, "rewind skipped: "+s.reason)
			break
		}
	}
	if skipsAll > 0 {
		f.Facts["rewinds_skipped"] = strconv.Itoa(skipsAll)
		why = append(why, fmt.Sprintf("rewind skipped on %d partitions", skipsAll))
		ev = append(ev, Evidence{skipsAllRef, fmt.Sprintf("clearCache-skip-rewind %d", skipsAll)})
	}
	if c.reason != "" {
		f.Facts["clear"] = c.reason
	}
	f.Message = fmt.Sprintf("%s: a cache clear discarded %d fetched, undelivered records (%s) and did not rewind the partition",
		tpName(ps.key.Topic, ps.key.Partition), n, c.discarded)
	for i, w := range why {
		if i == 0 {
			f.Message += ": "
		} else {
			f.Message += "; "
		}
		f.Message += w
	}
	f.Evidence = ev
	return f, true
}

func (a *Analyzer) positionFinding(ps *partState, past kpart.RangeSet) (Finding, bool) {
	if len(past) == 0 {
		return Finding{}, false
	}
	// only records the client let go of (a clear or a seek past them) are stranded; the
	// rest may still be in its cache
	var drop *Evidence
	for _, c := range ps.clears {
		if len(c.discarded.Within(past[0].First, past[len(past)-1].Last+1)) > 0 {
			if _, ok := a.rewoundAfter(ps, c.seq, past[0].First); !ok {
				drop = &Evidence{c.ref, fmt.Sprintf("cache clear discarded %s", c.discarded)}
			}
			break
		}
	}
	if drop == nil {
		for _, s := range ps.seeks {
			if s.offset > past[0].First {
				if _, ok := a.rewoundAfter(ps, s.seq+1, past[0].First); !ok {
					drop = &Evidence{s.ref, fmt.Sprintf("seek to %d", s.offset)}
				}
				break
			}
		}
	}
	if drop == nil {
		return Finding{}, false
	}
	f := Finding{Rule: RulePositionPast, Severity: SevWarn, Topic: ps.key.Topic, Partition: ps.key.Partition, Ranges: past, Count: past.Count()}
	f.Message = fmt.Sprintf("%s: the fetch position (%d) is past %d undelivered records (%s) and nothing rewound it: they will not be fetched again by this consumer, and the next commit past them loses them",
		tpName(ps.key.Topic, ps.key.Partition), ps.position, past.Count(), past)
	f.Evidence = []Evidence{*drop, {ps.posRef, fmt.Sprintf("fetch position %d", ps.position)}}
	return f, true
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		return "unknown"
	}
	return d.Round(time.Millisecond).String()
}

// expiryTimes are the times since the last fetch and serve when the cache expired, from
// the expiry line or the lines before it, with a note on where each came from.
type expiryTimes struct {
	sinceFetch, sinceServe time.Duration
	fetchAtLeast           time.Duration // the kafkajs trace: a lower bound of sinceFetch (Unknown: none)
	fetchNote, serveNote   string
}

func newExpiryTimes(x expiryRec) expiryTimes {
	e := x.e
	sinceFetch, sinceServe := e.SinceFetch, e.SinceServe
	fetchNote, serveNote := "", ""
	if sinceFetch == Unknown {
		if !x.lastFetch.IsZero() && e.Timed {
			sinceFetch = e.Time.Sub(x.lastFetch)
			fetchNote = " (last fetch " + clock(x.lastFetch) + ")"
		} else {
			fetchNote = " (the trace's fetch lines carry no time)"
		}
	}
	// The kafkajs trace times no fetch; the first timed serve after the last productive
	// fetch bounds it from above, so at least this long passed since the last fetch.
	fetchAtLeast := time.Duration(Unknown)
	if sinceFetch == Unknown && !x.fetchBound.IsZero() && e.Timed && !e.Time.Before(x.fetchBound) {
		fetchAtLeast = e.Time.Sub(x.fetchBound)
		fetchNote = fmt.Sprintf(" (the fetch lines carry no time; the last productive fetch filled the cache no later than %s, when the first batch was served from it: at least %s before the expiry)",
			clock(x.fetchBound), fmtDur(fetchAtLeast))
	}
	if sinceServe == Unknown && !x.lastServe.IsZero() && e.Timed {
		sinceServe = e.Time.Sub(x.lastServe)
		serveNote = " (last serve " + clock(x.lastServe) + ")"
	}
	return expiryTimes{sinceFetch, sinceServe, fetchAtLeast, fetchNote, serveNote}
}

func (a *Analyzer) expiryFinding(x expiryRec, r *Report) Finding {
	e := x.e
	t := newExpiryTimes(x)
	sinceFetch, sinceServe, fetchAtLeast := t.sinceFetch, t.sinceServe, t.fetchAtLeast
	fetchNote, serveNote := t.fetchNote, t.serveNote
	f := Finding{Rule: RuleCacheExpiry, Severity: SevWarn, Partition: e.Partition, Topic: e.Topic,
		Facts: map[string]string{}, Evidence: []Evidence{{e.Ref, "cache expired"}}}
	facts := func(k string, d time.Duration) {
		if d >= 0 {
			f.Facts[k] = strconv.FormatInt(d.Milliseconds(), 10)
		} else {
			f.Facts[k] = "unknown"
		}
	}
	// a scaled trace (kstranded repro, time_scale 0.01) measures every duration in its own,
	// faster time: max.poll.interval is compared after scaling it the same way, and the
	// message gives the full-scale figures next to the trace's own
	scale := r.TimeScale
	if scale <= 0 {
		scale = 1
	}
	scaled := scale != 1
	full := func(d time.Duration) string {
		if !scaled || d < 0 {
			return ""
		}
		return fmt.Sprintf(" (%s at full scale)", fmtDur(time.Duration(float64(d)/scale)))
	}
	maxPoll := r.MaxPollInterval // in the trace's time
	if maxPoll >= 0 && scaled {
		maxPoll = time.Duration(float64(maxPoll) * scale)
	}
	facts("since_fetch_ms", sinceFetch)
	facts("since_serve_ms", sinceServe)
	facts("max_poll_interval_ms", r.MaxPollInterval)
	facts("timeout_ms", e.Timeout)
	if scaled {
		f.Facts["time_scale"] = strconv.FormatFloat(scale, 'g', -1, 64)
		facts("max_poll_interval_trace_ms", maxPoll)
	}
	msg := fmt.Sprintf("cache expired at %s: %s since the last fetch%s%s, %s since the last serve%s%s, max.poll.interval.ms %s",
		clock(e.Time), fmtDur(sinceFetch), full(sinceFetch), fetchNote, fmtDur(sinceServe), full(sinceServe), serveNote, fmtMaxPoll(r))
	if fetchAtLeast >= 0 {
		msg = strings.Replace(msg, "unknown since the last fetch", "at least "+fmtDur(fetchAtLeast)+" since the last fetch", 1)
	}
	if scaled {
		msg += fmt.Sprintf(", %s in this trace's time (its durations are scaled by time_scale %s, %s)",
			fmtDur(maxPoll), f.Facts["time_scale"], r.TimeScaleSource)
	}
	if e.Timeout >= 0 {
		msg += fmt.Sprintf(", expiration timeout in effect %s (timeout_ms %d in the trace)%s", fmtDur(e.Timeout), e.Timeout.Milliseconds(), full(e.Timeout))
	}
	if r.MaxPollSource != "" && r.MaxPollSource != "--max-poll-interval" {
		for _, k := range []string{"max.poll.interval.ms", "max_poll_interval"} {
			if v, ok := a.settings[k]; ok {
				f.Evidence = append(f.Evidence, Evidence{a.settingRef[k], k + "=" + v})
				break
			}
		}
	}
	if scaled {
		f.Evidence = append(f.Evidence, Evidence{a.settingRef["time_scale"], "time_scale=" + a.settings["time_scale"]})
	}
	if fetchAtLeast >= 0 {
		f.Evidence = append(f.Evidence, Evidence{x.fetchRef, "the last productive fetch"}, Evidence{x.fetchBoundRef, "first serve from it at " + clock(x.fetchBound)})
		facts("since_fetch_at_least_ms", fetchAtLeast)
	}
	msg += t.compare(e, r.MaxPollInterval, maxPoll, scale)
	if x.e.Reason != "" {
		msg += " (" + x.e.Reason + ")"
	}
	f.Message = msg
	return f
}

// compare says what the times say of the timeout in effect at the expiry e against
// max.poll.interval.ms (configured, and maxPoll in the trace's time; scale: the trace's
// time_scale).
func (t expiryTimes) compare(e Event, configured, maxPoll time.Duration, scale float64) string {
	sinceFetch, sinceServe, fetchAtLeast := t.sinceFetch, t.sinceServe, t.fetchAtLeast
	scaled := scale != 1
	msg := ""
	// the elapsed time bounds the timeout that was in effect
	elapsed := sinceFetch
	what := "the last fetch"
	if elapsed < 0 {
		elapsed, what = sinceServe, "the last serve"
	}
	// timers fire a little late and durations are rounded: within 1 % (or 5 ms) is "the same"
	same := func(x, y time.Duration) bool {
		d := x - y
		if d < 0 {
			d = -d
		}
		return d <= 5*time.Millisecond || float64(d) <= 0.01*float64(y)
	}
	switch {
	case configured < 0:
		msg += "; pass --max-poll-interval to compare"
	case e.Timeout >= 0 && !same(e.Timeout, maxPoll):
		msg += fmt.Sprintf("; the timeout in effect (%s) is not max.poll.interval.ms (%s)", fmtDur(e.Timeout), fmtDur(maxPoll))
	case e.Timeout < 0 && fetchAtLeast >= 0 && same(fetchAtLeast, maxPoll):
		msg += fmt.Sprintf("; the expiry came %s after the cache was filled: max.poll.interval.ms (%s) was honoured, counted from the last fetch. The %s is the time since the last serve, not since the last fetch: while a worker holds the only partition with cached records the others wait for a partition and never fetch, so nothing restarted the count (every fetch, even an empty one, does)",
			fmtDur(fetchAtLeast), fmtDur(maxPoll), fmtDur(sinceServe))
	case e.Timeout < 0 && fetchAtLeast >= 0 && fetchAtLeast > maxPoll:
		msg += fmt.Sprintf("; at least %s passed since the last productive fetch, more than max.poll.interval.ms (%s): fetches the trace does not time (empty ones count too) may have restarted the count", fmtDur(fetchAtLeast), fmtDur(maxPoll))
	case e.Timeout >= 0:
		msg += "; the timeout in effect is max.poll.interval.ms"
		if sinceFetch >= 0 && sinceServe >= 0 && sinceServe < e.Timeout && !same(sinceServe, e.Timeout) {
			ago := fmtDur(sinceServe) + " ago"
			if scaled {
				ago += ", " + fmtDur(time.Duration(float64(sinceServe)/scale)) + " at full scale"
			}
			msg += fmt.Sprintf(", counted from the last fetch (%s ago), not from the last serve (%s): the handler was still being served from the cache, but nothing had been fetched for max.poll.interval, so the cache was dropped",
				fmtDur(sinceFetch), ago)
		}
	case elapsed >= 0 && elapsed < maxPoll && !same(elapsed, maxPoll):
		msg += fmt.Sprintf("; it fired %s after %s, %s before max.poll.interval.ms would allow: the expiration timeout in effect was at most %s, not the configured %s",
			fmtDur(elapsed), what, fmtDur(maxPoll-elapsed), fmtDur(elapsed), fmtDur(maxPoll))
	case elapsed >= 0:
		msg += "; consistent with max.poll.interval.ms"
	}
	return msg
}

func fmtMaxPoll(r *Report) string {
	if r.MaxPollInterval < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d (%s, from %s)", r.MaxPollInterval.Milliseconds(), fmtDur(r.MaxPollInterval), r.MaxPollSource)
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

func (a *Analyzer) spinFindings() []Finding {
	var out []Finding
	span := a.last.Sub(a.first)
	names := make([]string, 0, len(a.spins)+2)
	for n := range a.spins {
		names = append(names, n)
	}
	for _, n := range []string{"cache:nextN-null"} {
		if _, ok := a.spins[n]; !ok && a.declared[n] > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		s := a.spins[n]
		total, maxPS := 0, 0
		var ref Ref
		var at time.Time
		if s != nil {
			total, maxPS, ref, at = s.total, s.maxPerSec, s.ref, s.maxAt
		}
		decl := a.declared[n]
		if n == "consume-result" {
			decl = 0 // the declared count includes productive results
		}
		switch {
		case maxPS >= SpinRate:
			out = append(out, Finding{Rule: RuleHotSpin, Severity: SevWarn, Partition: AllPartitions,
				Message:  fmt.Sprintf("%s: %d per second at %s (%d in all): the client spins on an empty cache or fetch", n, maxPS, clock(at), total),
				Facts:    map[string]string{"name": n, "max_per_second": strconv.Itoa(maxPS), "total": strconv.Itoa(total)},
				Evidence: []Evidence{{ref, n}}})
		case decl > total && span > 0 && float64(decl)/span.Seconds() >= SpinRate:
			rate := float64(decl) / span.Seconds()
			out = append(out, Finding{Rule: RuleHotSpin, Severity: SevWarn, Partition: AllPartitions,
				Message:  fmt.Sprintf("%s: %d in all, ≈%.0f per second on average over the trace's %s: the client spins on an empty cache or fetch", n, decl, rate, span.Round(time.Second)),
				Facts:    map[string]string{"name": n, "avg_per_second": strconv.FormatFloat(rate, 'f', 0, 64), "total": strconv.Itoa(decl)},
				Evidence: []Evidence{{a.counterRefs[n], fmt.Sprintf("%s %d", n, decl)}}})
		}
	}
	return out
}
