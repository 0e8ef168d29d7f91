package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/rewind"
	"github.com/kstranded/kstranded/simulate"
	"github.com/kstranded/kstranded/trace"
	"github.com/spf13/cobra"
)

// judging: every command that gives a verdict, with its outcome (the exit of a run
// whose overall verdict is v, built from the domain's result as the command builds it)
// and the verdicts its domain cannot express (each with why).
var judging = map[string]struct {
	outcome func(v verdict.Verdict) error
	never   map[verdict.Verdict]string
}{
	"repro": {outcome: func(v verdict.Verdict) error {
		// --client all: the outcome is the worst run's (repro.Outcome)
		return verdictOutcome(repro.Outcome([]*repro.Result{{Verdict: verdict.OK}, {Verdict: v}}))
	}},
	"repro consume": {outcome: func(v verdict.Verdict) error {
		return verdictOutcome((&repro.ConsumeResult{Verdict: v}).Verdict)
	}},
	"simulate": {outcome: func(v verdict.Verdict) error {
		return verdictOutcome(repro.Outcome([]*repro.Result{{Verdict: v}, {Verdict: verdict.OK}}))
	}},
	"simulate --sweep": {outcome: func(v verdict.Verdict) error {
		return sweepOutcome(&simulate.Result{Rows: []simulate.Row{{Cells: []simulate.Cell{{Verdict: verdict.OK}, {Verdict: v}}}}})
	}},
	"simulate --advise": {outcome: func(v verdict.Verdict) error {
		a := &simulate.Advice{}
		if v == verdict.Lost {
			a.Lost = 118
		}
		return verdictOutcome(a.Verdict())
	}, never: notLostOrOK("advice reports records lost at the user's settings or none")},
	"inspect": {outcome: func(v verdict.Verdict) error {
		j := &inspect.Judgement{Judgement: judge.NotJudged(v, "")}
		switch v {
		case verdict.Lost:
			j.LostCount = 118
		case verdict.Stranded:
			j.StrandedCount = 118
		}
		r := &inspect.Report{Evidence: evidence.NewSet(), Partitions: []inspect.PartitionReport{{
			Offsets: inspect.Offsets{Topic: "stranded", Committed: 202}, Judgement: j}}}
		return outcome(r)
	}},
	"trace parse": {outcome: func(v verdict.Verdict) error {
		return traceOutcome(&trace.Report{Verdict: v}, render.Table)
	}, never: map[verdict.Verdict]string{
		verdict.Error:      "trace parse has no unreadable partition: an unreadable file is an error",
		verdict.Incomplete: "trace parse has no unreadable partition: an unreadable file is an error",
	}},
	"watch": {outcome: func(v verdict.Verdict) error { return watchOutcome(v, nil) }},
	"rewind": {outcome: func(v verdict.Verdict) error {
		plan := &rewind.Plan{}
		if v == verdict.Lost { // offsets never delivered, deleted below the log start
			plan.Unrecoverable = []rewind.Unrecoverable{{Topic: "stranded", Partition: 0, Count: 3}}
		}
		return planOutcome(plan)
	}, never: notLostOrOK("a plan restores what it can; what it cannot restore is lost, the rest it refuses (5) or moves")},
}

// judgingNothing: the commands without a verdict, and why.
var judgingNothing = map[string]string{
	"broker":        "runs a broker until interrupted",
	"version":       "prints the version",
	"repro produce": "writes records; the producer's acknowledgements are its outcome",
}

func notLostOrOK(why string) map[verdict.Verdict]string {
	m := map[verdict.Verdict]string{}
	for _, v := range everyVerdict {
		if v != verdict.OK && v != verdict.Lost {
			m[v] = why
		}
	}
	return m
}

// everyVerdict is every word of package verdict with its code.
var everyVerdict = []verdict.Verdict{verdict.OK, verdict.NoEvidence, verdict.NoCommitEvidence, verdict.NoRecordEvidence,
	verdict.Incomplete, verdict.Error, verdict.Stranded, verdict.Lost}

var verdictCode = map[verdict.Verdict]int{
	verdict.OK:               exitcode.OK,
	verdict.NoEvidence:       exitcode.NoEvidence,
	verdict.NoCommitEvidence: exitcode.NoEvidence,
	verdict.NoRecordEvidence: exitcode.NoEvidence,
	verdict.Incomplete:       exitcode.Error,
	verdict.Error:            exitcode.Error,
	verdict.Stranded:         exitcode.Stranded,
	verdict.Lost:             exitcode.Lost,
}

// TestEveryCommandIsJudgingOrSaysWhyNot: a new command must say what its verdict exits,
// or why it gives none, before the table below can be complete.
func TestEveryCommandIsJudgingOrSaysWhyNot(t *testing.T) {
	root := NewRoot(&Globals{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}})
	var walk func(c *cobra.Command)
	seen := map[string]bool{}
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.HasParent() || !c.Runnable() || c.Hidden || (c.HasSubCommands() && c.Name() == "trace") {
			return
		}
		name := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		seen[name] = true
		_, judges := judging[name]
		_, why := judgingNothing[name]
		if judges == why {
			t.Errorf("%q: in judging %v, in judgingNothing %v; want exactly one", name, judges, why)
		}
	}
	walk(root)
	for name := range judgingNothing {
		if !seen[name] {
			t.Errorf("judgingNothing names %q, which is no command", name)
		}
	}
	for name := range judging {
		if base, _, _ := strings.Cut(name, " --"); !seen[base] {
			t.Errorf("judging names %q, which is no command", name)
		}
	}
	for _, v := range everyVerdict {
		if _, ok := verdictCode[v]; !ok {
			t.Errorf("verdict %s has no code in the table", v)
		}
	}
}

// TestEveryCommandExitsWithTheSameCodeForTheSameVerdict: 3 lost, 4 stranded, 6 not
// enough evidence, 1 a partition not judged, 0 OK, in every command that judges, for
// every verdict its domain can give.
func TestEveryCommandExitsWithTheSameCodeForTheSameVerdict(t *testing.T) {
	for cmd, j := range judging {
		for _, v := range everyVerdict {
			if _, never := j.never[v]; never {
				continue
			}
			want := verdictCode[v]
			t.Run(fmt.Sprintf("%s %s exits %d", cmd, v, want), func(t *testing.T) {
				if got := exitcode.Code(j.outcome(v)); got != want {
					t.Fatalf("exit %d, want %d", got, want)
				}
			})
		}
	}
}

func TestARefusedRewindPlanExits5EvenWithRecordsItCannotRestore(t *testing.T) {
	plan := &rewind.Plan{
		Moves:         []rewind.Move{{Topic: "stranded", Partition: 1, Refused: "target 9 is beyond the high watermark 3"}},
		Unrecoverable: []rewind.Unrecoverable{{Topic: "stranded", Partition: 0, Count: 3}},
	}
	err := planOutcome(plan)
	if got := exitcode.Code(err); got != exitcode.Refused {
		t.Fatalf("exit %d, want %d (%v)", got, exitcode.Refused, err)
	}
	if !strings.Contains(err.Error(), "stranded/1: target 9 is beyond the high watermark 3") {
		t.Fatalf("the refusal does not name the move: %v", err)
	}
}

// TestEveryCommandExits130WhenInterrupted: a signal cancels the command's context
// (signal.NotifyContext in Main), and the command itself says it was interrupted
// (exitcode.ErrInterrupted), whatever it was doing. run() would make any error 130 on a
// cancelled context; the command's own result is read here, before run() sees it. The
// integration suite sends real signals to the long-running commands.
func TestEveryCommandExits130WhenInterrupted(t *testing.T) {
	cases := [][]string{
		{"broker"},
		{"repro", "--time-scale", "0.001"},
		{"repro", "--brokers", "127.0.0.1:1", "--group", "g"},
		{"repro", "consume", "--brokers", "127.0.0.1:1", "--group", "g", "--topic", "t"},
		{"repro", "produce", "--brokers", "127.0.0.1:1"},
		{"simulate"},
		{"simulate", "--sweep", "max-poll-interval=1m..30m/1m"},
		{"simulate", "--advise"},
		{"inspect", "--brokers", "127.0.0.1:1", "--group", "g"},
		{"inspect", "--brokers", "127.0.0.1:1", "--group", "g", "--watch", "1s"},
		{"rewind", "--brokers", "127.0.0.1:1", "--group", "g", "--to", "t/0=1"},
		{"trace", "parse", "-"},
		{"trace", "parse", "--group", "g", "--brokers", "127.0.0.1:1", fixture("kstranded-v1.10.0.trace")},
		{"watch", "--brokers", "127.0.0.1:1", "--group", "g", "--count", "1"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			stdin, w := io.Pipe() // stays open, as a terminal's stdin does
			defer w.Close()
			var out, errb strings.Builder
			root := NewRoot(&Globals{IO: IO{In: stdin, Out: &out, Err: &errb}})
			if args[0] != "simulate" { // which runs no client: it refuses --timeout
				args = append(args, "--timeout", "2s")
			}
			root.SetArgs(args)
			if _, err := root.ExecuteContextC(ctx); !errors.Is(err, exitcode.ErrInterrupted) {
				t.Fatalf("the command returned %v, want exitcode.ErrInterrupted\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
			}
		})
	}
}

// TestRunExits130OnASignalWhateverTheCommandReturned: a command that finished its work
// as the signal came still did not run undisturbed.
func TestRunExits130OnASignalWhateverTheCommandReturned(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	if code := run(ctx, []string{"version"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != exitcode.Interrupted {
		t.Fatalf("exit %d, want %d", code, exitcode.Interrupted)
	}
}

func TestAnUnknownCommandIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"trace", "frobnicate"}, {"repro", "frobnicate"}} {
		var out, errb strings.Builder
		if code := run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != exitcode.Usage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitcode.Usage, errb.String())
		}
	}
}
