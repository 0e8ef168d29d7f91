package trace

import (
	"errors"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// Mapped input: a regular file of at least mapMinSize bytes in a chunked format is read
// through a read-only shared mapping instead of read(2) into the chunk buffers. The chunks
// are then slices of the mapping (no copy of the file into the process: on a 512 MiB log
// the read system call was 8-11 % of the CPU), and the pages the fold has passed are
// given back (madvise MADV_DONTNEED) so that the resident set does not grow with the file.
//
// A file truncated while it is mapped makes a read of its lost pages fault (SIGBUS): every
// goroutine that reads the mapping runs with debug.SetPanicOnFault and turns the fault into
// errTruncated; the parse then stops with that error, as a read error ends the read path.

// mapMinSize: smaller files are read; a mapping costs a few system calls and page faults
// that a small file does not repay. A variable so tests can map small fixtures.
var mapMinSize int64 = 4 << 20

// errTruncated is the error of a mapped file that lost pages while it was read.
var errTruncated = errors.New("file truncated while it was read")

// mapSource is an input that may be mapped: the open file and where the parse starts in it
// (its offset when handed to Parse, past a byte-order mark).
type mapSource struct {
	f   *os.File
	off int64
}

// mappable returns r as a mapSource when it is a regular file of at least mapMinSize bytes
// whose offset is known; nil otherwise (pipes, terminals, in-memory readers).
func mappable(r io.Reader) *mapSource {
	f, ok := r.(*os.File)
	if !ok || !canMap {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < mapMinSize {
		return nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil || off >= fi.Size() {
		return nil
	}
	return &mapSource{f: f, off: off}
}

// faultSafe runs fn with page faults turned into panics, and returns errTruncated for a
// fault (a mapped file that lost pages); other panics go on.
func faultSafe(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if re, ok := p.(runtime.Error); ok && isFault(re) {
				err = errTruncated
				return
			}
			panic(p)
		}
	}()
	fn()
	return nil
}

// isFault reports whether a runtime error is a memory fault (it has the faulting address).
func isFault(err runtime.Error) bool {
	_, ok := err.(interface{ Addr() uintptr })
	return ok
}
