package jstok

import "bytes"

// Node's util.inspect prints an object on one line when it is short, "{ key: value, ... }",
// else one "  key: value," a line between "{" and "}"; strings in single quotes (double or
// back quotes when the text holds single quotes), long ones cut into "'...\n' +"
// continuation lines.

// Inspect reads the "key: value" fields of util.inspect's output separated by ", ": one
// line of a multi-line object (one field, a trailing ",") or the inside of a one-line
// object (all of them).
type Inspect struct {
	b         []byte
	multiline bool
	Key, Val  []byte // Val: a string's body, its escapes unresolved when Esc
	Str, Esc  bool
	Cont      bool   // a string value that goes on on the next line ("' +")
	Err       string // why the fields are unreadable
}

// NewInspect reads the fields of b; multiline says b is one line of a multi-line object.
func NewInspect(b []byte, multiline bool) Inspect { return Inspect{b: b, multiline: multiline} }

// Next reads the next field; false at the end, on an error (Err) or after a field that
// goes on (Cont).
func (t *Inspect) Next() bool {
	b := t.b
	if len(b) == 0 || t.Err != "" || t.Cont {
		return false
	}
	k := bytes.Index(b, []byte(": "))
	if k <= 0 {
		t.Err = "log object field without a value"
		return false
	}
	t.Key = b[:k]
	b = b[k+2:]
	if len(b) == 0 {
		t.Err = "log object field without a value"
		return false
	}
	t.Str, t.Esc = false, false
	if b[0] == '\'' || b[0] == '"' || b[0] == '`' {
		v, rest, esc, ok := String(b)
		if !ok {
			t.Err = "unterminated string in a log object"
			return false
		}
		t.Val, b, t.Str, t.Esc = v, rest, true, esc
	} else {
		end := ValueEnd(b)
		t.Val, b = b[:end], b[end:]
	}
	b = bytes.TrimLeft(b, " ")
	switch {
	case t.multiline && bytes.HasPrefix(b, []byte("+")) && t.Str:
		t.Cont, b = true, nil
	case len(b) > 0 && b[0] == ',':
		b = bytes.TrimLeft(b[1:], " ")
	case len(b) > 0:
		t.Err, b = "unreadable log object field", nil
	}
	t.b = b
	return true
}

// String reads a JavaScript string literal as util.inspect writes it at the start of b
// (quoted with ', " or `, backslash escapes): its body, with its escapes unresolved when
// esc, and what follows it.
func String(b []byte) (body, rest []byte, esc, ok bool) {
	q := b[0]
	end := bytes.IndexByte(b[1:], q) + 1
	if end == 0 {
		return nil, nil, false, false
	}
	if bytes.IndexByte(b[1:end], '\\') < 0 {
		return b[1:end], b[end+1:], false, true // no escape: the common case, found with IndexByte
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case q:
			return b[1:i], b[i+1:], true, true
		}
	}
	return nil, nil, false, false
}

// ValueEnd finds the end of a value that is not a string: the next ", " outside brackets
// and quotes, or the end.
func ValueEnd(b []byte) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
		case '\'', '"', '`':
			q := b[i]
			for i++; i < len(b) && b[i] != q; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case ',':
			if depth <= 0 {
				return i
			}
		}
	}
	return len(b)
}

// SimpleField reads the line "  key: value" or "  key: value," of a multi-line object
// when it is simple: the key an identifier, the value a single-quoted string without
// escapes (its body returned) or a bare value up to a byte IsInspectSpecial. ok is false
// for anything else (a continuation, another quote, an escape, more after the value, a
// CR), which Inspect reads.
func SimpleField(line []byte) (key, val []byte, isStr, ok bool) {
	if len(line) < 3 || line[0] != ' ' || line[1] != ' ' {
		return nil, nil, false, false
	}
	i := 2
	for i < len(line) && identByte[line[i]] {
		i++
	}
	if i == 2 || i+2 >= len(line) || line[i] != ':' || line[i+1] != ' ' {
		return nil, nil, false, false
	}
	key = line[2:i]
	i += 2
	isStr = line[i] == '\''
	if isStr {
		e := bytes.IndexByte(line[i+1:], '\'')
		if e < 0 {
			return nil, nil, false, false
		}
		val = line[i+1 : i+1+e]
		if bytes.IndexByte(val, '\\') >= 0 {
			return nil, nil, false, false
		}
		i += e + 2
	} else {
		j := i
		for j < len(line) && !inspectSpecial[line[j]] {
			j++
		}
		val = line[i:j]
		i = j
	}
	if i != len(line) && (i+1 != len(line) || line[i] != ',') {
		return nil, nil, false, false // more after the value: a continuation, another field, a quote
	}
	return key, val, isStr, true
}

// IsInspectSpecial reports the bytes that end a bare value, make ValueEnd look further, or
// that a line reader would strip (a CR).
func IsInspectSpecial(b byte) bool {
	switch b {
	case ',', '\'', '"', '`', '{', '}', '[', ']', '(', ')', '\r':
		return true
	}
	return false
}

// identByte and inspectSpecial: the bytes of an identifier, and IsInspectSpecial, as
// tables for the loops over every byte of a field.
var identByte, inspectSpecial [256]bool

func init() {
	for b := 0; b < 256; b++ {
		c := byte(b)
		identByte[b] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
		inspectSpecial[b] = IsInspectSpecial(c)
	}
}
