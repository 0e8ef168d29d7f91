package trace

import (
	"fmt"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Deliveries and cache clears: what the application was handed, and what the client
// dropped from its cache before handing it.

func (a *Analyzer) deliver(e Event) {
	a.anyDelivery = true
	if e.Timed {
		a.lastServe = e.Time
		if a.untimedFetch {
			a.untimedFetch = false
			a.fetchBound, a.fetchBoundRef, a.fetchBoundOf = e.Time, e.Ref, a.untimedRef
		}
	}
	ps := (*partState)(nil)
	if e.Partition != AllPartitions {
		ps = a.part(e.Topic, e.Partition)
	} else {
		// the kafkajs trace does not name the partition of a serve: when exactly one
		// partition has cached records, the serve came from it
		var cand *partState
		n := 0
		for _, k := range a.order {
			if p := a.parts[k]; len(p.cached()) > 0 {
				cand, n = p, n+1
			}
		}
		if n == 1 {
			ps = cand
			e.Partition, e.Topic = cand.key.Partition, cand.key.Topic
		}
	}
	if ps == nil {
		a.entry(e, fmt.Sprintf("delivered %d records (partition not in the trace)", max(e.Count, 0)))
		return
	}
	ps.hasDelivery = true
	held := len(ps.delivered)
	defer func() { a.countRanges(len(ps.delivered)-held, e.Ref) }()
	if len(e.Ranges) > 0 {
		for _, r := range e.Ranges {
			ps.delivered.Add(r.First, r.Last)
		}
		// taken out of the cache when it is next read (cached): one Minus for every
		// serve since, not one a serve, which made many distinct ranges quadratic
		ps.served = append(ps.served, e.Ranges...)
	} else {
		// count-only serve: the cache serves in offset order, so the served records are
		// its head; with "remaining" the head is everything but the last `remaining`
		take := int64(e.Count)
		if e.Remaining != Unknown {
			take = ps.cached().Count() - int64(e.Remaining)
		}
		var got kpart.RangeSet
		for take > 0 && len(ps.cached()) > 0 {
			r := ps.cache[0]
			if r.Len() > take {
				r.Last = r.First + take - 1
			}
			got.Add(r.First, r.Last)
			ps.cache = ps.cache.Minus(kpart.RangeSet{r})
			take -= r.Len()
		}
		for _, r := range got {
			ps.delivered.Add(r.First, r.Last)
		}
		if missing := e.Count - int(got.Count()); e.Count != Unknown && missing > 0 {
			ps.unknownDeliv += missing
		}
		e.Ranges = got
	}
	if len(e.Ranges) == 0 {
		d := fmt.Sprintf("delivered %d record(s) not seen fetched", e.Count)
		if e.Remaining != Unknown {
			d += fmt.Sprintf(", %d left in cache", e.Remaining)
		}
		e.Count = 0
		a.entry(e, d)
		return
	}
	// coalesce runs of single-record deliveries (application logs)
	if last := ps.tl.last(); last != nil && last.Kind == KindDeliver && len(e.Ranges) == 1 && len(last.Ranges) == 1 &&
		last.Ref.File == e.Ref.File && last.Ranges[0].Last+1 == e.Ranges[0].First && e.Remaining == Unknown && e.Count == 1 {
		last.Ranges = a.oneRange(last.Ranges[0].First, e.Ranges[0].Last)
		last.Count++
		last.lazy, last.remaining, last.Detail = lazyDelivered, Unknown, ""
		return
	}
	e.Count = int(kpart.RangeSet(e.Ranges).Count())
	a.lazyEntry(e, lazyDelivered)
}

// oneRange is []kpart.Range{{first, last}}, cut from a block of them: a delivery line is
// one record, and a range allocated for each was a tenth of the fold's allocations (a
// librdkafka enqueue's range taken from it too, 144k allocations of a 128 MiB busy-20 log
// become 24k, measured no faster in process or whole: it stays allocated). The
// slice has no room to grow (an append copies it). The block is small: an entry kept in
// the timeline holds its whole block alive, so the timeline's 40,000 entries hold at most
// 5 MB of blocks (64 a block measured no faster on jsclient-20, for up to 40 MB).
func (a *Analyzer) oneRange(first, last int64) []kpart.Range {
	if len(a.rangeBlock) == 0 {
		a.rangeBlock = make([]kpart.Range, rangeBlock)
	}
	r := a.rangeBlock[:1:1]
	a.rangeBlock = a.rangeBlock[1:]
	r[0] = kpart.Range{First: first, Last: last}
	return r
}

const rangeBlock = 8

func (a *Analyzer) clear(e Event) {
	rec := clearRec{time: e.Time, seq: a.seq, ref: e.Ref, keys: e.Keys, keysKnown: e.KeysKnown, reason: e.Reason}
	var targets []*partState
	if e.Partition != AllPartitions {
		ps := a.part(e.Topic, e.Partition)
		if len(e.Ranges) == 0 {
			e.Ranges = ps.cached()
		}
		targets = append(targets, ps)
	} else {
		for _, k := range a.order {
			if ps := a.parts[k]; len(ps.cached()) > 0 {
				targets = append(targets, ps)
			}
		}
	}
	keys := "lastConsumedKeys unknown"
	if e.KeysKnown {
		keys = fmt.Sprintf("lastConsumedKeys=%v", e.Keys)
	}
	if len(targets) == 0 {
		a.clearsAll = appendCapped(a.clearsAll, rec)
		a.entry(e, fmt.Sprintf("cache cleared, nothing cached (%s %s)", e.Reason, keys))
		return
	}
	for _, ps := range targets {
		disc := kpart.RangeSet(e.Ranges)
		if e.Partition == AllPartitions {
			disc = ps.cached()
		}
		disc = disc.Minus(ps.delivered)
		r := rec
		r.discarded = append(kpart.RangeSet{}, disc...)
		if len(ps.clears) < a.refCap(capRefs) {
			a.countRanges(len(r.discarded), e.Ref) // the clears keep their own copy
		}
		ps.clears = capTo(ps.clears, r, a.refCap(capRefs))
		ps.discarded += disc.Count()
		ps.cache, ps.served = nil, ps.served[:0]
		pe := e
		pe.Topic, pe.Partition, pe.Ranges, pe.Count = ps.key.Topic, ps.key.Partition, r.discarded, int(disc.Count())
		a.entry(pe, fmt.Sprintf("cache cleared: %d undelivered records discarded (%s) — %s %s", disc.Count(), disc.Summary(messageRanges), e.Reason, keys))
	}
	a.clearsAll = appendCapped(a.clearsAll, rec)
}
