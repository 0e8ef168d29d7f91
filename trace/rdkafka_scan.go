package trace

import (
	"bytes"
)

// scan, the first stage of reading a librdkafka log: one line into an rdRec, by its
// facility (see rdkafkaParser).

var (
	bFetchTopic   = newFinder("Fetch topic ")
	bAtOffset     = newFinder(" at offset ")
	bEnqueue      = newFinder("Enqueue ")
	bOn           = newFinder(" on ")
	bLastOffset   = newFinder("last_offset ")
	bCtrl         = newFinder(" ctrl msgs")
	bStored       = newFinder("stored offset ")
	bForCommit    = newFinder("for commit")
	bOffsetCom    = newFinder("OffsetCommit for ")
	bReturned     = newFinder(": returned: ")
	bSuccess      = newFinder("Success")
	bStartFetch   = newFinder(" start fetching at offset ")
	bPartition    = newFinder("Partition ")
	bTopic        = newFinder("Topic ")
	bNotFetch     = newFinder("is not fetchable: ")
	bIsFetchable  = newFinder(") is fetchable")
	bFetchFailed  = newFinder(": Fetch failed at offset ")
	bRemoving     = newFinder("Removing ")
	bStoredEq     = newFinder("stored offset=")
	bAdd          = newFinder(": add ")
	bDelete       = newFinder(": delete ")
	bMaxPoll      = newFinder("maximum poll interval (")
	bExceeded     = newFinder("ms) exceeded by ")
	bPausing      = newFinder("Pausing fetchers for ")
	bResuming     = newFinder("Resuming fetchers for ")
	bOffReset     = newFinder(": offset reset (at offset ")
	bTo           = newFinder(") to ")
	bLost         = newFinder(" lost: ")
	bCommitted    = newFinder("committed offset ")
	bProducerName = newFinder("#producer-")
	bToppars      = newFinder("toppar(s)")
	bNotIncluding = newFinder("not including")
	bThreadEnd    = newFinder("]: ")
)

// rdOp is what one librdkafka line says, before fold turns it into events.
type rdOp uint8

const (
	rdNone       rdOp = iota
	rdPosition        // Fetch topic / Fetch failed at offset: off; text: "", "EOF" or the error
	rdStartFetch      // Partition t [p] start fetching at offset: off
	rdFetchable       // Topic t [p] ... is (not) fetchable: flag = paused
	rdFetch           // Enqueue n message(s): off = last_offset, aux = n, ctrl
	rdStore           // stored offset: off; aux = committed offset or Unknown; flag = for commit
	rdOffReset        // offset reset: off (or Unknown), text
	rdRemove          // Removing t [p] ... stored offset=: off
	rdCommit          // OffsetCommit ... returned: flag = success, ctrl = 1 for "No offset stored"; text on failure
	rdAssign          // PARTADD
	rdRevoke          // PARTDEL
	rdMaxPoll         // MAXPOLL: off = interval ms or Unknown, aux = exceeded by ms or Unknown, text
	rdLost            // LOST: text
	rdPause           // PAUSE: text
	rdResume          // PAUSE (resuming): text
)

// rdRec is one scanned line.
type rdRec struct {
	line   int // within its chunk, 1-based
	op     rdOp
	flag   bool
	ctrl   int32
	part   int32
	ts     int64 // Unix nanoseconds
	off    int64
	aux    int64
	topic  string
	client string
	text   string
}

// rdScanner holds what scan may reuse between lines of one chunk: interned topic and
// client names, and the last record of each partition, to drop repeats.
type rdScanner struct {
	names    map[string]string
	lastName string  // the last name interned
	last     []rdRec // by partition (< 1<<16)
	// repeated: keep dropped a record as a repeat (the JS scanner reads and clears it:
	// the dropped record's time still counts, jsTime)
	repeated bool
	memo     []memoEntry // the readings of recent messages (rdkafka_memo.go); nil until used
	// the memo's hits and misses in this chunk; memoOff: too few hits, not used for the
	// rest of the chunk
	memoHits, memoMisses int
	memoOff              bool
	// the client of the last message read, and whether it is a producer
	lastClient []byte
	producer   bool
}

func newRdScanner() *rdScanner { return &rdScanner{names: map[string]string{}} }

func (sc *rdScanner) reset() {
	sc.last = sc.last[:0]
	sc.memoHits, sc.memoMisses, sc.memoOff = 0, 0, false
}

// repeat reports whether r says again what the last record of its partition in this chunk
// said, in a way that cannot change anything: a fetch position or a stored offset (not for
// commit) that the analyzer already holds. The fetcher repeats "Fetch topic t [p] at offset
// N" on every long poll and the offset manager its "stored offset" line on every commit
// timer tick: these are most of a debug log. Records of other partitions in between do not
// move this one's position or stored offset.
func (sc *rdScanner) repeat(r *rdRec) bool {
	if r.part < 0 || r.part >= 1<<16 {
		return false
	}
	p := int(r.part)
	for p >= len(sc.last) {
		sc.last = append(sc.last, rdRec{})
	}
	l := &sc.last[p]
	same := l.op == r.op && l.off == r.off && l.aux == r.aux && l.topic == r.topic &&
		(r.op == rdPosition && (r.text == l.text || r.text == "" || r.text == "EOF") || r.op == rdStore && !r.flag && !l.flag)
	if !same {
		*l = rdRec{op: r.op, off: r.off, aux: r.aux, topic: r.topic, flag: r.flag, text: r.text}
	}
	return same
}

// scan reads one line. It returns ok=false for a well-formed line that says nothing about
// offsets (or repeats what its partition's last line said), and an error for a line that
// is not a librdkafka log line.
func (sc *rdScanner) scan(l []byte, r *rdRec) (bool, error) {
	if !isRdkafkaLine(l) {
		return false, errMalformed("not a librdkafka log line (%LEVEL|epoch|FACILITY|client| ...)")
	}
	rest := l[3:]
	// the time as librdkafka writes it (seconds and milliseconds) is read with its bar in
	// one step; any other is looked for, and read once the line is known to matter
	ts, tsOK := epochFixed(rest)
	var tsField []byte
	if tsOK {
		rest = rest[15:]
	} else {
		i := bytes.IndexByte(rest, '|')
		if i < 0 {
			return false, errMalformed("no timestamp field")
		}
		tsField = rest[:i]
		rest = rest[i+1:]
	}
	// facilities are short: a byte loop, the search past it
	i := 0
	for i < len(rest) && i < 16 && rest[i] != '|' {
		i++
	}
	if i == len(rest) || rest[i] != '|' {
		if i = bytes.IndexByte(rest, '|'); i < 0 {
			return false, errMalformed("no facility field")
		}
	}
	fac := rest[:i]
	rest = rest[i+1:]
	i = bytes.IndexByte(rest, '|')
	if i < 0 {
		return false, errMalformed("no client field")
	}
	ok, err := sc.scanMessage(fac, rest[:i], rest[i+1:], r)
	if !ok || err != nil {
		return false, err
	}
	if !tsOK {
		if ts, tsOK = parseEpochNano(tsField); !tsOK {
			return false, errMalformed("bad timestamp")
		}
	}
	r.ts = ts
	return true, nil
}

// facilityOp maps a facility to the record it may give. Most facilities of a
// consumer,fetch,cgrp debug log (DUMP_*, ASSIGNDONE, HEARTBEAT, ...) say nothing here, so the
// dispatch on the facility comes before any look at the message.
func facilityOp(fac []byte) rdOp {
	switch len(fac) {
	case 4:
		if string(fac) == "LOST" {
			return rdLost
		}
	case 5:
		switch string(fac) {
		case "FETCH":
			return rdPosition
		case "PAUSE":
			return rdPause
		}
	case 6:
		switch string(fac) {
		case "OFFSET":
			return rdStore
		case "REMOVE":
			return rdRemove
		case "COMMIT":
			return rdCommit
		}
	case 7:
		switch string(fac) {
		case "CONSUME":
			return rdFetch
		case "PARTADD":
			return rdAssign
		case "PARTDEL":
			return rdRevoke
		case "MAXPOLL":
			return rdMaxPoll
		}
	case 8:
		if string(fac) == "FETCHERR" {
			return rdPosition
		}
	}
	return rdNone
}

// scanMessage reads the message of one log line, given its facility and client name, into
// r (all but the time). The JS client forwards librdkafka's lines as exactly these three
// fields (jsScanner.record), so both formats share it.
func (sc *rdScanner) scanMessage(fac, client, msg []byte, r *rdRec) (bool, error) {
	ok, err := sc.reading(fac, client, msg, r)
	if !ok || err != nil {
		return false, err
	}
	return sc.keep(r, client), nil
}

// reading is scanMessage before keep: what the message says, a function of its facility,
// client and message alone (readMessage), through the memo of the fetcher's positions.
func (sc *rdScanner) reading(fac, client, msg []byte, r *rdRec) (bool, error) {
	op := facilityOp(fac)
	if op == rdNone {
		return false, nil
	}
	if op == rdPosition && len(fac) == 5 && bytes.HasSuffix(msg, bToppars.s) {
		return false, nil // the fetcher's request summary, "Fetch 3/3/3 toppar(s)"
	}
	if op != rdPosition || len(msg) > memoMaxMsg || sc.memoOff || noMemo {
		// the fetcher's positions repeat while a partition waits; the other messages
		// (Enqueue's new last offset, a busy consumer's stored offsets) rarely do
		return sc.readMessage(op, fac, client, msg, r)
	}
	e := sc.memoOf(fac, client, msg)
	if !e.is(fac, client, msg) {
		ok, err := sc.readMessage(op, fac, client, msg, r)
		e.set(fac, client, msg, ok, err, r)
		sc.memoMisses++
		sc.memoOff = sc.memoMisses >= memoTrial && 3*sc.memoMisses > sc.memoHits
	} else {
		sc.memoHits++
		if e.ok && e.err == nil {
			*r = e.rec
		}
	}
	if !e.ok || e.err != nil {
		return false, e.err
	}
	return true, nil
}

// readMessage is scanMessage without the memo and without keep: what the line says, a
// function of its facility, client and message alone.
func (sc *rdScanner) readMessage(op rdOp, fac, client, msg []byte, r *rdRec) (bool, error) {
	// with debug on, every client of the process (producers and admin clients, which
	// librdkafka names "<client.id>#producer-N", next to the consumer) logs into the same
	// stream: only consumers fetch, store and commit
	if sc.isProducer(client) {
		return false, nil
	}
	*r = rdRec{op: op, part: AllPartitions, off: Unknown, aux: Unknown}
	if op == rdPosition && len(fac) == 5 {
		// FETCH: the long-poll lines are most of a log; read them before anything else
		if j := bFetchTopic.in(msg); j >= 0 {
			topic, part, off, ok := sc.topicPartAt(msg[j+len(bFetchTopic.s):], &bAtOffset)
			if !ok {
				return false, errMalformed("unreadable Fetch topic line")
			}
			r.topic, r.part, r.off = topic, part, off
			return true, nil
		}
	}
	if len(msg) > 0 && msg[0] == ' ' || bytes.HasPrefix(msg, []byte("[thrd:")) {
		if j := bThreadEnd.in(msg); j >= 0 {
			msg = msg[j+3:]
		}
	}
	return sc.message(fac, msg, r)
}

// isProducer reports whether the client name is a producer's ("<client.id>#producer-N"),
// looking at a name once while the lines go on naming it.
func (sc *rdScanner) isProducer(client []byte) bool {
	if !bytes.Equal(client, sc.lastClient) {
		sc.lastClient = append(sc.lastClient[:0], client...)
		sc.producer = bProducerName.contains(client)
	}
	return sc.producer
}

// keep drops repeats and names the client of the records that settle commits.
func (sc *rdScanner) keep(r *rdRec, client []byte) bool {
	if r.topic != "" && sc.repeat(r) {
		sc.repeated = true
		return false
	}
	if r.op == rdStore || r.op == rdRemove || r.op == rdCommit {
		r.client = sc.intern(client)
	}
	return true
}

// message reads the message of a line of an interesting facility into r: one reader per
// facility.
func (sc *rdScanner) message(fac, msg []byte, r *rdRec) (bool, error) {
	switch r.op {
	case rdPosition:
		if fac[len(fac)-1] == 'R' { // FETCHERR
			return sc.fetchFailed(msg, r)
		}
		return sc.fetcher(msg, r)
	case rdFetch:
		return sc.enqueue(msg, r)
	case rdStore: // OFFSET
		return sc.offset(msg, r)
	case rdRemove:
		return sc.remove(msg, r)
	case rdCommit:
		return commitResult(msg, r), nil
	case rdAssign, rdRevoke:
		return sc.partAddDel(msg, r), nil
	case rdMaxPoll:
		return maxPollExceeded(msg, r), nil
	case rdLost:
		j := bLost.in(msg)
		if j < 0 {
			return false, nil
		}
		r.text = "lost: " + string(msg[j+len(bLost.s):])
		return true, nil
	case rdPause:
		return pauseResume(msg, r), nil
	}
	return false, nil
}
