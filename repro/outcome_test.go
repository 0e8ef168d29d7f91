package repro

import (
	"testing"

	"github.com/kstranded/kstranded/internal/verdict"
)

func TestOutcomeIsTheWorstRunsVerdict(t *testing.T) {
	cases := []struct {
		name string
		runs []verdict.Verdict
		want verdict.Verdict
	}{
		{"no run is OK", nil, verdict.OK},
		{"every run OK is OK", []verdict.Verdict{verdict.OK, verdict.OK}, verdict.OK},
		{"one lost run makes the outcome LOST", []verdict.Verdict{verdict.OK, verdict.Lost, verdict.Stranded}, verdict.Lost},
		{"stranded beats OK", []verdict.Verdict{verdict.Stranded, verdict.OK}, verdict.Stranded},
		{"an incomplete run is not hidden by OK ones", []verdict.Verdict{verdict.OK, verdict.Incomplete}, verdict.Incomplete},
		{"lost beats incomplete", []verdict.Verdict{verdict.Incomplete, verdict.Lost}, verdict.Lost},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rs []*Result
			for _, v := range c.runs {
				rs = append(rs, &Result{Verdict: v})
			}
			if got := Outcome(rs); got != c.want {
				t.Fatalf("Outcome = %s, want %s", got, c.want)
			}
		})
	}
}
