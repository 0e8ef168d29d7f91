package traceevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

func TestClearEventsKeepAnEmptyLastConsumedList(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(Event{Time: time.Unix(0, 0).UTC(), Ev: Clear, Discarded: []Range{{Partition: 0, RecordRange: kpart.Counted(82, 199, 118)}}})
	w.Write(Event{Time: time.Unix(0, 0).UTC(), Ev: Fetch, Requested: 1})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if !strings.Contains(lines[0], `"last_consumed_keys":[]`) {
		t.Fatalf("clear line lacks the empty list: %s", lines[0])
	}
	if strings.Contains(lines[1], "last_consumed_keys") {
		t.Fatalf("fetch line carries last_consumed_keys: %s", lines[1])
	}
	var back Event
	if err := json.Unmarshal([]byte(lines[0]), &back); err != nil || back.Discarded[0].Count != 118 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

// Decode reads what Writer writes, refuses what is not an event, and names another
// schema's run line while still handing over the event.
func TestDecodeReadsWhatTheWriterWrites(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Write(Event{Time: time.Unix(1700000000, 0).UTC(), Ev: Serve, Partition: P(int32(3)), Offsets: []int64{7, 8}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	e, err := Decode(bytes.TrimSpace(b.Bytes()))
	if err != nil || e.Ev != Serve || *e.Partition != 3 || len(e.Offsets) != 2 {
		t.Fatalf("%+v, %v", e, err)
	}
	if _, err := Decode([]byte(`{"ev":`)); err == nil {
		t.Fatal("a cut line decoded")
	}
	e, err = Decode([]byte(`{"ev":"run","schema":"kstranded.trace/v9","topic":"t"}`))
	var se *SchemaError
	if !errors.As(err, &se) || se.Schema != "kstranded.trace/v9" || e.Topic != "t" {
		t.Fatalf("%+v, %v", e, err)
	}
}

func TestATeeHandsOverEachEventAsItWasWhenWritten(t *testing.T) {
	var buf bytes.Buffer
	var got []Event
	w := NewTee(&buf, func(e Event) { got = append(got, e) })
	offsets := []int64{1, 2, 3}
	p := int32(4)
	parts := []PartitionState{{Partition: 4, Frontier: P(int64(3)), Lost: []Range{PartitionRange(4, 1, 3, 3)}}}
	w.Write(Event{Time: time.Unix(0, 0).UTC(), Ev: Serve, Partition: &p, Offsets: offsets, Partitions: parts})
	offsets[0], p, *parts[0].Frontier, parts[0].Lost[0].First = 9, 9, 9, 9
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("handed over %d events, want 1", len(got))
	}
	e := got[0]
	if e.Offsets[0] != 1 || *e.Partition != 4 || *e.Partitions[0].Frontier != 3 || e.Partitions[0].Lost[0].First != 1 {
		t.Errorf("the event handed over changed with the writer's variables: %+v", e)
	}
	if !strings.Contains(buf.String(), `"offsets":[1,2,3]`) {
		t.Errorf("the line: %s", buf.String())
	}
}

func TestATeeWithoutAFileWritesNoLine(t *testing.T) {
	n := 0
	w := NewTee(nil, func(Event) { n++ })
	w.Write(Event{Ev: Fetch})
	if err := w.Flush(); err != nil || n != 1 {
		t.Errorf("flush %v, %d events handed over", err, n)
	}
}
