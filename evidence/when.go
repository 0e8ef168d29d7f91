package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// WhenFlag is the flag that sets a When, named by the reasons that ask for one.
const WhenFlag = "--delivered-when"

// When picks which application log lines are deliveries (--delivered-when). An
// application that logs a record more than once ("processing" when the handler starts,
// "processed" when it is done) or logs offsets in lines that are no delivery at all (a
// heartbeat with the lag) names the line that means "delivered"; the other lines that
// carry a partition and an offset are ignored, and counted as ignored under their kind.
//
// Grammar, one of:
//
//	FIELD=VALUE    a JSON line whose FIELD is VALUE exactly (a string, or a number or
//	               boolean written as VALUE): msg=processed, level=30, record.kind=done
//	FIELD~REGEXP   a JSON line whose FIELD (as text) matches REGEXP: 'msg~^processed'
//	~REGEXP        a line (JSON or not) whose whole text matches REGEXP: '~handled .* ok$'
//
// FIELD is a key of the line's top-level object, or a dotted path of keys (a.b.c; a key
// that itself holds dots is found first); a one-key FIELD absent at the top level is
// looked up in the object that carries the delivery (under msg, message, record or
// kafka). FIELD=VALUE and FIELD~REGEXP never match a line that is not a JSON object.
//
// A When applies to application log lines: JSON lines and lines read through a Pattern
// (a line must match both). kstranded traces, trace parse output and text offset lines
// name deliveries and nothing else: a When does not filter them.
type When struct {
	expr  string
	path  []string       // nil: the whole line (~REGEXP)
	key   string         // the FIELD as written
	value string         // for FIELD=VALUE
	re    *regexp.Regexp // for ~
}

var fieldPath = regexp.MustCompile(`^[A-Za-z_@$][A-Za-z0-9_@$.-]*$`)

// ParseWhen reads a --delivered-when value; its error names the flag.
func ParseWhen(expr string) (*When, error) {
	i := strings.IndexAny(expr, "=~")
	if i < 0 {
		return nil, fmt.Errorf("%s %s: want FIELD=VALUE, FIELD~REGEXP or ~REGEXP (e.g. %s msg=processed)", WhenFlag, quoteShort(expr), WhenFlag)
	}
	field, op, rest := expr[:i], expr[i], expr[i+1:]
	w := &When{expr: expr, key: field}
	if field != "" {
		if !fieldPath.MatchString(field) || strings.HasSuffix(field, ".") || strings.Contains(field, "..") {
			return nil, fmt.Errorf("%s %s: %q is not a field name (letters, digits, _ - @ $, dotted for a nested field)", WhenFlag, quoteShort(expr), field)
		}
		w.path = strings.Split(field, ".")
	}
	switch op {
	case '=':
		if field == "" {
			return nil, fmt.Errorf("%s %s: FIELD=VALUE needs a field (or ~REGEXP for the whole line)", WhenFlag, quoteShort(expr))
		}
		w.value = rest
	case '~':
		if rest == "" {
			return nil, fmt.Errorf("%s %s: empty regular expression", WhenFlag, quoteShort(expr))
		}
		re, err := regexp.Compile(rest)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", WhenFlag, quoteShort(expr), err)
		}
		w.re = re
	}
	return w, nil
}

// String is the expression as given.
func (w *When) String() string { return w.expr }

// NeedsJSON reports whether the When reads a field (FIELD=VALUE, FIELD~REGEXP), so only
// a JSON object line can match it.
func (w *When) NeedsJSON() bool { return w.path != nil }

// MatchLine reports whether one line matches, decoding it as JSON when the When names a
// field (for readers that do not decode lines themselves); the object that carries the
// delivery is found as the JSON lines reader finds it.
func (w *When) MatchLine(line []byte) bool {
	if w.path == nil {
		return w.re.Match(line)
	}
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	var top map[string]any
	if d.Decode(&top) != nil {
		return false
	}
	var nested map[string]any
	if !hasDelivery(top) {
		nested = nestedDelivery(top)
	}
	return w.Match(line, top, nested)
}

// Match reports whether a line matches: line is its text, top its decoded JSON object
// (nil for a line that is not one), nested the object under top that carries the
// delivery (nil when it is top itself). Numbers in top must be json.Number (a decoder
// with UseNumber) for FIELD=VALUE to match them exactly.
func (w *When) Match(line []byte, top, nested map[string]any) bool {
	if w.path == nil {
		return w.re.Match(line)
	}
	if top == nil {
		return false
	}
	v, ok := lookup(top, w.key, w.path)
	if !ok && len(w.path) == 1 && nested != nil {
		v, ok = nested[w.key]
	}
	if !ok {
		return false
	}
	s, ok := scalarText(v)
	if !ok {
		return false
	}
	if w.re != nil {
		return w.re.MatchString(s)
	}
	return s == w.value
}

// lookup finds key (a dotted path) in m: a key holding the dots itself first, then the
// path down nested objects.
func lookup(m map[string]any, key string, path []string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	if len(path) < 2 {
		return nil, false
	}
	var cur any = m
	for _, k := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// scalarText is a JSON string, number or boolean as text; objects, arrays and null
// match nothing.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64:
		return fmt.Sprint(x), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// MessageKeys are the top-level fields that hold a log line's message, the first string
// one wins: pino's and bunyan's msg, winston's message.
var MessageKeys = []string{"msg", "message"}

// MessageOf returns a JSON log line's message: the field (msg or message) and its string
// value; ok is false when the line's top level has no string message (a message that is
// an object holding the record is no message text).
func MessageOf(top map[string]any) (field, value string, ok bool) {
	for _, k := range MessageKeys {
		if s, isStr := top[k].(string); isStr {
			return k, s, true
		}
	}
	return "", "", false
}
