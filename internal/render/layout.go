package render

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
)

// Width is the number of columns output to w should fit: the terminal's width when w is
// a terminal, else $COLUMNS when set (as shells export it, and as tests set it), else 0,
// meaning no limit (a pipe or a file takes full values).
func Width(w io.Writer) int {
	if f, ok := unwrap(w).(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// compactBelow is the width under which a table that does not fit boxed drops its box:
// on an 80- or 100-column terminal a boxed table of a dozen columns wraps its borders
// into noise, while aligned columns without borders stay readable.
const compactBelow = 120

// fit decides how a pretty grid is drawn at width: boxed as it is, boxed with its
// headers wrapped at spaces, or compact (no box, two spaces between columns, headers
// wrapped, the widest cells shortened with "…" until the table fits). It never lets a
// border wrap: a layout whose box does not fit is not drawn boxed.
type layout struct {
	compact bool
	header  [][]string // each header's lines
	widths  []int      // each column's width
	shown   []bool     // compact: the columns drawn (nil: all)
	width   int        // the width fitted to
}

func cellWidth(s string) int { return lipgloss.Width(s) }

func plan(g Grid, width int) layout {
	n := len(g.Header)
	cells := make([]int, n) // widest cell per column
	for _, r := range g.Rows {
		for i := 0; i < n && i < len(r); i++ {
			cells[i] = max(cells[i], cellWidth(r[i]))
		}
	}
	full := make([]int, n)
	words := make([]int, n) // the longest header word, or the widest cell
	for i, h := range g.Header {
		full[i] = max(cells[i], cellWidth(h))
		for _, wd := range strings.Fields(h) {
			words[i] = max(words[i], cellWidth(wd))
		}
		words[i] = max(words[i], cells[i])
	}
	boxed := func(ws []int) int {
		t := n + 1
		for _, w := range ws {
			t += w + 2
		}
		return t
	}
	if width <= 0 || boxed(full) <= width {
		hs := make([][]string, n)
		for i, h := range g.Header {
			hs[i] = []string{h}
		}
		return layout{header: hs, widths: full}
	}
	if boxed(words) <= width && width >= compactBelow {
		hs := make([][]string, n)
		for i, h := range g.Header {
			hs[i] = wrapWords(h, words[i])
		}
		return layout{header: hs, widths: words}
	}
	return compactPlan(g, width)
}

// compactPlan lays the grid out without a box: headers wrapped at spaces and hyphens,
// cells wrapped at spaces, columns no wider than they need. When even that is too wide,
// the grid's optional columns are hidden (in the order the grid lists them) until the
// rest fit whole; then the widest columns narrow, their cells folding (a long topic name
// continues on the next line rather than losing its end), never below their header's
// longest word; only when the headers alone are too wide are they cut with "…".
func compactPlan(g Grid, width int) layout {
	n := len(g.Header)
	natural := make([]int, n) // widest header token or cell
	least := make([]int, n)   // longest header token or cell word: narrower folds a word
	header := make([]int, n)  // longest header token: narrower cuts the header
	for i, h := range g.Header {
		for _, tok := range headerTokens(h) {
			header[i] = max(header[i], cellWidth(tok))
		}
		natural[i], least[i] = header[i], header[i]
		for _, r := range g.Rows {
			if i < len(r) {
				natural[i] = max(natural[i], cellWidth(r[i]))
				for _, wd := range strings.Fields(r[i]) {
					least[i] = max(least[i], cellWidth(wd))
				}
			}
		}
	}
	shown := make([]bool, n)
	for i := range shown {
		shown[i] = true
	}
	total := func(ws []int) int {
		t, k := 0, 0
		for i, w := range ws {
			if shown[i] {
				t += w
				k++
			}
		}
		return t + 2*max(k-1, 0)
	}
	for _, i := range g.Optional {
		if total(least) <= width {
			break
		}
		if i >= 0 && i < n {
			shown[i] = false
		}
	}
	ws := append([]int(nil), natural...)
	// narrow the widest shown column: first down to its least width (cells wrap at
	// spaces), then to its header's width (long words fold), last to 4 columns
	// (headers cut); each floor is tried on every column before the next
	for _, floor := range [][]int{least, header, nil} {
		for total(ws) > width {
			widest := -1
			for i := range ws {
				f := 4
				if floor != nil {
					f = max(floor[i], 4)
				}
				if shown[i] && ws[i] > f && (widest < 0 || ws[i] > ws[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			f := 4
			if floor != nil {
				f = max(floor[widest], 4)
			}
			ws[widest] = max(f, ws[widest]-(total(ws)-width))
		}
	}
	hs := make([][]string, n)
	for i, h := range g.Header {
		hs[i] = wrapTokens(headerTokens(h), ws[i])
	}
	return layout{compact: true, header: hs, widths: ws, shown: shown, width: width}
}

// headerTokens splits a header where it may wrap: at spaces and after hyphens
// ("HIGH-WATERMARK" wraps as "HIGH-" / "WATERMARK").
func headerTokens(h string) []string {
	var out []string
	for _, wd := range strings.Fields(h) {
		for {
			i := strings.IndexByte(wd, '-')
			if i <= 0 || i == len(wd)-1 {
				break
			}
			out = append(out, wd[:i+1])
			wd = wd[i+1:]
		}
		out = append(out, wd)
	}
	return out
}

// wrapTokens joins tokens into lines of at most width columns; a token after one that
// ends in "-" joins without a space.
func wrapTokens(toks []string, width int) []string {
	var lines []string
	cur := ""
	for _, t := range toks {
		sep := " "
		if strings.HasSuffix(cur, "-") {
			sep = ""
		}
		switch {
		case cur == "":
			cur = t
		case cellWidth(cur)+len(sep)+cellWidth(t) <= width:
			cur += sep + t
		default:
			lines = append(lines, cur)
			cur = t
		}
	}
	return append(lines, cur)
}

// Wrap breaks prose at word boundaries to fit width (0: no limit); lines after the first
// start with indent.
func Wrap(s string, width int, indent string) string {
	if width <= 0 || cellWidth(s) <= width {
		return s
	}
	return wrapFrom(s, width, "", indent)
}

// wrapFrom breaks s at spaces into lines of at most width columns, the first starting
// with first and the others with indent; a word wider than the room keeps a line alone.
func wrapFrom(s string, width int, first, indent string) string {
	var b strings.Builder
	b.WriteString(first)
	line, empty := cellWidth(first), true
	for _, wd := range strings.Fields(s) {
		wl := cellWidth(wd)
		switch {
		case empty:
		case line+1+wl > width:
			b.WriteString("\n" + indent)
			line = cellWidth(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(wd)
		line += wl
		empty = false
	}
	return b.String()
}

// writeCompact prints the grid without a box: header lines (bottom-aligned), a rule,
// rows whose cells wrap at spaces within their column; a word wider than its column ends
// in "…"; hidden optional columns are named on a last line.
func writeCompact(w io.Writer, g Grid, l layout) error {
	var cols []int
	var hidden []string
	for i := range l.widths {
		if l.shown == nil || l.shown[i] {
			cols = append(cols, i)
		} else {
			hidden = append(hidden, g.Header[i])
		}
	}
	fit := func(s string, i int) string {
		if cellWidth(s) > l.widths[i] {
			s = ansi.Truncate(s, l.widths[i], "…")
		}
		gap := strings.Repeat(" ", l.widths[i]-cellWidth(s))
		if i < len(g.Align) && g.Align[i] == Right {
			return gap + s
		}
		return s + gap
	}
	var b strings.Builder
	emit := func(cells [][]string, bottom bool) {
		lines := 0
		for _, c := range cols {
			lines = max(lines, len(cells[c]))
		}
		for ln := 0; ln < lines; ln++ {
			parts := make([]string, 0, len(cols))
			for _, c := range cols {
				k := ln
				if bottom {
					k = ln - (lines - len(cells[c]))
				}
				v := ""
				if k >= 0 && k < len(cells[c]) {
					v = cells[c][k]
				}
				parts = append(parts, fit(v, c))
			}
			b.WriteString(strings.TrimRight(strings.Join(parts, "  "), " ") + "\n")
		}
	}
	emit(l.header, true)
	rule := make([]string, 0, len(cols))
	for _, c := range cols {
		rule = append(rule, strings.Repeat("─", l.widths[c]))
	}
	b.WriteString(strings.Join(rule, "  ") + "\n")
	for _, r := range g.Rows {
		cells := make([][]string, len(l.widths))
		for _, c := range cols {
			v := ""
			if c < len(r) {
				v = r[c]
			}
			cells[c] = foldWords(v, l.widths[c])
		}
		emit(cells, false)
	}
	if len(hidden) > 0 {
		b.WriteString(Wrap("("+strings.Join(hidden, ", ")+" hidden at this width; a wider terminal, a pipe or -o json shows every column)", l.width, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapWords breaks s at spaces into lines of at most width columns (a longer word keeps
// a line of its own).
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, wd := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = wd
		case cellWidth(cur)+1+cellWidth(wd) <= width:
			cur += " " + wd
		default:
			lines = append(lines, cur)
			cur = wd
		}
	}
	return append(lines, cur)
}

// Prose returns a writer that breaks each line written to w at word boundaries to fit
// Width(w), as the printers' prose (verdict lines, details, notes) must on a narrow
// terminal; a wrapped line continues indented two columns past the line's own indent.
// Where Width(w) is 0 (a pipe, a file) lines pass unchanged. A word wider than the width
// keeps a line of its own: a topic or file name is not cut. Each Write is taken as whole
// lines (the printers write a line at a time).
func Prose(w io.Writer) io.Writer {
	if p, ok := w.(proseWriter); ok {
		return p
	}
	return proseWriter{w}
}

type proseWriter struct{ w io.Writer }

// Unwrap is the stream: whether it is a terminal, and how wide, is its.
func (p proseWriter) Unwrap() io.Writer { return p.w }

func (p proseWriter) Write(b []byte) (int, error) {
	width := Width(p.w)
	if width <= 0 {
		return p.w.Write(b)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		lines[i] = WrapLine(l, width)
	}
	if _, err := io.WriteString(p.w, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(b), nil
}

// WrapLine fits one line of prose to width (0: no limit): its leading spaces stay, and
// the lines it wraps onto start two columns further in.
func WrapLine(s string, width int) string {
	if width <= 0 || cellWidth(s) <= width {
		return s
	}
	body := strings.TrimLeft(s, " ")
	lead := s[:len(s)-len(body)]
	return wrapFrom(body, width, lead, lead+"  ")
}

// foldWords is wrapWords with the words wider than width folded onto lines of their
// own, broken after a "-", ".", "_" or "/" where one falls in the line, else at width.
func foldWords(s string, width int) []string {
	var out []string
	for _, l := range wrapWords(s, width) {
		for width > 0 && cellWidth(l) > width && !strings.Contains(l, "\x1b") { // styled: cut by fit

			cut := ansi.Truncate(l, width, "")
			if i := strings.LastIndexAny(cut, "-._/"); i > 0 && i < len(cut)-1 {
				cut = cut[:i+1]
			}
			out = append(out, cut)
			l = l[len(cut):]
		}
		out = append(out, l)
	}
	return out
}
