// Package ctxio makes reads of outside input end when a context ends (SIGINT, SIGTERM):
// a regular file or an in-memory reader is checked before each read; a pipe, a terminal
// or a FIFO is read in a goroutine so that a read blocked on it does not hold the
// interrupt; Open opens a path the same way (opening a FIFO with no writer blocks).
package ctxio

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
)

// reader ends a read once its context is done: every reader of trace parse and of delivery evidence
// reads through it, so an interrupt stops a parse within one buffer (256 KiB) of input, whatever
// the format (issue 16 §1: an 84 MB trace used to be read to its end after Ctrl-C).
type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// asyncReader reads r in its own goroutine, so that a read blocked on a pipe (stdin fed
// by a producer that went quiet) does not hold an interrupt: Read returns ctx's error as
// soon as it is done, and the goroutine ends at the blocked read's return.
type asyncReader struct {
	ctx  context.Context
	ch   chan asyncChunk
	free chan []byte
	cur  asyncChunk
}

type asyncChunk struct {
	buf []byte
	n   int
	off int
	err error
}

func newAsyncReader(ctx context.Context, r io.Reader) *asyncReader {
	a := &asyncReader{ctx: ctx, ch: make(chan asyncChunk, 2), free: make(chan []byte, 3)}
	for range cap(a.free) {
		a.free <- make([]byte, 64<<10)
	}
	go func() {
		defer close(a.ch)
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			case <-ctx.Done():
				return
			}
			n, err := r.Read(buf)
			select {
			case a.ch <- asyncChunk{buf: buf, n: n, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for a.cur.off >= a.cur.n {
		if a.cur.err != nil {
			return 0, a.cur.err
		}
		if a.cur.buf != nil {
			a.free <- a.cur.buf
		}
		select {
		case c, ok := <-a.ch:
			if !ok {
				return 0, a.ctx.Err()
			}
			a.cur = c
		case <-a.ctx.Done():
			return 0, a.ctx.Err()
		}
	}
	n := copy(p, a.cur.buf[a.cur.off:a.cur.n])
	a.cur.off += n
	return n, nil
}

// Interruptible wraps r so that reading it ends when ctx is done: regular files and
// in-memory readers never block, and are checked before each read; anything else (a pipe,
// a terminal, a socket) is read in a goroutine.
func Interruptible(ctx context.Context, r io.Reader) io.Reader {
	switch x := r.(type) {
	case *os.File:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() {
			return reader{ctx, r}
		}
	case *bytes.Reader, *strings.Reader:
		return reader{ctx, r}
	}
	if ctx.Done() == nil {
		return r // never cancelled
	}
	return newAsyncReader(ctx, r)
}

// Reader is r, checked before each read: for readers that never block.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

// Open opens name for reading, giving up when ctx ends (the open of a FIFO with no
// writer blocks until one comes; the goroutine doing it is left to that).
func Open(ctx context.Context, name string) (*os.File, error) {
	type res struct {
		f   *os.File
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := os.Open(name)
		ch <- res{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
