package watch

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// MaxChunk bounds what one poll of a source reads: a log that grew by more is read over
// the next polls, so memory stays bounded whatever is written between two evaluations.
const MaxChunk = 8 << 20

// MaxLine is the longest line kept whole; a longer one is skipped to its end and counted.
const MaxLine = 1 << 20

// Source is one delivery evidence file followed as `tail -F` follows it: new complete
// lines are read at each poll; a rotated file (the path now names another file) is read to
// its end, then the new file from its start; a truncated file is read again from its
// start. A path ending in .gz is a rotated, compressed file: read once, to its end, a
// chunk a poll.
type Source struct {
	Path string
	// Offset is where the next read starts; Inode identifies the file it applies to.
	Offset int64
	Inode  uint64
	// Lines counts the complete lines read; Skipped the over-long lines dropped.
	Lines, Skipped int64
	// Done: a .gz source read to its end.
	Done bool
	// Missing: at the last poll the path named no file (a log not yet created, between
	// a rotation's rename and create): the source has given nothing, which the watcher
	// says instead of judging every record undelivered.
	Missing bool
	f       *os.File
	zr      *gzip.Reader // a .gz source's decompressor, open while it is read
	rest    []byte       // an incomplete last line, kept for the next poll
	skip    bool         // inside an over-long line: drop up to its newline
}

// NewSource follows path from its start (or from offset in inode, a checkpoint's).
func NewSource(path string, inode uint64, offset int64) *Source {
	return &Source{Path: path, Inode: inode, Offset: offset}
}

func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// Poll returns the complete lines written since the last poll (at most MaxChunk bytes).
// A missing file is not an error until it appears (a log not yet created, or between a
// rotation's rename and create).
func (s *Source) Poll() ([]byte, error) {
	if s.Done {
		return nil, nil
	}
	if strings.HasSuffix(s.Path, ".gz") {
		return s.readGzip()
	}
	var out []byte
	fi, err := os.Stat(s.Path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s.Missing = fi == nil && s.f == nil
	if s.f != nil && fi != nil && inodeOf(fi) != s.Inode {
		// rotated: what the old file still holds first, then the new file
		b, err := s.read()
		out = append(out, b...)
		s.f.Close()
		s.f, s.Offset, s.rest, s.skip = nil, 0, nil, false
		if err != nil {
			return out, err
		}
	}
	if fi == nil {
		return out, nil
	}
	if s.f == nil {
		f, err := os.Open(s.Path)
		if err != nil {
			return out, err
		}
		if ino := inodeOf(fi); ino != s.Inode || fi.Size() < s.Offset {
			s.Offset, s.rest = 0, nil // another file than the checkpoint's
			s.Inode = ino
		}
		if _, err := f.Seek(s.Offset, io.SeekStart); err != nil {
			f.Close()
			return out, err
		}
		s.f = f
	} else if fi.Size() < s.Offset {
		// truncated in place (copytruncate): from the start
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return out, err
		}
		s.Offset, s.rest, s.skip = 0, nil, false
	}
	b, err := s.read()
	return append(out, b...), err
}

// read reads what the open file holds past the offset, up to MaxChunk, and returns the
// complete lines.
func (s *Source) read() ([]byte, error) {
	buf := make([]byte, 64<<10)
	var out []byte
	for len(out) < MaxChunk {
		n, err := s.f.Read(buf)
		if n > 0 {
			s.Offset += int64(n)
			out = s.take(out, buf[:n])
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// take appends the complete lines of b (after what rest held) to out.
func (s *Source) take(out, b []byte) []byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if !s.skip {
				s.rest = append(s.rest, b...)
				if len(s.rest) > MaxLine {
					s.rest, s.skip = nil, true
					s.Skipped++
				}
			}
			return out
		}
		if s.skip {
			s.skip = false
		} else {
			out = append(append(out, s.rest...), b[:i+1]...)
			s.Lines++
		}
		s.rest, b = s.rest[:0], b[i+1:]
	}
	return out
}

// readGzip reads a rotated, compressed file as it reads a plain one: at most MaxChunk
// decompressed bytes a poll, so memory stays bounded whatever the file holds once
// decompressed; Offset counts the decompressed bytes taken, and the source is Done at the
// stream's end. A file not there yet is waited for (Missing); one that cannot be opened or
// decompressed is an error at each poll and opened again at the next (it may still have
// been being written), from its start, skipping the Offset bytes already taken: nothing is
// given twice. A checkpoint's Offset into the same file (Inode) resumes there too.
func (s *Source) readGzip() ([]byte, error) {
	if s.zr == nil {
		f, err := os.Open(s.Path)
		s.Missing = errors.Is(err, os.ErrNotExist)
		if s.Missing {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if ino := inodeOf(fi); ino != s.Inode {
			s.Inode, s.Offset, s.rest, s.skip = ino, 0, nil, false // another file than the checkpoint's
		}
		zr, err := gzip.NewReader(f)
		if err == nil && s.Offset > 0 {
			_, err = io.CopyN(io.Discard, zr, s.Offset)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		s.f, s.zr = f, zr
	}
	buf := make([]byte, 64<<10)
	var out []byte
	for len(out) < MaxChunk {
		n, err := s.zr.Read(buf)
		if n > 0 {
			s.Offset += int64(n)
			out = s.take(out, buf[:n])
		}
		if err == io.EOF {
			s.Done = true
			if len(s.rest) > 0 && !s.skip { // a last line without its newline
				out = append(append(out, s.rest...), '\n')
				s.Lines++
			}
			s.rest, s.skip = nil, false
			s.Close()
			return out, nil
		}
		if err != nil {
			s.Close()
			return out, fmt.Errorf("gzip: %w", err)
		}
	}
	return out, nil
}

// Close closes the file.
func (s *Source) Close() {
	s.zr = nil
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
