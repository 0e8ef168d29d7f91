package trace

import (
	"fmt"
)

// The rule RuleMaxPoll (MAX-POLL-EXCEEDED): the client left the group, max.poll.interval.ms
// exceeded.

// maxPollFindings are the times the client left the group for not polling in time.
func (a *Analyzer) maxPollFindings() []Finding {
	var out []Finding
	for _, m := range a.maxPolls {
		out = append(out, Finding{Rule: RuleMaxPoll, Severity: SevWarn, Partition: AllPartitions,
			Message:  fmt.Sprintf("the application did not poll within max.poll.interval.ms (%s): the consumer left the group and its partitions were revoked", fmtDur(m.Timeout)),
			Evidence: []Evidence{{m.Ref, "max.poll.interval.ms exceeded"}}})
	}
	return out
}
