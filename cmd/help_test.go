package cmd

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"
)

var updateHelp = flag.Bool("update", false, "rewrite the help golden files in testdata/help")

// commandPaths lists every command a user can ask help for, as its words after
// "kstranded" (the root is the empty path).
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	out := [][]string{prefix}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, commandPaths(sub, append(append([]string(nil), prefix...), sub.Name()))...)
		}
	}
	return out
}

func helpOutput(t *testing.T, path []string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(append([]string(nil), path...), "--help"), IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("%v --help: exit %d: %s", path, code, errb.String())
	}
	return out.String()
}

// TestHelpFitsTheTerminal prints every command's help at 80, 100 and 200 columns: no
// line is wider than the terminal (rewind's help had 54 lines over 80 columns, the
// longest 428), and testdata/help holds each (go test ./cmd -run TestHelp -update).
func TestHelpFitsTheTerminal(t *testing.T) {
	paths := commandPaths(NewRoot(&Globals{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}}), nil)
	for _, width := range []int{80, 100, 200} {
		for _, path := range paths {
			name := strings.Join(append([]string{"kstranded"}, path...), "-")
			t.Run(fmt.Sprintf("%s-%d", name, width), func(t *testing.T) {
				t.Setenv("COLUMNS", fmt.Sprint(width))
				got := helpOutput(t, path)
				for i, l := range strings.Split(got, "\n") {
					if w := lipgloss.Width(l); w > width {
						t.Errorf("line %d is %d columns wide at %d:\n%s", i+1, w, width, l)
					}
				}
				file := filepath.Join("testdata", "help", fmt.Sprintf("%s-%d.golden", name, width))
				if *updateHelp {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (go test ./cmd -run TestHelp -update)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", file, got, want)
				}
			})
		}
	}
}

// TestHelpWrapsWithoutLosingAWord: the reflowed help says what the unwrapped help says,
// word for word, in order (the " \" ending a wrapped command line aside).
func TestHelpWrapsWithoutLosingAWord(t *testing.T) {
	root := NewRoot(&Globals{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}})
	for _, path := range commandPaths(root, nil) {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		words := func(s string) []string {
			var out []string
			for _, wd := range strings.Fields(s) {
				if wd != `\` {
					out = append(out, wd)
				}
			}
			return out
		}
		plain, wrapped := words(helpText(c, 0)), words(helpText(c, 80))
		for i := range max(len(plain), len(wrapped)) {
			if i >= len(plain) || i >= len(wrapped) || plain[i] != wrapped[i] {
				t.Errorf("kstranded %s: word %d differs once wrapped: %q", strings.Join(path, " "), i, wrapped[max(0, min(i, len(wrapped)-1)):min(i+5, len(wrapped))])
				break
			}
		}
	}
}

// TestHelpOnAPipeIs80ColumnsAndOnATerminalItsWidth: on a pipe (no $COLUMNS) help is
// wrapped at 80; on a terminal of 60 columns, at 60.
func TestHelpOnAPipeIs80ColumnsAndOnATerminalItsWidth(t *testing.T) {
	t.Setenv("COLUMNS", "")
	widest := func(s string) int {
		n := 0
		for _, l := range strings.Split(strings.ReplaceAll(s, "\r", ""), "\n") {
			n = max(n, lipgloss.Width(l))
		}
		return n
	}
	if w := widest(helpOutput(t, []string{"rewind"})); w > 80 || w < 70 {
		t.Errorf("on a pipe the widest help line is %d columns, want at most 80 (and near it)", w)
	}
	tty, ctl := openPTY(t, 60, 50)
	shown := make(chan string)
	go func() {
		b, _ := io.ReadAll(ctl)
		shown <- string(b)
	}()
	var errb bytes.Buffer
	code := run(context.Background(), []string{"rewind", "--help"}, IO{In: strings.NewReader(""), Out: tty, Err: &errb})
	tty.Close()
	screen := <-shown
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if w := widest(screen); w > 60 || w < 50 {
		t.Errorf("on a 60-column terminal the widest help line is %d columns:\n%s", w, screen)
	}
}
