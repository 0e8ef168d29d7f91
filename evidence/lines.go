package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

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
