package trace

import (
	"os"

	"golang.org/x/sys/unix"
)

const canMap = true

// mapping is a read-only shared mapping of a whole file.
type mapping struct {
	all      []byte // the whole mapping, page-aligned
	released int    // bytes of all given back so far
}

// mapFile maps f whole; data is the file from off.
func mapFile(f *os.File, off int64) (*mapping, []byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size <= off || int64(int(size)) != size {
		return nil, nil, os.ErrInvalid
	}
	all, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	_ = unix.Madvise(all, unix.MADV_SEQUENTIAL) // a hint: read-ahead, pages dropped behind
	return &mapping{all: all}, all[off:], nil
}

// release gives back the pages wholly before end (an index into all): they are read again
// from the page cache if anything touches them, so a worker still scanning there is safe.
func (m *mapping) release(end int) {
	end &^= os.Getpagesize() - 1
	if end <= m.released {
		return
	}
	_ = unix.Madvise(m.all[m.released:end], unix.MADV_DONTNEED)
	m.released = end
}

// close unmaps the file; nothing may read the mapping after it.
func (m *mapping) close() { _ = unix.Munmap(m.all) }
