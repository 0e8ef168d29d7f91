package repro

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
)

// Seek is one --seek: the handler calls consumer.seek({topic, partition, offset}) at its
// first round (record) starting At after the consumer started (eachbatch.HandlerSeek,
// with At unscaled).
type Seek struct {
	At time.Duration
	// Partition: the partition sought; -1 is the handler's own.
	Partition int32
	Offset    int64
}

// ParseSeek reads --seek [P:]OFFSET@TIME: "1:100@3m50s" seeks partition 1 to 100 at
// 3m50s, "100@3m50s" the handler's own partition.
func ParseSeek(s string) (Seek, error) {
	bad := func(why string) (Seek, error) {
		return Seek{}, fmt.Errorf("--seek %q: %s (want [PARTITION:]OFFSET@TIME, e.g. 1:100@3m50s)", s, why)
	}
	target, at, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok {
		return bad("no @TIME")
	}
	k := Seek{Partition: -1}
	d, err := time.ParseDuration(strings.TrimSpace(at))
	if err != nil || d <= 0 {
		return bad("the time is not a duration > 0")
	}
	k.At = d
	off := target
	if p, o, ok := strings.Cut(target, ":"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return bad("the partition is not a number >= 0")
		}
		k.Partition, off = int32(n), o
	}
	if k.Offset, err = strconv.ParseInt(strings.TrimSpace(off), 10, 64); err != nil || k.Offset < 0 {
		return bad("the offset is not a number >= 0")
	}
	return k, nil
}

// String is the seek as --seek takes it.
func (k Seek) String() string {
	s := strconv.FormatInt(k.Offset, 10) + "@" + k.At.String()
	if k.Partition >= 0 {
		s = strconv.Itoa(int(k.Partition)) + ":" + s
	}
	return s
}

// engineSeeks are the seeks at the run's time scale.
func (o Options) engineSeeks() []eachbatch.HandlerSeek {
	var out []eachbatch.HandlerSeek
	for _, k := range o.Seeks {
		at := o.scale(k.At)
		if at <= 0 {
			at = 1 // scaled below a nanosecond: still a seek
		}
		out = append(out, eachbatch.HandlerSeek{At: at, Partition: k.Partition, Offset: k.Offset})
	}
	return out
}

// seeksErr checks the seeks against the topic and the run's limits.
func (o Options) seeksErr() error {
	for _, k := range o.Seeks {
		switch {
		case k.At <= 0 || k.Offset < 0:
			return fmt.Errorf("--seek %s: a time > 0 and an offset >= 0", k)
		case k.At > MaxRebalanceAt:
			return fmt.Errorf("--seek %s: the time must be at most %s", k, MaxRebalanceAt)
		case k.Partition >= o.Partitions:
			return fmt.Errorf("--seek %s: partition %d is not one of the topic's %d", k, k.Partition, o.Partitions)
		}
	}
	return nil
}

// seeksNamePartitions reports whether a seek names a partition (not the handler's own).
func (o Options) seeksNamePartitions() bool {
	for _, k := range o.Seeks {
		if k.Partition >= 0 {
			return true
		}
	}
	return false
}
