package trace

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The timeline: the entries of each partition within a shared budget, their details
// rendered only when the timeline is printed.

// Entry is one line of the timeline.
type Entry struct {
	Time      time.Time
	Timed     bool
	Kind      Kind
	Topic     string
	Partition int32
	Ranges    []kpart.Range
	Offset    int64
	Count     int
	Detail    string
	Ref       Ref
	seq       int
	// the detail of the most frequent entries is written when the timeline is read
	// (render): most entries of a long log are overwritten in the timeline's ring first
	lazy      lazyDetail
	ctrl      int
	remaining int
	reason    string
}

type lazyDetail uint8

const (
	eager lazyDetail = iota
	lazyStored
	lazyCommitted
	lazyPosition
	lazyFetched
	lazyDelivered
)

// render writes the entry's detail if it was left to the reader.
func (en *Entry) render() {
	switch en.lazy {
	case lazyStored:
		en.Detail = "stored " + strconv.FormatInt(en.Offset, 10)
	case lazyCommitted:
		en.Detail = commitDetail(Event{Offset: en.Offset, Reason: en.reason})
	case lazyPosition:
		en.Detail = "fetch position " + strconv.FormatInt(en.Offset, 10)
		if en.reason != "" {
			en.Detail += " (" + en.reason + ")"
		}
	case lazyFetched:
		n := kpart.RangeSet(en.Ranges).Count()
		en.Detail = fmt.Sprintf("fetched %s (%d records)", kpart.RangeSet(en.Ranges), n-int64(en.ctrl))
		if en.ctrl > 0 {
			en.Detail += fmt.Sprintf(", %d control marker(s) at the end", en.ctrl)
		}
		if en.reason != "" {
			en.Detail += "; " + en.reason
		}
	case lazyDelivered:
		en.Detail = "delivered " + kpart.RangeSet(en.Ranges).String()
		if en.remaining != Unknown {
			en.Detail += fmt.Sprintf(", %d left in cache", en.remaining)
		}
	}
	en.lazy = eager
}

// timeline keeps the first half and the last half of a capped list of entries.
type timeline struct {
	head, tail []Entry
	next       int // ring position in tail
	dropped    int
	cap        int
}

// add adds e and reports whether the timeline grew (rather than overwrote its oldest
// tail entry).
func (t *timeline) add(e Entry) bool {
	half := t.cap / 2
	if len(t.head) < half {
		t.head = append(t.head, e)
		return true
	}
	if len(t.tail) < t.cap-half {
		t.tail = append(t.tail, e)
		return true
	}
	t.dropped++
	t.tail[t.next] = e
	if t.next++; t.next == len(t.tail) { // no division: this runs for most events of a long log
		t.next = 0
	}
	return false
}

func (t *timeline) len() int { return len(t.head) + len(t.tail) }

// shrink lowers the cap to c, keeping the first and the last entries.
func (t *timeline) shrink(c int) {
	if c >= t.cap {
		return
	}
	if t.len() > c {
		all := t.all()
		half := c / 2
		t.dropped += len(all) - c
		t.head = append([]Entry(nil), all[:half]...)
		t.tail = append([]Entry(nil), all[len(all)-(c-half):]...)
		t.next = 0
	}
	t.cap = c
}

// last returns the most recent entry, for coalescing.
func (t *timeline) last() *Entry {
	if len(t.tail) > 0 {
		i := t.next - 1
		if i < 0 {
			i = len(t.tail) - 1
		}
		if len(t.tail) < t.cap-t.cap/2 {
			i = len(t.tail) - 1
		}
		return &t.tail[i]
	}
	if len(t.head) > 0 {
		return &t.head[len(t.head)-1]
	}
	return nil
}

func (t *timeline) all() []Entry {
	out := append([]Entry{}, t.head...)
	if len(t.tail) == t.cap-t.cap/2 {
		out = append(out, t.tail[t.next:]...)
		out = append(out, t.tail[:t.next]...)
	} else {
		out = append(out, t.tail...)
	}
	return out
}

func (a *Analyzer) entry(e Event, detail string) { a.entryOf(e, detail, eager) }

// lazyEntry adds an entry whose detail render writes.
func (a *Analyzer) lazyEntry(e Event, lazy lazyDetail) { a.entryOf(e, "", lazy) }

func (a *Analyzer) entryOf(e Event, detail string, lazy lazyDetail) {
	if a.opt.NoTimeline {
		return
	}
	if len(e.Ranges) > maxEntryRanges {
		// a line naming thousands of ranges: the detail says how many, the entry keeps
		// the first ones (a timeline of such entries would otherwise hold them all)
		en := Entry{Kind: e.Kind, Ranges: e.Ranges, ctrl: e.Ctrl, remaining: e.Remaining, reason: e.Reason, lazy: lazy, Detail: detail, Offset: e.Offset}
		en.render()
		detail = fmt.Sprintf("%s (%d ranges, the first %d kept)", clip(en.Detail, maxText), len(e.Ranges), maxEntryRanges)
		lazy = eager
		e.Ranges = append([]kpart.Range(nil), e.Ranges[:maxEntryRanges]...)
	}
	en := Entry{Time: e.Time, Timed: e.Timed, Kind: e.Kind, Topic: e.Topic, Partition: e.Partition,
		Ranges: e.Ranges, Offset: e.Offset, Count: e.Count, Detail: detail, Ref: e.Ref, seq: a.seq,
		lazy: lazy, ctrl: e.Ctrl, remaining: e.Remaining, reason: e.Reason}
	if e.Partition == AllPartitions {
		a.global.add(en)
		return
	}
	ps := a.part(e.Topic, e.Partition)
	if ps.tl.add(en) {
		a.tlEntries++
		if a.tlEntries > timelineBudget {
			a.shrinkTimelines()
		}
	}
}

// shrinkTimelines lowers every partition timeline's cap to an equal share of the budget
// (at least 2: the first and the last entry), and the cap of partitions named later. It
// does nothing once the share stops falling: with many partitions it would otherwise walk
// all of them for every new entry (10^6 partitions never finished).
func (a *Analyzer) shrinkTimelines() {
	share := max(2, timelineBudget/(2*len(a.parts)))
	if share >= a.tlShare {
		return
	}
	a.tlShare = share
	a.tlEntries = 0
	for _, ps := range a.parts {
		ps.tl.shrink(share)
		a.tlEntries += ps.tl.len()
	}
}
