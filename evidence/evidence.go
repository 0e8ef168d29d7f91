// Package evidence reads delivery evidence: files that say which Kafka records an
// application actually processed. `kstranded inspect --delivered` uses it to tell lost
// records from delivered ones, and `kstranded rewind` will reuse it.
//
// Accepted forms, auto-detected per file and named in Set.Sources:
//
//   - kstranded.trace/v1 JSON lines (`repro --trace`): "serve" events give partition and
//     offsets; the topic comes from the "run" header line.
//   - `kstranded trace parse -o json` output: one JSON document whose "schema" starts with
//     "kstranded.trace-parse/" (see TraceParseDoc for the shape this package expects).
//   - JSON lines with "topic", "partition" and "offset" fields.
//   - text lines, any mix of: "TOPIC PARTITION OFFSET", "[TOPIC/]PARTITION:OFFSET" and
//     ranges "[TOPIC/]PARTITION:FIRST-LAST" (inclusive). '#' starts a comment.
//
// Lines that name no topic get the empty topic; the caller resolves it (inspect uses the
// only topic in scope). Malformed lines are counted and the first few kept with their
// line numbers.
//
// This package only parses and normalises: it does not talk to Kafka and does not judge
// whether an offset is valid for a partition (inspect does that against the source).
package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

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
	FormatEmpty      Format = "empty"
)

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
	Name      string `json:"name"`
	Format    Format `json:"format"`
	Topic     string `json:"topic,omitempty"` // the trace's topic, when the file names one
	Group     string `json:"group,omitempty"` // the trace's group, when the file names one
	Records   int64  `json:"records"`         // deliveries read (before de-duplication)
	Malformed int    `json:"malformed"`
}

// Set is the evidence from all files.
type Set struct {
	Sources   []Source
	Malformed []Malformed // the first MaxShownMalformed per source
	Parts     map[kpart.TopicPartition]*Partition
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

// Read parses one evidence file into s. name labels the source ("-" is stdin).
func (s *Set) Read(r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.Parse(data, name)
	s.normalize()
	return nil
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
	case trimmed[0] == '{' && p.tryTraceParse(trimmed):
		src.Format = FormatTraceParse
	default:
		p.lines(data)
	}
	s.Sources = append(s.Sources, src)
}

type parser struct {
	set   *Set
	src   *Source
	shown int
	topic string // trace header topic
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

// lines reads line-oriented files; the format is decided by the first line that is
// neither blank nor a comment.
func (p *parser) lines(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	textKinds := map[string]bool{}
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if p.src.Format == "" {
			if line[0] == '{' {
				p.src.Format = FormatJSONLines
				if isTraceLine(line) {
					p.src.Format = FormatTrace
				}
			} else {
				p.src.Format = FormatText
			}
		}
		switch p.src.Format {
		case FormatTrace:
			p.traceLine(n, line)
		case FormatJSONLines:
			p.jsonLine(n, line)
		default:
			if k := p.textLine(n, line); k != "" {
				textKinds[k] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		p.bad(n+1, "", "unreadable: "+err.Error())
	}
	if p.src.Format == FormatText && len(textKinds) > 0 {
		kinds := make([]string, 0, len(textKinds))
		for k := range textKinds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		p.src.Format = Format("text (" + strings.Join(kinds, ", ") + ")")
	}
	if p.src.Format == "" {
		p.src.Format = FormatEmpty
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

func (p *parser) traceLine(n int, line string) {
	var e traceevent.Event
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		p.bad(n, line, "not a trace event: "+jsonReason(err))
		return
	}
	switch e.Ev {
	case traceevent.Run:
		if e.Schema != "" && e.Schema != traceevent.Schema {
			p.bad(n, line, "unsupported trace schema "+strconv.Quote(e.Schema))
			return
		}
		p.topic = e.Topic
		if p.src.Topic == "" {
			p.src.Topic, p.src.Group = e.Topic, e.Group
		}
	case traceevent.Serve:
		if e.Partition == nil || *e.Partition < 0 {
			p.bad(n, line, "serve event without a partition")
			return
		}
		for _, o := range e.Offsets {
			if o < 0 {
				p.bad(n, line, "negative offset")
				return
			}
		}
		for _, o := range e.Offsets {
			p.add(p.topic, *e.Partition, kpart.Range{First: o, Last: o})
		}
	}
}

func (p *parser) jsonLine(n int, line string) {
	var v struct {
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
		Offset    *int64  `json:"offset"`
	}
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		p.bad(n, line, "not JSON: "+jsonReason(err))
		return
	}
	switch {
	case v.Partition == nil || v.Offset == nil:
		p.bad(n, line, "want partition and offset fields")
	case *v.Partition < 0 || *v.Offset < 0:
		p.bad(n, line, "negative partition or offset")
	default:
		t := ""
		if v.Topic != nil {
			t = *v.Topic
		}
		p.add(t, *v.Partition, kpart.Range{First: *v.Offset, Last: *v.Offset})
	}
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
