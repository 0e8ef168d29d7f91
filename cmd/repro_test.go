package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/testenv"
)

func TestReproRejectsInvalidValuesNamingTheFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		flag string
	}{
		{"a batch size of 0", []string{"repro", "--batch-size", "0"}, "--batch-size"},
		{"a negative handler delay", []string{"repro", "--handler-delay", "-1s"}, "--handler-delay"},
		{"an unknown policy", []string{"repro", "--policy", "v9"}, "--policy"},
		{"a malformed -X", []string{"repro", "-X", "debug"}, "-X"},
		{"an unknown commit mode", []string{"repro", "--commit", "sometimes"}, "--commit"},
		{"a time scale of 0", []string{"repro", "--time-scale", "0"}, "--time-scale"},
		{"a partition outside the topic", []string{"repro", "--partition", "20"}, "--partition"},
		{"a negative grace", []string{"repro", "--grace", "-1s"}, "--grace"},
		{"an unknown flag", []string{"repro", "--bogus"}, "--bogus"},
		{"an unknown output format", []string{"repro", "-o", "yaml"}, "-o"},
		{"produce without brokers", []string{"repro", "produce"}, "--brokers"},
		{"consume without a group", []string{"repro", "consume", "--brokers", "127.0.0.1:1"}, "--group"},
	}
	// Values accepted before and meaningless (issue 16 §6), in every command that runs
	// the scenario or writes the workload.
	bad := []struct {
		name string
		args []string
		flag string
	}{
		{"a negative phase timeout", []string{"--phase-timeout", "-1s"}, "--phase-timeout"},
		{"a time scale of NaN", []string{"--time-scale", "NaN"}, "--time-scale"},
		{"an infinite time scale", []string{"--time-scale", "Inf"}, "--time-scale"},
		{"a time scale below 1e-6", []string{"--time-scale", "1e-7"}, "--time-scale"},
		{"an empty topic", []string{"--topic="}, "--topic"},
		{"zero partitions", []string{"--partitions", "0"}, "--partitions must be > 0"},
	}
	for _, b := range bad {
		for _, cmd := range [][]string{{"repro"}, {"repro", "consume", "--brokers", "127.0.0.1:1", "--group", "g"}, {"simulate"}, {"repro", "produce", "--brokers", "127.0.0.1:1"}} {
			switch {
			case cmd[0] == "simulate" && (b.flag == "--time-scale" || b.flag == "--topic"),
				len(cmd) > 1 && cmd[1] == "produce" && (b.flag == "--time-scale" || b.flag == "--phase-timeout"),
				len(cmd) > 1 && cmd[1] == "consume" && (b.flag == "--phase-timeout" || strings.HasPrefix(b.flag, "--partitions")):
				continue // a flag the command does not have (simulate: no time scale, no topic; produce: no phases; consume: no phases, an existing topic)
			}
			cases = append(cases, struct {
				name string
				args []string
				flag string
			}{strings.Join(cmd[:min(2, len(cmd))], " ") + ": " + b.name, append(append([]string{}, cmd...), b.args...), b.flag})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, "", c.args...)
			if code != exitcode.Usage {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitcode.Usage, out, errs)
			}
			if !strings.Contains(errs, c.flag) {
				t.Fatalf("the error does not name %s: %q", c.flag, errs)
			}
		})
	}
}

func TestReproOnUnreachableBrokersFailsWithinTheTimeoutNamingThem(t *testing.T) {
	start := time.Now()
	code, _, errs := runCmd(t, "", "repro", "--brokers", "127.0.0.1:1", "--timeout", "3s")
	took := time.Since(start)
	if code != exitcode.Error {
		t.Fatalf("exit %d, want %d: %s", code, exitcode.Error, errs)
	}
	if !strings.Contains(errs, "127.0.0.1:1") {
		t.Fatalf("the error does not name the brokers: %q", errs)
	}
	if took > 8*time.Second {
		t.Fatalf("took %s with --timeout 3s", took)
	}
}

func TestReproInterruptedPrintsThePartialResultAndExits130(t *testing.T) {
	// A live repro at scaled time, interrupted after 3 s of wall-clock time: what it has
	// delivered by then, and how long its drain takes, are the machine's.
	testenv.MustLive(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(3*time.Second, cancel)
	var out, errs bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"repro", "-o", "json", "--grace", "5s"}, IO{In: strings.NewReader(""), Out: &out, Err: &errs})
	if code != exitcode.Interrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitcode.Interrupted, errs.String())
	}
	if took := time.Since(start); took > 3*time.Second+5*time.Second+5*time.Second {
		t.Fatalf("took %s: the drain must end within --grace", took)
	}
	var v struct {
		Runs []struct {
			Interrupted bool `json:"interrupted"`
			Partitions  []struct {
				Delivered int `json:"delivered"`
			} `json:"partitions"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("partial result is not JSON: %v\n%s", err, out.String())
	}
	if len(v.Runs) != 1 || !v.Runs[0].Interrupted || len(v.Runs[0].Partitions) == 0 || v.Runs[0].Partitions[0].Delivered == 0 {
		t.Fatalf("partial result %s", out.String())
	}
}
