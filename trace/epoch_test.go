package trace

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// parseEpoch, the reference of parseEpochNano, reads "1796225597.721" (seconds.milliseconds since the epoch).
func parseEpoch(b []byte) (time.Time, bool) {
	dot := bytes.IndexByte(b, '.')
	if dot < 0 {
		dot = len(b)
	}
	sec, ok := parseInt(b[:dot])
	if !ok || dot > 12 {
		return time.Time{}, false
	}
	var ns int64
	if dot < len(b) {
		frac := b[dot+1:]
		scale := int64(1e9)
		for _, c := range frac {
			if c < '0' || c > '9' || scale == 1 {
				break
			}
			scale /= 10
			ns += int64(c-'0') * scale
		}
	}
	return time.Unix(sec, ns).UTC(), true
}

// parseEpochNano is parseEpoch's UnixNano on every input: random digits, dots and other
// bytes, and the timestamps of real lines.
func TestParseEpochNanoIsParseEpoch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0123456789.9.x"
	for range 200000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		want, wok := parseEpoch(b)
		got, gok := parseEpochNano(b)
		if gok != wok || gok && got != want.UnixNano() {
			t.Fatalf("parseEpochNano(%q) = %d %v, parseEpoch %d %v", b, got, gok, want.UnixNano(), wok)
		}
	}
	for _, s := range []string{"1796225597.010", "1796225597", "1796225597.123456789123", "0.5", ""} {
		want, wok := parseEpoch([]byte(s))
		if got, gok := parseEpochNano([]byte(s)); gok != wok || gok && got != want.UnixNano() {
			t.Errorf("parseEpochNano(%q) = %d %v, parseEpoch %d %v", s, got, gok, want.UnixNano(), wok)
		}
	}
}

// epochFixed reads what parseEpochNano reads of the field before the first bar, whenever
// it says ok, and says ok on every field of librdkafka's layout: random fields of digits,
// dots, bars and the bytes either side of '0'..'9', most of them of that layout's length.
func TestEpochFixedIsParseEpochNano(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alphabet = "01234567890123456789/:.|"
	for range 400000 {
		b := []byte("1796225597.010|x")
		for range rng.IntN(3) + 1 { // one to three bytes changed
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(4) == 0 {
			b = b[:rng.IntN(len(b)+1)]
		}
		got, ok := epochFixed(b)
		bar := bytes.IndexByte(b, '|')
		layout := len(b) >= 15 && bar == 14 && b[10] == '.' && bytes.Count(b[:14], []byte(".")) == 1
		for _, c := range b[:min(len(b), 14)] {
			layout = layout && (c == '.' || c >= '0' && c <= '9')
		}
		if ok != layout {
			t.Fatalf("epochFixed(%q): ok %v, librdkafka's layout %v", b, ok, layout)
		}
		if want, wok := parseEpochNano(b[:max(bar, 0)]); ok && (!wok || got != want) {
			t.Fatalf("epochFixed(%q) = %d, parseEpochNano %d %v", b, got, want, wok)
		}
	}
	if got, ok := epochFixed([]byte("2999999999.999|")); !ok || got != 2999999999999000000 {
		t.Errorf("the largest time: %d %v", got, ok)
	}
}
