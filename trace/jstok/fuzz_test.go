package jstok

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// addCaptureSeeds adds lines of the JS client's real captures (../testdata/jsclient, the
// DefaultLogger's and a JSON logger's output) as seeds, a few of each kind of line.
func addCaptureSeeds(f *testing.F) {
	files, _ := filepath.Glob("../testdata/jsclient/*.log.gz")
	if len(files) == 0 {
		f.Fatal("no captures in ../testdata/jsclient")
	}
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 1<<20)
		for n := 0; n < 40 && sc.Scan(); n++ {
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
		fh.Close()
	}
}

// Whatever the line: no tokenizer panics or loops; the compact JSON reader reads the same
// fields as the general one wherever it takes a line; a simple inspect field reads as
// Inspect reads it.
func FuzzTokenize(f *testing.F) {
	addCaptureSeeds(f)
	f.Add([]byte(`{"level":20,"time":1796225597050,"fac":"FETCH","timestamp":1796225597051,"name":"n","msg":"m"}`))
	f.Add([]byte(`{ "fac": "X", "msg": "say \"hi\" \u00e9", "kafka": {"offset": [1, "}"]} }`))
	f.Add([]byte(`{ message: 'a \'b\' \x41\u{1F600}', fac: "BINDING", timestamp: 1700000000000, name: undefined }`))
	f.Add([]byte("  message: '[thrd:b/0]: long text' +"))
	f.Add([]byte("  fac: 'CONSUME',"))
	f.Add([]byte("\x1b[32m  timestamp: 1700000000000,\x1b[39m"))
	f.Fuzz(func(t *testing.T, line []byte) {
		_ = UnescapeJS(nil, line)
		_ = UnescapeJSON(nil, line)
		if out := StripANSI(nil, line); len(out) > len(line) {
			t.Fatalf("StripANSI grew %q to %q", line, out)
		}
		for _, multi := range []bool{false, true} {
			in := NewInspect(line, multi)
			for n := 0; in.Next(); n++ {
				if n > len(line) || len(in.Key) == 0 {
					t.Fatalf("%q: field %d, key %q", line, n, in.Key)
				}
			}
		}
		if key, val, isStr, ok := SimpleField(line); ok {
			in := NewInspect(line[2:], true)
			if !in.Next() || in.Err != "" || string(in.Key) != string(key) || string(in.Val) != string(val) || in.Str != isStr {
				t.Fatalf("%q: simple %q %q %v, Inspect %q %q %v (%q)", line, key, val, isStr, in.Key, in.Val, in.Str, in.Err)
			}
		}
		if len(line) == 0 || line[0] != '{' {
			return
		}
		type field struct {
			key, val string
			str      bool
		}
		var fast, general []field
		c := NewCompact(line)
		for c.Next() {
			fast = append(fast, field{string(c.Key), string(c.Val), c.Str})
		}
		j := NewJSON(line)
		for j.Next() {
			general = append(general, field{string(j.Key), string(j.Val), j.Str})
		}
		if c.Bad {
			return
		}
		if j.Err != "" || len(fast) != len(general) {
			t.Fatalf("%q: compact %+v, general %+v (%q)", line, fast, general, j.Err)
		}
		for i := range fast {
			if fast[i] != general[i] {
				t.Fatalf("%q: compact %+v, general %+v", line, fast, general)
			}
		}
	})
}

// A one-line object's fields, an escaped string and a continuation, as Inspect reads them.
func TestInspectReadsTheFieldsOfAnObject(t *testing.T) {
	in := NewInspect([]byte(`message: 'it\'s', fac: 'BINDING', n: { a: [1, 2] }, name: "x"`), false)
	var got []string
	for in.Next() {
		v := in.Val
		if in.Esc {
			v = UnescapeJS(nil, v)
		}
		got = append(got, string(in.Key)+"="+string(v))
	}
	want := []string{"message=it's", "fac=BINDING", "n={ a: [1, 2] }", "name=x"}
	if in.Err != "" || !slices.Equal(got, want) {
		t.Fatalf("%q (%q), want %q", got, in.Err, want)
	}
	in = NewInspect([]byte(`message: 'first part' +`), true)
	if !in.Next() || !in.Cont || in.Next() {
		t.Fatalf("a continued string: cont %v", in.Cont)
	}
}
