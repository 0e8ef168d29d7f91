// Package render prints kstranded's view models: aligned tables for people, tab-separated
// rows for pipes, and JSON for programs. Commands build a view model (a struct with json
// tags) from domain results and hand it here; nothing in this package knows about Kafka.
//
// Colour comes from lipgloss, which honours NO_COLOR and turns itself off when the writer
// is not a terminal; JSON never carries colour.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-isatty"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kstranded/kstranded/internal/buildinfo"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/verdict"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Table Format = "table"
	JSON  Format = "json"
)

// ParseFormat validates -o.
func ParseFormat(s string) (Format, error) {
	switch Format(strings.ToLower(s)) {
	case Table, "":
		return Table, nil
	case JSON:
		return JSON, nil
	}
	return "", exitcode.Usagef("-o %q: want table or json", s)
}

// Meta heads every JSON document: the schema of the document, the command that made it
// and the tool's version, so consumers of the JSON can rely on a schema.
type Meta struct {
	Schema  string `json:"schema"`
	Command string `json:"_command"`
	Version string `json:"_version"`
}

// NewMeta returns Meta for a schema and command.
func NewMeta(schema, command string) Meta {
	return Meta{Schema: schema, Command: command, Version: buildinfo.Version()}
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Output is a command's standard output with a place for its notes: the prose around a
// table (verdict lines, group headers, per-partition details, findings). On a terminal
// the notes go with the table; on a pipe they go to stderr, so that what a script reads
// starts with the table's header and holds one row per line.
type Output struct {
	io.Writer           // the table (or the JSON document)
	Notes     io.Writer // the prose; nil: with the table
}

// NotesOf is where a printer writes its prose for w: w's Notes when w is an *Output,
// else w itself (tests that print into one buffer get everything in order); either way
// through Prose, so each line fits the width of the stream it lands on.
func NotesOf(w io.Writer) io.Writer {
	if o, ok := w.(*Output); ok && o.Notes != nil {
		return Prose(o.Notes)
	}
	return Prose(w)
}

// unwrap returns the writer behind an *Output, so terminal checks see the real file.
func unwrap(w io.Writer) io.Writer {
	for {
		switch v := w.(type) {
		case *Output:
			w = v.Writer
		case interface{ Unwrap() io.Writer }:
			// a writer that wraps the stream (cmd counts what a command wrote): the
			// terminal is the stream's
			w = v.Unwrap()
		default:
			return w
		}
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := unwrap(w).(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Align is a column alignment.
type Align int

// Alignments.
const (
	Left Align = iota
	Right
)

// Grid is a table view: a header, rows and per-column alignment (numbers right).
type Grid struct {
	Header []string
	Rows   [][]string
	Align  []Align
	// Optional lists the columns a narrow terminal may hide, the first hidden first;
	// the table then says which are hidden. Pipes and JSON always carry every column.
	Optional []int
}

// WriteGrid prints g: on a terminal (or when pretty is true) aligned and fitted to
// Width(w) (boxed when the box fits, else with wrapped headers or, narrow, without a
// box: see plan); tab separated with full values otherwise, the header first.
func WriteGrid(w io.Writer, g Grid, pretty bool) error {
	if !pretty {
		fmt.Fprintln(w, strings.Join(g.Header, "\t"))
		for _, r := range g.Rows {
			if _, err := fmt.Fprintln(w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	l := plan(g, Width(w))
	if l.compact {
		return writeCompact(w, g, l)
	}
	header := make([]string, len(l.header))
	for i, h := range l.header {
		header[i] = strings.Join(h, "\n")
	}
	aligns := make([]tw.Align, len(g.Header))
	for i := range aligns {
		aligns[i] = tw.AlignLeft
		if i < len(g.Align) && g.Align[i] == Right {
			aligns[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	for _, r := range g.Rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// Styles are the few lipgloss styles kstranded uses, bound to one writer so colour is
// decided by that writer (terminal or not) and NO_COLOR.
type Styles struct {
	Bad, Warn, Good, Dim, Bold lipgloss.Style
}

// NewStyles returns styles for w.
func NewStyles(w io.Writer) Styles {
	r := lipgloss.NewRenderer(unwrap(w))
	return Styles{
		Bad:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		Warn: r.NewStyle().Bold(true).Foreground(lipgloss.Color("11")),
		Good: r.NewStyle().Bold(true).Foreground(lipgloss.Color("10")),
		Dim:  r.NewStyle().Faint(true),
		Bold: r.NewStyle().Bold(true),
	}
}

// Verdict styles a verdict word: LOST red, STRANDED yellow, OK green, the verdicts that
// judge nothing (NO EVIDENCE, INCOMPLETE, ERROR) yellow too: they are not an all-clear.
func (s Styles) Verdict(v verdict.Verdict) string {
	switch v {
	case verdict.Lost:
		return s.Bad.Render(string(v))
	case verdict.OK:
		return s.Good.Render(string(v))
	}
	return s.Warn.Render(string(v))
}
