package trace

import (
	"fmt"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/judge"
)

// LiveCommit is a group's committed offset for one partition, read from the cluster.
type LiveCommit struct {
	Topic     string
	Partition int32
	Offset    int64
}

// LiveRead is what the cluster says of one partition (`trace parse --group G --brokers
// B`): the group's committed offset, the partition's offsets, and a read of what its
// offsets hold over the window the judgement needs (inspect's read, the same as
// `inspect --delivered` makes). With a LiveRead the partition is judged as inspect
// judges it: from the log start, the records read from the partition; the log's fetch
// lines stay evidence for the findings.
type LiveRead struct {
	Topic         string
	Partition     int32
	Committed     int64 // -1: the group has none
	LogStart      int64
	LastStable    int64
	HighWatermark int64
	Contents      judge.Contents
	Err           string
}

// Delivered returns the delivered offsets the inputs name for a partition of the
// group's topic (topicless evidence counts for a group of one topic: single is true).
func (a *Analyzer) Delivered(topic string, p int32, single bool) []kpart.Range {
	if ps := a.parts[kpart.TopicPartition{Topic: topic, Partition: p}]; ps != nil {
		return ps.delivered
	}
	if single {
		if ps := a.parts[kpart.TopicPartition{Partition: p}]; ps != nil {
			return ps.delivered
		}
	}
	return nil
}

// Covers reports whether the inputs speak of topic (or, single, of a topicless
// partition while the group has one topic): its partitions without a delivery were
// delivered nothing.
func (a *Analyzer) Covers(topic string, single bool) bool {
	if !a.anyDelivery {
		return false
	}
	for _, k := range a.order {
		if k.Topic == topic || (single && k.Topic == "") {
			return true
		}
	}
	return false
}

// AddLiveReads completes the inputs with what the cluster says of the group's partitions
// of the topics the inputs cover (see Covers): each read's commit joins the timeline as
// AddLiveCommits does, and the partition is judged from the read. Partitions the inputs
// never named but the group committed are judged too (nothing delivered there). Call it
// after every Parse and before Finish; it returns the partitions completed.
func (a *Analyzer) AddLiveReads(reads []LiveRead, source string) int {
	topics := map[string]bool{}
	for _, r := range reads {
		topics[r.Topic] = true
	}
	single := len(topics) == 1
	var commits []LiveCommit
	for _, r := range reads {
		if !a.Covers(r.Topic, single) {
			continue
		}
		k := kpart.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if a.parts[k] == nil && single && a.parts[kpart.TopicPartition{Partition: r.Partition}] != nil {
			k.Topic = ""
		}
		if a.parts[k] == nil {
			if !a.tracked(k.Topic, k.Partition) {
				continue
			}
			a.part(k.Topic, k.Partition)
		}
		rd := r
		a.parts[k].live = &rd
		commits = append(commits, LiveCommit{Topic: k.Topic, Partition: k.Partition, Offset: r.Committed})
	}
	return a.AddLiveCommits(commits, source)
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
		if a.parts[k] == nil && c.Topic != "" {
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
