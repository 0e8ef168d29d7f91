package trace

import (
	"bytes"

	"github.com/kstranded/kstranded/trace/jstok"
)

// A JSON logger's lines: one object a line, read compact first, else in general.

// jsonLine reads one line of a JSON logger's output.
func (s *jsScanner) jsonLine(c *rdChunk, line []byte) {
	t := bytes.TrimLeft(line, " \t")
	if len(t) == 0 || t[0] != '{' {
		s.appLine(c, line)
		return
	}
	o := &s.obj
	o.reset(c.lines)
	// the fields first, the search for "fac" only when they are unreadable: a readable
	// object with a fac key has "fac" in it, and one without is the application's either way
	if err := s.jsonFields(t, s.inChunk && s.noBackslash(c.data, t)); err != "" {
		if !bytes.Contains(t, bJSONFac) {
			s.appLine(c, line)
			return
		}
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
}

// jsonFields reads the top-level fields of one JSON object: the text (msg, message), fac,
// name and the time (the client's timestamp, else the logger's time: milliseconds since the
// epoch or an RFC 3339 string).
// clean says b holds no backslash.
func (s *jsScanner) jsonFields(b []byte, clean bool) string {
	if s.jsonFieldsCompact(b, clean) {
		return ""
	}
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
// FuzzJSONCompact compare the two. clean says b holds no backslash.
func (s *jsScanner) jsonFieldsCompact(b []byte, clean bool) bool {
	t := jstok.NewCompact(b, clean)
	for t.Next() {
		s.field(t.Key, t.Val, t.Str, false, true)
	}
	if t.Bad {
		return false
	}
	s.endFields()
	return true
}
