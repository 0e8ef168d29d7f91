package trace

import (
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
