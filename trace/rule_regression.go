package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The rule RuleCommitRegression (COMMIT-REGRESSION): a commit lower than one already committed
// (found while folding the commits, fold.go).

// regression records a commit lower than one already committed. Commits that regress
// against the same earlier commit (queued auto-commits of older stored offsets completing
// after it) make one finding.
func (a *Analyzer) regression(e Event, high int64, highRef Ref) {
	if n := len(a.regressions); n > 0 {
		f := &a.regressions[n-1]
		if f.Topic == e.Topic && f.Partition == e.Partition && f.Evidence[0].Ref == highRef {
			f.Facts["commits"] += "," + strconv.FormatInt(e.Offset, 10)
			low := min(f.Ranges[0].First, e.Offset)
			f.Ranges, f.Count = kpart.RangeSet{{First: low, Last: high - 1}}, high-low
			f.Message = fmt.Sprintf("commits of %s are lower than %d already committed: offsets %d-%d will be delivered again (or were committed by mistake)",
				strings.ReplaceAll(f.Facts["commits"], ",", ", "), high, low, high-1)
			if len(f.Evidence) < 8 {
				f.Evidence = append(f.Evidence, Evidence{e.Ref, fmt.Sprintf("committed %d", e.Offset)})
			}
			return
		}
	}
	a.regressions = appendCapped(a.regressions, Finding{Rule: RuleCommitRegression, Severity: SevWarn,
		Topic: e.Topic, Partition: e.Partition, Ranges: kpart.RangeSet{{First: e.Offset, Last: high - 1}}, Count: high - e.Offset,
		Message:  fmt.Sprintf("commit of %d is lower than %d already committed: offsets %d-%d will be delivered again (or were committed by mistake)", e.Offset, high, e.Offset, high-1),
		Facts:    map[string]string{"committed_before": strconv.FormatInt(high, 10), "commits": strconv.FormatInt(e.Offset, 10)},
		Evidence: []Evidence{{highRef, fmt.Sprintf("committed %d", high)}, {e.Ref, fmt.Sprintf("committed %d", e.Offset)}}})
}
