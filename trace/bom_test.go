package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/textenc"
)

// A UTF-8 byte-order mark before a trace's header line must not drop the header (and
// with it the topic and group): the trace parses as it does without the mark, gzipped
// or not; a UTF-16 file is an error naming the encoding (issue 27, item 3).
func TestAByteOrderMarkKeepsTheTraceHeaderLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kstranded-v1.10.0.trace"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(append([]byte("\uFEFF"), data...))
	zw.Close()
	parse := func(in []byte) (FileStats, *Report) {
		a := NewAnalyzer(Options{})
		st, err := a.Parse("t", bytes.NewReader(in), FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		return st, a.Finish()
	}
	want, wr := parse(data)
	for name, in := range map[string][]byte{"plain": append([]byte("\uFEFF"), data...), "gzip": gz.Bytes()} {
		st, r := parse(in)
		if st.Format != FormatKstranded || st.Malformed != 0 || st.Events != want.Events || st.Lines != want.Lines {
			t.Errorf("%s: %+v, want %+v", name, st, want)
		}
		if r.Verdict != wr.Verdict || len(findings(r, RuleLoss)) != 1 || r.Settings["topic"] != wr.Settings["topic"] {
			t.Errorf("%s: verdict %s, settings %v; without the mark %s, %v", name, r.Verdict, r.Settings, wr.Verdict, wr.Settings)
		}
	}
	_, err = NewAnalyzer(Options{}).Parse("t16", strings.NewReader("\xFE\xFF\x00{"), FormatAuto)
	if !errors.Is(err, textenc.ErrEncoding) || !strings.Contains(err.Error(), "UTF-16 big-endian") || !strings.Contains(err.Error(), "t16") {
		t.Fatalf("UTF-16: err %v", err)
	}
}
