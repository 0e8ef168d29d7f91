package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/rewind"
)

func TestRewindFlagsAreValidated(t *testing.T) {
	plan := writeFile(t, "plan.json", `{"schema":"kstranded.rewind/v1","group":{"group":"g"},"moves":[{"topic":"stranded","partition":0,"committed":202,"target":82}]}`)
	notPlan := writeFile(t, "x.json", `{"schema":"kstranded.inspect/v2","group":{"group":"g"}}`)
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"a --to without an offset names the flag", []string{"--group", "g", "--to", "stranded/0"}, `--to "stranded/0": want TOPIC/PARTITION=OFFSET`},
		{"a --to with a bad partition names the flag", []string{"--group", "g", "--to", "stranded/zero=82"}, `--to "stranded/zero=82": partition "zero"`},
		{"a --to with a negative offset names the flag", []string{"--group", "g", "--to", "stranded/0=-5"}, `--to "stranded/0=-5": offset "-5"`},
		{"a partition given twice in --to is an error", []string{"--group", "g", "--to", "stranded/0=82", "--to", "stranded/0=90"}, "already given a target"},
		{"no source of targets is an error", []string{"--group", "g"}, "rewind needs --delivered FILE"},
		{"--execute and --dry-run contradict", []string{"--group", "g", "--to", "stranded/0=82", "--execute", "--dry-run"}, "contradict"},
		{"--to and --from-file both set targets", []string{"--group", "g", "--to", "stranded/0=82", "--from-file", plan}, "give one"},
		{"--topic only limits a plan from evidence", []string{"--group", "g", "--to", "stranded/0=82", "--topic", "stranded"}, "--topic limits"},
		{"a group is required", []string{"--to", "stranded/0=82"}, "--group is required"},
		{"--group must match the plan's group", []string{"--group", "other", "--from-file", plan}, "is for group g"},
		{"a file that is not a plan is refused", []string{"--from-file", notPlan}, "neither a rewind plan"},
		{"--max-scan must be positive", []string{"--group", "g", "--to", "stranded/0=82", "--max-scan", "0"}, "--max-scan"},
		{"stdin is given once as evidence", []string{"--group", "g", "--delivered", "-", "--delivered", "-"}, "--delivered - (stdin) can be given once"},
		{"stdin is read once: evidence or a plan", []string{"--group", "g", "--delivered", "-", "--from-file", "-"}, "stdin (-) can be read once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"rewind", "--brokers", "127.0.0.1:1"}, c.args...)
			code, out, errOut := runCmd(t, "", args...)
			if code != exitcode.Usage || !strings.Contains(errOut, c.says) {
				t.Fatalf("exit %d, stderr %q; want exit 2 saying %q\n%s", code, errOut, c.says, out)
			}
		})
	}
	code, _, errOut := runCmd(t, "", "rewind", "--group", "g", "--to", "stranded/0=82")
	if code != exitcode.Usage || !strings.Contains(errOut, "--brokers is required") {
		t.Fatalf("without --brokers: exit %d %s", code, errOut)
	}
}

func committedAt(t *testing.T, adm *kadm.Client, group string) int64 {
	t.Helper()
	os, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := os.Lookup("stranded", 0)
	if !ok {
		return -1
	}
	return o.At
}

func waitMembers(t *testing.T, adm *kadm.Client, group string, want func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		gs, err := adm.DescribeGroups(context.Background(), group)
		if err == nil {
			if g, ok := gs[group]; ok && want(len(g.Members)) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: members did not reach the wanted count: %v", group, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRewindRepairsTheLossEndToEnd walks the repair of the bug report's loss on the
// embedded broker: the dry run plans 202 -> 82, --execute refuses while a member runs
// and names it, then moves the offset once the member left, the undo file restores it,
// and after repairing again a fresh consumer in the group receives 82-199 and inspect
// with all the evidence finds nothing lost.
func TestRewindRepairsTheLossEndToEnd(t *testing.T) {
	b := strandedBroker(t)
	dir := t.TempDir()
	trace := writeFile(t, "t.jsonl", strandedTrace)
	admCl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	rewind := func(args ...string) (int, string, string) {
		return runCmd(t, "", append([]string{"rewind", "--brokers", b.Addr()}, args...)...)
	}

	// 1. The dry run plans the first lost record and changes nothing.
	code, out, errOut := rewind("--group", "g", "--delivered", trace)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"stranded\t0\t202\t82\t119\t118\t1\trewind",
		"stranded/0: 202 -> 82: 119 records will be delivered again: 118 lost (82-199) and 1 already delivered",
		"DRY RUN: 1 partition would move",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if c := committedAt(t, adm, "g"); c != 202 {
		t.Fatalf("the dry run changed the committed offset to %d", c)
	}

	// The JSON plan carries the schema, the move and its counts, and is a plan file.
	code, out, _ = rewind("--group", "g", "--delivered", trace, "-o", "json")
	if code != 0 {
		t.Fatalf("json dry run: exit %d", code)
	}
	var v struct {
		Schema string `json:"schema"`
		Mode   string `json:"mode"`
		Moves  []struct {
			Committed, Target, Redeliver int64
			Lost                         *int64 `json:"lost"`
			Direction                    string `json:"direction"`
		} `json:"moves"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Schema != "kstranded.rewind/v1" || v.Mode != "dry-run" || len(v.Moves) != 1 || v.Moves[0].Committed != 202 || v.Moves[0].Target != 82 ||
		v.Moves[0].Redeliver != 119 || v.Moves[0].Lost == nil || *v.Moves[0].Lost != 118 || v.Moves[0].Direction != "back" {
		t.Fatalf("json plan: %s", out)
	}
	plan := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(plan, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}

	// 2. With a member in the group, --execute refuses and names it.
	ctx, cancel := context.WithCancel(context.Background())
	member, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("stranded"),
		kgo.ClientID("billing-app"), kgo.DisableAutoCommit(), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for ctx.Err() == nil {
			member.PollFetches(ctx)
		}
	}()
	waitMembers(t, adm, "g", func(n int) bool { return n > 0 })
	undo := filepath.Join(dir, "undo.json")
	code, out, errOut = rewind("--from-file", plan, "--execute", "--undo-file", undo)
	if code != exitcode.Refused || !strings.Contains(errOut, "has 1 member(s)") || !strings.Contains(errOut, "client billing-app") {
		t.Fatalf("execute with a member: exit %d, want 5 naming the member\n%s%s", code, out, errOut)
	}
	if c := committedAt(t, adm, "g"); c != 202 {
		t.Fatalf("the refused execute changed the committed offset to %d", c)
	}
	if _, err := os.Stat(undo); !os.IsNotExist(err) {
		t.Fatal("a refused execute wrote an undo file")
	}
	cancel()
	<-polled
	member.Close() // leaves the group
	waitMembers(t, adm, "g", func(n int) bool { return n == 0 })

	// 3. Once the group is empty, --execute moves it and reads it back.
	code, out, errOut = rewind("--from-file", plan, "--execute", "--undo-file", undo)
	if code != 0 {
		t.Fatalf("execute: exit %d\n%s%s", code, out, errOut)
	}
	restore := fmt.Sprintf("to restore the previous offsets: kstranded rewind --brokers %s --group g --from-file %s --allow-forward --execute", b.Addr(), undo)
	for _, want := range []string{"stranded\t0\t202\t82\t82\tyes", "DONE: committed offsets read back match the plan on 1 partition.", restore} {
		if !strings.Contains(out, want) {
			t.Errorf("execute output lacks %q:\n%s", want, out)
		}
	}
	if c := committedAt(t, adm, "g"); c != 82 {
		t.Fatalf("committed %d after execute, want 82", c)
	}

	// 4. The undo file restores 202 (a forward move: only with --allow-forward), and the
	// same plan no longer applies because the group moved since it was made.
	if code, out, errOut = rewind("--from-file", undo, "--execute", "--undo-file", filepath.Join(dir, "u2.json")); code != exitcode.Refused ||
		!strings.Contains(errOut, "--allow-forward") {
		t.Fatalf("restore without --allow-forward: exit %d\n%s%s", code, out, errOut)
	}
	// A consumer that committed after the rewind (82 -> 100) makes the undo file stale:
	// restoring 202 now would skip 100-199. Refused (exit 5, nothing changed) unless
	// --force; then back to 82, where the rewind left it, for the rest of the test.
	commitAt(t, adm, "g", 100)
	if code, out, errOut = rewind("--from-file", undo, "--allow-forward", "--execute", "--undo-file", filepath.Join(dir, "u-stale.json")); code != exitcode.Refused ||
		!strings.Contains(errOut, "no longer where the rewind left it (rewound to 82, now 100: a consumer committed 18 offsets further)") {
		t.Fatalf("restore of a stale undo file: exit %d\n%s%s", code, out, errOut)
	}
	if c := committedAt(t, adm, "g"); c != 100 {
		t.Fatalf("the refused restore changed the committed offset to %d", c)
	}
	if code, out, errOut = rewind("--from-file", undo, "--allow-forward", "--force", "--dry-run"); code != 0 || !strings.Contains(out, "stranded\t0\t100\t202") {
		t.Fatalf("--force plans the restore anyway: exit %d\n%s%s", code, out, errOut)
	}
	commitAt(t, adm, "g", 82)
	if code, out, errOut = rewind("--from-file", undo, "--allow-forward", "--execute", "--undo-file", filepath.Join(dir, "u2.json")); code != 0 {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	if c := committedAt(t, adm, "g"); c != 202 {
		t.Fatalf("committed %d after restore, want 202", c)
	}
	if code, out, errOut = rewind("--group", "g", "--to", "stranded/0=82", "--execute", "--undo-file", filepath.Join(dir, "u3.json")); code != 0 {
		t.Fatalf("repair again with --to: exit %d\n%s%s", code, out, errOut)
	}

	// 5. A fresh consumer in the group receives 82-199 (and 201 again).
	fresh, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("stranded"),
		kgo.DisableAutoCommit(), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	var lines strings.Builder
	pctx, pcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer pcancel()
	for len(got) == 0 || got[len(got)-1] < 201 {
		fs := fresh.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("the fresh consumer got %d records: %v", len(got), got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, r.Offset)
			fmt.Fprintf(&lines, "stranded %d %d\n", r.Partition, r.Offset)
		})
	}
	if err := fresh.CommitUncommittedOffsets(pctx); err != nil {
		t.Fatal(err)
	}
	fresh.Close()
	if len(got) != 119 || got[0] != 82 || got[117] != 199 || got[118] != 201 {
		t.Fatalf("fresh consumer received %d records %v..., want 82-199 and 201", len(got), got[:min(3, len(got))])
	}
	after := writeFile(t, "after.txt", lines.String())

	// 6. inspect with all the evidence: nothing lost.
	code, out, errOut = runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", trace, "--delivered", after)
	if code != 0 || !strings.Contains(out, "OK: no records lost on 1 partitions.") {
		t.Fatalf("inspect after the repair: exit %d\n%s%s", code, out, errOut)
	}
}

func TestRewindWithNothingLostSaysSo(t *testing.T) {
	b := strandedBroker(t)
	all := writeFile(t, "all.txt", "stranded/0:0-199\nstranded/0:201\n")
	code, out, errOut := runCmd(t, "", "rewind", "--brokers", b.Addr(), "--group", "g", "--delivered", all, "--execute")
	if code != 0 || !strings.Contains(out, "Nothing to rewind: no records lost on 1 judged partitions.") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestRewindRefusesBelowTheLogStartAndBeyondTheEnd(t *testing.T) {
	b := strandedBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "stranded", Partition: 0, At: 100})
	if _, err := adm.DeleteRecords(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, to, says string
	}{
		{"a target below the log start offset stops with the lowest possible target", "stranded/0=82", "below the log start offset 100"},
		{"a target beyond the high watermark is refused", "stranded/0=500", "beyond the high watermark 202"},
		{"a partition that does not exist is a usage error", "stranded/99=0", "stranded/99 does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, "", "rewind", "--brokers", b.Addr(), "--group", "g", "--to", c.to, "--execute", "--undo-file", filepath.Join(t.TempDir(), "u.json"))
			want := exitcode.Refused
			if strings.Contains(c.to, "/99") {
				want = exitcode.Usage
			}
			if code != want || !strings.Contains(errOut, c.says) {
				t.Fatalf("exit %d (want %d), stderr %q, want %q\n%s", code, want, errOut, c.says, out)
			}
			if c := committedAt(t, adm, "g"); c != 202 {
				t.Fatalf("committed moved to %d", c)
			}
		})
	}
}

// TestTheUndoOfAPartitionWithoutACommitDeletesTheOffset sets an offset on a partition the
// group had never committed, then runs the restore command the execute printed: it must
// work, and leave the partition without a committed offset again.
func TestTheUndoOfAPartitionWithoutACommitDeletesTheOffset(t *testing.T) {
	b := strandedBroker(t)
	dir := t.TempDir()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	committed := func(p int32) (int64, bool) {
		t.Helper()
		os, err := adm.FetchOffsets(context.Background(), "g")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := os.Lookup("stranded", p)
		return o.At, ok && o.At >= 0
	}
	if _, ok := committed(1); ok {
		t.Fatal("stranded/1 must start without a committed offset")
	}

	undo := filepath.Join(dir, "undo.json")
	code, out, errOut := runCmd(t, "", "rewind", "--brokers", b.Addr(), "--group", "g", "--to", "stranded/1=0", "--execute", "--undo-file", undo)
	if code != 0 || !strings.Contains(out, "stranded/1: no committed offset -> 0") {
		t.Fatalf("set: exit %d\n%s%s", code, out, errOut)
	}
	if at, ok := committed(1); !ok || at != 0 {
		t.Fatalf("stranded/1 committed %d (%v) after the set, want 0", at, ok)
	}
	_, restore, ok := strings.Cut(out, "to restore the previous offsets: ")
	if !ok {
		t.Fatalf("no restore command:\n%s", out)
	}
	args := strings.Fields(restore)
	if args[0] != "kstranded" {
		t.Fatalf("restore command %q", restore)
	}
	args = append(args[1:], "--undo-file", filepath.Join(dir, "undo2.json"))
	code, out, errOut = runCmd(t, "", args...)
	if code != 0 {
		t.Fatalf("the printed restore command %q failed: exit %d\n%s%s", restore, code, out, errOut)
	}
	for _, want := range []string{"stranded\t1\t0\t-\t0\t-\t-\tdelete", "stranded/1: 0 -> no committed offset", "stranded\t1\t0\t-\t-\tyes"} {
		if !strings.Contains(out, want) {
			t.Errorf("restore output lacks %q:\n%s", want, out)
		}
	}
	if at, ok := committed(1); ok {
		t.Fatalf("stranded/1 committed %d after the restore, want none", at)
	}
	if at, _ := committed(0); at != 202 {
		t.Fatalf("stranded/0 committed %d, want it untouched at 202", at)
	}
}

func commitAt(t *testing.T, adm *kadm.Client, group string, offset int64) {
	t.Helper()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "stranded", Partition: 0, At: offset, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(context.Background(), group, os); err != nil {
		t.Fatal(err)
	}
}

// Two rewinds in the same second with the default undo file name each keep their own
// undo file (the second gets a suffix) instead of the second failing.
func TestTwoRewindsInTheSameSecondKeepTwoUndoFiles(t *testing.T) {
	b := strandedBroker(t)
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for i, to := range []string{"stranded/0=82", "stranded/0=80"} {
		code, out, errOut := runCmd(t, "", "rewind", "--brokers", b.Addr(), "--group", "g", "--to", to, "--execute")
		if code != 0 {
			t.Fatalf("rewind %d: exit %d\n%s%s", i, code, out, errOut)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kstranded-undo-g-*.json"))
	if len(files) != 2 {
		t.Fatalf("undo files %v, want two", files)
	}
}

// kafka-consumer-groups.sh --reset-offsets spellings plan the same moves as --to: each
// rule, scoped with --topic T:P, lands where the Java tool puts it, --export writes its
// CSV and --from-file applies that CSV, through rewind's safety rules and undo file.
func TestResetOffsetsAsKafkaConsumerGroupsSpellsThem(t *testing.T) {
	b := strandedBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	rewind := func(args ...string) (int, string, string) {
		return runCmd(t, "", append([]string{"rewind", "--brokers", b.Addr(), "--group", "g"}, args...)...)
	}
	for _, tc := range []struct {
		name string
		args []string
		row  string // committed, target, direction of stranded/0
	}{
		{"--to-offset", []string{"--reset-offsets", "--to-offset", "82", "--topic", "stranded:0"}, "stranded\t0\t202\t82\t"},
		{"--shift-by back", []string{"--reset-offsets", "--shift-by", "-120", "--topic", "stranded:0"}, "stranded\t0\t202\t82\t"},
		{"--to-earliest", []string{"--reset-offsets", "--to-earliest", "--topic", "stranded:0"}, "stranded\t0\t202\t0\t"},
		{"--to-latest is where the group is", []string{"--reset-offsets", "--to-latest", "--topic", "stranded:0"}, "stranded\t0\t202\t202\t"},
		{"--to-datetime before every record is the log start", []string{"--reset-offsets", "--to-datetime", "2000-01-01T00:00:00.000", "--topic", "stranded:0"}, "stranded\t0\t202\t0\t"},
		{"--to-datetime after every record is the end", []string{"--reset-offsets", "--to-datetime", "2999-01-01T00:00:00.000Z", "--topic", "stranded:0"}, "stranded\t0\t202\t202\t"},
		{"--by-duration of ten years is the log start", []string{"--reset-offsets", "--by-duration", "P3650D", "--topic", "stranded:0"}, "stranded\t0\t202\t0\t"},
		{"--all-topics is the group's committed topics", []string{"--reset-offsets", "--to-offset", "82", "--all-topics"}, "stranded\t0\t202\t82\t"},
		{"the TOPIC:PARTITION spelling of --to is the same", []string{"--to", "stranded:0=82"}, "stranded\t0\t202\t82\t"},
		{"the rule flag alone, without the verb, is the same", []string{"--to-offset", "82", "--topic", "stranded:0"}, "stranded\t0\t202\t82\t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := rewind(tc.args...)
			if code != 0 || !strings.Contains(out, tc.row) {
				t.Fatalf("exit %d, want the row %q\n%s%s", code, tc.row, out, errOut)
			}
			if strings.Contains(out, "stranded\t1\t") {
				t.Fatalf("stranded/1 is out of scope (--topic stranded:0):\n%s", out)
			}
		})
	}
	// the whole topic is in scope with --topic T; a shift has nothing to shift on a
	// partition without a committed offset, and says so
	code, out, errOut := rewind("--reset-offsets", "--shift-by", "-1", "--topic", "stranded")
	if code != 0 || !strings.Contains(out, "stranded\t0\t202\t201\t") || !strings.Contains(out+errOut, "stranded/1: no committed offset to shift by -1") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// safety rules still apply: a forward move needs --allow-forward, below the log start is refused
	code, _, errOut = rewind("--reset-offsets", "--to-offset", "500", "--topic", "stranded:0")
	if code != exitcode.Refused || !strings.Contains(errOut, "beyond the high watermark 202") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if c := committedAt(t, adm, "g"); c != 202 {
		t.Fatalf("a dry run moved the committed offset to %d", c)
	}

	// --export writes the Java tool's CSV; --from-file applies it
	code, out, errOut = rewind("--reset-offsets", "--to-offset", "82", "--topic", "stranded:0", "--export")
	if code != 0 || out != "stranded,0,82\n" {
		t.Fatalf("--export: exit %d, stdout %q\n%s", code, out, errOut)
	}
	csv := writeFile(t, "reset.csv", out)
	code, out, errOut = rewind("--from-file", csv, "--execute", "--undo-file", filepath.Join(t.TempDir(), "u.json"))
	if code != 0 || !strings.Contains(out, "stranded/0: 202 -> 82") {
		t.Fatalf("--from-file CSV --execute: exit %d\n%s%s", code, out, errOut)
	}
	if c := committedAt(t, adm, "g"); c != 82 {
		t.Fatalf("committed %d after applying the CSV, want 82", c)
	}
	// the four-column CSV names the group itself
	csv4 := writeFile(t, "reset4.csv", "g,stranded,0,80\n")
	code, out, errOut = runCmd(t, "", "rewind", "--brokers", b.Addr(), "--from-file", csv4)
	if code != 0 || !strings.Contains(out, "stranded\t0\t82\t80\t") {
		t.Fatalf("four-column CSV: exit %d\n%s%s", code, out, errOut)
	}
}

func TestResetOffsetsFlagsAreValidated(t *testing.T) {
	for _, c := range []struct {
		name, says string
		args       []string
	}{
		{"the verb alone says where to", "--reset-offsets needs where to", []string{"--reset-offsets"}},
		{"two rules contradict", "--to-earliest and --to-latest each set the targets", []string{"--reset-offsets", "--to-earliest", "--to-latest", "--topic", "t"}},
		{"a rule needs a scope", "--topic TOPIC:0,1, or --all-topics", []string{"--reset-offsets", "--to-earliest"}},
		{"a rule and --to contradict", "--to-earliest and --to both set the targets", []string{"--to-earliest", "--topic", "t", "--to", "t/0=1"}},
		{"a bad datetime names the form", "want YYYY-MM-DDTHH:mm:SS.sss", []string{"--to-datetime", "yesterday", "--topic", "t"}},
		{"a bad duration names the form", "want an ISO-8601 duration", []string{"--by-duration", "1h", "--topic", "t"}},
		{"a bad scope is named", `partition "x"`, []string{"--to-earliest", "--topic", "t:x"}},
		{"--export changes nothing", "--export writes the plan as CSV", []string{"--to-earliest", "--topic", "t", "--export", "--execute"}},
		{"a CSV line of two fields is refused", "want topic,partition,offset", []string{"--from-file", writeFile(t, "bad.csv", "t,0\n")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, "", append([]string{"rewind", "--brokers", "127.0.0.1:1", "--group", "g"}, c.args...)...)
			if code != exitcode.Usage || !strings.Contains(errOut, c.says) {
				t.Fatalf("exit %d, stderr %q; want exit 2 saying %q\n%s", code, errOut, c.says, out)
			}
		})
	}
}

// commitInterruptingCluster is the broker's cluster whose hold's commit reaches the broker and
// then the run is interrupted before the answer is used.
type commitInterruptingCluster struct {
	*rewind.Kafka
	cancel context.CancelFunc
}

func (c commitInterruptingCluster) Hold(ctx context.Context, group string) (rewind.Holder, error) {
	h, err := c.Kafka.Hold(ctx, group)
	if err != nil {
		return nil, err
	}
	return commitInterruptingHold{h, c.cancel}, nil
}

type commitInterruptingHold struct {
	rewind.Holder
	cancel context.CancelFunc
}

func (h commitInterruptingHold) Commit(ctx context.Context, moves []rewind.Move) (map[kpart.TopicPartition]error, error) {
	if _, err := h.Holder.Commit(ctx, moves); err != nil {
		return nil, err
	}
	h.cancel() // SIGINT once the commit was sent
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestAnInterruptedRewindExecuteSaysInJSONTheCommitMayHaveBeenApplied: issue 27 §6. An
// interrupted `rewind --execute -o json` after its commit was sent printed only
// "error":"interrupted", executed.ok false and verified []. The document says the commit
// may have been applied, has the offsets read back in executed.verified, and names the
// undo file and the command that restores it; the exit is 130.
func TestAnInterruptedRewindExecuteSaysInJSONTheCommitMayHaveBeenApplied(t *testing.T) {
	b := strandedBroker(t)
	undo := filepath.Join(t.TempDir(), "undo.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prev := rewindCluster
	rewindCluster = func(k *rewind.Kafka) rewind.Cluster { return commitInterruptingCluster{k, cancel} }
	defer func() { rewindCluster = prev }()
	code, out, errs := runSeenCtx(ctx, []string{"rewind", "--brokers", b.Addr(), "--group", "g", "--to", "stranded/0=82", "--execute", "--undo-file", undo, "-o", "json"}, "")
	if code != exitcode.Interrupted {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitcode.Interrupted, out, errs)
	}
	var doc struct {
		Executed *struct {
			UndoFile string `json:"undo_file"`
			Restore  string `json:"restore_command"`
			OK       bool   `json:"ok"`
			Error    string `json:"error"`
			Verified []struct {
				Partition int32 `json:"partition"`
				Before    int64 `json:"before"`
				Target    int64 `json:"target"`
				Now       int64 `json:"now"`
				OK        bool  `json:"ok"`
			} `json:"verified"`
		} `json:"executed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Executed == nil {
		t.Fatalf("not a rewind document with executed (%v):\n%s", err, out)
	}
	x := doc.Executed
	for _, want := range []string{"interrupted after the commit was sent", "may have been applied", "undo file " + undo} {
		if !strings.Contains(x.Error, want) {
			t.Errorf("executed.error %q does not say %q", x.Error, want)
		}
	}
	if x.OK || x.UndoFile != undo || !strings.Contains(x.Restore, "--from-file "+undo) {
		t.Errorf("executed ok %v, undo_file %q, restore_command %q", x.OK, x.UndoFile, x.Restore)
	}
	if len(x.Verified) != 1 || x.Verified[0].Before != 202 || x.Verified[0].Target != 82 || x.Verified[0].Now != 82 || !x.Verified[0].OK {
		t.Errorf("executed.verified %+v, want stranded/0 202 -> 82 read back at 82", x.Verified)
	}
	if _, err := os.Stat(undo); err != nil {
		t.Errorf("the undo file named was not written: %v", err)
	}
}
