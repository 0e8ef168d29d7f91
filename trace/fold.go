package trace

import (
	"fmt"
	"sort"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The fold: each event into the state of its partition and of the analysis, one handler
// per kind (add), before Finish judges.

func (a *Analyzer) spin(e Event) {
	name := e.Name
	if name == "" {
		name = e.Kind.String()
	}
	s := a.spins[name]
	if s == nil && len(a.spins) >= maxNames {
		a.namesDropped++
		return
	}
	if s == nil {
		s = &spinStat{name: name, ref: e.Ref, first: e.Time}
		a.spins[name] = s
	}
	n := e.Count
	if n < 1 {
		n = 1
	}
	s.total += n
	s.last = e.Time
	if e.Kind == KindEmptyRead && e.SinceFetch > 0 || e.Kind == KindEmptyFetch && e.SinceFetch > 0 {
		// a pre-aggregated count over a window (kstranded spin events)
		if rate := float64(n) / e.SinceFetch.Seconds(); int(rate) > s.maxPerSec {
			s.maxPerSec, s.maxAt, s.ref, s.window = int(rate), e.Time, e.Ref, e.SinceFetch
		}
		return
	}
	if !e.Timed || n > 1 {
		return
	}
	sec := e.Time.Unix()
	if sec != s.sec {
		s.sec, s.inSec = sec, 0
	}
	s.inSec += n
	if s.inSec > s.maxPerSec {
		s.maxPerSec, s.maxAt, s.ref = s.inSec, e.Time, e.Ref
	}
}

// add folds one event: the bounds of the trace, the settings and counters, then one
// handler per kind.
func (a *Analyzer) add(e Event) {
	if a.halt != nil {
		return
	}
	if !a.tracked(e.Topic, e.Partition) {
		if a.untracked == 0 {
			a.untrackedFirst, a.untrackedPart = e.Ref, kpart.TopicPartition{Topic: e.Topic, Partition: e.Partition}
		}
		a.untracked++
		return
	}
	bound(&e)
	a.seq++
	if e.Timed {
		a.extend(e.Time)
	}
	if e.Kind == KindSetting || e.Kind == KindCounter {
		a.addDeclared(e)
		return
	}
	a.countName(e)
	a.addKind(e)
}

// extend widens the bounds of the trace and of the file being read to t.
func (a *Analyzer) extend(t time.Time) {
	if a.first.IsZero() || t.Before(a.first) {
		a.first = t
	}
	if a.last.IsZero() || t.After(a.last) {
		a.last = t
	}
	if a.fileFirst.IsZero() {
		a.fileFirst = t
	}
}

// addDeclared folds what the trace declares rather than observes: a setting's value, a
// counter's total.
func (a *Analyzer) addDeclared(e Event) {
	switch e.Kind {
	case KindSetting:
		if _, ok := a.settings[e.Name]; !ok && len(a.settings) >= maxNames {
			a.namesDropped++
			return
		}
		if _, ok := a.settings[e.Name]; !ok {
			a.settingRef[e.Name] = e.Ref
		}
		a.settings[e.Name] = e.Reason
	case KindCounter:
		if _, ok := a.declared[e.Name]; !ok && len(a.declared) >= maxNames {
			a.namesDropped++
			return
		}
		a.declared[e.Name] += e.Count
		if _, ok := a.counterRefs[e.Name]; !ok {
			a.counterRefs[e.Name] = e.Ref
		}
	}
}

// countName counts the event under its name (records for fetches and deliveries count
// once: the line), up to maxNames names.
func (a *Analyzer) countName(e Event) {
	if e.Name == "" {
		return
	}
	n := e.Count
	if n < 1 || e.Kind == KindFetch || e.Kind == KindDeliver {
		n = 1
	}
	if a.lastSeen != nil && e.Name == a.lastName { // a log's events mostly come from one client
		*a.lastSeen += n
		return
	}
	seen, ok := a.seen[e.Name]
	if !ok {
		if len(a.seen) >= maxNames {
			a.namesDropped++
			return
		}
		seen = new(int)
		a.seen[e.Name] = seen
		if _, ok := a.counterRefs[e.Name]; !ok { // a name counted before has its reference
			a.counterRefs[e.Name] = e.Ref
		}
	}
	*seen += n
	a.lastName, a.lastSeen = e.Name, seen
}

// addKind folds the event by its kind: one handler each.
func (a *Analyzer) addKind(e Event) {
	switch e.Kind {
	case KindFetch:
		a.addFetch(e)
	case KindPosition:
		a.addPosition(e)
	case KindEmptyFetch:
		a.lastFetchAt(e)
		a.spin(e)
		if e.Count > 1 {
			a.entry(e, fmt.Sprintf("%d empty fetches", e.Count))
		}
	case KindEmptyRead:
		a.spin(e)
		if e.Count > 1 && e.SinceFetch <= 0 {
			a.entry(e, fmt.Sprintf("%d empty cache reads", e.Count))
		}
	case KindDeliver:
		a.deliver(e)
	case KindStore:
		ps := a.part(e.Topic, e.Partition)
		if e.Offset == ps.stored {
			return
		}
		ps.stored = e.Offset
		a.lazyEntry(e, lazyStored)
	case KindCommit:
		a.addCommit(e)
	case KindCommitFail:
		d := "commit failed"
		if e.Offset != Unknown {
			d = fmt.Sprintf("commit of %d failed", e.Offset)
		}
		a.entry(e, d+": "+e.Reason)
	case KindExpiry:
		a.expiries = appendCapped(a.expiries, expiryRec{e: e, lastFetch: a.lastFetch, lastServe: a.lastServe,
			fetchBound: a.fetchBound, fetchBoundRef: a.fetchBoundRef, fetchRef: a.fetchBoundOf})
		a.entry(e, "cache expired")
	case KindClear:
		a.clear(e)
	case KindRewind:
		a.addRewind(e)
	case KindRewindSkip:
		a.addRewindSkip(e)
	case KindSeek:
		a.addSeek(e)
	case KindAssign:
		a.entry(e, "assigned "+e.Reason)
	case KindRevoke:
		a.entry(e, "revoked "+e.Reason)
	case KindPause:
		a.entry(e, "paused "+e.Reason)
	case KindResume:
		a.entry(e, "resumed "+e.Reason)
	case KindMaxPoll:
		a.maxPolls = appendCapped(a.maxPolls, e)
		a.entry(e, e.Reason)
	case KindNote:
		d := e.Name
		if e.Reason != "" {
			d += " " + e.Reason
		}
		if e.Count > 1 {
			d = fmt.Sprintf("%d x %s", e.Count, d)
		}
		a.entry(e, d)
	}
}

// addFetch folds records fetched into the client: the fetched and cached ranges, the
// evidence line of each new range, the fetch position past them.
func (a *Analyzer) addFetch(e Event) {
	if e.Partition == AllPartitions || len(e.Ranges) == 0 {
		a.lastFetchAt(e)
		a.entry(e, fmt.Sprintf("fetched %d records (offsets not in the trace)", e.Count))
		return
	}
	ps := a.part(e.Topic, e.Partition)
	a.lastFetchAt(e)
	if e.Timed {
		ps.lastFetch = e.Time
	}
	var n int64
	held := len(ps.fetched)
	defer func() { a.countRanges(len(ps.fetched)-held, e.Ref) }()
	for _, r := range e.Ranges {
		// only the fetched ranges that can overlap r: a partition can hold a million
		i := sort.Search(len(ps.fetched), func(i int) bool { return ps.fetched[i].Last >= r.First })
		j := i
		for j < len(ps.fetched) && ps.fetched[j].First <= r.Last {
			j++
		}
		fresh := kpart.RangeSet{r}
		if i < j { // most fetches overlap nothing fetched before: r is fresh as it is
			// (Minus allocated twice a fetch: 9 % of busy-20's parse in process)
			fresh = fresh.Minus(ps.fetched[i:j])
		}
		for _, f := range fresh {
			if len(ps.fetchRefs) < a.refCap(capRefs) {
				ps.fetchRefs = append(ps.fetchRefs, refRange{f, e.Ref})
			}
		}
		ps.fetched.Add(r.First, r.Last)
		ps.cached()
		ps.cache.Add(r.First, r.Last)
		n += r.Len()
		if r.Last+1 > ps.position || ps.position == Unknown {
			ps.position = r.Last + 1
			ps.posRef = e.Ref
		}
	}
	if e.Ctrl > 0 {
		r := e.Ranges[len(e.Ranges)-1]
		ps.ctrl.Add(r.Last-int64(e.Ctrl)+1, r.Last)
		ps.cache = ps.cached().Minus(kpart.RangeSet{{First: r.Last - int64(e.Ctrl) + 1, Last: r.Last}})
	}
	ps.fetchedN += n - int64(e.Ctrl)
	a.lazyEntry(e, lazyFetched)
}

// cached is what the partition's client holds fetched and not yet served: the cache
// once the serves since it was last read are taken out of it.
func (ps *partState) cached() kpart.RangeSet {
	if len(ps.served) > 0 {
		ps.cache = ps.cache.Minus(kpart.Normalize(ps.served))
		ps.served = ps.served[:0]
	}
	return ps.cache
}

// addPosition folds an observed fetch position. At the position the partition already
// holds nothing moved: EOF there is the fetcher reaching the end again (librdkafka says so
// on every return to it) and adds nothing, but a fetch error at it is evidence of why the
// partition does not advance, kept once per distinct error (issue 11 §6: the position
// used to be compared twice and every such event dropped).
func (a *Analyzer) addPosition(e Event) {
	ps := a.part(e.Topic, e.Partition)
	if e.Offset == ps.position {
		if e.Reason == "" || e.Reason == "EOF" || e.Reason == ps.posReason {
			return
		}
		ps.posReason = e.Reason
		a.entry(e, fmt.Sprintf("fetch at %d failed: %s", e.Offset, e.Reason))
		return
	}
	ps.position, ps.posRef, ps.posReason = e.Offset, e.Ref, e.Reason
	a.lazyEntry(e, lazyPosition)
}

// addCommit folds a completed commit: the partition's committed offset, the increasing
// list of commits (the evidence of when offsets were passed) and regressions.
func (a *Analyzer) addCommit(e Event) {
	ps := a.part(e.Topic, e.Partition)
	// commits only ever holds increasing offsets (appendCommit keeps the latest last):
	// its last entry is the highest commit so far
	high := int64(Unknown)
	var highRef Ref
	if n := len(ps.commits); n > 0 {
		high, highRef = ps.commits[n-1].offset, ps.commits[n-1].ref
	}
	if e.Reason == "auto" && ps.lastManual > e.Offset && e.Offset < high {
		// librdkafka reports auto-commit results when the application polls, so an
		// auto-commit that completed before a manual commit can be reported after
		// it; it is not a regression of what is committed.
		a.entry(e, fmt.Sprintf("auto-commit of %d reported after the manual commit of %d", e.Offset, ps.lastManual))
		return
	}
	if e.Reason != "auto" && e.Offset > ps.lastManual {
		ps.lastManual = e.Offset
	}
	if high != Unknown && e.Offset < high {
		a.regression(e, high, highRef)
	}
	if e.Offset == ps.committed {
		return
	}
	if e.Offset > high {
		ps.commits = appendCommit(ps.commits, offRef{offset: e.Offset, time: e.Time, seq: a.seq, ref: e.Ref}, a.refCap(4096))
	}
	ps.committed = e.Offset
	a.lazyEntry(e, lazyCommitted)
}

// addRewind folds a rewind after a cache clear.
func (a *Analyzer) addRewind(e Event) {
	if e.Partition == AllPartitions {
		a.entry(e, "rewind")
		return
	}
	ps := a.part(e.Topic, e.Partition)
	ps.rewinds = capTo(ps.rewinds, offRef{offset: e.Offset, time: e.Time, seq: a.seq, ref: e.Ref, reason: e.Reason}, a.refCap(capRefs))
	d := "rewind"
	if e.Offset != Unknown {
		ps.position = e.Offset
		d = fmt.Sprintf("rewind to %d", e.Offset)
	}
	if e.Reason != "" {
		d += " (" + e.Reason + ")"
	}
	a.entry(e, d)
}

// addRewindSkip folds a rewind after a clear that was skipped (Count partitions at once
// when aggregated).
func (a *Analyzer) addRewindSkip(e Event) {
	n := e.Count
	if n < 1 {
		n = 1
	}
	r := offRef{offset: int64(n), time: e.Time, seq: a.seq, ref: e.Ref, reason: e.Reason}
	if e.Partition == AllPartitions {
		a.skipsAll = appendCapped(a.skipsAll, r)
		a.entry(e, fmt.Sprintf("rewind skipped on %d partition(s): %s", n, e.Reason))
		return
	}
	ps := a.part(e.Topic, e.Partition)
	ps.skips = capTo(ps.skips, r, a.refCap(capRefs))
	a.entry(e, "rewind skipped: "+e.Reason)
}

// addSeek folds a move of the fetch position; a seek back is a rewind.
func (a *Analyzer) addSeek(e Event) {
	if e.Partition == AllPartitions {
		a.entry(e, "seek")
		return
	}
	ps := a.part(e.Topic, e.Partition)
	r := offRef{offset: e.Offset, time: e.Time, seq: a.seq, ref: e.Ref, reason: e.Reason}
	ps.seeks = capTo(ps.seeks, r, a.refCap(capRefs))
	if e.Offset != Unknown {
		ps.seekTo.Add(e.Offset, e.Offset)
		if ps.position != Unknown && e.Offset < ps.position {
			ps.rewinds = capTo(ps.rewinds, r, a.refCap(capRefs))
		}
		ps.position = e.Offset
	}
	// a seek purges what the client had fetched ahead
	ps.cache, ps.served = nil, ps.served[:0]
	a.entry(e, fmt.Sprintf("seek to %d (%s)", e.Offset, e.Reason))
}

func appendCommit(s []offRef, c offRef, limit int) []offRef {
	if len(s) < limit {
		return append(s, c)
	}
	s[len(s)-1] = c // keep the first ones (the evidence of when offsets were first passed) and the latest
	return s
}

func (a *Analyzer) lastFetchAt(e Event) {
	if e.Timed {
		a.lastFetch = e.Time
		a.untimedFetch = false
		return
	}
	if e.Count > 0 || len(e.Ranges) > 0 {
		a.untimedFetch, a.untimedRef = true, e.Ref
	}
}
