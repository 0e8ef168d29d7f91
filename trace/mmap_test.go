package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kstranded/kstranded/trace/tracegen"
)

// parseFile parses the file name as trace parse does (an *os.File), with small chunks.
func parseFile(t *testing.T, name, pattern string) (*Report, FileStats, error) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opt := Options{}
	if pattern != "" {
		opt.Pattern = regexp.MustCompile(pattern)
	}
	a := NewAnalyzer(opt)
	st, err := a.Parse(filepath.Base(name), f, FormatAuto)
	return a.Finish(), st, err
}

// A mapped file reads exactly as the same bytes read with read(2): every part of the
// report, the stats, on the real captures (JS client and librdkafka), with a byte-order
// mark, in chunks small enough to cut them thousands of times.
func TestAMappedFileReadsAsTheSameBytesRead(t *testing.T) {
	defer func(size, workers int, min int64) { rdChunkSize, rdWorkers, mapMinSize = size, workers, min }(rdChunkSize, rdWorkers, mapMinSize)
	defer func() { afterMap = nil }()
	rdChunkSize, rdWorkers, mapMinSize = 4096, 3, 0
	rdlog, err := os.ReadFile(filepath.Join("testdata", "rdkafka-go-consumer.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, pattern string
		data          []byte
	}{
		{"default-debug.log", jsPlainPattern, jsCapture(t, "v1.10.0-default-debug.log.gz")},
		{"json.log", jsJSONPattern, jsCapture(t, "v1.10.1-json.log.gz")},
		{"rdkafka.log", "", rdlog},
		{"bom.log", "", append([]byte("\xef\xbb\xbf"), rdlog...)},
	} {
		name := filepath.Join(dir, c.name)
		if err := os.WriteFile(name, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		mapped := 0
		afterMap = func(*os.File) { mapped++ }
		got, gotSt, err := parseFile(t, name, c.pattern)
		if err != nil || mapped != 1 {
			t.Fatalf("%s: err %v, mapped %d times, want once", c.name, err, mapped)
		}
		want, wantSt := parseBytes(t, c.name, c.data, FormatAuto, c.pattern)
		if gotSt.Lines != wantSt.Lines || gotSt.Events != wantSt.Events || gotSt.Matched != wantSt.Matched || gotSt.Ignored != wantSt.Ignored || gotSt.Malformed != wantSt.Malformed {
			t.Fatalf("%s: stats %+v, want %+v", c.name, gotSt, wantSt)
		}
		if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
			t.Fatalf("%s: the mapped file's report differs from the read one", c.name)
		}
	}
}

// A file cut short while it is mapped (another process truncating a log being read): the
// parse ends with an error naming it, not with SIGBUS.
func TestAFileTruncatedWhileMappedEndsTheParseWithAnError(t *testing.T) {
	defer func(size int, min int64) { rdChunkSize, mapMinSize = size, min }(rdChunkSize, mapMinSize)
	defer func() { afterMap = nil }()
	rdChunkSize, mapMinSize = 64<<10, 0
	var b bytes.Buffer
	if err := tracegen.WriteBusyRdkafkaLog(&b, 4<<20, 20); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "busy.log")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	afterMap = func(f *os.File) {
		if err := os.Truncate(f.Name(), 256<<10); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := parseFile(t, name, "")
	if !errors.Is(err, errTruncated) {
		t.Fatalf("err = %v, want %v", err, errTruncated)
	}
}

// A line longer than a chunk is one malformed line: the chunk that held it gives no
// records of its own (it used to fold again the records of its previous use).
func TestALineLongerThanAChunkAddsNoRecords(t *testing.T) {
	defer func(size, workers int) { rdChunkSize, rdWorkers = size, workers }(rdChunkSize, rdWorkers)
	rdChunkSize, rdWorkers = 1024, 1
	var b bytes.Buffer
	if err := tracegen.WriteBusyRdkafkaLog(&b, 64<<10, 4); err != nil {
		t.Fatal(err)
	}
	want, wantSt := parseBytes(t, "busy.log", b.Bytes(), FormatLibrdkafka, "")
	long := append(append([]byte{}, b.Bytes()...), bytes.Repeat([]byte("x"), 3000)...)
	long = append(long, '\n')
	got, st := parseBytes(t, "busy.log", long, FormatLibrdkafka, "")
	if st.Events != wantSt.Events || st.Malformed != wantSt.Malformed+1 || st.Lines != wantSt.Lines+1 {
		t.Fatalf("stats %+v, want %+v and one malformed line more", st, wantSt)
	}
	if len(got.Findings) != len(want.Findings) {
		t.Fatalf("findings %d, want %d", len(got.Findings), len(want.Findings))
	}
}
