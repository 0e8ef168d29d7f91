package trace

import (
	"github.com/kstranded/kstranded/trace/jstok"
)

// A JSON logger's lines: one object a line, read compact first, else in general.

// fJSONFac finds the fac key of a JSON logger's line.
var fJSONFac = newFinder(`"fac"`)

// jsonLine reads one line of a JSON logger's output.
func (s *jsScanner) jsonLine(c *rdChunk, line []byte) {
	t := line[jstok.SkipWS(line, 0):] // bytes.TrimLeft, without its cutset's table each line
	if len(t) == 0 || t[0] != '{' {
		s.appLine(c, line)
		return
	}
	// a line without "fac" is the application's, readable or not: the keys are read as
	// written (escapes unresolved), so a fac key has "fac" in the line
	if fJSONFac.in(t) < 0 {
		s.appLine(c, line)
		return
	}
	o := &s.obj
	o.reset(c.lines)
	if err := s.jsonFields(t); err != "" {
		c.bad(line, err)
		return
	}
	if !o.hasFac {
		s.appLine(c, line)
		return
	}
	if !o.hasMsg {
		c.bad(line, "client log object without msg or message")
		return
	}
	c.matched++
	s.record(c, c.lines, o.fac, o.name, o.msg, o.ts, o.hasTS)
	if o.fromTS && !s.stripped {
		s.keepObject(t, 0, 0) // a line without ANSI codes: its repeats need not be searched for them
	}
}

// jsonRepeat reads a line of the chunk that repeats a client line kept (jsObjectMemo), and
// reports whether it did.
func (s *jsScanner) jsonRepeat(c *rdChunk, line []byte) bool {
	t := line[jstok.SkipWS(line, 0):]
	return len(t) > 0 && t[0] == '{' && s.fromMemo(c, t) > 0
}

// jsonFields reads the top-level fields of one JSON object: the text (msg, message), fac,
// name and the time (the client's timestamp, else the logger's time: milliseconds since the
// epoch or an RFC 3339 string).
func (s *jsScanner) jsonFields(b []byte) string {
	s.vary.reset()
	if s.jsonFieldsCompact(b) {
		return ""
	}
	s.vary.bad = true        // the memo of objects takes compact lines only
	s.obj.reset(s.obj.start) // what the fast path read of it is read again
	return s.jsonFieldsAny(b)
}

// jsonFieldsAny is jsonFields for any object: whitespace between tokens, escapes, nested
// values (skipped).
func (s *jsScanner) jsonFieldsAny(b []byte) string {
	t := jstok.NewJSON(b)
	for t.Next() {
		s.field(t.Key, t.Val, t.Str, true, true)
	}
	if t.Err != "" {
		return t.Err
	}
	s.endFields()
	return ""
}

// jsonFieldsCompact is jsonFields for the objects JSON loggers write (JSON.stringify's
// output: no whitespace between tokens, flat) when the line holds no backslash
// (jstok.Compact). It reads what jsonFields reads and reports false for anything else,
// which jsonFields then reads from the start. TestCompactJSONReadsAsTheGeneralReader and
// FuzzJSONCompact compare the two.
func (s *jsScanner) jsonFieldsCompact(b []byte) bool {
	t := jstok.NewCompact(b)
	m := &s.jm
	n := 0 // the fields of the memo's line that b repeats: all but its last, or none
	if !t.Bad && !noLineMemo && len(m.fields) > 1 {
		// the fields and the byte after them (a bare value ends at it): Compact.Next reads
		// nothing else of the line for them
		if end := m.fields[len(m.fields)-2].end + 1; end < len(b) && string(b[:end]) == string(m.line[:end]) {
			n = len(m.fields) - 1
			for _, f := range m.fields[:n] {
				if f.read {
					s.field(b[f.key:f.keyEnd], b[f.val:f.valEnd], f.str, false, true)
					s.vary.see(b[f.key:f.keyEnd], b[f.val:f.valEnd], f.val, f.str, true)
				}
			}
			t.Resume(m.fields[n-1].end)
		}
	}
	// a line that repeats the memo's is kept in it; another one beside it, and in its place
	// only when it is the client's (an application's line between two of the client's is
	// seldom repeated by the next line)
	to := &s.jm2
	if n > 0 {
		to = m
	}
	to.fields = to.fields[:n]
	for t.Next() {
		s.field(t.Key, t.Val, t.Str, false, true)
		s.vary.see(t.Key, t.Val, cap(b)-cap(t.Val), t.Str, true)
		if len(to.fields) < 16 {
			to.fields = append(to.fields, jsonFieldMemo{key: cap(b) - cap(t.Key), val: cap(b) - cap(t.Val), str: t.Str, end: t.Pos()})
			f := &to.fields[len(to.fields)-1]
			f.keyEnd, f.valEnd = f.key+len(t.Key), f.val+len(t.Val)
			f.read = fieldReads(t.Key)
		}
	}
	if t.Bad {
		to.fields = to.fields[:0]
		return false
	}
	if len(to.fields) > 0 && (n > 0 || s.obj.hasFac) && !noLineMemo {
		from := 0
		if n > 0 {
			from = to.fields[n-1].end + 1 // the line is the same before
		}
		last := to.fields[len(to.fields)-1].end
		to.line = append(to.line[:from], b[from:min(last+1, len(b))]...)
		if to != m {
			s.jm, s.jm2 = s.jm2, s.jm
		}
	}
	s.endFields()
	return true
}

// A JSON logger repeats the first fields of its lines (level, time, pid, hostname, and
// the client's fac, timestamp and name, by the millisecond): jsonFieldsCompact keeps
// where the last compact line's fields were, and when a line starts with the same bytes as
// that one up to its last field (and the byte after, which Compact.Next stops at), takes
// those fields as read (the same keys and values, slices of this line) and reads on from
// there.
// TestTheLineMemoReadsAsTheLines compares the reports with and without it.
type jsonLineMemo struct {
	line   []byte // the last compact line read whole, to the byte after its last field
	fields []jsonFieldMemo
}

type jsonFieldMemo struct {
	key, keyEnd, val, valEnd int // the key and value: line[key:keyEnd], line[val:valEnd]
	end                      int // Compact.Pos after the field
	str                      bool
	read                     bool // fieldReads: field reads the key
}
