package exitcode

import (
	"errors"
	"fmt"
	"testing"
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
