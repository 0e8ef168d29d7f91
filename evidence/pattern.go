package evidence

import (
	"fmt"
	"regexp"
	"strconv"
)

// Pattern reads an application's own log: every line the regular expression matches is
// one record handed to the handler. The expression names its groups: partition and
// offset (required), topic and time (optional). It is the one reader of --pattern for
// every command that takes evidence: `inspect --delivered`, `rewind --delivered` and
// `trace parse` (package trace wraps it and reads the time).
type Pattern struct {
	re                         *regexp.Regexp
	iPart, iOff, iTopic, iTime int
}

// NewPattern checks that re names the partition and offset groups.
func NewPattern(re *regexp.Regexp) (*Pattern, error) {
	p := &Pattern{re: re, iPart: re.SubexpIndex("partition"), iOff: re.SubexpIndex("offset"),
		iTopic: re.SubexpIndex("topic"), iTime: re.SubexpIndex("time")}
	if p.iPart < 0 || p.iOff < 0 {
		return nil, fmt.Errorf("--pattern %q must have named groups (?P<partition>...) and (?P<offset>...)", re.String())
	}
	return p, nil
}

// CompilePattern compiles and checks a --pattern value.
func CompilePattern(expr string) (*Pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--pattern: %w", err)
	}
	return NewPattern(re)
}

// String is the expression.
func (p *Pattern) String() string { return p.re.String() }

// Groups returns the submatch indexes of the partition, offset, topic and time groups
// (-1 for an absent optional group), for readers that match without allocating.
func (p *Pattern) Groups() (partition, offset, topic, time int) {
	return p.iPart, p.iOff, p.iTopic, p.iTime
}

// Regexp is the compiled expression.
func (p *Pattern) Regexp() *regexp.Regexp { return p.re }

// Delivery is one record a delivery line names.
type Delivery struct {
	Topic     string // "" when the line names none
	Partition int32
	Offset    int64
	Time      string // the time group's text, "" when absent
}

// Match reads one line. matched is false for a line the expression does not match (not
// a delivery line: ignored); err is set when it matches but the partition or offset is
// not a number (a malformed delivery line).
func (p *Pattern) Match(line []byte) (d Delivery, matched bool, err error) {
	m := p.re.FindSubmatch(line)
	if m == nil {
		return Delivery{}, false, nil
	}
	part, err1 := parsePartition(string(m[p.iPart]))
	off, err2 := parseOffset(string(m[p.iOff]))
	if err1 != nil || err2 != nil {
		return Delivery{}, true, fmt.Errorf("pattern matched but partition %q / offset %q are not numbers", m[p.iPart], m[p.iOff])
	}
	d = Delivery{Partition: part, Offset: off}
	if p.iTopic >= 0 {
		d.Topic = string(m[p.iTopic])
	}
	if p.iTime >= 0 {
		d.Time = string(m[p.iTime])
	}
	return d, true, nil
}

// numberText reads a JSON value that applications write for a partition or an offset: a
// JSON integer, or a string holding one (kafkajs and confluent-kafka-javascript give
// message.offset as a string, so a logged message has "offset":"81").
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case interface{ String() string }: // json.Number
		return x.String(), true
	}
	return "", false
}

// quoteShort quotes s for a reason, cut to a readable length.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
