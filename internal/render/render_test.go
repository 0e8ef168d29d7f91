package render

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

func TestParseFormatRejectsUnknown(t *testing.T) {
	if _, err := ParseFormat("yaml"); !errors.Is(err, exitcode.ErrUsage) {
		t.Fatalf("want usage error, got %v", err)
	}
	if f, err := ParseFormat("JSON"); err != nil || f != JSON {
		t.Fatalf("got %v %v", f, err)
	}
}

func TestGridOnAPipeIsTabSeparated(t *testing.T) {
	var b bytes.Buffer
	g := Grid{Header: []string{"PARTITION", "LOST"}, Rows: [][]string{{"0", "82-199"}}, Align: []Align{Right, Left}}
	if err := WriteGrid(&b, g, false); err != nil {
		t.Fatal(err)
	}
	if b.String() != "PARTITION\tLOST\n0\t82-199\n" {
		t.Fatalf("got %q", b.String())
	}
}

func TestGridPrettyRightAlignsNumbers(t *testing.T) {
	var b bytes.Buffer
	g := Grid{Header: []string{"PARTITION", "NAME"}, Rows: [][]string{{"7", "a"}, {"12", "bb"}}, Align: []Align{Right, Left}}
	if err := WriteGrid(&b, g, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "         7 ") || !strings.Contains(out, "PARTITION") {
		t.Fatalf("7 not right-aligned under PARTITION:\n%s", out)
	}
}

func TestStylesOnAPipeHaveNoColour(t *testing.T) {
	var b bytes.Buffer
	s := NewStyles(&b)
	if got := s.Verdict("LOST"); got != "LOST" {
		t.Fatalf("colour on a non-terminal: %q", got)
	}
}
