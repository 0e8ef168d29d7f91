package trace

import (
	"encoding/json"

	"github.com/kstranded/kstranded/traceevent"
)

// Events reads a kstranded run's events handed over by the run itself (repro --svg,
// simulate --svg) as Parse reads the same events from the kstranded.trace/v1 file the
// run writes: event i is line i+1 of the input called name, and an event the format
// refuses (no "ev", a schema of another version, ...) is a malformed line. Only the
// JSON is skipped; the events are read by the one kstranded reader (kstrandedParser).
//
// Events must not change after they are handed over (traceevent.Event.Clone). The
// line-length cap a file's lines have does not apply: it bounds what an outside input
// can make the reader hold, and these are already held.
func (a *Analyzer) Events(name string, evs []traceevent.Event) (FileStats, error) {
	st := FileStats{Name: name, Format: FormatKstranded}
	if len(evs) == 0 {
		st.Format = FormatEmpty // as Parse says of an empty file
		a.files = append(a.files, st)
		return st, nil
	}
	a.beginFile(name)
	p := &kstrandedParser{}
	lineNo := 0
	emitted := false
	emit := func(e Event) {
		emitted = true
		st.Events++
		e.Ref = Ref{File: name, Line: lineNo}
		a.add(e)
	}
	for _, ev := range evs {
		if a.halt != nil {
			break
		}
		lineNo++
		st.Lines++
		emitted = false
		if err := p.event(asRead(ev), emit); err != nil {
			line, _ := json.Marshal(ev) // for the report's first malformed lines
			st.malformed(lineNo, line, err.Error())
		} else if !emitted {
			st.Ignored++
		} else {
			st.Matched++
		}
	}
	a.stoppedAt = Ref{File: name, Line: lineNo}
	if a.halt != nil {
		a.partial = true
		st.Stopped = true
	}
	a.endFile()
	a.files = append(a.files, st)
	return st, a.halt
}

// asRead is ev as a reader of its line gets it: a time without a monotonic clock
// reading, and last_consumed_keys only on a clear, there never nil
// (traceevent.Event.MarshalJSON).
func asRead(ev traceevent.Event) traceevent.Event {
	ev.Time = ev.Time.Round(0)
	switch {
	case ev.Ev != traceevent.Clear:
		ev.LastConsumedKeys = nil
	case ev.LastConsumedKeys == nil:
		ev.LastConsumedKeys = []string{}
	}
	return ev
}
