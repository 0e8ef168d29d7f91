package integration

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 16 §8, trace part: each malformed input yields a named error or a marked result
// and the documented exit code, never a panic. The binary is run as a user would.
func TestTraceParseFaults(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v110, err := os.ReadFile(filepath.Join("..", "trace", "testdata", "kstranded-v1.10.0.trace"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(v110)
	zw.Close()
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(i*7919 + i/13) // deterministic bytes with NULs, no structure
	}
	fetch := func(p int) string {
		return fmt.Sprintf(`{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":%d,"first":0,"last":9,"count":10}]}`, p)
	}
	var many strings.Builder
	for p := 0; p < 3000; p++ {
		many.WriteString(fetch(p) + "\n")
	}
	longLine := `{"ts":"2026-03-02T14:03:40Z","ev":"seek","partition":0,"offset":1,"reason":"` + strings.Repeat("x", 2<<20) + `"}`

	cases := []struct {
		name   string
		args   []string
		code   int
		outHas []string
		errHas []string
	}{
		{"an empty file is no evidence (exit 6), as in every command", []string{write("empty.trace", nil)}, 6, nil, []string{"empty.trace: empty", "NO EVIDENCE"}},
		{"a missing file is an error naming it", []string{filepath.Join(dir, "missing.trace")}, 1, nil, []string{"missing.trace", "no such file"}},
		{"a directory is an error naming it", []string{dir}, 1, nil, []string{"is a directory"}},
		{"binary garbage is an error naming it", []string{write("garbage.bin", garbage)}, 1, nil, []string{"garbage.bin: binary data"}},
		{"a truncated gzip says so", []string{write("cut.trace.gz", gz.Bytes()[:gz.Len()/2])}, 1, nil, []string{"cut.trace.gz", "gzip stream truncated"}},
		{"a gzip header alone says so", []string{write("header.gz", gz.Bytes()[:5])}, 1, nil, []string{"header.gz", "gzip"}},
		{"a file whose every line is malformed is NO EVIDENCE (exit 6), not 'no findings'",
			[]string{"--format", "kstranded", write("bad.trace", []byte("{\"ev\":\"fetch\"}\n{nope\n\x00\x01\x02\n"))}, 6, nil,
			[]string{"3 malformed", "bad.trace: 3 of 3 lines malformed"}},
		{"a line over 1 MiB is counted malformed and named, the rest is read",
			[]string{write("long.trace", []byte(string(v110)+longLine+"\n"))}, 3, []string{"1 malformed", "line too long", "LOST"}, nil},
		{"CRLF line ends read as LF", []string{write("crlf.trace", bytes.ReplaceAll(v110, []byte("\n"), []byte("\r\n")))}, 3, []string{"LOST", "82-199"}, nil},
		{"lines cut mid-object are malformed and named, the rest is read",
			[]string{write("cut.trace", []byte(string(v110)+fetch(1)[:40]+"\n"))}, 3, []string{"1 malformed", "not a kstranded.trace/v1 JSON line"}, nil},
		{"partitions past --max-partitions: the result is marked INCOMPLETE and the exit is 1",
			[]string{"--max-partitions", "1000", write("many.trace", []byte(many.String()))}, 1,
			[]string{"INCOMPLETE", "2000 events about the partitions named after the first 1000 were not tracked"}, []string{"trace too large for the analysis limits"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := kstranded(t, time.Minute, append([]string{"trace", "parse"}, c.args...)...)
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d\n%s", r.Code, c.code, r)
			}
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
				t.Fatalf("panicked:\n%s", r)
			}
			for _, s := range c.outHas { // on a pipe the table is stdout, the prose stderr
				if !strings.Contains(r.Stdout+r.Stderr, s) {
					t.Errorf("output lacks %q\n%s", s, r)
				}
			}
			for _, s := range c.errHas {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr lacks %q\n%s", s, r)
				}
			}
		})
	}
}

// Issue 16 §1: SIGINT and SIGTERM stop trace parse with exit 130 and the partial result
// marked INTERRUPTED. The input is a pipe that stays open: more than the reader's buffers
// is written first (a pipe write returns once the reader took it, so the parse is running
// and its signal handler installed), then the signal is sent.
func TestTraceParseStopsOnSignalsWithThePartialResult(t *testing.T) {
	line := `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":0,"first":%d,"last":%d,"count":1}]}` + "\n"
	var in bytes.Buffer
	for i := 0; in.Len() < 4<<20; i++ {
		fmt.Fprintf(&in, line, i, i)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "trace", "parse", "-o", "json", "-")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			if _, err := io.Copy(stdin, bytes.NewReader(in.Bytes())); err != nil {
				t.Fatalf("writing the input: %v", err)
			}
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second): // a hang, not a timing assertion
				t.Fatalf("still running 30 s after %s", sig)
			}
			elapsed := time.Since(sent)
			stdin.Close()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d, want 130\nstderr: %s", code, stderr.String())
			}
			var doc struct {
				Interrupted bool `json:"interrupted"`
				Complete    bool `json:"complete"`
				Files       []struct {
					Lines   int  `json:"lines"`
					Stopped bool `json:"stopped"`
				} `json:"files"`
				Partitions []struct {
					Verdict string `json:"verdict"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not the JSON document: %v\n%.500s", err, stdout.String())
			}
			if !doc.Interrupted || doc.Complete || len(doc.Files) != 1 || !doc.Files[0].Stopped || doc.Files[0].Lines == 0 {
				t.Fatalf("document %+v: want interrupted, not complete, the file stopped after some lines", doc)
			}
			for _, p := range doc.Partitions {
				if p.Verdict == "OK" {
					t.Fatal("a partition judged OK in an interrupted parse")
				}
			}
			t.Logf("%s: exit 130 %s after the signal, %d lines read", sig, elapsed.Round(time.Millisecond), doc.Files[0].Lines)
		})
	}
}
