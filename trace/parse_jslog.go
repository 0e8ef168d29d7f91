package trace

import (
	"bytes"
	"regexp"
	"time"

	"github.com/kstranded/kstranded/evidence"
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
	// jsTime: the time (ts) of the last of the timed records the scanner dropped as
	// repeats since the record before it. An untimed delivery line is placed at the time
	// of the client's last timed record before it, and which repeats a scan drops depends
	// on where the chunks are cut (a partition's first record in a chunk is always kept):
	// counting the dropped ones too makes the timeline the same whatever the chunks.
	jsTime
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

// jsScanner scans one chunk of the JS client's log output.
type jsScanner struct {
	rd       *rdScanner
	json     bool
	pattern  *patternScan
	obj      jsObject
	clean    []byte       // a line without its ANSI colour codes
	str      []byte       // an unescaped string value
	m        []int        // the submatches of the fast pattern
	jbuf     []byte       // an unescaped JSON message (o.msg may point into the chunk instead)
	ts       lastTime     // the client's timestamp (parseInt)
	jt       lastTime     // a JSON logger's numeric time (jsonTime)
	stripped bool         // the line being read had ANSI codes, stripped (s.clean)
	lines    []jsLineMemo // the lines inspectObject read last at each place of an object
	jm, jm2  jsonLineMemo // the fields of the last compact JSON line of the client's, and a scratch one
	// read: the reading of the last client line record read (valid: not BINDING's, and
	// no error), for the memo of objects
	read jsReading
	objs jsObjectMemo
	vary jsVary // where the times of the object being read are (jsObjectMemo)
}

func (s *jsScanner) scan(c *rdChunk) {
	s.rd.reset()
	s.objs.reset()
	c.reset()
	s.obj.reset(0)
	// The DefaultLogger's multi-line objects are most of the lines: each well-formed one
	// without ANSI codes is read in a single pass (inspectObject), anything else by the
	// line-by-line reader (c.takeLine, as c.eachLine).
	fast := !s.json
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
		if s.json && s.jsonRepeat(c, line) {
			continue // a repeat of a client line kept, which had no ANSI code (jsObjectMemo)
		}
		s.stripped = bytes.IndexByte(line, 0x1b) >= 0
		if s.stripped {
			s.clean = jstok.StripANSI(s.clean[:0], line)
			line = s.clean
			if len(bytes.TrimSpace(line)) == 0 {
				continue // colour codes alone: an empty line, as takeLine skips them
			}
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

// record reads what one client log line says into a record of the chunk.
func (s *jsScanner) record(c *rdChunk, line int, fac, name, msg []byte, ts int64, timed bool) {
	c.recs = append(c.recs, rdRec{})
	r := &c.recs[len(c.recs)-1]
	var ok bool
	var err error
	if bytes.Equal(fac, bBinding) {
		ok = s.binding(name, msg, r)
		s.read.valid = false
	} else {
		// what the message says (kept for the memo of objects, jsObjectMemo), then
		// whether it repeats its partition's last record
		ok, err = s.rd.reading(fac, name, msg, r)
		s.read.valid, s.read.ok = err == nil, ok && err == nil
		if ok && err == nil {
			s.read.rec = *r
			ok = s.rd.keep(r, name)
		}
	}
	s.place(c, line, ok, err, msg, ts, timed)
}

// place keeps or drops the chunk's last record, the reading of a client line: ok, kept;
// else dropped, as a repeat (its time still counts, jsTime), as not the client's, or as
// malformed (err).
func (s *jsScanner) place(c *rdChunk, line int, ok bool, err error, msg []byte, ts int64, timed bool) {
	r := &c.recs[len(c.recs)-1]
	if err != nil {
		c.matched--
		c.badAt(line, msg, err.Error())
	}
	if !ok || err != nil {
		c.recs = c.recs[:len(c.recs)-1]
		if s.rd.repeated {
			s.rd.repeated = false
			if timed && err == nil {
				c.droppedAt(ts * int64(time.Millisecond))
			}
		}
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
	if s.rd.isProducer(name) {
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

// jsFolder turns the records of a JS client log into events, in file order: librdkafka's
// through the librdkafka parser's fold, the client's and the application's here.
type jsFolder struct {
	rd   *rdkafkaParser
	last int64 // the time of the last timed record: an untimed delivery line happened after it
}

func (f *jsFolder) fold(r *rdRec, emit func(Event)) {
	if r.op == jsTime {
		f.last = r.ts
		return
	}
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
		e.Ranges = f.rd.a.oneRange(r.off, r.off)
	}
	emit(e)
}

// droppedAt notes the time of a timed record dropped as a repeat (jsTime): one record
// between two others, holding the last such time.
func (c *rdChunk) droppedAt(ts int64) {
	if n := len(c.recs); n > 0 && c.recs[n-1].op == jsTime {
		c.recs[n-1].ts = ts
		return
	}
	c.recs = append(c.recs, rdRec{op: jsTime, ts: ts, line: c.lines})
}
