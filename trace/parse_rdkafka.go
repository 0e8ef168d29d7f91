package trace

import (
	"bytes"
	"time"
)

// rdkafkaParser reads librdkafka debug logs as every librdkafka-based client writes them
// (confluent-kafka-go, -python, -dotnet, -javascript, kcat) with debug=consumer,fetch,cgrp:
//
//	%7|1796225597.721|CONSUME|rdkafka#consumer-2| [thrd:127.0.0.1:46125/0]: 127.0.0.1:46125/0: Enqueue 201 message(s) (690 bytes, 201 ops) on stranded [0] fetch queue (qlen 0, v2, last_offset 200, 1 ctrl msgs, 0 aborted msgsets, uncompressed)
//
// The line shapes were learnt from librdkafka v2.11.1 (trace/testdata/rdkafka-go-consumer.log,
// captured from a confluent-kafka-go consumer); the messages come from rdkafka_fetcher.c
// ("Fetch topic %.*s [%d] at offset"), rdkafka_msgset_reader.c ("Enqueue %i message(s)"),
// rdkafka_assignment.c / rdkafka_offset.c ("stored offset ... for commit") and
// rdkafka_cgrp.c ("OffsetCommit for %d partition(s) ...: returned: %s", "Application maximum
// poll interval (%dms) exceeded"). This is the hot path of trace parse: bytes only, no
// regular expressions, no allocation per line except for new topic names.
type rdkafkaParser struct {
	a       *Analyzer
	lastPos []lastPos // by partition: the last "Fetch topic" position, to skip repeats cheaply
	topics  map[string]string
	pending []pendingCommit
	paused  map[tpKey]bool
}

type lastPos struct {
	topic string
	off   int64
}

type pendingCommit struct {
	topic  string
	part   int32
	offset int64
}

func newRdkafkaParser(a *Analyzer) *rdkafkaParser {
	return &rdkafkaParser{a: a, topics: map[string]string{}, paused: map[tpKey]bool{}}
}

// isRdkafkaLine reports whether l looks like `%7|1700000000.123|FAC|client| ...`.
func isRdkafkaLine(l []byte) bool {
	return len(l) > 4 && l[0] == '%' && l[1] >= '0' && l[1] <= '9' && l[2] == '|' && l[3] >= '0' && l[3] <= '9'
}

var (
	bFetchTopic  = []byte("Fetch topic ")
	bAtOffset    = []byte(" at offset ")
	bEnqueue     = []byte("Enqueue ")
	bOn          = []byte(" on ")
	bLastOffset  = []byte("last_offset ")
	bCtrl        = []byte(" ctrl msgs")
	bStored      = []byte("stored offset ")
	bForCommit   = []byte("for commit")
	bOffsetCom   = []byte("OffsetCommit for ")
	bReturned    = []byte(": returned: ")
	bSuccess     = []byte("Success")
	bStartFetch  = []byte(" start fetching at offset ")
	bPartition   = []byte("Partition ")
	bTopic       = []byte("Topic ")
	bNotFetch    = []byte("is not fetchable: ")
	bIsFetchable = []byte(") is fetchable")
	bFetchFailed = []byte(": Fetch failed at offset ")
	bRemoving    = []byte("Removing ")
	bStoredEq    = []byte("stored offset=")
	bAdd         = []byte(": add ")
	bDelete      = []byte(": delete ")
	bMaxPoll     = []byte("maximum poll interval (")
	bExceeded    = []byte("ms) exceeded by ")
	bPausing     = []byte("Pausing fetchers for ")
	bResuming    = []byte("Resuming fetchers for ")
	bOffReset    = []byte(": offset reset (at offset ")
	bTo          = []byte(") to ")
	bLost        = []byte(" lost: ")
	bCommitted   = []byte("committed offset ")
)

// field returns the text between the n-th and n+1-th '|'.
func (p *rdkafkaParser) Line(l []byte, emit func(Event)) error {
	if !isRdkafkaLine(l) {
		return errMalformed("not a librdkafka log line (%LEVEL|epoch|FACILITY|client| ...)")
	}
	rest := l[3:]
	i := bytes.IndexByte(rest, '|')
	if i < 0 {
		return errMalformed("no timestamp field")
	}
	tsField := rest[:i]
	rest = rest[i+1:]
	i = bytes.IndexByte(rest, '|')
	if i < 0 {
		return errMalformed("no facility field")
	}
	fac := rest[:i]
	rest = rest[i+1:]
	i = bytes.IndexByte(rest, '|')
	if i < 0 {
		return errMalformed("no client field")
	}
	msg := rest[i+1:]
	if j := bytes.Index(msg, []byte("]: ")); j >= 0 && bytes.HasPrefix(bytes.TrimLeft(msg, " "), []byte("[thrd:")) {
		msg = msg[j+3:]
	}
	// the fetcher repeats "Fetch topic t [p] at offset N" on every long poll: a repeat of
	// the last position of the partition is skipped before anything else is parsed
	if len(fac) == 5 && string(fac) == "FETCH" {
		if j := bytes.Index(msg, bFetchTopic); j >= 0 {
			b := msg[j+len(bFetchTopic):]
			if k := bytes.Index(b, []byte(" [")); k > 0 {
				part, ok1 := parseInt(b[k+2:])
				a := bytes.Index(b, bAtOffset)
				if ok1 && a > 0 && part < 1<<16 {
					off, ok2 := parseInt(b[a+len(bAtOffset):])
					if ok2 && int(part) < len(p.lastPos) && p.lastPos[part].off == off && p.lastPos[part].topic == string(b[:k]) {
						return nil
					}
				}
			}
		}
	}
	ts, ok := parseEpoch(tsField)
	if !ok {
		return errMalformed("bad timestamp")
	}
	if len(p.lastPos) > 0 && !(len(fac) == 5 && string(fac) == "FETCH") {
		// any other event may move the position behind the parser's back: forget the repeats
		p.lastPos = p.lastPos[:0]
	}
	mk := func(k Kind) Event {
		e := newEvent(k)
		e.Time, e.Timed = ts, true
		return e
	}
	switch string(fac) {
	case "FETCH":
		if j := bytes.Index(msg, bFetchTopic); j >= 0 {
			topic, part, off, ok := p.topicPartAt(msg[j+len(bFetchTopic):], bAtOffset)
			if !ok {
				return errMalformed("unreadable Fetch topic line")
			}
			if part < 1<<16 {
				for int(part) >= len(p.lastPos) {
					p.lastPos = append(p.lastPos, lastPos{off: -2})
				}
				p.lastPos[part] = lastPos{topic, off}
			}
			e := mk(KindPosition)
			e.Topic, e.Partition, e.Offset = topic, part, off
			emit(e)
			return nil
		}
		if bytes.HasPrefix(msg, bPartition) {
			if j := bytes.Index(msg, bStartFetch); j >= 0 {
				topic, part, ok := p.topicPart(msg[len(bPartition) : j+1])
				off, ok2 := parseInt(msg[j+len(bStartFetch):])
				if !ok || !ok2 {
					return errMalformed("unreadable start-fetching line")
				}
				e := mk(KindSeek)
				e.Topic, e.Partition, e.Offset, e.Reason = topic, part, off, "start fetching"
				emit(e)
			}
			return nil
		}
		if j := bytes.Index(msg, bTopic); j >= 0 {
			nf := bytes.Index(msg, bNotFetch)
			ff := bytes.Index(msg, bIsFetchable)
			if nf < 0 && ff < 0 {
				return nil
			}
			topic, part, ok := p.topicPart(msg[j+len(bTopic):])
			if !ok {
				return errMalformed("unreadable fetchable line")
			}
			k := tpKey{topic, part}
			paused := nf >= 0 && bytes.HasPrefix(msg[nf+len(bNotFetch):], []byte("paused"))
			if paused != p.paused[k] {
				p.paused[k] = paused
				e := mk(KindResume)
				if paused {
					e.Kind = KindPause
				}
				e.Topic, e.Partition = topic, part
				emit(e)
			}
		}
		return nil
	case "CONSUME":
		j := bytes.Index(msg, bEnqueue)
		if j < 0 {
			return nil
		}
		n, ok := parseInt(msg[j+len(bEnqueue):])
		on := bytes.Index(msg, bOn)
		lo := bytes.Index(msg, bLastOffset)
		if !ok || on < 0 || lo < 0 {
			return errMalformed("unreadable Enqueue line")
		}
		topic, part, ok := p.topicPart(msg[on+len(bOn):])
		last, ok2 := parseInt(msg[lo+len(bLastOffset):])
		if !ok || !ok2 {
			return errMalformed("unreadable Enqueue line")
		}
		ctrl := 0
		if c := bytes.Index(msg[lo:], bCtrl); c >= 0 {
			k := lo + c - 1
			for k > lo && msg[k] >= '0' && msg[k] <= '9' {
				k--
			}
			v, _ := parseInt(msg[k+1 : lo+c])
			ctrl = int(v)
		}
		e := mk(KindFetch)
		e.Topic, e.Partition, e.Count, e.Ctrl = topic, part, int(n), ctrl
		first := last - n + 1
		if pos := p.a.position(topic, part); pos >= 0 && pos <= last && pos < first {
			first = pos // sparse (compacted or aborted) batches: the fetch started at the position
		}
		e.Ranges = []Range{{first, last}}
		emit(e)
	case "FETCHERR":
		if j := bytes.Index(msg, bFetchFailed); j >= 0 {
			// "<broker>: topic [p]: Fetch failed at offset O (...): _PARTITION_EOF"
			seg := msg[:j]
			if k := bytes.LastIndex(seg, []byte(": ")); k >= 0 {
				seg = seg[k+2:]
			}
			topic, part, ok := p.topicPart(seg)
			off, ok2 := parseInt(msg[j+len(bFetchFailed):])
			if !ok || !ok2 {
				return errMalformed("unreadable Fetch failed line")
			}
			e := mk(KindPosition)
			e.Topic, e.Partition, e.Offset = topic, part, off
			if bytes.Contains(msg, []byte("_PARTITION_EOF")) {
				e.Reason = "EOF"
			} else {
				e.Reason = "fetch error"
				if k := bytes.LastIndex(msg, []byte("): ")); k >= 0 {
					e.Reason = string(msg[k+3:])
				}
			}
			emit(e)
		}
	case "OFFSET":
		if bytes.HasPrefix(msg, bTopic) {
			j := bytes.Index(msg, bStored)
			if j < 0 {
				return nil
			}
			topic, part, ok := p.topicPart(msg[len(bTopic):j])
			if !ok {
				return errMalformed("unreadable stored offset line")
			}
			s, ok := parseInt(msg[j+len(bStored):])
			if !ok {
				return nil // INVALID: nothing stored yet
			}
			e := mk(KindStore)
			e.Topic, e.Partition, e.Offset = topic, part, s
			emit(e)
			if c := bytes.Index(msg, bCommitted); c >= 0 {
				if co, ok := parseInt(msg[c+len(bCommitted):]); ok {
					p.a.knownCommitted(topic, part, co)
				}
			}
			if bytes.Contains(msg, bForCommit) && !bytes.Contains(msg, []byte("not including")) {
				p.pending = append(p.pending, pendingCommit{topic, part, s})
			}
			return nil
		}
		if j := bytes.Index(msg, bOffReset); j >= 0 {
			topic, part, ok := p.topicPart(msg[:j+1])
			k := bytes.Index(msg[j:], bTo)
			if !ok || k < 0 {
				return errMalformed("unreadable offset reset line")
			}
			e := mk(KindSeek)
			e.Topic, e.Partition = topic, part
			if off, ok := parseInt(msg[j+k+len(bTo):]); ok {
				e.Offset = off
			}
			e.Reason = "offset reset: " + string(msg[j+k+len(bTo):])
			emit(e)
		}
	case "REMOVE":
		if bytes.HasPrefix(msg, bRemoving) {
			j := bytes.Index(msg, bStoredEq)
			topic, part, ok := p.topicPart(msg[len(bRemoving):])
			if !ok || j < 0 {
				return nil
			}
			if s, ok := parseInt(msg[j+len(bStoredEq):]); ok {
				p.pending = append(p.pending, pendingCommit{topic, part, s})
			}
		}
	case "COMMIT":
		j := bytes.Index(msg, bOffsetCom)
		if j < 0 {
			return nil
		}
		r := bytes.Index(msg, bReturned)
		if r < 0 {
			return nil
		}
		result := msg[r+len(bReturned):]
		ok := bytes.HasPrefix(result, bSuccess)
		noop := bytes.Contains(result, []byte("No offset stored"))
		for _, pc := range p.pending {
			e := mk(KindCommit)
			if !ok {
				e.Kind = KindCommitFail
				e.Reason = string(result)
			}
			e.Topic, e.Partition, e.Offset = pc.topic, pc.part, pc.offset
			if !noop {
				emit(e)
			}
		}
		p.pending = p.pending[:0]
	case "PARTADD", "PARTDEL":
		sep := bAdd
		k := KindAssign
		if fac[4] == 'D' {
			sep, k = bDelete, KindRevoke
		}
		if j := bytes.Index(msg, sep); j >= 0 {
			topic, part, ok := p.topicPart(msg[j+len(sep):])
			if ok {
				e := mk(k)
				e.Topic, e.Partition = topic, part
				emit(e)
			}
		}
	case "MAXPOLL":
		if j := bytes.Index(msg, bMaxPoll); j >= 0 {
			iv, ok := parseInt(msg[j+len(bMaxPoll):])
			e := mk(KindMaxPoll)
			if ok {
				e.Timeout = time.Duration(iv) * time.Millisecond
				s := mk(KindSetting)
				s.Name, s.Reason = "max.poll.interval.ms", string(msg[j+len(bMaxPoll):j+len(bMaxPoll)+len(itoa(iv))])
				emit(s)
			}
			if k := bytes.Index(msg, bExceeded); k >= 0 {
				if by, ok := parseInt(msg[k+len(bExceeded):]); ok {
					e.SinceServe = e.Timeout + time.Duration(by)*time.Millisecond
				}
			}
			e.Reason = string(msg)
			emit(e)
		}
	case "LOST":
		if j := bytes.Index(msg, bLost); j >= 0 {
			e := mk(KindRevoke)
			e.Reason = "lost: " + string(msg[j+len(bLost):])
			emit(e)
		}
	case "PAUSE":
		if bytes.HasPrefix(msg, bPausing) || bytes.HasPrefix(msg, bResuming) {
			e := mk(KindPause)
			if bytes.HasPrefix(msg, bResuming) {
				e.Kind = KindResume
			}
			if j := bytes.Index(msg, []byte("): ")); j >= 0 {
				e.Reason = string(msg[j+3:])
			} else if j := bytes.LastIndex(msg, []byte(": ")); j >= 0 {
				e.Reason = string(msg[j+2:])
			}
			emit(e)
		}
	}
	return nil
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
func (p *rdkafkaParser) topicPart(b []byte) (string, int32, bool) {
	b = bytes.TrimLeft(b, " ")
	j := bytes.Index(b, []byte(" ["))
	if j <= 0 {
		return "", 0, false
	}
	v, ok := parseInt(b[j+2:])
	if !ok || v < 0 || v > 1<<31-1 {
		return "", 0, false
	}
	return p.intern(b[:j]), int32(v), true
}

// topicPartAt reads "topic [p]<sep>N".
func (p *rdkafkaParser) topicPartAt(b, sep []byte) (string, int32, int64, bool) {
	t, part, ok := p.topicPart(b)
	if !ok {
		return "", 0, 0, false
	}
	j := bytes.Index(b, sep)
	if j < 0 {
		return "", 0, 0, false
	}
	off, ok := parseInt(b[j+len(sep):])
	return t, part, off, ok
}

func (p *rdkafkaParser) intern(b []byte) string {
	if s, ok := p.topics[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(p.topics) < 100000 {
		p.topics[s] = s
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
