package trace

import (
	"fmt"
	"strconv"
)

// The rule RuleClearNoRewind (CLEAR-NO-REWIND): a cache clear discarded undelivered records and
// did not rewind.

func (a *Analyzer) clearFinding(ps *partState, c clearRec, skipsAll int, skipsAllRef Ref) (Finding, bool) {
	if _, ok := a.rewoundAfter(ps, c.seq, c.discarded[0].First); ok {
		return Finding{}, false
	}
	n := c.discarded.Count()
	f := Finding{Rule: RuleClearNoRewind, Severity: SevWarn, Topic: ps.key.Topic, Partition: ps.key.Partition,
		Ranges: c.discarded, Count: n, Facts: map[string]string{"discarded": strconv.FormatInt(n, 10)}}
	why := []string{}
	what := "cache cleared"
	if c.reason != "" {
		what += " (" + c.reason + ")"
	}
	ev := []Evidence{{c.ref, what}}
	if ref, ok := ps.fetchRef(c.discarded[0].First); ok {
		ev = append([]Evidence{{ref, fmt.Sprintf("offset %d fetched into the cache", c.discarded[0].First)}}, ev...)
	}
	if c.keysKnown {
		f.Facts["last_consumed_keys"] = fmt.Sprint(c.keys)
		if len(c.keys) == 0 {
			why = append(why, "lastConsumedKeys is empty, so there was nothing to rewind to")
		}
	}
	for _, s := range ps.skips {
		if s.seq >= c.seq {
			ev = append(ev, Evidence{s.ref, "rewind skipped: " + s.reason})
			why = append(why, "rewind skipped: "+s.reason)
			break
		}
	}
	if skipsAll > 0 {
		f.Facts["rewinds_skipped"] = strconv.Itoa(skipsAll)
		why = append(why, fmt.Sprintf("rewind skipped on %d partitions", skipsAll))
		ev = append(ev, Evidence{skipsAllRef, fmt.Sprintf("clearCache-skip-rewind %d", skipsAll)})
	}
	if c.reason != "" {
		f.Facts["clear"] = c.reason
	}
	f.Message = fmt.Sprintf("%s: a cache clear discarded %d fetched, undelivered records (%s) and did not rewind the partition",
		tpName(ps.key.Topic, ps.key.Partition), n, c.discarded.Summary(messageRanges))
	for i, w := range why {
		if i == 0 {
			f.Message += ": "
		} else {
			f.Message += "; "
		}
		f.Message += w
	}
	f.Evidence = ev
	return f, true
}
