package repro

import (
	"sort"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/traceevent"
)

// PartitionVerdict is the judgement of one partition.
type PartitionVerdict struct {
	Records    int                // offsets that hold a deliverable record (from the producer's acks)
	Delivered  int                // distinct records delivered
	Duplicates int                // deliveries beyond the first
	Lost       []traceevent.Range // records below committed, never delivered
	Stranded   []traceevent.Range // records at or above committed, never delivered
	Verdict    verdict.Verdict
}

// LostCount is the number of lost records.
func (v PartitionVerdict) LostCount() int { return countRanges(v.Lost) }

// StrandedCount is the number of stranded records.
func (v PartitionVerdict) StrandedCount() int { return countRanges(v.Stranded) }

// Judge compares what a partition holds with what was delivered and committed.
// records are the offsets that hold deliverable records: the evidence comes from the
// producer's delivery reports, never from offset arithmetic, so a transaction marker
// (which takes an offset but is not a record) is never counted as lost.
func Judge(partition int32, records []int64, delivered map[int64]int, committed int64) PartitionVerdict {
	rs := append([]int64(nil), records...)
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	v := PartitionVerdict{Records: len(rs)}
	isRecord := make(map[int64]bool, len(rs))
	for _, o := range rs {
		isRecord[o] = true
	}
	for o, n := range delivered {
		if n > 0 && isRecord[o] {
			v.Delivered++
		}
		if n > 1 {
			v.Duplicates += n - 1
		}
	}
	var lost, stranded []int64
	for _, o := range rs {
		if delivered[o] > 0 {
			continue
		}
		if o < committed {
			lost = append(lost, o)
		} else {
			stranded = append(stranded, o)
		}
	}
	v.Lost = traceevent.InPartition(partition, kpart.RunsIn(lost, rs))
	v.Stranded = traceevent.InPartition(partition, kpart.RunsIn(stranded, rs))
	switch {
	case len(lost) > 0:
		v.Verdict = verdict.Lost
	case len(stranded) > 0:
		v.Verdict = verdict.Stranded
	default:
		v.Verdict = verdict.OK
	}
	return v
}

func countRanges(rs []traceevent.Range) int {
	n := 0
	for _, r := range rs {
		n += int(r.Count)
	}
	return n
}
