package render

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"
)

func TestSafeWritesControlCharactersVisibly(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"consumer-1", "consumer-1"},
		{"été ✓ 😀", "été ✓ 😀"},
		{"evil\x1b]0;pwned\x07", `evil\x1b]0;pwned\x07`},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m \u009d0;x\u009c", `c1 \x9b31m \x9d0;x\x9c`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"txt.\u202egpj", `txt.\u202egpj`},
		{`back\slash`, `back\slash`},
	} {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Safe(tc.in); strings.ContainsFunc(got, unsafeRune) {
			t.Errorf("Safe(%q) = %q holds a control character", tc.in, got)
		}
	}
	if got := Safef("%s: %v (%d)", "g\x1b]0;x\x07", errors.New("e\x1b[2J"), 3); got != `g\x1b]0;x\x07: e\x1b[2J (3)` {
		t.Errorf("Safef = %q", got)
	}
}

func TestXMLKeepsADocumentValid(t *testing.T) {
	for _, in := range []string{"topic\x1b]0;pwned\x07", `a<b>&"c'`, "x\x00y\ufffe", "]]>"} {
		doc := "<svg><text>" + XML(in) + "</text><g title=\"" + XML(in) + "\"/></svg>"
		d := xml.NewDecoder(strings.NewReader(doc))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("XML(%q): %v in %s", in, err, doc)
				}
				break
			}
		}
	}
}
