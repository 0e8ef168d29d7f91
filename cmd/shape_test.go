package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// execWith runs a command built by newCmd with args and returns its error; the run
// functions the tests pass capture the parsed options, so nothing touches a broker.
func execWith(t *testing.T, c interface {
	SetArgs([]string)
	Execute() error
}, args ...string) error {
	t.Helper()
	c.SetArgs(args)
	return c.Execute()
}

func TestBrokerFlagsReachTheOptions(t *testing.T) {
	var got *brokerOptions
	c := newBrokerCmd(&Globals{}, func(_ context.Context, o *brokerOptions) error { got = o; return nil })
	if err := execWith(t, c, "--port", "9092", "--partitions", "3", "--topic", ""); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Port != 9092 || got.Partitions != 3 || got.Topic != "" {
		t.Fatalf("%+v", got)
	}
}

func TestBrokerRejectsAPortOutOfRangeBeforeRunning(t *testing.T) {
	ran := false
	c := newBrokerCmd(&Globals{}, func(context.Context, *brokerOptions) error { ran = true; return nil })
	err := execWith(t, c, "--port", "70000")
	if ran || exitcode.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), "--port") {
		t.Fatalf("ran %v, err %v", ran, err)
	}
}

func TestInspectFlagsReachTheOptions(t *testing.T) {
	var got *inspectOptions
	g := &Globals{Brokers: "127.0.0.1:1"}
	c := newInspectCmd(g, func(_ context.Context, o *inspectOptions) error { got = o; return nil })
	err := execWith(t, c, "--group", "billing", "-t", "orders", "-t", "refunds", "--delivered", "a.jsonl",
		"--max-scan", "500", "--watch", "5s", "--count", "3", "--delivered-when", "msg=processed")
	if err != nil {
		t.Fatal(err)
	}
	if got.Group != "billing" || !slices.Equal(got.Topics, []string{"orders", "refunds"}) || !slices.Equal(got.Delivered, []string{"a.jsonl"}) ||
		got.MaxScan != 500 || got.Watch != 5*time.Second || got.Count != 3 || got.When != "msg=processed" {
		t.Fatalf("%+v", got)
	}
}

func TestInspectNeedsAGroupAndBrokersBeforeRunning(t *testing.T) {
	for _, tc := range []struct {
		name    string
		brokers string
		args    []string
		want    string
	}{
		{"--describe and no group", "127.0.0.1:1", []string{"--describe"}, "--group"},
		{"no brokers", "", []string{"--group", "g"}, "--brokers"},
		{"count without watch", "127.0.0.1:1", []string{"--group", "g", "--count", "2"}, "--count needs --watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			c := newInspectCmd(&Globals{Brokers: tc.brokers}, func(context.Context, *inspectOptions) error { ran = true; return nil })
			err := execWith(t, c, tc.args...)
			if ran || exitcode.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ran %v, err %v", ran, err)
			}
		})
	}
}

func TestRewindFlagsReachTheOptions(t *testing.T) {
	var got *rewindOptions
	c := newRewindCmd(&Globals{Brokers: "127.0.0.1:1"}, func(_ context.Context, o *rewindOptions) error { got = o; return nil })
	err := execWith(t, c, "--group", "billing", "--to", "orders/3=1200,orders/7=880", "--execute", "--undo-file", "u.json",
		"--delivered", "app.log", "--delivered-when", "msg~^processed$")
	if err != nil {
		t.Fatal(err)
	}
	if got.Group != "billing" || !got.Execute || got.UndoFile != "u.json" || len(got.targets) != 2 || got.When != "msg~^processed$" {
		t.Fatalf("%+v", got)
	}
}

func TestRewindRefusesContradictoryFlagsBeforeRunning(t *testing.T) {
	ran := false
	c := newRewindCmd(&Globals{Brokers: "127.0.0.1:1"}, func(context.Context, *rewindOptions) error { ran = true; return nil })
	err := execWith(t, c, "--group", "g", "--to", "t/0=1", "--execute", "--dry-run")
	if ran || exitcode.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), "--execute and --dry-run") {
		t.Fatalf("ran %v, err %v", ran, err)
	}
}

func TestReproFlagsReachTheOptions(t *testing.T) {
	var got *reproOptions
	c := newReproCmd(&Globals{}, func(_ context.Context, o *reproOptions) error { got = o; return nil })
	err := execWith(t, c, "--policy", "all", "--commit", "ledger", "--handler-delay", "1s", "--max-poll-interval", "2m",
		"--batch-size", "7", "--fetch-wait-max", "100ms", "--time-scale", "1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Policy != "all" || got.Commit != "ledger" || got.HandlerDelay != time.Second || got.MaxPollInterval != 2*time.Minute ||
		got.BatchSize != 7 || got.FetchWaitMax != 100*time.Millisecond || !got.fetchWaitSet || got.TimeScale != 1 {
		t.Fatalf("%+v", got)
	}
}

func TestEveryCommandsHelpListsItsExitCodesFromTheTable(t *testing.T) {
	for _, args := range [][]string{{"broker", "--help"}, {"repro", "--help"}, {"inspect", "--help"}, {"rewind", "--help"}, {"trace", "parse", "--help"}} {
		var out bytes.Buffer
		code := run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &out})
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, e := range exitcode.Table {
			if e.Code == exitcode.Usage && !strings.Contains(out.String(), e.Meaning) {
				t.Fatalf("%v help lacks %q:\n%s", args, e.Meaning, out.String())
			}
		}
	}
}

func TestTheConfigFileIsReadOncePerInvocation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(path, []byte("bootstrap.servers=127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &Globals{ConfigFiles: []string{path}}
	k1, err := g.Kafka()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("bootstrap.servers=127.0.0.1:2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k2, _ := g.Kafka()
	if k1.Brokers != k2.Brokers || k1.Brokers != "127.0.0.1:1" {
		t.Fatalf("read twice: %q then %q", k1.Brokers, k2.Brokers)
	}
}
