package repro

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// ConsumeResult is what `repro consume` saw.
type ConsumeResult struct {
	Topic      string
	Group      string
	Policy     eachbatch.Policy
	Commit     CommitMode
	Partitions []ConsumedPartition
	// ExistingGroup: the group had committed offsets before this run (it was not made
	// by it; --use-existing-group); StartCommitted per partition says where it stood.
	ExistingGroup bool
	Elapsed       time.Duration
	Quiescent     bool
	Interrupted   bool
	// Verdict is the worst partition verdict, judged on the records the consumer
	// fetched (librdkafka hands no control records): OK, STRANDED or LOST.
	Verdict verdict.Verdict
	// CommitUnknown: the committed offsets could not be read back after the consumer
	// closed; the ones shown are from before, and the verdict cannot be trusted.
	CommitUnknown bool
	Warnings      []string
}

// ConsumedPartition is one partition's deliveries.
type ConsumedPartition struct {
	Partition  int32
	Delivered  int
	Duplicates int
	Ranges     []traceevent.Range // delivered offsets
	Committed  int64              // -1: none
	// StartCommitted is the group's committed offset when the consumer was assigned the
	// partition (-1: none): where this run started, and what its commits moved on from.
	StartCommitted int64
	High           int64
	// Fetched records never delivered, split at the committed offset: below it they are
	// lost (committed past), at or after it stranded (not delivered, not committed
	// past; with --until-quiescent nothing was left to deliver them).
	Lost     kpart.RangeSet
	Stranded kpart.RangeSet
	Verdict  verdict.Verdict
	// Judgement is the one judge's answer (package judge).
	Judgement judge.Judgement
}

// Consume runs only the model consumer against data already in o.Topic, in group
// o.Group, until ctx ends or, with untilQuiescent, until nothing is left to deliver and
// the committed offsets caught up with what the commit mode commits: the stored offsets
// (--commit auto, librdkafka's auto-commit) or the ledger's frontier, the completed
// prefix (--commit ledger: auto-commit off, the frontier committed at the auto-commit
// interval and when the consumer stops). existing says the group had committed offsets
// before the run (ExistingGroup); the caller decided it may run there.
//
// It is the scenario driver on the live cluster with the scenario off: no workload
// produced, one consumer, and one phase, the settle (untilQuiescent) or the run until
// ctx ends or the broker stops answering; the driver stops the consumer, and the
// committed offsets read back after it closed are judged per partition.
func Consume(ctx context.Context, o Options, untilQuiescent, existing bool) (*ConsumeResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Kafka.Brokers == "" || o.Group == "" {
		return nil, errors.New("consume needs --brokers and --group")
	}
	o.Members, o.RebalanceAt = 0, nil // one consumer, no membership steps
	start := time.Now()
	d := newDriver(ctx, o, loop.NewReal(), o.Topic, o.Group, &Result{}, o.Trace.Write)
	lc := &liveCluster{o: o, ctx: ctx, cfg: o.Kafka, topic: o.Topic, group: o.Group, began: start, d: d,
		consumed: &consumed{withData: map[int32]bool{}, fetched: map[int32]*kpart.RangeSet{}}}
	d.cl = lc
	if id, err := ClusterID(ctx, o.Kafka, o.Timeout); err != nil {
		return nil, err
	} else if id == embedded.ClusterID {
		lc.kfake = true // `kstranded broker`: kfake needs a short fetch wait
	}
	if err := d.startConsumer(); err != nil {
		// a broker that died as the consumer joined ends the wait for an assignment
		// (issue 27 §5): that error names the unreachable broker too
		d.res.unreachable = errors.Is(err, ErrUnreachable) || ctx.Err() == nil && lc.silent(d)
		err = unreachableErr(d, err)
		d.stopConsumer()
		return nil, err
	}
	lc.consumed.follow(d.members[0].eng, o.Topic)
	res := &ConsumeResult{Topic: o.Topic, Group: o.Group, Policy: o.Policy, Commit: o.Commit, ExistingGroup: existing}
	var runErr error
	if untilQuiescent {
		_, runErr = lc.settle(d, 1, nil)
		res.Quiescent = runErr == nil
	} else {
		runErr = lc.untilStopped(d)
	}
	if runErr != nil && ctx.Err() != nil {
		res.Interrupted = true
		if !untilQuiescent {
			runErr = nil // interruption is how a plain consume ends
		}
	}
	// The driver's stop: after a broker that stopped answering (or an interrupt while
	// it was silent) with no grace for a batch in flight and a bounded close, so that
	// the run ends within about --timeout of the broker's last answer (a batch of the
	// --until-quiescent run at --time-scale 0.05 held the exit 9 s past the broker's
	// death, beyond --timeout 6s, in CI). The committed offsets reported are read back
	// after the consumer closed, within the same bound: closing commits what is stored
	// (auto-commit), so a read before it shows an offset lower than the group's real
	// one (issue 16 §1); that read is shown only when the read-back failed.
	current := d.stop(runErr)
	res.Warnings = d.res.Warnings
	committed, err := GroupCommitted(context.WithoutCancel(ctx), o.Kafka, o.Group, o.Topic, d.res.cleanup(o.Timeout))
	if err != nil {
		committed = current
		res.Warnings = append(res.Warnings, fmt.Sprintf("committed offsets not read back after close: %v", err))
		res.CommitUnknown = true
	}
	lc.consumed.judge(res, d.allDelivered(), committed, d.highs)
	res.Elapsed = lc.elapsed()
	return res, runErr
}

// consumed is what `repro consume` knows of the data it consumes: where the group
// stood on each partition when the consumer was assigned it, which partitions held
// records from there, and which offsets the consumer fetched.
type consumed struct {
	startAt  map[kpart.TopicPartition]int64 // the group's committed offsets at assignment
	withData map[int32]bool                 // offsets in [start, high watermark)
	fetched  map[int32]*kpart.RangeSet
}

// readStart reads, once the consumer is assigned, where the group starts on each
// partition (its committed offset, else the log start) and the high watermarks (into
// the driver's highs, which bound what the consumer expects). The reads share one
// --timeout: a broker that dies as the consumer is assigned ends the run within it, as
// unreachable (the clean-up is then bounded by a second).
func (c *liveCluster) readStart(src *rdSource) error {
	startup := time.Now()
	budget := func() time.Duration { return max(c.o.Timeout-time.Since(startup), 100*time.Millisecond) }
	c.consumed.startAt, _ = src.committed(budget())
	total := int64(0)
	for _, tp := range src.assignment {
		low, high, err := src.c.QueryWatermarkOffsets(tp.Topic, tp.Partition, int(budget()/time.Millisecond))
		if err != nil {
			if ke, ok := err.(kafka.Error); ok && (ke.Code() == kafka.ErrTimedOutQueue || ke.Code() == kafka.ErrTimedOut || ke.Code() == kafka.ErrTransport) {
				return fmt.Errorf("%w: watermarks of %s: %v", ErrUnreachable, tp, err)
			}
			return fmt.Errorf("watermarks of %s: %w", tp, err)
		}
		from := low
		if off, ok := c.consumed.startAt[tp]; ok && off >= 0 {
			from = off
		}
		if high > from {
			c.consumed.withData[tp.Partition] = true
		}
		c.d.highs[tp.Partition] = high
		total += high
	}
	// the records there bound the derived phase timeout
	c.o.Workload = workload.Spec{Parts: []workload.Part{{Records: int(total)}}}
	c.d.o.Workload = c.o.Workload
	return nil
}

// follow records the offsets eng fetches on topic.
func (cs *consumed) follow(eng *eachbatch.Engine, topic string) {
	prev := eng.OnFetch
	eng.OnFetch = func(recs []eachbatch.Record) {
		if prev != nil {
			prev(recs)
		}
		for _, r := range recs {
			if r.Topic != topic {
				continue
			}
			rs := cs.fetched[r.Partition]
			if rs == nil {
				rs = &kpart.RangeSet{}
				cs.fetched[r.Partition] = rs
			}
			rs.Add(r.Offset, r.Offset)
		}
	}
}

// untilStopped is a plain consume's one phase: the loop runs until ctx ends, but not
// past a broker that stopped answering: the same watch as a phase's (no answer for
// half of --timeout ends the run).
func (c *liveCluster) untilStopped(d *driver) error {
	src := rd(d.members[0])
	var unreachable error
	check := c.o.checkEvery()
	var watch func()
	watch = func() {
		if unreachable = src.unreachable(c.o.unreachableAfter(), c.o.probeTimeout()); unreachable == nil {
			d.lp.After(check, watch)
		}
	}
	d.lp.After(check, watch)
	err := d.lp.Run(c.ctx, func() bool { return src.fatal != nil || unreachable != nil })
	switch {
	case src.fatal != nil:
		return src.fatal
	case unreachable != nil:
		return unreachable
	}
	return err
}

// judge judges each partition with the one judge into res: every partition with
// records to consume, a delivery or a committed offset. With res.CommitUnknown,
// committed is what was read before the consumer closed, if anything.
func (cs *consumed) judge(res *ConsumeResult, del map[kpart.TopicPartition]*kpart.Counts, committed map[kpart.TopicPartition]int64, highs map[int32]int64) {
	parts := map[int32]bool{}
	for p := range cs.withData {
		parts[p] = true
	}
	for tp := range del {
		parts[tp.Partition] = true
	}
	for tp, c := range committed {
		if c >= 0 {
			parts[tp.Partition] = true
		}
	}
	for p := range parts {
		res.Partitions = append(res.Partitions, cs.judgePartition(res, p, del, committed, highs[p]))
	}
	sort.Slice(res.Partitions, func(i, j int) bool { return res.Partitions[i].Partition < res.Partitions[j].Partition })
	res.Verdict = verdict.OK
	judged := false
	for _, p := range res.Partitions {
		res.Verdict = verdict.Worse(res.Verdict, p.Verdict)
		judged = judged || p.Verdict.Judged()
	}
	if !judged && len(res.Partitions) > 0 {
		res.Verdict = verdict.Worse(res.Verdict, verdict.NoEvidence)
	}
}

func (cs *consumed) judgePartition(res *ConsumeResult, p int32, del map[kpart.TopicPartition]*kpart.Counts, committed map[kpart.TopicPartition]int64, high int64) ConsumedPartition {
	tp := kpart.TopicPartition{Topic: res.Topic, Partition: p}
	cp := ConsumedPartition{Partition: p, Committed: -1, StartCommitted: -1, High: high}
	if c, ok := committed[tp]; ok {
		cp.Committed = c
	}
	if c, ok := cs.startAt[tp]; ok && c >= 0 {
		cp.StartCommitted = c
	}
	dels := judgedDeliveries(del[tp], "the model consumer's deliveries")
	cp.Delivered, cp.Duplicates = del[tp].Len(), int(dels.Duplicates)
	cp.Ranges = traceevent.InPartition(p, kpart.RunsOf(dels.Ranges))
	// the one judge: what the consumer fetched is what is known to hold records
	// (the rest of the partition it did not read); the commit is known only when
	// it was read back
	c, known := committed[tp]
	in := judge.Input{Topic: res.Topic, Partition: p, From: judge.Unknown, LogStart: judge.Unknown, LastStable: judge.Unknown, HighWatermark: judge.Unknown,
		Deliveries: dels, Commit: judge.Commit{Known: known, Offset: c, Peak: judge.Unknown, Source: "the group's committed offsets, read back"}}
	// the run speaks for what it consumed: from where the group stood when it was
	// assigned the partition (else its first fetch or delivery, else nothing)
	in.From = c
	if f := cs.fetched[p]; f != nil && len(*f) > 0 {
		in.From = (*f)[0].First
		for i, r := range *f {
			if i > 0 {
				// the fetcher went past these offsets without a record: nothing to deliver
				in.Contents.Spans = append(in.Contents.Spans, judge.Span{First: (*f)[i-1].Last + 1, Last: r.First - 1, Kind: judge.Skipped})
			}
			in.Contents.Spans = append(in.Contents.Spans, judge.Span{First: r.First, Last: r.Last, Kind: judge.Record})
		}
		in.Contents.Source = "the records the consumer fetched"
	} else if len(dels.Ranges) > 0 {
		in.From = dels.Ranges[0].First
	}
	if cp.StartCommitted >= 0 && (in.From < 0 || cp.StartCommitted < in.From) {
		in.From = cp.StartCommitted
	}
	j := judge.Judge(in)
	cp.Verdict, cp.Judgement = j.Verdict, j
	for _, r := range j.Lost {
		cp.Lost.Add(r.First, r.Last)
	}
	for _, r := range j.Stranded {
		cp.Stranded.Add(r.First, r.Last)
	}
	if res.CommitUnknown && j.Verdict != verdict.Lost {
		// a loss below a commit read earlier stands (auto-commit only moves
		// forward); anything else needs the final commit: no STRANDED without it
		cp.Verdict, cp.Stranded = verdict.NoCommitEvidence, nil
		cp.Judgement = judge.NotJudged(verdict.NoCommitEvidence, "the committed offsets were not read back after the consumer closed")
	}
	return cp
}

// GroupStart is what a group holds before `repro consume` joins it: its committed
// offsets on every topic (ExistingOffsets). A group with any is someone's progress: an
// application's, or an earlier run's. The model consumer in it starts at those offsets
// and commits its own deliveries over them, so the command layer refuses it unless the
// user says it may run there (--use-existing-group).
type GroupStart struct {
	Group string
	Topic string
	// Offsets are the group's committed offsets (>= 0 only), on every topic.
	Offsets map[kpart.TopicPartition]int64
}

// ExistingOffsets reads the committed offsets group holds, on every topic. A group the
// broker does not know holds none.
func ExistingOffsets(ctx context.Context, cfg kafkaconf.Config, group, topic string, timeout time.Duration) (GroupStart, error) {
	gs := GroupStart{Group: group, Topic: topic, Offsets: map[kpart.TopicPartition]int64{}}
	offs, err := GroupCommitted(ctx, cfg, group, "", timeout)
	if errors.Is(err, inspect.ErrGroupNotFound) {
		return gs, nil // kfake's answer for a group it never saw (Kafka's: no offsets)
	}
	if err != nil {
		return gs, fmt.Errorf("committed offsets of --group %s before the run: %w", group, err)
	}
	for tp, off := range offs {
		if off >= 0 {
			gs.Offsets[tp] = off
		}
	}
	return gs, nil
}

// Exists says whether the group holds committed offsets.
func (g GroupStart) Exists() bool { return len(g.Offsets) > 0 }

// OnTopic lists the committed offsets on g.Topic as "TOPIC/P=OFFSET", by partition, and
// how many partitions of other topics hold one.
func (g GroupStart) OnTopic() (string, int) {
	var tps []kpart.TopicPartition
	others := 0
	for tp := range g.Offsets {
		if tp.Topic == g.Topic {
			tps = append(tps, tp)
		} else {
			others++
		}
	}
	kpart.Sort(tps)
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = fmt.Sprintf("%s/%d=%d", tp.Topic, tp.Partition, g.Offsets[tp])
	}
	return strings.Join(parts, ","), others
}

// Describe says what the group holds and what a consume run in it would commit, for a
// refusal or, when the run goes ahead, a warning. "" when it holds nothing.
func (g GroupStart) Describe(commit CommitMode) string {
	if !g.Exists() {
		return ""
	}
	on, others := g.OnTopic()
	var held string
	switch {
	case on != "" && others > 0:
		held = fmt.Sprintf("%s, and %d partition(s) of other topics", on, others)
	case on != "":
		held = on
	default:
		held = fmt.Sprintf("none on %s, %d partition(s) of other topics", g.Topic, others)
	}
	what := "the offset after each record the model hands to its handler, by librdkafka's auto-commit"
	if commit == CommitLedger {
		what = "the ledger's frontier: the end of the prefix of records the model completed"
	}
	return fmt.Sprintf("--group %s already has committed offsets (%s): a run in it starts at them and commits its own progress over them (%s), up to the high watermark of %s, so the group's committed offsets move past records its own application never processed",
		g.Group, held, what, g.Topic)
}
