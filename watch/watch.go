// Package watch is kstranded's continuous alarm: it follows consumer groups and the
// application's delivery evidence as it is written, and judges each partition at every
// evaluation with the one judge (package judge, the rule inspect uses): LOST, STRANDED,
// OK or not judged, plus STALLED (records waiting past the committed offset, no delivery
// and no commit for a while: the shape of a consumer that silently stopped), a signal of
// its own apart from loss. Lag says nothing of what was delivered: a group whose commit
// jumped past stranded records shows lag 0, and this package is what notices.
//
// Memory is bounded over days: deliveries are kept as ranges, and a partition's ranges
// below its judged floor (the committed offset, once everything below it was judged
// delivered) are forgotten. A checkpoint (Save, Load) lets a restart remember the
// deliveries and verdicts it saw.
//
// What it deliberately does not do: serve HTTP, parse flags or print (cmd does, with the
// Prometheus collector in metrics.go), or write to the cluster.
package watch

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
)

// Stalled is the word for a partition with records waiting and no progress.
const Stalled = "STALLED"

// Cluster is what watch needs from Kafka: inspect's scan, the snapshots of all watched
// groups at once (each evaluation reads every group's commits in one round of requests,
// whatever the number of groups), and the groups.
type Cluster interface {
	inspect.Cluster
	Snapshots(ctx context.Context, groups []string) (*inspect.Snapshots, error)
	ListGroups(ctx context.Context) ([]inspect.Listing, error) // inspect.Kafka's, as inspect --list uses it
}

// Options configures a Watcher.
type Options struct {
	Groups     []string
	GroupRegex *regexp.Regexp
	// Sources are the delivery evidence files followed; Stdin, when set, delivers lines
	// read from standard input (the caller feeds them with Feed).
	Sources []*Source
	// Configure sets up each evidence set before a chunk is read (--pattern, the
	// delivery filter).
	Configure func(*evidence.Set)
	// NoEvidence: no delivery evidence was given at all (no file, no stdin, no OTLP
	// receiver): nothing is judged, commits and stalls are still watched.
	NoEvidence bool
	// Streams name the sources fed with Feed (stdin) and Receivers those fed with
	// FeedDeliveries (OTLP receivers): known from the start, so that one that has given
	// nothing yet is evidence with no delivery in it (NO EVIDENCE), as an empty file is.
	Streams, Receivers []string
	// SpansComplete: every delivery is exported as a span (--otlp-complete). Without it
	// spans prove deliveries but evidence made of spans alone judges nothing
	// (evidence.SampledSpans), as in inspect.
	SpansComplete bool
	StallAfter    time.Duration
	MaxScan       int64
	Now           func() time.Time
}

// Partition is the state of one watched partition.
type Partition struct {
	Group     string
	Topic     string
	Partition int32
	// Floor: offsets below it were judged delivered (or holding no record) and their
	// deliveries forgotten.
	Floor     int64
	Delivered kpart.RangeSet
	// LostTotal counts records seen lost, over the watcher's life (a counter).
	LostTotal  int64
	lostNow    int64
	Committed  int64
	LastStable int64
	// LastProgress is when a delivery or a commit change was last seen.
	LastProgress time.Time
	StalledSince time.Time
	Judgement    judge.Judgement
	Verdict      verdict.Verdict
	Judged       bool
	Seen         bool // judged at the last evaluation (the group still has it)
	// scan is what the partition's offsets were read to hold, kept across evaluations
	// (read): [From, To) of it, the spans of what the offsets hold.
	scan *inspect.Scan
}

// pendingKey names the partition deliveries were read for (topic "" when the evidence
// names none) and the group, when the evidence names it (a span's consumer group):
// deliveries of another group never count for this one.
type pendingKey struct {
	group string
	kpart.TopicPartition
}

// Key names a partition of a group.
type Key struct {
	Group string
	kpart.TopicPartition
}

// Change is a verdict change, one line for systems that alert on logs.
type Change struct {
	Time      time.Time       `json:"time"`
	Group     string          `json:"group"`
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	From      verdict.Verdict `json:"from"`
	To        verdict.Verdict `json:"to"`
	Lost      int64           `json:"lost"`
	Stranded  int64           `json:"stranded"`
	Committed int64           `json:"committed"`
	Stalled   bool            `json:"stalled"`
	// StalledSince: when the partition last progressed (a delivery or a commit change),
	// while it is stalled.
	StalledSince *time.Time `json:"stalled_since"`
	Reason       string     `json:"reason,omitempty"`
}

// SourceStats counts what a followed source gave.
type SourceStats struct {
	Path                    string
	Lines, Counted, Ignored int64
	Malformed, Skipped      int64
	LastLine                time.Time
	// Ambiguous says why the source's deliveries are not counted: its lines that carry
	// an offset are of several kinds (seen over every chunk read), and no
	// --delivered-when picks one. Sticky: a source once ambiguous stays so.
	Ambiguous string
	kinds     map[string]evidence.Kind // the application-log kinds counted so far
	// Spans: the source is an OTLP receiver; its counts are spans, not lines.
	Spans bool
	// Format is what the source was read as (the last chunk's).
	Format evidence.Format
	// Missing: the followed file does not exist (yet); Err: why its last read failed.
	Missing bool
	Err     string
}

// Evaluation is the outcome of one Evaluate.
type Evaluation struct {
	At       time.Time
	Duration time.Duration
	Up       bool   // the cluster answered
	Err      string // why not
	Groups   int
	Watched  []string // the groups watched (Groups of them)
	// GroupErrs: the groups the cluster answered for but could not snapshot (unknown,
	// no committed offsets, an error for that group alone), and why. Their partitions
	// are not seen: no verdict from stale data.
	GroupErrs map[string]string
	// Requests: admin requests the snapshots took (scans not included).
	Requests int
	// SourceErrs: why followed sources could not be read at this evaluation.
	SourceErrs []string
}

// Watcher holds the state across evaluations.
type Watcher struct {
	opt     Options
	cl      Cluster
	parts   map[Key]*Partition
	pending map[pendingKey]kpart.RangeSet // deliveries read and not yet taken by a watched partition
	why     string                        // why the evidence supports no verdict at this evaluation ("" when it does)
	taken   map[pendingKey]bool           // pending deliveries a watched partition took at this evaluation
	stats   map[string]*SourceStats
	last    Evaluation
	errors  int64
	evals   int64
}

// New returns a watcher over cl.
func New(cl Cluster, opt Options) *Watcher {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	w := &Watcher{opt: opt, cl: cl, parts: map[Key]*Partition{}, pending: map[pendingKey]kpart.RangeSet{}, taken: map[pendingKey]bool{}, stats: map[string]*SourceStats{}}
	for _, s := range opt.Sources {
		w.stats[s.Path] = &SourceStats{Path: s.Path}
	}
	for _, name := range opt.Streams {
		w.stats[name] = &SourceStats{Path: name}
	}
	for _, name := range opt.Receivers {
		w.stats[name] = &SourceStats{Path: name, Spans: true, Format: evidence.FormatOTLP}
	}
	return w
}

// Feed reads lines (complete, newline-terminated) of delivery evidence from source name.
func (w *Watcher) Feed(name string, lines []byte) {
	if len(lines) == 0 {
		return
	}
	st := w.stats[name]
	if st == nil {
		st = &SourceStats{Path: name}
		w.stats[name] = st
	}
	set := evidence.NewSet()
	if w.opt.Configure != nil {
		w.opt.Configure(set)
	}
	if err := set.Read(bytes.NewReader(lines), name); err != nil {
		st.Malformed += int64(bytes.Count(lines, []byte{'\n'}))
		return
	}
	for _, src := range set.Sources {
		st.Format = src.Format
		st.Lines += int64(src.Lines + src.Ignored + src.Malformed)
		st.Counted += int64(src.Lines)
		st.Ignored += int64(src.Ignored)
		st.Malformed += int64(src.Malformed)
		if set.When != nil {
			continue
		}
		for _, k := range src.Kinds {
			if !k.AppLog || !k.Counted {
				continue
			}
			if st.kinds == nil {
				st.kinds = map[string]evidence.Kind{}
			}
			prev := st.kinds[k.Name]
			k.Lines += prev.Lines
			if prev.Lines > 0 {
				k.First, k.Last = min(k.First, prev.First), max(k.Last, prev.Last)
			}
			st.kinds[k.Name] = k
		}
		if st.Ambiguous == "" && len(st.kinds) > 1 {
			var ks []evidence.Kind
			for _, k := range st.kinds {
				ks = append(ks, k)
			}
			sort.Slice(ks, func(i, j int) bool { return ks[i].Name < ks[j].Name })
			st.Ambiguous = evidence.Ambiguity(name, ks)
		}
	}
	if st.Ambiguous != "" {
		return // not a delivery is counted from a source that does not say which lines mean delivered
	}
	if set.Sources[len(set.Sources)-1].Lines > 0 {
		st.LastLine = w.opt.Now()
	}
	for tp, p := range set.Parts {
		k := pendingKey{TopicPartition: tp}
		rs := w.pending[k]
		for _, r := range p.Delivered {
			rs.Add(r.First, r.Last)
		}
		w.pending[k] = rs
	}
}

// FeedDeliveries takes the deliveries OpenTelemetry spans gave (an OTLP receiver, source
// name) and counts the spans. Like Feed, the caller holds the lock Evaluate runs under.
func (w *Watcher) FeedDeliveries(name string, ds []evidence.SpanDelivery, c evidence.SpanCounts) {
	st := w.stats[name]
	if st == nil {
		st = &SourceStats{Path: name, Spans: true}
		w.stats[name] = st
	}
	st.Format = evidence.FormatOTLP
	st.Lines += int64(c.Spans)
	st.Counted += int64(c.Deliveries)
	st.Ignored += int64(c.Ignored)
	st.Malformed += int64(c.Malformed)
	if len(ds) > 0 {
		st.LastLine = w.opt.Now()
	}
	for _, d := range ds {
		// a span that names its consumer group counts for that group alone
		k := pendingKey{group: d.Group, TopicPartition: kpart.TopicPartition{Topic: d.Topic, Partition: d.Partition}}
		rs := w.pending[k]
		rs.Add(d.Offset, d.Offset)
		w.pending[k] = rs
	}
}

// insufficient says why the evidence read so far supports no verdict, by inspect's rule
// (evidence.Set.Insufficient over every source's counts since the start): no delivery
// in any source (an empty or missing file, a receiver that had no span), a source
// mostly malformed, spans alone without SpansComplete.
func (w *Watcher) insufficient() string {
	set := evidence.NewSet()
	if w.opt.Configure != nil {
		w.opt.Configure(set)
	}
	set.SpansComplete = w.opt.SpansComplete
	var missing []string
	for _, st := range w.Sources() {
		set.Sources = append(set.Sources, evidence.Source{Name: st.Path, Format: st.Format, Records: st.Counted,
			Lines: int(st.Counted), Ignored: int(st.Ignored), Malformed: int(st.Malformed)})
		switch {
		case st.Missing:
			missing = append(missing, st.Path+" does not exist (yet)")
		case st.Err != "":
			missing = append(missing, st.Err)
		}
	}
	why := set.Insufficient()
	if why != "" && len(missing) > 0 {
		why += "; " + strings.Join(missing, "; ")
	}
	return why
}

// neverJudged: the evidence given can never support a verdict (none at all, or spans
// that may be sampled and nothing else): deliveries are kept only for the highest
// delivered offset, so memory stays bounded.
func (w *Watcher) neverJudged() bool {
	return w.opt.NoEvidence || (!w.opt.SpansComplete && len(w.opt.Receivers) > 0 && len(w.opt.Sources) == 0 && len(w.opt.Streams) == 0)
}

// poll reads every followed source.
func (w *Watcher) poll() []string {
	var errs []string
	for _, s := range w.opt.Sources {
		b, err := s.Poll()
		w.Feed(s.Path, b)
		if st := w.stats[s.Path]; st != nil {
			st.Skipped, st.Missing, st.Err = s.Skipped, s.Missing, ""
			if err != nil {
				st.Err = fmt.Sprintf("%s: %v", s.Path, err)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", s.Path, err))
		}
	}
	return errs
}

// groups lists the groups to watch now.
func (w *Watcher) groups(ctx context.Context) ([]string, error) {
	out := append([]string(nil), w.opt.Groups...)
	if w.opt.GroupRegex != nil {
		all, err := w.cl.ListGroups(ctx)
		if err != nil {
			return nil, err
		}
		for _, g := range all {
			if w.opt.GroupRegex.MatchString(g.ID) {
				out = append(out, g.ID)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// Evaluate reads the evidence written since the last one, then judges every partition of
// every watched group. It returns the verdict changes. When the cluster does not answer,
// the partitions keep their state but are marked not seen: metrics then say the broker is
// down and give no verdict from stale data.
func (w *Watcher) Evaluate(ctx context.Context) ([]Change, error) {
	start := w.opt.Now()
	w.evals++
	srcErrs := w.poll()
	w.why = w.insufficient()
	ev := Evaluation{At: start, Up: true, SourceErrs: srcErrs}
	defer func() {
		ev.Duration = w.opt.Now().Sub(start)
		w.last = ev
	}()
	for _, p := range w.parts {
		p.Seen = false
	}
	groups, err := w.groups(ctx)
	if err != nil {
		w.errors++
		ev.Up, ev.Err = false, err.Error()
		return nil, err
	}
	ev.Groups, ev.Watched = len(groups), groups
	ss, err := w.cl.Snapshots(ctx, groups)
	if err != nil {
		w.errors++
		ev.Up, ev.Err = false, err.Error()
		return nil, err
	}
	ev.Requests = ss.Requests
	var changes []Change
	answered := map[string]bool{}
	for _, g := range groups {
		if gerr := ss.Errs[g]; gerr != nil {
			w.errors++
			if ev.GroupErrs == nil {
				ev.GroupErrs = map[string]string{}
			}
			ev.GroupErrs[g] = gerr.Error()
			continue
		}
		answered[g] = true
		snap := ss.Groups[g]
		topics := map[string]bool{}
		for _, o := range snap.Partitions {
			topics[o.Topic] = true
		}
		for _, o := range snap.Partitions {
			c, err := w.judge(ctx, g, o, len(topics) == 1, start)
			if err != nil {
				w.errors++
				ev.Up, ev.Err = false, err.Error()
				return changes, err
			}
			if c != nil {
				changes = append(changes, *c)
			}
		}
	}
	// The watched partitions took their deliveries: they are kept there (and forgotten
	// below the floor), not here. Deliveries no watched partition took stay for a group
	// that has not committed yet (read before its first commit, they are still what it
	// delivered); a group gone from the watch (regex, deleted) is forgotten.
	for k, rs := range w.pending {
		if w.taken[k] {
			delete(w.pending, k)
		} else {
			w.pending[k] = rs
		}
	}
	clear(w.taken)
	watched := map[string]bool{}
	for _, g := range groups {
		watched[g] = true
	}
	for k, p := range w.parts {
		if !watched[k.Group] || (answered[k.Group] && !p.Seen) {
			delete(w.parts, k)
		}
	}
	if len(srcErrs) > 0 {
		ev.Err = fmt.Sprint(srcErrs)
	}
	return changes, ctx.Err()
}

// judge judges one partition of group g.
func (w *Watcher) judge(ctx context.Context, g string, o inspect.Offsets, single bool, now time.Time) (*Change, error) {
	k := Key{g, kpart.TopicPartition{Topic: o.Topic, Partition: o.Partition}}
	p := w.parts[k]
	if p == nil {
		p = &Partition{Group: g, Topic: o.Topic, Partition: o.Partition, Floor: -1, Committed: -2, LastProgress: now}
		w.parts[k] = p
	}
	p.Seen = true
	// deliveries read since the last evaluation join the partition's ranges
	grew := false
	for _, tp := range []kpart.TopicPartition{k.TopicPartition, {Partition: o.Partition}} {
		if tp.Topic == "" && !single {
			continue
		}
		for _, pk := range []pendingKey{{TopicPartition: tp}, {group: g, TopicPartition: tp}} {
			rs, ok := w.pending[pk]
			if !ok {
				continue
			}
			w.taken[pk] = true
			for _, r := range rs {
				if p.Delivered.Contains(r.First) && p.Delivered.Contains(r.Last) {
					continue
				}
				p.Delivered.Add(r.First, r.Last)
				grew = true
			}
		}
	}
	if o.Committed != p.Committed {
		if p.Committed != -2 {
			grew = true
		}
		p.Committed = o.Committed
	}
	p.LastStable = o.LastStable
	if grew {
		p.LastProgress = now
	}
	before := p.Verdict
	var j judge.Judgement
	switch {
	case o.Err != "":
		j = judge.NotJudged(verdict.Error, o.Err)
	case w.opt.NoEvidence:
		j = judge.NotJudged(verdict.NoEvidence, "no delivery evidence given (--delivered, --otlp): commits and stalls only")
	case w.ambiguous() != "":
		j = judge.NotJudged(verdict.NoEvidence, w.ambiguous())
	case w.why != "":
		j = judge.NotJudged(verdict.NoEvidence, w.why)
	default:
		win := o
		if p.Floor > win.LogStart {
			win.LogStart = p.Floor
		}
		ro, sc := p.read(ctx, w.cl, win, w.opt.MaxScan)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		o.Err = ro.Err
		var ev *evidence.Partition
		if len(p.Delivered) > 0 {
			ev = &evidence.Partition{Delivered: p.Delivered}
		}
		in := inspect.Input(o, ev, sc, "the followed delivery evidence")
		if p.Floor > 0 {
			in.From = p.Floor
		}
		j = judge.Judge(in)
	}
	p.Judgement, p.Verdict, p.Judged = j, j.Verdict, j.Verdict.Judged()
	if j.LostCount+j.UnrecoverableCount > p.lostNow {
		p.LostTotal += j.LostCount + j.UnrecoverableCount - p.lostNow
	}
	p.lostNow = j.LostCount + j.UnrecoverableCount
	// forget what is judged: everything below the committed offset was delivered or
	// holds no record
	if p.Judged && j.LostCount == 0 && j.UnjudgedCount == 0 && j.UnrecoverableCount == 0 && o.Committed > p.Floor {
		p.Floor = o.Committed
		p.Delivered = p.Delivered.Within(p.Floor, 1<<62)
	}
	if w.neverJudged() && o.Committed >= 0 && len(p.Delivered) > 0 {
		// nothing will ever be judged from this evidence: below the commit only the
		// highest delivered offset matters (kstranded_delivered_offset)
		hi := p.Delivered[len(p.Delivered)-1].Last
		p.Delivered = p.Delivered.Within(o.Committed, 1<<62)
		if len(p.Delivered) == 0 {
			p.Delivered.Add(hi, hi)
		}
	}
	// stalled: records waiting past the commit, and no delivery and no commit for a while
	waiting := o.Err == "" && o.Committed >= 0 && o.LastStable > o.Committed
	if waiting && w.opt.StallAfter > 0 && now.Sub(p.LastProgress) >= w.opt.StallAfter {
		if p.StalledSince.IsZero() {
			p.StalledSince = p.LastProgress
		}
	} else {
		p.StalledSince = time.Time{}
	}
	to := p.Verdict
	wasStalled := before == Stalled
	if !p.StalledSince.IsZero() && (to == verdict.OK || to == verdict.Stranded || !to.Judged()) && to != verdict.Lost {
		to = Stalled
	}
	if to == before || (wasStalled && to == Stalled) {
		p.Verdict = to
		return nil, nil
	}
	p.Verdict = to
	var since *time.Time
	if !p.StalledSince.IsZero() {
		s := p.StalledSince.UTC()
		since = &s
	}
	return &Change{Time: now, Group: g, Topic: o.Topic, Partition: o.Partition, From: before, To: to, Lost: j.LostCount + j.UnrecoverableCount,
		Stranded: j.StrandedCount, Committed: o.Committed, Stalled: since != nil, StalledSince: since, Reason: j.Reason}, nil
}

// ambiguous says why a source's deliveries are not counted ("" when every source's are).
func (w *Watcher) ambiguous() string {
	for _, st := range w.Sources() {
		if st.Ambiguous != "" {
			return st.Ambiguous
		}
	}
	return ""
}

// Partitions returns the partitions' state, in group, topic, partition order.
func (w *Watcher) Partitions() []Partition {
	out := make([]Partition, 0, len(w.parts))
	for _, p := range w.parts {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, k int) bool {
		a, b := out[i], out[k]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

// Sources returns the evidence sources' counts.
func (w *Watcher) Sources() []SourceStats {
	out := make([]SourceStats, 0, len(w.stats))
	for _, s := range w.stats {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Path < out[k].Path })
	return out
}

// Last is the last evaluation; Errors and Evaluations count them all.
func (w *Watcher) Last() Evaluation { return w.last }

// Errors is the number of evaluations that failed.
func (w *Watcher) Errors() int64 { return w.errors }

// Evaluations is the number of evaluations run.
func (w *Watcher) Evaluations() int64 { return w.evals }
