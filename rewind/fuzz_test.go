package rewind

import (
	"strings"
	"testing"
)

// FuzzParseTargets: --to values either parse into targets with a topic, a partition and
// an offset that are not negative, or are rejected; never a panic.
func FuzzParseTargets(f *testing.F) {
	for _, s := range []string{"stranded/0=82", "a.b-c_d/3=0,a.b-c_d/4=10", "x/y=3", "t/0=-1", "t/0=1,t/0=2", "", "/0=1", "t/=1", "t/0=", "t:0=5", "a:b/0=1", "t:0=1,t/0=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ts, err := ParseTargets([]string{in})
		if err != nil {
			return
		}
		for _, tg := range ts {
			tp := tg.TP()
			if tp.Topic == "" || tp.Partition < 0 || tg.Offset < 0 {
				t.Fatalf("ParseTargets(%q) gave %+v", in, tg)
			}
		}
	})
}

// FuzzReadUndo: a --from-file undo file that is not one is an error naming the file;
// never a panic.
func FuzzReadUndo(f *testing.F) {
	f.Add(`{"schema":"kstranded.rewind-undo/v1","group":"g","offsets":[{"topic":"t","partition":0,"offset":5,"rewound_to":2}]}`)
	f.Add(`{"schema":"kstranded.rewind-undo/v1","group":"g","offsets":[]}`)
	f.Add(`{}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, in string) {
		_, err := ReadUndo([]byte(in), "undo.json")
		if err != nil && !strings.Contains(err.Error(), "undo.json") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
