package trace

import (
	"bytes"
	"compress/gzip"
	stdjson "encoding/json"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The memos of repeated lines (jsLineMemo, jsonLineMemo) are an optimisation only: with
// them and without them, every capture of the real client (trace/testdata/jsclient and the
// suite's captures in testenv/jsclient/captures, DefaultLogger and JSON logger) and
// objects and lines made to nearly repeat give the same report and counts, whatever the
// chunk size.
func TestTheLineMemoReadsAsTheLines(t *testing.T) {
	defer func(size, workers int) { rdChunkSize, rdWorkers = size, workers }(rdChunkSize, rdWorkers)
	defer func() { noLineMemo = false }()
	const pattern = `^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)(?: member=\S+)?$`
	inputs := map[string][]byte{}
	nJSON := 0
	for _, dir := range []string{filepath.Join("testdata", "jsclient"), filepath.Join("..", "testenv", "jsclient", "captures")} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log.gz") {
				return err
			}
			if strings.Contains(path, "json") {
				nJSON++
			}
			inputs[path] = gunzipFile(t, path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(inputs) < 40 || nJSON < 2 {
		t.Fatalf("%d captures found, %d of them JSON, want the suite's", len(inputs), nJSON)
	}
	inputs["nearly repeated objects"] = nearlyRepeatedObjects(rand.New(rand.NewSource(1)), 3000)
	inputs["nearly repeated json"] = nearlyRepeatedJSON(rand.New(rand.NewSource(2)), 3000)
	hits := 0
	for name, data := range inputs {
		format, pat := FormatJSClient, pattern
		if strings.Contains(name, "json") {
			format, pat = FormatJSClientJSON, jsJSONPattern
		}
		for _, size := range []int{1 << 20, 1531} {
			rdChunkSize, rdWorkers = size, 2
			noLineMemo = true
			want, wantSt := parseBytes(t, name, data, format, pat)
			noLineMemo = false
			got, st := parseBytes(t, name, data, format, pat)
			if !reflect.DeepEqual(st, wantSt) {
				t.Fatalf("%s, chunk %d: stats %+v, without the memo %+v", name, size, st, wantSt)
			}
			g, _ := stdjson.Marshal(got)
			w, _ := stdjson.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("%s, chunk %d: the report differs from the one without the memo", name, size)
			}
		}
		hits++
	}
	t.Logf("%d inputs read the same with and without the memo", hits)
}

// nearlyRepeatedObjects makes objects whose lines repeat the ones before them at the same
// place, or differ from them by a byte, a comma, a key, a quote, an escape or a line.
func nearlyRepeatedObjects(r *rand.Rand, n int) []byte {
	var b strings.Builder
	msgs := []string{jsEnqueue, jsStore, jsCommit, "Attempting to fetch 20 messages to the message cache"}
	lines := func() []string {
		return []string{"  message: '" + msgs[r.Intn(len(msgs))] + "'", "  fac: 'CONSUME'", "  timestamp: 1700000000000", "  name: 'rdkafka#consumer-1'"}
	}
	prev := lines()
	for i := 0; i < n; i++ {
		cur := append([]string{}, prev...)
		cur[0] = "  message: '" + msgs[r.Intn(len(msgs))] + "'"
		for k := r.Intn(3); k > 0; k-- {
			j := r.Intn(len(cur))
			switch r.Intn(12) {
			case 0:
				cur[j] = strings.Replace(cur[j], "0", "1", 1)
			case 1:
				cur[j] = "  fac: 'OFFSET'"
			case 2:
				cur[j] = "  fac: 'BINDING'"
			case 3:
				cur[j] = "  timestamp: 1700000000001"
			case 4:
				cur[j] = "  name: 'rdkafka#producer-2'"
			case 5:
				cur[j] = "  message: '" + msgs[r.Intn(len(msgs))] + "'" // a second message
			case 6:
				cur[j] = "  fac: 'CON\\'SUME'" // an escape: the line reader's
			case 7:
				cur[j] = "  fac: \"CONSUME\"" // double quotes: the line reader's
			case 8:
				cur[j] = "  other: 42"
			case 9:
				cur[j], cur[(j+1)%len(cur)] = cur[(j+1)%len(cur)], cur[j] // another order
			case 10:
				cur = append(cur[:j], cur[j+1:]...) // a field less
				if len(cur) == 0 {
					cur = lines()
				}
			case 11:
				cur = lines()
			}
		}
		b.WriteString("{\n")
		for j, l := range cur {
			b.WriteString(l)
			if j < len(cur)-1 || r.Intn(8) == 0 {
				b.WriteString(",") // the last field without its comma, mostly
			}
			b.WriteString("\n")
		}
		b.WriteString("}\n")
		if r.Intn(4) == 0 {
			b.WriteString("delivered topic=t partition=0 offset=" + itoa(int64(r.Intn(20))) + "\n")
		}
		prev = cur
	}
	return []byte(b.String())
}

// nearlyRepeatedJSON makes a JSON logger's lines that repeat the fields of the line before
// them, or differ from them by a byte, a number's length, a key, a value's type, an escape,
// a space, a nested value or their order.
func nearlyRepeatedJSON(r *rand.Rand, n int) []byte {
	var b strings.Builder
	msgs := []string{jsEnqueue, jsStore, jsCommit, "Attempting to fetch 20 messages to the message cache"}
	fields := func() []string {
		// the logger's time and the client's timestamp apart: which one is read shows
		return []string{`"level":20`, `"time":1700000005000`, `"pid":7`, `"hostname":"h"`, `"fac":"CONSUME"`, `"timestamp":1700000000000`, `"name":"rdkafka#consumer-1"`}
	}
	prev := fields()
	for i := 0; i < n; i++ {
		cur := append([]string{}, prev...)
		for k := r.Intn(3); k > 0; k-- {
			j := r.Intn(len(cur))
			switch r.Intn(12) {
			case 0:
				cur[j] = strings.Replace(cur[j], "0", "1", 1)
			case 1:
				cur[j] = `"time":17000000000001` // longer
			case 2:
				cur[j] = `"time":170000000000`
			case 3:
				cur[j] = []string{`"fac":"BINDING"`, `"name":"rdkafka#producer-2"`, `"name":"rdkafka#consumer-1"`}[r.Intn(3)] // a producer's BINDING lines say nothing
			case 4:
				cur[j] = []string{`"timestamp":"2023-11-14T22:13:20.001Z"`, `"timestamp":"1700000000000"`, `"time":"1700000009000"`}[r.Intn(3)]
			case 5:
				cur[j] = `"name":"c"1"` // an escape: the general reader's
			case 6:
				cur[j] = `"pid": 7` // a space: the general reader's
			case 7:
				cur[j] = []string{`"x":{"a":1}`, `"fac":7`, `"name":null`, `"msg":42`}[r.Intn(4)] // not strings: not the client's
			case 8:
				cur[j], cur[(j+1)%len(cur)] = cur[(j+1)%len(cur)], cur[j]
			case 9:
				cur = append(cur[:j], cur[j+1:]...)
				if len(cur) == 0 {
					cur = fields()
				}
			case 10:
				cur[j] = `"msg":"` + msgs[r.Intn(len(msgs))] + `"` // a message before the last
			case 11:
				cur = fields()
			}
		}
		b.WriteString("{" + strings.Join(cur, ","))
		if r.Intn(10) > 0 {
			b.WriteString(`,"msg":"` + msgs[r.Intn(len(msgs))] + `"`)
		}
		b.WriteString("}\n")
		if r.Intn(4) == 0 {
			b.WriteString(`{"topic":"t","partition":0,"offset":"` + itoa(int64(r.Intn(20))) + `","msg":"delivered"}` + "\n")
		}
		prev = cur
	}
	return []byte(b.String())
}

func gunzipFile(t testing.TB, path string) []byte {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzLineMemo: any input reads the same with the memos and without them, either format.
func FuzzLineMemo(f *testing.F) {
	f.Add(nearlyRepeatedObjects(rand.New(rand.NewSource(3)), 6), false)
	f.Add(nearlyRepeatedJSON(rand.New(rand.NewSource(4)), 6), true)
	f.Fuzz(func(t *testing.T, data []byte, json bool) {
		defer func() { noLineMemo = false }()
		format, pat := FormatJSClient, jsPlainPattern
		if json {
			format, pat = FormatJSClientJSON, jsJSONPattern
		}
		read := func(off bool) (string, FileStats) {
			noLineMemo = off
			a := NewAnalyzer(Options{Pattern: regexp.MustCompile(pat)})
			st, err := a.Parse("fuzz", bytes.NewReader(data), format)
			if err != nil {
				return "error: " + err.Error(), st
			}
			r, _ := stdjson.Marshal(a.Finish())
			return string(r), st
		}
		want, wantSt := read(true)
		got, st := read(false)
		if got != want || !reflect.DeepEqual(st, wantSt) {
			t.Fatalf("with the memo:\n%s\n%+v\nwithout:\n%s\n%+v", got, st, want, wantSt)
		}
	})
}

// fieldReads is the set of keys field's switch reads: a key it reads changes the object,
// one it does not leaves the object as it was, whatever the value.
func TestFieldReadsIsTheKeysFieldReads(t *testing.T) {
	for _, key := range []string{"msg", "message", "fac", "name", "timestamp", "time", "level", "pid", "hostname", "topic", "partition", "offset", "Fac", "ts", ""} {
		changed := false
		for _, json := range []bool{false, true} {
			for _, isStr := range []bool{false, true} {
				s := &jsScanner{json: json}
				s.obj.reset(0)
				before := s.obj
				s.field([]byte(key), []byte("1700000000000"), isStr, false, true)
				s.endFields()
				changed = changed || !reflect.DeepEqual(s.obj, before)
			}
		}
		if changed != fieldReads([]byte(key)) {
			t.Errorf("key %q: field changes the object: %v, fieldReads says %v", key, changed, fieldReads([]byte(key)))
		}
	}
}
