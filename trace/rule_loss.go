package trace

import (
	"fmt"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The rule RuleLoss (LOST): committed past fetched records never delivered.

func (a *Analyzer) lossFinding(ps *partState, lost kpart.RangeSet) Finding {
	f := Finding{Rule: RuleLoss, Severity: SevLoss, Topic: ps.key.Topic, Partition: ps.key.Partition, Ranges: lost, Count: lost.Count()}
	var ev []Evidence
	// where the first ranges were fetched, and the last (40,000 ranges gave 40,000 lines)
	for i, r := range lost {
		if i == messageRanges && len(lost) > messageRanges+1 {
			r = lost[len(lost)-1]
			if ref, ok := ps.fetchRef(r.First); ok {
				ev = append(ev, Evidence{ref, fmt.Sprintf("offset %d fetched, the last of %d more ranges", r.First, len(lost)-messageRanges)})
			}
			break
		}
		if ref, ok := ps.fetchRef(r.First); ok {
			ev = append(ev, Evidence{ref, fmt.Sprintf("offset %d fetched", r.First)})
		}
	}
	var cause string
	for _, c := range ps.clears {
		if len(c.discarded.Within(lost[0].First, lost[0].Last+1)) > 0 {
			ev = append(ev, Evidence{c.ref, fmt.Sprintf("cache clear discarded %s", c.discarded.Summary(messageRanges))})
			cause = "discarded by a cache clear that did not rewind"
			break
		}
	}
	if cause == "" {
		for _, s := range ps.seeks {
			if s.offset > lost[0].First {
				ev = append(ev, Evidence{s.ref, fmt.Sprintf("seek to %d skipped them", s.offset)})
				cause = fmt.Sprintf("skipped by a seek to %d", s.offset)
				break
			}
		}
	}
	committed := ps.committed
	for _, c := range ps.commits {
		if c.offset > lost[0].First {
			ev = append(ev, Evidence{c.ref, fmt.Sprintf("committed %d, past offset %d", c.offset, lost[0].First)})
			committed = c.offset
			break
		}
	}
	how := "were fetched"
	if len(ps.fetched.Within(lost[0].First, lost[len(lost)-1].Last+1)) == 0 {
		how = "hold records (read from the partition)"
		if ps.live != nil {
			ev = append(ev, Evidence{Ref{File: "the partition, read live"}, fmt.Sprintf("records at %s", lost.Summary(messageRanges))})
		}
	}
	f.Message = fmt.Sprintf("%s: %d records (%s) %s, never delivered, and the committed offset moved past them (committed %d)",
		tpName(ps.key.Topic, ps.key.Partition), lost.Count(), lost.Summary(messageRanges), how, committed)
	if cause != "" {
		f.Message += "; " + cause
	}
	f.Evidence = ev
	return f
}

func (a *Analyzer) rewoundAfter(ps *partState, seq int, first int64) (offRef, bool) {
	for _, rw := range ps.rewinds {
		if rw.seq >= seq && (rw.offset == Unknown || rw.offset <= first) {
			return rw, true
		}
	}
	return offRef{}, false
}
