package trace

import "bytes"

// finder is bytes.Index for one separator, fitted to log lines: it looks first for the
// separator's least common byte (by the rank of bytes in log text), where bytes.Index
// looks for its first byte. The separators of the readers mostly start with a space or a
// lowercase letter, which bytes.Index finds again and again in a line before the match;
// their rarest byte (an uppercase letter, '_', 'f', 'q') is mostly found once.
type finder struct {
	s []byte
	k int // the index in s of its least common byte
}

// commonness ranks bytes by how often they occur in log text: the higher, the more often
// (0: rare). Only the speed of a finder depends on it. The order is the printable bytes'
// counts in a busy librdkafka log and two captures of the JS client (trace/testdata/jsclient,
// DefaultLogger and JSON), ascending.
var commonness = func() (r [256]uint8) {
	const order = "!$&*;<?@^`~+XZzYWJQKx>\\w=VBjGIyNbRAqUMP_LDSO%{}HCg#TE()-v3F/5|8'[]6kl4ui9hpfn,m.oc7sd\"2r:1at0e "
	for i := range len(order) {
		r[order[i]] = uint8(i + 1)
	}
	return r
}()

func newFinder(s string) finder {
	k := 0
	for i := 1; i < len(s); i++ {
		if commonness[s[i]] < commonness[s[k]] {
			k = i
		}
	}
	return finder{s: []byte(s), k: k}
}

// in is bytes.Index(b, f.s): the index of the first occurrence of f.s in b, -1 if none.
func (f *finder) in(b []byte) int {
	n, k := len(f.s), f.k
	if n == 0 {
		return 0
	}
	if len(b) < n {
		return -1
	}
	c := f.s[k]
	// the candidate starts are 0..len(b)-n: their rare byte is at k..len(b)-n+k
	end := len(b) - n + k + 1
	for i := k; i < end; {
		j := bytes.IndexByte(b[i:end], c)
		if j < 0 {
			return -1
		}
		i += j
		if s := i - k; string(b[s:s+n]) == string(f.s) {
			return s
		}
		i++
	}
	return -1
}

// from is f.in(b[i:]) as an index of b (-1: none).
func (f *finder) from(b []byte, i int) int {
	if j := f.in(b[i:]); j >= 0 {
		return i + j
	}
	return -1
}

// contains reports whether b holds f.s. Many separators end a message ("for commit"):
// the end is looked at first.
func (f *finder) contains(b []byte) bool { return bytes.HasSuffix(b, f.s) || f.in(b) >= 0 }
