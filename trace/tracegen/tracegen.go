// Package tracegen writes synthetic librdkafka debug logs, shaped like the real capture in
// trace/testdata/rdkafka-go-consumer.log, for benchmarks of `kstranded trace parse`. It is
// not used by kstranded itself.
package tracegen

import (
	"bufio"
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
