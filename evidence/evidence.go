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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/textenc"
	"github.com/kstranded/kstranded/traceevent"
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

// Kind is one kind of line in a source, and whether its lines were counted as
// deliveries. JSON log lines that carry a partition and an offset are told apart by
// their message (the top-level msg or message string: MessageOf), so that a log with
// "processing" and "processed" lines, or heartbeats that mention an offset, shows each
// kind with its count and offsets; other lines are one kind per format ("serve events",
// "text (ranges)", "other log lines", ...).
type Kind struct {
	Name string // `msg=processed`, `msg="heartbeat ok, lag check"`, "serve events", ...
	// Field and Value: the message field (msg or message) and its value, for a kind of
	// JSON log line told apart by its message; empty otherwise. Varies: the kind's lines
	// hold many messages that differ in words holding a digit ("processed order 81",
	// "processed order 82"), and Value shows those words as <n>.
	Field, Value string
	Varies       bool
	// AppLog: a kind of application log line that carries deliveries (JSON lines, lines
	// read through --pattern). When one source has more than one such kind and no When
	// picks among them, the evidence is ambiguous (Ambiguity).
	AppLog  bool
	Counted bool // its lines were read as deliveries
	Lines   int
	// First and Last are the lowest and highest offset its lines name, over all
	// partitions; -1 when its lines name none.
	First, Last int64
	Sample      string // the first line of the kind, cut to 120 bytes
	Why         string // for a kind not counted: why its lines were ignored
}

// Ambiguity says why a source's deliveries cannot be taken as they are, or "": more than
// one kind of application log line carries a partition and an offset, and nothing (no
// When) said which one means "delivered". Counting them all would count a record the
// handler started but never finished ("processing" without "processed"), or a heartbeat
// that mentions an offset, as delivered: a rewind planned from it skips records. The
// reason lists each kind with its line count and offsets and names the flag.
func Ambiguity(source string, kinds []Kind) string {
	var app []Kind
	for _, k := range kinds {
		if k.AppLog && k.Counted {
			app = append(app, k)
		}
	}
	if len(app) < 2 {
		return ""
	}
	const shown = 6
	var parts []string
	for i, k := range app {
		if i == shown && len(app) > shown+1 {
			parts = append(parts, fmt.Sprintf("and %d more", len(app)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Name, k.Tally()))
	}
	return fmt.Sprintf("%s: %d kinds of line carry a partition and an offset: %s; counting them all could count records "+
		"the handler never finished as delivered: say which kind means delivered with %s", source, len(app),
		strings.Join(parts, ", "), suggestWhen(app))
}

// Tally is "83 lines, offsets 0-201" ("3 lines" when they name no offset; "1 line,
// offset 82").
func (k Kind) Tally() string {
	s := fmt.Sprintf("%d lines", k.Lines)
	if k.Lines == 1 {
		s = "1 line"
	}
	if k.First >= 0 {
		if k.First == k.Last {
			s += fmt.Sprintf(", offset %d", k.First)
		} else {
			s += fmt.Sprintf(", offsets %d-%d", k.First, k.Last)
		}
	}
	return s
}

// looksDone is a message that says a handler finished a record.
var looksDone = regexp.MustCompile(`(?i)\b(processed|handled|delivered|consumed|done|completed?|finished|succeeded|success)\b`)

// suggestWhen is the flag for the kind that reads most like a finished record (else
// the first), or the flag's grammar when the kinds have no message.
func suggestWhen(kinds []Kind) string {
	pick := -1
	for i, k := range kinds {
		if k.Field != "" && looksDone.MatchString(k.Value) {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, k := range kinds {
			if k.Field != "" {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return WhenFlag + " FIELD=VALUE (or FIELD~REGEXP, or ~REGEXP on the whole line)"
	}
	k := kinds[pick]
	expr := k.Field + "=" + k.Value
	if k.Varies {
		parts := strings.Split(k.Value, "<n>")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		expr = k.Field + "~^" + strings.Join(parts, `\S+`) + "$"
	}
	return fmt.Sprintf("%s %s (or FIELD=VALUE, FIELD~REGEXP, ~REGEXP on the whole line)", WhenFlag, shellWord(expr))
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// messageKindName names a kind by its message: msg=processed, msg="two words".
func messageKindName(field, value string) string {
	if value != "" && strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-") == "" {
		return field + "=" + value
	}
	return field + "=" + strconv.Quote(value)
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

type parser struct {
	set     *Set
	src     *Source
	shown   int
	topic   string // trace header topic
	inTrace bool   // a kstranded.trace/v1 line was seen: JSON lines are trace events
	kinds   []*tally
	byKey   map[tallyKey]*tally
	shapes  map[string]string // shapeOf's memory
	notWhen string            // why a line the When does not match is ignored
	// pend: the offsets the line being read named (add and span widen it), for its
	// kind's First and Last once the line's kind is known.
	pend    kpart.Range
	hasPend bool
	// dec decodes JSON lines (decodeObject), line what it reads.
	dec  *json.Decoder
	line *strings.Reader
}

// The kinds of line that are not told apart by a message.
const (
	kindServe         = "serve events"
	kindTraceOther    = "other trace events"
	kindTraceParse    = "trace parse partition entries"
	kindOtherLog      = "other log lines"
	kindPattern       = "lines matching --pattern"
	kindNoPattern     = "other lines"
	kindJSONNoMsg     = "JSON lines without a msg or message"
	kindOtherMessages = "JSON lines with other messages"
	whyNoDelivery     = "no partition and offset"
	whyTraceOther     = "only serve events name deliveries"
	whyNoPatternHit   = "--pattern does not match them"
)

// kind counts one line as being of kind k (Name, Field, Value, AppLog, Counted and Why
// set) with the offsets the line named (add, span).
//
// Messages that differ only in words holding a digit ("processed order 81", "processed
// order 82") are one shape: up to maxShapeValues different messages of a shape stay
// kinds of their own ("stage 1 done" and "stage 2 done" may well mean different things),
// more are one kind whose Value shows the words as <n> (Varies). A source keeps at most
// maxKinds kinds; the lines of any more are one kind, "other messages".
func (p *parser) kind(k Kind, line string) {
	if k.Field == "" {
		if !p.countPlain(k) {
			p.newTally(k, "", line)
		}
		return
	}
	shape := p.shapeOf(k.Value)
	key := tallyKey{field: k.Field, shape: shape, counted: k.Counted}
	t := p.byKey[key]
	if t == nil && len(p.kinds) >= maxKinds {
		k = Kind{Name: kindOtherMessages, AppLog: true, Counted: k.Counted, Why: k.Why}
		if !p.countPlain(k) {
			p.newTally(k, "", line)
		}
		return
	}
	if t == nil {
		t = p.newTally(k, shape, line)
		p.byKey[key] = t
	} else {
		p.widen(&t.Kind)
	}
	if k.Field != "" && !t.overflow {
		var sub *Kind
		for _, e := range t.subs {
			if e.Value == k.Value {
				sub = e
			}
		}
		switch {
		case sub != nil:
			p.widen(sub)
		case len(t.subs) < maxShapeValues:
			sub = newKind(k, line)
			p.widen(sub)
			t.subs = append(t.subs, sub)
		default:
			t.overflow, t.subs = true, nil
		}
	}
	p.hasPend = false
}

// shapeOf is the message with its words that hold a digit as <n>, remembered for the
// messages seen most (a log repeats its messages).
func (p *parser) shapeOf(msg string) string {
	if sh, ok := p.shapes[msg]; ok {
		return sh
	}
	sh := maskDigitWords(msg)
	if p.shapes == nil {
		p.shapes = map[string]string{}
	}
	if len(p.shapes) < 4096 {
		p.shapes[msg] = sh
	}
	return sh
}

// tallyKey finds the tally of a kind: one not told apart by a message by its name,
// one told apart by its message by the field and the message's shape.
type tallyKey struct {
	name, field, shape string
	counted            bool
}

// countPlain counts the line being read in the kind named k.Name (not told apart by a
// message), without copying the line; it reports false when there is no such kind yet.
func (p *parser) countPlain(k Kind) bool {
	t := p.byKey[tallyKey{name: k.Name, counted: k.Counted}]
	if t == nil {
		return false
	}
	p.widen(&t.Kind)
	p.hasPend = false
	return true
}

// newTally starts counting kind k with the line being read.
func (p *parser) newTally(k Kind, shape, line string) *tally {
	if p.byKey == nil {
		p.byKey = map[tallyKey]*tally{}
	}
	t := &tally{Kind: *newKind(k, line), shape: shape}
	if k.Field == "" {
		p.byKey[tallyKey{name: k.Name, counted: k.Counted}] = t
	}
	p.kinds = append(p.kinds, t)
	p.widen(&t.Kind)
	if k.Field == "" {
		p.hasPend = false
	}
	return t
}

// maxShapeValues is how many different messages of one shape stay kinds of their own;
// maxKinds how many kinds a source keeps.
const (
	maxShapeValues = 4
	maxKinds       = 64
)

// maskDigitWords writes each word of msg that holds a digit (an id, a count, an
// offset) as <n>; a word is a run of letters, digits and _ . : # -.
func maskDigitWords(msg string) string {
	if !strings.ContainsAny(msg, "0123456789") {
		return msg
	}
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:#-", c) >= 0
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if !isWord(msg[i]) {
			b.WriteByte(msg[i])
			i++
			continue
		}
		j, digit := i, false
		for ; j < len(msg) && isWord(msg[j]); j++ {
			digit = digit || msg[j] >= '0' && msg[j] <= '9'
		}
		if digit {
			b.WriteString("<n>")
		} else {
			b.WriteString(msg[i:j])
		}
		i = j
	}
	return b.String()
}

// tally is a kind being counted: the messages of one shape, each counted apart (subs)
// until there are more than maxShapeValues of them (overflow).
type tally struct {
	Kind
	shape    string
	subs     []*Kind
	overflow bool
}

func newKind(k Kind, line string) *Kind {
	if k.Field != "" {
		k.Name = messageKindName(k.Field, k.Value)
	}
	k.First, k.Last = -1, -1
	if len(line) > 120 {
		line = line[:120] + "..."
	}
	k.Sample = line
	return &k
}

// widen counts the line being read in k, with its offsets.
func (p *parser) widen(k *Kind) {
	k.Lines++
	if p.hasPend {
		if k.First < 0 || p.pend.First < k.First {
			k.First = p.pend.First
		}
		if p.pend.Last > k.Last {
			k.Last = p.pend.Last
		}
	}
}

// listKinds lists the tallies as kinds: a shape of few messages as one kind per message,
// a shape of many as one kind with the varying words shown as <n>; counted kinds first.
func listKinds(ts []*tally) []Kind {
	var out []Kind
	for _, t := range ts {
		switch {
		case t.Field == "" || len(t.subs) == 1:
			out = append(out, t.Kind)
		case t.overflow:
			k := t.Kind
			k.Value, k.Varies = t.shape, true
			k.Name = messageKindName(k.Field, k.Value)
			out = append(out, k)
		default:
			for _, sub := range t.subs {
				out = append(out, *sub)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Kind) int { // counted first
		if a.Counted == b.Counted {
			return 0
		}
		if a.Counted {
			return -1
		}
		return 1
	})
	return out
}

// span notes that the line being read names the offsets iv (add calls it; a reader
// calls it for a line it ignores, so that its kind still shows its offsets).
func (p *parser) span(iv kpart.Range) {
	if !p.hasPend {
		p.pend, p.hasPend = iv, true
		return
	}
	p.pend.First = min(p.pend.First, iv.First)
	p.pend.Last = max(p.pend.Last, iv.Last)
}

// messageKind is the kind of a JSON application log line that carries a delivery.
func messageKind(top map[string]any, counted bool, why string) Kind {
	if f, v, ok := MessageOf(top); ok {
		return Kind{Field: f, Value: v, AppLog: true, Counted: counted, Why: why} // named by newKind
	}
	return Kind{Name: kindJSONNoMsg, AppLog: true, Counted: counted, Why: why}
}

func (p *parser) bad(line int, text, reason string) {
	p.src.Malformed++
	p.hasPend = false
	if p.shown < MaxShownMalformed {
		p.shown++
		if len(text) > 120 {
			text = text[:120] + "..."
		}
		p.set.Malformed = append(p.set.Malformed, Malformed{Source: p.src.Name, Line: line, Text: text, Reason: reason})
	}
}

func (p *parser) add(topic string, partition int32, iv kpart.Range) {
	p.span(iv)
	p.src.Records += iv.Len()
	p.set.add(kpart.TopicPartition{Topic: topic, Partition: partition}, iv)
}

// lines reads line-oriented files. Each line is read by its own shape (a JSON object or
// text), so an application log that starts with a banner, mixes client lines with
// delivery lines, or holds both JSON and text is still read; the source's format names
// the kinds found. With a Pattern every line goes through it instead.
func (p *parser) lines(br *bufio.Reader) error {
	lr := newLineReader(br)
	kinds := map[string]bool{}
	var err error
	for n := 1; ; n++ {
		var raw []byte
		var long bool
		raw, long, err = lr.next()
		if err != nil {
			break
		}
		if long {
			p.bad(n, string(raw), tooLong())
			continue
		}
		if pat := p.set.Pattern; pat != nil {
			p.patternLine(pat, n, raw)
			continue
		}
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '{' {
			if p.inTrace || isTraceLine(line) {
				p.inTrace = true
				if p.traceLine(n, line) {
					kinds[string(FormatTrace)] = true
				}
			} else if p.jsonLine(n, line) {
				kinds[string(FormatJSONLines)] = true
			}
			continue
		}
		if k := p.textLine(n, line); k != "" {
			p.src.Lines++
			kinds["text ("+k+")"] = true
			p.kind(Kind{Name: "text (" + k + ")", Counted: true}, line)
		}
	}
	if err == io.EOF {
		err = nil
	}
	switch {
	case p.set.Pattern != nil:
		p.src.Format = FormatPattern
	case len(kinds) == 0 && p.inTrace:
		p.src.Format = FormatTrace
	case len(kinds) == 0 && p.src.Malformed == 0:
		p.src.Format = FormatEmpty
	case len(kinds) == 0:
		p.src.Format = "unknown"
	default:
		p.src.Format = Format(joinKinds(kinds))
	}
	return err
}

// joinKinds names the kinds of lines read: "text (a, b)" for text kinds together.
func joinKinds(kinds map[string]bool) string {
	var other, text []string
	for k := range kinds {
		if t, ok := strings.CutPrefix(k, "text ("); ok {
			text = append(text, strings.TrimSuffix(t, ")"))
		} else {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	sort.Strings(text)
	if len(text) > 0 {
		other = append(other, "text ("+strings.Join(text, ", ")+")")
	}
	return strings.Join(other, " + ")
}

// patternLine reads one line through --pattern, and through --delivered-when when set
// (a line must match both). A matched line that is a JSON object is of the kind of its
// message, as a JSON line is, so that a pattern over a JSON log is told apart the same way.
func (p *parser) patternLine(pat *Pattern, n int, line []byte) {
	d, matched, err := pat.Match(line)
	trimmed := bytes.TrimSpace(line)
	if !matched {
		if len(trimmed) > 0 {
			p.src.Ignored++
			// most lines of a log: counted without a copy
			if k := (Kind{Name: kindNoPattern, Why: whyNoPatternHit}); !p.countPlain(k) {
				p.kind(k, string(trimmed))
			}
		}
		return
	}
	var top, nested map[string]any
	if len(trimmed) > 0 && trimmed[0] == '{' {
		top, _ = p.decodeObject(string(trimmed))
		if top != nil && !hasDelivery(top) {
			nested = nestedDelivery(top)
		}
	}
	count := func(k Kind) {
		if k.Field != "" || !p.countPlain(k) {
			p.kind(k, string(trimmed))
		}
	}
	kindOf := func(counted bool, why string) Kind {
		if top != nil {
			return messageKind(top, counted, why)
		}
		return Kind{Name: kindPattern, AppLog: true, Counted: counted, Why: why}
	}
	if w := p.set.When; w != nil && !w.Match(line, top, nested) {
		p.src.Ignored++
		if err == nil {
			p.span(kpart.Range{First: d.Offset, Last: d.Offset})
		}
		count(kindOf(false, p.notWhen))
		return
	}
	if err != nil {
		p.bad(n, string(line), err.Error())
		return
	}
	p.src.Lines++
	p.add(d.Topic, d.Partition, kpart.Range{First: d.Offset, Last: d.Offset})
	count(kindOf(true, ""))
}

// decodeObject decodes one JSON object line, numbers as json.Number (what follows the
// object on the line is not looked at), with one decoder for all the lines of a file: a
// decoder per line made half of what reading a log allocated. A line that ends in an error or holds more than its
// object gets the decoder dropped (it would carry that into the next line).
func (p *parser) decodeObject(line string) (map[string]any, error) {
	if p.dec == nil {
		p.line = new(strings.Reader)
		p.dec = json.NewDecoder(p.line)
		p.dec.UseNumber()
	}
	p.line.Reset(line)
	var top map[string]any
	err := p.dec.Decode(&top)
	if err != nil || p.line.Len() > 0 || p.dec.Buffered().(*bytes.Reader).Len() > 0 {
		p.dec = nil
	}
	if err != nil {
		return nil, err
	}
	return top, nil
}

// nestedDelivery is the object one level under top (msg, message, record, kafka) that
// names a partition and an offset, or nil.
func nestedDelivery(top map[string]any) map[string]any {
	for _, k := range nestKeys {
		if m, ok := top[k].(map[string]any); ok && hasDelivery(m) {
			return m
		}
	}
	return nil
}

func isTraceLine(line string) bool {
	// A trace line has an "ev" or a "schema" key (encoding/json matches names whatever
	// their case, and a name may be written with \u escapes): most log lines have
	// neither, and are told apart without a decode.
	if !strings.Contains(line, `\u`) && !hasFold(line, `ev"`) && !hasFold(line, `schema"`) {
		return false
	}
	var probe struct {
		Ev     string `json:"ev"`
		Schema string `json:"schema"`
	}
	if json.Unmarshal([]byte(line), &probe) != nil {
		return false
	}
	return probe.Schema == traceevent.Schema || probe.Ev != ""
}

// hasFold reports whether s holds sub (lower-case ASCII) in any case.
func hasFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && (s[i+j] == sub[j] || s[i+j]|0x20 == sub[j]) {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// traceLine reads one kstranded.trace/v1 line; it reports whether the line was read.
func (p *parser) traceLine(n int, line string) bool {
	e, err := traceevent.Decode([]byte(line))
	var schema *traceevent.SchemaError
	if errors.As(err, &schema) {
		p.bad(n, line, "unsupported trace schema "+strconv.Quote(schema.Schema))
		return false
	}
	if err != nil {
		p.bad(n, line, "not a trace event: "+jsonReason(err))
		return false
	}
	switch e.Ev {
	case traceevent.Run:
		p.topic = e.Topic
		if p.src.Topic == "" {
			p.src.Topic, p.src.Group = e.Topic, e.Group
		}
	case traceevent.Serve:
		if e.Partition == nil || *e.Partition < 0 {
			p.bad(n, line, "serve event without a partition")
			return false
		}
		for _, o := range e.Offsets {
			if o < 0 {
				p.bad(n, line, "negative offset")
				return false
			}
		}
		p.src.Lines++
		for _, o := range e.Offsets {
			p.add(p.topic, *e.Partition, kpart.Range{First: o, Last: o})
		}
		p.kind(Kind{Name: kindServe, Counted: true}, line)
	default:
		p.src.Ignored++
		p.kind(Kind{Name: kindTraceOther, Why: whyTraceOther}, line)
	}
	return true
}

// nestKeys are the keys under which applications log the record they handled, one
// level down: pino's and bunyan's msg, winston's message, and the record or kafka
// objects applications name themselves.
var nestKeys = []string{"msg", "message", "record", "kafka"}

// jsonLine reads one JSON object that is not a trace event; it reports whether the line
// named a delivery.
//
// A line that names a delivery is of the kind of its message (MessageOf); with a When,
// a line it does not match is ignored, under its kind, before its numbers are checked
// (it is no delivery line, so it cannot be a malformed one).
func (p *parser) jsonLine(n int, line string) bool {
	top, err := p.decodeObject(line)
	if err != nil {
		p.bad(n, line, "not JSON: "+jsonReason(err))
		return false
	}
	obj, nested := top, map[string]any(nil)
	if !hasDelivery(obj) {
		obj = nestedDelivery(top)
		nested = obj
	}
	if obj == nil {
		p.src.Ignored++ // another log line: names no partition and offset
		p.kind(Kind{Name: kindOtherLog, Why: whyNoDelivery}, line)
		return false
	}
	ps, ok1 := numberText(obj["partition"])
	os, ok2 := numberText(obj["offset"])
	part, err1 := parsePartition(ps)
	off, err2 := parseOffset(os)
	if w := p.set.When; w != nil && !w.Match([]byte(line), top, nested) {
		p.src.Ignored++
		if ok2 && err2 == nil {
			p.span(kpart.Range{First: off, Last: off})
		}
		p.kind(messageKind(top, false, p.notWhen), line)
		return false
	}
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		p.bad(n, line, fmt.Sprintf("partition %v and offset %v must be numbers >= 0 (or strings holding them)", obj["partition"], obj["offset"]))
		return false
	}
	topic, _ := obj["topic"].(string)
	if topic == "" {
		topic, _ = top["topic"].(string)
	}
	if topic != "" && !validTopic(topic) {
		p.bad(n, line, "invalid topic name "+quoteShort(topic))
		return false
	}
	p.src.Lines++
	p.add(topic, part, kpart.Range{First: off, Last: off})
	p.kind(messageKind(top, true, ""), line)
	return true
}

func hasDelivery(m map[string]any) bool {
	_, okP := m["partition"]
	_, okO := m["offset"]
	return okP && okO
}

// textLine parses one text line and returns its kind, or "" when malformed.
func (p *parser) textLine(n int, line string) string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if f := strings.Fields(line); len(f) == 3 {
		part, err1 := parsePartition(f[1])
		off, err2 := parseOffset(f[2])
		if err1 != nil || err2 != nil || !validTopic(f[0]) {
			p.bad(n, line, "want TOPIC PARTITION OFFSET")
			return ""
		}
		p.add(f[0], part, kpart.Range{First: off, Last: off})
		return "topic partition offset"
	}
	topic, rest := "", line
	if i := strings.LastIndexByte(line, '/'); i >= 0 {
		topic, rest = line[:i], line[i+1:]
		if !validTopic(topic) {
			p.bad(n, line, "invalid topic name")
			return ""
		}
	}
	ps, os, ok := strings.Cut(rest, ":")
	if !ok {
		p.bad(n, line, "want TOPIC PARTITION OFFSET, PARTITION:OFFSET or [TOPIC/]PARTITION:FIRST-LAST")
		return ""
	}
	part, err := parsePartition(ps)
	if err != nil {
		p.bad(n, line, "partition: "+err.Error())
		return ""
	}
	if fs, ls, isRange := strings.Cut(os, "-"); isRange {
		first, err1 := parseOffset(fs)
		last, err2 := parseOffset(ls)
		if err1 != nil || err2 != nil {
			p.bad(n, line, "want FIRST-LAST offsets")
			return ""
		}
		if last < first {
			p.bad(n, line, "range ends before it starts")
			return ""
		}
		p.add(topic, part, kpart.Range{First: first, Last: last})
		return "ranges"
	}
	off, err := parseOffset(os)
	if err != nil {
		p.bad(n, line, "offset: "+err.Error())
		return ""
	}
	p.add(topic, part, kpart.Range{First: off, Last: off})
	if topic != "" {
		return "ranges"
	}
	return "partition:offset"
}

// satAdd adds non-negative counts, saturating instead of overflowing.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func parsePartition(s string) (int32, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("want a partition number >= 0, got %q", s)
	}
	return int32(v), nil
}

func parseOffset(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 || v == 1<<63-1 {
		return 0, fmt.Errorf("want an offset >= 0, got %q", s)
	}
	return v, nil
}

// validTopic follows Kafka's topic name rule: 1-249 of [a-zA-Z0-9._-].
func validTopic(t string) bool {
	if t == "" || len(t) > 249 {
		return false
	}
	for _, r := range t {
		if r > unicode.MaxASCII || !(r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

func jsonReason(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
