package trace

import (
	"bytes"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// rdkafkaParser reads librdkafka debug logs as every librdkafka-based client writes them
// (confluent-kafka-go, -python, -dotnet, -javascript, kcat) with debug=consumer,fetch,cgrp:
//
//	%7|1796225597.721|CONSUME|rdkafka#consumer-2| [thrd:127.0.0.1:46125/0]: 127.0.0.1:46125/0: Enqueue 201 message(s) (690 bytes, 201 ops) on stranded [0] fetch queue (qlen 0, v2, last_offset 200, 1 ctrl msgs, 0 aborted msgsets, uncompressed)
//
// The line shapes were learnt from librdkafka v2.11.1 (trace/testdata/rdkafka-go-consumer.log,
// captured from a confluent-kafka-go consumer, and repro-v1.10.0-rdkafka.log, from kstranded
// repro); the messages come from rdkafka_fetcher.c ("Fetch topic %.*s [%d] at offset"),
// rdkafka_msgset_reader.c ("Enqueue %i message(s)"), rdkafka_assignment.c / rdkafka_offset.c
// ("stored offset ... for commit") and rdkafka_cgrp.c ("OffsetCommit for %d partition(s)
// ...: returned: %s", "Application maximum poll interval (%dms) exceeded").
//
// This is the hot path of trace parse, in two stages. scan reads one line into an rdRec
// (bytes only, no regular expressions, no allocation except for new topic names and the
// text of rare lines); it is a function of the line alone, so chunks of a file are scanned
// concurrently (parse_chunks.go). fold then runs over the records in file order and holds
// everything that depends on earlier lines: offsets stored but not yet committed, the
// paused state, the analyzer's fetch position.
type rdkafkaParser struct {
	a       *Analyzer
	pending []pendingCommit
	paused  map[kpart.TopicPartition]bool
}

type pendingCommit struct {
	client string
	topic  string
	part   int32
	offset int64
}

func newRdkafkaParser(a *Analyzer) *rdkafkaParser {
	return &rdkafkaParser{a: a, paused: map[kpart.TopicPartition]bool{}}
}

// isRdkafkaLine reports whether l looks like `%7|1700000000.123|FAC|client| ...`.
func isRdkafkaLine(l []byte) bool {
	return len(l) > 4 && l[0] == '%' && l[1] >= '0' && l[1] <= '9' && l[2] == '|' && l[3] >= '0' && l[3] <= '9'
}

var (
	bFetchTopic   = []byte("Fetch topic ")
	bAtOffset     = []byte(" at offset ")
	bEnqueue      = []byte("Enqueue ")
	bOn           = []byte(" on ")
	bLastOffset   = []byte("last_offset ")
	bCtrl         = []byte(" ctrl msgs")
	bStored       = []byte("stored offset ")
	bForCommit    = []byte("for commit")
	bOffsetCom    = []byte("OffsetCommit for ")
	bReturned     = []byte(": returned: ")
	bSuccess      = []byte("Success")
	bStartFetch   = []byte(" start fetching at offset ")
	bPartition    = []byte("Partition ")
	bTopic        = []byte("Topic ")
	bNotFetch     = []byte("is not fetchable: ")
	bIsFetchable  = []byte(") is fetchable")
	bFetchFailed  = []byte(": Fetch failed at offset ")
	bRemoving     = []byte("Removing ")
	bStoredEq     = []byte("stored offset=")
	bAdd          = []byte(": add ")
	bDelete       = []byte(": delete ")
	bMaxPoll      = []byte("maximum poll interval (")
	bExceeded     = []byte("ms) exceeded by ")
	bPausing      = []byte("Pausing fetchers for ")
	bResuming     = []byte("Resuming fetchers for ")
	bOffReset     = []byte(": offset reset (at offset ")
	bTo           = []byte(") to ")
	bLost         = []byte(" lost: ")
	bCommitted    = []byte("committed offset ")
	bProducerName = []byte("#producer-")
	bToppars      = []byte("toppar(s)")
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
}

func newRdScanner() *rdScanner { return &rdScanner{names: map[string]string{}} }

func (sc *rdScanner) reset() { sc.last = sc.last[:0] }

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
	i := bytes.IndexByte(rest, '|')
	if i < 0 {
		return false, errMalformed("no timestamp field")
	}
	tsField := rest[:i]
	rest = rest[i+1:]
	i = bytes.IndexByte(rest, '|')
	if i < 0 {
		return false, errMalformed("no facility field")
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
	ts, tok := parseEpoch(tsField)
	if !tok {
		return false, errMalformed("bad timestamp")
	}
	r.ts = ts.UnixNano()
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
// fields (parse_jslog.go), so both formats share it.
func (sc *rdScanner) scanMessage(fac, client, msg []byte, r *rdRec) (bool, error) {
	op := facilityOp(fac)
	if op == rdNone {
		return false, nil
	}
	// with debug on, every client of the process (producers and admin clients, which
	// librdkafka names "<client.id>#producer-N", next to the consumer) logs into the same
	// stream: only consumers fetch, store and commit
	if bytes.Contains(client, bProducerName) {
		return false, nil
	}
	*r = rdRec{op: op, part: AllPartitions, off: Unknown, aux: Unknown}
	if op == rdPosition && len(fac) == 5 {
		// FETCH: the long-poll lines are most of a log; read them before anything else
		if bytes.HasSuffix(msg, bToppars) {
			return false, nil // the fetcher's request summary, "Fetch 3/3/3 toppar(s)"
		}
		if j := bytes.Index(msg, bFetchTopic); j >= 0 {
			topic, part, off, ok := sc.topicPartAt(msg[j+len(bFetchTopic):], bAtOffset)
			if !ok {
				return false, errMalformed("unreadable Fetch topic line")
			}
			r.topic, r.part, r.off = topic, part, off
			return sc.keep(r, client), nil
		}
	}
	if len(msg) > 0 && msg[0] == ' ' || bytes.HasPrefix(msg, []byte("[thrd:")) {
		if j := bytes.Index(msg, []byte("]: ")); j >= 0 {
			msg = msg[j+3:]
		}
	}
	ok, err := sc.message(fac, msg, r)
	if !ok || err != nil {
		return false, err
	}
	return sc.keep(r, client), nil
}

// keep drops repeats and names the client of the records that settle commits.
func (sc *rdScanner) keep(r *rdRec, client []byte) bool {
	if r.topic != "" && sc.repeat(r) {
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
		j := bytes.Index(msg, bLost)
		if j < 0 {
			return false, nil
		}
		r.text = "lost: " + string(msg[j+len(bLost):])
		return true, nil
	case rdPause:
		return pauseResume(msg, r), nil
	}
	return false, nil
}

// fetchFailed reads "<broker>: topic [p]: Fetch failed at offset O (...): _PARTITION_EOF".
func (sc *rdScanner) fetchFailed(msg []byte, r *rdRec) (bool, error) {
	j := bytes.Index(msg, bFetchFailed)
	if j < 0 {
		return false, nil
	}
	seg := msg[:j]
	if k := bytes.LastIndex(seg, []byte(": ")); k >= 0 {
		seg = seg[k+2:]
	}
	topic, part, ok := sc.topicPart(seg)
	off, ok2 := parseInt(msg[j+len(bFetchFailed):])
	if !ok || !ok2 {
		return false, errMalformed("unreadable Fetch failed line")
	}
	r.topic, r.part, r.off = topic, part, off
	if bytes.Contains(msg, []byte("_PARTITION_EOF")) {
		r.text = "EOF"
	} else {
		r.text = "fetch error"
		if k := bytes.LastIndex(msg, []byte("): ")); k >= 0 {
			r.text = string(msg[k+3:])
		}
	}
	return true, nil
}

// fetcher reads the FETCH lines: "Fetch topic t [p] at offset N", "Partition t [p] start
// fetching at offset N", "Topic t [p] ... is (not) fetchable".
func (sc *rdScanner) fetcher(msg []byte, r *rdRec) (bool, error) {
	// the fetcher's own request summary, "Fetch 3/3/3 toppar(s)", is a third of the
	// FETCH lines
	if bytes.HasSuffix(msg, bToppars) {
		return false, nil
	}
	if j := bytes.Index(msg, bFetchTopic); j >= 0 {
		topic, part, off, ok := sc.topicPartAt(msg[j+len(bFetchTopic):], bAtOffset)
		if !ok {
			return false, errMalformed("unreadable Fetch topic line")
		}
		r.topic, r.part, r.off = topic, part, off
		return true, nil
	}
	if bytes.HasPrefix(msg, bPartition) {
		j := bytes.Index(msg, bStartFetch)
		if j < 0 {
			return false, nil
		}
		topic, part, ok := sc.topicPart(msg[len(bPartition) : j+1])
		off, ok2 := parseInt(msg[j+len(bStartFetch):])
		if !ok || !ok2 {
			return false, errMalformed("unreadable start-fetching line")
		}
		r.op, r.topic, r.part, r.off = rdStartFetch, topic, part, off
		return true, nil
	}
	if j := bytes.Index(msg, bTopic); j >= 0 {
		nf := bytes.Index(msg, bNotFetch)
		ff := bytes.Index(msg, bIsFetchable)
		if nf < 0 && ff < 0 {
			return false, nil
		}
		topic, part, ok := sc.topicPart(msg[j+len(bTopic):])
		if !ok {
			return false, errMalformed("unreadable fetchable line")
		}
		r.op, r.topic, r.part = rdFetchable, topic, part
		r.flag = nf >= 0 && bytes.HasPrefix(msg[nf+len(bNotFetch):], []byte("paused"))
		return true, nil
	}
	return false, nil
}

// enqueue reads "Enqueue N message(s) (...) on t [p] fetch queue (..., last_offset L, C ctrl msgs, ...)".
func (sc *rdScanner) enqueue(msg []byte, r *rdRec) (bool, error) {
	j := bytes.Index(msg, bEnqueue)
	if j < 0 {
		return false, nil
	}
	// each part is looked for after the one before it (busy logs: a third of the lines)
	at := j + len(bEnqueue)
	n, ok := parseInt(msg[at:])
	on, lo := index(msg, bOn, at), -1
	if on >= 0 {
		lo = index(msg, bLastOffset, on+len(bOn))
	}
	if !ok || on < 0 || lo < 0 {
		return false, errMalformed("unreadable Enqueue line")
	}
	topic, part, ok := sc.topicPart(msg[on+len(bOn):])
	last, ok2 := parseInt(msg[lo+len(bLastOffset):])
	if !ok || !ok2 {
		return false, errMalformed("unreadable Enqueue line")
	}
	if c := bytes.Index(msg[lo:], bCtrl); c >= 0 {
		k := lo + c - 1
		for k > lo && msg[k] >= '0' && msg[k] <= '9' {
			k--
		}
		v, _ := parseInt(msg[k+1 : lo+c])
		r.ctrl = int32(min(v, n))
	}
	r.topic, r.part, r.off, r.aux = topic, part, last, n
	return true, nil
}

// index is bytes.Index(b[from:], sep) as an index of b (-1: none).
func index(b, sep []byte, from int) int {
	if i := bytes.Index(b[from:], sep); i >= 0 {
		return from + i
	}
	return -1
}

// offset reads the OFFSET lines: "Topic t [p]: stored offset S ..., committed offset C ...:
// setting stored offset S ... for commit" and "t [p]: offset reset (at offset X) to Y".
func (sc *rdScanner) offset(msg []byte, r *rdRec) (bool, error) {
	if bytes.HasPrefix(msg, bTopic) {
		j := bytes.Index(msg, bStored)
		if j < 0 {
			return false, nil
		}
		topic, part, ok := sc.topicPart(msg[len(bTopic):j])
		if !ok {
			return false, errMalformed("unreadable stored offset line")
		}
		s, ok := parseInt(msg[j+len(bStored):])
		if !ok {
			return false, nil // INVALID: nothing stored yet
		}
		r.topic, r.part, r.off = topic, part, s
		if c := bytes.Index(msg, bCommitted); c >= 0 {
			if co, ok := parseInt(msg[c+len(bCommitted):]); ok {
				r.aux = co
			}
		}
		r.flag = bytes.Contains(msg, bForCommit) && !bytes.Contains(msg, []byte("not including"))
		return true, nil
	}
	if j := bytes.Index(msg, bOffReset); j >= 0 {
		topic, part, ok := sc.topicPart(msg[:j+1])
		k := bytes.Index(msg[j:], bTo)
		if !ok || k < 0 {
			return false, errMalformed("unreadable offset reset line")
		}
		r.op, r.topic, r.part = rdOffReset, topic, part
		if off, ok := parseInt(msg[j+k+len(bTo):]); ok {
			r.off = off
		}
		r.text = "offset reset: " + string(msg[j+k+len(bTo):])
		return true, nil
	}
	return false, nil
}

// remove reads "Removing t [p] ... stored offset=S".
func (sc *rdScanner) remove(msg []byte, r *rdRec) (bool, error) {
	if !bytes.HasPrefix(msg, bRemoving) {
		return false, nil
	}
	j := bytes.Index(msg, bStoredEq)
	topic, part, ok := sc.topicPart(msg[len(bRemoving):])
	if !ok || j < 0 {
		return false, nil
	}
	s, ok := parseInt(msg[j+len(bStoredEq):])
	if !ok {
		return false, nil
	}
	r.topic, r.part, r.off = topic, part, s
	return true, nil
}

// commitResult reads "OffsetCommit for N partition(s) ...: returned: Success".
func commitResult(msg []byte, r *rdRec) bool {
	if bytes.Index(msg, bOffsetCom) < 0 {
		return false
	}
	k := bytes.Index(msg, bReturned)
	if k < 0 {
		return false
	}
	result := msg[k+len(bReturned):]
	r.flag = bytes.HasPrefix(result, bSuccess)
	if bytes.Contains(result, []byte("No offset stored")) {
		r.ctrl = 1
	}
	if !r.flag {
		r.text = string(result)
	}
	return true
}

// partAddDel reads the PARTADD / PARTDEL lines: "...: add t [p]", "...: delete t [p]".
func (sc *rdScanner) partAddDel(msg []byte, r *rdRec) bool {
	sep := bAdd
	if r.op == rdRevoke {
		sep = bDelete
	}
	j := bytes.Index(msg, sep)
	if j < 0 {
		return false
	}
	topic, part, ok := sc.topicPart(msg[j+len(sep):])
	if !ok {
		return false
	}
	r.topic, r.part = topic, part
	return true
}

// maxPollExceeded reads "Application maximum poll interval (Nms) exceeded by Mms".
func maxPollExceeded(msg []byte, r *rdRec) bool {
	j := bytes.Index(msg, bMaxPoll)
	if j < 0 {
		return false
	}
	if iv, ok := parseInt(msg[j+len(bMaxPoll):]); ok {
		r.off = iv
	}
	if k := bytes.Index(msg, bExceeded); k >= 0 {
		if by, ok := parseInt(msg[k+len(bExceeded):]); ok {
			r.aux = by
		}
	}
	r.text = string(msg)
	return true
}

// pauseResume reads "Pausing fetchers for ...: reason" / "Resuming fetchers for ...".
func pauseResume(msg []byte, r *rdRec) bool {
	if !bytes.HasPrefix(msg, bPausing) && !bytes.HasPrefix(msg, bResuming) {
		return false
	}
	if bytes.HasPrefix(msg, bResuming) {
		r.op = rdResume
	}
	if j := bytes.Index(msg, []byte("): ")); j >= 0 {
		r.text = string(msg[j+3:])
	} else if j := bytes.LastIndex(msg, []byte(": ")); j >= 0 {
		r.text = string(msg[j+2:])
	}
	return true
}

// fold turns one record into events, in file order.
func (p *rdkafkaParser) fold(r *rdRec, emit func(Event)) {
	mk := func(k Kind) Event {
		e := newEvent(k)
		e.Time, e.Timed = time.Unix(0, r.ts).UTC(), true
		e.Topic, e.Partition = r.topic, r.part
		return e
	}
	switch r.op {
	case rdPosition:
		// a repeat of the position the analyzer holds says nothing, unless it carries a new
		// fetch error (Analyzer.addPosition); the scanner drops most repeats already, within a
		// chunk; this makes the counts independent of chunking
		if pos, reason := p.a.position(r.topic, r.part); pos == r.off && (r.text == "" || r.text == "EOF" || r.text == reason) {
			return
		}
		e := mk(KindPosition)
		e.Offset, e.Reason = r.off, r.text
		emit(e)
	case rdStartFetch:
		e := mk(KindSeek)
		e.Offset, e.Reason = r.off, "start fetching"
		emit(e)
	case rdFetchable:
		k := kpart.TopicPartition{Topic: r.topic, Partition: r.part}
		if r.flag != p.paused[k] && p.a.tracked(r.topic, r.part) {
			p.paused[k] = r.flag
			e := mk(KindResume)
			if r.flag {
				e.Kind = KindPause
			}
			emit(e)
		}
	case rdFetch:
		e := mk(KindFetch)
		n, last := r.aux, r.off
		e.Count, e.Ctrl = int(n), int(r.ctrl)
		first := last - n + 1
		if pos, _ := p.a.position(r.topic, r.part); pos >= 0 && pos <= last && pos < first {
			first = pos // sparse (compacted or aborted) batches: the fetch started at the position
		}
		e.Ranges = []kpart.Range{{First: first, Last: last}}
		emit(e)
	case rdStore:
		p.foldStore(r, mk(KindStore), emit)
	case rdOffReset:
		e := mk(KindSeek)
		e.Offset, e.Reason = r.off, r.text
		emit(e)
	case rdRemove:
		p.addPending(pendingCommit{r.client, r.topic, r.part, r.off})
	case rdCommit:
		p.foldCommit(r, mk(KindCommit), emit)
	case rdAssign:
		emit(mk(KindAssign))
	case rdRevoke:
		emit(mk(KindRevoke))
	case rdMaxPoll:
		e := mk(KindMaxPoll)
		if r.off != Unknown {
			e.Timeout = time.Duration(r.off) * time.Millisecond
			s := mk(KindSetting)
			s.Name, s.Reason = "max.poll.interval.ms", itoa(r.off)
			emit(s)
			if r.aux != Unknown {
				e.SinceServe = e.Timeout + time.Duration(r.aux)*time.Millisecond
			}
		}
		e.Reason = r.text
		emit(e)
	case rdLost:
		e := mk(KindRevoke)
		e.Reason = r.text
		emit(e)
	case rdPause, rdResume:
		e := mk(KindPause)
		if r.op == rdResume {
			e.Kind = KindResume
		}
		e.Reason = r.text
		emit(e)
	}
}

// foldStore folds a stored offset: a store for commit waits for its client's next commit
// result; the committed offset the line names is known from then on.
func (p *rdkafkaParser) foldStore(r *rdRec, e Event, emit func(Event)) {
	if st, co := p.a.storedCommitted(r.topic, r.part); !r.flag && st == r.off && (r.aux == Unknown || co != Unknown) {
		return // as for positions: a repeat that adds nothing
	}
	e.Offset = r.off
	emit(e)
	if r.aux != Unknown {
		p.a.knownCommitted(r.topic, r.part, r.aux)
	}
	if r.flag {
		p.addPending(pendingCommit{r.client, r.topic, r.part, r.off})
	}
}

// maxPending bounds the stored offsets waiting for their client's commit result: past it
// only the latest of each partition is kept (a log of stores and no commit results would
// otherwise grow without bound).
const maxPending = 1 << 16

func (p *rdkafkaParser) addPending(pc pendingCommit) {
	if !p.a.tracked(pc.topic, pc.part) {
		return
	}
	p.pending = append(p.pending, pc)
	if len(p.pending) <= maxPending {
		return
	}
	type key struct {
		client, topic string
		part          int32
	}
	latest := make(map[key]int, len(p.pending))
	for i, q := range p.pending {
		latest[key{q.client, q.topic, q.part}] = i
	}
	keep := p.pending[:0]
	for i, q := range p.pending {
		if latest[key{q.client, q.topic, q.part}] == i {
			keep = append(keep, q)
		}
	}
	p.pending = keep
	if len(p.pending) > maxPending/2 { // as many clients × partitions: the oldest go
		p.pending = append(p.pending[:0], p.pending[len(p.pending)-maxPending/2:]...)
	}
}

// foldCommit folds a commit result: it settles the offsets its own client stored; another
// consumer's stored offsets in the same log stay pending.
func (p *rdkafkaParser) foldCommit(r *rdRec, base Event, emit func(Event)) {
	keep := p.pending[:0]
	for _, pc := range p.pending {
		if pc.client != r.client {
			keep = append(keep, pc)
			continue
		}
		if r.ctrl == 1 { // "No offset stored": nothing was committed
			continue
		}
		e := base
		if !r.flag {
			e.Kind, e.Reason = KindCommitFail, r.text
		}
		e.Topic, e.Partition, e.Offset = pc.topic, pc.part, pc.offset
		emit(e)
	}
	p.pending = keep
}

// Line reads one line (the lineParser interface; Parse itself goes through parseChunks).
func (p *rdkafkaParser) Line(l []byte, emit func(Event)) error {
	var sc rdScanner
	sc.names = map[string]string{}
	var r rdRec
	ok, err := sc.scan(l, &r)
	if ok {
		p.fold(&r, emit)
	}
	return err
}

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// topicPart reads "topic [p]" at the start of b.
func (sc *rdScanner) topicPart(b []byte) (string, int32, bool) {
	t, part, _, ok := sc.topicPartEnd(b)
	return t, part, ok
}

// topicPartEnd is topicPart, also returning where "topic [p" ends in b when b starts with
// the topic and the topic has no space (else -1).
func (sc *rdScanner) topicPartEnd(b []byte) (string, int32, int, bool) {
	lead := 0
	for lead < len(b) && b[lead] == ' ' {
		lead++
	}
	// the first " [": a byte loop, topics are short (bytes.Index costs more on them)
	j, spaced := -1, false
	for i := lead; i+1 < len(b); i++ {
		if b[i] == ' ' {
			if b[i+1] == '[' {
				j = i
				break
			}
			spaced = true
		}
	}
	if j <= lead {
		return "", 0, -1, false
	}
	v, ok := parseInt(b[j+2:])
	if !ok || v < 0 || v > 1<<31-1 {
		return "", 0, -1, false
	}
	end := -1
	if !spaced && lead == 0 {
		end = j + 2
		for end < len(b) && b[end] >= '0' && b[end] <= '9' {
			end++
		}
	}
	return sc.intern(b[lead:j]), int32(v), end, true
}

// topicPartAt reads "topic [p]<sep>N".
func (sc *rdScanner) topicPartAt(b, sep []byte) (string, int32, int64, bool) {
	t, part, end, ok := sc.topicPartEnd(b)
	if !ok {
		return "", 0, 0, false
	}
	// sep (" at offset ") right after "topic [p]" is its first occurrence in b when b
	// starts with a topic without spaces: an earlier one would have to start at a space
	// before the "]", and the only one is the space of " [" (sep does not go on with "[")
	j := -1
	if end >= 0 && end < len(b) && b[end] == ']' && len(sep) > 1 && sep[0] == ' ' && sep[1] != '[' && bytes.HasPrefix(b[end+1:], sep) {
		j = end + 1
	} else {
		j = bytes.Index(b, sep)
	}
	if j < 0 {
		return "", 0, 0, false
	}
	off, ok := parseInt(b[j+len(sep):])
	return t, part, off, ok
}

func (sc *rdScanner) intern(b []byte) string {
	// a log names the same topic line after line: the last name, without hashing
	if string(b) == sc.lastName && sc.lastName != "" {
		return sc.lastName
	}
	s := sc.internMap(b)
	sc.lastName = s
	return s
}

func (sc *rdScanner) internMap(b []byte) string {
	if s, ok := sc.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(sc.names) < 100000 {
		sc.names[s] = s
	}
	return s
}

// parseInt reads a non-negative decimal at the start of b.
func parseInt(b []byte) (int64, bool) {
	var v int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' && n < 18 {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	return v, n > 0
}

// parseEpoch reads "1796225597.721" (seconds.milliseconds since the epoch).
func parseEpoch(b []byte) (time.Time, bool) {
	dot := bytes.IndexByte(b, '.')
	if dot < 0 {
		dot = len(b)
	}
	sec, ok := parseInt(b[:dot])
	if !ok || dot > 12 {
		return time.Time{}, false
	}
	var ns int64
	if dot < len(b) {
		frac := b[dot+1:]
		scale := int64(1e9)
		for _, c := range frac {
			if c < '0' || c > '9' || scale == 1 {
				break
			}
			scale /= 10
			ns += int64(c-'0') * scale
		}
	}
	return time.Unix(sec, ns).UTC(), true
}
