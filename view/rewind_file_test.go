package view

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/rewind"
)

func TestReadFileRejectsWhatIsNotAPlan(t *testing.T) {
	cases := []struct{ name, in, says string }{
		{"text is not a plan", "stranded/0=82\n", "not a rewind plan"},
		{"another kstranded document is not a plan", `{"schema":"kstranded.inspect/v2","group":{"group":"g"}}`, "neither a rewind plan"},
		{"a plan without a group is refused", `{"schema":"kstranded.rewind/v1","moves":[]}`, "names no group"},
		{"a plan without moves has nothing to apply", `{"schema":"kstranded.rewind/v1","group":{"group":"g"},"moves":[]}`, "no partitions"},
		{"a move without a target is refused", `{"schema":"kstranded.rewind/v1","group":{"group":"g"},"moves":[{"topic":"t","partition":0}]}`, "moves[0]"},
		{"a partition twice is refused", `{"schema":"kstranded.rewind-undo/v1","group":"g","offsets":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":2}]}`, "appears twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadRewindFile(strings.NewReader(c.in), "f.json")
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want an error saying %q", err, c.says)
			}
		})
	}
}

func TestReadFileTakesAPlanWithItsCommittedOffsets(t *testing.T) {
	in := `{"schema":"kstranded.rewind/v1","group":{"group":"g","members":[]},"moves":[{"topic":"t","partition":0,"committed":202,"target":82,"target_leader_epoch":-1,"target_metadata":""}]}`
	f, err := ReadRewindFile(strings.NewReader(in), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != rewind.FromPlan || f.Group != "g" || len(f.Targets) != 1 || f.Targets[0].Offset != 82 || f.Targets[0].Expect == nil || *f.Targets[0].Expect != 202 {
		t.Fatalf("%+v", f)
	}
}

func TestAPlanWithADeleteMoveIsRead(t *testing.T) {
	plan := `{"schema":"kstranded.rewind/v1","group":{"group":"g"},"moves":[{"topic":"t","partition":0,"committed":5,"target":-1,"direction":"delete"}]}`
	f, err := ReadRewindFile(strings.NewReader(plan), "plan.json")
	if err != nil || !f.Targets[0].Delete || *f.Targets[0].Expect != 5 {
		t.Fatalf("a plan with a delete move: %v %+v", err, f)
	}
}

// TestAPlanWrittenIsThePlanReadBack: the document `rewind -o json` prints is read back by
// --from-file through the same declaration, with each move's target and committed offset.
func TestAPlanWrittenIsThePlanReadBack(t *testing.T) {
	var b bytes.Buffer
	if err := PrintRewind(&b, NewRewindPlan(dryRunPlan()), "json", false); err != nil {
		t.Fatal(err)
	}
	f, err := ReadRewindFile(&b, "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	p := dryRunPlan()
	if f.Kind != rewind.FromPlan || f.Group != p.Group.ID || len(f.Targets) != len(p.Moves) {
		t.Fatalf("read back %+v from the plan of %+v", f, p)
	}
	for i, m := range p.Moves {
		got := f.Targets[i]
		if got.Topic != m.Topic || got.Partition != m.Partition || got.Offset != m.Target || got.Expect == nil || *got.Expect != m.Committed {
			t.Fatalf("target %d: %+v, want the move %+v", i, got, m)
		}
	}
}

// FuzzReadRewindFile: a --from-file that is not a plan or an undo file is an error
// naming the file; never a panic.
func FuzzReadRewindFile(f *testing.F) {
	f.Add(`{"schema":"kstranded.rewind/v1","group":{"group":"g"},"moves":[]}`)
	f.Add(`{"schema":"kstranded.rewind-undo/v1","group":"g","offsets":[]}`)
	f.Add(`{}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, in string) {
		_, err := ReadRewindFile(bytes.NewReader([]byte(in)), "plan.json")
		if err != nil && !strings.Contains(err.Error(), "plan.json") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
