package trace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

// kstrandedParser reads kstranded.trace/v1 (traceevent) lines.
type kstrandedParser struct {
	lastSpin time.Time
	topic    string // from the run line: every event of a run is about its topic
}

func msDur(p *float64) time.Duration {
	if p == nil {
		return Unknown
	}
	return time.Duration(*p * float64(time.Millisecond))
}

func (p *kstrandedParser) Line(line []byte, emit func(Event)) error {
	ev, err := traceevent.Decode(line)
	var schema *traceevent.SchemaError
	if err != nil && !errors.As(err, &schema) {
		return errMalformed("not a kstranded.trace/v1 JSON line: " + err.Error())
	}
	if schema != nil && ev.Ev != "" && !ev.Time.IsZero() {
		return errMalformed(fmt.Sprintf("schema %q, want %q", schema.Schema, traceevent.Schema))
	}
	return p.event(ev, emit)
}

// event reads one kstranded.trace/v1 event, from a line (Line) or handed over (Events).
func (p *kstrandedParser) event(ev traceevent.Event, emit func(Event)) error {
	if ev.Ev == "" {
		return errMalformed(`no "ev" field`)
	}
	if ev.Time.IsZero() {
		return errMalformed(`no "ts" field`)
	}
	switch ev.Ev {
	case traceevent.Run:
		return p.run(&ev, emit)
	case traceevent.Fetch:
		p.fetch(&ev, emit)
	case traceevent.Serve:
		e := p.base(&ev, KindDeliver)
		e.Ranges = offsetsToRanges(ev.Offsets)
		e.Count = len(ev.Offsets)
		if ev.Remaining != nil {
			e.Remaining = *ev.Remaining
		}
		if ev.Worker != 0 {
			e.Reason = "worker " + strconv.Itoa(ev.Worker)
		}
		emit(e)
	case traceevent.Store:
		if ev.Offset == nil || ev.Partition == nil {
			return errMalformed("store without partition/offset")
		}
		emit(p.base(&ev, KindStore))
	case traceevent.Commit:
		p.commit(&ev, emit)
	case traceevent.Expiry:
		e := p.base(&ev, KindExpiry)
		e.SinceFetch, e.SinceServe, e.Timeout = msDur(ev.SinceFetchMs), msDur(ev.SinceServeMs), msDur(ev.TimeoutMs)
		emit(e)
	case traceevent.Clear:
		p.clear(&ev, emit)
	case traceevent.Seek:
		if ev.Offset == nil {
			return errMalformed("seek without offset")
		}
		e := p.base(&ev, KindSeek)
		e.Reason = ev.Reason
		emit(e)
	case traceevent.Assign, traceevent.Revoke:
		p.assignment(&ev, emit)
	case traceevent.Spin:
		p.spin(&ev, emit)
	case traceevent.Pending, traceevent.Returned, traceevent.BatchEnd, traceevent.Spawn,
		traceevent.PhaseEnd, traceevent.Verdict, traceevent.Interrupt, traceevent.LedgerMark, traceevent.Produce,
		traceevent.Wake, traceevent.Pause, traceevent.Resume, traceevent.Heartbeat, traceevent.Member:
		p.note(&ev, emit)
	default:
		// a newer writer may add events: keep them, unread, in the timeline
		e := p.base(&ev, KindNote)
		e.Reason = "unknown event"
		emit(e)
	}
	return nil
}

// base is the event of kind k for ev, with the fields every event line may carry.
func (p *kstrandedParser) base(ev *traceevent.Event, k Kind) Event {
	e := newEvent(k)
	e.Time, e.Timed, e.Name, e.Topic = ev.Time, true, ev.Ev, p.topic
	if ev.Partition != nil {
		e.Partition = *ev.Partition
	}
	if ev.Offset != nil {
		e.Offset = *ev.Offset
	}
	return e
}

// run reads the run line: the topic of every later event, the settings.
func (p *kstrandedParser) run(ev *traceevent.Event, emit func(Event)) error {
	p.lastSpin, p.topic = ev.Time, ev.Topic
	for k, v := range ev.Settings {
		e := p.base(ev, KindSetting)
		e.Name, e.Reason = k, v
		emit(e)
	}
	e := p.base(ev, KindNote)
	e.Reason = fmt.Sprintf("run topic=%s group=%s policy=%s commit=%s", ev.Topic, ev.Group, ev.Policy, ev.Commit)
	emit(e)
	return nil
}

// fetch reads a fetch: one event per fetched range, or an empty fetch.
func (p *kstrandedParser) fetch(ev *traceevent.Event, emit func(Event)) {
	if len(ev.Ranges) == 0 {
		e := p.base(ev, KindEmptyFetch)
		e.Count = 1
		emit(e)
		return
	}
	for _, r := range ev.Ranges {
		e := p.base(ev, KindFetch)
		e.Partition, e.Count = r.Partition, int(r.Count)
		e.Ranges = []kpart.Range{{First: r.First, Last: r.Last}}
		emit(e)
	}
}

// commit reads a commit result: one event per committed partition, or the failure.
func (p *kstrandedParser) commit(ev *traceevent.Event, emit func(Event)) {
	for _, c := range ev.Committed {
		k := KindCommit
		if c.Error != "" || ev.Error != "" {
			k = KindCommitFail
		}
		e := p.base(ev, k)
		e.Partition, e.Offset = c.Partition, c.Offset
		e.Reason = c.Error
		if e.Reason == "" {
			e.Reason = ev.Error
		}
		if k == KindCommit {
			e.Reason = ev.Reason // "auto" or "manual"
		}
		emit(e)
	}
	if len(ev.Committed) == 0 && ev.Error != "" {
		e := p.base(ev, KindCommitFail)
		e.Reason = ev.Error
		emit(e)
	}
}

// clear reads a cache clear: one clear event per partition that lost records (so the
// analyzer can attribute them), then the rewinds done and skipped.
func (p *kstrandedParser) clear(ev *traceevent.Event, emit func(Event)) {
	e := p.base(ev, KindClear)
	e.Keys, e.KeysKnown = ev.LastConsumedKeys, true
	parts := map[int32][]kpart.Range{}
	var order []int32
	for _, d := range ev.Discarded {
		if _, ok := parts[d.Partition]; !ok {
			order = append(order, d.Partition)
		}
		parts[d.Partition] = append(parts[d.Partition], kpart.Range{First: d.First, Last: d.Last})
	}
	if len(order) == 0 {
		emit(e)
	}
	for _, pt := range order {
		pe := e
		pe.Partition, pe.Ranges = pt, parts[pt]
		emit(pe)
	}
	for _, r := range ev.Rewinds {
		re := p.base(ev, KindRewind)
		re.Partition, re.Offset, re.Reason = r.Partition, r.Offset, r.Reason
		emit(re)
	}
	for _, r := range ev.Skipped {
		re := p.base(ev, KindRewindSkip)
		re.Partition, re.Reason, re.Count = r.Partition, r.Reason, 1
		emit(re)
	}
}

// assignment reads an assign or revoke, its partitions under "partitions" or (older
// writers) "ranges".
func (p *kstrandedParser) assignment(ev *traceevent.Event, emit func(Event)) {
	k := KindAssign
	if ev.Ev == traceevent.Revoke {
		k = KindRevoke
	}
	for _, ps := range ev.Partitions {
		e := p.base(ev, k)
		e.Partition, e.Reason = ps.Partition, ev.Reason
		emit(e)
	}
	if len(ev.Partitions) > 0 {
		return
	}
	if len(ev.Ranges) > 0 {
		for _, r := range ev.Ranges {
			e := p.base(ev, k)
			e.Partition, e.Reason = r.Partition, ev.Reason
			emit(e)
		}
		return
	}
	e := p.base(ev, k)
	e.Reason = ev.Reason
	emit(e)
}

// spin reads the counters of empty reads and fetches over a window: window_ms when the
// writer gives it, else the time since the previous spin (or run) line.
func (p *kstrandedParser) spin(ev *traceevent.Event, emit func(Event)) {
	dt := ev.Time.Sub(p.lastSpin)
	p.lastSpin = ev.Time
	if w := msDur(ev.WindowMs); w > 0 {
		dt = w
	}
	for _, c := range []struct {
		k Kind
		n int
	}{{KindEmptyRead, ev.EmptyReads}, {KindEmptyFetch, ev.EmptyFetches}} {
		if c.n > 0 {
			e := p.base(ev, c.k)
			e.Count = c.n
			if dt > 0 {
				e.SinceFetch = dt // the window the count covers
			}
			emit(e)
		}
	}
}

// note reads the events kept for the timeline only; a phase end also carries the
// committed offsets repro read from the group coordinator.
func (p *kstrandedParser) note(ev *traceevent.Event, emit func(Event)) {
	e := p.base(ev, KindNote)
	e.Reason = noteOf(*ev)
	emit(e)
	if ev.Ev != traceevent.PhaseEnd {
		return
	}
	// The committed offsets repro read from the group coordinator when the phase
	// ended: the truth, even when librdkafka's report of the auto-commit that
	// made them was never polled before the consumer closed.
	for _, ps := range ev.Partitions {
		if ps.Committed < 0 {
			continue
		}
		c := p.base(ev, KindCommit)
		c.Partition, c.Offset, c.Reason = ps.Partition, ps.Committed, "observed"
		emit(c)
	}
}

func noteOf(ev traceevent.Event) string {
	switch ev.Ev {
	case traceevent.Pending:
		return "queued " + ev.Op
	case traceevent.Spawn:
		return fmt.Sprintf("%d workers", ev.N)
	case traceevent.Produce:
		if ev.First != nil && ev.Last != nil {
			return fmt.Sprintf("produced %d..%d", *ev.First, *ev.Last)
		}
	case traceevent.PhaseEnd:
		return fmt.Sprintf("phase %d ended", ev.Phase)
	case traceevent.BatchEnd:
		return fmt.Sprintf("handler returned (%d records)", len(ev.Offsets))
	case traceevent.Returned:
		return fmt.Sprintf("%d records returned to the cache", len(ev.Offsets))
	case traceevent.Member:
		// a member joined or left, or learnt of a rebalance (repro's members, simkafka.Group)
		if ev.Member != "" {
			return strings.TrimSpace(ev.Member + " " + ev.Reason)
		}
	case traceevent.Wake:
		if ev.SinceFetchMs == nil {
			break
		}
		woke := fmt.Sprintf("%d waiting workers woken (%s) %.0f ms after the empty fetch", ev.N, ev.Reason, *ev.SinceFetchMs)
		if ev.Requested == 0 {
			return woke + "; they stopped without fetching"
		}
		return fmt.Sprintf("%s; the next fetch returned %d", woke, ev.Returned)
	}
	return ev.Reason
}

func offsetsToRanges(offs []int64) []kpart.Range {
	var s kpart.RangeSet
	for _, o := range offs {
		s.Add(o, o)
	}
	return s
}
