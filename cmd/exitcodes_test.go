package cmd

import (
	"context"
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
	"github.com/kstranded/kstranded/trace"
)

// Each command's own outcome function, given a run whose overall verdict is v.
var outcomes = map[string]func(v verdict.Verdict) error{
	"repro":         reproOutcome,
	"repro consume": reproOutcome,
	"inspect": func(v verdict.Verdict) error {
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
	},
	"trace parse": func(v verdict.Verdict) error {
		return traceOutcome(&trace.Report{Verdict: v}, render.Table)
	},
}

// TestEveryCommandExitsWithTheSameCodeForTheSameVerdict: 3 lost, 4 stranded, 6 not
// enough evidence, 1 a partition not judged, 0 OK, in every command that judges.
func TestEveryCommandExitsWithTheSameCodeForTheSameVerdict(t *testing.T) {
	verdicts := []struct {
		v    verdict.Verdict
		code int
	}{
		{verdict.OK, exitcode.OK},
		{verdict.Lost, exitcode.Lost},
		{verdict.Stranded, exitcode.Stranded},
		{verdict.NoEvidence, exitcode.NoEvidence},
		{verdict.NoCommitEvidence, exitcode.NoEvidence},
		{verdict.Error, exitcode.Error},
		{verdict.Incomplete, exitcode.Error},
	}
	for _, cmd := range []string{"repro", "repro consume", "inspect", "trace parse"} {
		for _, vc := range verdicts {
			if cmd == "repro" || cmd == "repro consume" {
				if vc.v != verdict.OK && vc.v != verdict.Lost && vc.v != verdict.Stranded {
					continue // repro judges the records it produced and fetched: never without evidence
				}
			}
			if cmd == "trace parse" && (vc.v == verdict.Error || vc.v == verdict.Incomplete) {
				continue // trace parse has no unreadable partition: an unreadable file is an error
			}
			t.Run(fmt.Sprintf("%s %s exits %d", cmd, vc.v, vc.code), func(t *testing.T) {
				if got := exitcode.Code(outcomes[cmd](vc.v)); got != vc.code {
					t.Fatalf("exit %d, want %d", got, vc.code)
				}
			})
		}
	}
}

// TestEveryCommandExits130WhenInterrupted: a signal cancels the command's context
// (signal.NotifyContext in Main); whatever the command returns then, the exit is 130.
// The integration suite sends real signals to the long-running commands.
func TestEveryCommandExits130WhenInterrupted(t *testing.T) {
	cases := [][]string{
		{"broker"},
		{"repro", "--time-scale", "0.001"},
		{"repro", "consume", "--brokers", "127.0.0.1:1", "--group", "g", "--topic", "t"},
		{"repro", "produce", "--brokers", "127.0.0.1:1"},
		{"inspect", "--brokers", "127.0.0.1:1", "--group", "g"},
		{"inspect", "--brokers", "127.0.0.1:1", "--group", "g", "--watch", "1s"},
		{"rewind", "--brokers", "127.0.0.1:1", "--group", "g", "--to", "t/0=1"},
		{"trace", "parse", "-"},
		{"trace", "parse", "--group", "g", "--brokers", "127.0.0.1:1", fixture("kstranded-v1.10.0.trace")},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			stdin, w := io.Pipe() // stays open, as a terminal's stdin does
			defer w.Close()
			var out, errb strings.Builder
			if code := run(ctx, append(args, "--timeout", "2s"), IO{In: stdin, Out: &out, Err: &errb}); code != exitcode.Interrupted {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitcode.Interrupted, out.String(), errb.String())
			}
		})
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
