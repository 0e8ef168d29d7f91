package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// Format names an input format.
type Format string

// The formats trace parse reads.
const (
	FormatAuto       Format = "auto"
	FormatKstranded  Format = "kstranded"  // kstranded.trace/v1 JSON lines (repro --trace)
	FormatKafkaJS    Format = "kafkajs"    // instrumented confluent-kafka-javascript trace
	FormatLibrdkafka Format = "librdkafka" // librdkafka debug log (debug=consumer,fetch,cgrp)
	FormatPattern    Format = "pattern"    // application delivery log read with --pattern
)

// Formats lists the concrete formats, for help texts.
var Formats = []Format{FormatKstranded, FormatKafkaJS, FormatLibrdkafka, FormatPattern}

// ParseFormat validates a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "", FormatAuto:
		return FormatAuto, nil
	case FormatKstranded, FormatKafkaJS, FormatLibrdkafka, FormatPattern:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want auto, kstranded, kafkajs, librdkafka or pattern)", s)
}

// ErrUnknownFormat is returned for a file in no known format.
var ErrUnknownFormat = errors.New("no known trace format")

// ErrEmpty is returned for an empty file.
var ErrEmpty = errors.New("empty file: no lines to parse")

// lineParser turns one line (without its newline) into events. It returns errMalformed
// (possibly wrapped with a reason) for a line it cannot read, and ignores lines that are
// well-formed but say nothing about offsets.
type lineParser interface {
	Line(line []byte, emit func(Event)) error
}

// errMalformed marks a line a parser could not read.
type errMalformed string

func (e errMalformed) Error() string { return string(e) }

const (
	sniffBytes = 64 << 10
	maxLine    = 1 << 20 // longer lines are malformed and skipped
)

// open wraps r: transparent gzip, a buffered reader big enough to sniff the format.
func open(r io.Reader) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReaderSize(zr, 256<<10)
	}
	return br, nil
}

// Detect names the format of the first lines in head; pattern is tried last.
func Detect(head []byte, pattern *regexp.Regexp) Format {
	lines := bytes.Split(head, []byte{'\n'})
	if len(lines) > 1 && len(head) == sniffBytes {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	var kafkajs, patt int
	for _, l := range lines {
		l = bytes.TrimSpace(bytes.TrimSuffix(l, []byte{'\r'}))
		if len(l) == 0 {
			continue
		}
		if isRdkafkaLine(l) {
			return FormatLibrdkafka
		}
		if l[0] == '{' && bytes.Contains(l, []byte(`"ev"`)) && bytes.Contains(l, []byte(`"ts"`)) {
			return FormatKstranded
		}
		if looksKafkaJS(l) {
			kafkajs++
		}
		if pattern != nil && pattern.Match(l) {
			patt++
		}
	}
	switch {
	case kafkajs > 0:
		return FormatKafkaJS
	case patt > 0:
		return FormatPattern
	}
	return ""
}

// Malformed is one line a parser could not read.
type Malformed struct {
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// FileStats describe one parsed input.
type FileStats struct {
	Name        string      `json:"name"`
	Format      Format      `json:"format"`
	Detected    bool        `json:"detected"` // the format was auto-detected
	Lines       int         `json:"lines"`
	Events      int         `json:"events"`
	Ignored     int         `json:"ignored"` // well-formed lines that say nothing about offsets
	Malformed   int         `json:"malformed"`
	FirstErrors []Malformed `json:"first_malformed,omitempty"`
}

const keepMalformed = 5

// Parse reads one input (name is used in evidence references), detecting its format
// unless format is given, and feeds its events to a. It streams: lines are read one at
// a time from a fixed buffer.
func (a *Analyzer) Parse(name string, r io.Reader, format Format) (FileStats, error) {
	st := FileStats{Name: name, Format: format}
	br, err := open(r)
	if err != nil {
		return st, fmt.Errorf("%s: %w", name, err)
	}
	head, err := br.Peek(sniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return st, fmt.Errorf("%s: %w", name, err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return st, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	if format == "" || format == FormatAuto {
		st.Format, st.Detected = Detect(head, a.opt.Pattern), true
		if st.Format == "" {
			return st, fmt.Errorf("%s: %w (expected kstranded.trace/v1 JSON lines, a confluent-kafka-javascript trace, a librdkafka debug log, or lines matching --pattern)", name, ErrUnknownFormat)
		}
	}
	var p lineParser
	switch st.Format {
	case FormatKstranded:
		p = &kstrandedParser{}
	case FormatKafkaJS:
		p = &kafkajsParser{}
	case FormatLibrdkafka:
		p = newRdkafkaParser(a)
	case FormatPattern:
		if a.opt.Pattern == nil {
			return st, fmt.Errorf("%s: format pattern needs --pattern", name)
		}
		pp, err := newPatternParser(a.opt.Pattern)
		if err != nil {
			return st, err
		}
		p = pp
	}
	a.beginFile(name)
	if st.Format == FormatLibrdkafka {
		// the format of multi-gigabyte logs: scanned in chunks, concurrently, folded in order
		if err := a.parseRdkafka(name, br, &st); err != nil {
			return st, err
		}
		a.endFile()
		a.files = append(a.files, st)
		return st, nil
	}
	lineNo := 0
	emitted := false
	emit := func(e Event) {
		emitted = true
		st.Events++
		e.Ref = Ref{File: name, Line: lineNo}
		a.add(e)
	}
	for {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			// a line longer than the buffer: malformed, skip to its end
			lineNo++
			st.Lines++
			st.malformed(lineNo, line, "line too long")
			for rerr == bufio.ErrBufferFull {
				_, rerr = br.ReadSlice('\n')
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				return st, fmt.Errorf("%s: %w", name, rerr)
			}
			continue
		}
		if len(line) > 0 {
			lineNo++
			st.Lines++
			for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n-- {
				line = line[:n-1]
			}
			if len(line) > maxLine {
				st.malformed(lineNo, line, "line too long")
			} else if len(line) > 0 {
				emitted = false
				if perr := p.Line(line, emit); perr != nil {
					st.malformed(lineNo, line, perr.Error())
				} else if !emitted {
					st.Ignored++
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return st, fmt.Errorf("%s: line %d: %w", name, lineNo+1, rerr)
		}
	}
	a.endFile()
	a.files = append(a.files, st)
	return st, nil
}

func (st *FileStats) malformed(line int, text []byte, reason string) {
	st.Malformed++
	if len(st.FirstErrors) < keepMalformed {
		if len(text) > 200 {
			text = append(append([]byte{}, text[:200]...), "…"...)
		}
		st.FirstErrors = append(st.FirstErrors, Malformed{Line: line, Text: string(bytes.ToValidUTF8(text, []byte("?"))), Reason: reason})
	}
}
