package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// --commit manual is an eachBatch idiom (resolveOffset, commitOffsetsIfNecessary): asked
// for eachMessage by name it is a usage error saying so; --commit all leaves it out for
// eachMessage and runs it for eachBatch (--commit explicit, the handler's
// commitOffsets([...]), applies to both and runs for both).
func TestManualCommitIsRefusedForEachMessageAndLeftOutOfItsAll(t *testing.T) {
	for _, cmd := range []string{"simulate", "repro"} {
		code, out, errs := runCmd(t, "", cmd, "--commit", "manual", "--handler", "each-message")
		if code != exitcode.Usage {
			t.Fatalf("%s: exit %d, want %d\n%s%s", cmd, code, exitcode.Usage, out, errs)
		}
		for _, w := range []string{"--commit manual", "eachBatch", "commitOffsetsIfNecessary"} {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: the error lacks %q: %s", cmd, w, errs)
			}
		}
	}
	code, out, errs := runCmd(t, "", "simulate", "--commit", "all", "--handler", "all", "--max-poll-interval", "5m", "--spread", "0:20", "-o", "json")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var doc struct {
		Runs []struct{ Handler, Commit string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, r := range doc.Runs {
		runs = append(runs, r.Handler+"/"+r.Commit)
	}
	if got, want := strings.Join(runs, " "), "each-batch/auto each-batch/ledger each-batch/manual each-batch/explicit each-message/auto each-message/ledger each-message/explicit"; got != want {
		t.Errorf("runs %s, want %s", got, want)
	}
}
