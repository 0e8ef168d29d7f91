package trace

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// A long-polling client logs the same objects again and again but for their times: the
// fetcher's "Fetch topic t [p] at offset N" for each partition on every poll, with the
// same fac and name, in a DefaultLogger's multi-line objects or a JSON logger's lines.
// The scanner keeps each client object it read whole (inspectObject, or jsonLine's compact
// reader) whose one timestamp field is a number written in digits (jsObjectMemo), with the
// reading of its message (before the repeats are dropped: a function of its fac, name and
// message alone, rdScanner.reading). An object equal to it byte for byte but for the
// digits of its times (the timestamp; a JSON logger's time too, which a timestamp
// overrides), as many of them, is taken as read: its lines counted, its reading placed as
// record places it, at its own timestamp. Digits end no value in either shape (jstok), so
// such an object reads as the one kept but for that time.
// An object over jsObjectMaxBytes is not kept: the memo holds at most 4,096 × 512 bytes
// a scanner. TestTheLineMemoReadsAsTheLines compares the reports with and without it
// (noLineMemo), TestTheObjectMemoReadsARepeatAtItsOwnTime a chunk's records and counts.
type jsObjectMemo struct {
	e []jsObjectEntry // nil until used
	// since the last trial began: hits, objects taken from it; misses, objects read whole
	// and kept in another's place
	hits, misses int
	// skip: the objects for which the memo is left alone, after a trial of too few hits
	// (a busy consumer's positions move on every fetch: reading them costs less than a
	// lookup that misses); it is tried again after them
	skip  int
	prev  int32  // 1 + the index of the entry last read or kept (0: none)
	clock uint64 // counts the entries read or kept (jsObjectEntry.used)
}

const (
	objMemoTrial = 64   // misses before the hits are judged
	objMemoSkip  = 1024 // the objects a trial with too few hits leaves alone
)

// on reports whether the memo is used for the next object, counting it when not.
func (m *jsObjectMemo) on() bool {
	if m.skip > 0 {
		m.skip--
		return false
	}
	return !noLineMemo
}

type jsObjectEntry struct {
	obj     []byte // the object (own copy): "{\n" to "}\n", or a JSON line
	vary    jsVary // where its times' digits are
	lines   int    // its lines, "{" and "}" included
	msgLine int    // the line of its message, from the line before the object's first
	name    []byte // its name's value
	read    jsReading
	// self: its index in the memo; next: 1 + the index of the entry read after it last
	// time (0: none), tried before the hash (the client logs its partitions in turn)
	self, next int32
	h          uint64 // the hash of its key (memoKey)
	used       uint64 // the memo's clock when it was last read or kept
}

// jsReading is what a client line's message says before its repeats are dropped: ok,
// rec (valid: a reading of rdScanner.reading without error).
type jsReading struct {
	valid, ok bool
	rec       rdRec
}

// jsVary is where the digits of an object's times are, while it is read (see): the spans
// a repeat of it may write otherwise.
type jsVary struct {
	spans [3]struct{ at, end int }
	n     int
	ts    int  // the timestamp's span
	tsN   int  // its timestamp fields
	bad   bool // a time the memo does not take (a string, too many, too long), or a JSON line not compact
}

func (v *jsVary) reset() { v.n, v.tsN, v.bad = 0, 0, false }

// see notes a field of the object being read, its value val at index at of the object: a
// timestamp, and in a JSON logger's line a time, written in digits.
func (v *jsVary) see(key, val []byte, at int, isStr, json bool) {
	switch string(key) {
	case "timestamp":
		v.tsN++
		if isStr || !timeDigits(val) || v.n == len(v.spans) {
			v.bad = true
			return
		}
		v.ts = v.n
	case "time":
		if !json || isStr || !timeDigits(val) {
			return // read as the rest of the object is (a DefaultLogger's time is not read)
		}
		if v.n == len(v.spans) {
			v.bad = true
			return
		}
	default:
		return
	}
	v.spans[v.n].at, v.spans[v.n].end = at, at+len(val)
	v.n++
}

// timeDigits reports whether a time's value is digits the memo takes: 1 to 16 of them.
func timeDigits(b []byte) bool { return len(b) > 0 && len(b) <= 16 && allDigits(b) }

const (
	jsObjectMemoSize = 1 << 12 // entries per scanner (a power of two)
	// jsObjectMemoWays: the entries a key may take, a set (a power of two). With one, the
	// keys of 1,000 partitions' positions shared their entry with another key's 22 % of the
	// time, and each of such two took the other's place on every poll.
	jsObjectMemoWays = 4
	jsObjectMaxBytes = 512 // the longest object kept (a fetcher's position: 230-300 bytes)
)

// set returns the entries of the objects keyed by key (a DefaultLogger's object: its first
// line; a JSON line: its last bytes, where the message is), and the key's hash.
func (m *jsObjectMemo) set(key []byte) ([]jsObjectEntry, uint64) {
	if m.e == nil {
		m.e = make([]jsObjectEntry, jsObjectMemoSize)
		for i := range m.e {
			m.e[i].self = int32(i)
		}
	}
	h := maphash.Bytes(memoSeed, key)
	i := int(h&(jsObjectMemoSize/jsObjectMemoWays-1)) * jsObjectMemoWays
	return m.e[i : i+jsObjectMemoWays], h
}

// place is the entry of set that an object is kept in: an empty one, else the one least
// recently used. Objects of one key (the same message from two consumers) each keep an
// entry.
func place(set []jsObjectEntry) *jsObjectEntry {
	var lru *jsObjectEntry
	for i := range set {
		e := &set[i]
		if len(e.obj) == 0 {
			return e
		}
		if lru == nil || e.used < lru.used {
			lru = e
		}
	}
	return lru
}

// predicted is the entry read after the last one the last time, nil for none.
func (m *jsObjectMemo) predicted() *jsObjectEntry {
	if m.prev == 0 {
		return nil
	}
	if nx := m.e[m.prev-1].next; nx > 0 {
		return &m.e[nx-1]
	}
	return nil
}

// follows notes that e was read (or kept) after the entry before.
func (m *jsObjectMemo) follows(e *jsObjectEntry) {
	if m.prev > 0 {
		m.e[m.prev-1].next = e.self + 1
	}
	m.prev = e.self + 1
	m.clock++
	e.used = m.clock
}

// memoKey is the key of the object at the start of data (ok false: none). A
// DefaultLogger's object: its first line after "{". A JSON line: its last bytes, where a
// logger writes the message (which its repeats keep and the other lines change: the
// partition and offset of a fetcher's position, 50 to 70 bytes before the end), not the
// times before it.
func (s *jsScanner) memoKey(data []byte) ([]byte, bool) {
	if s.json {
		return data[max(0, len(data)-jsonMemoTail):], true
	}
	nl := bytes.IndexByte(data[2:], '\n')
	if nl < 0 {
		return nil, false
	}
	return data[2 : 2+nl], true
}

const jsonMemoTail = 128

// reset starts a chunk.
func (m *jsObjectMemo) reset() { m.hits, m.misses, m.skip = 0, 0, 0 }

// keepObject remembers the client object just read whole (obj: a DefaultLogger's, "{\n"
// to "}\n", its lines and its message's line; or a JSON line) with what it read (s.read)
// and where its times are (s.vary).
func (s *jsScanner) keepObject(obj []byte, lines, msgLine int) {
	v := &s.vary
	if v.bad || v.tsN != 1 || !s.read.valid || noLineMemo || s.objs.skip > 0 || len(obj) > jsObjectMaxBytes {
		return
	}
	key, _ := s.memoKey(obj) // an object kept ends with its "}\n"
	m := &s.objs
	set, h := m.set(key)
	e := place(set)
	if len(e.obj) > 0 {
		// a miss: an object read whole, which takes the place of another. A hit saves
		// several times what a miss costs: the memo is left for a while when under a third
		// hit (a busy consumer's positions, new on every fetch)
		m.misses++
		if m.misses >= objMemoTrial && m.misses > 2*m.hits {
			m.hits, m.misses, m.skip = 0, 0, objMemoSkip
		}
	}
	e.h = h
	e.obj = append(e.obj[:0], obj...)
	e.vary, e.lines, e.msgLine = *v, lines, msgLine
	e.name = append(e.name[:0], s.obj.name...)
	e.read = s.read
	e.next = 0
	m.follows(e)
}

// repeats reports whether data starts with (json: is) e's object but for its times' digits,
// as many of them.
func (e *jsObjectEntry) repeats(data []byte, json bool) bool {
	k := e.obj
	if len(k) == 0 || len(data) < len(k) || json && len(data) != len(k) {
		return false
	}
	from := 0
	for _, sp := range e.vary.spans[:e.vary.n] {
		if string(data[from:sp.at]) != string(k[from:sp.at]) || !allDigits(data[sp.at:sp.end]) {
			return false
		}
		from = sp.end
	}
	return string(data[from:len(k)]) == string(k[from:])
}

// fromMemo reads the object at the start of data (a DefaultLogger's, from its "{\n"; json:
// the JSON line) from the memo when it repeats one kept, and returns the bytes it took (0:
// not in the memo): first the entry read after the last one the last time (the client
// logs its partitions in turn: no line end to find, no hash), then the entries of its key's
// set.
func (s *jsScanner) fromMemo(c *rdChunk, data []byte) int {
	m := &s.objs
	if m.e == nil || !m.on() {
		return 0
	}
	if e := m.predicted(); e != nil && e.repeats(data, s.json) {
		return s.take(c, data, e)
	}
	key, ok := s.memoKey(data)
	if !ok {
		return 0
	}
	set, h := m.set(key)
	for i := range set {
		if e := &set[i]; e.h == h && e.repeats(data, s.json) {
			return s.take(c, data, e)
		}
	}
	return 0 // a miss if it is kept in another's place (keepObject)
}

// take reads the object at the start of data, which repeats e's, from e, and returns the
// bytes it took (0: its timestamp is not read).
func (s *jsScanner) take(c *rdChunk, data []byte, e *jsObjectEntry) int {
	m := &s.objs
	sp := e.vary.spans[e.vary.ts]
	var ts int64
	var ok bool
	if s.json {
		ts, ok = s.jsonTime(data[sp.at:sp.end], false)
	} else {
		ts, ok = s.millis(data[sp.at:sp.end])
	}
	if !ok {
		return 0
	}
	m.hits++
	m.follows(e)
	line := c.lines + e.msgLine
	c.lines += e.lines
	c.nonblank += e.lines
	c.matched++
	if e.read.ok { // else not a record: record appends and drops it
		c.recs = append(c.recs, e.read.rec)
		s.place(c, line, s.rd.keep(&c.recs[len(c.recs)-1], e.name), nil, nil, ts, true)
	}
	return len(e.obj)
}

// allDigits reports whether b is ASCII digits, eight at a time.
func allDigits(b []byte) bool {
	for len(b) >= 8 {
		if !areEightDigits(binary.LittleEndian.Uint64(b)) {
			return false
		}
		b = b[8:]
	}
	for _, d := range b {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}
