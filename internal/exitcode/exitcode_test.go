package exitcode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kstranded/kstranded/internal/verdict"
)

func TestCodeMapsWrappedSentinels(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil is success", nil, OK},
		{"a plain error is an operational error", errors.New("boom"), Error},
		{"a wrapped usage error is usage", Usagef("--batch-size must be > 0"), Usage},
		{"loss wrapped twice is still loss", fmt.Errorf("repro: %w", fmt.Errorf("p0: %w", ErrLost)), Lost},
		{"stranded", ErrStranded, Stranded},
		{"refused", fmt.Errorf("%w: group has members", ErrRefused), Refused},
		{"interrupted", ErrInterrupted, Interrupted},
		{"a reported loss keeps its code", Reported(fmt.Errorf("x: %w", ErrLost)), Lost},
		{"no evidence is its own code", fmt.Errorf("%w: no delivery read", ErrNoEvidence), NoEvidence},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Code(c.err); got != c.want {
				t.Fatalf("Code(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
	if !errors.Is(Reported(errors.New("x")), ErrReported) {
		t.Fatal("Reported must be recognisable")
	}
}

func TestEveryVerdictHasTheSameCodeInEveryCommand(t *testing.T) {
	cases := []struct {
		v    verdict.Verdict
		want int
	}{
		{verdict.OK, OK},
		{verdict.Lost, Lost},
		{verdict.Stranded, Stranded},
		{verdict.NoEvidence, NoEvidence},
		{verdict.NoCommitEvidence, NoEvidence},
		{verdict.Incomplete, Error},
		{verdict.Error, Error},
	}
	for _, c := range cases {
		t.Run(string(c.v)+" exits "+fmt.Sprint(c.want), func(t *testing.T) {
			if got := Code(ForVerdict(c.v, "")); got != c.want {
				t.Fatalf("Code(ForVerdict(%s)) = %d, want %d", c.v, got, c.want)
			}
			if got := Code(ForVerdict(c.v, "detail")); got != c.want {
				t.Fatalf("with detail: %d, want %d", got, c.want)
			}
		})
	}
	seen := map[int]bool{}
	for _, e := range Table {
		if seen[e.Code] {
			t.Fatalf("code %d twice in Table", e.Code)
		}
		seen[e.Code] = true
	}
	for _, c := range []int{OK, Error, Usage, Lost, Stranded, Refused, NoEvidence, Interrupted} {
		if !seen[c] {
			t.Errorf("code %d missing from Table", c)
		}
	}
}
