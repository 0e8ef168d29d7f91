package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while the process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLongRunningCommandsExit130OnSIGINTAndSIGTERM sends real signals once each command
// is observably running (its first output, or the group it consumes in has a member), and
// expects 130: the code scripts branch on for "interrupted", in every command.
func TestLongRunningCommandsExit130OnSIGINTAndSIGTERM(t *testing.T) {
	f := committedGroup(t, "signals")
	conn := append([]string{"--timeout", "20s"}, f.conn...)
	group := "kstranded-signals-" + f.topic
	keepGroup(group)
	hasOutput := func(s string) func(stdout string) bool {
		return func(stdout string) bool { return strings.Contains(stdout, s) }
	}
	groupHasMember := func(string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gs, err := admin(t).DescribeGroups(ctx, group)
		if err != nil {
			return false
		}
		g, ok := gs[group]
		return ok && len(g.Members) > 0
	}
	cases := []struct {
		name  string
		args  []string
		ready func(stdout string) bool
	}{
		{"broker", []string{"broker"}, hasOutput("bootstrap:")},
		{"inspect --watch", append([]string{"inspect", "--group", f.group, "--watch", "1s"}, conn...), hasOutput("group " + f.group)},
		// one group for every signal: from the second run on it holds the first's commits
		{"repro consume", append([]string{"repro", "consume", "--group", group, "--use-existing-group", "--topic", f.topic}, conn...), groupHasMember},
	}
	for _, tc := range cases {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tc.name+" "+sig.String(), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, tc.args...)
				var stdout, stderr syncBuffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(90 * time.Second)
				for !tc.ready(stdout.String() + stderr.String()) { // on a pipe the prose (the group line) is on stderr
					if time.Now().After(deadline) {
						_ = cmd.Process.Kill()
						_ = cmd.Wait()
						t.Fatalf("never ready\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
					}
					time.Sleep(100 * time.Millisecond) // polling for readiness, not waiting out a race
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				err := cmd.Wait()
				var exit *exec.ExitError
				code := 0
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != 130 {
					t.Fatalf("exit %d after %s, want 130\nstdout:\n%s\nstderr tail:\n%.2000s", code, sig, stdout.String(), stderr.String())
				}
			})
		}
	}
}

// TestAnInterruptEndsAReadOfEvidenceWithinASecond: issue 27 item 8. A FIFO with no writer
// (open blocks), a pipe that stays quiet (stdin) and one that never ends (`yes 0:1 |`):
// inspect, rewind and trace parse exit 130 within a second of SIGINT, whatever they were
// reading. Evidence is read as a stream (issue 27 item 7), so an endless input is read in
// bounded memory until the interrupt, and there is no heap of gigabytes to let go of
// (that took up to 2.2 s under CI load); /dev/zero is refused at once as binary data.
func TestAnInterruptEndsAReadOfEvidenceWithinASecond(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	conn := []string{"--brokers", env.Brokers, "--group", "kstranded-nobody", "--timeout", "20s"}
	cases := []struct {
		name  string
		args  []string
		stdin string // "": none; "quiet": a writer that never writes; "endless": delivery lines without end
	}{
		{"inspect on a FIFO with no writer", append([]string{"inspect", "--delivered", fifo}, conn...), ""},
		{"rewind on a FIFO with no writer", append([]string{"rewind", "--delivered", fifo}, conn...), ""},
		{"trace parse on a FIFO with no writer", []string{"trace", "parse", fifo}, ""},
		{"inspect on a quiet stdin", append([]string{"inspect", "--delivered", "-"}, conn...), "quiet"},
		{"inspect on an endless stdin", append([]string{"inspect", "--delivered", "-"}, conn...), "endless"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			if c.stdin != "" {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pw.Close() // quiet: a writer that never writes
				defer pr.Close()
				cmd.Stdin = pr
				if c.stdin == "endless" {
					lines := bytes.Repeat([]byte("0:1\n"), 16<<10)
					go func() {
						for {
							if _, err := pw.Write(lines); err != nil {
								return // the command exited: the pipe is broken, or closed
							}
						}
					}()
				}
			}
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// the command is in its read (or open) once it has had time to get there; the
			// check below is what matters: the exit after the signal, not when it came
			time.Sleep(time.Second)
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			at := time.Now()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 130 {
					t.Fatalf("exit %v, want 130\n%s", err, out.String())
				}
				after := time.Since(at)
				t.Logf("exited %s after SIGINT", after.Round(time.Millisecond))
				if after > time.Second {
					t.Errorf("exited %s after SIGINT, want within a second\n%s", after.Round(time.Millisecond), out.String())
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("still running 10 s after SIGINT\n%s", out.String())
			}
		})
	}
}

// /dev/zero as evidence is refused at once as binary data (exit 1): the reader looks at
// the first bytes before it reads on (issue 27 item 7; it read gigabytes of zeros until
// interrupted).
func TestDevZeroAsEvidenceIsRefusedAtOnce(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "inspect", "--delivered", "/dev/zero", "--brokers", env.Brokers,
		"--group", "kstranded-nobody", "--timeout", "20s").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "/dev/zero: binary data") {
		t.Fatalf("exit %v, want 1 naming binary data\n%s", err, out)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s, want the refusal at once", took.Round(time.Millisecond))
	}
}
