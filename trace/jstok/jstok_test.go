package jstok

import (
	"strings"
	"testing"
)

// StringEnd's byte loop over the first bytes and its IndexByte search after them find
// the same quote as counting the backslashes before every quote.
func TestJSONStringEndFindsTheFirstUnescapedQuote(t *testing.T) {
	slow := func(b []byte, i int) int {
		for j := i + 1; j < len(b); j++ {
			if b[j] != '"' {
				continue
			}
			n := 0
			for m := j - 1; m > i && b[m] == '\\'; m-- {
				n++
			}
			if n%2 == 0 {
				return j
			}
		}
		return -1
	}
	for _, s := range []string{`""`, `"abc"`, `"a\"b"`, `"a\\"`, `"` + strings.Repeat("x", 23) + `\"y"`,
		`"` + strings.Repeat("x", 22) + `\\"`, `"` + strings.Repeat("x", 23) + `\\"`, `"` + strings.Repeat("\\", 24) + `"`,
		`"` + strings.Repeat("\\", 25) + `"x"`, `"` + strings.Repeat("x", 40), `"` + strings.Repeat("x", 30) + `\\\"x"`, `"\`} {
		if got, want := StringEnd([]byte(s), 0), slow([]byte(s), 0); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

func TestStringEscapesResolveAsEachLanguageWritesThem(t *testing.T) {
	for _, tc := range []struct {
		in       string
		js, json string
	}{
		{`plain`, "plain", "plain"},
		{`a\nb\tc\\d\'e\"f`, "a\nb\tc\\d'e\"f", "a\nb\tc\\d'e\"f"},
		{`\x41\u0042\u{1F600}`, "AB\U0001F600", "x41Bu{1F600}"},
		{`\uD83D\uDE00`, "\U0001F600", "\U0001F600"}, // a surrogate pair: both are UTF-16
		{`\v\0`, "\v\x00", "v0"},
		{`\u12`, "u12", "u12"}, // too short
		{`\x`, "x", "x"},
		{`end\`, `end\`, `end\`},
	} {
		if got := string(UnescapeJS(nil, []byte(tc.in))); got != tc.js {
			t.Errorf("JS %s: %q, want %q", tc.in, got, tc.js)
		}
		if got := string(UnescapeJSON(nil, []byte(tc.in))); got != tc.json {
			t.Errorf("JSON %s: %q, want %q", tc.in, got, tc.json)
		}
	}
}
