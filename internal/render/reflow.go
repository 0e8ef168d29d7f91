package render

import (
	"regexp"
	"strings"
)

// Reflow fits help text to width columns (0: unchanged): the text is written
// pre-wrapped, near 88 columns, and a terminal of 80 wrapped each long line into a
// fragment. Paragraphs are joined and broken again at word boundaries, keeping the
// shapes help text uses:
//
//   - prose: consecutive lines at the same indent are one paragraph; a paragraph's
//     first line ending in ":" is a heading, or a list's lead-in, and stands alone
//   - a list item, "- text" or "* text": wrapped lines align after the marker
//   - a term and its description, separated by two spaces or more (a flag and its
//     usage, a subcommand and its summary, an exit code and its meaning): wrapped
//     lines align under the description; lines indented between the term and the
//     description, and with no gap of their own, continue it (a long term pushes its
//     description right)
//   - "here: text", an exit code's gloss: an item of its own
//   - a command line, "kstranded ..." or "... | kstranded ...": never joined to the
//     next unless it ends in " \"; wrapped, each line but the last ends in " \" so it
//     still pastes into a shell
//
// A word wider than the room left is broken at the room, so a line never exceeds
// width; but not a command's argument (quoted ones are one word): it keeps a line of its
// own, wider than width, rather than paste as another command.
func Reflow(text string, width int) string {
	if width <= 0 {
		return text
	}
	var out []string
	var cur *helpItem
	flush := func() {
		if cur != nil {
			out = append(out, cur.lines(width)...)
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		body = strings.TrimRight(body, " ")
		if body == "" {
			flush()
			out = append(out, "")
			continue
		}
		if cur != nil && cur.cmd && len(cur.words) > 0 && cur.words[len(cur.words)-1] == `\` {
			// a command line continued in the source: one command, wrapped afresh
			cur.words = append(cur.words[:len(cur.words)-1], shellFields(body)...)
			continue
		}
		if cur != nil && cur.continues(indent, body) {
			cur.words = append(cur.words, strings.Fields(body)...)
			continue
		}
		flush()
		cur = newHelpItem(indent, body)
	}
	flush()
	return strings.Join(out, "\n")
}

// termGap splits "TERM  description" at the first run of two spaces or more.
var termGap = regexp.MustCompile(`^(\S+(?: \S+)*?)( {2,})(\S.*)$`)

// helpItem is one paragraph, list item or term of help text.
type helpItem struct {
	lead   string // the first line's start: the indent, and a marker or a term with its gap
	hang   int    // where the wrapped lines start
	joinAt int    // the indent of the source lines that continue this item
	term   bool
	cmd    bool
	closed bool // ends in ":": the next line starts an item of its own
	words  []string
}

func newHelpItem(indent int, body string) *helpItem {
	pad := strings.Repeat(" ", indent)
	// a heading: a line of its own ending in ":" (a ":" ending a line of a paragraph
	// or a description is where the pre-wrapping fell)
	it := &helpItem{lead: pad, hang: indent, joinAt: indent, closed: strings.HasSuffix(body, ":")}
	switch {
	case isCommandLine(body):
		it.cmd, it.hang = true, indent+4
	case strings.HasPrefix(body, "- "), strings.HasPrefix(body, "* "):
		it.lead, it.hang, it.joinAt = pad+body[:2], indent+2, indent+2
		body = body[2:]
	case strings.HasPrefix(body, "here: "):
		it.lead, it.hang, it.joinAt = pad+"here: ", indent+6, indent+6
		body = body[6:]
	default:
		if m := termGap.FindStringSubmatch(body); indent > 0 && m != nil {
			it.term, it.closed = true, false
			it.lead = pad + m[1] + m[2]
			it.hang, it.joinAt = cellWidth(it.lead), cellWidth(it.lead)
			body = m[3]
		}
	}
	it.words = strings.Fields(body)
	if it.cmd {
		it.words = shellFields(body)
	}
	return it
}

// shellFields splits a command line at spaces outside quotes: a line break inside a
// quoted argument would change the argument.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'', r == '"':
			quote = r
		case r == ' ':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

func isCommandLine(body string) bool {
	return strings.HasPrefix(body, "kstranded ") && !strings.HasPrefix(body, "kstranded  ") || body == "kstranded" ||
		strings.HasPrefix(body, "$ ") || strings.Contains(body, " | kstranded ")
}

// continues reports whether a source line at indent continues this item.
func (it *helpItem) continues(indent int, body string) bool {
	if it.closed || it.cmd || isCommandLine(body) || strings.HasPrefix(body, "- ") || strings.HasPrefix(body, "* ") || strings.HasPrefix(body, "here: ") {
		return false
	}
	base := cellWidth(it.lead) - len(strings.TrimLeft(it.lead, " "))
	return indent == it.joinAt || (it.term && indent > base && indent < it.joinAt && !termGap.MatchString(body))
}

// lines wraps the item to width.
func (it *helpItem) lines(width int) []string {
	lead, hang := it.lead, it.hang
	if it.term && width-hang < 24 {
		// too little room beside a long term: the description goes under it
		base := cellWidth(lead) - len(strings.TrimLeft(lead, " "))
		out := []string{strings.TrimRight(lead, " ")}
		lead, hang = strings.Repeat(" ", base+8), base+8
		return append(out, wrapHelpWords(it.words, width, lead, hang, false)...)
	}
	return wrapHelpWords(it.words, width, lead, hang, it.cmd)
}

// wrapHelpWords fills lines of at most width columns with words, the first line
// starting with lead and the others at column hang; cmd ends every line but the last
// with " \".
func wrapHelpWords(words []string, width int, lead string, hang int, cmd bool) []string {
	room := width
	if cmd {
		room = width - 2
	}
	var out []string
	line, empty := lead, true
	for _, wd := range words {
		for {
			start := cellWidth(line)
			if !empty {
				start++
			}
			if start+cellWidth(wd) <= room {
				break
			}
			if empty && cmd {
				break // an argument wider than the room stays whole: cut, it would change the command
			}
			if empty {
				// a word wider than the room: break it there
				r := []rune(wd)
				n := min(max(room-cellWidth(line), 1), len(r))
				line += string(r[:n])
				wd = string(r[n:])
			}
			if cmd {
				line += " \\"
			}
			out = append(out, line)
			line, empty = strings.Repeat(" ", hang), true
			if wd == "" {
				break
			}
		}
		if wd == "" {
			continue
		}
		if !empty {
			line += " "
		}
		line += wd
		empty = false
	}
	return append(out, line)
}
