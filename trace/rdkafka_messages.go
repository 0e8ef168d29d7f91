package trace

import (
	"bytes"
)

// The librdkafka messages scan reads, one function per kind of message (the source line
// each comes from is named in rdkafkaParser's comment).

// fetchFailed reads "<broker>: topic [p]: Fetch failed at offset O (...): _PARTITION_EOF".
func (sc *rdScanner) fetchFailed(msg []byte, r *rdRec) (bool, error) {
	j := bFetchFailed.in(msg)
	if j < 0 {
		return false, nil
	}
	seg := msg[:j]
	if k := bytes.LastIndex(seg, []byte(": ")); k >= 0 {
		seg = seg[k+2:]
	}
	topic, part, ok := sc.topicPart(seg)
	off, ok2 := parseInt(msg[j+len(bFetchFailed.s):])
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
	if bytes.HasSuffix(msg, bToppars.s) {
		return false, nil
	}
	if j := bFetchTopic.in(msg); j >= 0 {
		topic, part, off, ok := sc.topicPartAt(msg[j+len(bFetchTopic.s):], &bAtOffset)
		if !ok {
			return false, errMalformed("unreadable Fetch topic line")
		}
		r.topic, r.part, r.off = topic, part, off
		return true, nil
	}
	if bytes.HasPrefix(msg, bPartition.s) {
		j := bStartFetch.in(msg)
		if j < 0 {
			return false, nil
		}
		topic, part, ok := sc.topicPart(msg[len(bPartition.s) : j+1])
		off, ok2 := parseInt(msg[j+len(bStartFetch.s):])
		if !ok || !ok2 {
			return false, errMalformed("unreadable start-fetching line")
		}
		r.op, r.topic, r.part, r.off = rdStartFetch, topic, part, off
		return true, nil
	}
	if j := bTopic.in(msg); j >= 0 {
		nf := bNotFetch.in(msg)
		ff := bIsFetchable.in(msg)
		if nf < 0 && ff < 0 {
			return false, nil
		}
		topic, part, ok := sc.topicPart(msg[j+len(bTopic.s):])
		if !ok {
			return false, errMalformed("unreadable fetchable line")
		}
		r.op, r.topic, r.part = rdFetchable, topic, part
		r.flag = nf >= 0 && bytes.HasPrefix(msg[nf+len(bNotFetch.s):], []byte("paused"))
		return true, nil
	}
	return false, nil
}

// enqueue reads "Enqueue N message(s) (...) on t [p] fetch queue (..., last_offset L, C ctrl msgs, ...)".
func (sc *rdScanner) enqueue(msg []byte, r *rdRec) (bool, error) {
	j := bEnqueue.in(msg)
	if j < 0 {
		return false, nil
	}
	// each part is looked for after the one before it (busy logs: a third of the lines)
	at := j + len(bEnqueue.s)
	n, ok := parseInt(msg[at:])
	on, lo := bOn.from(msg, at), -1
	if on >= 0 {
		lo = bLastOffset.from(msg, on+len(bOn.s))
	}
	if !ok || on < 0 || lo < 0 {
		return false, errMalformed("unreadable Enqueue line")
	}
	topic, part, ok := sc.topicPart(msg[on+len(bOn.s):])
	last, ok2 := parseInt(msg[lo+len(bLastOffset.s):])
	if !ok || !ok2 {
		return false, errMalformed("unreadable Enqueue line")
	}
	if c := bCtrl.in(msg[lo:]); c >= 0 {
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

// offset reads the OFFSET lines: "Topic t [p]: stored offset S ..., committed offset C ...:
// setting stored offset S ... for commit" and "t [p]: offset reset (at offset X) to Y".
func (sc *rdScanner) offset(msg []byte, r *rdRec) (bool, error) {
	if bytes.HasPrefix(msg, bTopic.s) {
		j := bStored.in(msg)
		if j < 0 {
			return false, nil
		}
		topic, part, ok := sc.topicPart(msg[len(bTopic.s):j])
		if !ok {
			return false, errMalformed("unreadable stored offset line")
		}
		s, ok := parseInt(msg[j+len(bStored.s):])
		if !ok {
			return false, nil // INVALID: nothing stored yet
		}
		r.topic, r.part, r.off = topic, part, s
		if c := bCommitted.in(msg); c >= 0 {
			if co, ok := parseInt(msg[c+len(bCommitted.s):]); ok {
				r.aux = co
			}
		}
		r.flag = bForCommit.contains(msg) && !bNotIncluding.contains(msg)
		return true, nil
	}
	if j := bOffReset.in(msg); j >= 0 {
		topic, part, ok := sc.topicPart(msg[:j+1])
		k := bTo.in(msg[j:])
		if !ok || k < 0 {
			return false, errMalformed("unreadable offset reset line")
		}
		r.op, r.topic, r.part = rdOffReset, topic, part
		if off, ok := parseInt(msg[j+k+len(bTo.s):]); ok {
			r.off = off
		}
		r.text = "offset reset: " + string(msg[j+k+len(bTo.s):])
		return true, nil
	}
	return false, nil
}

// remove reads "Removing t [p] ... stored offset=S".
func (sc *rdScanner) remove(msg []byte, r *rdRec) (bool, error) {
	if !bytes.HasPrefix(msg, bRemoving.s) {
		return false, nil
	}
	j := bStoredEq.in(msg)
	topic, part, ok := sc.topicPart(msg[len(bRemoving.s):])
	if !ok || j < 0 {
		return false, nil
	}
	s, ok := parseInt(msg[j+len(bStoredEq.s):])
	if !ok {
		return false, nil
	}
	r.topic, r.part, r.off = topic, part, s
	return true, nil
}

// commitResult reads "OffsetCommit for N partition(s) ...: returned: Success".
func commitResult(msg []byte, r *rdRec) bool {
	if bOffsetCom.in(msg) < 0 {
		return false
	}
	k := bReturned.in(msg)
	if k < 0 {
		return false
	}
	result := msg[k+len(bReturned.s):]
	r.flag = bytes.HasPrefix(result, bSuccess.s)
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
	j := sep.in(msg)
	if j < 0 {
		return false
	}
	topic, part, ok := sc.topicPart(msg[j+len(sep.s):])
	if !ok {
		return false
	}
	r.topic, r.part = topic, part
	return true
}

// maxPollExceeded reads "Application maximum poll interval (Nms) exceeded by Mms".
func maxPollExceeded(msg []byte, r *rdRec) bool {
	j := bMaxPoll.in(msg)
	if j < 0 {
		return false
	}
	if iv, ok := parseInt(msg[j+len(bMaxPoll.s):]); ok {
		r.off = iv
	}
	if k := bExceeded.in(msg); k >= 0 {
		if by, ok := parseInt(msg[k+len(bExceeded.s):]); ok {
			r.aux = by
		}
	}
	r.text = string(msg)
	return true
}

// pauseResume reads "Pausing fetchers for ...: reason" / "Resuming fetchers for ...".
func pauseResume(msg []byte, r *rdRec) bool {
	if !bytes.HasPrefix(msg, bPausing.s) && !bytes.HasPrefix(msg, bResuming.s) {
		return false
	}
	if bytes.HasPrefix(msg, bResuming.s) {
		r.op = rdResume
	}
	if j := bytes.Index(msg, []byte("): ")); j >= 0 {
		r.text = string(msg[j+3:])
	} else if j := bytes.LastIndex(msg, []byte(": ")); j >= 0 {
		r.text = string(msg[j+2:])
	}
	return true
}
