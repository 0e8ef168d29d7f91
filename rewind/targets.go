package rewind

import (
	"fmt"
	"strconv"
	"strings"
)

// TargetError is a target specification that cannot be read. The command layer names
// the flag it came from.
type TargetError struct {
	Spec   string
	Reason string
}

func (e *TargetError) Error() string { return fmt.Sprintf("%q: %s", e.Spec, e.Reason) }

// ParseTargets reads targets written TOPIC/PARTITION=OFFSET (the form inspect prints
// partitions in: "stranded-1a2b/0") or TOPIC:PARTITION=OFFSET (kafka-consumer-groups.sh's
// TOPIC:PARTITIONS spelling), several per value separated by commas. A Kafka topic name
// holds only letters, digits, '.', '_' and '-' (Kafka's Topic.validate), so neither '/'
// nor ':' can be part of it: the last of them separates the partition unambiguously.
// A partition named twice is an error: which target was meant is not guessable.
func ParseTargets(values []string) ([]Target, error) {
	var out []Target
	seen := map[string]string{}
	for _, v := range values {
		for _, spec := range strings.Split(v, ",") {
			spec = strings.TrimSpace(spec)
			if spec == "" {
				continue
			}
			t, err := parseTarget(spec)
			if err != nil {
				return nil, err
			}
			key := t.TP().String()
			if prev, ok := seen[key]; ok {
				return nil, &TargetError{spec, fmt.Sprintf("partition %s is already given a target (%q)", key, prev)}
			}
			seen[key] = spec
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, &TargetError{strings.Join(values, ","), "no targets; want TOPIC/PARTITION=OFFSET[,...]"}
	}
	return out, nil
}

func parseTarget(spec string) (Target, error) {
	tp, off, ok := strings.Cut(spec, "=")
	if !ok {
		return Target{}, &TargetError{spec, "want TOPIC/PARTITION=OFFSET (or TOPIC:PARTITION=OFFSET)"}
	}
	sep := strings.LastIndexAny(tp, "/:")
	if sep < 0 {
		return Target{}, &TargetError{spec, "no topic: want TOPIC/PARTITION=OFFSET (or TOPIC:PARTITION=OFFSET)"}
	}
	topic, part := strings.TrimSpace(tp[:sep]), strings.TrimSpace(tp[sep+1:])
	if topic == "" {
		return Target{}, &TargetError{spec, "empty topic"}
	}
	if strings.ContainsAny(topic, "=/: ") {
		return Target{}, &TargetError{spec, fmt.Sprintf("topic %q is not a valid topic name", topic)}
	}
	p, err := strconv.ParseInt(part, 10, 32)
	if err != nil || p < 0 {
		return Target{}, &TargetError{spec, fmt.Sprintf("partition %q is not a number >= 0", part)}
	}
	off = strings.TrimSpace(off)
	o, err := strconv.ParseInt(off, 10, 64)
	if err != nil || o < 0 {
		return Target{}, &TargetError{spec, fmt.Sprintf("offset %q is not a number >= 0", off)}
	}
	return Target{Topic: topic, Partition: int32(p), Offset: o, LeaderEpoch: -1}, nil
}
