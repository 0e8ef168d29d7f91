package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// TestReproConsumeIsRefusedAllForEachFlag: repro consume runs one consumer; "all" for
// --policy, --handler or --commit used to run the first case silently (issue 21 §3).
func TestReproConsumeIsRefusedAllForEachFlag(t *testing.T) {
	for _, flag := range []string{"--policy", "--handler", "--commit"} {
		t.Run(flag, func(t *testing.T) {
			code, out, errs := runCmd(t, "", "repro", "consume", "--brokers", "127.0.0.1:1", "--group", "g", flag, "all")
			if code != exitcode.Usage || !strings.Contains(errs, flag+" all") || !strings.Contains(errs, "one consumer") {
				t.Fatalf("exit %d, want %d naming %s all\n%s%s", code, exitcode.Usage, flag, out, errs)
			}
		})
	}
}

// TestReproConsumeInAGroupItDidNotCreate: the runbooks' old verification step ran
// `repro consume --group "$GROUP"` after a rewind: the model consumer delivered the
// rewound records to itself, committed past them, and the application never got them
// (issue 21 §3). A group with committed offsets is refused (exit 5) saying what it holds
// and what the run would commit; --use-existing-group runs and reports where it started;
// a fresh group runs; --commit ledger commits the ledger's frontier (it used to switch
// auto-commit off and commit nothing).
func TestReproConsumeInAGroupItDidNotCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs live consumers")
	}
	b := strandedBroker(t) // group g committed at 202 on stranded/0
	base := []string{"repro", "consume", "--brokers", b.Addr(), "--topic", "stranded", "--policy", "v1.10.1",
		"--until-quiescent", "--time-scale", "0.0005", "--fetch-wait-max", "10ms", "--timeout", "20s", "-o", "json"}
	type part struct {
		Partition        int32 `json:"partition"`
		Committed        int64 `json:"committed"`
		CommittedAtStart int64 `json:"committed_at_start"`
		Delivered        int   `json:"delivered"`
	}
	type doc struct {
		Commit        string   `json:"commit"`
		ExistingGroup bool     `json:"existing_group"`
		Warnings      []string `json:"warnings"`
		Partitions    []part   `json:"partitions"`
	}
	p0 := func(d doc) part {
		for _, p := range d.Partitions {
			if p.Partition == 0 {
				return p
			}
		}
		return part{Committed: -2, CommittedAtStart: -2}
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		stderr   []string // on a refusal
		existing bool
		start    int64 // partition 0's committed_at_start
		commit   int64 // partition 0's committed after the run
	}{
		{name: "a group with committed offsets is refused", args: []string{"--group", "g"}, code: exitcode.Refused,
			stderr: []string{"refused: --group g already has committed offsets (stranded/0=202)", "commits its own progress over them", "--use-existing-group"}},
		{name: "so is it with --commit ledger, saying what that commits", args: []string{"--group", "g", "--commit", "ledger"}, code: exitcode.Refused,
			stderr: []string{"stranded/0=202", "the ledger's frontier", "--use-existing-group"}},
		{name: "--use-existing-group runs and says where it started", args: []string{"--group", "g", "--use-existing-group"}, existing: true, start: 202, commit: 202},
		{name: "a fresh group runs", args: []string{"--group", "fresh-auto"}, start: -1, commit: 202},
		{name: "--commit ledger commits the ledger's frontier", args: []string{"--group", "fresh-ledger", "--commit", "ledger"}, start: -1, commit: 202},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, "", append(append([]string{}, base...), c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.code, out, errs)
			}
			if c.code != 0 {
				// -o json: the refusal is the one JSON document on stdout
				for _, s := range c.stderr {
					if !strings.Contains(out+errs, s) {
						t.Errorf("the refusal does not say %q:\n%s%s", s, out, errs)
					}
				}
				return
			}
			var d doc
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			p := p0(d)
			if d.ExistingGroup != c.existing || p.CommittedAtStart != c.start || p.Committed != c.commit {
				t.Fatalf("existing_group %v, partition 0 committed_at_start %d, committed %d; want %v, %d, %d\n%s", d.ExistingGroup, p.CommittedAtStart, p.Committed, c.existing, c.start, c.commit, out)
			}
			warned := len(d.Warnings) > 0 && strings.HasPrefix(d.Warnings[0], "--use-existing-group: --group g already has committed offsets (stranded/0=202)")
			if warned != c.existing {
				t.Fatalf("warnings %q: a run in an existing group says so first, no other does", d.Warnings)
			}
			if c.existing && !strings.Contains(errs, "warning: --use-existing-group") {
				t.Fatalf("the run in an existing group does not warn before it starts:\n%s", errs)
			}
		})
	}
}
