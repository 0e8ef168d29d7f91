package inspect

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
)

func delivered(ivs ...kpart.Range) *evidence.Partition {
	p := &evidence.Partition{Delivered: ivs}
	for _, iv := range ivs {
		p.Count += iv.Len()
	}
	return p
}

func TestJudge(t *testing.T) {
	off := func(committed, lso, hwm int64) Offsets {
		return Offsets{Topic: "stranded", Committed: committed, LastStable: lso, HighWatermark: hwm}
	}
	txn200 := []Span{{First: 0, Last: 199, Kind: Record}, {First: 200, Last: 200, Kind: CommitMarker}, {First: 201, Last: 201, Kind: Record}}
	tests := []struct {
		name        string
		off         Offsets
		ev          *evidence.Partition
		spans       []Span
		truncated   bool
		wantVerdict verdict.Verdict
		wantLost    []kpart.RecordRange
		wantPending []kpart.RecordRange
		wantRewind  int64 // -1: none
		wantReason  string
	}{
		{"records committed past and never delivered are lost, the marker is not",
			off(202, 202, 202), delivered(iv(0, 81), iv(201, 201)), txn200, false,
			verdict.Lost, []kpart.RecordRange{kpart.Counted(82, 199, 118)}, []kpart.RecordRange{}, 82, ""},
		{"undelivered records at or after the committed offset are pending, not lost",
			off(82, 201, 201), delivered(iv(0, 81)), txn200[:2], false,
			verdict.Stranded, []kpart.RecordRange{}, []kpart.RecordRange{kpart.Counted(82, 199, 118)}, -1, ""},
		{"a caught-up consumer is OK even though a marker sits at the end (the read of the partition says so)",
			off(201, 201, 201), delivered(iv(0, 199)), []Span{{First: 200, Last: 200, Kind: CommitMarker}}, false,
			verdict.OK, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, ""},
		{"aborted records inside the range are neither lost nor pending",
			off(10, 10, 10), delivered(iv(0, 2)), []Span{{First: 3, Last: 4, Kind: Record}, {First: 5, Last: 7, Kind: Aborted}, {First: 8, Last: 8, Kind: AbortMarker}, {First: 9, Last: 9, Kind: Record}}, false,
			verdict.Lost, []kpart.RecordRange{kpart.Counted(3, 9, 3)}, []kpart.RecordRange{}, 3, ""},
		{"a delivered offset splits lost ranges",
			off(10, 10, 10), delivered(iv(0, 2), iv(5, 5)), []Span{{First: 3, Last: 9, Kind: Record}}, false,
			verdict.Lost, []kpart.RecordRange{kpart.Counted(3, 4, 2), kpart.Counted(6, 9, 4)}, []kpart.RecordRange{}, 3, ""},
		{"everything delivered up to the committed offset needs no scan and is OK",
			off(100, 100, 100), delivered(iv(0, 9), iv(10, 99)), nil, false,
			verdict.OK, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, ""},
		{"a scan stopped by --max-scan before the committed offset says so",
			off(100, 100, 100), delivered(iv(0, 49)), []Span{{First: 50, Last: 59, Kind: Absent}}, true,
			verdict.Incomplete, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, "scan stopped at offset 60"},
		{"compacted offsets are absent, not lost",
			off(20, 20, 20), delivered(iv(0, 9), iv(15, 19)), []Span{{First: 10, Last: 14, Kind: Absent}}, false,
			verdict.OK, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sc *Scan
			if tc.spans != nil {
				sc = &Scan{From: tc.spans[0].First, To: tc.spans[len(tc.spans)-1].Last + 1, Spans: tc.spans, Truncated: tc.truncated}
			}
			j := Judge(tc.off, tc.ev, sc)
			if j.Verdict != tc.wantVerdict {
				t.Errorf("verdict %s, want %s (%+v)", j.Verdict, tc.wantVerdict, j)
			}
			if !reflect.DeepEqual(j.Lost, tc.wantLost) || !reflect.DeepEqual(j.Stranded, tc.wantPending) {
				t.Errorf("lost %v pending %v, want %v %v", j.Lost, j.Stranded, tc.wantLost, tc.wantPending)
			}
			got := int64(-1)
			if j.SafeRewind != nil {
				got = *j.SafeRewind
			}
			if got != tc.wantRewind {
				t.Errorf("rewind %d, want %d", got, tc.wantRewind)
			}
			if !strings.Contains(j.Reason, tc.wantReason) {
				t.Errorf("reason %q lacks %q", j.Reason, tc.wantReason)
			}
		})
	}
}

func TestScanWindow(t *testing.T) {
	o := Offsets{LogStart: 5, LastStable: 1000, Committed: 900}
	tests := []struct {
		name            string
		ev              *evidence.Partition
		max             int64
		from, to        int64
		truncated, need bool
	}{
		{"nothing delivered: from the log start to the last stable offset", nil, 0, 5, 1000, false, true},
		{"from the lowest undelivered offset", delivered(iv(0, 81), iv(82, 90), iv(95, 99)), 0, 91, 1000, false, true},
		{"bounded by max-scan", delivered(iv(0, 9)), 100, 10, 110, true, true},
		{"everything delivered: nothing to scan", delivered(iv(0, 999)), 0, 1000, 1000, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from, to, tr, need := ScanWindow(o, tc.ev, tc.max)
			if from != tc.from || to != tc.to || tr != tc.truncated || need != tc.need {
				t.Fatalf("got %d %d %v %v", from, to, tr, need)
			}
		})
	}
}

func iv(first, last int64) kpart.Range { return kpart.Range{First: first, Last: last} }

func TestRecordsDeletedBelowTheLogStartAreUnrecoverable(t *testing.T) {
	cases := []struct {
		name      string
		off       Offsets
		ev        *evidence.Partition
		spans     []Span
		want      []kpart.RecordRange
		wantN     int64
		wantLost  int64
		wantVerdi verdict.Verdict
	}{
		{"retention moved the log start past lost records: 82-99 unrecoverable, 100-199 lost",
			Offsets{LogStart: 100, Committed: 202, LastStable: 202, HighWatermark: 202}, delivered(iv(0, 81), iv(201, 201)),
			[]Span{{First: 100, Last: 199, Kind: Record}, {First: 200, Last: 200, Kind: CommitMarker}}, []kpart.RecordRange{kpart.Counted(82, 99, 18)}, 18, 100, verdict.Lost},
		{"every lost record deleted: still LOST, none restorable",
			Offsets{LogStart: 201, Committed: 202, LastStable: 202, HighWatermark: 202}, delivered(iv(0, 81), iv(201, 201)),
			nil, []kpart.RecordRange{kpart.Counted(82, 200, 119)}, 119, 0, verdict.Lost},
		{"gaps between deliveries below the log start count too",
			Offsets{LogStart: 20, Committed: 20, LastStable: 20, HighWatermark: 20}, delivered(iv(0, 4), iv(10, 19)),
			nil, []kpart.RecordRange{kpart.Counted(5, 9, 5)}, 5, 0, verdict.Lost},
		{"everything delivered before the deletion: nothing unrecoverable",
			Offsets{LogStart: 100, Committed: 100, LastStable: 100, HighWatermark: 100}, delivered(iv(0, 99)),
			nil, []kpart.RecordRange{}, 0, 0, verdict.OK},
		{"offsets below the evidence's first delivery are not judged (an earlier instance may have had them)",
			Offsets{LogStart: 100, Committed: 100, LastStable: 100, HighWatermark: 100}, delivered(iv(50, 99)),
			nil, []kpart.RecordRange{}, 0, 0, verdict.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sc *Scan
			if c.spans != nil {
				sc = &Scan{From: c.spans[0].First, To: c.spans[len(c.spans)-1].Last + 1, Spans: c.spans}
			}
			j := Judge(c.off, c.ev, sc)
			if !reflect.DeepEqual(j.Unrecoverable, c.want) || j.UnrecoverableCount != c.wantN || j.LostCount != c.wantLost || j.Verdict != c.wantVerdi {
				t.Fatalf("unrecoverable %v (%d) lost %d verdict %s; want %v (%d) lost %d %s", j.Unrecoverable, j.UnrecoverableCount, j.LostCount, j.Verdict, c.want, c.wantN, c.wantLost, c.wantVerdi)
			}
		})
	}
}
