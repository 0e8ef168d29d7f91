package rewind

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kpart"
)

// kafka-consumer-groups.sh --reset-offsets, mapped onto the plan: a Reset names a rule
// (--to-offset, --to-earliest, ...) and the partitions it applies to (--topic T,
// --topic T:0,1, --all-topics); NewPlan turns it into one Target per partition from the
// same inspection every plan starts from, and the safety rules (Decide) judge those
// targets as they judge --to. Where the Java tool clamps a target into the log (an
// offset below the log start or beyond the end becomes the earliest or latest), the
// plan refuses and names the lowest or highest possible target instead: a silently
// moved target is a different repair than the one asked for.
//
// Reference: kafka-consumer-groups.sh's ConsumerGroupCommand (prepareOffsetsToReset)
// in Apache Kafka's tools module.

// ResetKind is a reset rule.
type ResetKind string

// The reset rules, named by their kafka-consumer-groups.sh flag.
const (
	ToOffset   ResetKind = "--to-offset"   // every partition in scope to N
	ToEarliest ResetKind = "--to-earliest" // the log start offset
	ToLatest   ResetKind = "--to-latest"   // the high watermark (the log end offset the Java tool uses)
	ShiftBy    ResetKind = "--shift-by"    // the committed offset plus N (N < 0 re-delivers)
	ToTime     ResetKind = "--to-datetime" // the first offset whose record timestamp is at or after Millis (also --by-duration)
)

// Reset is a --reset-offsets request.
type Reset struct {
	Kind   ResetKind
	N      int64 // ToOffset: the offset; ShiftBy: the shift
	Millis int64 // ToTime: Unix milliseconds
	// Scope is the partitions the rule applies to; nil means every topic the group has
	// committed offsets for (--all-topics).
	Scope []Scope
}

// Scope is one --topic value: a topic, and the partitions named (all when empty).
type Scope struct {
	Topic      string
	Partitions []int32
}

// TimeOffsets is what a reset by time needs from the cluster: per partition of topics,
// the first offset whose record timestamp is at or after millis (ListOffsets by
// timestamp), or -1 when no record is that late.
type TimeOffsets interface {
	OffsetsAfter(ctx context.Context, topics []string, millis int64) (map[kpart.TopicPartition]int64, error)
}

// ParseScope reads --topic values as kafka-consumer-groups.sh writes them: TOPIC, or
// TOPIC:PARTITIONS with the partitions comma separated ("orders:0,1"). A topic named twice
// is an error, as a partition named twice is for --to.
func ParseScope(values []string) ([]Scope, error) {
	var out []Scope
	seen := map[string]bool{}
	for _, v := range values {
		topic, parts, hasParts := strings.Cut(strings.TrimSpace(v), ":")
		topic = strings.TrimSpace(topic)
		if topic == "" || strings.ContainsAny(topic, "/= ,") {
			return nil, &TargetError{v, "want TOPIC or TOPIC:PARTITION,PARTITION,..."}
		}
		if seen[topic] {
			return nil, &TargetError{v, fmt.Sprintf("topic %s is already in scope; name its partitions in one --topic %s:P,P", topic, topic)}
		}
		seen[topic] = true
		s := Scope{Topic: topic}
		if hasParts {
			inTopic := map[int32]bool{}
			for _, ps := range strings.Split(parts, ",") {
				ps = strings.TrimSpace(ps)
				p, err := strconv.ParseInt(ps, 10, 32)
				if err != nil || p < 0 {
					return nil, &TargetError{v, fmt.Sprintf("partition %q is not a number >= 0", ps)}
				}
				if inTopic[int32(p)] {
					return nil, &TargetError{v, fmt.Sprintf("partition %d is named twice", p)}
				}
				inTopic[int32(p)] = true
				s.Partitions = append(s.Partitions, int32(p))
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// scopeTopics are the topics a reset inspects: nil (the group's) for --all-topics.
func (r *Reset) scopeTopics() []string {
	if r.Scope == nil {
		return nil
	}
	var ts []string
	for _, s := range r.Scope {
		ts = append(ts, s.Topic)
	}
	sort.Strings(ts)
	return ts
}

// targets resolves the reset against the inspected partitions: one Target per partition
// in scope, and a note per partition the rule cannot place (a shift without a committed
// offset to shift from, as the Java tool refuses it). A partition named in scope that the
// topic lacks is left as a target for NewPlan to refuse (ErrUnknownPartition).
func (r *Reset) targets(ctx context.Context, cl inspect.Cluster, parts []inspect.PartitionReport) ([]Target, []string, error) {
	var inScope []inspect.Offsets
	want := map[kpart.TopicPartition]bool{}
	whole := map[string]bool{}
	for _, s := range r.Scope {
		if len(s.Partitions) == 0 {
			whole[s.Topic] = true
		}
		for _, p := range s.Partitions {
			want[kpart.TopicPartition{Topic: s.Topic, Partition: p}] = true
		}
	}
	found := map[kpart.TopicPartition]bool{}
	for _, pr := range parts {
		tp := kpart.TopicPartition{Topic: pr.Topic, Partition: pr.Partition}
		if r.Scope == nil || whole[pr.Topic] || want[tp] {
			inScope = append(inScope, pr.Offsets)
			found[tp] = true
		}
	}
	var out []Target
	for tp := range want {
		if !found[tp] {
			out = append(out, Target{Topic: tp.Topic, Partition: tp.Partition, LeaderEpoch: -1})
		}
	}
	var at map[kpart.TopicPartition]int64
	if r.Kind == ToTime {
		tc, ok := cl.(TimeOffsets)
		if !ok {
			return nil, nil, fmt.Errorf("this cluster cannot list offsets by timestamp")
		}
		var topics []string
		seen := map[string]bool{}
		for _, o := range inScope {
			if !seen[o.Topic] {
				seen[o.Topic] = true
				topics = append(topics, o.Topic)
			}
		}
		var err error
		if at, err = tc.OffsetsAfter(ctx, topics, r.Millis); err != nil {
			return nil, nil, err
		}
	}
	var notes []string
	for _, o := range inScope {
		t := Target{Topic: o.Topic, Partition: o.Partition, LeaderEpoch: -1}
		switch r.Kind {
		case ToOffset:
			t.Offset = r.N
		case ToEarliest:
			t.Offset = o.LogStart
		case ToLatest:
			t.Offset = o.HighWatermark
		case ShiftBy:
			if o.Committed < 0 {
				notes = append(notes, fmt.Sprintf("%s: no committed offset to shift by %d; not planned (--to-offset or --to-earliest set one)", t.TP(), r.N))
				continue
			}
			t.Offset = max(o.Committed+r.N, 0)
		case ToTime:
			off, ok := at[t.TP()]
			if !ok || off < 0 {
				// no record that late: the end of the log, as the Java tool does
				off = o.HighWatermark
			}
			t.Offset = off
		default:
			return nil, nil, fmt.Errorf("unknown reset %q", r.Kind)
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, notes, nil
}

// javaDateTime is what kafka-consumer-groups.sh --to-datetime takes (Utils.getDateTime):
// YYYY-MM-DDTHH:mm:SS with optional fractional seconds and an optional zone (Z, +hh:mm,
// +hhmm, +hh); without a zone, local time.
var javaDateTime = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// ParseDateTime reads a --to-datetime value; loc is the zone of a value without one.
func ParseDateTime(s string, loc *time.Location) (time.Time, error) {
	m := javaDateTime.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, fmt.Errorf("%q: want YYYY-MM-DDTHH:mm:SS.sss, optionally with a zone (Z, +01:00), as kafka-consumer-groups.sh takes it", s)
	}
	zone := m[2]
	switch {
	case zone == "":
		t, err := time.ParseInLocation("2006-01-02T15:04:05", m[1], loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: %v", s, err)
		}
		return t, nil
	case zone == "Z":
		zone = "+00:00"
	case len(zone) == 3:
		zone += ":00"
	case len(zone) == 5:
		zone = zone[:3] + ":" + zone[3:]
	}
	t, err := time.Parse("2006-01-02T15:04:05-07:00", m[1]+zone)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: %v", s, err)
	}
	return t, nil
}

// isoDuration is java.time.Duration's text (Duration.parse), what --by-duration takes:
// PnDTnHnMn.nS, each part optional, at least one.
var isoDuration = regexp.MustCompile(`^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{1,9}))?S)?)?$`)

// ParseISODuration reads a --by-duration value (PT1H, P1DT2H30M, PT0.5S). The Java tool
// resets to the offsets of now minus the duration; a negative duration is refused.
func ParseISODuration(s string) (time.Duration, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	m := isoDuration.FindStringSubmatch(u)
	if m == nil || u == "P" || strings.HasSuffix(u, "T") || (m[2] == "" && m[3] == "" && m[4] == "" && m[5] == "") {
		return 0, fmt.Errorf("%q: want an ISO-8601 duration such as PT1H, PT30M or P1DT12H, as kafka-consumer-groups.sh takes it", s)
	}
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if v := m[2+i]; v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%q: %v", s, err)
			}
			d += time.Duration(n) * unit
		}
	}
	if f := m[6]; f != "" {
		frac, _ := strconv.ParseInt((f + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[5], "-") {
			frac = -frac
		}
		d += time.Duration(frac)
	}
	if m[1] == "-" {
		d = -d
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: the duration must be positive (the reset goes to now minus it)", s)
	}
	return d, nil
}
