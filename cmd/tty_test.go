package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols × rows: the terminal side, written to as a
// command's stdout, and the controlling side, read for what the terminal shows.
func openPTY(t *testing.T, cols, rows uint16) (tty, ctl *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close(); ctl.Close() })
	return tty, ctl
}

// TestATableOnATerminalIsDrawnForTheTerminal: run() wraps stdout to know whether a
// command wrote anything (a JSON error goes to stdout only when nothing else did); the
// wrapper hid the terminal, and every table on a terminal came out in its pipe form
// (tab-separated, one value per cell). Through a real pseudo-terminal of 200 columns,
// simulate's table is boxed; through a pipe the same run is tab-separated.
func TestATableOnATerminalIsDrawnForTheTerminal(t *testing.T) {
	tty, ctl := openPTY(t, 200, 50)
	shown := make(chan string)
	go func() {
		b, _ := io.ReadAll(ctl) // ends with EIO once the terminal side is closed
		shown <- string(b)
	}()
	args := []string{"simulate"}
	var errb bytes.Buffer
	code := run(context.Background(), args, IO{In: strings.NewReader(""), Out: tty, Err: &errb})
	tty.Close()
	screen := <-shown
	if code != 3 {
		t.Fatalf("exit %d, want 3 (the seed loses records)\n%s\n%s", code, screen, errb.String())
	}
	if !strings.Contains(screen, "┌") || strings.Contains(screen, "\t") {
		t.Fatalf("on a 200-column terminal the table is not boxed:\n%s", screen)
	}
	var out bytes.Buffer
	if code := run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 3 {
		t.Fatalf("exit %d on a pipe", code)
	}
	if strings.Contains(out.String(), "┌") || !strings.Contains(out.String(), "\t") {
		t.Fatalf("on a pipe the table is not tab-separated:\n%s", out.String())
	}
}
