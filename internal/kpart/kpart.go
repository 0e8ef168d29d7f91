// Package kpart is kstranded's vocabulary for Kafka identity and offsets: a topic
// partition, an inclusive range of offsets, a range that counts the records it holds,
// and a sorted set of ranges. Every other package names partitions and ranges with
// these types, sorts partitions with Sort and prints offsets and ranges with the
// helpers here, so one notation ("82-199", "-" for none) holds across commands.
//
// It is a leaf: it imports nothing of kstranded and knows nothing of Kafka clients.
package kpart

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// Compare orders by topic, then partition.
func Compare(a, b TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// Sort sorts by topic, then partition.
func Sort(tps []TopicPartition) { slices.SortFunc(tps, Compare) }

// Range is an inclusive run of offsets of one partition.
type Range struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// Len is the number of offsets in r.
func (r Range) Len() int64 { return r.Last - r.First + 1 }

// String prints "82-199", or "82" for a single offset.
func (r Range) String() string {
	if r.First == r.Last {
		return strconv.FormatInt(r.First, 10)
	}
	return strconv.FormatInt(r.First, 10) + "-" + strconv.FormatInt(r.Last, 10)
}

// RecordRange is a Range holding Count records of interest: Count is less than Len when
// transaction markers, aborted or absent offsets lie inside.
type RecordRange struct {
	Range
	Count int64 `json:"count"`
}

// Runs groups offsets into runs of consecutive offsets (numeric runs: any gap splits a
// run). offs need not be sorted; duplicates are ignored.
func Runs(offs []int64) []RecordRange {
	s := slices.Clone(offs)
	slices.Sort(s)
	s = slices.Compact(s)
	var out []RecordRange
	for _, o := range s {
		if n := len(out); n > 0 && out[n-1].Last+1 == o {
			out[n-1].Last = o
			out[n-1].Count++
			continue
		}
		out = append(out, RecordRange{Range{o, o}, 1})
	}
	return out
}

// RunsIn groups sorted offsets into ranges that are contiguous in the partition's record
// sequence records (sorted): an offset between two records that is not itself a record
// (a transaction marker, an aborted record) does not split a range.
func RunsIn(offs, records []int64) []RecordRange {
	if len(offs) == 0 {
		return nil
	}
	next := make(map[int64]int64, len(records)) // record -> following record
	for i := 0; i+1 < len(records); i++ {
		next[records[i]] = records[i+1]
	}
	var out []RecordRange
	cur := RecordRange{Range{offs[0], offs[0]}, 1}
	for _, o := range offs[1:] {
		if next[cur.Last] == o {
			cur.Last = o
			cur.Count++
			continue
		}
		out = append(out, cur)
		cur = RecordRange{Range{o, o}, 1}
	}
	return append(out, cur)
}

// Total is the number of records in rs.
func Total(rs []RecordRange) int64 {
	var n int64
	for _, r := range rs {
		n += r.Count
	}
	return n
}

// Join prints ranges as "82-199,201", or "-" when there are none.
func Join[R fmt.Stringer](rs []R) string {
	if len(rs) == 0 {
		return "-"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// OffsetText prints an offset, or "-" for none (a negative offset: Kafka's -1).
func OffsetText(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}

// Counted returns the RecordRange [first, last] holding count records.
func Counted(first, last, count int64) RecordRange {
	return RecordRange{Range{First: first, Last: last}, count}
}

// OffsetWord is OffsetText for prose: "none" for no offset.
func OffsetWord(o int64) string {
	if o < 0 {
		return "none"
	}
	return strconv.FormatInt(o, 10)
}

// RunsOf is rs as RecordRanges that hold every offset they cover (Runs of the offsets
// of a RangeSet).
func RunsOf(rs RangeSet) []RecordRange {
	if rs == nil {
		return nil
	}
	out := make([]RecordRange, len(rs))
	for i, r := range rs {
		out[i] = RecordRange{r, r.Len()}
	}
	return out
}
