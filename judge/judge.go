// Package judge is kstranded's one answer to its one question: which records of a
// partition did the group commit past without the application ever processing them?
// Every verdict in the product is this package's: inspect and rewind's plan, trace parse
// (with or without --group), repro and simulate at each phase, repro consume.
//
// Its input says, per partition, what is known and what is not: what was delivered (and
// from which evidence), the committed offset (known or not), what the partition's
// offsets hold (read from the broker, from the producer's acknowledgements, from a log's
// fetch lines; unknown where none of them speaks), the log start and last stable offset.
// Its output is the verdict with the ranges it rests on, the safe rewind offset, and the
// basis: one sentence per kind of evidence counted.
//
// The rule, offset by offset over the range the evidence speaks for:
//   - delivered: fine (delivered where the partition holds no record is invalid evidence);
//   - not delivered, a record, below the committed offset: LOST;
//   - not delivered, a record, at or above the committed offset: STRANDED, unless the
//     evidence shows the client still holding it (fetched into its cache, not dropped);
//   - not delivered, holds no record (marker, aborted, compacted): nothing to deliver;
//   - not delivered, contents unknown, below the committed offset: not judged (NO RECORD
//     EVIDENCE), never OK;
//   - not delivered, below the log start: deleted before anyone read it (unrecoverable,
//     counted beside LOST).
//
// No delivery evidence is NO EVIDENCE; no commit known is NO COMMIT EVIDENCE: neither is
// an all-clear. What it deliberately does not do: read Kafka, parse files or print; the
// callers gather the evidence and show the judgement.
package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
)

// Unknown marks an offset the evidence does not give.
const Unknown int64 = -1

// Deliveries is what the application says it processed on one partition.
type Deliveries struct {
	Ranges     []kpart.Range // sorted, disjoint
	Duplicates int64         // deliveries beyond the first of the same offset
	Source     string        // the evidence, for the basis ("app.log (JSON lines)")
}

// Commit is the group's committed offset as the evidence knows it.
type Commit struct {
	Known bool
	// Offset is the committed offset at the end of the evidence, -1 when the group has
	// none (nothing is committed past).
	Offset int64
	// Peak is the highest offset the evidence saw committed (Unknown when only Offset is
	// known); a Peak above Offset means the commit moved back since, so records between
	// them are stranded, not lost, and the basis says so.
	Peak   int64
	Source string
}

// Input is everything known about one partition.
type Input struct {
	Topic     string
	Partition int32
	// Deliveries is nil when no delivery evidence speaks for the partition.
	Deliveries *Deliveries
	Commit     Commit
	Contents   Contents
	// From is the lowest offset the evidence speaks for (Unknown: the log start, or 0).
	From int64
	// LogStart, LastStable and HighWatermark as the broker reports them, Unknown when
	// not read. Offsets at or past the last stable offset are not judged (open
	// transactions); offsets below the log start were deleted.
	LogStart      int64
	LastStable    int64
	HighWatermark int64
	// InFlight are offsets the evidence shows the client still holding at its end
	// (fetched into its cache, neither delivered nor dropped): not stranded.
	InFlight kpart.RangeSet
	// Err says why the partition could not be read; the verdict is ERROR.
	Err string
}

// Note is a run of offsets with a remark.
type Note struct {
	First int64
	Last  int64
	What  string
}

// Judgement is the verdict on one partition.
type Judgement struct {
	Delivered  int64 // distinct offsets delivered
	Duplicates int64
	Lost       []kpart.RecordRange
	LostCount  int64
	Stranded   []kpart.RecordRange
	// StrandedCount counts records not delivered, not committed past.
	StrandedCount int64
	// Unrecoverable lists offsets never delivered that were deleted since (retention or
	// DeleteRecords moved the log start past them): below the log start nothing can be
	// re-read, so no rewind restores them. The evidence brackets them: they lie between
	// its first delivered offset and the log start. Their count is of offsets, not
	// records: once deleted, a record cannot be told from a transaction marker. It is a
	// count beside LOST, not a verdict word (any of them makes the partition LOST).
	Unrecoverable      []kpart.RecordRange
	UnrecoverableCount int64
	// Unjudged lists committed-past, undelivered offsets whose contents the evidence
	// does not give: they may be lost records or markers. Their count is of offsets.
	Unjudged      []kpart.RecordRange
	UnjudgedCount int64
	// InFlightCount counts records the client still held at the end of the evidence.
	InFlightCount int64
	// SafeRewind is the lowest restorable offset committed past and not delivered (the
	// first lost record, or an unjudged offset below it): committing it makes the group
	// re-deliver everything lost. nil when nothing is lost.
	SafeRewind *int64
	// NotDeliverable lists undelivered offsets that hold no deliverable record.
	NotDeliverable []Note
	// InvalidEvidence: delivered offsets beyond the high watermark, or on offsets that
	// hold no deliverable record.
	InvalidEvidence []Note
	Verdict         verdict.Verdict
	// Reason says why a verdict judges nothing, or what limits it.
	Reason string
	// Basis is one sentence per kind of evidence the judgement rests on.
	Basis []string
}

// Judged reports whether the judgement is OK, STRANDED or LOST.
func (j Judgement) Judged() bool { return j.Verdict.Judged() }

func empty() Judgement {
	return Judgement{Lost: []kpart.RecordRange{}, Stranded: []kpart.RecordRange{}, Unrecoverable: []kpart.RecordRange{},
		Unjudged: []kpart.RecordRange{}, NotDeliverable: []Note{}, InvalidEvidence: []Note{}, Basis: []string{}}
}

// NotJudged is the judgement of a partition no evidence could be read for: v (a verdict
// that judges nothing) and why.
func NotJudged(v verdict.Verdict, why string) Judgement {
	j := empty()
	j.Verdict, j.Reason = v, why
	return j
}

// Judge decides one partition.
func Judge(in Input) Judgement {
	j := empty()
	d := in.Deliveries
	if d != nil {
		for _, r := range d.Ranges {
			j.Delivered = satAdd(j.Delivered, r.Len())
		}
		j.Duplicates = d.Duplicates
		src := d.Source
		if src == "" {
			src = "the delivery evidence"
		}
		j.Basis = append(j.Basis, fmt.Sprintf("delivered: %d offsets (%s), %d duplicates, from %s", j.Delivered, kpart.Join(d.Ranges), d.Duplicates, src))
	}
	if in.Commit.Known {
		src := in.Commit.Source
		if src == "" {
			src = "the evidence"
		}
		j.Basis = append(j.Basis, fmt.Sprintf("committed: %s, from %s", kpart.OffsetWord(in.Commit.Offset), src))
	}
	if len(in.Contents.Spans) > 0 {
		first, last := in.Contents.Spans[0].First, in.Contents.Spans[len(in.Contents.Spans)-1].Last
		var recs int64
		for _, s := range in.Contents.Spans {
			if s.Kind.Deliverable() {
				recs += s.Last - s.First + 1
			}
		}
		j.Basis = append(j.Basis, fmt.Sprintf("contents: offsets %d-%d known (%d records), from %s", first, last, recs, in.Contents.Source))
	}
	switch {
	case d == nil:
		j.Verdict, j.Reason = verdict.NoEvidence, "no delivery evidence for this partition"
		if in.Err != "" {
			j.Verdict, j.Reason = verdict.Error, in.Err
		}
		return j
	case !in.Commit.Known:
		j.Verdict, j.Reason = verdict.NoCommitEvidence, "the committed offset is not known"
		if in.Err != "" {
			j.Verdict, j.Reason = verdict.Error, in.Err
		}
		return j
	}
	// evidence beyond the high watermark names records that do not exist
	if in.HighWatermark >= 0 {
		for _, r := range d.Ranges {
			if r.Last >= in.HighWatermark {
				j.InvalidEvidence = append(j.InvalidEvidence, Note{max(r.First, in.HighWatermark), r.Last,
					fmt.Sprintf("delivered offsets at or beyond the high watermark %d", in.HighWatermark)})
			}
		}
	}
	logStart := max(in.LogStart, 0)
	committed := in.Commit.Offset
	if committed < 0 {
		committed = logStart // no commit: nothing committed past
	}
	lo := logStart
	if in.From > lo {
		lo = in.From
	}
	j.Unrecoverable, j.UnrecoverableCount = unrecoverable(in, d)
	// judged up to the last stable offset: past it, open transactions decide
	hi := committed
	if end := contentsEnd(in.Contents); end > hi {
		hi = end
	}
	if in.LastStable >= 0 && hi > in.LastStable {
		hi = in.LastStable
	}
	if in.HighWatermark >= 0 && hi > in.HighWatermark {
		hi = in.HighWatermark
	}
	w := walker{j: &j, committed: committed}
	sweep(lo, hi, in.Contents.Spans, d.Ranges, in.InFlight, committed, w.piece)
	w.close()
	if len(j.Lost) > 0 || len(j.Unjudged) > 0 {
		first := int64(math.MaxInt64)
		if len(j.Lost) > 0 {
			first = j.Lost[0].First
		}
		if len(j.Unjudged) > 0 && j.Unjudged[0].First < first && len(j.Lost) > 0 {
			first = j.Unjudged[0].First
		}
		if first != math.MaxInt64 {
			j.SafeRewind = &first
		}
	}
	if in.Commit.Peak > in.Commit.Offset && in.Commit.Offset >= 0 {
		j.Basis = append(j.Basis, fmt.Sprintf("the committed offset reached %d before it moved back to %d: what lies between is judged against %d", in.Commit.Peak, in.Commit.Offset, in.Commit.Offset))
	}
	truncatedBelow := in.Contents.Truncated && in.Contents.TruncatedAt < committed && j.UnjudgedCount > 0
	why := in.Contents.Why
	if why == "" {
		why = "a limit"
	}
	switch {
	case in.Err != "":
		j.Verdict, j.Reason = verdict.Error, in.Err
	case j.LostCount > 0 || j.UnrecoverableCount > 0:
		j.Verdict = verdict.Lost
		switch {
		case truncatedBelow:
			j.Reason = fmt.Sprintf("scan stopped at offset %d (%s); more may be lost below the committed offset %d", in.Contents.TruncatedAt, why, committed)
		case j.UnjudgedCount > 0:
			j.Reason = fmt.Sprintf("offsets %s were committed past and not delivered, but nothing says whether they hold records: more may be lost", kpart.Join(j.Unjudged))
		}
	case truncatedBelow:
		j.Verdict = verdict.Incomplete
		j.Reason = fmt.Sprintf("scan stopped at offset %d (%s) below the committed offset %d", in.Contents.TruncatedAt, why, committed)
	case j.UnjudgedCount > 0:
		j.Verdict = verdict.NoRecordEvidence
		j.Reason = fmt.Sprintf("offsets %s were committed past and not delivered, but nothing says whether they hold records (no read of the partition, no fetch line covers them)", kpart.Join(j.Unjudged))
		if j.StrandedCount > 0 {
			j.Reason += fmt.Sprintf("; %d records stranded above the committed offset", j.StrandedCount)
		}
	case j.StrandedCount > 0:
		j.Verdict = verdict.Stranded
	case in.Contents.Truncated:
		j.Verdict = verdict.OK
		j.Reason = fmt.Sprintf("nothing lost; stranded records counted up to offset %d only (%s)", in.Contents.TruncatedAt, why)
	default:
		j.Verdict = verdict.OK
	}
	if in.LastStable >= 0 && in.Commit.Offset > in.LastStable && in.Err == "" {
		note := fmt.Sprintf("committed offset %d is past the last stable offset %d (open transactions are not judged)", in.Commit.Offset, in.LastStable)
		if j.Reason != "" {
			note = j.Reason + "; " + note
		}
		j.Reason = note
	}
	return j
}

func contentsEnd(c Contents) int64 {
	if len(c.Spans) == 0 {
		return 0
	}
	return c.Spans[len(c.Spans)-1].Last + 1
}

// walker turns the sweep's pieces into runs: a lost (stranded, unjudged) run goes on
// across offsets that hold no record and ends at a delivered offset, an unknown one, the
// committed offset or a record held in flight.
type walker struct {
	j                        *Judgement
	committed                int64
	lost, stranded, unjudged *kpart.RecordRange
}

func (w *walker) close() {
	for _, r := range []struct {
		run **kpart.RecordRange
		out *[]kpart.RecordRange
	}{{&w.lost, &w.j.Lost}, {&w.stranded, &w.j.Stranded}, {&w.unjudged, &w.j.Unjudged}} {
		if *r.run != nil {
			*r.out = append(*r.out, **r.run)
			*r.run = nil
		}
	}
}

func extend(run **kpart.RecordRange, first, last, count int64) {
	if *run == nil {
		*run = &kpart.RecordRange{Range: kpart.Range{First: first}}
	}
	(*run).Last, (*run).Count = last, (*run).Count+count
}

func (w *walker) piece(p piece) {
	n := p.last - p.first + 1
	switch {
	case p.delivered && (!p.known || p.kind.Deliverable()):
		w.close()
	case p.delivered:
		w.close()
		w.j.InvalidEvidence = append(w.j.InvalidEvidence, Note{p.first, p.last, "delivered, but the partition holds " + article(p.kind) + " there"})
	case !p.known:
		if p.first < w.committed {
			if w.unjudged == nil {
				w.close()
			}
			extend(&w.unjudged, p.first, p.last, n)
			w.j.UnjudgedCount += n
		} else {
			w.close()
		}
	case !p.kind.Deliverable():
		w.j.NotDeliverable = appendNote(w.j.NotDeliverable, Note{p.first, p.last, p.kind.String()})
	case p.first < w.committed:
		if w.lost == nil {
			w.close()
		}
		extend(&w.lost, p.first, p.last, n)
		w.j.LostCount += n
	case p.inFlight:
		w.close()
		w.j.InFlightCount += n
	default:
		if w.stranded == nil {
			w.close()
		}
		extend(&w.stranded, p.first, p.last, n)
		w.j.StrandedCount += n
	}
}

// piece is a maximal run of offsets alike in every fact the rule reads.
type piece struct {
	first, last int64
	known       bool
	kind        Kind
	delivered   bool
	inFlight    bool
}

// cursor walks sorted, disjoint ranges in order.
type cursor struct {
	n     int
	first func(i int) int64
	last  func(i int) int64
	i     int
}

// at reports whether o lies in a range, and the last offset of the run from o alike in
// that (inside or outside).
func (c *cursor) at(o int64) (in bool, until int64) {
	for c.i < c.n && c.last(c.i) < o {
		c.i++
	}
	if c.i >= c.n {
		return false, math.MaxInt64
	}
	if c.first(c.i) <= o {
		return true, c.last(c.i)
	}
	return false, c.first(c.i) - 1
}

// sweep calls fn for each piece of [lo, hi), in order, split at every boundary of the
// spans, the deliveries, the in-flight offsets and at committed.
func sweep(lo, hi int64, spans []Span, delivered []kpart.Range, inFlight kpart.RangeSet, committed int64, fn func(piece)) {
	sc := cursor{n: len(spans), first: func(i int) int64 { return spans[i].First }, last: func(i int) int64 { return spans[i].Last }}
	dc := cursor{n: len(delivered), first: func(i int) int64 { return delivered[i].First }, last: func(i int) int64 { return delivered[i].Last }}
	fc := cursor{n: len(inFlight), first: func(i int) int64 { return inFlight[i].First }, last: func(i int) int64 { return inFlight[i].Last }}
	for at := lo; at < hi; {
		known, u1 := sc.at(at)
		del, u2 := dc.at(at)
		fl, u3 := fc.at(at)
		end := min(u1, u2, u3, hi-1)
		if at < committed && end >= committed {
			end = committed - 1
		}
		p := piece{first: at, last: end, known: known, delivered: del, inFlight: fl}
		if known {
			p.kind = spans[sc.i].Kind
		}
		fn(p)
		if end == math.MaxInt64 {
			return
		}
		at = end + 1
	}
}

// unrecoverable returns the undelivered offsets from the evidence's first delivered
// offset up to the log start: deleted before anyone read them.
func unrecoverable(in Input, d *Deliveries) ([]kpart.RecordRange, int64) {
	out := []kpart.RecordRange{}
	if len(d.Ranges) == 0 || in.Err != "" || in.LogStart <= d.Ranges[0].First {
		return out, 0
	}
	var n int64
	at := d.Ranges[0].First
	for _, r := range d.Ranges {
		if r.First >= in.LogStart {
			break
		}
		if r.First > at {
			out = append(out, kpart.Counted(at, r.First-1, r.First-at))
			n += r.First - at
		}
		at = r.Last + 1
	}
	if at < in.LogStart {
		out = append(out, kpart.Counted(at, in.LogStart-1, in.LogStart-at))
		n += in.LogStart - at
	}
	return out, n
}

func article(k Kind) string {
	switch k {
	case Aborted, Absent:
		return "an " + k.String()
	}
	return "a " + k.String()
}

func appendNote(ns []Note, n Note) []Note {
	if l := len(ns); l > 0 && ns[l-1].What == n.What && ns[l-1].Last+1 == n.First {
		ns[l-1].Last = n.Last
		return ns
	}
	return append(ns, n)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Overall is the verdict of several partitions: the worst (verdict.Worse), and NO
// EVIDENCE when none of them could be judged. No partitions at all judge nothing either.
func Overall(js []Judgement) verdict.Verdict {
	v, judged := verdict.OK, false
	for _, j := range js {
		v = verdict.Worse(v, j.Verdict)
		judged = judged || j.Verdict.Judged()
	}
	if !judged {
		v = verdict.Worse(v, verdict.NoEvidence)
	}
	return v
}

// Ranges prints the lost or stranded runs as "82-199,201".
func Ranges(rs []kpart.RecordRange) string { return kpart.Join(rs) }

// SortNotes orders notes by offset.
func SortNotes(ns []Note) {
	sort.Slice(ns, func(i, k int) bool { return ns[i].First < ns[k].First })
}

// Basis joins the basis sentences for prose.
func (j Judgement) BasisText() string { return strings.Join(j.Basis, "; ") }
