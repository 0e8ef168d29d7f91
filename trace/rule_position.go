package trace

import (
	"fmt"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The rule RulePositionPast (POSITION-PAST-UNDELIVERED): the fetch position was left past
// undelivered records.

func (a *Analyzer) positionFinding(ps *partState, past kpart.RangeSet) (Finding, bool) {
	if len(past) == 0 {
		return Finding{}, false
	}
	// only records the client let go of (a clear or a seek past them) are stranded; the
	// rest may still be in its cache
	var drop *Evidence
	for _, c := range ps.clears {
		if len(c.discarded.Within(past[0].First, past[len(past)-1].Last+1)) > 0 {
			if _, ok := a.rewoundAfter(ps, c.seq, past[0].First); !ok {
				drop = &Evidence{c.ref, fmt.Sprintf("cache clear discarded %s", c.discarded.Summary(messageRanges))}
			}
			break
		}
	}
	if drop == nil {
		for _, s := range ps.seeks {
			if s.offset > past[0].First {
				if _, ok := a.rewoundAfter(ps, s.seq+1, past[0].First); !ok {
					drop = &Evidence{s.ref, fmt.Sprintf("seek to %d", s.offset)}
				}
				break
			}
		}
	}
	if drop == nil {
		return Finding{}, false
	}
	f := Finding{Rule: RulePositionPast, Severity: SevWarn, Topic: ps.key.Topic, Partition: ps.key.Partition, Ranges: past, Count: past.Count()}
	f.Message = fmt.Sprintf("%s: the fetch position (%d) is past %d undelivered records (%s) and nothing rewound it: they will not be fetched again by this consumer, and the next commit past them loses them",
		tpName(ps.key.Topic, ps.key.Partition), ps.position, past.Count(), past.Summary(messageRanges))
	f.Evidence = []Evidence{*drop, {ps.posRef, fmt.Sprintf("fetch position %d", ps.position)}}
	return f, true
}
