package trace

import (
	"fmt"

	"github.com/kstranded/kstranded/internal/kpart"
)

// LiveCommit is a group's committed offset for one partition, read from the cluster.
type LiveCommit struct {
	Topic     string
	Partition int32
	Offset    int64
}

// liveReason marks a commit event read from the cluster rather than from a log line.
const liveReason = "live"

// AddLiveCommits completes the inputs with the group's committed offsets read from the
// cluster (`trace parse --group G --brokers B`): logs often carry deliveries but not the
// commits (librdkafka logs them only with debug=cgrp), and a partition without a known
// commit cannot be judged. Each commit joins the partition's state as the last commit
// and its timeline as an entry whose source says it was read live (source), never a log
// line. Only partitions the inputs name are completed: the group's other partitions have
// no evidence of what was fetched or delivered. Partitions without a topic (a --pattern
// without a topic group) take the commits of the group's topic when it has only one.
// Call it after every Parse and before Finish; it returns the partitions completed.
func (a *Analyzer) AddLiveCommits(commits []LiveCommit, source string) int {
	topics := map[string]bool{}
	for _, c := range commits {
		topics[c.Topic] = true
	}
	n := 0
	for _, c := range commits {
		if c.Offset < 0 {
			continue
		}
		k := kpart.TopicPartition{Topic: c.Topic, Partition: c.Partition}
		if a.parts[k] == nil {
			k.Topic = ""
			if len(topics) != 1 || a.parts[k] == nil {
				continue
			}
		}
		ps := a.parts[k]
		e := newEvent(KindCommit)
		e.Topic, e.Partition, e.Offset, e.Reason = k.Topic, k.Partition, c.Offset, liveReason
		e.Time = a.last // what is committed now: after everything the logs say
		e.Ref = Ref{File: source}
		if ps.committed == c.Offset {
			a.seq++
			a.entry(e, fmt.Sprintf("committed %d (read live, as the logs say)", c.Offset))
		} else {
			a.add(e)
		}
		n++
	}
	return n
}

// commitDetail is a commit's timeline text.
func commitDetail(e Event) string {
	if e.Reason == liveReason {
		return fmt.Sprintf("committed %d (read live from the group)", e.Offset)
	}
	return fmt.Sprintf("committed %d", e.Offset)
}
