package trace

import (
	"bytes"
	"strconv"

	"github.com/kstranded/kstranded/trace/jstok"
)

// The fields of the JS client's log objects, either shape: what each key means
// (jsScanner.field, the one dispatch) and the times they carry.

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
	// field by field: a composite literal is built on the stack and copied, a fifth of
	// inspectObject's time on the DefaultLogger's objects (one reset an object)
	o.open, o.start, o.line = false, start, 0
	o.msg, o.fac, o.name, o.own = nil, o.fac[:0], o.name[:0], o.own[:0]
	o.hasMsg, o.hasFac, o.ts, o.hasTS, o.fromTS = false, false, 0, false, false
	o.timeVal, o.timeStr, o.hasTime = nil, false, false
	o.cont, o.contKey, o.bad, o.text = false, "", "", o.text[:0]
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

// field keeps what one field of a client log object says: the one place that knows the
// keys, for both shapes. The DefaultLogger's objects (inspect) carry message, fac, name and
// timestamp (Date.now()); a JSON logger's carry the text under msg (pino, bunyan) or message
// (winston), and its own time beside the client's timestamp. val is the value as written:
// for a JSON string (json) its escapes are resolved here, inspect's by the caller; inPlace
// says val lasts as long as the object (else a message is copied).
func (s *jsScanner) field(key, val []byte, isStr, json, inPlace bool) {
	o := &s.obj
	switch fieldKeyOf(key) {
	case keyMsg:
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
	case keyFac:
		if isStr {
			o.fac, o.hasFac = append(o.fac[:0], val...), true
		}
	case keyName:
		if isStr && json {
			o.name = jstok.UnescapeJSON(o.name[:0], val)
		} else if isStr {
			o.name = append(o.name[:0], val...)
		}
	case keyTimestamp: // the client's Date.now(), when it logged
		if !s.json {
			if v, ok := s.millis(val); ok {
				o.ts, o.hasTS = v, true
			}
		} else if ms, ok := s.jsonTime(val, isStr); ok {
			o.ts, o.hasTS, o.fromTS = ms, true, true
		}
	case keyTime: // a JSON logger's own, read at the end unless the client's came
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

// fieldKey is a key field reads (keyNone: one it does not).
type fieldKey uint8

const (
	keyNone fieldKey = iota
	keyMsg           // msg or message
	keyFac
	keyName
	keyTimestamp
	keyTime
)

// fieldKeyOf is the one list of the keys field reads.
func fieldKeyOf(key []byte) fieldKey {
	switch string(key) {
	case "msg", "message":
		return keyMsg
	case "fac":
		return keyFac
	case "name":
		return keyName
	case "timestamp":
		return keyTimestamp
	case "time":
		return keyTime
	}
	return keyNone
}

// fieldReads says whether field reads the key. The others (a logger's level, pid,
// hostname, the application's) are not read again from a memo of a line
// (jsonFieldsCompact). TestFieldReadsIsTheKeysFieldReads checks it against what field does.
func fieldReads(key []byte) bool { return fieldKeyOf(key) != keyNone }

// endFields reads a JSON logger's time when the client's timestamp did not come.
func (s *jsScanner) endFields() {
	o := &s.obj
	if o.hasTime && !o.fromTS {
		if ms, ok := s.jsonTime(o.timeVal, o.timeStr); ok {
			o.ts, o.hasTS = ms, true
		}
	}
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
