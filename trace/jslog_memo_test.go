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
	inputs["nearly repeated polls"] = nearlyRepeatedPolls(rand.New(rand.NewSource(6)), 3000, false)
	inputs["nearly repeated polls json"] = nearlyRepeatedPolls(rand.New(rand.NewSource(7)), 3000, true)
	// a JSON line whose colour codes, stripped, leave one (ESC ESC[0m [31m: ESC[31m), then
	// that line as it was read: a line read without its codes is not kept, for a line of
	// the file that repeats it has codes to strip
	stripped := func(ts int, topic string) string {
		return `{"level":20,"time":1,"fac":"FETCH","timestamp":17000000000` + itoa(int64(ts)) + `,"name":"rdkafka#consumer-1","msg":"[thrd:b/0]: b/0: Fetch topic ` +
			topic + ` [0] at offset 5 (leader epoch 0, current leader epoch 0, v2)"}` + "\n"
	}
	inputs["json: colour codes that make colour codes"] = []byte(stripped(10, "t\x1b\x1b[0m[31mx") + stripped(11, "t\x1b[31mx") + stripped(12, "t\x1b[31mx"))
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

// The memo of objects (jsObjectMemo) takes an object that repeats one read before but for
// its times' digits as read: on a long poll's objects that nearly repeat (the times
// moving, of another length, a string or not a number, the offset, partition, fac or name
// changing, a field more, a producer's), in a DefaultLogger's objects and a JSON logger's
// lines, a chunk scanned with it gives the records, lines and counts of the chunk scanned
// without it, and most of the objects are taken from it.
func TestTheObjectMemoReadsARepeatAtItsOwnTime(t *testing.T) {
	for _, json := range []bool{false, true} {
		data := nearlyRepeatedPolls(rand.New(rand.NewSource(5)), 20000, json)
		want, _ := scanObjects(data, json, false)
		got, s := scanObjects(data, json, true)
		if len(got.recs) < 500 || !reflect.DeepEqual(got.recs, want.recs) {
			t.Fatalf("json %v: %d records with the memo, %d without, or they differ", json, len(got.recs), len(want.recs))
		}
		if got.lines != want.lines || got.nonblank != want.nonblank || got.matched != want.matched || got.malformed != want.malformed ||
			!reflect.DeepEqual(got.firstErrs, want.firstErrs) {
			t.Fatalf("json %v: counts with the memo %d/%d/%d/%d %v, without %d/%d/%d/%d %v", json, got.lines, got.nonblank, got.matched, got.malformed,
				got.firstErrs, want.lines, want.nonblank, want.matched, want.malformed, want.firstErrs)
		}
		if s.objs.hits < 10000 {
			t.Fatalf("json %v: %d objects of 20,000 taken from the memo, want most", json, s.objs.hits)
		}
		t.Logf("json %v: %d records, %d objects from the memo, %d misses", json, len(got.recs), s.objs.hits, s.objs.misses)
	}
}

// nearlyRepeatedPolls makes the objects of a consumer long-polling four partitions, a
// DefaultLogger's or a JSON logger's lines: the fetcher's positions again and again,
// their times moving, and now and then an offset moving on, another fac, name or field, a
// time of another length, a string or not a number, a field more in as many bytes as the
// timestamp's, a stored offset.
func nearlyRepeatedPolls(r *rand.Rand, n int, json bool) []byte {
	var b strings.Builder
	offs := []int{0, 0, 0, 0}
	ts := int64(1700000000000)
	for i := 0; i < n; i++ {
		p := i % len(offs)
		if r.Intn(100) == 0 {
			offs[p] += 1 + r.Intn(3)
		}
		ts += int64(r.Intn(2))
		msg := "[thrd:b/0]: b/0: Fetch topic t [" + itoa(int64(p)) + "] at offset " + itoa(int64(offs[p])) + " (leader epoch 0, current leader epoch 0, v2)"
		fac, name, tsText, timeText, extra, after := "FETCH", "rdkafka#consumer-1", itoa(ts), itoa(ts+int64(r.Intn(3))), "", ""
		q, sep := "'", ": "
		if json {
			q, sep = `"`, ":"
		}
		switch r.Intn(170) {
		case 0:
			fac = "OFFSET"
			msg = "[thrd:main]: Topic t [" + itoa(int64(p)) + "]: stored offset " + itoa(int64(offs[p])) + " (leader epoch 0), committed offset 0 (leader epoch 0): not including in commit"
		case 1:
			name = "rdkafka#producer-2"
		case 2:
			tsText = itoa(ts / 10) // a digit less
		case 3:
			tsText = itoa(ts) + "0" // a digit more
		case 4:
			tsText = q + itoa(ts) + q // a string
		case 5:
			tsText = itoa(ts)[:5] + "x" + itoa(ts)[6:] // not a number
		case 6:
			extra = "other" + sep + "42"
			if json {
				extra = `"other":42`
			}
		case 7:
			fac = "CONSUME"
		case 8: // two of them: the last counts
			if json {
				tsText = itoa(ts) + `,"timestamp":` + itoa(ts+5)
			} else {
				tsText = itoa(ts) + ",\n  timestamp: " + itoa(ts+5)
			}
		case 9: // as many bytes as the digits, a field more
			if json {
				tsText = itoa(ts)[:1] + `,"a":` + itoa(ts)[7:]
			} else {
				tsText = itoa(ts)[:1] + ",\n  a: " + itoa(ts)[8:]
			}
		case 10:
			timeText = itoa(ts / 1000) // a JSON logger's time in seconds, of another length
		case 11:
			timeText = `"2023-11-14T22:13:20.001Z"`
		case 12:
			tsText = "" // no timestamp: a JSON logger's time is read
		case 13:
			extra = `"x": 1` // a space: not a compact line
			if !json {
				extra = "x: 1"
			}
		case 14:
			after = "}" // more after the object
		}
		if json {
			b.WriteString(`{"level":20,"time":` + timeText + `,"pid":7,"fac":"` + fac + `",`)
			if extra != "" {
				b.WriteString(extra + ",")
			}
			if tsText != "" {
				b.WriteString(`"timestamp":` + tsText + ",")
			}
			b.WriteString(`"name":"` + name + `","msg":"` + msg + `"}` + after + "\n")
			if r.Intn(10) == 0 {
				b.WriteString(`{"topic":"t","partition":` + itoa(int64(p)) + `,"offset":"` + itoa(int64(offs[p])) + `","msg":"delivered"}` + "\n")
			}
			continue
		}
		b.WriteString("{\n  message: '" + msg + "',\n  fac: '" + fac + "',\n")
		if extra != "" {
			b.WriteString("  " + extra + ",\n")
		}
		if tsText != "" {
			b.WriteString("  timestamp: " + tsText + ",\n")
		}
		b.WriteString("  name: '" + name + "'\n}" + after + "\n")
		if r.Intn(10) == 0 {
			b.WriteString("delivered topic=t partition=" + itoa(int64(p)) + " offset=" + itoa(int64(offs[p])) + "\n")
		}
	}
	return []byte(b.String())
}

// allDigits, eight bytes at a time, is a byte loop's answer for every byte in every place.
func TestAllDigitsIsAByteLoop(t *testing.T) {
	loop := func(b []byte) bool {
		for _, d := range b {
			if d < '0' || d > '9' {
				return false
			}
		}
		return true
	}
	b := []byte("12345678901234567")
	for n := 0; n <= len(b); n++ {
		for i := 0; i < n; i++ {
			for c := 0; c < 256; c++ {
				v := append([]byte{}, b[:n]...)
				v[i] = byte(c)
				if allDigits(v) != loop(v) {
					t.Fatalf("%q: allDigits %v", v, allDigits(v))
				}
			}
		}
	}
}

// The memos (jsObjectMemo, the line memos) change no reading of random client objects that
// nearly repeat: each chunk's records and counts, scanned twice by one scanner (what it
// keeps between chunks), and the report and stats in chunks of 1 MiB, 700 and 301 bytes.
func TestTheMemosReadRandomObjectsAsTheLines(t *testing.T) {
	defer func(size, workers int) { rdChunkSize, rdWorkers = size, workers }(rdChunkSize, rdWorkers)
	defer func() { noLineMemo = false }()
	hits := map[bool]int{}
	defer func() {
		t.Logf("memo hits: %v", hits)
		if !t.Failed() && (hits[false] < 1000 || hits[true] < 1000) {
			t.Errorf("the memo of objects was hardly used (hits by json: %v)", hits)
		}
	}()
	for seed := int64(0); seed < 60; seed++ {
		for _, json := range []bool{false, true} {
			data := randomClientObjects(rand.New(rand.NewSource(seed)), 400, json)
			scan := func(off bool) *rdChunk {
				noLineMemo = off
				s := jsChunks{json: json}.newScanner().(*jsScanner)
				c := &rdChunk{data: data}
				s.scan(c)
				s.scan(c) // again: state kept between chunks
				if !off {
					hits[json] += s.objs.hits
				}
				return c
			}
			w, g := scan(true), scan(false)
			if !reflect.DeepEqual(w.recs, g.recs) || w.lines != g.lines || w.nonblank != g.nonblank || w.matched != g.matched || w.malformed != g.malformed || !reflect.DeepEqual(w.firstErrs, g.firstErrs) {
				t.Fatalf("seed %d json %v: chunk differs", seed, json)
			}
			format, pat := FormatJSClient, jsPlainPattern
			if json {
				format, pat = FormatJSClientJSON, jsJSONPattern
			}
			for _, size := range []int{1 << 20, 700, 301} {
				rdChunkSize, rdWorkers = size, 2
				noLineMemo = true
				want, wantSt := parseBytes(t, "x", data, format, pat)
				noLineMemo = false
				got, st := parseBytes(t, "x", data, format, pat)
				gj, _ := stdjson.Marshal(got)
				wj, _ := stdjson.Marshal(want)
				if !reflect.DeepEqual(st, wantSt) || string(gj) != string(wj) {
					t.Fatalf("seed %d json %v size %d: report differs", seed, json, size)
				}
			}
		}
	}
}

// randomClientObjects makes n of the client's objects (json: a JSON logger's lines) drawn
// from a few that repeat, their digits changed at random: time digits of any length and
// leading zeros, two timestamps, a time, a string time, fields in another order or missing,
// BINDING, producers, an unknown fac, an unreadable Fetch line, ANSI codes in objects and
// lines, escapes, CRs, more after an object, another writer's line in one, delivery lines.
func randomClientObjects(r *rand.Rand, n int, json bool) []byte {
	var b strings.Builder
	msgs := []string{
		"[thrd:b/0]: b/0: Fetch topic t [0] at offset 5 (leader epoch 0, current leader epoch 0, v2)",
		"[thrd:b/0]: b/0: Fetch topic t [1] at offset 7 (leader epoch 0, current leader epoch 0, v2)",
		"[thrd:b/0]: b/0: Fetch topic t [1] at offset 8 (leader epoch 0, current leader epoch 0, v2)",
		jsEnqueue, jsStore, jsCommit, "Attempting to fetch 20 messages to the message cache", "Spawning 2 workers", "hello",
		"[thrd:b/0]: b/0: Fetch topic t [x] at offset 5",
	}
	facs := []string{"FETCH", "FETCH", "FETCH", "CONSUME", "OFFSET", "COMMIT", "BINDING", "CGRP"}
	names := []string{"rdkafka#consumer-1", "rdkafka#consumer-1", "rdkafka#producer-2", ""}
	tss := []string{"1700000000000", "1700000000001", "0000000000000", "0000000000099", "99999999999", "17", "1", "0"}
	type base struct {
		msg, fac, name, ts, tm string
		mut                    int
	}
	pool := make([]base, 2+r.Intn(5))
	for i := range pool {
		pool[i] = base{msgs[r.Intn(len(msgs))], facs[r.Intn(len(facs))], names[r.Intn(len(names))], tss[r.Intn(len(tss))], tss[r.Intn(len(tss))], r.Intn(30)}
	}
	digits := func(s string) string {
		b := []byte(s)
		for i := range b {
			if b[i] >= '0' && b[i] <= '9' && r.Intn(3) == 0 {
				b[i] = byte('0' + r.Intn(10))
			}
		}
		return string(b)
	}
	for i := 0; i < n; i++ {
		bs := pool[r.Intn(len(pool))]
		if r.Intn(15) == 0 {
			bs = base{msgs[r.Intn(len(msgs))], facs[r.Intn(len(facs))], names[r.Intn(len(names))], tss[r.Intn(len(tss))], tss[r.Intn(len(tss))], r.Intn(30)}
		}
		msg, fac, name, ts, tm, mut := bs.msg, bs.fac, bs.name, digits(bs.ts), digits(bs.tm), bs.mut
		if json {
			f := []string{`"level":20`, `"time":` + tm, `"fac":"` + fac + `"`, `"timestamp":` + ts, `"name":"` + name + `"`, `"msg":"` + msg + `"`}
			switch mut {
			case 0:
				f[1] = `"time":"2023-11-14T22:13:20.001Z"`
			case 1:
				f = append(f, `"timestamp":`+tss[r.Intn(len(tss))])
			case 2:
				f[3], f[5] = f[5], f[3]
			case 3:
				f = append(f[:3], f[4:]...)
			case 4:
				f = append(f, `"time":`+tss[r.Intn(len(tss))])
			case 5:
				f[0] = "\"level\":\x1b[31m20\x1b[0m"
			case 6:
				f[4] = `"name":"a\"b"`
			case 7:
				f[5] = `"message":"` + msg + `"`
			case 8:
				f = append([]string{`"timestamp":` + tss[r.Intn(len(tss))]}, f...)
			}
			line := "{" + strings.Join(f, ",") + "}"
			if r.Intn(20) == 0 {
				line = "  " + line
			}
			if r.Intn(20) == 0 {
				line += "\r"
			}
			b.WriteString(line + "\n")
			if r.Intn(8) == 0 {
				b.WriteString(`{"topic":"t","partition":0,"offset":"` + itoa(int64(r.Intn(20))) + `","msg":"delivered"}` + "\n")
			}
			continue
		}
		f := []string{"  message: '" + msg + "'", "  fac: '" + fac + "'", "  timestamp: " + ts, "  name: '" + name + "'"}
		switch mut {
		case 0:
			f = append(f, "  time: "+tm)
		case 1:
			f = append(f, "  timestamp: "+tss[r.Intn(len(tss))])
		case 2:
			f[0], f[2] = f[2], f[0]
		case 3:
			f[1] = "  fac: '\x1b[32m" + fac + "\x1b[39m'"
		case 4:
			f[2] = "  timestamp: \x1b[33m" + ts + "\x1b[39m"
		case 5:
			f = append(f[:2], f[3:]...)
		case 6:
			f = append(f, "\x1b[0m")
		case 7:
			f[3] = "  name: 'a\\'b'"
		case 8:
			f = append(f, "something else")
		}
		b.WriteString("{\n")
		for j, l := range f {
			b.WriteString(l)
			if j < len(f)-1 {
				b.WriteString(",")
			}
			if mut == 9 && j == 1 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		switch r.Intn(25) {
		case 0:
			b.WriteString("} x\n")
		case 1:
			b.WriteString("}\r\n")
		default:
			b.WriteString("}\n")
		}
		if r.Intn(8) == 0 {
			b.WriteString("delivered topic=t partition=0 offset=" + itoa(int64(r.Intn(20))) + "\n")
		}
	}
	return []byte(b.String())
}

// The memo of objects keeps no object longer than jsObjectMaxBytes, whatever their number:
// distinct long lines leave it empty, short ones fill it.
func TestTheObjectMemoKeepsNoLongObject(t *testing.T) {
	held := func(pad int) (n, bytes int) {
		var b strings.Builder
		for i := 0; i < 20000; i++ {
			b.WriteString(`{"level":20,"fac":"FETCH","timestamp":1700000000000,"name":"c","msg":"[thrd:b/0]: b/0: Fetch topic t [0] at offset ` +
				itoa(int64(i)) + " " + strings.Repeat("x", pad) + ` (leader epoch 0, current leader epoch 0, v2)"}` + "\n")
		}
		s := jsChunks{json: true}.newScanner().(*jsScanner)
		s.scan(&rdChunk{data: []byte(b.String())})
		for _, e := range s.objs.e {
			if cap(e.obj) > 0 {
				n, bytes = n+1, bytes+cap(e.obj)
			}
		}
		return n, bytes
	}
	if n, b := held(2000); n != 0 || b != 0 {
		t.Fatalf("%d objects of 2 KB held, %d bytes", n, b)
	}
	if n, b := held(10); n < 1000 || b > jsObjectMemoSize*jsObjectMaxBytes {
		t.Fatalf("%d short objects held, %d bytes", n, b)
	}
}

// A consumer of 1,000 partitions logs each one's position on every poll: the memo of
// objects holds them all, and takes nearly every repeat from it. With one entry a key
// (jsObjectMemoWays 1) about a fifth of the keys shared an entry with another, which each
// took in turn on every poll: a fifth of the repeats were read again.
func TestTheObjectMemoHoldsAThousandPartitions(t *testing.T) {
	const parts, polls = 1000, 10
	for _, json := range []bool{false, true} {
		data := positionPolls(parts, polls, json, func(_, p int) int64 { return int64(p % 7) })
		want, _ := scanObjects(data, json, false)
		got, s := scanObjects(data, json, true)
		if len(got.recs) < parts || !reflect.DeepEqual(got.recs, want.recs) || got.lines != want.lines || got.matched != parts*polls {
			t.Fatalf("json %v: %d records (%d without the memo), %d objects read, or they differ", json, len(got.recs), len(want.recs), got.matched)
		}
		// each set of 4 entries takes about one key: of 1,024 sets, the few given 5 or
		// more keys lose them on every poll (about 17 keys, 150 repeats; 0 to 37 keys in
		// 25 runs of a review, each with its own hash seed); one entry a key loses 160 or
		// more
		if repeats := parts * (polls - 1); s.objs.hits < repeats*90/100 {
			t.Fatalf("json %v: %d of %d repeats taken from the memo (%d misses), want 90 %%", json, s.objs.hits, repeats, s.objs.misses)
		}
		t.Logf("json %v: %d repeats from the memo, %d misses", json, s.objs.hits, s.objs.misses)
	}
}

// A busy consumer's positions are new on every fetch: the memo of objects, which would
// copy each object it reads whole, leaves them alone for a while after a trial of too few
// hits, in both shapes, whatever the lengths of the lines (a JSON line is compared only
// with lines of its length, which once kept the misses of such lines from being counted).
func TestTheObjectMemoLeavesABusyConsumerAlone(t *testing.T) {
	const parts, polls = 1000, 60
	for _, json := range []bool{false, true} {
		r := rand.New(rand.NewSource(7))
		data := positionPolls(parts, polls, json, func(_, p int) int64 {
			if p%20 == 0 {
				return 5 // an idle partition: its repeats are hits
			}
			d := int64(1000) // offsets of 4 to 9 digits
			for range r.Intn(6) {
				d *= 10
			}
			return d + r.Int63n(9*d)
		})
		want, _ := scanObjects(data, json, false)
		got, s := scanObjects(data, json, true)
		if !reflect.DeepEqual(got.recs, want.recs) || got.lines != want.lines || got.matched != parts*polls {
			t.Fatalf("json %v: %d records (%d without the memo), %d objects read, or they differ", json, len(got.recs), len(want.recs), got.matched)
		}
		// the memo's clock counts the objects it took or kept: the 4,096 that fill it, then
		// 64 misses and their hits a trial, a trial every 1,024 objects left alone
		if n := int(s.objs.clock); n > parts*polls/2 {
			t.Fatalf("json %v: the memo took or kept %d of %d objects, want it left alone for most", json, n, parts*polls)
		}
		t.Logf("json %v: the memo took or kept %d of %d objects", json, s.objs.clock, parts*polls)
	}
}

// scanObjects scans data, a JS client's log (json: a JSON logger's), as one chunk, with the
// memos of lines and objects or without them.
func scanObjects(data []byte, json, memo bool) (*rdChunk, *jsScanner) {
	defer func() { noLineMemo = false }()
	noLineMemo = !memo
	s := jsChunks{json: json}.newScanner().(*jsScanner)
	c := &rdChunk{data: data}
	s.scan(c)
	return c, s
}

// positionPolls makes the fetcher's positions of a consumer of parts partitions over polls
// polls, a DefaultLogger's objects or a JSON logger's lines, partition p at offset
// off(poll, p).
func positionPolls(parts, polls int, json bool, off func(poll, p int) int64) []byte {
	var b strings.Builder
	for poll := range polls {
		ts := itoa(1796225597050 + int64(poll)*500)
		for p := range parts {
			msg := "[thrd:127.0.0.1:39271/0]: 127.0.0.1:39271/0: Fetch topic stranded [" + itoa(int64(p)) +
				"] at offset " + itoa(off(poll, p)) + " (leader epoch 0, current leader epoch 0, v2)"
			if json {
				b.WriteString(`{"level":20,"fac":"FETCH","timestamp":` + ts + `,"name":"rdkafka#consumer-3","msg":"` + msg + "\"}\n")
			} else {
				b.WriteString("{\n  message: '" + msg + "',\n  fac: 'FETCH',\n  timestamp: " + ts + ",\n  name: 'rdkafka#consumer-3'\n}\n")
			}
		}
	}
	return []byte(b.String())
}
