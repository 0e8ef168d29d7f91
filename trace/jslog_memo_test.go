package trace

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The memo of an object's repeated lines (jsLineMemo) is an optimisation only: with it and
// without it, every DefaultLogger capture of the real client (trace/testdata/jsclient and
// the suite's captures in testenv/jsclient/captures) and objects made to nearly repeat
// give the same report and counts, whatever the chunk size.
func TestTheLineMemoReadsAsTheLines(t *testing.T) {
	defer func(size, workers int) { rdChunkSize, rdWorkers = size, workers }(rdChunkSize, rdWorkers)
	defer func() { noLineMemo = false }()
	const pattern = `^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)(?: member=\S+)?$`
	inputs := map[string][]byte{}
	for _, dir := range []string{filepath.Join("testdata", "jsclient"), filepath.Join("..", "testenv", "jsclient", "captures")} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log.gz") || strings.Contains(path, "json") {
				return err
			}
			inputs[path] = gunzipFile(t, path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(inputs) < 40 {
		t.Fatalf("%d DefaultLogger captures found, want the suite's", len(inputs))
	}
	inputs["nearly repeated objects"] = nearlyRepeatedObjects(rand.New(rand.NewSource(1)), 3000)
	hits := 0
	for name, data := range inputs {
		for _, size := range []int{1 << 20, 1531} {
			rdChunkSize, rdWorkers = size, 2
			noLineMemo = true
			want, wantSt := parseBytes(t, name, data, FormatJSClient, pattern)
			noLineMemo = false
			got, st := parseBytes(t, name, data, FormatJSClient, pattern)
			if !reflect.DeepEqual(st, wantSt) {
				t.Fatalf("%s, chunk %d: stats %+v, without the memo %+v", name, size, st, wantSt)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
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

func gunzipFile(t *testing.T, path string) []byte {
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
