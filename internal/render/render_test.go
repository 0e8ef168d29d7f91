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

// A narrow terminal hides the optional columns before it narrows the others, and a
// name too long for the room folds onto more lines of its column: nothing an operator
// needs is cut with "…" (at 80 columns inspect showed "TOP…  PAR…  COM…" and
// "stranded-cdbb…").
func TestNarrowGridHidesOptionalColumnsAndFoldsLongNames(t *testing.T) {
	topic := "stranded-cdbb04e9d516-orders-payments-eu-west-1-billing-reconciliation"
	g := Grid{
		Header:   []string{"TOPIC", "PARTITION", "COMMITTED", "HIGH-WATERMARK", "OWNER", "LOST", "VERDICT"},
		Rows:     [][]string{{topic, "0", "202", "202", "consumer-1-abc", "118", "LOST"}},
		Align:    []Align{Left, Right, Right, Right, Left, Right, Left},
		Optional: []int{4, 3}, // OWNER, HIGH-WATERMARK
	}
	t.Setenv("COLUMNS", "60")
	var b bytes.Buffer
	if err := WriteGrid(&b, g, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var folded strings.Builder
	for _, l := range lines {
		if w := cellWidth(l); w > 60 {
			t.Errorf("line wider than 60 (%d): %q", w, l)
		}
		if strings.HasPrefix(l, "stranded") || (folded.Len() > 0 && !strings.HasPrefix(l, "(") && len(l) > 0 && l[0] != ' ') {
			folded.WriteString(strings.Fields(l)[0])
		}
	}
	if strings.Contains(out, "…") {
		t.Errorf("something is cut with …:\n%s", out)
	}
	if folded.String() != topic {
		t.Errorf("the topic's lines join to %q, want %q:\n%s", folded.String(), topic, out)
	}
	for _, h := range []string{"PARTITION", "COMMITTED", "LOST", "VERDICT", "(HIGH-WATERMARK, OWNER hidden"} {
		if !strings.Contains(out, h) {
			t.Errorf("no %q:\n%s", h, out)
		}
	}
}

func TestProseLinesWrapToTheWidthKeepingTheirIndent(t *testing.T) {
	t.Setenv("COLUMNS", "30")
	var b bytes.Buffer
	in := "  ignored msg=processing: 83 lines, offsets 0-201 (not --delivered-when msg=processed)\nshort\n"
	if _, err := Prose(&b).Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	want := "  ignored msg=processing: 83\n    lines, offsets 0-201 (not\n    --delivered-when\n    msg=processed)\nshort\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
