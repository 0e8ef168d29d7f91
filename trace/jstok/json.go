package jstok

import "bytes"

// JSON reads the top-level fields of one JSON object, in order: whitespace between
// tokens, escapes, nested values (skipped whole).
type JSON struct {
	b        []byte
	i        int
	sep      bool   // after a value: a "," or the "}" comes next
	Key, Val []byte // as written: a string's body with its escapes unresolved
	Str      bool
	Err      string // why the object is unreadable
}

// NewJSON reads the object b, which starts with its "{".
func NewJSON(b []byte) JSON { return JSON{b: b, i: 1} }

// Next reads the next field; false at the object's "}" or on an error (Err).
func (t *JSON) Next() bool {
	b, i := t.b, t.i
	if t.Err != "" || i < 0 {
		return false
	}
	if t.sep {
		i = SkipWS(b, i)
		if i >= len(b) {
			return t.fail("truncated JSON object")
		}
		if b[i] == '}' {
			t.i = -1
			return false
		}
		if b[i] != ',' {
			return t.fail("JSON object: no , between fields")
		}
		i++
	}
	i = SkipWS(b, i)
	if i >= len(b) {
		return t.fail("truncated JSON object")
	}
	if b[i] == '}' {
		t.i = -1
		return false
	}
	if b[i] != '"' {
		return t.fail("JSON object: a key is not a string")
	}
	ke := StringEnd(b, i)
	if ke < 0 {
		return t.fail("truncated JSON object")
	}
	t.Key = b[i+1 : ke]
	i = SkipWS(b, ke+1)
	if i >= len(b) || b[i] != ':' {
		return t.fail("JSON object: no : after a key")
	}
	i = SkipWS(b, i+1)
	if i >= len(b) {
		return t.fail("truncated JSON object")
	}
	t.Str = b[i] == '"'
	if t.Str {
		ve := StringEnd(b, i)
		if ve < 0 {
			return t.fail("truncated JSON object")
		}
		t.Val, i = b[i+1:ve], ve+1
	} else {
		ve := ValueEndJSON(b, i)
		if ve < 0 {
			return t.fail("truncated JSON object")
		}
		t.Val, i = b[i:ve], ve
	}
	t.i, t.sep = i, true
	return true
}

func (t *JSON) fail(err string) bool {
	t.Err = err
	return false
}

// Compact reads the fields of the objects JSON loggers write (JSON.stringify's output: no
// whitespace between tokens, flat) in a line without a backslash: then every quote opens
// or closes a string, so a string ends at the next quote and no escape is looked for. It
// reads what JSON reads and says Bad for anything else (whitespace, an escape, a nested
// value, a truncated or malformed object), which JSON then reads.
type Compact struct {
	b        []byte
	i        int
	sep      bool
	Key, Val []byte
	Str      bool
	Bad      bool
}

// NewCompact reads the object b, which starts with its "{"; Bad at once when b holds a
// backslash.
func NewCompact(b []byte) Compact {
	return Compact{b: b, i: 1, Bad: bytes.IndexByte(b, '\\') >= 0}
}

// Pos is where the next field's reading starts (the end of the last field read), -1
// after the object's "}".
func (t *Compact) Pos() int { return t.i }

// Resume makes the next Next read on from i, the Pos of a field an earlier read of the
// same bytes ended at (a memo of a line's first fields: they were read there already).
func (t *Compact) Resume(i int) {
	if !t.Bad {
		t.i, t.sep = i, i > 1
	}
}

// Next reads the next field; false at the object's "}" or when the object is not compact
// (Bad).
func (t *Compact) Next() bool {
	b, i := t.b, t.i
	if t.Bad || i < 0 {
		return false
	}
	if t.sep {
		if i >= len(b) {
			return t.bad()
		}
		if b[i] == '}' {
			t.i = -1
			return false
		}
		if b[i] != ',' {
			return t.bad()
		}
		i++
	}
	if i >= len(b) || b[i] != '"' {
		return t.bad()
	}
	ke := i + 1
	for ke < len(b) && b[ke] != '"' {
		ke++
	}
	if ke+2 >= len(b) || b[ke+1] != ':' {
		return t.bad()
	}
	t.Key = b[i+1 : ke]
	i = ke + 2
	t.Str = b[i] == '"'
	if t.Str {
		ve := bytes.IndexByte(b[i+1:], '"')
		if ve < 0 {
			return t.bad()
		}
		t.Val = b[i+1 : i+1+ve]
		i += ve + 2
	} else {
		j := i
		for j < len(b) && !compactStop[b[j]] {
			j++
		}
		if j < len(b) && b[j] != ',' && b[j] != '}' {
			return t.bad() // a nested value, a quote, whitespace
		}
		if j == i {
			return t.bad()
		}
		t.Val, i = b[i:j], j
	}
	t.i, t.sep = i, true
	return true
}

func (t *Compact) bad() bool {
	t.Bad = true
	return false
}

// SkipWS returns the index of the first byte at or after i that is not a space or tab.
func SkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// StringEnd returns the index of the quote that ends the JSON string starting at b[i]: the
// first quote not escaped (preceded by an even number of backslashes); -1 when none does.
func StringEnd(b []byte, i int) int {
	// keys and most values are short: a byte loop over the first bytes (skipping the byte
	// after a backslash is the same as counting the backslashes before a quote), then
	// IndexByte for the long ones
	j := i + 1
	for n := min(len(b), j+24); j < n; j++ {
		if b[j] == '"' {
			return j
		}
		if b[j] == '\\' {
			j++
		}
	}
	// j is not an escaped byte here (the loop steps over those); the count of backslashes
	// before each quote below goes back to the opening quote
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
		j++
	}
	return -1
}

// ValueEndJSON returns the end of the non-string value starting at b[i] (a number, true,
// false, null, or a nested object or array, skipped whole); -1 when it does not end.
func ValueEndJSON(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			e := StringEnd(b, j)
			if e < 0 {
				return -1
			}
			j = e
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',':
			if depth == 0 {
				return j
			}
		}
	}
	if depth == 0 {
		return len(b)
	}
	return -1
}

// compactStop: the bytes that end a compact object's bare value (, and }) or make the
// object not compact ({ [ ] " space tab).
var compactStop [256]bool

func init() {
	for _, c := range []byte{',', '}', '{', '[', ']', '"', ' ', '\t'} {
		compactStop[c] = true
	}
}
