package repro

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// ConsumeResult is what `repro consume` saw.
type ConsumeResult struct {
	Topic       string
	Group       string
	Policy      eachbatch.Policy
	Partitions  []ConsumedPartition
	Elapsed     time.Duration
	Quiescent   bool
	Interrupted bool
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
	High       int64
	// Fetched records never delivered, split at the committed offset: below it they are
	// lost (committed past), at or after it stranded (not delivered, not committed
	// past; with --until-quiescent nothing was left to deliver them).
	Lost     kpart.RangeSet
	Stranded kpart.RangeSet
	Verdict  verdict.Verdict
}

// Consume runs only the model consumer against data already in o.Topic, in group
// o.Group, until ctx ends or, with untilQuiescent, until nothing is left to deliver and
// the committed offsets caught up with the stored ones.
func Consume(ctx context.Context, o Options, untilQuiescent bool) (*ConsumeResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Kafka.Brokers == "" || o.Group == "" {
		return nil, errors.New("consume needs --brokers and --group")
	}
	start := time.Now()
	lp := loop.NewReal()
	now := func() (time.Time, float64) {
		return time.Now().UTC(), float64(lp.Elapsed()) / float64(time.Millisecond)
	}
	trace := o.Trace.Write
	ev := traceevent.Event{Ev: traceevent.Run, Schema: traceevent.Schema, Topic: o.Topic, Group: o.Group,
		Policy: string(o.Policy), Commit: string(o.Commit), Settings: o.settingsMap()}
	ev.Time, ev.AtMs = now()
	trace(ev)
	onEmbedded := false
	if id, err := ClusterID(ctx, o.Kafka, o.Timeout); err != nil {
		return nil, err
	} else if id == embedded.ClusterID {
		onEmbedded = true // `kstranded broker`: kfake needs a short fetch wait
	}
	src, err := newRDSource(o.Kafka, consumerProps(o, o.Group, onEmbedded), o.Topic, trace, now)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = src.close(o.Timeout)
		}
	}()
	if err := src.waitAssigned(ctx, o.Kafka.Brokers, o.Timeout); err != nil {
		return nil, err
	}
	highs := map[int32]int64{}
	// Where the group starts on each partition: its committed offset, else the log start.
	// A partition with offsets in [start, high watermark) is listed whatever happens.
	startAt, _ := src.committed(o.Timeout)
	withData := map[int32]bool{}
	for _, tp := range src.assignment {
		low, high, err := src.c.QueryWatermarkOffsets(tp.Topic, tp.Partition, int(o.Timeout/time.Millisecond))
		start := low
		if c, ok := startAt[tp]; ok && c >= 0 {
			start = c
		}
		if high > start {
			withData[tp.Partition] = true
		}
		if err != nil {
			return nil, fmt.Errorf("watermarks of %s: %w", tp, err)
		}
		src.expect[tp] = high
		highs[tp.Partition] = high
	}
	total := int64(0)
	for _, h := range highs {
		total += h
	}
	o.Workload = workload.Spec{Parts: []workload.Part{{Records: int(total)}}} // bounds the derived phase timeout
	eng, err := eachbatch.New(lp, src, o.EngineSettings(), trace)
	if err != nil {
		return nil, err
	}
	// Rebalances from here on go through the engine's #rebalanceCallback, as in repro.
	src.onRebalance = eng.RebalanceCallback
	fetched := map[int32]*kpart.RangeSet{}
	prev := eng.OnFetch
	eng.OnFetch = func(recs []eachbatch.Record) {
		if prev != nil {
			prev(recs)
		}
		for _, r := range recs {
			if r.Topic != o.Topic {
				continue
			}
			rs := fetched[r.Partition]
			if rs == nil {
				rs = &kpart.RangeSet{}
				fetched[r.Partition] = rs
			}
			rs.Add(r.Offset, r.Offset)
		}
	}
	lp.Post(eng.Start)
	res := &ConsumeResult{Topic: o.Topic, Group: o.Group, Policy: o.Policy}
	var runErr error
	committed := map[kpart.TopicPartition]int64{}
	if untilQuiescent {
		members := []*consumer{{src: src, eng: eng}}
		committed, runErr = o.settle(ctx, lp, func() []*consumer { return members }, nil, eng.Stored)
		res.Quiescent = runErr == nil
	} else {
		runErr = lp.Run(ctx, func() bool { return src.fatal != nil })
		if src.fatal != nil {
			runErr = src.fatal
		}
	}
	if runErr != nil && ctx.Err() != nil {
		res.Interrupted = true
		if !untilQuiescent {
			runErr = nil // interruption is how a plain consume ends
		}
	}
	// Stop admitting, let a batch in flight finish within the grace period, then read
	// what is committed (librdkafka commits what is stored when it closes).
	drain(lp, eng, o.Grace)
	eng.FlushTrace()
	// The committed offsets reported are read back after the consumer closed: closing
	// commits what is stored (auto-commit), so a read before it shows an offset lower
	// than the group's real one (issue 16 §1).
	closed = true
	if err := src.close(o.Timeout); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	if c, err := GroupCommitted(context.WithoutCancel(ctx), o.Kafka, o.Group, o.Topic, o.Timeout); err == nil {
		committed = c
	} else {
		res.Warnings = append(res.Warnings, fmt.Sprintf("committed offsets not read back after close: %v", err))
		res.CommitUnknown = true
	}
	del := eng.Delivered()
	parts := map[int32]bool{}
	for p := range withData {
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
		tp := kpart.TopicPartition{Topic: o.Topic, Partition: p}
		cp := ConsumedPartition{Partition: p, Committed: -1, High: highs[p]}
		if c, ok := committed[tp]; ok {
			cp.Committed = c
		}
		offs := make([]int64, 0, len(del[tp]))
		for off, n := range del[tp] {
			offs = append(offs, off)
			cp.Duplicates += n - 1
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		cp.Delivered = len(offs)
		cp.Ranges = traceevent.InPartition(p, kpart.Runs(offs))
		// the one judge: what the consumer fetched is what is known to hold records
		// (the rest of the partition it did not read); the commit is known only when
		// it was read back
		var dels kpart.RangeSet
		for _, r := range kpart.Runs(offs) {
			dels.Add(r.First, r.Last)
		}
		c, known := committed[tp]
		in := judge.Input{Topic: o.Topic, Partition: p, From: judge.Unknown, LogStart: judge.Unknown, LastStable: judge.Unknown, HighWatermark: judge.Unknown,
			Deliveries: &judge.Deliveries{Ranges: dels, Duplicates: int64(cp.Duplicates), Source: "the model consumer's deliveries"},
			Commit:     judge.Commit{Known: known, Offset: c, Peak: judge.Unknown, Source: "the group's committed offsets, read back"}}
		if f := fetched[p]; f != nil && len(*f) > 0 {
			in.From = (*f)[0].First
			for _, r := range *f {
				in.Contents.Spans = append(in.Contents.Spans, judge.Span{First: r.First, Last: r.Last, Kind: judge.Record})
			}
			in.Contents.Source = "the records the consumer fetched"
		} else if len(dels) > 0 {
			in.From = dels[0].First
		}
		j := judge.Judge(in)
		cp.Verdict = j.Verdict
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
		}
		res.Partitions = append(res.Partitions, cp)
	}
	sort.Slice(res.Partitions, func(i, j int) bool { return res.Partitions[i].Partition < res.Partitions[j].Partition })
	res.Elapsed = time.Since(start)
	res.Verdict = verdict.OK
	judged := false
	for _, p := range res.Partitions {
		res.Verdict = verdict.Worse(res.Verdict, p.Verdict)
		judged = judged || p.Verdict.Judged()
	}
	if !judged && len(res.Partitions) > 0 {
		res.Verdict = verdict.Worse(res.Verdict, verdict.NoEvidence)
	}
	return res, runErr
}
