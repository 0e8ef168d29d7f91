// Package inspect answers, for one consumer group, "which records did the group commit
// past without the application ever processing them?" from three facts: the group's
// committed offsets (with log start, last stable offset and high watermark), what the
// application says it delivered (package evidence), and what each offset of the
// partition actually holds, read from the partition (Scan). Judge is a pure function of
// those facts; Cluster is the small interface to Kafka, implemented with franz-go in
// kafka.go.
//
// What it deliberately does not do: it never moves offsets or writes to the cluster, it
// does not assume which offsets hold records from offset arithmetic (markers, aborted
// transactions and compaction all take offsets), and it parses no flags and prints
// nothing. Its reasons and errors are shown to operators as they are, so they name the
// kstranded flag that changes the outcome (--max-scan, --topic, --timeout).
package inspect

import (
	"context"
	"fmt"
	"sort"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/judge"
)

// Offsets is the offsets view of one partition.
type Offsets struct {
	Topic     string
	Partition int32
	// Committed is the group's committed offset, -1 when the group has none.
	Committed      int64
	CommittedEpoch int32
	Metadata       string
	LogStart       int64
	LastStable     int64
	HighWatermark  int64
	Owner          string // member ID of the member assigned the partition
	Err            string // why the partition could not be read
}

// Lag is measured to the last stable offset: what a read_committed consumer can still
// reach. Counting to the high watermark would count transaction markers (and open
// transactions) as lag: a caught-up transactional consumer would show lag 1. It is -1
// when the group has no committed offset.
func (o Offsets) Lag() int64 {
	if o.Committed < 0 || o.Err != "" {
		return -1
	}
	return max(0, o.LastStable-o.Committed)
}

// Note is a run of undelivered offsets that hold no deliverable record, or a piece of
// evidence that contradicts the partition.
type Note = judge.Note

// Judgement is the verdict on one partition: the judge's, with the window inspect read.
type Judgement struct {
	judge.Judgement
	ScanFrom      int64
	ScanTo        int64 // exclusive
	ScanTruncated bool
}

// ScanWindow returns the offsets that must be read from the partition to judge it: from
// the lowest undelivered offset at or after the log start, up to the last stable offset
// (what a read_committed consumer can reach), at most maxScan offsets. ok is false when
// nothing needs reading.
func ScanWindow(o Offsets, ev *evidence.Partition, maxScan int64) (from, to int64, truncated, ok bool) {
	var delivered []kpart.Range
	if ev != nil {
		delivered = ev.Delivered
	}
	return Window(o, delivered, maxScan)
}

// Window is ScanWindow over delivered offsets (sorted, disjoint ranges).
func Window(o Offsets, delivered []kpart.Range, maxScan int64) (from, to int64, truncated, ok bool) {
	from = o.LogStart
	i := sort.Search(len(delivered), func(i int) bool { return delivered[i].Last >= from })
	for ; i < len(delivered) && delivered[i].First <= from; i++ {
		from = delivered[i].Last + 1
	}
	to = o.LastStable
	if from >= to {
		return from, from, false, false
	}
	if maxScan > 0 && to-from > maxScan {
		return from, from + maxScan, true, true
	}
	return from, to, false, true
}

// Input is what the judge is told of one partition by the group's offsets, the delivery
// evidence (ev nil: the evidence names no delivery on this partition, which it covers)
// and the read of the partition (sc nil: nothing needed reading).
func Input(o Offsets, ev *evidence.Partition, sc *Scan, source string) judge.Input {
	in := judge.Input{Topic: o.Topic, Partition: o.Partition, From: judge.Unknown,
		LogStart: o.LogStart, LastStable: o.LastStable, HighWatermark: o.HighWatermark, Err: o.Err,
		Commit:     judge.Commit{Known: true, Offset: o.Committed, Peak: judge.Unknown, Source: "the group's committed offsets"},
		Deliveries: &judge.Deliveries{Ranges: []kpart.Range{}, Source: source}}
	if ev != nil {
		in.Deliveries.Ranges, in.Deliveries.Duplicates = ev.Delivered, ev.Duplicates
	}
	if sc != nil {
		in.Contents = judge.Contents{Spans: sc.Spans, Source: fmt.Sprintf("a read of the partition (offsets %d-%d)", sc.From, sc.To-1),
			Truncated: sc.Truncated, TruncatedAt: sc.To, Why: "--max-scan"}
	}
	return in
}

// Read is what the cluster says of one partition for the judge: the offsets, and a read
// of what the offsets in the window the judgement needs hold (Window over delivered),
// the partition judged as far as the read went when it fails.
func Read(ctx context.Context, cl Cluster, o Offsets, delivered []kpart.Range, maxScan int64) (Offsets, *Scan) {
	if o.Err != "" {
		return o, nil
	}
	from, to, trunc, need := Window(o, delivered, maxScan)
	if !need {
		return o, nil
	}
	sc, err := cl.Scan(ctx, o.Topic, o.Partition, from, to)
	if err != nil {
		o.Err = fmt.Sprintf("scan of offsets %d-%d failed: %v", from, to-1, err)
		return o, sc
	}
	sc.Truncated = trunc
	return o, sc
}

// Judge decides one partition through the one judge (package judge).
func Judge(o Offsets, ev *evidence.Partition, sc *Scan) Judgement {
	return JudgeFrom(o, ev, sc, "")
}

// JudgeFrom is Judge naming the delivery evidence's source in the basis.
func JudgeFrom(o Offsets, ev *evidence.Partition, sc *Scan, source string) Judgement {
	j := Judgement{Judgement: judge.Judge(Input(o, ev, sc, source))}
	if sc != nil {
		j.ScanFrom, j.ScanTo, j.ScanTruncated = sc.From, sc.To, sc.Truncated
	}
	return j
}
