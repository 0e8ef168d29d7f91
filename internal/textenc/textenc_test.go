package textenc

import (
	"errors"
	"strings"
	"testing"
)

func TestBOM(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"no mark", "0 1 2\n", "0 1 2\n", ""},
		{"UTF-8", "\xEF\xBB\xBF0 1 2\n", "0 1 2\n", ""},
		{"UTF-8 alone", "\xEF\xBB\xBF", "", ""},
		{"a mark past the start stays", "0 1 2\xEF\xBB\xBF", "0 1 2\xEF\xBB\xBF", ""},
		{"UTF-16LE", "\xFF\xFE0\x00", "", "UTF-16 little-endian"},
		{"UTF-16BE", "\xFE\xFF\x000", "", "UTF-16 big-endian"},
		{"UTF-32LE", "\xFF\xFE\x00\x000\x00\x00\x00", "", "UTF-32 little-endian"},
		{"UTF-32BE", "\x00\x00\xFE\xFF", "", "UTF-32 big-endian"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StripBOM([]byte(tc.in))
			if tc.err != "" {
				if !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
