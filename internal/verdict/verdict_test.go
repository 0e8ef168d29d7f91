package verdict

import "testing"

func TestWorseOrdersLostOverStrandedOverUnjudgedOverOK(t *testing.T) {
	cases := []struct{ a, b, want Verdict }{
		{OK, Lost, Lost},
		{Stranded, Lost, Lost},
		{Lost, Stranded, Lost},
		{OK, Stranded, Stranded},
		{OK, NoEvidence, NoEvidence},
		{NoEvidence, Stranded, Stranded},
		{OK, OK, OK},
		{OK, "SOMETHING", "SOMETHING"},
		{OK, NoCommitEvidence, NoCommitEvidence},
		{NoCommitEvidence, Stranded, Stranded},
		{NoEvidence, NoCommitEvidence, NoCommitEvidence},
	}
	for _, c := range cases {
		if got := Worse(c.a, c.b); got != c.want {
			t.Errorf("Worse(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

func TestOnlyOKStrandedAndLostAreJudgements(t *testing.T) {
	for v, want := range map[Verdict]bool{OK: true, Stranded: true, Lost: true, NoEvidence: false, NoCommitEvidence: false, Incomplete: false, Error: false} {
		if v.Judged() != want {
			t.Errorf("%s.Judged() = %v", v, !want)
		}
	}
}
