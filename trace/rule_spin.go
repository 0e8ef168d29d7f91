package trace

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// The rule RuleHotSpin (HOT-SPIN): empty cache reads or empty fetches in a storm.

func (a *Analyzer) spinFindings() []Finding {
	var out []Finding
	span := a.last.Sub(a.first)
	names := make([]string, 0, len(a.spins)+2)
	for n := range a.spins {
		names = append(names, n)
	}
	for _, n := range []string{"cache:nextN-null"} {
		if _, ok := a.spins[n]; !ok && a.declared[n] > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		s := a.spins[n]
		total, maxPS := 0, 0
		var ref Ref
		var at time.Time
		if s != nil {
			total, maxPS, ref, at = s.total, s.maxPerSec, s.ref, s.maxAt
		}
		decl := a.declared[n]
		if n == "consume-result" {
			decl = 0 // the declared count includes productive results
		}
		switch {
		case maxPS >= SpinRate:
			out = append(out, Finding{Rule: RuleHotSpin, Severity: SevWarn, Partition: AllPartitions,
				Message:  fmt.Sprintf("%s: %d per second at %s (%d in all): the client spins on an empty cache or fetch", n, maxPS, clock(at), total),
				Facts:    map[string]string{"name": n, "max_per_second": strconv.Itoa(maxPS), "total": strconv.Itoa(total)},
				Evidence: []Evidence{{ref, n}}})
		case decl > total && span > 0 && float64(decl)/span.Seconds() >= SpinRate:
			rate := float64(decl) / span.Seconds()
			out = append(out, Finding{Rule: RuleHotSpin, Severity: SevWarn, Partition: AllPartitions,
				Message:  fmt.Sprintf("%s: %d in all, ≈%.0f per second on average over the trace's %s: the client spins on an empty cache or fetch", n, decl, rate, span.Round(time.Second)),
				Facts:    map[string]string{"name": n, "avg_per_second": strconv.FormatFloat(rate, 'f', 0, 64), "total": strconv.Itoa(decl)},
				Evidence: []Evidence{{a.counterRefs[n], fmt.Sprintf("%s %d", n, decl)}}})
		}
	}
	return out
}
