package trace

import (
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/kstranded/kstranded/evidence"
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
	seen        map[string]*int // the events of each client name (countName)
	lastName    string          // the name countName counted last, and its count in seen
	lastSeen    *int
	rangeBlock  []kpart.Range // oneRange's block
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
		settingRef: map[string]Ref{}, declared: map[string]int{}, seen: map[string]*int{},
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
