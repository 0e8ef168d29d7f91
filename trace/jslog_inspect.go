package trace

import (
	"bytes"

	"github.com/kstranded/kstranded/trace/jstok"
)

// The DefaultLogger's objects as Node's util.inspect prints them: a well-formed multi-line
// object in one pass (inspectObject), anything else line by line (inspectLine).

// inspectObject reads the well-formed multi-line object at the start of data ("{\n", then
// "  key: value," lines, each value a single-quoted string without escapes or a bare value,
// then "}") as inspectLine would read its lines, and returns the bytes it took; 0 for
// anything else (a continuation, a quote or escape, another writer's line, a CR, a line
// over maxLine, an ANSI code), which the line-by-line reader then reads from the same "{".
// It reads the values in place: no copy, no per-line call. An object that repeats one it
// kept is taken from the memo of objects (jsObjectMemo).
func (s *jsScanner) inspectObject(c *rdChunk, data []byte) int {
	if n := s.fromMemo(c, data); n > 0 {
		return n
	}
	p := 2 // after "{\n"
	lines := 1
	msgLine := 0
	v := &s.vary
	v.reset()
	o := &s.obj
	o.reset(c.lines + 1) // the line reader reads it again from its "{" when this returns 0
	for {
		rest := data[p:]
		if len(rest) > 0 && rest[0] == '}' {
			if len(rest) == 1 {
				p++
			} else if rest[1] == '\n' {
				p += 2
			} else {
				return 0
			}
			lines++
			break
		}
		if m := s.lineMemo(lines - 1); m != nil && len(rest) >= len(m.line) && string(rest[:len(m.line)]) == string(m.line) {
			// the line the object before had at this place, byte for byte: what it read
			key := m.line[m.key:m.keyEnd]
			s.field(key, m.line[m.val:m.valEnd], m.isStr, false, true)
			v.see(key, m.line[m.val:m.valEnd], p+m.val, m.isStr, false)
			lines++
			p += len(m.line)
			continue
		}
		nl := bytes.IndexByte(rest, '\n')
		line := rest
		if nl >= 0 {
			line = rest[:nl]
		}
		if len(line) > maxLine {
			return 0
		}
		key, val, isStr, ok := jstok.SimpleField(line)
		if !ok {
			return 0
		}
		s.field(key, val, isStr, false, true)
		v.see(key, val, cap(data)-cap(val), isStr, false)
		if nl >= 0 && string(key) != "message" {
			s.keepLine(lines-1, rest[:nl+1], key, val, isStr)
		}
		if o.hasMsg && msgLine == 0 {
			msgLine = c.lines + lines + 1
		}
		lines++
		if nl < 0 {
			return 0 // the object goes on past the chunk: truncated, the line reader says so
		}
		p += nl + 1
	}
	if o.hasFac && !o.hasMsg {
		return 0 // malformed: the line reader names it
	}
	if bytes.IndexByte(data[:p], 0x1b) >= 0 {
		return 0 // ANSI codes: the line reader strips them
	}
	c.lines += lines
	c.nonblank += lines
	if !o.hasFac {
		return p // an object the application logged: not the client's
	}
	c.matched++
	s.record(c, msgLine, o.fac, o.name, o.msg, o.ts, o.hasTS)
	if o.hasTS && data[p-1] == '\n' {
		s.keepObject(data[:p], lines, msgLine-(c.lines-lines))
	}
	return p
}

// A DefaultLogger's objects repeat most of their lines: the same fac, name and timestamp
// (the client logs many lines in one millisecond) at the same place. inspectObject keeps
// the last line it read at each place of an object but the message's (which is read in
// place and differs), and a line equal to it byte for byte is taken as read: the same key
// and value, without looking for its end or its quotes again. Its value holds no backslash
// (SimpleField took it), so it reads the same anywhere. TestTheLineMemoReadsAsTheLines
// compares the reports with and without it.
type jsLineMemo struct {
	line        []byte // the line and its "\n"
	key, keyEnd int    // the key: line[key:keyEnd]
	val, valEnd int    // the value: line[val:valEnd]
	isStr       bool
}

// noLineMemo turns the memo off (the tests' reference).
var noLineMemo bool

// lineMemo is the memo of the i-th line after an object's "{", nil when there is none.
func (s *jsScanner) lineMemo(i int) *jsLineMemo {
	if i >= len(s.lines) || len(s.lines[i].line) == 0 {
		return nil
	}
	return &s.lines[i]
}

// keepLine remembers the i-th line of an object (line, with its "\n") and what it read
// (key and val, slices of line).
func (s *jsScanner) keepLine(i int, line, key, val []byte, isStr bool) {
	if noLineMemo || i >= 8 {
		return
	}
	for len(s.lines) <= i {
		s.lines = append(s.lines, jsLineMemo{})
	}
	m := &s.lines[i]
	m.line = append(m.line[:0], line...)
	m.key = cap(line) - cap(key)
	m.keyEnd = m.key + len(key)
	m.val = cap(line) - cap(val)
	m.valEnd = m.val + len(val)
	m.isStr = isStr
}

// truncated counts the open object as malformed: its end never came.
func (s *jsScanner) truncated(c *rdChunk) {
	c.badAt(s.obj.start, s.obj.text, "truncated log object (no closing })")
	s.obj.open = false
}

// inspectLine reads one line of the DefaultLogger's output.
func (s *jsScanner) inspectLine(c *rdChunk, line []byte) {
	o := &s.obj
	if o.open {
		switch {
		case o.cont && len(line) > 4 && line[0] == ' ' && line[1] == ' ' && line[2] == ' ' && line[3] == ' ':
			s.continuation(line[4:])
			return
		case line[0] == '}':
			if len(bytes.TrimSpace(line)) == 1 {
				s.close(c)
				return
			}
		case len(line) > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ':
			o.see(line)
			if o.bad == "" {
				if err := s.fields(line[2:], true); err != "" {
					o.bad = err
				}
			}
			if o.hasMsg && o.line == 0 {
				o.line = c.lines
			}
			return
		case line[0] == '{':
			// a new object before the end of this one: this one was cut short
			s.truncated(c)
		default:
			// a line of another writer in the middle of the object (stderr and stdout
			// merged): read it for itself, the object goes on
			s.appLine(c, line)
			return
		}
	}
	switch {
	case len(line) == 1 && line[0] == '{':
		o.reset(c.lines)
		o.open = true
		o.see(line)
	case line[0] == '{' && line[len(line)-1] == '}' && len(line) > 3:
		// a short object on one line: "{ message: '...', fac: 'BINDING', ... }"
		o.reset(c.lines)
		o.see(line)
		o.open = true
		if err := s.fields(bytes.TrimSpace(line[1:len(line)-1]), false); err != "" {
			o.bad = err
		}
		s.close(c)
	case len(line) > 2 && line[0] == ' ' && line[1] == ' ' && (bytes.HasPrefix(line, bFac) || bytes.HasPrefix(line, []byte("  message: "))):
		c.bad(line, "log object field outside an object (its { is missing)")
	default:
		s.appLine(c, line)
	}
}

// continuation appends a "    'more text' +" line to the string value it continues.
func (s *jsScanner) continuation(b []byte) {
	o := &s.obj
	v, rest, ok := s.jsString(b)
	if !ok {
		o.bad, o.cont = "unterminated string continuation", false
		return
	}
	if o.contKey == "message" {
		o.msg = append(o.msg, v...)
	}
	rest = bytes.TrimSpace(rest)
	o.cont = bytes.HasSuffix(rest, []byte("+"))
}

// fields reads "key: value" fields separated by ", " (one line of a multi-line object
// holds one, with a trailing ","; a one-line object holds them all).
func (s *jsScanner) fields(b []byte, multiline bool) string {
	t := jstok.NewInspect(b, multiline)
	for t.Next() {
		val := t.Val
		if t.Esc {
			s.str = jstok.UnescapeJS(s.str[:0], val)
			val = s.str
		}
		s.field(t.Key, val, t.Str, false, false)
	}
	if t.Cont {
		s.obj.cont, s.obj.contKey = true, string(t.Key)
	}
	return t.Err
}

// jsString reads a JavaScript string literal as util.inspect writes it at the start of b
// (quoted with ', " or `, backslash escapes), returning its text and what follows it. The
// text is b's own bytes when it has no escape, else the scanner's buffer.
func (s *jsScanner) jsString(b []byte) ([]byte, []byte, bool) {
	body, rest, esc, ok := jstok.String(b)
	if esc {
		s.str = jstok.UnescapeJS(s.str[:0], body)
		body = s.str
	}
	return body, rest, ok
}

// close reads the object that ended.
func (s *jsScanner) close(c *rdChunk) {
	o := &s.obj
	o.open = false
	if o.line == 0 {
		o.line = o.start
	}
	if o.bad != "" {
		c.badAt(o.start, o.text, o.bad)
		return
	}
	if !o.hasFac {
		return // an object the application logged: not the client's
	}
	if !o.hasMsg {
		c.badAt(o.start, o.text, "client log object without a message")
		return
	}
	c.matched++
	s.record(c, o.line, o.fac, o.name, o.msg, o.ts, o.hasTS)
}
