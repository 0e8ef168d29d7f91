package kpart

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// RangeSet is a sorted set of disjoint, non-adjacent ranges.
type RangeSet []Range

// Add inserts [first, last].
func (s *RangeSet) Add(first, last int64) {
	if last < first {
		return
	}
	rs := *s
	// fast path: appending in order (the common case for fetches and deliveries)
	if n := len(rs); n == 0 || first > rs[n-1].Last+1 {
		*s = append(rs, Range{First: first, Last: last})
		return
	} else if first >= rs[n-1].First {
		if last > rs[n-1].Last {
			rs[n-1].Last = last
		}
		return
	}
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Last+1 >= first })
	j := i
	for j < len(rs) && rs[j].First <= last+1 {
		if rs[j].First < first {
			first = rs[j].First
		}
		if rs[j].Last > last {
			last = rs[j].Last
		}
		j++
	}
	// in place: the ranges i..j-1 merge into one (no new slice per insert, which made
	// out-of-order inserts quadratic in allocation)
	*s = slices.Replace(rs, i, j, Range{First: first, Last: last})
}

// Normalize sorts rs and merges what overlaps or touches into a RangeSet (rs is
// reordered in place).
func Normalize(rs []Range) RangeSet {
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.First, b.First) })
	out := RangeSet{rs[0]}
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.First <= last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Contains reports whether o is in the set.
func (s RangeSet) Contains(o int64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].Last >= o })
	return i < len(s) && s[i].First <= o
}

// Minus returns s without the offsets in t. Both are sorted and disjoint, so one merge
// pass does it: linear in len(s)+len(t) (a trace of 10^6 ranges made the nested loop it
// replaced run for hours; issue 16 §7).
func (s RangeSet) Minus(t RangeSet) RangeSet {
	var out RangeSet
	j := 0
	for _, r := range s {
		cur := r.First
		for j < len(t) && t[j].Last < cur {
			j++ // t[j] ends before r and every later range of s
		}
		for k := j; k < len(t) && t[k].First <= r.Last; k++ {
			if t[k].First > cur {
				out = append(out, Range{First: cur, Last: t[k].First - 1})
			}
			if t[k].Last+1 > cur {
				cur = t[k].Last + 1
			}
			if cur > r.Last {
				break
			}
		}
		if cur <= r.Last {
			out = append(out, Range{First: cur, Last: r.Last})
		}
	}
	return out
}

// Below returns the offsets of s lower than bound.
func (s RangeSet) Below(bound int64) RangeSet {
	var out RangeSet
	for _, r := range s {
		if r.First >= bound {
			break
		}
		if r.Last >= bound {
			r.Last = bound - 1
		}
		out = append(out, r)
	}
	return out
}

// Within returns the offsets of s in [lo, hi).
func (s RangeSet) Within(lo, hi int64) RangeSet {
	var out RangeSet
	for _, r := range s.Below(hi) {
		if r.Last < lo {
			continue
		}
		if r.First < lo {
			r.First = lo
		}
		out = append(out, r)
	}
	return out
}

// Count is the number of offsets in s.
func (s RangeSet) Count() int64 {
	var n int64
	for _, r := range s {
		n += r.Len()
	}
	return n
}

func (s RangeSet) String() string { return Join([]Range(s)) }

// Summary is String for a table cell: the first n ranges, then how many more there are
// (the full list belongs in -o json).
func (s RangeSet) Summary(n int) string {
	if len(s) <= n {
		return s.String()
	}
	return RangeSet(s[:n]).String() + fmt.Sprintf(",… %d more ranges", len(s)-n)
}
