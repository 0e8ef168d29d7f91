package repro

import "github.com/kstranded/kstranded/internal/verdict"

// Outcome is the overall verdict of a command's runs (repro --client all, simulate
// --commit all, ...): the worst of theirs (verdict.Worse), as each run's is the worst of
// its partitions'. An INCOMPLETE run makes the whole INCOMPLETE unless another lost
// records. The command maps it to its exit with exitcode.ForVerdict; the view shows it.
func Outcome(results []*Result) verdict.Verdict {
	v := verdict.OK
	for _, r := range results {
		if r != nil {
			v = verdict.Worse(v, r.Verdict)
		}
	}
	return v
}
