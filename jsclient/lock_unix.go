//go:build unix

package jsclient

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockInstall takes the exclusive lock of path (flock(2), the lock install.sh takes with
// flock(1) on the same file), waiting until it is free or ctx ends: two installs of one
// release, two `repro --real-client` runs or a run beside the agreement suite, must not
// remove each other's half-made directory. Closing the file releases the lock.
func lockInstall(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
