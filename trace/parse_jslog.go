package trace

import (
	"bytes"
	"regexp"
	"strconv"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/trace/jstok"
)

// The JS client's own log output (confluent-kafka-javascript, its KafkaJS-compatible API).
// Every line the client logs goes through one logger call with one object: in
// lib/kafkajs/_common.js (1.10.0, 1.10.1) the client's own ("BINDING") messages carry
// createBindingMessageMetadata's {name, fac: 'BINDING', timestamp}, and loggerTrampoline
// forwards librdkafka's log lines (debug contexts included) as
// logger.debug(msg.message, {fac, timestamp: Date.now(), name}). So a line says:
//
//	message    the text; for librdkafka lines "[thrd:main]: Topic stranded [0]: stored offset 82 ..."
//	fac        BINDING, or librdkafka's facility (FETCH, CONSUME, OFFSET, COMMIT, CGRP, ...)
//	name       the client ("rdkafka#consumer-3", "rdkafka#producer-2", or '')
//	timestamp  Date.now() when it was logged, milliseconds
//
// Two shapes reach a file:
//   - FormatJSClient, the DefaultLogger: console.log({ message, ...extra }) (console.info,
//     .warn, .error by level), which prints the object with Node's util.inspect: on one line
//     when it is short, else over several lines, "{", one "  key: value," a line, "}";
//     strings in single quotes (double or back quotes when the text holds single quotes),
//     long strings with newlines cut into "'...\n' +" continuation lines. The application's
//     own lines come in between.
//   - FormatJSClientJSON, a structured logger the application plugs in (pino, winston,
//     bunyan): one JSON object a line, the text under "msg" (pino, bunyan) or "message"
//     (winston), the time under "timestamp" (the client's) or "time"; other lines are the
//     application's.
//
// librdkafka's lines are read by the librdkafka parser itself (rdScanner.scanMessage on the
// facility, client and message), BINDING lines give the cache fills ("Attempting to fetch
// N messages to the message cache"), the workers ("Spawning N workers"), pause, resume and
// disconnect; the application's lines are read with --pattern as deliveries. One file can
// carry all three, and is read in chunks like a librdkafka log (parse_chunks.go).

// More of the JS client's log formats (see Formats).
const (
	FormatJSClient     Format = "jsclient"      // confluent-kafka-javascript DefaultLogger output (Node's inspect of objects)
	FormatJSClientJSON Format = "jsclient-json" // confluent-kafka-javascript through a JSON logger (pino, winston, bunyan)
)

// The records the JS client's lines add to librdkafka's (rdRec.op).
const (
	jsFetchRequest rdOp = iota + 100 // BINDING "Attempting to fetch N messages to the message cache": aux = N
	jsWorkers                        // BINDING "Spawning N workers": aux = N
	jsPause                          // BINDING "Pausing N topics": aux = N
	jsResume                         // BINDING "Resuming N topics": aux = N
	jsNote                           // another BINDING line worth the timeline: text
	jsDeliver                        // an application line matching --pattern: topic, part, off; flag = timed
)

var (
	bFac        = []byte("  fac: ")
	bJSONFac    = []byte(`"fac"`)
	bJSONMsg    = []byte(`"msg"`)
	bJSONMsg2   = []byte(`"message"`)
	bBinding    = []byte("BINDING")
	bAttempting = []byte("Attempting to fetch ")
	bSpawning   = []byte("Spawning ")
	bPausingJS  = []byte("Pausing ")
	bResumingJS = []byte("Resuming ")
)

// isJSClientLine reports whether l is a line of the DefaultLogger's inspect output that only
// the client writes: the "  fac: " field of a multi-line object, or a one-line object with fac.
func isJSClientLine(l []byte) bool {
	if bytes.HasPrefix(l, bFac) {
		return true
	}
	return bytes.HasPrefix(l, []byte("{ ")) && bytes.Contains(l, []byte(" fac: ")) && bytes.Contains(l, []byte("message: "))
}

// isJSClientJSONLine reports whether l is one JSON object with the client's fields.
func isJSClientJSONLine(l []byte) bool {
	return len(l) > 0 && l[0] == '{' && bytes.Contains(l, bJSONFac) && (bytes.Contains(l, bJSONMsg) || bytes.Contains(l, bJSONMsg2))
}

// jsChunks is the JS client's log output as a chunked format.
type jsChunks struct {
	json    bool
	pattern *patternScan
}

// cut ends a chunk before its last top-level line: a multi-line object's lines after its
// "{" are indented or its closing "}", so the start of any other line at column 0 is the
// end of every object before it. With none (one object filling a chunk), at the last line.
func (f jsChunks) cut(data []byte) int {
	if f.json {
		return bytes.LastIndexByte(data, '\n')
	}
	for i := len(data) - 2; i >= 0; i-- {
		if data[i] == '\n' && data[i+1] != ' ' && data[i+1] != '}' && data[i+1] != '\t' && data[i+1] != '\n' && data[i+1] != '\r' {
			return i
		}
	}
	return bytes.LastIndexByte(data, '\n')
}

func (f jsChunks) newScanner() chunkScanner {
	return &jsScanner{rd: newRdScanner(), json: f.json, pattern: f.pattern}
}

// patternScan reads the application's delivery lines with --pattern (as patternParser does).
type patternScan struct {
	re                         *regexp.Regexp
	fast                       *fastPattern // nil: the regexp reads every line
	iPart, iOff, iTopic, iTime int
	when                       *evidence.When // --delivered-when: the lines that mean delivered
}

func newPatternScan(re *regexp.Regexp) *patternScan {
	if re == nil {
		return nil
	}
	p, err := evidence.NewPattern(re)
	if err != nil {
		return nil
	}
	ps := &patternScan{re: re, fast: compilePattern(re.String(), re.NumSubexp())}
	ps.iPart, ps.iOff, ps.iTopic, ps.iTime = p.Groups()
	return ps
}

// jsObject is one log object being read.
type jsObject struct {
	open           bool
	start          int    // the line of its "{"
	line           int    // the line of its message (0 until the message is read)
	msg, fac, name []byte // msg: in place in the line or chunk, or own or the scanner's jbuf
	own            []byte // the message when it is copied (the lines of an object come one by one)
	hasMsg, hasFac bool
	ts             int64 // Unix milliseconds
	hasTS          bool
	fromTS         bool   // ts is the client's timestamp: a JSON logger's time is not read
	timeVal        []byte // a JSON logger's time, read at the end unless the client's came
	timeStr        bool
	hasTime        bool
	cont           bool   // the last string value goes on (a "' +" continuation)
	contKey        string // the key of that value
	bad            string
	text           []byte // its first bytes, to name it when it is malformed
}

func (o *jsObject) reset(start int) {
	*o = jsObject{own: o.own[:0], fac: o.fac[:0], name: o.name[:0], text: o.text[:0], start: start}
}

// see keeps the first bytes of the object's first lines ("{" and the line after it), to
// name it when it is malformed.
func (o *jsObject) see(line []byte) {
	if len(o.text) < 2 {
		if len(o.text) > 0 {
			o.text = append(o.text, ' ')
		}
		o.text = append(o.text, bytes.TrimSpace(line[:min(len(line), 200)])...)
	}
}

// jsScanner scans one chunk of the JS client's log output.
type jsScanner struct {
	rd      *rdScanner
	json    bool
	pattern *patternScan
	obj     jsObject
	clean   []byte   // a line without its ANSI colour codes
	str     []byte   // an unescaped string value
	m       []int    // the submatches of the fast pattern
	jbuf    []byte   // an unescaped JSON message (o.msg may point into the chunk instead)
	ts      lastTime // the client's timestamp (parseInt)
	jt      lastTime // a JSON logger's numeric time (jsonTime)
}

// lastTime keeps the last time read and its text: consecutive lines mostly repeat it.
type lastTime struct {
	text []byte
	ms   int64
}

// read returns parse(val), from the last value when val is the same text.
func (t *lastTime) read(val []byte, parse func([]byte) (int64, bool)) (int64, bool) {
	if len(val) > 0 && string(val) == string(t.text) {
		return t.ms, true
	}
	v, ok := parse(val)
	if ok {
		t.text, t.ms = append(t.text[:0], val...), v
	}
	return v, ok
}

// millis reads a timestamp in milliseconds (Date.now()).
func (s *jsScanner) millis(val []byte) (int64, bool) {
	if len(val) == 0 || len(val) > 16 {
		return 0, false
	}
	return s.ts.read(val, parseInt)
}

// jsonTime is jsonTime, numeric times through the scanner's lastTime.
func (s *jsScanner) jsonTime(val []byte, isStr bool) (int64, bool) {
	if isStr || len(val) == 0 || len(val) > 16 {
		return jsonTime(val, isStr)
	}
	return s.jt.read(val, jsonMillis)
}

func jsonMillis(val []byte) (int64, bool) { return jsonTime(val, false) }

func (s *jsScanner) scan(c *rdChunk) {
	s.rd.reset()
	c.reset()
	s.obj.reset(0)
	// The DefaultLogger's multi-line objects are most of the lines: a chunk without ANSI
	// codes reads each well-formed one in a single pass (inspectObject), and falls back to
	// the line-by-line reader (c.takeLine, as c.eachLine) on anything else.
	fast := !s.json && bytes.IndexByte(c.data, 0x1b) < 0
	data := c.data
	for len(data) > 0 {
		if fast && !s.obj.open && len(data) > 1 && data[0] == '{' && data[1] == '\n' {
			if n := s.inspectObject(c, data); n > 0 {
				data = data[n:]
				continue
			}
		}
		var line []byte
		var ok bool
		if line, data, ok = c.takeLine(data); !ok {
			continue
		}
		if bytes.IndexByte(line, 0x1b) >= 0 {
			s.clean = jstok.StripANSI(s.clean[:0], line)
			line = s.clean
		}
		if s.json {
			s.jsonLine(c, line)
		} else {
			s.inspectLine(c, line)
		}
	}
	if s.obj.open {
		s.truncated(c)
	}
}

// inspectObject reads the well-formed multi-line object at the start of data ("{\n", then
// "  key: value," lines, each value a single-quoted string without escapes or a bare value,
// then "}") as inspectLine would read its lines, and returns the bytes it took; 0 for
// anything else (a continuation, a quote or escape, another writer's line, a CR, a line
// over maxLine), which the line-by-line reader then reads from the same "{". It reads the
// values in place: no copy, no per-line call.
func (s *jsScanner) inspectObject(c *rdChunk, data []byte) int {
	p := 2 // after "{\n"
	lines := 1
	msgLine := 0
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
	c.lines += lines
	c.nonblank += lines
	if !o.hasFac {
		return p // an object the application logged: not the client's
	}
	c.matched++
	s.record(c, msgLine, o.fac, o.name, o.msg, o.ts, o.hasTS)
	return p
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

// field keeps what one field of a client log object says: the one place that knows the
// keys, for both shapes. The DefaultLogger's objects (inspect) carry message, fac, name and
// timestamp (Date.now()); a JSON logger's carry the text under msg (pino, bunyan) or message
// (winston), and its own time beside the client's timestamp. val is the value as written:
// for a JSON string (json) its escapes are resolved here, inspect's by the caller; inPlace
// says val lasts as long as the object (else a message is copied).
func (s *jsScanner) field(key, val []byte, isStr, json, inPlace bool) {
	o := &s.obj
	switch string(key) {
	case "msg", "message":
		if !isStr || (s.json && o.hasMsg && string(key) != "msg") || (!s.json && string(key) != "message") {
			return
		}
		switch {
		case json && bytes.IndexByte(val, '\\') >= 0:
			s.jbuf = jstok.UnescapeJSON(s.jbuf[:0], val)
			o.msg = s.jbuf
		case inPlace:
			o.msg = val // no copy: most lines
		default:
			o.own = append(o.own[:0], val...)
			o.msg = o.own
		}
		o.hasMsg = true
	case "fac":
		if isStr {
			o.fac, o.hasFac = append(o.fac[:0], val...), true
		}
	case "name":
		if isStr && json {
			o.name = jstok.UnescapeJSON(o.name[:0], val)
		} else if isStr {
			o.name = append(o.name[:0], val...)
		}
	case "timestamp": // the client's Date.now(), when it logged
		if !s.json {
			if v, ok := s.millis(val); ok {
				o.ts, o.hasTS = v, true
			}
		} else if ms, ok := s.jsonTime(val, isStr); ok {
			o.ts, o.hasTS, o.fromTS = ms, true, true
		}
	case "time": // a JSON logger's own, read at the end unless the client's came
		if !s.json {
			return
		}
		if o.hasTime && !o.fromTS {
			if ms, ok := s.jsonTime(o.timeVal, o.timeStr); ok {
				o.ts, o.hasTS = ms, true
			}
		}
		o.timeVal, o.timeStr, o.hasTime = val, isStr, true
	}
}

// endFields reads a JSON logger's time when the client's timestamp did not come.
func (s *jsScanner) endFields() {
	o := &s.obj
	if o.hasTime && !o.fromTS {
		if ms, ok := s.jsonTime(o.timeVal, o.timeStr); ok {
			o.ts, o.hasTS = ms, true
		}
	}
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

// record reads what one client log line says into a record of the chunk.
func (s *jsScanner) record(c *rdChunk, line int, fac, name, msg []byte, ts int64, timed bool) {
	c.recs = append(c.recs, rdRec{})
	r := &c.recs[len(c.recs)-1]
	var ok bool
	var err error
	if bytes.Equal(fac, bBinding) {
		ok = s.binding(name, msg, r)
	} else {
		ok, err = s.rd.scanMessage(fac, name, msg, r)
	}
	if err != nil {
		c.matched--
		c.badAt(line, msg, err.Error())
	}
	if !ok || err != nil {
		c.recs = c.recs[:len(c.recs)-1]
		return
	}
	r.line = line
	if timed {
		r.ts = ts * int64(time.Millisecond)
	} else {
		r.ts = 0
	}
}

// binding reads the client's own messages (lib/kafkajs/_consumer.js): the cache fills,
// the workers, pause, resume, connect and disconnect, rebalances and errors. Producers'
// messages say nothing about consumption.
func (s *jsScanner) binding(name, msg []byte, r *rdRec) bool {
	if bytes.Contains(name, bProducerName) {
		return false
	}
	*r = rdRec{part: AllPartitions, off: Unknown, aux: Unknown}
	num := func(prefix []byte) (int64, bool) {
		if !bytes.HasPrefix(msg, prefix) {
			return 0, false
		}
		return parseInt(msg[len(prefix):])
	}
	if n, ok := num(bAttempting); ok && bytes.HasSuffix(msg, []byte("messages to the message cache")) {
		r.op, r.aux = jsFetchRequest, n
		return true
	}
	if n, ok := num(bSpawning); ok && bytes.HasSuffix(msg, []byte(" workers")) {
		r.op, r.aux = jsWorkers, n
		return true
	}
	if n, ok := num(bPausingJS); ok && bytes.HasSuffix(msg, []byte(" topics")) {
		r.op, r.aux = jsPause, n
		return true
	}
	if n, ok := num(bResumingJS); ok && bytes.HasSuffix(msg, []byte(" topics")) {
		r.op, r.aux = jsResume, n
		return true
	}
	for _, p := range [][]byte{[]byte("Consumer connected"), []byte("Consumer disconnected"),
		[]byte("Signalling disconnection"), []byte("Received rebalance event"), []byte("Seek error"),
		[]byte("Error"), []byte("Consumer encountered error"), []byte("Could not get watermark")} {
		if bytes.HasPrefix(msg, p) {
			r.op, r.text = jsNote, truncText(msg, 300)
			return true
		}
	}
	return false
}

func truncText(b []byte, n int) string {
	if len(b) > n {
		return string(bytes.ToValidUTF8(b[:n], []byte("?"))) + "…"
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// appLine reads a line of the application's own with --pattern.
func (s *jsScanner) appLine(c *rdChunk, line []byte) {
	p := s.pattern
	if p == nil {
		return
	}
	var m []int
	if p.fast != nil {
		if m = p.fast.match(line, s.m); m != nil {
			s.m = m
		}
	} else {
		m = p.re.FindSubmatchIndex(line)
	}
	if m == nil {
		return
	}
	if p.when != nil && !p.when.MatchLine(line) {
		return // a line that carries an offset but does not mean delivered
	}
	group := func(i int) []byte {
		if i < 0 || m[2*i] < 0 {
			return nil
		}
		return line[m[2*i]:m[2*i+1]]
	}
	pv, ok1 := parseInt(group(p.iPart))
	ov, ok2 := parseInt(group(p.iOff))
	if !ok1 || !ok2 || len(group(p.iPart)) > 9 || len(group(p.iOff)) > 18 {
		c.bad(line, "pattern matched but partition/offset are not numbers")
		return
	}
	c.recs = append(c.recs, rdRec{op: jsDeliver, part: int32(pv), off: ov, aux: Unknown, line: c.lines})
	r := &c.recs[len(c.recs)-1]
	if t := group(p.iTopic); t != nil {
		r.topic = s.rd.intern(t)
	}
	if tv := group(p.iTime); len(tv) > 0 {
		t, ok := ParseLogTime(string(tv))
		if !ok {
			c.recs = c.recs[:len(c.recs)-1]
			c.bad(line, "pattern matched but the time is unreadable")
			return
		}
		r.ts, r.flag = t.UnixNano(), true
	}
}

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
	if err := s.jsonFields(t); err != "" {
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
func (s *jsScanner) jsonFields(b []byte) string {
	if s.jsonFieldsCompact(b) {
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
// FuzzJSONCompact compare the two.
func (s *jsScanner) jsonFieldsCompact(b []byte) bool {
	t := jstok.NewCompact(b)
	for t.Next() {
		s.field(t.Key, t.Val, t.Str, false, true)
	}
	if t.Bad {
		return false
	}
	s.endFields()
	return true
}

// jsonTime reads a time in milliseconds since the epoch: a number (milliseconds; seconds
// when small) or a string in a format ParseLogTime knows.
func jsonTime(val []byte, isStr bool) (int64, bool) {
	if !isStr {
		v, ok := parseInt(val)
		if !ok || len(val) > 16 {
			return 0, false
		}
		if v < 1e11 { // seconds (bunyan writes strings; some loggers epoch seconds)
			if f, err := strconv.ParseFloat(string(val), 64); err == nil {
				return int64(f * 1000), true
			}
		}
		return v, true
	}
	t, ok := ParseLogTime(string(val))
	if !ok {
		return 0, false
	}
	return t.UnixMilli(), true
}

// jsFolder turns the records of a JS client log into events, in file order: librdkafka's
// through the librdkafka parser's fold, the client's and the application's here.
type jsFolder struct {
	rd   *rdkafkaParser
	last int64 // the time of the last timed record: an untimed delivery line happened after it
}

func (f *jsFolder) fold(r *rdRec, emit func(Event)) {
	if r.op < jsFetchRequest {
		if r.ts == 0 {
			r.ts = f.last // a client object without its timestamp
		} else {
			f.last = r.ts
		}
		f.rd.fold(r, emit)
		return
	}
	e := newEvent(KindNote)
	if r.ts != 0 && (r.op != jsDeliver || r.flag) {
		f.last = r.ts
		e.Time, e.Timed = time.Unix(0, r.ts).UTC(), true
	} else if f.last != 0 {
		e.Time = time.Unix(0, f.last).UTC()
	}
	switch r.op {
	case jsFetchRequest:
		e.Name, e.Reason = "fetch-request", "attempting to fetch "+itoa(r.aux)+" messages to the message cache"
	case jsWorkers:
		e.Name, e.Reason = "spawn-workers", itoa(r.aux)+" workers"
	case jsPause, jsResume:
		e.Kind, e.Reason = KindPause, itoa(r.aux)+" topic(s) (the client's pause)"
		if r.op == jsResume {
			e.Kind, e.Reason = KindResume, itoa(r.aux)+" topic(s) (the client's resume)"
		}
	case jsNote:
		e.Name, e.Reason = "client", r.text
	case jsDeliver:
		e.Kind, e.Name = KindDeliver, "delivered"
		e.Topic, e.Partition, e.Offset, e.Count = r.topic, r.part, r.off, 1
		e.Ranges = []kpart.Range{{First: r.off, Last: r.off}}
	}
	emit(e)
}
