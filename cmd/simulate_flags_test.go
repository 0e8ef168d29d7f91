package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// Each scenario command binds the flags it reads (issue 22, item 2): its help lists
// nothing it ignores or refuses.
func TestEachScenarioCommandShowsOnlyTheFlagsItReads(t *testing.T) {
	cases := []struct {
		cmd    []string
		absent []string
	}{
		// the simulation has no client, no broker, no topic, no group and no time scale
		{[]string{"simulate"}, []string{"--topic", "--group ", "--session-timeout", "--fetch-wait-max",
			"--max-bytes-per-partition", "--read-committed", "--from-beginning", "--time-scale", "--brokers", "--bootstrap-server", "--timeout "}},
		// repro consume reads an existing topic and runs no phases
		{[]string{"repro", "consume"}, []string{"--partitions", "--phase-timeout", "--max-restarts"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.cmd, " "), func(t *testing.T) {
			code, out, errs := runCmd(t, "", append(c.cmd, "--help")...)
			if code != exitcode.OK {
				t.Fatalf("exit %d\n%s", code, errs)
			}
			_, flags, ok := strings.Cut(out, "\nFlags:")
			if !ok {
				t.Fatalf("no Flags: section:\n%s", out)
			}
			for _, f := range c.absent {
				if strings.Contains(flags, f) {
					t.Errorf("the help lists %s:\n%s", f, flags)
				}
			}
			// and still the flags it reads
			for _, f := range []string{"--max-poll-interval", "--batch-size", "--trace", "-X, --property", "--config"} {
				if !strings.Contains(flags, f) {
					t.Errorf("the help lacks %s", f)
				}
			}
		})
	}
	// hiding the global flags in simulate's help leaves them in every other command's
	code, out, _ := runCmd(t, "", "repro", "--help")
	if code != exitcode.OK || !strings.Contains(out, "--brokers") || !strings.Contains(out, "--timeout ") || !strings.Contains(out, "--time-scale") {
		t.Fatalf("repro --help lost its client flags (exit %d):\n%s", code, out)
	}
}

// simulate applies the client properties the model reads as the JS client's
// configuration writes them (-X, --config), and refuses the others naming where they
// apply: before, `-X max.poll.interval.ms=2700000` still ran 15m and reported LOST.
func TestSimulateAppliesTheClientPropertiesTheModelReads(t *testing.T) {
	settings := func(t *testing.T, want int, args ...string) map[string]string {
		t.Helper()
		code, out, errs := runCmd(t, "", append([]string{"simulate", "-o", "json"}, args...)...)
		if code != want {
			t.Fatalf("exit %d, want %d\n%s%s", code, want, out, errs)
		}
		var doc struct {
			Runs []struct {
				Settings map[string]string `json:"settings"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Runs) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		return doc.Runs[0].Settings
	}
	t.Run("max.poll.interval.ms of 45 minutes loses nothing", func(t *testing.T) {
		if s := settings(t, exitcode.OK, "-X", "max.poll.interval.ms=2700000"); s["max_poll_interval"] != "45m0s" {
			t.Fatalf("max_poll_interval %q", s["max_poll_interval"])
		}
	})
	t.Run("js.consumer.max.batch.size sets the batch size", func(t *testing.T) {
		if s := settings(t, exitcode.Lost, "-X", "js.consumer.max.batch.size=5"); s["batch_size"] != "5" {
			t.Fatalf("batch_size %q", s["batch_size"])
		}
	})
	t.Run("a --config file applies as -X does", func(t *testing.T) {
		cfg := writeFile(t, "client.properties", "max.poll.interval.ms=2700000\nauto.commit.interval.ms=1000\n")
		s := settings(t, exitcode.OK, "--config", cfg)
		if s["max_poll_interval"] != "45m0s" || s["auto_commit_interval"] != "1s" {
			t.Fatalf("settings %v", s)
		}
	})
	t.Run("a property and its flag that agree run", func(t *testing.T) {
		settings(t, exitcode.Lost, "-X", "max.poll.interval.ms=900000", "--max-poll-interval", "15m")
	})
}

func TestSimulateRefusesWhatItDoesNotModelNamingWhereItApplies(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"a client property the model does not read", []string{"-X", "fetch.wait.max.ms=500"}, []string{"fetch.wait.max.ms", "repro --fetch-wait-max"}},
		{"the session timeout", []string{"-X", "session.timeout.ms=45000"}, []string{"session.timeout.ms", "repro --session-timeout"}},
		{"a connection property in a --config file", []string{"--config", "@bootstrap"}, []string{"bootstrap.servers", "simulate runs no client"}},
		{"--brokers", []string{"--brokers", "127.0.0.1:9092"}, []string{"--brokers has no meaning"}},
		{"--bootstrap-server", []string{"--bootstrap-server", "127.0.0.1:9092"}, []string{"--bootstrap-server has no meaning"}},
		{"--timeout", []string{"--timeout", "5s"}, []string{"--timeout has no meaning"}},
		{"a property and its flag that disagree", []string{"-X", "max.poll.interval.ms=2700000", "--max-poll-interval", "15m"}, []string{"max.poll.interval.ms", "--max-poll-interval"}},
		{"a duration not in milliseconds", []string{"-X", "max.poll.interval.ms=45m"}, []string{"max.poll.interval.ms", "milliseconds"}},
		{"two spellings of one setting that disagree", []string{"-X", "fetch.message.max.bytes=4096", "-X", "max.partition.fetch.bytes=8000"}, []string{"fetch.message.max.bytes", "max.partition.fetch.bytes", "--max-bytes"}},
		{"a time scale", []string{"--time-scale", "1"}, []string{"--time-scale"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"simulate"}, c.args...)
			for i, a := range args {
				if a == "@bootstrap" {
					args[i] = writeFile(t, "client.properties", "bootstrap.servers=kafka:9092\nmax.poll.interval.ms=2700000\n")
				}
			}
			code, out, errs := runCmd(t, "", args...)
			if code != exitcode.Usage {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitcode.Usage, out, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("the error lacks %q: %s", w, errs)
				}
			}
		})
	}
}

// --svg means one thing wherever it is bound: draw what the command ran. simulate
// draws its run as repro --svg draws a live one (it refused --svg without --sweep).
func TestSimulateSVGDrawsTheRunAsReproDoes(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "run.svg")
	code, out, errs := runCmd(t, "", "simulate", "--svg", svg)
	if code != exitcode.Lost {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitcode.Lost, out, errs)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("svg: %v %.200s", err, b)
	}
	// several runs: one picture each, named as repro names them
	code, _, errs = runCmd(t, "", "simulate", "--commit", "all", "--svg", filepath.Join(dir, "runs.svg"))
	if code != exitcode.Lost {
		t.Fatalf("exit %d, want %d\n%s", code, exitcode.Lost, errs)
	}
	for _, name := range []string{"runs-v1.10.0-each-batch-auto.svg", "runs-v1.10.0-each-batch-ledger.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}
