package kafkaconf

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestExplainClosedReplacesFranzGosGuessOnlyWhenTheBrokerAnsweredBefore(t *testing.T) {
	eof := &kgo.ErrFirstReadEOF{}
	wrapped := fmt.Errorf("fetching t/0: %w", eof)
	cases := []struct {
		name     string
		err      error
		answered int64
		keeps    bool // franz-go's text stands
	}{
		{"a first connection closed before any answer keeps franz-go's guess", wrapped, 0, true},
		{"a broker that answered earlier in the run is said to have stopped", wrapped, 3, false},
		{"another error is left alone", errors.New("connection refused"), 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ExplainClosed(c.err, c.answered)
			if c.keeps {
				if got.Error() != c.err.Error() {
					t.Fatalf("%q rewritten to %q", c.err, got)
				}
				return
			}
			msg := got.Error()
			if strings.Contains(msg, eof.Error()) || !strings.HasPrefix(msg, "fetching t/0: ") || !strings.Contains(msg, "after answering 3 requests earlier in this run") {
				t.Fatalf("%q", msg)
			}
			if !errors.As(got, &eof) {
				t.Fatal("the rewritten error must still unwrap to kgo.ErrFirstReadEOF")
			}
		})
	}
}
