package trace

import "testing"

// Where the chunks are cut must not show in any part of the report: the timeline's entries
// (their times too: a delivery line without a time of its own is placed at the time of
// the client's last line before it) included, not only the findings.
func TestTheWholeReportDoesNotDependOnTheChunkSize(t *testing.T) {
	defer func(size, workers int) { rdChunkSize, rdWorkers = size, workers }(rdChunkSize, rdWorkers)
	for _, c := range []struct{ file, pattern string }{
		{"v1.10.0-default-debug.log.gz", jsPlainPattern},
		{"v1.10.1-default-debug.log.gz", jsPlainPattern},
		{"v1.10.0-default.log.gz", jsPlainPattern},
		{"v1.10.1-default.log.gz", jsPlainPattern},
		{"v1.10.0-json.log.gz", jsJSONPattern},
		{"v1.10.1-json.log.gz", jsJSONPattern},
	} {
		data := jsCapture(t, c.file)
		rdChunkSize, rdWorkers = 1<<20, 0
		r, _ := parseBytes(t, c.file, data, FormatAuto, c.pattern)
		want := reportJSON(t, r)
		for _, size := range []int{65536, 4096, 1531, 1000} {
			rdChunkSize, rdWorkers = size, 3
			r, _ := parseBytes(t, c.file, data, FormatAuto, c.pattern)
			if got := reportJSON(t, r); got != want {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("%s, chunks of %d bytes: the report differs at byte %d: %.200s\nwant %.200s", c.file, size, i, got[max(0, i-100):], want[max(0, i-100):])
			}
		}
	}
}
