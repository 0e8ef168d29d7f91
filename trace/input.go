package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/ctxio"
	"io"
	"regexp"

	"github.com/kstranded/kstranded/internal/textenc"
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
	// FormatDeliveries: an application's delivery log as `inspect --delivered` reads it
	// (package evidence, the one reader: JSON lines with partition and offset, text
	// TOPIC PARTITION OFFSET or [TOPIC/]PARTITION:FIRST-LAST).
	FormatDeliveries Format = "deliveries"
	// FormatEmpty: a file with no line; it holds no evidence (NO EVIDENCE, as in every
	// command).
	FormatEmpty Format = "empty"
)

// Formats lists the concrete formats, for help texts.
var Formats = []Format{FormatKstranded, FormatKafkaJS, FormatLibrdkafka, FormatJSClient, FormatJSClientJSON, FormatPattern, FormatDeliveries}

// ParseFormat validates a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "", FormatAuto:
		return FormatAuto, nil
	case FormatKstranded, FormatKafkaJS, FormatLibrdkafka, FormatJSClient, FormatJSClientJSON, FormatPattern, FormatDeliveries:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want auto, kstranded, kafkajs, librdkafka, jsclient, jsclient-json, pattern or deliveries)", s)
}

// ErrUnknownFormat is returned for a file in no known format.
var ErrUnknownFormat = errors.New("no known trace format")

// ErrEmpty is returned for an empty file.
var ErrEmpty = errors.New("empty file: no lines to parse")

// ErrTruncatedGzip is returned for a gzip stream that ends before its end.
var ErrTruncatedGzip = errors.New("gzip stream truncated")

// gzipReader names a gzip stream cut short (io.ErrUnexpectedEOF says only "unexpected EOF").
type gzipReader struct{ r io.Reader }

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err == io.ErrUnexpectedEOF {
		err = ErrTruncatedGzip
	}
	return n, err
}

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
	// detectBytes bounds how far detection reads for a line that names the format (an
	// application's log can hold thousands of its own lines before the client's first);
	// what it read is kept in memory and parsed after.
	detectBytes = 16 << 20
	maxLine     = 1 << 20 // longer lines are malformed and skipped
)

// open wraps r: transparent gzip, a buffered reader big enough to sniff the format. src,
// r as a file that may be mapped, is moved past the byte-order mark, or set to nil when r
// is gzipped (the mapping would hold the compressed bytes).
func open(ctx context.Context, r io.Reader, src **mapSource) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(ctxio.Interruptible(ctx, r), 256<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		*src = nil
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		br = bufio.NewReaderSize(gzipReader{zr}, 256<<10)
	}
	// A UTF-8 byte-order mark would hide the header line (a trace's "run" line) from
	// every reader; UTF-16 is an error naming the encoding.
	head, _ := br.Peek(4)
	skip, err := textenc.BOM(head)
	if err != nil {
		return nil, err
	}
	if _, err := br.Discard(skip); err != nil {
		return nil, err
	}
	if *src != nil {
		(*src).off += int64(skip)
	}
	return br, nil
}

// detector decides the format line by line. A line of kstranded's trace, of a librdkafka
// debug log or of the JS client's log output decides at once; the instrumented kafkajs
// trace's event names decide at the end of the first sniffBytes (a librdkafka line there
// wins), or at once after them; lines matching the pattern decide last.
type detector struct {
	pattern        *regexp.Regexp
	bytes, lines   int
	kafkajs, patt  int
	firstKafkaJS   int
	firstPatt      int
	decided        Format
	decidedAtLine  int
	patternMatched int
}

// line reads one line (without its newline); it returns true once the format is decided.
func (d *detector) line(raw []byte) bool {
	d.lines++
	d.bytes += len(raw) + 1
	l := bytes.TrimSuffix(raw, []byte{'\r'})
	decide := func(f Format) bool { d.decided, d.decidedAtLine = f, d.lines; return true }
	switch {
	case isJSClientLine(l):
		return decide(FormatJSClient)
	case isJSClientJSONLine(l):
		return decide(FormatJSClientJSON)
	}
	l = bytes.TrimSpace(l)
	if len(l) == 0 {
		return false
	}
	switch {
	case isRdkafkaLine(l):
		return decide(FormatLibrdkafka)
	case l[0] == '{' && bytes.Contains(l, []byte(`"ev"`)) && bytes.Contains(l, []byte(`"ts"`)):
		return decide(FormatKstranded)
	}
	if looksKafkaJS(l) {
		if d.kafkajs == 0 {
			d.firstKafkaJS = d.lines
		}
		d.kafkajs++
		if d.bytes > sniffBytes {
			return decide(FormatKafkaJS)
		}
	}
	if d.pattern != nil && d.pattern.Match(l) {
		if d.patt == 0 {
			d.firstPatt = d.lines
		}
		d.patt++
	}
	if d.kafkajs > 0 && d.bytes > sniffBytes {
		d.decided, d.decidedAtLine = FormatKafkaJS, d.firstKafkaJS
		return true
	}
	return false
}

// end decides when no line did: the kafkajs trace's names, else --pattern. With a pattern
// and no line matching it in what was read, the whole file is read with it (the first
// delivery line can come after many megabytes of other lines); Parse says how many matched.
func (d *detector) end() Format {
	switch {
	case d.decided != "":
	case d.kafkajs > 0:
		d.decided, d.decidedAtLine = FormatKafkaJS, d.firstKafkaJS
	case d.pattern != nil:
		d.decided, d.decidedAtLine = FormatPattern, d.firstPatt
	}
	return d.decided
}

// Detect names the format of the lines in head; pattern is tried last.
func Detect(head []byte, pattern *regexp.Regexp) Format {
	d := detector{pattern: pattern}
	lines := bytes.Split(head, []byte{'\n'})
	if len(lines) > 1 && len(head) >= sniffBytes {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	for _, l := range lines {
		if d.line(l) {
			return d.decided
		}
	}
	switch {
	case d.kafkajs > 0:
		return FormatKafkaJS
	case d.patt > 0:
		return FormatPattern
	}
	return ""
}

// detect reads br until a line decides the format or detectBytes were read, and returns
// the format, the line that decided it, and a reader that gives the whole input again.
func detect(br *bufio.Reader, pattern *regexp.Regexp) (Format, int, *bufio.Reader, error) {
	d := detector{pattern: pattern}
	var head []byte
	for d.bytes < detectBytes {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if err == bufio.ErrBufferFull {
			break // a line longer than the buffer: decide with the lines before it
		}
		if len(line) > 0 && d.line(bytes.TrimSuffix(line, []byte{'\n'})) {
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", 0, nil, err
		}
	}
	f := d.end()
	return f, d.decidedAtLine, bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), br), 256<<10), nil
}

// Malformed is one line a parser could not read.
type Malformed struct {
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// FileStats describe one parsed input.
type FileStats struct {
	Name      string `json:"name"`
	Format    Format `json:"format"`
	Detected  bool   `json:"detected"` // the format was auto-detected
	Lines     int    `json:"lines"`
	Events    int    `json:"events"`
	Ignored   int    `json:"ignored"` // well-formed lines that say nothing about offsets
	Malformed int    `json:"malformed"`
	// Matched counts the lines recognised as the file's format (the objects, for the JS
	// client's multi-line log objects; for line formats, the lines that gave events);
	// PatternMatched the lines that matched --pattern.
	Matched        int `json:"matched"`
	PatternMatched int `json:"pattern_matched,omitempty"`
	// DetectedAtLine is the line that decided the format, when it was auto-detected.
	DetectedAtLine int         `json:"detected_at_line,omitempty"`
	FirstErrors    []Malformed `json:"first_malformed,omitempty"`
	// Stopped: the file was not read to its end (an interrupt or a limit).
	Stopped bool `json:"stopped,omitempty"`
	// Kinds: for a delivery log (format deliveries), what the evidence reader counted
	// and ignored, per kind of line (in JSON as the trace document's files[].kinds).
	Kinds []evidence.Kind `json:"-"`
}

const keepMalformed = 5

// Parse reads one input (name is used in evidence references), detecting its format
// unless format is given, and feeds its events to a. It streams: lines are read one at
// a time from a fixed buffer.
func (a *Analyzer) Parse(name string, r io.Reader, format Format) (FileStats, error) {
	return a.ParseContext(context.Background(), name, r, format)
}

// ParseContext is Parse that stops when ctx is done. It stops too at a limit of the
// analysis (ErrLimit). Either way what was read up to there stays in the analysis, the
// input's FileStats included, and Finish reports it as partial; the error wraps ctx's
// error or ErrLimit.
func (a *Analyzer) ParseContext(ctx context.Context, name string, r io.Reader, format Format) (FileStats, error) {
	st := FileStats{Name: name, Format: format}
	src := mappable(r)
	br, err := open(ctx, r, &src)
	if err != nil {
		return st, fmt.Errorf("%s: %w", name, err)
	}
	head, err := br.Peek(sniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		if ctx.Err() != nil {
			a.partial, a.interrupted = true, true
			a.stoppedAt = Ref{File: name}
		}
		return st, fmt.Errorf("%s: %w", name, err)
	}
	if len(bytes.TrimSpace(head)) == 0 {
		// no line, no evidence: the report says NO EVIDENCE, as every command does
		st.Format, st.Detected = FormatEmpty, format == "" || format == FormatAuto
		a.files = append(a.files, st)
		return st, nil
	}
	if format == "" || format == FormatAuto {
		st.Format, st.DetectedAtLine, br, err = detect(br, a.opt.Pattern)
		st.Detected = true
		if err != nil {
			if ctx.Err() != nil {
				a.partial, a.interrupted = true, true
				a.stoppedAt = Ref{File: name}
			}
			return st, fmt.Errorf("%s: %w", name, err)
		}
		if st.Format == "" && a.opt.Pattern == nil {
			// no client's trace or log: an application's delivery log, read as every
			// command reads one (package evidence)
			st.Format = FormatDeliveries
		}
		if st.Format == "" {
			return st, fmt.Errorf("%s: %w (expected kstranded.trace/v1 JSON lines, a confluent-kafka-javascript trace or log output, a librdkafka debug log, lines matching --pattern, or a delivery log as inspect --delivered reads it)", name, ErrUnknownFormat)
		}
	}
	if st.Format == FormatDeliveries {
		return st, a.parseDeliveries(ctx, name, br, &st)
	}
	a.beginFile(name)
	if err := a.parseFormat(ctx, name, br, src, &st); err != nil {
		if stop := a.stopped(ctx, err); stop != nil {
			st.Stopped = true
			a.endFile()
			a.files = append(a.files, st)
			return st, stop
		}
		return st, err
	}
	a.endFile()
	a.files = append(a.files, st)
	if st.Format == FormatPattern && st.Detected && st.PatternMatched == 0 {
		return st, fmt.Errorf("%s: %w: no line of %d matched --pattern, and none is of another format", name, ErrUnknownFormat, st.Lines)
	}
	return st, nil
}

// stopped says whether err (from parsing name) is an interrupt or a limit rather than a
// read or format error, and marks the analysis partial; it returns the error to report.
func (a *Analyzer) stopped(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		a.partial, a.interrupted = true, true
		return fmt.Errorf("%w (read up to %s)", ctx.Err(), a.stoppedAt)
	case a.halt != nil:
		a.partial = true
		return a.halt
	}
	return nil
}

// stopCheck is how often (in lines) the line readers look at the context and the limits
// besides every read: a cheap check, often enough for a prompt stop.
const stopCheck = 1024

// parseFormat reads br in st.Format.
func (a *Analyzer) parseFormat(ctx context.Context, name string, br *bufio.Reader, src *mapSource, st *FileStats) error {
	switch st.Format {
	case FormatKstranded:
		return a.parseLines(ctx, name, br, st, &kstrandedParser{})
	case FormatKafkaJS:
		return a.parseLines(ctx, name, br, st, &kafkajsParser{})
	case FormatPattern:
		if a.opt.Pattern == nil {
			return fmt.Errorf("%s: format pattern needs --pattern", name)
		}
		pp, err := newPatternParser(a.opt.Pattern)
		if err != nil {
			return err
		}
		pp.when = a.opt.When
		return a.parseLines(ctx, name, br, st, pp)
	case FormatLibrdkafka:
		// the formats of multi-gigabyte logs: scanned in chunks, concurrently, folded in order
		return a.parseChunks(ctx, name, br, src, st, rdkafkaChunks{}, newRdkafkaParser(a).fold)
	case FormatJSClient, FormatJSClientJSON:
		f := &jsFolder{rd: newRdkafkaParser(a)}
		fold := func(r *rdRec, emit func(Event)) {
			if r.op == jsDeliver {
				st.PatternMatched++
			}
			f.fold(r, emit)
		}
		return a.parseChunks(ctx, name, br, src, st, jsChunks{json: st.Format == FormatJSClientJSON, pattern: a.patternScan()}, fold)
	}
	return fmt.Errorf("%s: unknown format %q", name, st.Format)
}

// parseLines reads br line by line with p.
func (a *Analyzer) parseLines(ctx context.Context, name string, br *bufio.Reader, st *FileStats, p lineParser) error {
	lineNo := 0
	emitted := false
	emit := func(e Event) {
		emitted = true
		st.Events++
		e.Ref = Ref{File: name, Line: lineNo}
		a.add(e)
	}
	defer func() { a.stoppedAt = Ref{File: name, Line: lineNo} }()
	for {
		if a.halt != nil {
			return a.halt
		}
		if lineNo%stopCheck == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
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
				return nil
			}
			if rerr != nil {
				return fmt.Errorf("%s: %w", name, rerr)
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
				} else {
					st.Matched++
					if st.Format == FormatPattern {
						st.PatternMatched++
					}
				}
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("%s: line %d: %w", name, lineNo+1, rerr)
		}
	}
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
