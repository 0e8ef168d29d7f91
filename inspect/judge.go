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
	"fmt"
	"sort"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
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
type Note struct {
	First int64
	Last  int64
	What  string
}

// Judgement is the verdict on one partition.
type Judgement struct {
	Delivered     int64
	Duplicates    int64
	Lost          []kpart.RecordRange
	LostCount     int64
	Stranded      []kpart.RecordRange
	StrandedCount int64
	// Unrecoverable lists offsets never delivered that were deleted since (retention or
	// DeleteRecords moved the log start past them): below the log start nothing can be
	// re-read, so no rewind restores them. The evidence brackets them: they lie between
	// its first delivered offset and the log start. Their count is of offsets, not
	// records: once deleted, a record cannot be told from a transaction marker. It is a
	// count beside LOST, not a verdict word (a partition can hold both, and any of them
	// makes the partition LOST).
	Unrecoverable      []kpart.RecordRange
	UnrecoverableCount int64
	// SafeRewind is the first lost record: committing it makes the group re-deliver
	// everything lost (and what was delivered after it).
	SafeRewind *int64
	// NotDeliverable lists the undelivered offsets in the scanned range that hold no
	// deliverable record (markers, aborted records, absent offsets): not lost.
	NotDeliverable []Note
	// InvalidEvidence: delivered offsets beyond the high watermark, or on offsets that
	// hold no deliverable record.
	InvalidEvidence []Note
	ScanFrom        int64
	ScanTo          int64 // exclusive
	ScanTruncated   bool
	Verdict         verdict.Verdict
	Reason          string
}

// ScanWindow returns the offsets that must be read from the partition to judge it: from
// the lowest undelivered offset at or after the log start, up to the last stable offset
// (what a read_committed consumer can reach), at most maxScan offsets. ok is false when
// nothing needs reading.
func ScanWindow(o Offsets, ev *evidence.Partition, maxScan int64) (from, to int64, truncated, ok bool) {
	from = o.LogStart
	if ev != nil {
		i := sort.Search(len(ev.Delivered), func(i int) bool { return ev.Delivered[i].Last >= from })
		for ; i < len(ev.Delivered) && ev.Delivered[i].First <= from; i++ {
			from = ev.Delivered[i].Last + 1
		}
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

// Judge decides one partition. ev is nil when the evidence covers the topic but names no
// delivery on this partition; sc is nil when ScanWindow said nothing needed reading.
func Judge(o Offsets, ev *evidence.Partition, sc *Scan) Judgement {
	j := Judgement{Lost: []kpart.RecordRange{}, Stranded: []kpart.RecordRange{}, NotDeliverable: []Note{}, InvalidEvidence: []Note{}, Unrecoverable: []kpart.RecordRange{}}
	j.Unrecoverable, j.UnrecoverableCount = unrecoverable(o, ev)
	if ev != nil {
		j.Delivered, j.Duplicates = ev.Count, ev.Duplicates
		// Evidence beyond the high watermark names records that do not exist.
		for _, iv := range ev.Delivered {
			if iv.Last >= o.HighWatermark {
				first := max(iv.First, o.HighWatermark)
				j.InvalidEvidence = append(j.InvalidEvidence, Note{first, iv.Last, fmt.Sprintf("delivered offsets at or beyond the high watermark %d", o.HighWatermark)})
			}
		}
	}
	committed := o.Committed
	if committed < 0 {
		committed = o.LogStart // no commit: nothing committed past
	}
	if sc != nil {
		j.ScanFrom, j.ScanTo, j.ScanTruncated = sc.From, sc.To, sc.Truncated
		var lost, stranded *kpart.RecordRange
		closeRuns := func() {
			if lost != nil {
				j.Lost = append(j.Lost, *lost)
				lost = nil
			}
			if stranded != nil {
				j.Stranded = append(j.Stranded, *stranded)
				stranded = nil
			}
		}
		addRecords := func(first, last int64) {
			// split at the committed offset
			if first < committed {
				l := min(last, committed-1)
				if lost == nil {
					lost = &kpart.RecordRange{Range: kpart.Range{First: first}}
				}
				lost.Last, lost.Count = l, lost.Count+l-first+1
				j.LostCount += l - first + 1
				first = l + 1
			}
			if first <= last {
				if lost != nil {
					j.Lost = append(j.Lost, *lost)
					lost = nil
				}
				if stranded == nil {
					stranded = &kpart.RecordRange{Range: kpart.Range{First: first}}
				}
				stranded.Last, stranded.Count = last, stranded.Count+last-first+1
				j.StrandedCount += last - first + 1
			}
		}
		for _, s := range sc.Spans {
			forEachPiece(s.First, s.Last, ev, func(first, last int64, delivered bool) {
				switch {
				case delivered && s.Kind.Deliverable():
					closeRuns()
				case delivered:
					closeRuns()
					j.InvalidEvidence = append(j.InvalidEvidence, Note{first, last, "delivered, but the partition holds " + article(s.Kind) + " there"})
				case s.Kind.Deliverable():
					addRecords(first, last)
				default:
					j.NotDeliverable = appendNote(j.NotDeliverable, Note{first, last, s.Kind.String()})
				}
			})
		}
		closeRuns()
	}
	if len(j.Lost) > 0 {
		j.SafeRewind = &j.Lost[0].First
	}
	switch {
	case o.Err != "":
		j.Verdict, j.Reason = verdict.Error, o.Err
	case j.LostCount > 0 || j.UnrecoverableCount > 0:
		j.Verdict = verdict.Lost
		if sc != nil && sc.Truncated && sc.To < committed {
			j.Reason = fmt.Sprintf("scan stopped at offset %d (--max-scan); more may be lost below the committed offset %d", sc.To, committed)
		}
	case sc != nil && sc.Truncated && sc.To < committed:
		j.Verdict = verdict.Incomplete
		j.Reason = fmt.Sprintf("scan stopped at offset %d (--max-scan) below the committed offset %d", sc.To, committed)
	case j.StrandedCount > 0:
		j.Verdict = verdict.Stranded
	case sc != nil && sc.Truncated:
		j.Verdict = verdict.OK
		j.Reason = fmt.Sprintf("nothing lost; stranded records counted up to offset %d only (--max-scan)", sc.To)
	default:
		j.Verdict = verdict.OK
	}
	if o.Committed > o.LastStable && o.Err == "" {
		note := fmt.Sprintf("committed offset %d is past the last stable offset %d (open transactions are not judged)", o.Committed, o.LastStable)
		if j.Reason != "" {
			note = j.Reason + "; " + note
		}
		j.Reason = note
	}
	return j
}

// unrecoverable returns the undelivered offsets from the evidence's first delivered
// offset up to the log start: deleted before anyone read them.
func unrecoverable(o Offsets, ev *evidence.Partition) ([]kpart.RecordRange, int64) {
	out := []kpart.RecordRange{}
	if ev == nil || len(ev.Delivered) == 0 || o.Err != "" || o.LogStart <= ev.Delivered[0].First {
		return out, 0
	}
	var n int64
	forEachPiece(ev.Delivered[0].First, o.LogStart-1, ev, func(first, last int64, delivered bool) {
		if !delivered {
			out = append(out, kpart.Counted(first, last, last-first+1))
			n += last - first + 1
		}
	})
	return out, n
}

func article(k Kind) string {
	switch k {
	case Aborted, Absent:
		return "an " + k.String()
	}
	return "a " + k.String()
}

func appendNote(ns []Note, n Note) []Note {
	if l := len(ns); l > 0 && ns[l-1].What == n.What && ns[l-1].Last+1 == n.First {
		ns[l-1].Last = n.Last
		return ns
	}
	return append(ns, n)
}

// forEachPiece splits [first, last] into maximal pieces that are wholly delivered or
// wholly undelivered according to ev, in order.
func forEachPiece(first, last int64, ev *evidence.Partition, fn func(first, last int64, delivered bool)) {
	if ev == nil {
		fn(first, last, false)
		return
	}
	d := ev.Delivered
	i := sort.Search(len(d), func(i int) bool { return d[i].Last >= first })
	at := first
	for at <= last {
		if i >= len(d) || d[i].First > last {
			fn(at, last, false)
			return
		}
		if d[i].First > at {
			fn(at, d[i].First-1, false)
			at = d[i].First
		}
		end := min(d[i].Last, last)
		fn(at, end, true)
		at = end + 1
		i++
	}
}
