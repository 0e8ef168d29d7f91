package cmd

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a buffer a running command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// helpCodeFor returns the code of the "Exit codes:" line of a help text whose meaning or
// gloss contains phrase, or -1.
func helpCodeFor(help, phrase string) int {
	codeLine := regexp.MustCompile(`^\s+(\d+)  `)
	code := -1
	_, section, _ := strings.Cut(help, "Exit codes:\n")
	for _, l := range strings.Split(section, "\n") {
		if m := codeLine.FindStringSubmatch(l); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
		if strings.Contains(l, phrase) {
			return code
		}
	}
	return -1
}

// TestBrokerExitsWithTheCodeItsHelpGivesForCtrlC: the help promised 0 for Ctrl-C while
// run() ends every interrupted command with 130 (README's exit-code table). The code the
// help gives for Ctrl-C is the one a serving broker exits with when interrupted (the
// signal's context cancelled, as Main's signal.NotifyContext does).
func TestBrokerExitsWithTheCodeItsHelpGivesForCtrlC(t *testing.T) {
	code, help, _ := runArgs(t, "broker", "--help")
	want := helpCodeFor(help, "Ctrl-C")
	if code != 0 || want < 0 {
		t.Fatalf("exit %d; no exit code for Ctrl-C in the help:\n%s", code, help)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"broker"}, IO{In: strings.NewReader(""), Out: out, Err: errb})
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "serving until interrupted"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broker did not start:\n%s\n%s", out, errb)
		}
	}
	cancel()
	select {
	case got := <-done:
		if got != want {
			t.Fatalf("interrupted broker exits %d; its help says %d for Ctrl-C:\n%s", got, want, help)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the broker did not stop within 10s of the interrupt")
	}
}
