// Package evidence reads delivery evidence: files that say which Kafka records an
// application actually processed. `kstranded inspect --delivered` uses it to tell lost
// records from delivered ones, and `kstranded rewind` will reuse it.
//
// Accepted forms, auto-detected per line and named in Set.Sources; a file may be
// gzipped (detected by its magic bytes, whatever its name):
//
//   - kstranded.trace/v1 JSON lines (`repro --trace`): "serve" events give partition and
//     offsets; the topic comes from the "run" header line.
//   - `kstranded trace parse -o json` output: one JSON document whose "schema" starts with
//     "kstranded.trace-parse/" (see TraceParseDoc for the shape this package expects).
//   - JSON lines as applications log them (pino, winston, bunyan, ...): "partition" and
//     "offset" as numbers or numeric strings (kafkajs-style clients give message.offset
//     as a string), "topic" optional, at the top level or nested one level under "msg",
//     "message", "record" or "kafka". JSON lines that name no partition and offset are
//     other log lines: ignored, and counted as such.
//   - text lines, any mix of: "TOPIC PARTITION OFFSET", "[TOPIC/]PARTITION:OFFSET" and
//     ranges "[TOPIC/]PARTITION:FIRST-LAST" (inclusive). '#' starts a comment.
//   - OpenTelemetry traces as OTLP JSON (the collector's file exporter: one TracesData
//     per line, or one document), detected by the resourceSpans key: every consumer
//     "process" span (kafkajs instrumentation and the others) gives a delivery, read from
//     the semantic-convention attributes of every version (otlp.go). Other spans are
//     ignored and counted. A sampled trace proves deliveries only: see otlp.go.
//   - with a Pattern (--pattern REGEXP), every line of every file is read through it
//     instead, as `trace parse --pattern` reads it: lines it does not match are ignored.
//
// Every line is of a kind (Kind), and each source lists its kinds with what was
// counted and what was ignored. JSON log lines that carry a delivery are told apart by
// their message (the top-level msg or message string); a source whose deliveries come
// from more than one such kind (pino's "processing" and "processed", a heartbeat that
// mentions an offset) is ambiguous (Ambiguity) until a When (--delivered-when) picks the
// lines that mean delivered. Traces, trace parse output and text lines are never
// ambiguous, and a When does not filter them.
//
// Lines that name no topic get the empty topic; the caller resolves it (inspect uses the
// only topic in scope). Malformed lines are counted and the first few kept with their
// line numbers.
//
// No verdict without evidence: Insufficient says when a set cannot support one (no
// delivery read at all, a file whose lines are mostly malformed, or an application log
// whose lines with a partition and an offset are of several kinds and no When says which
// one means delivered: Ambiguity), so that the caller
// says NO EVIDENCE instead of a false all-clear. An empty file reads as no evidence;
// binary data and a truncated gzip are errors.
//
// A file is read as a stream, in memory bounded by its distinct delivered ranges, not
// its size; a line, a gzip's decompressed size and an indented JSON document each have a
// cap, and going past one is said (stream.go).
//
// This package only parses and normalises: it does not talk to Kafka and does not judge
// whether an offset is valid for a partition (inspect does that against the source).
package evidence

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/textenc"
)

// Format names a detected evidence format.
type Format string

// The formats this package detects.
const (
	FormatTrace      Format = "kstranded.trace/v1"
	FormatTraceParse Format = "kstranded trace parse JSON"
	FormatJSONLines  Format = "JSON lines (topic, partition, offset)"
	FormatText       Format = "text"
	FormatPattern    Format = "lines matching --pattern"
	FormatEmpty      Format = "empty"
)

// ErrBinary is returned for a file that is neither text nor gzip: no reader can take
// deliveries from it, and reading it as lines would only count garbage as malformed.
var ErrBinary = errors.New("binary data, not text nor gzip")

// Hint says what evidence this package reads, for a verdict that lacks it.
const Hint = "give --delivered a log of what the application processed: JSON lines with partition and offset " +
	"(numbers or numeric strings, topic optional, also nested under msg/message/record/kafka), text lines " +
	"TOPIC PARTITION OFFSET or TOPIC/PARTITION:FIRST-LAST, a repro --trace, or your application's own log " +
	"with --pattern REGEXP naming (?P<partition>...) and (?P<offset>...)"

// MaxShownMalformed is how many malformed lines are kept for display.
const MaxShownMalformed = 5

// Partition is the evidence for one partition: the delivered offsets as sorted, disjoint
// intervals, and how many deliveries repeated an offset already delivered.
type Partition struct {
	Delivered  []kpart.Range
	Count      int64 // distinct delivered offsets
	Duplicates int64 // deliveries beyond the first of the same offset
	// pend holds the ranges read out of order, not yet merged into Delivered (merge);
	// dup counts the duplicates found so far.
	pend     []kpart.Range
	dup      int64
	extraDup int64 // duplicates stated by a summary (trace parse output)
}

// Contains reports whether offset was delivered.
func (p *Partition) Contains(offset int64) bool {
	if p == nil {
		return false
	}
	i := sort.Search(len(p.Delivered), func(i int) bool { return p.Delivered[i].Last >= offset })
	return i < len(p.Delivered) && p.Delivered[i].First <= offset
}

// Malformed is a line that could not be read.
type Malformed struct {
	Source string `json:"source"`
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// Source describes one evidence file.
type Source struct {
	Name      string
	Format    Format
	Topic     string // the trace's topic, when the file names one
	Group     string // the trace's group, when the file names one
	Gzip      bool
	Records   int64 // deliveries read (before de-duplication)
	Lines     int   // lines (or trace parse entries, or OTLP spans) that named deliveries
	Spans     int   // OTLP JSON: spans read (Lines of them gave a delivery, Ignored did not)
	Ignored   int   // well-formed lines that name no delivery (other log lines, lines --delivered-when left out)
	Malformed int
	// Cut says why the source was not read to its end ("" when it was): a gzip past
	// MaxGunzip once decompressed. What was not read may be what was delivered, so the
	// set is Insufficient.
	Cut string
	// Kinds says what was counted and what was ignored, per kind of line: the counted
	// kinds first, each in the order they first appear. Their Lines add up to Lines +
	// Ignored.
	Kinds []Kind
}

// Set is the evidence from all files.
type Set struct {
	Sources   []Source
	Malformed []Malformed // the first MaxShownMalformed per source
	Parts     map[kpart.TopicPartition]*Partition
	// Pattern, when set before reading, reads every line through it (--pattern).
	Pattern *Pattern
	// When, when set before reading, picks the application log lines that are
	// deliveries (--delivered-when); the others are ignored, counted under their kind.
	When *When
	// SpansComplete: the operator states that every delivery is exported as a span
	// (--otlp-complete). Without it, OpenTelemetry spans prove deliveries but a missing
	// span proves nothing (traces are often sampled): evidence made of spans alone is
	// Insufficient.
	SpansComplete bool
}

// SampledSpans is why evidence made of OpenTelemetry spans alone supports no verdict
// unless the operator states that every delivery is exported (--otlp-complete).
const SampledSpans = "the only delivery evidence is OpenTelemetry spans, which may be sampled: a span proves a delivery, " +
	"a missing span proves nothing, so no record can be judged lost; pass --otlp-complete if every delivery is exported"

// spansOnly says whether every source that gave deliveries is made of spans.
func (s *Set) spansOnly() bool {
	spans := false
	for _, src := range s.Sources {
		if src.Records == 0 {
			continue
		}
		if src.Format != FormatOTLP {
			return false
		}
		spans = true
	}
	return spans
}

// Insufficient says why the set cannot support a verdict, or "" when it can: no
// delivery read from any file (an empty file, only other log lines, a pattern that
// matched nothing, every line malformed), or a file with more malformed lines than
// delivery lines (the reader did not understand it: what it missed may be what was
// delivered), or, without a When, a source whose deliveries come from more than one kind
// of application log line (Ambiguity), or deliveries from OpenTelemetry spans alone
// without SpansComplete (SampledSpans). The caller says NO EVIDENCE, with Settle,
// instead of judging. inspect, rewind and watch ask it: one rule for every command.
func (s *Set) Insufficient() string {
	if len(s.Sources) == 0 {
		return "no evidence file was read"
	}
	for _, src := range s.Sources {
		if src.Cut != "" {
			return src.Name + ": " + src.Cut
		}
	}
	var records int64
	var malformed, ignored int
	for _, src := range s.Sources {
		records += src.Records
		malformed += src.Malformed
		ignored += src.Ignored
	}
	if records == 0 {
		why := fmt.Sprintf("no delivery found in the evidence (%d malformed lines, %d other lines", malformed, ignored)
		if s.Pattern != nil {
			why += fmt.Sprintf(", --pattern %s matched no delivery", quoteShort(s.Pattern.String()))
		}
		if s.When != nil {
			why += fmt.Sprintf(", %s %s matched no delivery line", WhenFlag, quoteShort(s.When.String()))
		}
		return why + ")"
	}
	if s.When == nil {
		for _, src := range s.Sources {
			if why := Ambiguity(src.Name, src.Kinds); why != "" {
				return why
			}
		}
	}
	for _, src := range s.Sources {
		if src.Malformed > src.Lines {
			return fmt.Sprintf("%s: %d malformed lines and only %d delivery lines: the evidence was not understood", src.Name, src.Malformed, src.Lines)
		}
	}
	if !s.SpansComplete && s.spansOnly() {
		return SampledSpans
	}
	return ""
}

// Describe names the sources for a judgement's basis: "app.log (JSON lines ...), ...".
func (s *Set) Describe() string {
	var parts []string
	for _, src := range s.Sources {
		if src.Format == FormatOTLP {
			parts = append(parts, fmt.Sprintf("%s (%s: %d spans, %d counted as deliveries, %d ignored, %d malformed)",
				src.Name, src.Format, src.Spans, src.Lines, src.Ignored, src.Malformed))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", src.Name, src.Format))
	}
	if len(parts) == 0 {
		return "no evidence file"
	}
	return strings.Join(parts, ", ")
}

// Settle says what would let the set support a verdict, for a caller that says NO
// EVIDENCE with Insufficient's reason: for ambiguous kinds of line, the flag that picks
// one (the reason lists them); else what evidence this package reads (Hint).
func (s *Set) Settle() string {
	if s.When == nil {
		for _, src := range s.Sources {
			if Ambiguity(src.Name, src.Kinds) != "" {
				return "to judge, name the kind of line that means delivered with " + WhenFlag
			}
		}
	}
	if !s.SpansComplete && s.spansOnly() {
		return "to judge, pass --otlp-complete if every delivery is exported as a span, or give a delivery log"
	}
	return "to judge, " + Hint
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{Parts: map[kpart.TopicPartition]*Partition{}} }

// MalformedTotal is the number of malformed lines over all sources.
func (s *Set) MalformedTotal() int {
	n := 0
	for _, src := range s.Sources {
		n += src.Malformed
	}
	return n
}

// Topics lists the topics the evidence speaks about (the empty topic included).
func (s *Set) Topics() []string {
	seen := map[string]bool{}
	for _, src := range s.Sources {
		if src.Topic != "" {
			seen[src.Topic] = true
		}
	}
	for tp := range s.Parts {
		seen[tp.Topic] = true
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Covers reports whether the evidence speaks about topic: a topic named by a source
// (a trace header) or by any line is covered, and its partitions without lines were
// delivered nothing.
func (s *Set) Covers(topic string) bool {
	for _, src := range s.Sources {
		if src.Topic == topic {
			return true
		}
	}
	for tp := range s.Parts {
		if tp.Topic == topic {
			return true
		}
	}
	return false
}

// ResolveTopic gives lines without a topic the topic t.
func (s *Set) ResolveTopic(t string) {
	for tp, p := range s.Parts {
		if tp.Topic != "" {
			continue
		}
		delete(s.Parts, tp)
		tp.Topic = t
		if q, ok := s.Parts[tp]; ok {
			p.merge()
			for _, iv := range p.Delivered {
				q.add(iv)
			}
			q.dup = satAdd(q.dup, p.dup)
			q.extraDup = satAdd(q.extraDup, p.extraDup)
		} else {
			s.Parts[tp] = p
		}
	}
	s.normalize()
}

func (s *Set) add(tp kpart.TopicPartition, iv kpart.Range) {
	p := s.Parts[tp]
	if p == nil {
		p = &Partition{}
		s.Parts[tp] = p
	}
	p.add(iv)
}

// minPend is how many out-of-order ranges a partition holds before it merges them.
const minPend = 1024

// add notes the delivery of iv. Deliveries come mostly in order (a partition's records
// are handed out in offset order), and those extend Delivered at once; the others wait in
// pend until there are as many of them as ranges in Delivered (at least minPend), then
// are merged in one sort and one pass: memory follows the distinct ranges, not the
// deliveries, and the cost stays n log n for input in any order (kpart.RangeSet.Add
// shifts the ranges after an out-of-order insert: quadratic on shuffled input).
func (p *Partition) add(iv kpart.Range) {
	if len(p.pend) == 0 {
		n := len(p.Delivered)
		if n == 0 || iv.First > p.Delivered[n-1].Last+1 {
			p.Delivered = append(p.Delivered, iv)
			return
		}
		if last := &p.Delivered[n-1]; iv.First >= last.First {
			// every earlier range ends before last starts: iv can overlap last only
			if iv.First <= last.Last {
				p.dup = satAdd(p.dup, min(iv.Last, last.Last)-iv.First+1)
			}
			last.Last = max(last.Last, iv.Last)
			return
		}
	} else if n := len(p.pend); p.pend[n-1].Last+1 == iv.First {
		p.pend[n-1].Last = iv.Last // consecutive offsets: one range
		return
	}
	p.pend = append(p.pend, iv)
	if len(p.pend) >= max(minPend, len(p.Delivered)) {
		p.merge()
	}
}

// merge merges pend into Delivered, counting in dup every offset covered again: sorted
// by their first offset, a range can only overlap the last of the ranges merged before it.
func (p *Partition) merge() {
	if len(p.pend) == 0 {
		return
	}
	slices.SortFunc(p.pend, func(a, b kpart.Range) int { return cmp.Compare(a.First, b.First) })
	merged := make([]kpart.Range, 0, len(p.Delivered)+len(p.pend))
	i, j := 0, 0
	for i < len(p.Delivered) || j < len(p.pend) {
		var iv kpart.Range
		if j == len(p.pend) || (i < len(p.Delivered) && p.Delivered[i].First <= p.pend[j].First) {
			iv, i = p.Delivered[i], i+1
		} else {
			iv, j = p.pend[j], j+1
		}
		if n := len(merged); n > 0 && iv.First <= merged[n-1].Last+1 {
			last := &merged[n-1]
			if iv.First <= last.Last {
				p.dup = satAdd(p.dup, min(iv.Last, last.Last)-iv.First+1)
			}
			last.Last = max(last.Last, iv.Last)
			continue
		}
		merged = append(merged, iv)
	}
	p.Delivered = merged
	if cap(p.pend) > 4*minPend {
		p.pend = nil
	} else {
		p.pend = p.pend[:0]
	}
}

// normalize merges what each partition holds out of order and counts its offsets.
func (s *Set) normalize() {
	for _, p := range s.Parts {
		p.merge()
		var distinct int64
		for _, iv := range p.Delivered {
			distinct = satAdd(distinct, iv.Len())
		}
		p.Count, p.Duplicates = distinct, satAdd(p.dup, p.extraDup)
	}
}

// Read parses one evidence file into s, as a stream in bounded memory (stream.go). name
// labels the source ("-" is stdin). A gzip file is decompressed (a truncated one is an
// error; one past MaxGunzip is read up to it, and the source says so: Source.Cut);
// binary data is ErrBinary; a UTF-16 or UTF-32 file is an error naming the encoding.
func (s *Set) Read(r io.Reader, name string) error {
	br := bufio.NewReaderSize(r, headSize)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", name, err)
	}
	gz := isGzip(magic)
	var capped *capReader
	what := name
	if gz {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", name, err)
		}
		capped = &capReader{r: zr, left: gunzipCap}
		br = bufio.NewReaderSize(capped, headSize)
		what = name + ": gzip"
	}
	// A UTF-8 byte-order mark would make the first line malformed; UTF-16 is an error
	// that names the encoding (not "binary data").
	head, err := br.Peek(headSize)
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", what, err)
	}
	skip, err := textenc.BOM(head)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if looksBinary(head[skip:]) {
		return fmt.Errorf("%s: %w", name, ErrBinary)
	}
	_, _ = br.Discard(skip)
	src, err := s.parse(br, name)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	src.Gzip = gz
	if capped != nil && capped.over {
		src.Cut = fmt.Sprintf("more than %s once decompressed (the most a gzip is read for): read the first %s only, and what was not read "+
			"may be what was delivered; a larger log can be read whole from stdin: zcat FILE | kstranded ... --delivered -", bytesText(gunzipCap), bytesText(gunzipCap))
	}
	s.normalize()
	return nil
}

// bytesText is n in GiB or MiB when it is a whole number of them, else in bytes.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func isGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// looksBinary: a NUL byte, or more than a quarter of invalid UTF-8 or control bytes,
// in the first 64 KiB. Logs are text; ANSI colour codes (ESC) and tabs are text too.
func looksBinary(data []byte) bool {
	head := data[:min(len(data), 64<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if (r == utf8.RuneError && n == 1) || (r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != 0x1b) {
			bad++
		}
		i += n
	}
	return bad*4 > len(head)
}

// Parse adds the evidence in data (one file's contents, after its gzip and BOM checks) to
// s without normalising. Callers outside this package use Read; Parse is exported for the
// fuzz target.
func (s *Set) Parse(data []byte, name string) {
	_, _ = s.parse(bufio.NewReaderSize(bytes.NewReader(data), headSize), name) // a bytes.Reader has no error
}

// parse reads one input into a new source, which it returns (nil with an error).
func (s *Set) parse(br *bufio.Reader, name string) (*Source, error) {
	src := Source{Name: name}
	p := &parser{set: s, src: &src}
	if s.When != nil {
		p.notWhen = "not " + WhenFlag + " " + s.When.String()
	}
	err := p.parse(br)
	src.Kinds = listKinds(p.kinds)
	s.Sources = append(s.Sources, src)
	if err != nil {
		return nil, err
	}
	return &s.Sources[len(s.Sources)-1], nil
}
