package trace

import (
	"bytes"
	"encoding/binary"
)

// Byte-level readers of the librdkafka log's text: numbers, "topic [partition]", times;
// no allocation but for a new topic name.

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// topicPart reads "topic [p]" at the start of b.
func (sc *rdScanner) topicPart(b []byte) (string, int32, bool) {
	t, part, _, ok := sc.topicPartEnd(b)
	return t, part, ok
}

// topicPartEnd is topicPart, also returning where "topic [p" ends in b when b starts with
// the topic and the topic has no space (else -1).
func (sc *rdScanner) topicPartEnd(b []byte) (string, int32, int, bool) {
	lead := 0
	for lead < len(b) && b[lead] == ' ' {
		lead++
	}
	// the first " [": a byte loop, topics are short (bytes.Index costs more on them)
	j, spaced := -1, false
	for i := lead; i+1 < len(b); i++ {
		if b[i] == ' ' {
			if b[i+1] == '[' {
				j = i
				break
			}
			spaced = true
		}
	}
	if j <= lead {
		return "", 0, -1, false
	}
	v, ok := parseInt(b[j+2:])
	if !ok || v < 0 || v > 1<<31-1 {
		return "", 0, -1, false
	}
	end := -1
	if !spaced && lead == 0 {
		end = j + 2
		for end < len(b) && b[end] >= '0' && b[end] <= '9' {
			end++
		}
	}
	return sc.intern(b[lead:j]), int32(v), end, true
}

// topicPartAt reads "topic [p]<sep>N".
func (sc *rdScanner) topicPartAt(b []byte, f *finder) (string, int32, int64, bool) {
	sep := f.s
	t, part, end, ok := sc.topicPartEnd(b)
	if !ok {
		return "", 0, 0, false
	}
	// sep (" at offset ") right after "topic [p]" is its first occurrence in b when b
	// starts with a topic without spaces: an earlier one would have to start at a space
	// before the "]", and the only one is the space of " [" (sep does not go on with "[")
	j := -1
	if end >= 0 && end < len(b) && b[end] == ']' && len(sep) > 1 && sep[0] == ' ' && sep[1] != '[' && bytes.HasPrefix(b[end+1:], sep) {
		j = end + 1
	} else {
		j = f.in(b)
	}
	if j < 0 {
		return "", 0, 0, false
	}
	off, ok := parseInt(b[j+len(sep):])
	return t, part, off, ok
}

func (sc *rdScanner) intern(b []byte) string {
	// a log names the same topic line after line: the last name, without hashing
	if string(b) == sc.lastName && sc.lastName != "" {
		return sc.lastName
	}
	s := sc.internMap(b)
	sc.lastName = s
	return s
}

func (sc *rdScanner) internMap(b []byte) string {
	if s, ok := sc.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(sc.names) < 100000 {
		sc.names[s] = s
	}
	return s
}

// parseInt reads a non-negative decimal at the start of b.
func parseInt(b []byte) (int64, bool) {
	var v int64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' && n < 18 {
		v = v*10 + int64(b[n]-'0')
		n++
	}
	return v, n > 0
}

// parseEpochNano reads "1796225597.721" (seconds.milliseconds since the epoch) as Unix
// nanoseconds, without a time.Time (the time.Unix reading it replaced is kept as its
// reference in epoch_test.go).
func parseEpochNano(b []byte) (int64, bool) {
	dot := 0 // a byte loop: the field is short
	for dot < len(b) && b[dot] != '.' {
		dot++
	}
	sec, ok := parseInt(b[:dot])
	if !ok || dot > 12 {
		return 0, false
	}
	var ns int64
	if dot < len(b) {
		scale := int64(1e9)
		for _, c := range b[dot+1:] {
			if c < '0' || c > '9' || scale == 1 {
				break
			}
			scale /= 10
			ns += int64(c-'0') * scale
		}
	}
	return sec*1e9 + ns, true
}

// epochFixed reads the time as librdkafka writes it, "1796225597.721|" (ten digits, a dot,
// three digits and the field's bar) at the start of b, as parseEpochNano would read the
// field; ok is false for any other layout (the caller then looks for the bar).
func epochFixed(b []byte) (int64, bool) {
	if len(b) < 15 || b[10] != '.' || b[14] != '|' {
		return 0, false
	}
	hi, ok := eightDigits(binary.LittleEndian.Uint64(b))
	d8, d9, m0, m1, m2 := b[8]-'0', b[9]-'0', b[11]-'0', b[12]-'0', b[13]-'0'
	if !ok || d8 > 9 || d9 > 9 || m0 > 9 || m1 > 9 || m2 > 9 {
		return 0, false
	}
	sec := int64(hi)*100 + int64(d8)*10 + int64(d9)
	ms := int64(m0)*100 + int64(m1)*10 + int64(m2)
	return sec*1e9 + ms*1e6, true
}

// areEightDigits reports whether the eight bytes of v are ASCII digits: each high nibble 3,
// and none past 9 (adding 6 keeps the nibble 3).
func areEightDigits(v uint64) bool {
	const zeros, high = 0x3030303030303030, 0xF0F0F0F0F0F0F0F0
	return v&high == zeros && (v+0x0606060606060606)&high == zeros
}

// eightDigits reads eight ASCII digits loaded little-endian (the first digit in the low
// byte, the most significant) as their value, in a few multiplications (the SWAR reading
// of D. Lemire's fast_float); ok is false when a byte is not a digit.
func eightDigits(v uint64) (uint64, bool) {
	if !areEightDigits(v) {
		return 0, false
	}
	v -= 0x3030303030303030
	v = v*10 + v>>8 // each pair of digits in its even byte
	v = ((v&0x000000FF000000FF)*(100+1000000<<32) + (v>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return v, true
}
