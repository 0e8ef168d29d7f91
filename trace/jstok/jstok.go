// Package jstok splits the log lines JavaScript loggers write into keys and values: the
// objects Node's util.inspect prints (console.log of an object, as confluent-kafka-javascript's
// DefaultLogger does) and JSON objects one a line (pino, winston, bunyan). It finds where
// each key and value starts and ends and resolves string escapes; what a key means is the
// caller's (trace's jsScanner.field, one dispatch for both shapes). It does not build
// values, descend into nested ones (they are skipped whole), or validate more than finding
// a field's end needs.
package jstok

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// StripANSI appends l without its CSI escape sequences (colours: ESC [ ... m) to dst.
func StripANSI(dst, l []byte) []byte {
	for i := 0; i < len(l); i++ {
		if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '[' {
			j := i + 2
			for j < len(l) && (l[j] >= '0' && l[j] <= '9' || l[j] == ';') {
				j++
			}
			if j < len(l) {
				i = j // the final byte of the sequence
				continue
			}
		}
		dst = append(dst, l[i])
	}
	return dst
}

// UnescapeJS appends the body of a JavaScript string literal (as util.inspect writes it)
// with its escapes resolved.
func UnescapeJS(dst, b []byte) []byte { return unescape(dst, b, true) }

// UnescapeJSON appends the body of a JSON string with its escapes resolved.
func UnescapeJSON(dst, b []byte) []byte { return unescape(dst, b, false) }

// unescape appends the body of a string literal with its escapes resolved. Both
// languages: \n, \t, \r, \b, \f, \uHHHH (a surrogate pair as one rune: both are UTF-16)
// and \c for any other c; JavaScript adds \v, \0, \xHH and \u{H...}.
func unescape(dst, b []byte, js bool) []byte {
	if bytes.IndexByte(b, '\\') < 0 {
		return append(dst, b...)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			dst = append(dst, c)
			continue
		}
		i++
		switch c := b[i]; {
		case c == 'n':
			dst = append(dst, '\n')
		case c == 't':
			dst = append(dst, '\t')
		case c == 'r':
			dst = append(dst, '\r')
		case c == 'b':
			dst = append(dst, '\b')
		case c == 'f':
			dst = append(dst, '\f')
		case js && c == 'v':
			dst = append(dst, '\v')
		case js && c == '0':
			dst = append(dst, 0)
		case js && c == 'u' && i+1 < len(b) && b[i+1] == '{':
			h := b[i+1:]
			if e := bytes.IndexByte(h, '}'); e > 0 {
				if v, err := strconv.ParseUint(string(h[1:e]), 16, 32); err == nil {
					dst = utf8.AppendRune(dst, rune(v))
					i += e + 1
					continue
				}
			}
			dst = append(dst, c)
		case c == 'u' || js && c == 'x':
			dst, i = appendHex(dst, b, i, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendHex appends the rune of the \uHHHH or \xHH escape whose letter c is at b[i] (a
// surrogate pair \uD83D\uDE00 as one rune), or c when the digits are not there, and
// returns the index of the escape's last byte.
func appendHex(dst, b []byte, i int, c byte) ([]byte, int) {
	n := 4
	if c == 'x' {
		n = 2
	}
	if i+n >= len(b) {
		return append(dst, c), i
	}
	v, err := strconv.ParseUint(string(b[i+1:i+1+n]), 16, 32)
	if err != nil {
		return append(dst, c), i
	}
	r := rune(v)
	i += n
	if c == 'u' && r >= 0xd800 && r < 0xdc00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
		if v2, err := strconv.ParseUint(string(b[i+3:i+7]), 16, 32); err == nil && v2 >= 0xdc00 && v2 < 0xe000 {
			r = (r-0xd800)<<10 + (rune(v2) - 0xdc00) + 0x10000
			i += 6
		}
	}
	return utf8.AppendRune(dst, r), i
}
