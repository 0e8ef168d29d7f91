package trace

import (
	"strings"
	"testing"
)

// topicPartAt's shortcut (the separator right after "topic [p]") finds what searching the
// whole text for the first separator finds.
func TestTopicPartAtReadsTheFirstSeparator(t *testing.T) {
	slow := func(sc *rdScanner, b, sep []byte) (string, int32, int64, bool) {
		tp, part, ok := sc.topicPart(b)
		if !ok {
			return "", 0, 0, false
		}
		j := strings.Index(string(b), string(sep))
		if j < 0 {
			return "", 0, 0, false
		}
		off, ok := parseInt(b[j+len(sep):])
		return tp, part, off, ok
	}
	sc := newRdScanner()
	for _, c := range []struct{ b, sep string }{
		{"stranded [0] at offset 81 (leader epoch 0)", " at offset "},
		{"  stranded [0] at offset 81", " at offset "},
		{"a at offset 5 [0] at offset 81", " at offset "},
		{"x [0]  x 7", "  x "},
		{"  x [0]  x 7", "  x "},
		{"x [0] [1] 9", " [1] "},
		{"t [12]x at offset 3", " at offset "},
		{"t [12] at offset ", " at offset "},
		{"t [] at offset 3", " at offset "},
		{"t [4 at offset 3", " at offset "},
	} {
		f := newFinder(c.sep)
		at, ap, ao, aok := sc.topicPartAt([]byte(c.b), &f)
		bt, bp, bo, bok := slow(sc, []byte(c.b), []byte(c.sep))
		if at != bt || ap != bp || ao != bo || aok != bok {
			t.Errorf("%q %q: %q %d %d %v, want %q %d %d %v", c.b, c.sep, at, ap, ao, aok, bt, bp, bo, bok)
		}
	}
}
