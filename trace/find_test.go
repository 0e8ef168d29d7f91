package trace

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// A finder finds what bytes.Index finds, on random text over a small alphabet (many
// partial matches) and on the separators of the readers.
func TestFinderIsBytesIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab _Fof"
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for range 200000 {
		sep := word(1 + rng.IntN(4))
		b := word(rng.IntN(40))
		f := newFinder(string(sep))
		if got, want := f.in(b), bytes.Index(b, sep); got != want {
			t.Fatalf("finder(%q).in(%q) = %d, bytes.Index %d", sep, b, got, want)
		}
		if i := rng.IntN(len(b) + 1); f.from(b, i) != index(b, sep, i) {
			t.Fatalf("finder(%q).from(%q, %d) = %d, index %d", sep, b, i, f.from(b, i), index(b, sep, i))
		}
	}
	line := []byte("127.0.0.1:9092/0: Enqueue 10 message(s) (1000 bytes, 10 ops) on stranded [1] fetch queue (qlen 0, v2, last_offset 9, 0 ctrl msgs)")
	for _, sep := range []string{" on ", "last_offset ", " ctrl msgs", "Enqueue ", "nothing", ""} {
		f := newFinder(sep)
		if got, want := f.in(line), bytes.Index(line, []byte(sep)); got != want {
			t.Errorf("finder(%q) = %d, bytes.Index %d", sep, got, want)
		}
	}
	if f := newFinder("last_offset "); f.s[f.k] != '_' {
		t.Errorf("the rarest byte of %q is %q, want '_'", f.s, f.s[f.k])
	}
}
