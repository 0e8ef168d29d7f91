package trace

import (
	"errors"
	"fmt"
	"github.com/kstranded/kstranded/evidence"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Options tune the analysis.
type Options struct {
	// Pattern reads application delivery logs (format pattern).
	Pattern *regexp.Regexp
	// MaxPollInterval is the consumer's configured max.poll.interval.ms when the trace does
	// not carry it (a flag wins over the trace).
	MaxPollInterval time.Duration
	// TimelineCap bounds the timeline entries kept per partition (first half and last
	// half are kept; the middle is counted). 0: 4000.
	TimelineCap int
	// MaxPartitions bounds the partitions tracked (0: DefaultMaxPartitions): events about
	// partitions first named past it are counted and dropped, and the report says so.
	MaxPartitions int
	// NoTimeline leaves the report's Timeline empty: no entry is kept during the parse
	// nor sorted at its end (trace parse prints the timeline only with --timeline or
	// --svg; on a busy log keeping the entries is a third of the fold's time).
	NoTimeline bool
	// Delivered, when set, configures the evidence reader for delivery logs (format
	// deliveries) before each is read: the delivery filter the commands share.
	Delivered func(*evidence.Set)
	// When (--delivered-when) keeps, of the lines --pattern matches, those that mean
	// delivered; the evidence reader applies it to delivery logs too (Delivered).
	When *evidence.When
}

// The limits that keep memory bounded whatever the input (issue 16 §7: a trace naming 10^6
// partitions took 3.47 GB). Documented in docs/trace-format.md and trace parse's help.
const (
	// DefaultMaxPartitions is how many partitions an analysis tracks by default; with it
	// and the budgets below, trace parse stays under 256 MB of memory on any input.
	DefaultMaxPartitions = 10000
	// MaxRanges bounds the distinct offset ranges (fetched, delivered and discarded; all partitions
	// together) an analysis holds; past it the analysis stops, incomplete (ErrLimit).
	MaxRanges = 250000
	// maxText bounds the text of an input line kept in an event (reasons, names, keys).
	maxText = 256
	// maxKeys bounds the last-consumed keys kept per cache clear.
	maxKeys = 16
	// maxEntryRanges bounds the ranges one timeline entry keeps (the detail still says
	// how many there were).
	maxEntryRanges = 16
	// maxNames bounds the distinct event and setting names counted.
	maxNames = 1024
)

// ErrLimit marks an analysis that stopped or dropped evidence at one of its documented
// limits: its result covers only part of the input.
var ErrLimit = errors.New("trace too large for the analysis limits")

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

type refRange struct {
	kpart.Range
	ref Ref
}

type offRef struct {
	offset int64
	time   time.Time
	seq    int
	ref    Ref
	reason string
}

type clearRec struct {
	time      time.Time
	seq       int
	ref       Ref
	discarded kpart.RangeSet
	keys      []string
	keysKnown bool
	reason    string
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

const capRefs = 256

type partState struct {
	key          kpart.TopicPartition
	fetched      kpart.RangeSet
	fetchRefs    []refRange
	fetchedN     int64
	ctrl         kpart.RangeSet
	delivered    kpart.RangeSet
	unknownDeliv int
	hasDelivery  bool
	cache        kpart.RangeSet // fetched, not yet served or cleared (for count-only serves); read it through cached()
	served       []kpart.Range  // served ranges not yet taken out of cache (cached applies them at once)
	committed    int64
	commits      []offRef // increases only
	lastManual   int64    // highest manual (explicit) commit, -1 before any
	stored       int64
	position     int64
	posRef       Ref
	posReason    string // the fetch error last seen at the position, if any
	clears       []clearRec
	rewinds      []offRef
	seeks        []offRef
	skips        []offRef
	discarded    int64
	lastFetch    time.Time
	tl           timeline
	live         *LiveRead // what the cluster says (trace parse --group), nil otherwise
	// seekTo holds every offset the fetch position was moved to: a gap between fetched
	// ranges that a seek jumped over may hold records; any other gap the fetcher skipped
	// holds none it could deliver
	seekTo kpart.RangeSet
}

type spinStat struct {
	name        string
	total       int
	sec         int64
	inSec       int
	maxPerSec   int
	maxAt       time.Time
	first, last time.Time
	ref         Ref
	window      time.Duration // for pre-aggregated counts (kstranded spin events)
}

type expiryRec struct {
	e         Event
	lastFetch time.Time
	lastServe time.Time
	// When the productive fetches carry no time (the kafkajs trace), the first timed
	// serve after the last of them bounds it: the records it served had been fetched.
	fetchBound    time.Time
	fetchBoundRef Ref
	fetchRef      Ref
}

// Analyzer folds normalized events into per-partition state. Feed it with Parse (one
// call per input), then call Finish.
type Analyzer struct {
	opt         Options
	parts       map[kpart.TopicPartition]*partState
	order       []kpart.TopicPartition
	global      timeline
	files       []FileStats
	settings    map[string]string
	settingRef  map[string]Ref
	declared    map[string]int
	seen        map[string]int
	counterRefs map[string]Ref
	spins       map[string]*spinStat
	expiries    []expiryRec
	maxPolls    []Event
	regressions []Finding
	skipsAll    []offRef
	clearsAll   []clearRec
	seq         int
	tlEntries   int // entries in the partition timelines
	file        string
	lastFetch   time.Time
	lastServe   time.Time
	// untimed productive fetches and the first timed serve after them
	untimedFetch  bool
	untimedRef    Ref
	fetchBound    time.Time
	fetchBoundRef Ref
	fetchBoundOf  Ref
	first, last   time.Time
	anyDelivery   bool
	// unread: delivery logs the evidence reader could not support a verdict on, each
	// with why: what they delivered is unknown, so nothing is judged
	unread    []string
	fileFirst time.Time
	// bounded memory: the timeline cap new partitions get, the ranges held, and what
	// was dropped at the limits
	tlShare        int
	lastPart       *partState   // the partition part returned last
	idxTopic       string       // the first topic named: its partitions are indexed by number
	idx            []*partState // idxTopic's partitions by number (nil: not tracked)
	ranges         int
	rangeLimit     int // MaxRanges; lower in tests
	untracked      int // events about partitions past MaxPartitions, dropped
	untrackedFirst Ref
	untrackedPart  kpart.TopicPartition
	namesDropped   int
	// halt, once set, stops the parse: the input is read no further (a limit)
	halt error
	// partial is set when the parse did not read every input to its end
	partial     bool
	interrupted bool
	stoppedAt   Ref
}

// NewAnalyzer returns an empty analyzer.
func NewAnalyzer(opt Options) *Analyzer {
	if opt.TimelineCap <= 0 {
		opt.TimelineCap = 4000
	}
	if opt.MaxPartitions <= 0 {
		opt.MaxPartitions = DefaultMaxPartitions
	}
	return &Analyzer{opt: opt, tlShare: opt.TimelineCap, rangeLimit: MaxRanges, parts: map[kpart.TopicPartition]*partState{}, settings: map[string]string{},
		settingRef: map[string]Ref{}, declared: map[string]int{}, seen: map[string]int{},
		counterRefs: map[string]Ref{}, spins: map[string]*spinStat{}, global: timeline{cap: opt.TimelineCap}}
}

func (a *Analyzer) beginFile(name string) { a.file, a.fileFirst = name, time.Time{} }

// endFile gives untimed lines at the top of a file (the seed's consume-result block)
// the time of the file's first timed line, so they sort before it.
func (a *Analyzer) endFile() {
	if a.fileFirst.IsZero() {
		return
	}
	fix := func(t *timeline) {
		for _, es := range [][]Entry{t.head, t.tail} {
			for i := range es {
				if es[i].Ref.File == a.file && es[i].Time.IsZero() {
					es[i].Time = a.fileFirst
				}
			}
		}
	}
	fix(&a.global)
	for _, ps := range a.parts {
		fix(&ps.tl)
	}
}

func (a *Analyzer) part(topic string, p int32) *partState {
	ps := a.lookup(topic, p) // the last one first: an event's handlers ask several times
	if ps == nil {
		k := kpart.TopicPartition{Topic: topic, Partition: p}
		ps = &partState{key: k, committed: Unknown, stored: Unknown, position: Unknown, lastManual: -1, tl: timeline{cap: a.tlShare}}
		a.parts[k] = ps
		a.order = append(a.order, k)
		a.index(ps)
	}
	a.lastPart = ps
	return ps
}

// maxIndexed bounds the partition numbers of the first topic looked up by index.
const maxIndexed = 1 << 16

// index adds ps to the index of the first topic's partitions by number: a log of many
// partitions of one topic switches partition at most lines, and a slice is cheaper than
// hashing the topic name into a.parts each time.
func (a *Analyzer) index(ps *partState) {
	if a.idxTopic == "" && ps.key.Topic != "" {
		a.idxTopic = ps.key.Topic
	}
	if p := ps.key.Partition; ps.key.Topic == a.idxTopic && p >= 0 && p < maxIndexed {
		for int(p) >= len(a.idx) {
			a.idx = append(a.idx, nil)
		}
		a.idx[p] = ps
	}
}

func (a *Analyzer) position(topic string, p int32) (int64, string) {
	if ps := a.lookup(topic, p); ps != nil {
		return ps.position, ps.posReason
	}
	return Unknown, ""
}

func (a *Analyzer) storedCommitted(topic string, p int32) (int64, int64) {
	if ps := a.lookup(topic, p); ps != nil {
		return ps.stored, ps.committed
	}
	return Unknown, Unknown
}

// patternScan is the --pattern reader of the JS client's logs, with --delivered-when.
func (a *Analyzer) patternScan() *patternScan {
	ps := newPatternScan(a.opt.Pattern)
	if ps != nil {
		ps.when = a.opt.When
	}
	return ps
}

func (a *Analyzer) knownCommitted(topic string, p int32, off int64) {
	if !a.tracked(topic, p) {
		return
	}
	ps := a.part(topic, p)
	if off > ps.committed && ps.committed == Unknown {
		ps.committed = off
	}
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

// tracked reports whether events about topic/p are folded: the partition is known, or
// there is room for one more under MaxPartitions.
func (a *Analyzer) tracked(topic string, p int32) bool {
	if p == AllPartitions || len(a.parts) < a.opt.MaxPartitions {
		return true
	}
	return a.lookup(topic, p) != nil
}

// lookup returns the state of a partition already tracked, nil for another.
func (a *Analyzer) lookup(topic string, p int32) *partState {
	k := kpart.TopicPartition{Topic: topic, Partition: p}
	if a.lastPart != nil && a.lastPart.key == k {
		return a.lastPart
	}
	if topic == a.idxTopic && p >= 0 && int(p) < len(a.idx) {
		if ps := a.idx[p]; ps != nil {
			a.lastPart = ps
			return ps
		}
	}
	ps := a.parts[k]
	if ps != nil {
		a.lastPart = ps
	}
	return ps
}

// clip cuts s to n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// bound cuts what an event carries from its input line to fixed sizes: the reason, the
// name, the last-consumed keys.
func bound(e *Event) {
	e.Reason, e.Name = clip(e.Reason, maxText), clip(e.Name, maxText)
	if len(e.Keys) > 0 {
		keys := e.Keys[:min(len(e.Keys), maxKeys)]
		out := make([]string, len(keys), len(keys)+1)
		for i, k := range keys {
			out[i] = clip(k, maxText)
		}
		if len(e.Keys) > maxKeys {
			out = append(out, fmt.Sprintf("… %d more", len(e.Keys)-maxKeys))
		}
		e.Keys = out
	}
}

// countRanges adds the change in a partition's held ranges to the analysis total; past
// MaxRanges the analysis halts.
func (a *Analyzer) countRanges(delta int, ref Ref) {
	a.ranges += delta
	if a.ranges > a.rangeLimit && a.halt == nil {
		a.halt = fmt.Errorf("%w: more than %d distinct offset ranges (fetched, delivered and discarded) at %s; the result covers the input up to there", ErrLimit, a.rangeLimit, ref)
	}
}

// Memory must not depend on the number of partitions (issue 13 §4: 1,000 partitions):
// what is kept per partition shares fixed budgets. timelineBudget bounds the entries of
// all partition timelines together; refBudget the evidence references (fetched ranges,
// commits) of all partitions.
const (
	timelineBudget = 40000
	refBudget      = 50000
)

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

// refCap is how many evidence references of one kind a partition keeps: limit, or its
// share of refBudget when there are many partitions.
func (a *Analyzer) refCap(limit int) int {
	return max(16, min(limit, refBudget/max(1, len(a.parts))))
}

// capTo appends v to s unless s holds limit elements already.
func capTo[T any](s []T, v T, limit int) []T {
	if len(s) >= limit {
		return s
	}
	return append(s, v)
}

func appendCapped[T any](s []T, v T) []T {
	if len(s) >= capRefs {
		return s
	}
	return append(s, v)
}

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
		if a.first.IsZero() || e.Time.Before(a.first) {
			a.first = e.Time
		}
		if a.last.IsZero() || e.Time.After(a.last) {
			a.last = e.Time
		}
		if a.fileFirst.IsZero() {
			a.fileFirst = e.Time
		}
	}
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
		return
	case KindCounter:
		if _, ok := a.declared[e.Name]; !ok && len(a.declared) >= maxNames {
			a.namesDropped++
			return
		}
		a.declared[e.Name] += e.Count
		if _, ok := a.counterRefs[e.Name]; !ok {
			a.counterRefs[e.Name] = e.Ref
		}
		return
	}
	if _, ok := a.seen[e.Name]; e.Name != "" && !ok && len(a.seen) >= maxNames {
		a.namesDropped++
	} else if e.Name != "" {
		n := e.Count
		if n < 1 || e.Kind == KindFetch || e.Kind == KindDeliver {
			n = 1
		}
		a.seen[e.Name] += n
		if _, ok := a.counterRefs[e.Name]; !ok {
			a.counterRefs[e.Name] = e.Ref
		}
	}
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
		fresh := kpart.RangeSet{r}.Minus(ps.fetched[i:j])
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

// regression records a commit lower than one already committed. Commits that regress
// against the same earlier commit (queued auto-commits of older stored offsets completing
// after it) make one finding.
func (a *Analyzer) regression(e Event, high int64, highRef Ref) {
	if n := len(a.regressions); n > 0 {
		f := &a.regressions[n-1]
		if f.Topic == e.Topic && f.Partition == e.Partition && f.Evidence[0].Ref == highRef {
			f.Facts["commits"] += "," + strconv.FormatInt(e.Offset, 10)
			low := min(f.Ranges[0].First, e.Offset)
			f.Ranges, f.Count = kpart.RangeSet{{First: low, Last: high - 1}}, high-low
			f.Message = fmt.Sprintf("commits of %s are lower than %d already committed: offsets %d-%d will be delivered again (or were committed by mistake)",
				strings.ReplaceAll(f.Facts["commits"], ",", ", "), high, low, high-1)
			if len(f.Evidence) < 8 {
				f.Evidence = append(f.Evidence, Evidence{e.Ref, fmt.Sprintf("committed %d", e.Offset)})
			}
			return
		}
	}
	a.regressions = appendCapped(a.regressions, Finding{Rule: RuleCommitRegression, Severity: SevWarn,
		Topic: e.Topic, Partition: e.Partition, Ranges: kpart.RangeSet{{First: e.Offset, Last: high - 1}}, Count: high - e.Offset,
		Message:  fmt.Sprintf("commit of %d is lower than %d already committed: offsets %d-%d will be delivered again (or were committed by mistake)", e.Offset, high, e.Offset, high-1),
		Facts:    map[string]string{"committed_before": strconv.FormatInt(high, 10), "commits": strconv.FormatInt(e.Offset, 10)},
		Evidence: []Evidence{{highRef, fmt.Sprintf("committed %d", high)}, {e.Ref, fmt.Sprintf("committed %d", e.Offset)}}})
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
		last.Ranges = []kpart.Range{{First: last.Ranges[0].First, Last: e.Ranges[0].Last}}
		last.Count++
		last.lazy, last.remaining, last.Detail = lazyDelivered, Unknown, ""
		return
	}
	e.Count = int(kpart.RangeSet(e.Ranges).Count())
	a.lazyEntry(e, lazyDelivered)
}

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
