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
		if i := rng.IntN(len(b) + 1); f.from(b, i) != indexFrom(b, sep, i) {
			t.Fatalf("finder(%q).from(%q, %d) = %d, want %d", sep, b, i, f.from(b, i), indexFrom(b, sep, i))
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

// indexFrom is bytes.Index(b[from:], sep) as an index of b (-1: none): finder.from's
// reference.
func indexFrom(b, sep []byte, from int) int {
	if i := bytes.Index(b[from:], sep); i >= 0 {
		return from + i
	}
	return -1
}

// The producer check is cached per client name: lines of a producer and of a consumer,
// one after the other, are each read as their own client's.
func TestProducerLinesAreSkippedBetweenConsumerLines(t *testing.T) {
	sc := newRdScanner()
	for i := range 6 {
		client := "app#consumer-1"
		if i%2 == 1 {
			client = "app#producer-2"
		}
		l := []byte("%7|1796225597.010|FETCH|" + client + "| [thrd:b]: b: Fetch topic stranded [0] at offset " + string(rune('1'+i)) + " (v2)")
		var r rdRec
		ok, err := sc.scan(l, &r)
		if err != nil || ok != (i%2 == 0) {
			t.Errorf("line %d of %s: kept %v (%v), want %v", i, client, ok, err, i%2 == 0)
		}
	}
}
