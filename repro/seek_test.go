package repro

import (
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/workload"
)

func TestParseSeekReadsPartitionOffsetAndTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Seek
		err  string
	}{
		{in: "1:100@3m50s", want: Seek{At: 230 * time.Second, Partition: 1, Offset: 100}},
		{in: "100@3m50s", want: Seek{At: 230 * time.Second, Partition: -1, Offset: 100}},
		{in: " 0:0@1ms ", want: Seek{At: time.Millisecond, Partition: 0, Offset: 0}},
		{in: "1:100", err: "no @TIME"},
		{in: "1:100@0s", err: "not a duration > 0"},
		{in: "1:100@-1s", err: "not a duration > 0"},
		{in: "-1:100@1s", err: "partition"},
		{in: "x:100@1s", err: "partition"},
		{in: "1:-5@1s", err: "offset"},
		{in: "1:@1s", err: "offset"},
		{in: "@1s", err: "offset"},
	} {
		got, err := ParseSeek(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseSeek(%q) = %v, %v; want an error naming %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseSeek(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		case tc.err == "":
			if back, err := ParseSeek(got.String()); err != nil || back != got {
				t.Errorf("ParseSeek(%q) of its own String %q = %+v, %v", tc.in, got.String(), back, err)
			}
		}
	}
}

func FuzzParseSeek(f *testing.F) {
	for _, s := range []string{"1:100@3m50s", "100@1s", "1:@", "@", ":1@1h", "0:0@1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseSeek(s)
		if err != nil {
			return
		}
		if k.At <= 0 || k.Offset < 0 || k.Partition < -1 {
			t.Fatalf("ParseSeek(%q) accepted %+v", s, k)
		}
		if back, err := ParseSeek(k.String()); err != nil || back != k {
			t.Fatalf("ParseSeek(%q) = %+v, whose String %q reads %+v, %v", s, k, k.String(), back, err)
		}
	})
}

// A seek of a named partition tells alike partitions apart (as a pause naming them
// does), and --seek is checked against the topic and the run's limits.
func TestASeekOfANamedPartitionIsValidatedAndTellsAlikePartitionsApart(t *testing.T) {
	o := DefaultOptions()
	o.Workload = workload.Spec{Parts: []workload.Part{{Partition: 0, Records: 10}, {Partition: 1, Records: 10}}, Transactions: 1}
	o.Seeks = []Seek{{At: 5 * time.Minute, Partition: 1, Offset: 5}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.alike() {
		t.Error("a seek of partition 1 left the partitions alike")
	}
	o.Seeks[0].Partition = -1
	if !o.alike() {
		t.Error("a seek of the handler's own partition told the partitions apart")
	}
	for _, bad := range []Seek{{At: time.Second, Partition: o.Partitions, Offset: 1}, {At: MaxRebalanceAt + time.Second, Partition: 0, Offset: 1}} {
		o.Seeks = []Seek{bad}
		if err := o.Validate(); err == nil {
			t.Errorf("--seek %s was accepted", bad)
		}
	}
}
