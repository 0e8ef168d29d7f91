// Package textenc says what a file's byte-order mark makes of it: a UTF-8 BOM (what
// some Windows editors and PowerShell's Out-File write) is skipped, so that the first
// line parses as the others do; a UTF-16 or UTF-32 one is an error naming the encoding,
// since every reader here reads UTF-8. It is a leaf.
package textenc

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrEncoding is the error for text in an encoding kstranded does not read.
var ErrEncoding = errors.New("not UTF-8")

var boms = []struct {
	mark []byte
	name string
}{ // UTF-32 first: its little-endian mark starts with UTF-16LE's
	{[]byte{0x00, 0x00, 0xFE, 0xFF}, "UTF-32 big-endian"},
	{[]byte{0xFF, 0xFE, 0x00, 0x00}, "UTF-32 little-endian"},
	{[]byte{0xFE, 0xFF}, "UTF-16 big-endian"},
	{[]byte{0xFF, 0xFE}, "UTF-16 little-endian"},
}

// UTF8BOM is the UTF-8 byte-order mark.
var UTF8BOM = []byte{0xEF, 0xBB, 0xBF}

// BOM looks at the first bytes of a file (at least 4 where the file has them): skip is
// how many bytes a UTF-8 BOM takes (0 without one); err, wrapping ErrEncoding, names a
// UTF-16 or UTF-32 byte-order mark.
func BOM(head []byte) (skip int, err error) {
	if bytes.HasPrefix(head, UTF8BOM) {
		return len(UTF8BOM), nil
	}
	for _, b := range boms {
		if bytes.HasPrefix(head, b.mark) {
			return 0, fmt.Errorf("%w: the file is %s (its byte-order mark says so); convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8", ErrEncoding, b.name)
		}
	}
	return 0, nil
}

// StripBOM returns data without a UTF-8 BOM, or BOM's error.
func StripBOM(data []byte) ([]byte, error) {
	skip, err := BOM(data)
	return data[skip:], err
}
