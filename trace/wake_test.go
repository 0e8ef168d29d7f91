package trace

import (
	"strings"
	"testing"
)

func TestAWakeEventOfAKstrandedTraceIsANoteSayingWhatEndedTheWaitAndWhatFollowed(t *testing.T) {
	const log = `{"ts":"2026-12-03T09:25:54.052641741Z","at_ms":0.001988,"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","policy":"v1.10.0","settings":{"time_scale":"0.01"}}
{"ts":"2026-12-03T09:25:54.384342444Z","at_ms":331.701985,"ev":"wake","requested":1,"returned":1,"n":20,"since_fetch_ms":11.073209,"reason":"valve"}
{"ts":"2026-12-03T09:26:04.187804835Z","at_ms":10135.164378,"ev":"wake","n":19,"since_fetch_ms":4.2,"reason":"termination"}
`
	a := NewAnalyzer(Options{})
	if _, err := a.Parse("t.jsonl", strings.NewReader(log), FormatAuto); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range a.Finish().Timeline {
		if strings.HasPrefix(e.Detail, "wake ") {
			notes = append(notes, e.Detail)
		}
	}
	want := []string{
		"wake 20 waiting workers woken (valve) 11 ms after the empty fetch; the next fetch returned 1",
		"wake 19 waiting workers woken (termination) 4 ms after the empty fetch; they stopped without fetching",
	}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("wake notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
}
