package render

import (
	"encoding/xml"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Safe returns s fit for a terminal: every control character (C0 but space, DEL, C1 and
// so ESC, BEL, CSI, OSC), every invalid UTF-8 byte and every bidirectional override is
// written visibly as an escape (\x1b, \n, \t, \x9b, \u202e), so that a string from
// outside (a consumer's client.id, a topic or group name, a file name, a line of a log)
// cannot retitle the terminal, move its cursor, hide text or break a table row. A
// backslash stays one: the escapes are for reading, not for parsing back. Safe is for
// tables and prose; JSON escapes by itself, and SVG/XML take XML.
func Safe(s string) string {
	if isSafe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Safef is fmt.Sprintf with every string, error and Stringer argument made Safe. Styled
// text (Styles) belongs in the format or around the result, never in an argument: its
// colour codes would be escaped too.
func Safef(format string, a ...any) string {
	for i, v := range a {
		switch x := v.(type) {
		case string:
			a[i] = Safe(x)
		case error:
			a[i] = Safe(x.Error())
		case fmt.Stringer:
			a[i] = Safe(x.String())
		default:
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.String { // named string types
				a[i] = Safe(rv.String())
			}
		}
	}
	return fmt.Sprintf(format, a...)
}

func isSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s)
		}
	}
	return true
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || isBidi(r)
}

// isBidi: the embedding, override and isolate controls that reorder what a terminal
// shows (U+202A-U+202E, U+2066-U+2069).
func isBidi(r rune) bool { return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) }

// XML returns s escaped for XML text or an attribute value, written as Safe writes it
// first: XML 1.0 cannot hold most C0 controls (ESC among them) at all, so an SVG with
// such a name in it stays a valid document and shows the name as a terminal would.
func XML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(Safe(s)))
	return b.String()
}
