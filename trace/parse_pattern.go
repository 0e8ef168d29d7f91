package trace

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// patternParser reads an application's own delivery log: every line matching the
// pattern is one record delivered to the handler. The pattern names its groups:
// partition and offset (required), topic and time (optional).
type patternParser struct {
	re                  *regexp.Regexp
	iPart, iOff, iTopic int
	iTime               int
	last                time.Time
}

// CheckPattern validates a --pattern: it must name the partition and offset groups.
func CheckPattern(re *regexp.Regexp) error {
	_, err := newPatternParser(re)
	return err
}

func newPatternParser(re *regexp.Regexp) (*patternParser, error) {
	p := &patternParser{re: re, iPart: re.SubexpIndex("partition"), iOff: re.SubexpIndex("offset"),
		iTopic: re.SubexpIndex("topic"), iTime: re.SubexpIndex("time")}
	if p.iPart < 0 || p.iOff < 0 {
		return nil, fmt.Errorf("--pattern %q must have named groups (?P<partition>...) and (?P<offset>...)", re.String())
	}
	return p, nil
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
	m := p.re.FindSubmatch(line)
	if m == nil {
		return nil // not a delivery line: ignored
	}
	pv, err1 := strconv.ParseInt(string(m[p.iPart]), 10, 32)
	ov, err2 := strconv.ParseInt(string(m[p.iOff]), 10, 64)
	if err1 != nil || err2 != nil || pv < 0 || ov < 0 {
		return errMalformed("pattern matched but partition/offset are not numbers")
	}
	e := newEvent(KindDeliver)
	e.Partition, e.Offset, e.Count = int32(pv), ov, 1
	e.Ranges = []kpart.Range{{First: ov, Last: ov}}
	e.Name = "delivered"
	if p.iTopic >= 0 {
		e.Topic = string(m[p.iTopic])
	}
	e.Time = p.last
	if p.iTime >= 0 && len(m[p.iTime]) > 0 {
		t, ok := ParseLogTime(string(m[p.iTime]))
		if !ok {
			return errMalformed("pattern matched but the time is unreadable")
		}
		e.Time, e.Timed, p.last = t, true, t
	}
	emit(e)
	return nil
}
