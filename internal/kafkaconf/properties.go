package kafkaconf

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxPropertiesFile bounds a --config file: a properties file is a few kilobytes; a
// bigger one is the wrong file.
const MaxPropertiesFile = 1 << 20

// ReadProperties reads a properties file of librdkafka (or Java client) properties with
// the grammar of java.util.Properties.load:
//
//   - natural lines end at \n, \r or \r\n; leading white space (space, tab, form feed)
//     is skipped; a blank line, or one whose first other character is '#' or '!', is
//     ignored;
//   - a line ending in an odd number of backslashes goes on on the next line, whose
//     leading white space is skipped (a multi-line sasl.jaas.config);
//   - the key runs to the first unescaped '=', ':' or white space; white space, then one
//     '=' or ':', then white space, separate it from the value (key=value, key: value,
//     key value);
//   - in key and value, \t \n \r \f and \uXXXX are the characters they name and a
//     backslash before any other character is that character (\\, \=, \:, \ , \#).
//
// The file is read as UTF-8 (Properties.load(Reader)). Three departures, for safety: a
// key with no separator and no value (a lone word, maybe a password pasted on its own
// line) and an empty key are errors, as is a file ending in a continuation (cut short);
// a file over MaxPropertiesFile is an error. Errors name the file and line, never the
// line's text: it may hold a secret. A later key wins over an earlier one.
func ReadProperties(r io.Reader, name string) (map[string]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPropertiesFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxPropertiesFile {
		return nil, fmt.Errorf("%s: over %d KiB: not a properties file", name, MaxPropertiesFile>>10)
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	props := map[string]string{}
	line := 0
	for len(text) > 0 {
		var logical strings.Builder
		start := line + 1
		first, continued := true, false
		for {
			var nat string
			nat, text = naturalLine(text)
			line++
			nat = strings.TrimLeft(nat, " \t\f")
			if first {
				if nat == "" || nat[0] == '#' || nat[0] == '!' {
					break // blank or comment: never continued
				}
			}
			first = false
			trailing := len(nat) - len(strings.TrimRight(nat, `\`))
			continued = trailing%2 == 1
			if continued {
				nat = nat[:len(nat)-1]
			}
			logical.WriteString(nat)
			if !continued || len(text) == 0 {
				break
			}
		}
		if continued {
			return nil, fmt.Errorf("%s:%d: the last line ends in a continuation backslash", name, start)
		}
		if logical.Len() == 0 {
			continue
		}
		k, v, err := propertyLine(logical.String())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, start, err)
		}
		props[k] = v
	}
	return props, nil
}

// naturalLine splits off the first line of s, without its terminator (\n, \r or \r\n).
func naturalLine(s string) (line, rest string) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, ""
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], s[i+2:]
	}
	return s[:i], s[i+1:]
}

var errNoSeparator = errors.New("want key=value (or key: value, key value)")

// propertyLine splits a logical line (leading white space gone, continuations joined)
// into its unescaped key and value.
func propertyLine(s string) (key, value string, err error) {
	end := len(s) // the key's end
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++ // the escaped character belongs to the key
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	rawKey, rest := s[:end], s[end:]
	if rawKey == "" {
		return "", "", errors.New("a property without a key")
	}
	hasSep := rest != ""
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	if !hasSep {
		return "", "", errNoSeparator
	}
	if key, err = unescape(rawKey); err != nil {
		return "", "", fmt.Errorf("key: %w", err)
	}
	if value, err = unescape(rest); err != nil {
		return "", "", fmt.Errorf("value of %s: %w", key, err)
	}
	return key, value, nil
}

// unescape decodes java.util.Properties' escapes.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				return "", errors.New(`malformed \uXXXX escape (want 4 hex digits)`)
			}
			i += 4
			// Java writes a character past U+FFFF as a surrogate pair of escapes
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if r2, ok := hex4(s[i+3:]); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// hex4 reads 4 hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, h := range s[:4] {
		var d rune
		switch {
		case h >= '0' && h <= '9':
			d = h - '0'
		case h >= 'a' && h <= 'f':
			d = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			d = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | d
	}
	return r, true
}
