package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Evidence is read as a stream, in bounded memory whatever the input (issue 27 item 7:
// a 12.5 MB gzip of 1 GB of delivery lines took 4.36 GB when files were read whole,
// /dev/zero grew without end): the first bytes are looked at for a gzip magic, a
// byte-order mark, binary data and the format; lines are read one at a time; the
// delivered offsets are merged into ranges as they are read (Partition.add). Three caps
// bound what one input can cost, and each is said, never silent:
//
//   - MaxLine: a longer line is skipped and counted as malformed, with the cap as its
//     reason (the rest of the file is still read);
//   - MaxGunzip: a gzip is read up to that much once decompressed; past it the source
//     says it was cut (Source.Cut) and the evidence supports no verdict (Insufficient):
//     what was not read may be what was delivered;
//   - MaxDocument: a JSON document over several lines (trace parse output, a
//     pretty-printed OTLP export) is read whole up to that size; a larger one is an error.
const (
	MaxLine     = 16 << 20
	MaxGunzip   = 4 << 30
	MaxDocument = 64 << 20
)

// gunzipCap and documentCap are MaxGunzip and MaxDocument; tests lower them.
var (
	gunzipCap   int64 = MaxGunzip
	documentCap       = MaxDocument
)

// headSize is how much of an input is looked at before it is read: the binary check
// (looksBinary) looks at this much, and a first line that fits in it names the format.
const headSize = 64 << 10

// capReader reads r up to max bytes; past them it reports io.EOF and over.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := io.ReadFull(c.r, one[:])
		if n > 0 {
			c.over = true
			return 0, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// lineReader gives an input's lines one at a time, as bufio.ScanLines cuts them (no
// "\n", no "\r" before it, a last line without a newline kept), each at most MaxLine
// bytes: a longer one is read past and reported as long, with its first bytes.
type lineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than the reader's buffer, being gathered
	max  int
}

func newLineReader(br *bufio.Reader) *lineReader { return &lineReader{br: br, max: MaxLine} }

// next returns the next line (valid until the next call), whether it was over the cap
// (then line holds its first bytes only), and io.EOF after the last line. Any other
// error is the input's.
func (l *lineReader) next() (line []byte, long bool, err error) {
	l.long = l.long[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !long {
				if len(l.long)+len(frag) > l.max {
					long = true
					l.long = append(l.long, frag[:min(len(frag), 120)]...)
				} else {
					l.long = append(l.long, frag...)
				}
			}
			continue
		case err != nil && err != io.EOF:
			return nil, false, err
		}
		if len(l.long) > 0 || long {
			if !long && len(l.long)+len(frag) > l.max {
				long = true
			}
			if !long {
				l.long = append(l.long, frag...)
			}
			line = l.long
			if cap(l.long) > 1<<20 { // a long line's buffer is not kept for the next ones
				l.long = nil
			}
		} else {
			line = frag
		}
		if err == io.EOF && len(line) == 0 && !long {
			return nil, false, io.EOF
		}
		if !long {
			line = bytes.TrimSuffix(line, []byte{'\n'})
			line = bytes.TrimSuffix(line, []byte{'\r'})
		} else {
			line = line[:min(len(line), 120)]
		}
		return line, long, nil
	}
}

// parse reads one input, after its gzip, byte-order mark and binary checks, into the
// parser's source: an empty input, OTLP JSON lines, a JSON document (trace parse output,
// an OTLP export over several lines), or lines of any other kind. It returns the input's
// read error, if any.
func (p *parser) parse(br *bufio.Reader) error {
	head, err := br.Peek(headSize)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return err
	}
	ended := len(head) < headSize // the whole input is in head
	lead := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case len(lead) == 0 && ended:
		p.src.Format = FormatEmpty
		return nil
	case len(lead) == 0 || lead[0] != '{':
		return p.lines(br)
	}
	first, _, cut := bytes.Cut(lead, []byte{'\n'})
	if cut || ended {
		var probe map[string]json.RawMessage
		if json.Unmarshal(bytes.TrimSpace(first), &probe) == nil {
			if _, ok := probe["resourceSpans"]; ok {
				return p.otlpLines(br)
			}
			var schema string
			if json.Unmarshal(probe["schema"], &schema) != nil || !strings.HasPrefix(schema, TraceParseSchemaPrefix) {
				return p.lines(br)
			}
		}
	}
	return p.document(br)
}

// document reads an input whose first line is not a JSON object of its own (a document
// over several lines, a broken first line, a first line longer than the head): whole,
// when it ends within MaxDocument, as files were always read; else as lines (OTLP JSON
// lines when its first line is one), unless it is a document written indented (its
// first line "{"), which cannot be read in part.
func (p *parser) document(br *bufio.Reader) error {
	data, err := io.ReadAll(io.LimitReader(br, int64(documentCap)+1))
	if err != nil {
		return err
	}
	if len(data) <= documentCap {
		p.whole(data)
		return nil
	}
	trimmed := bytes.TrimSpace(data)
	first, _, cut := bytes.Cut(trimmed, []byte{'\n'})
	first = bytes.TrimSpace(first)
	if !cut || string(first) == "{" { // a document written indented opens on a line of its own
		return fmt.Errorf("a JSON document of more than %s (the most one document may hold): not read", bytesText(int64(documentCap)))
	}
	rest := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(data), br), headSize)
	if isOTLP(first) {
		return p.otlpLines(rest)
	}
	return p.lines(rest)
}

// whole reads an input held in memory (at most MaxDocument bytes).
func (p *parser) whole(data []byte) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		p.src.Format = FormatEmpty
	case trimmed[0] == '{' && isOTLP(trimmed):
		p.otlpFile(trimmed)
	case trimmed[0] == '{' && p.tryTraceParse(trimmed):
		p.src.Format = FormatTraceParse
	default:
		_ = p.lines(bufio.NewReader(bytes.NewReader(data))) // a bytes.Reader has no error
	}
}

// tooLong is the reason a line over MaxLine is malformed.
func tooLong() string {
	return fmt.Sprintf("a line of more than %d MiB (the most a line may hold): skipped", MaxLine>>20)
}

// otlpLines reads OTLP JSON lines (the collector's file exporter: one TracesData per line).
func (p *parser) otlpLines(br *bufio.Reader) error {
	p.src.Format = FormatOTLP
	lr := newLineReader(br)
	groups := map[string]bool{}
	for n := 1; ; n++ {
		line, long, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if long {
			p.bad(n, string(line), tooLong())
			continue
		}
		p.otlpDoc(n, bytes.TrimSpace(line), groups)
	}
	p.otlpGroup(groups)
	return nil
}
