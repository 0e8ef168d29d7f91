package trace

import (
	"bytes"
	"regexp/syntax"
	"unicode/utf8"
)

// fastPattern matches the common shape of a --pattern without the regexp engine: a
// concatenation of literals and capture groups of one character class repeated (x+), each
// run followed by something that cannot continue it, optionally anchored with ^ and $. On
// the JS client's logs the --pattern runs on every delivery line, and regexp's one-pass
// matcher costs about a quarter of the scan there. Such a pattern has at most one match at
// each start (a run ends exactly where its class stops, since what follows cannot be in the
// class), so trying the starts left to right finds regexp's leftmost match with the same
// submatches; compilePattern returns nil for anything else, which regexp then reads. The
// fuzz target FuzzFastPattern compares the two.
type fastPattern struct {
	anchored bool // ^: the match starts at 0
	end      bool // $: the match ends at the end of the line
	elems    []fpElem
	ncap     int    // capture groups, group 0 included
	first    finder // an unanchored pattern's first literal, where its matches start
}

type fpElem struct {
	lit []byte // a literal, or
	cls *[256]bool
	cap int // the capture group of a class run (0: none)
}

// compilePattern returns the fast matcher of expr, or nil when expr is of another shape.
func compilePattern(expr string, numSubexp int) *fastPattern {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	fp := &fastPattern{ncap: numSubexp + 1}
	for i, s := range subs {
		switch s.Op {
		case syntax.OpBeginText:
			if i != 0 {
				return nil
			}
			fp.anchored = true
		case syntax.OpEndText:
			if i != len(subs)-1 {
				return nil
			}
			fp.end = true
		case syntax.OpLiteral:
			if s.Flags&syntax.FoldCase != 0 {
				return nil
			}
			var b []byte
			for _, r := range s.Rune {
				b = utf8.AppendRune(b, r)
			}
			fp.elems = append(fp.elems, fpElem{lit: b})
		case syntax.OpCapture, syntax.OpPlus:
			c := s
			capIdx := 0
			if c.Op == syntax.OpCapture {
				capIdx = c.Cap
				if len(c.Sub) != 1 {
					return nil
				}
				c = c.Sub[0]
			}
			if c.Op != syntax.OpPlus || c.Flags&syntax.NonGreedy != 0 || len(c.Sub) != 1 {
				return nil
			}
			cls := byteClass(c.Sub[0])
			if cls == nil {
				return nil
			}
			fp.elems = append(fp.elems, fpElem{cls: cls, cap: capIdx})
		default:
			return nil
		}
	}
	// every run must stop where its class stops: the next element cannot start with a
	// byte of the class, and a run is not followed by a run
	for i, e := range fp.elems {
		if e.cls == nil {
			if len(e.lit) == 0 {
				return nil
			}
			continue
		}
		if i+1 < len(fp.elems) {
			n := fp.elems[i+1]
			if n.cls != nil || e.cls[n.lit[0]] {
				return nil
			}
		}
	}
	if len(fp.elems) == 0 || !fp.anchored && fp.elems[0].cls != nil {
		return nil // an unanchored pattern must start with a literal to find its starts
	}
	if !fp.anchored {
		fp.first = newFinder(string(fp.elems[0].lit))
	}
	return fp
}

// byteClass returns the bytes of a character class when matching it byte by byte is the
// same as matching it rune by rune: its ASCII members, and either every rune from U+0080
// on (all bytes >= 0x80, invalid UTF-8 included, which regexp reads as U+FFFD) or none.
func byteClass(re *syntax.Regexp) *[256]bool {
	var rs []rune
	switch re.Op {
	case syntax.OpCharClass:
		rs = re.Rune
	case syntax.OpLiteral:
		if len(re.Rune) != 1 || re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		rs = []rune{re.Rune[0], re.Rune[0]}
	default:
		return nil
	}
	var cls [256]bool
	high := 0 // 0: no rune >= 0x80; 1: all of them
	for i := 0; i+1 < len(rs); i += 2 {
		lo, hi := rs[i], rs[i+1]
		for r := lo; r <= hi && r < 0x80; r++ {
			cls[r] = true
		}
		if hi >= 0x80 {
			if lo > 0x80 || hi != utf8.MaxRune || high == 1 {
				return nil
			}
			high = 1
		}
	}
	if high == 1 {
		for b := 0x80; b < 256; b++ {
			cls[b] = true
		}
	}
	return &cls
}

// match returns regexp's FindSubmatchIndex of line, in m (reused).
func (fp *fastPattern) match(line []byte, m []int) []int {
	if fp.anchored {
		return fp.matchAt(line, 0, m)
	}
	for from := 0; from <= len(line); {
		j := fp.first.in(line[from:])
		if j < 0 {
			return nil
		}
		if r := fp.matchAt(line, from+j, m); r != nil {
			return r
		}
		from += j + 1
	}
	return nil
}

func (fp *fastPattern) matchAt(line []byte, start int, m []int) []int {
	m = m[:0]
	for i := 0; i < 2*fp.ncap; i++ {
		m = append(m, -1)
	}
	p := start
	for _, e := range fp.elems {
		if e.cls == nil {
			if !bytes.HasPrefix(line[p:], e.lit) {
				return nil
			}
			p += len(e.lit)
			continue
		}
		q := p
		for q < len(line) && e.cls[line[q]] {
			q++
		}
		if q == p {
			return nil
		}
		if e.cap > 0 {
			m[2*e.cap], m[2*e.cap+1] = p, q
		}
		p = q
	}
	if fp.end && p != len(line) {
		return nil
	}
	m[0], m[1] = start, p
	return m
}
