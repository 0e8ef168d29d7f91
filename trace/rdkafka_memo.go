package trace

import (
	"bytes"
	"hash/maphash"
)

// The memo of scanMessage: a debug log says the same thing again and again (the fetcher's
// "Fetch topic t [p] at offset N" on every long poll while the partition waits for
// records, in the JS client's objects too), and what a message says is a function of its
// facility, client and text alone (readMessage). Only the fetcher's positions are memoized
// (scanMessage): measured, the other messages gave no gain. A small direct-mapped table per scanner keeps the last reading
// of each message it saw; a message found in it is compared byte for byte and its reading
// reused. Repeats are still decided per partition after it (keep), so the records are the
// ones the reading gives.

const (
	memoSize   = 1 << 10 // entries per scanner (a power of two)
	memoMaxMsg = 512     // longer messages are read each time
	// memoHashTail: the bytes at the end of a message that pick its entry
	memoHashTail = 64
	// memoTrial: the misses in a chunk after which the memo is left for the rest of the
	// chunk when fewer than three in four of its lookups were hits (a busy consumer's
	// positions move on every fetch: reading them costs less than a lookup that misses)
	memoTrial = 64
)

type memoEntry struct {
	key           []byte // fac, client, msg, one after the other (own copy)
	nFac, nClient int
	ok            bool
	err           error
	rec           rdRec // the reading, before keep
}

var memoSeed = maphash.MakeSeed()

// noMemo (tests) reads every message.
var noMemo = false

// memoOf returns the entry the message maps to (not necessarily its own: see is).
func (sc *rdScanner) memoOf(fac, client, msg []byte) *memoEntry {
	if sc.memo == nil {
		sc.memo = make([]memoEntry, memoSize)
	}
	// the end of a message says what differs between its repeats and the others (the
	// partition and offset of "Fetch topic t [p] at offset N (leader epoch ...)"); the
	// whole message is compared (is)
	tail := msg[max(0, len(msg)-memoHashTail):]
	h := maphash.Bytes(memoSeed, tail) ^ uint64(len(msg))<<24 ^ uint64(len(client))<<36 ^ uint64(fac[len(fac)-1])<<44 ^ uint64(len(fac))<<52
	return &sc.memo[h&(memoSize-1)]
}

// is reports whether e holds the reading of this message.
func (e *memoEntry) is(fac, client, msg []byte) bool {
	k := e.key
	return len(k) == len(fac)+len(client)+len(msg) && e.nFac == len(fac) && e.nClient == len(client) &&
		bytes.Equal(k[len(fac)+len(client):], msg) && bytes.Equal(k[:len(fac)], fac) && bytes.Equal(k[len(fac):len(fac)+len(client)], client)
}

// set keeps the reading of a message in e.
func (e *memoEntry) set(fac, client, msg []byte, ok bool, err error, r *rdRec) {
	e.key = append(append(append(e.key[:0], fac...), client...), msg...)
	e.nFac, e.nClient = len(fac), len(client)
	e.ok, e.err = ok, err
	if ok && err == nil {
		e.rec = *r
	} else {
		e.rec = rdRec{}
	}
}
