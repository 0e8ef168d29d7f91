package integration

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
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
