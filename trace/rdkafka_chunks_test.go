package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomRdkafkaLog writes n lines of a consumer's debug log over two topics of three
// partitions in which every line that moves or names a fetch position comes at random:
// fetch positions (at, behind and ahead of what was fetched), enqueues (with control
// records and none), fetch errors, EOFs, start fetching, offset resets, pauses, stores for
// commit and repeats, removals, commits, assignments, lost partitions, and a producer's lines.
func randomRdkafkaLog(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	pos := map[string]int64{}
	ts := int64(1796225597000)
	for range n {
		ts += int64(rng.IntN(20))
		topic := []string{"stranded", "other"}[rng.IntN(2)]
		part := rng.IntN(3)
		key := fmt.Sprintf("%s [%d]", topic, part)
		p := pos[key]
		client := "rdkafka#consumer-1"
		if rng.IntN(10) == 0 {
			client = "rdkafka#consumer-2"
		}
		head := func(fac string) string {
			return fmt.Sprintf("%%7|%d.%03d|%s|%s| [thrd:b/0]: b/0: ", ts/1000, ts%1000, fac, client)
		}
		switch k := rng.IntN(100); {
		case k < 30:
			off := p
			switch rng.IntN(6) {
			case 0:
				off = max(0, p-int64(rng.IntN(5)))
			case 1:
				off = p + int64(rng.IntN(5))
			}
			fmt.Fprintf(&b, "%sFetch topic %s at offset %d (leader epoch 0, current leader epoch 0, v2)\n", head("FETCH"), key, off)
			pos[key] = off
		case k < 55:
			cnt := int64(rng.IntN(4))
			last := p + cnt - 1 + int64(rng.IntN(3))
			if rng.IntN(8) == 0 {
				last = max(0, p-2)
			}
			fmt.Fprintf(&b, "%sEnqueue %d message(s) (%d bytes, %d ops) on %s fetch queue (qlen 0, v2, last_offset %d, %d ctrl msgs, 0 aborted msgsets, uncompressed)\n",
				head("CONSUME"), cnt, 100*cnt, cnt, key, last, rng.IntN(2))
			if cnt > 0 {
				pos[key] = max(p, last+1)
			}
		case k < 62:
			reason := []string{"_PARTITION_EOF", "Broker: Not leader for partition", "Local: Timed out"}[rng.IntN(3)]
			fmt.Fprintf(&b, "%s%s: Fetch failed at offset %d (leader epoch 0): %s\n", head("FETCHERR"), key, p+int64(rng.IntN(2)), reason)
		case k < 66:
			off := int64(rng.IntN(40))
			fmt.Fprintf(&b, "%%7|%d.%03d|FETCH|%s| [thrd:main]: Partition %s start fetching at offset %d (leader epoch 0)\n", ts/1000, ts%1000, client, key, off)
			pos[key] = off
		case k < 68:
			off := int64(rng.IntN(40))
			fmt.Fprintf(&b, "%%7|%d.%03d|OFFSET|%s| [thrd:main]: %s: offset reset (at offset %d (leader epoch 0), broker 0) to offset %d (leader epoch 0): fetch failed due to requested offset not available on the broker: Broker: Offset out of range\n",
				ts/1000, ts%1000, client, key, p, off)
			pos[key] = off
		case k < 71:
			state := []string{"is fetchable", "is not fetchable: paused"}[rng.IntN(2)]
			fmt.Fprintf(&b, "%sTopic %s in state active at offset %d (leader epoch 0) (0/100000 msgs, 0/65536 kb queued, opv 2) %s\n", head("FETCH"), key, p, state)
		case k < 85:
			forCommit := []string{"  for commit", ""}[rng.IntN(2)]
			st := max(0, p-int64(rng.IntN(3)))
			fmt.Fprintf(&b, "%%7|%d.%03d|OFFSET|%s| [thrd:main]: Topic %s: stored offset %d (leader epoch 0), committed offset %d (leader epoch 0): setting stored offset %d (leader epoch 0)%s\n",
				ts/1000, ts%1000, client, key, st, max(0, st-2), st, forCommit)
		case k < 87:
			fmt.Fprintf(&b, "%%7|%d.%03d|REMOVE|%s| [thrd:main]: Removing %s from assignment (started=true, pending=false, queried=false, stored offset=%d)\n", ts/1000, ts%1000, client, key, p)
		case k < 93:
			res := []string{"Success", "Success", "Broker: Unknown member", "Local: No offset stored"}[rng.IntN(4)]
			fmt.Fprintf(&b, "%%7|%d.%03d|COMMIT|%s| [thrd:main]: GroupCoordinator/0: OffsetCommit for 6 partition(s) in join-state steady: cgrp auto commit timer: returned: %s\n", ts/1000, ts%1000, client, res)
		case k < 96:
			fac, verb := "PARTADD", "add"
			if rng.IntN(2) == 0 {
				fac, verb = "PARTDEL", "delete"
			}
			fmt.Fprintf(&b, "%%7|%d.%03d|%s|%s| [thrd:main]: Group \"g1\": %s %s\n", ts/1000, ts%1000, fac, client, verb, key)
		case k < 98:
			fmt.Fprintf(&b, "%%7|%d.%03d|FETCH|rdkafka#producer-3| [thrd:b/0]: b/0: Fetch topic %s at offset %d (leader epoch 0, current leader epoch 0, v2)\n", ts/1000, ts%1000, key, rng.IntN(40))
		default:
			fmt.Fprintf(&b, "%sDUMP %s offset STORED\n", head("DUMP_ALL"), key)
		}
	}
	return b.Bytes()
}

// Where the chunks of a librdkafka log are cut shows in no report, on logs in which
// positions, fetches, seeks, resets, errors, stores and commits interleave at random on
// few partitions: the scanner's state (the last record of each partition, the memo)
// starts again with each chunk and the fold must make up for it. readBothWays reads each
// in chunks of 1 MiB and 4 KiB, with the memo and without it (the captures and the
// generated shapes: TestTheMemoOfMessagesChangesNoReport).
func TestTheRdkafkaReportDoesNotDependOnTheChunkSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 30 {
		readBothWays(t, fmt.Sprintf("random-%d", i), randomRdkafkaLog(rng, 3000), FormatLibrdkafka, "")
	}
}
