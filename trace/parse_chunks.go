package trace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
)

// Chunked parsing of the formats whose files reach gigabytes (librdkafka debug logs and
// the JS client's log output): the input is read in chunks cut at record boundaries (a
// newline; for the JS client's multi-line objects, the start of a top-level line); workers
// scan chunks concurrently into records (a scan depends on its chunk alone); the records
// are folded into the analyzer strictly in file order, so the result is the same as a
// line-by-line parse. Memory is bounded by the fixed pool of chunks, whatever the file
// size: chunkPool × (rdChunkSize + the records of one chunk), and each worker's memos
// (rdkafka_memo.go, jslog_objmemo.go: at most about 4 MiB a worker).

// rdChunkSize is the size of a chunk; a line longer than a chunk (or than maxLine) is
// malformed. A variable so tests can cut the fixtures into many small chunks.
var rdChunkSize = 1 << 20

// afterMap, when set (tests), is called with a file just mapped.
var afterMap func(*os.File)

// rdWorkers is the number of scanning goroutines (0: GOMAXPROCS, at most 4).
var rdWorkers = 0

// chunkFormat is what the chunked reader needs of a format.
type chunkFormat interface {
	// cut returns the index of the newline that ends the last whole record in data, a
	// full chunk that is not the end of the input; -1 when there is none.
	cut(data []byte) int
	// newScanner returns the scanner of one worker goroutine.
	newScanner() chunkScanner
}

// chunkScanner scans one chunk into its records.
type chunkScanner interface {
	scan(c *rdChunk)
}

type rdChunk struct {
	data      []byte
	tooLong   []byte // a single line longer than a chunk: its first bytes
	recs      []rdRec
	lines     int // newline-terminated (or final) lines in the chunk
	nonblank  int
	malformed int
	matched   int         // lines (or objects) read in the chunk's format
	firstErrs []Malformed // line numbers relative to the chunk
	err       error       // a read error after this chunk
	done      chan struct{}
}

// reset prepares the chunk for a scan.
func (c *rdChunk) reset() {
	c.recs = c.recs[:0]
	c.firstErrs = c.firstErrs[:0]
	c.lines, c.nonblank, c.malformed, c.matched = 0, 0, 0, 0
}

// nextLine cuts the first line off data, without its line end ("\n", and any "\r"
// before it); rest is what follows.
func nextLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line, rest = data[:i], data[i+1:]
	} else {
		line = data
	}
	for n := len(line); n > 0 && line[n-1] == '\r'; n-- {
		line = line[:n-1]
	}
	return line, rest
}

// eachLine calls fn with every non-blank line of the chunk (without its line end), c.lines
// being its number within the chunk; lines longer than maxLine are malformed.
func (c *rdChunk) eachLine(fn func(line []byte)) {
	for data := c.data; len(data) > 0; {
		var line []byte
		var ok bool
		if line, data, ok = c.takeLine(data); ok {
			fn(line)
		}
	}
}

// takeLine cuts the next line off data and counts it; ok is false for a blank line and
// for one longer than maxLine (counted malformed).
func (c *rdChunk) takeLine(data []byte) (line, rest []byte, ok bool) {
	line, rest = nextLine(data)
	c.lines++
	if len(line) == 0 {
		return nil, rest, false
	}
	c.nonblank++
	if len(line) > maxLine {
		c.bad(line, "line too long")
		return nil, rest, false
	}
	return line, rest, true
}

// rdkafkaChunks is the librdkafka debug log as a chunked format: one record a line.
type rdkafkaChunks struct{}

func (rdkafkaChunks) cut(data []byte) int { return bytes.LastIndexByte(data, '\n') }

func (rdkafkaChunks) newScanner() chunkScanner { return rdChunkScanner{newRdScanner()} }

type rdChunkScanner struct{ sc *rdScanner }

func (s rdChunkScanner) scan(c *rdChunk) {
	s.sc.reset()
	c.reset()
	c.eachLine(func(line []byte) {
		c.recs = append(c.recs, rdRec{})
		r := &c.recs[len(c.recs)-1]
		ok, err := s.sc.scan(line, r)
		if err != nil {
			c.bad(line, err.Error())
		} else {
			c.matched++
		}
		if !ok {
			c.recs = c.recs[:len(c.recs)-1]
			return
		}
		r.line = c.lines
	})
}

// bad counts the current line as malformed.
func (c *rdChunk) bad(text []byte, reason string) { c.badAt(c.lines, text, reason) }

// badAt counts a malformed record that starts at line (within the chunk).
func (c *rdChunk) badAt(line int, text []byte, reason string) {
	c.malformed++
	if len(c.firstErrs) < keepMalformed {
		var st FileStats
		st.malformed(line, text, reason) // copies the text: the chunk is reused
		c.firstErrs = append(c.firstErrs, st.FirstErrors[0])
	}
}

// parseChunks reads a file of a chunked format from br (or, when src is a file that can
// be mapped, from its mapping) into a, filling st; fold turns each record into events, in
// file order.
func (a *Analyzer) parseChunks(ctx context.Context, name string, br *bufio.Reader, src *mapSource, st *FileStats, cf chunkFormat, fold func(*rdRec, func(Event))) error {
	workers := rdWorkers
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	var m *mapping
	var mapped []byte
	if src != nil {
		var err error
		if m, mapped, err = mapFile(src.f, src.off); err != nil {
			m = nil // read it instead
		} else if afterMap != nil {
			afterMap(src.f)
		}
	}
	free := make(chan *rdChunk, 2*workers+1)
	for range cap(free) {
		c := &rdChunk{done: make(chan struct{}, 1)}
		if m == nil {
			c.data = make([]byte, 0, rdChunkSize)
		}
		free <- c
	}
	jobs := make(chan *rdChunk, cap(free))
	order := make(chan *rdChunk, cap(free))
	for range workers {
		go func() {
			sc := cf.newScanner()
			for c := range jobs {
				if m == nil {
					sc.scan(c)
				} else if err := faultSafe(func() { sc.scan(c) }); err != nil {
					c.err = err
				}
				c.done <- struct{}{}
			}
		}()
	}
	stop := make(chan struct{})
	if m == nil {
		go readChunks(br, cf, free, jobs, order, stop)
	} else {
		go mapChunks(mapped, cf, free, jobs, order, stop)
	}
	defer func() {
		close(stop)
		drain := func() {
			for c := range order { // let the reader and the workers finish
				<-c.done
			}
			if m != nil {
				m.close() // nothing reads the mapping any more
			}
		}
		if ctx.Err() != nil {
			// interrupted: the reader may be blocked in a read (stdin); it ends at its
			// next read (ctxReader) without the caller waiting for it
			go drain()
			return
		}
		drain()
	}()

	f := &chunkFolder{a: a, name: name, st: st, fold: fold}
	f.emit = f.add // one func value for the file, not one per record or chunk
	defer func() { a.stoppedAt = Ref{File: name, Line: f.base} }()
	for {
		var c *rdChunk
		var ok bool
		select {
		case c, ok = <-order:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			break
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if a.halt != nil {
			return a.halt
		}
		f.chunk(c)
		err := c.err
		if m != nil {
			if len(c.data) > 0 {
				// the pages the fold has passed go back (the workers are past them too,
				// or read them again from the page cache)
				m.release(len(m.all) - len(mapped) + mapOffset(mapped, c.data) + len(c.data))
			}
			c.data = nil
		} else {
			c.data = c.data[:0]
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", name, f.base+1, err)
		}
		free <- c
	}
	return a.halt // a limit reached while folding the last chunk (nil: none)
}

// readChunks reads br into the chunks free hands it, each cut after its last whole line
// (cf.cut) with the rest carried into the next, and hands them to the workers (jobs) and,
// in file order, to the fold (order); until the end of br, an error, or stop.
func readChunks(br *bufio.Reader, cf chunkFormat, free <-chan *rdChunk, jobs, order chan<- *rdChunk, stop <-chan struct{}) {
	defer close(order)
	defer close(jobs)
	var carry []byte // the start of a line cut by the end of the previous chunk
	for {
		var c *rdChunk
		select {
		case c = <-free:
		case <-stop:
			return
		}
		c.data = append(c.data[:0], carry...)
		c.tooLong = nil
		n, err := io.ReadFull(br, c.data[len(c.data):cap(c.data)])
		c.data = c.data[:len(c.data)+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			c.data, c.err = c.data[:0], err
			c.done <- struct{}{}
			order <- c
			return
		}
		carry = carry[:0]
		if !eof {
			cut := cf.cut(c.data)
			if cut < 0 {
				// one line fills the chunk: malformed; skip to its end
				c.tooLong = append([]byte{}, c.data[:min(len(c.data), 256)]...)
				c.data = c.data[:0]
				c.reset() // not scanned: no records, no lines of its own
				for {
					_, err = br.ReadSlice('\n')
					if err != bufio.ErrBufferFull {
						break
					}
				}
				eof = err == io.EOF
				if err != nil && !eof {
					c.err = err
				}
				c.done <- struct{}{}
				order <- c
				if eof || c.err != nil {
					return
				}
				continue
			}
			carry = append(carry, c.data[cut+1:]...)
			c.data = c.data[:cut+1]
		}
		order <- c
		jobs <- c
		if eof {
			return
		}
	}
}

// chunkFolder folds the chunks of one file, in file order, into the analyzer.
type chunkFolder struct {
	a       *Analyzer
	name    string
	st      *FileStats
	fold    func(*rdRec, func(Event))
	emit    func(Event) // add
	base    int         // the file's lines before the next chunk
	emitted bool        // the record being folded gave an event
	ref     Ref         // its line
}

func (f *chunkFolder) add(e Event) {
	f.emitted = true
	f.st.Events++
	e.Ref = f.ref
	f.a.add(e)
}

// chunk folds the records of chunk c, the next of the file, in order, and counts its
// lines into the file's stats.
func (f *chunkFolder) chunk(c *rdChunk) {
	st := f.st
	if c.tooLong != nil {
		f.base++
		st.Lines++
		st.malformed(f.base, c.tooLong, "line too long")
	}
	withEvents := 0
	for i := range c.recs {
		r := &c.recs[i]
		f.emitted = false
		f.ref = Ref{File: f.name, Line: f.base + r.line}
		f.fold(r, f.emit)
		if f.emitted {
			withEvents++
		}
	}
	for _, m := range c.firstErrs {
		if len(st.FirstErrors) < keepMalformed {
			m.Line += f.base
			st.FirstErrors = append(st.FirstErrors, m)
		}
	}
	st.Malformed += c.malformed
	st.Matched += c.matched
	st.Ignored += c.nonblank - c.malformed - withEvents
	st.Lines += c.lines
	f.base += c.lines
}

// mapOffset is the index of chunk in data, of which it is a slice (both run to the end of
// the mapping).
func mapOffset(data, chunk []byte) int { return cap(data) - cap(chunk) }

// mapChunks is readChunks over a mapped file: the chunks are slices of data, cut as
// readChunks cuts them (rdChunkSize bytes, then after their last whole record), so a
// mapped file is read in the same chunks as the file read. A fault on a page the file
// lost (truncated meanwhile) ends it with errTruncated.
func mapChunks(data []byte, cf chunkFormat, free <-chan *rdChunk, jobs, order chan<- *rdChunk, stop <-chan struct{}) {
	defer close(order)
	defer close(jobs)
	for pos := 0; pos < len(data); {
		var c *rdChunk
		select {
		case c = <-free:
		case <-stop:
			return
		}
		end := min(pos+rdChunkSize, len(data))
		c.data, c.tooLong = data[pos:end], nil
		cut := len(c.data) - 1
		var skip int // for a line longer than a chunk: the bytes to its end
		err := faultSafe(func() {
			if end == len(data) {
				return
			}
			if cut = cf.cut(c.data); cut < 0 {
				c.tooLong = append([]byte{}, c.data[:min(len(c.data), 256)]...)
				if skip = bytes.IndexByte(data[end:], '\n'); skip < 0 {
					skip = len(data) - end
				} else {
					skip++
				}
			}
		})
		if err != nil {
			c.data, c.tooLong, c.err = nil, nil, err
			c.reset()
			c.done <- struct{}{}
			order <- c
			return
		}
		if cut < 0 {
			// one line fills the chunk: malformed; skip to its end
			c.data = nil
			c.reset() // not scanned: no records, no lines of its own
			pos = end + skip
			c.done <- struct{}{}
			order <- c
			continue
		}
		c.data = c.data[:cut+1]
		pos += len(c.data)
		order <- c
		jobs <- c
	}
}
