package traceevent

import (
	"bytes"
	"encoding/json"
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
