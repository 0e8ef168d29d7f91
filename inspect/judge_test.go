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
	txn200 := []Span{{0, 199, Record}, {200, 200, CommitMarker}, {201, 201, Record}}
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
		{"a caught-up consumer is OK even though a marker sits at the end",
			off(201, 201, 201), delivered(iv(0, 199)), nil, false,
			verdict.OK, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, ""},
		{"aborted records inside the range are neither lost nor pending",
			off(10, 10, 10), delivered(iv(0, 2)), []Span{{3, 4, Record}, {5, 7, Aborted}, {8, 8, AbortMarker}, {9, 9, Record}}, false,
			verdict.Lost, []kpart.RecordRange{kpart.Counted(3, 9, 3)}, []kpart.RecordRange{}, 3, ""},
		{"a delivered offset splits lost ranges",
			off(10, 10, 10), delivered(iv(0, 2), iv(5, 5)), []Span{{3, 9, Record}}, false,
			verdict.Lost, []kpart.RecordRange{kpart.Counted(3, 4, 2), kpart.Counted(6, 9, 4)}, []kpart.RecordRange{}, 3, ""},
		{"everything delivered up to the committed offset needs no scan and is OK",
			off(100, 100, 100), delivered(iv(0, 9), iv(10, 99)), nil, false,
			verdict.OK, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, ""},
		{"a scan stopped by --max-scan before the committed offset says so",
			off(100, 100, 100), delivered(iv(0, 49)), []Span{{50, 59, Absent}}, true,
			verdict.Incomplete, []kpart.RecordRange{}, []kpart.RecordRange{}, -1, "scan stopped at offset 60"},
		{"compacted offsets are absent, not lost",
			off(20, 20, 20), delivered(iv(0, 9), iv(15, 19)), []Span{{10, 14, Absent}}, false,
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
