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
// Lines that name no topic get the empty topic; the caller resolves it (inspect uses the
// only topic in scope). Malformed lines are counted and the first few kept with their
// line numbers.
//
// No verdict without evidence: Insufficient says when a set cannot support one (no
// delivery read at all, or a file whose lines are mostly malformed), so that the caller
// says NO EVIDENCE instead of a false all-clear. An empty file reads as no evidence;
// binary data and a truncated gzip are errors.
//
// This package only parses and normalises: it does not talk to Kafka and does not judge
// whether an offset is valid for a partition (inspect does that against the source).
package evidence

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kstranded/kstranded/internal/kpart"
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
	raw        []kpart.Range
	extraDup   int64 // duplicates stated by a summary (trace parse output)
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
	Ignored   int   // well-formed lines that name no delivery (other log lines)
	Malformed int
}

// Set is the evidence from all files.
type Set struct {
	Sources   []Source
	Malformed []Malformed // the first MaxShownMalformed per source
	Parts     map[kpart.TopicPartition]*Partition
	// Pattern, when set before reading, reads every line through it (--pattern).
	Pattern *Pattern
}

// Insufficient says why the set cannot support a verdict, or "" when it can: no
// delivery read from any file (an empty file, only other log lines, a pattern that
// matched nothing, every line malformed), or a file with more malformed lines than
// delivery lines (the reader did not understand it: what it missed may be what was
// delivered). The caller says NO EVIDENCE, with Hint, instead of judging.
func (s *Set) Insufficient() string {
	if len(s.Sources) == 0 {
		return "no evidence file was read"
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
		return why + ")"
	}
	for _, src := range s.Sources {
		if src.Malformed > src.Lines {
			return fmt.Sprintf("%s: %d malformed lines and only %d delivery lines: the evidence was not understood", src.Name, src.Malformed, src.Lines)
		}
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
			q.raw = append(q.raw, p.raw...)
			q.extraDup = satAdd(q.extraDup, p.extraDup)
			q.Delivered = nil
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
	// Consecutive single offsets (the common case) extend the last raw interval.
	if n := len(p.raw); n > 0 && p.raw[n-1].Last+1 == iv.First {
		p.raw[n-1].Last = iv.Last
		return
	}
	p.raw = append(p.raw, iv)
}

// normalize merges each partition's raw intervals into disjoint sorted ones and counts
// the duplicates (offsets covered more than once).
func (s *Set) normalize() {
	for _, p := range s.Parts {
		raw := slices.Clone(p.raw)
		slices.SortFunc(raw, func(a, b kpart.Range) int {
			if a.First != b.First {
				if a.First < b.First {
					return -1
				}
				return 1
			}
			if a.Last < b.Last {
				return -1
			} else if a.Last > b.Last {
				return 1
			}
			return 0
		})
		var dup int64
		merged := p.Delivered[:0]
		for _, iv := range raw {
			if n := len(merged); n > 0 && iv.First <= merged[n-1].Last+1 {
				last := &merged[n-1]
				if iv.First <= last.Last {
					dup = satAdd(dup, min(iv.Last, last.Last)-iv.First+1)
				}
				if iv.Last > last.Last {
					last.Last = iv.Last
				}
				continue
			}
			merged = append(merged, iv)
		}
		var distinct int64
		for _, iv := range merged {
			distinct = satAdd(distinct, iv.Len())
		}
		p.Delivered, p.Count, p.Duplicates = merged, distinct, satAdd(dup, p.extraDup)
	}
}

// Read parses one evidence file into s. name labels the source ("-" is stdin). A gzip
// file is decompressed (a truncated one is an error); binary data is ErrBinary.
func (s *Set) Read(r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	gz := isGzip(data)
	if gz {
		if data, err = gunzip(data); err != nil {
			return fmt.Errorf("%s: gzip: %w", name, err)
		}
	}
	if looksBinary(data) {
		return fmt.Errorf("%s: %w", name, ErrBinary)
	}
	s.Parse(data, name)
	s.Sources[len(s.Sources)-1].Gzip = gz
	s.normalize()
	return nil
}

func isGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// gunzip decompresses all members of a gzip stream; a stream cut short is an error
// (io.ErrUnexpectedEOF), never a shorter file.
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return out, zr.Close()
}

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

// Parse adds the evidence in data (one file's contents) to s without normalising.
// Callers outside this package use Read; Parse is exported for the fuzz target.
func (s *Set) Parse(data []byte, name string) {
	src := Source{Name: name}
	p := &parser{set: s, src: &src}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		src.Format = FormatEmpty
	case trimmed[0] == '{' && isOTLP(trimmed):
		p.otlpFile(trimmed)
	case trimmed[0] == '{' && p.tryTraceParse(trimmed):
		src.Format = FormatTraceParse
	default:
		p.lines(data)
	}
	s.Sources = append(s.Sources, src)
}

type parser struct {
	set     *Set
	src     *Source
	shown   int
	topic   string // trace header topic
	inTrace bool   // a kstranded.trace/v1 line was seen: JSON lines are trace events
}

func (p *parser) bad(line int, text, reason string) {
	p.src.Malformed++
	if p.shown < MaxShownMalformed {
		p.shown++
		if len(text) > 120 {
			text = text[:120] + "..."
		}
		p.set.Malformed = append(p.set.Malformed, Malformed{Source: p.src.Name, Line: line, Text: text, Reason: reason})
	}
}

func (p *parser) add(topic string, partition int32, iv kpart.Range) {
	p.src.Records += iv.Len()
	p.set.add(kpart.TopicPartition{Topic: topic, Partition: partition}, iv)
}

// lines reads line-oriented files. Each line is read by its own shape (a JSON object or
// text), so an application log that starts with a banner, mixes client lines with
// delivery lines, or holds both JSON and text is still read; the source's format names
// the kinds found. With a Pattern every line goes through it instead.
func (p *parser) lines(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	kinds := map[string]bool{}
	for sc.Scan() {
		n++
		if pat := p.set.Pattern; pat != nil {
			p.patternLine(pat, n, sc.Bytes())
			continue
		}
		line := strings.TrimSpace(sc.Text())
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
		}
	}
	if err := sc.Err(); err != nil {
		p.bad(n+1, "", "unreadable: "+err.Error())
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

func (p *parser) patternLine(pat *Pattern, n int, line []byte) {
	d, matched, err := pat.Match(line)
	switch {
	case !matched:
		if len(bytes.TrimSpace(line)) > 0 {
			p.src.Ignored++
		}
	case err != nil:
		p.bad(n, string(line), err.Error())
	default:
		p.src.Lines++
		p.add(d.Topic, d.Partition, kpart.Range{First: d.Offset, Last: d.Offset})
	}
}

func isTraceLine(line string) bool {
	var probe struct {
		Ev     string `json:"ev"`
		Schema string `json:"schema"`
	}
	if json.Unmarshal([]byte(line), &probe) != nil {
		return false
	}
	return probe.Schema == traceevent.Schema || probe.Ev != ""
}

// traceLine reads one kstranded.trace/v1 line; it reports whether the line was read.
func (p *parser) traceLine(n int, line string) bool {
	var e traceevent.Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		p.bad(n, line, "not a trace event: "+jsonReason(err))
		return false
	}
	switch e.Ev {
	case traceevent.Run:
		if e.Schema != "" && e.Schema != traceevent.Schema {
			p.bad(n, line, "unsupported trace schema "+strconv.Quote(e.Schema))
			return false
		}
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
	default:
		p.src.Ignored++
	}
	return true
}

// nestKeys are the keys under which applications log the record they handled, one
// level down: pino's and bunyan's msg, winston's message, and the record or kafka
// objects applications name themselves.
var nestKeys = []string{"msg", "message", "record", "kafka"}

// jsonLine reads one JSON object that is not a trace event; it reports whether the line
// named a delivery.
func (p *parser) jsonLine(n int, line string) bool {
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var top map[string]any
	if err := d.Decode(&top); err != nil {
		p.bad(n, line, "not JSON: "+jsonReason(err))
		return false
	}
	obj := top
	if !hasDelivery(obj) {
		obj = nil
		for _, k := range nestKeys {
			if m, ok := top[k].(map[string]any); ok && hasDelivery(m) {
				obj = m
				break
			}
		}
	}
	if obj == nil {
		p.src.Ignored++ // another log line: names no partition and offset
		return false
	}
	ps, ok1 := numberText(obj["partition"])
	os, ok2 := numberText(obj["offset"])
	part, err1 := parsePartition(ps)
	off, err2 := parseOffset(os)
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
