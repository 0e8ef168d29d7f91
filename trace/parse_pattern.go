package trace

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
)

// patternParser reads an application's own delivery log: every line matching the
// pattern is one record delivered to the handler. The matching is evidence.Pattern's,
// the one --pattern reader shared with `inspect --delivered` and `rewind --delivered`;
// this adds the time.
type patternParser struct {
	p    *evidence.Pattern
	last time.Time
	when *evidence.When // --delivered-when: the lines that mean delivered
}

// CheckPattern validates a --pattern: it must name the partition and offset groups.
func CheckPattern(re *regexp.Regexp) error {
	_, err := evidence.NewPattern(re)
	return err
}

func newPatternParser(re *regexp.Regexp) (*patternParser, error) {
	p, err := evidence.NewPattern(re)
	if err != nil {
		return nil, err
	}
	return &patternParser{p: p}, nil
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999", "2006/01/02 15:04:05.999999999", "15:04:05.999999999"}

// ParseLogTime reads the time formats application logs commonly use, and epoch seconds
// or milliseconds.
func ParseLogTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
		if f > 1e11 { // milliseconds
			return time.UnixMilli(int64(f)).UTC(), true
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), true
	}
	return time.Time{}, false
}

func (p *patternParser) Line(line []byte, emit func(Event)) error {
	d, matched, err := p.p.Match(line)
	if !matched || (p.when != nil && !p.when.MatchLine(line)) {
		return nil // not a delivery line: ignored
	}
	if err != nil {
		return errMalformed(err.Error())
	}
	e := newEvent(KindDeliver)
	e.Partition, e.Offset, e.Count = d.Partition, d.Offset, 1
	e.Ranges = []kpart.Range{{First: d.Offset, Last: d.Offset}}
	e.Name = "delivered"
	e.Topic = d.Topic
	e.Time = p.last
	if d.Time != "" {
		t, ok := ParseLogTime(d.Time)
		if !ok {
			return errMalformed("pattern matched but the time is unreadable")
		}
		e.Time, e.Timed, p.last = t, true, t
	}
	emit(e)
	return nil
}
