// Package tracegen writes synthetic librdkafka debug logs, shaped like the real capture in
// trace/testdata/rdkafka-go-consumer.log, for benchmarks of `kstranded trace parse`. It is
// not used by kstranded itself.
package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// WriteRdkafkaLog writes about size bytes: a consumer of `partitions` partitions of topic
// "stranded" that fetches (mostly empty long polls, every tenth one enqueuing 50 records),
// stores and auto-commits, with monotonic timestamps and offsets.
func WriteRdkafkaLog(w io.Writer, size int64, partitions int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	ms := int64(1796225597000)
	pos := make([]int64, partitions)
	buf := make([]byte, 0, 512)
	line := func(fac string, msg ...string) {
		buf = buf[:0]
		buf = append(buf, "%7|"...)
		buf = strconv.AppendInt(buf, ms/1000, 10)
		buf = append(buf, '.')
		frac := ms % 1000
		if frac < 100 {
			buf = append(buf, '0')
		}
		if frac < 10 {
			buf = append(buf, '0')
		}
		buf = strconv.AppendInt(buf, frac, 10)
		buf = append(buf, '|')
		buf = append(buf, fac...)
		buf = append(buf, "|rdkafka#consumer-1| [thrd:127.0.0.1:9092/0]: "...)
		for _, m := range msg {
			buf = append(buf, m...)
		}
		buf = append(buf, '\n')
		n, _ := bw.Write(buf)
		written += int64(n)
	}
	itoa := func(v int64) string { return strconv.FormatInt(v, 10) }
	round := 0
	for written < size {
		round++
		ms += 10
		for p := 0; p < partitions; p++ {
			line("FETCH", "127.0.0.1:9092/0: Fetch topic stranded [", itoa(int64(p)), "] at offset ", itoa(pos[p]), " (leader epoch 0, current leader epoch 0, v2)")
		}
		line("FETCH", "127.0.0.1:9092/0: Fetch ", itoa(int64(partitions)), "/", itoa(int64(partitions)), "/", itoa(int64(partitions)), " toppar(s)")
		if round%10 == 0 {
			p := (round / 10) % partitions
			last := pos[p] + 49
			line("CONSUME", "127.0.0.1:9092/0: Enqueue 50 message(s) (5000 bytes, 50 ops) on stranded [", itoa(int64(p)), "] fetch queue (qlen 0, v2, last_offset ", itoa(last), ", 0 ctrl msgs, 0 aborted msgsets, uncompressed)")
			pos[p] = last + 1
		} else {
			p := round % partitions
			line("FETCHERR", "127.0.0.1:9092/0: stranded [", itoa(int64(p)), "]: Fetch failed at offset ", itoa(pos[p]), " (leader epoch 0): _PARTITION_EOF")
		}
		if round%50 == 0 {
			for p := 0; p < partitions; p++ {
				line("OFFSET", "Topic stranded [", itoa(int64(p)), "]: stored offset ", itoa(pos[p]), " (leader epoch 0), committed offset ", itoa(pos[p]), " (leader epoch 0): setting stored offset ", itoa(pos[p]), " (leader epoch 0)  for commit")
			}
			line("COMMIT", "GroupCoordinator/0: Committing offsets for ", itoa(int64(partitions)), " partition(s) with generation-id 1 in join-state steady: cgrp auto commit timer")
			line("COMMIT", "GroupCoordinator/0: OffsetCommit for ", itoa(int64(partitions)), " partition(s) in join-state steady: cgrp auto commit timer: returned: Success")
			line("ASSIGNDONE", `Group "g1": assignment operations done in join-state steady (rebalance rejoin=false)`)
		}
		if round%300 == 0 {
			line("HEARTBEAT", `GroupCoordinator/0: Heartbeat for group "g1" generation id 1`)
		}
	}
	return bw.Flush()
}

// logWriter writes lines and counts the bytes.
type logWriter struct {
	bw      *bufio.Writer
	written int64
	ms      int64
	buf     []byte
}

func newLogWriter(w io.Writer) *logWriter {
	return &logWriter{bw: bufio.NewWriterSize(w, 1<<20), ms: 1796225597000, buf: make([]byte, 0, 1024)}
}

func (l *logWriter) write(b []byte) {
	n, _ := l.bw.Write(b)
	l.written += int64(n)
}

// rdLine is a librdkafka debug line as librdkafka prints it.
func (l *logWriter) rdLine(fac string, msg []byte) {
	b := l.buf[:0]
	b = append(b, "%7|"...)
	b = strconv.AppendInt(b, l.ms/1000, 10)
	b = append(b, '.')
	frac := l.ms % 1000
	if frac < 100 {
		b = append(b, '0')
	}
	if frac < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, frac, 10)
	b = append(b, '|')
	b = append(b, fac...)
	b = append(b, "|rdkafka#consumer-1| "...)
	b = append(b, msg...)
	b = append(b, '\n')
	l.buf = b
	l.write(b)
}

// msgs builds librdkafka message texts ("[thrd:...]: ..."), as the busy consumer logs them.
type msgs struct{ b []byte }

func (m *msgs) of(parts ...any) []byte {
	m.b = m.b[:0]
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			m.b = append(m.b, v...)
		case int:
			m.b = strconv.AppendInt(m.b, int64(v), 10)
		case int64:
			m.b = strconv.AppendInt(m.b, v, 10)
		}
	}
	return m.b
}

// busyRound writes one round of a busy consumer of `partitions` partitions through line:
// every partition fetches, half of them get records (Enqueue) and move their position,
// every fifth round every partition stores for commit and the commit completes. About a
// third of the lines are offset events (a new position, an enqueue, a store, a commit); the
// rest are the fetcher's summaries, repeated positions, assignment dumps, heartbeats.
func busyRound(round int, pos []int64, m *msgs, line func(fac string, msg []byte)) {
	const broker = "[thrd:127.0.0.1:9092/0]: 127.0.0.1:9092/0: "
	n := len(pos)
	for p := range pos {
		line("FETCH", m.of(broker, "Fetch topic stranded [", p, "] at offset ", pos[p], " (leader epoch 0, current leader epoch 0, v2)"))
	}
	line("FETCH", m.of(broker, "Fetch ", n, "/", n, "/", n, " toppar(s)"))
	for p := round % 2; p < n; p += 2 {
		last := pos[p] + 9
		line("CONSUME", m.of(broker, "Enqueue 10 message(s) (1000 bytes, 10 ops) on stranded [", p, "] fetch queue (qlen 0, v2, last_offset ", last, ", 0 ctrl msgs, 0 aborted msgsets, uncompressed)"))
		pos[p] = last + 1
	}
	for p := range pos {
		line("DUMP_ALL", m.of("[thrd:main]:  stranded [", p, "] offset STORED"))
		if p%3 == 0 {
			line("OP", m.of("[thrd:main]: stranded [", p, "] received op FETCH_STOP (v2) in fetch-state active (opv2)"))
		}
	}
	line("HEARTBEAT", m.of(`[thrd:main]: GroupCoordinator/0: Heartbeat for group "g1" generation id 1`))
	line("CGRPOP", m.of(`[thrd:main]: Group "g1" received op GET_ASSIGNMENT in state up (join-state steady)`))
	if round%5 == 0 {
		for p := range pos {
			line("OFFSET", m.of("[thrd:main]: Topic stranded [", p, "]: stored offset ", pos[p], " (leader epoch 0), committed offset ", pos[p]-10, " (leader epoch 0): setting stored offset ", pos[p], " (leader epoch 0)  for commit"))
		}
		line("COMMIT", m.of("[thrd:main]: GroupCoordinator/0: Committing offsets for ", n, " partition(s) with generation-id 1 in join-state steady: cgrp auto commit timer"))
		line("COMMIT", m.of("[thrd:main]: GroupCoordinator/0: OffsetCommit for ", n, " partition(s) in join-state steady: cgrp auto commit timer: returned: Success"))
	}
}

// WriteBusyRdkafkaLog writes about size bytes of a busy consumer's librdkafka debug log
// (busyRound), 10 ms a round.
func WriteBusyRdkafkaLog(w io.Writer, size int64, partitions int) error {
	l := newLogWriter(w)
	pos := make([]int64, partitions)
	var m msgs
	for round := 1; l.written < size; round++ {
		l.ms += 10
		busyRound(round, pos, &m, l.rdLine)
	}
	return l.bw.Flush()
}

// WriteJSClientLog writes about size bytes shaped like the confluent-kafka-javascript
// captures (trace/testdata/jsclient): librdkafka's debug lines forwarded through the
// DefaultLogger (util.inspect objects over six lines) or, with json, through a pino-shaped
// JSON logger; the client's BINDING lines; and the application's delivery lines, one per
// record ("delivered topic=stranded partition=P offset=O", or its JSON form). As in the
// captures most lines are long-poll fetches; every tenth round one partition gets 50
// records, which the application delivers.
func WriteJSClientLog(w io.Writer, size int64, partitions int, json bool) error {
	l := newLogWriter(w)
	pos := make([]int64, partitions)
	var m msgs
	var ob []byte
	object := func(fac string, msg []byte) {
		ob = ob[:0]
		if json {
			ob = append(ob, `{"level":20,"time":`...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, `,"pid":20869,"hostname":"capture","fac":"`...)
			ob = append(ob, fac...)
			ob = append(ob, `","timestamp":`...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, `,"name":"rdkafka#consumer-3","msg":"`...)
			for _, c := range msg {
				if c == '"' || c == '\\' {
					ob = append(ob, '\\')
				}
				ob = append(ob, c)
			}
			ob = append(ob, "\"}\n"...)
		} else {
			ob = append(ob, "{\n  message: '"...)
			ob = append(ob, msg...)
			ob = append(ob, "',\n  fac: '"...)
			ob = append(ob, fac...)
			ob = append(ob, "',\n  timestamp: "...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, ",\n  name: 'rdkafka#consumer-3'\n}\n"...)
		}
		l.write(ob)
	}
	binding := func(msg []byte) {
		ob = ob[:0]
		if json {
			ob = append(ob, `{"level":20,"time":`...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, `,"pid":20869,"hostname":"capture","name":"rdkafka#consumer-3","fac":"BINDING","timestamp":`...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, `,"msg":"`...)
			ob = append(ob, msg...)
			ob = append(ob, "\"}\n"...)
		} else {
			ob = append(ob, "{\n  message: '"...)
			ob = append(ob, msg...)
			ob = append(ob, "',\n  name: 'rdkafka#consumer-3',\n  fac: 'BINDING',\n  timestamp: "...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, "\n}\n"...)
		}
		l.write(ob)
	}
	deliver := func(p int, off int64) {
		ob = ob[:0]
		if json {
			ob = append(ob, `{"level":30,"time":`...)
			ob = strconv.AppendInt(ob, l.ms, 10)
			ob = append(ob, `,"pid":20869,"hostname":"capture","name":"scenario","topic":"stranded","partition":`...)
			ob = strconv.AppendInt(ob, int64(p), 10)
			ob = append(ob, `,"offset":"`...)
			ob = strconv.AppendInt(ob, off, 10)
			ob = append(ob, `","msg":"delivered"}`+"\n"...)
		} else {
			ob = append(ob, "delivered topic=stranded partition="...)
			ob = strconv.AppendInt(ob, int64(p), 10)
			ob = append(ob, " offset="...)
			ob = strconv.AppendInt(ob, off, 10)
			ob = append(ob, '\n')
		}
		l.write(ob)
	}
	const broker = "[thrd:127.0.0.1:39271/0]: 127.0.0.1:39271/0: "
	n := partitions
	for round := 1; l.written < size; round++ {
		l.ms += 50
		for p := range pos {
			object("FETCH", m.of(broker, "Fetch topic stranded [", p, "] at offset ", pos[p], " (leader epoch 0, current leader epoch 0, v2)"))
		}
		object("FETCH", m.of(broker, "Fetch ", n, "/", n, "/", n, " toppar(s)"))
		if round%10 == 0 {
			p := (round / 10) % n
			binding(m.of("Attempting to fetch 400 messages to the message cache"))
			last := pos[p] + 49
			object("CONSUME", m.of(broker, "Enqueue 50 message(s) (5000 bytes, 50 ops) on stranded [", p, "] fetch queue (qlen 0, v2, last_offset ", last, ", 0 ctrl msgs, 0 aborted msgsets, uncompressed)"))
			for o := pos[p]; o <= last; o++ {
				deliver(p, o)
			}
			pos[p] = last + 1
		}
		if round%100 == 0 {
			for p := range pos {
				object("OFFSET", m.of("[thrd:main]: Topic stranded [", p, "]: stored offset ", pos[p], " (leader epoch 0), committed offset INVALID (leader epoch -1): setting stored offset ", pos[p], " (leader epoch 0)  for commit"))
			}
			object("COMMIT", m.of("[thrd:main]: GroupCoordinator/0: OffsetCommit for ", n, " partition(s) in join-state steady: cgrp auto commit timer: returned: Success"))
			binding(m.of("Spawning 20 workers"))
		}
	}
	return l.bw.Flush()
}

// WriteManyPartitionsTrace writes a kstranded.trace/v1 trace (repro --trace) naming
// `partitions` partitions of topic "stranded": a run line, then per partition one fetch of
// ten records, one serve of the first five and one commit of offset 10 (the five others
// lost). About 300 bytes a partition; 10^6 partitions make the hostile input of issue 16
// §7 (one partition a line was 84 bytes there; this shape gives each partition a verdict).
func WriteManyPartitionsTrace(w io.Writer, partitions int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"ts":"2026-03-02T14:03:39Z","at_ms":0,"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","group":"g","policy":"head","commit":"auto","settings":{"max.poll.interval.ms":"900000"}}` + "\n")
	var b []byte
	for p := 0; p < partitions; p++ {
		b = b[:0]
		b = append(b, `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":`...)
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, `,"first":0,"last":9,"count":10}]}`+"\n"...)
		b = append(b, `{"ts":"2026-03-02T14:03:41Z","ev":"serve","partition":`...)
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, `,"offsets":[0,1,2,3,4]}`+"\n"...)
		b = append(b, `{"ts":"2026-03-02T14:03:42Z","ev":"commit","committed":[{"partition":`...)
		b = strconv.AppendInt(b, int64(p), 10)
		b = append(b, `,"offset":10}]}`+"\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteManyRangesTrace writes a kstranded.trace/v1 trace of one partition whose
// deliveries make n distinct ranges: one fetch of 2n records, then one serve of every
// other offset (descending when reverse, the costly order for a sorted range set), and a
// commit of 2n (the other half lost). Issue 27 §10: trace parse was quadratic in them.
func WriteManyRangesTrace(w io.Writer, n int, reverse bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"ts":"2026-03-02T14:03:39Z","at_ms":0,"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","group":"g","policy":"head","commit":"auto","settings":{"max.poll.interval.ms":"900000"}}` + "\n")
	fmt.Fprintf(bw, `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":0,"first":0,"last":%d,"count":%d}]}`+"\n", 2*n-1, 2*n)
	var b []byte
	for i := 0; i < n; i++ {
		o := 2 * i
		if reverse {
			o = 2 * (n - 1 - i)
		}
		b = append(b[:0], `{"ts":"2026-03-02T14:03:41Z","ev":"serve","partition":0,"offsets":[`...)
		b = strconv.AppendInt(b, int64(o), 10)
		b = append(b, "]}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	fmt.Fprintf(bw, `{"ts":"2026-03-02T14:03:42Z","ev":"commit","committed":[{"partition":0,"offset":%d}]}`+"\n", 2*n)
	return bw.Flush()
}
