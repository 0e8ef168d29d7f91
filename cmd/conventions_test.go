package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/buildinfo"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/spf13/cobra"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestVersionAndTheVersionFlagSayTheSameAsEveryJSONDocument(t *testing.T) {
	code, text, _ := runArgs(t, "version")
	if code != 0 || !strings.HasPrefix(text, "kstranded "+buildinfo.Version()+"\n") || !strings.Contains(text, "librdkafka 2.") {
		t.Fatalf("exit %d\n%s", code, text)
	}
	code, flag, _ := runArgs(t, "--version")
	if code != 0 || flag != text {
		t.Fatalf("--version (exit %d) differs from version:\n%s\n%s", code, flag, text)
	}
	code, js, _ := runArgs(t, "version", "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, js)
	}
	if doc["version"] != doc["_version"] || doc["_version"] != buildinfo.Version() || doc["schema"] != "kstranded.version/v1" || doc["librdkafka"] == "" {
		t.Fatalf("%v", doc)
	}
}

func TestBrokersComeFromTheFlagItsAliasOrTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"--brokers", "", []string{"--brokers", "a:1"}, "a:1"},
		{"-b", "", []string{"-b", "a:2"}, "a:2"},
		{"--bootstrap-server", "", []string{"--bootstrap-server", "a:3"}, "a:3"},
		{"the environment", "e:9", nil, "e:9"},
		{"the flag wins over the environment", "e:9", []string{"--brokers", "a:4"}, "a:4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(brokersEnv, tc.env)
			g := &Globals{}
			var got string
			root := NewRoot(g)
			root.AddCommand(newProbeCmd(func() { k, _ := g.Kafka(); got = k.Brokers }))
			root.SetArgs(append([]string{"probe"}, tc.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("brokers %q, want %q", got, tc.want)
			}
		})
	}
}

// --command-config is kafka-consumer-groups.sh's name for --config: both read the same
// list of files, in command-line order, so the later file wins whichever name gave it.
func TestCommandConfigIsAnAliasOfConfigInCommandLineOrder(t *testing.T) {
	a := writeFile(t, "a.properties", "bootstrap.servers=a:1\nclient.id=from-a\n")
	b := writeFile(t, "b.properties", "client.id=from-b\n")
	for _, tc := range []struct {
		name     string
		args     []string
		brokers  string
		clientID string
	}{
		{"--command-config alone is read", []string{"--command-config", a}, "a:1", "from-a"},
		{"a later --command-config wins over --config", []string{"--config", a, "--command-config", b}, "a:1", "from-b"},
		{"a later --config wins over --command-config", []string{"--command-config", b, "--config", a}, "a:1", "from-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(brokersEnv, "")
			g := &Globals{}
			var got string
			var props map[string]string
			root := NewRoot(g)
			root.AddCommand(newProbeCmd(func() { k, _ := g.Kafka(); got, props = k.Brokers, k.Props }))
			root.SetArgs(append([]string{"probe"}, tc.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if got != tc.brokers || props["client.id"] != tc.clientID {
				t.Fatalf("brokers %q client.id %q, want %q %q", got, props["client.id"], tc.brokers, tc.clientID)
			}
		})
	}
}

func TestBrokersAndItsAliasTogetherAreAUsageError(t *testing.T) {
	code, _, errs := runArgs(t, "inspect", "--group", "g", "--brokers", "a:1", "--bootstrap-server", "b:2")
	if code != exitcode.Usage || !strings.Contains(errs, "--bootstrap-server") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestCompletionOffersTheFixedValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "repro", "--policy", ""}, []string{"1.8.0", "1.8.2", "1.9.0", "1.9.1", "1.10.0", "1.10.1", "head", "all"}},
		{[]string{"__complete", "repro", "--client", ""}, []string{"1.8.0", "1.8.2", "1.9.0", "1.9.1", "1.10.0", "1.10.1", "head", "all"}},
		{[]string{"__complete", "repro", "--commit", ""}, []string{"auto", "ledger", "manual", "explicit", "all"}},
		{[]string{"__complete", "simulate", "--pause-from", ""}, []string{"handler", "outside"}},
		{[]string{"__complete", "inspect", "-o", ""}, []string{"table", "json"}},
		{[]string{"__complete", "trace", "parse", "--format", ""}, []string{"auto", "kstranded", "librdkafka"}},
	} {
		code, out, _ := runArgs(t, tc.args...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w+"\n") {
				t.Fatalf("%v: exit %d, lacks %q:\n%s", tc.args, code, w, out)
			}
		}
	}
}

func TestGroupCompletionWithoutAClusterOffersNothingAtOnce(t *testing.T) {
	t.Setenv(brokersEnv, "")
	code, out, _ := runArgs(t, "__complete", "inspect", "--group", "")
	if code != 0 || strings.TrimSpace(out) != ":4" {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// newProbeCmd is a command that only calls f, to observe the globals after parsing.
func newProbeCmd(f func()) *cobra.Command {
	return &cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { f(); return nil }}
}

func TestArgumentErrorsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"nosuch"},
		{"trace", "nosuch"},
		{"repro", "extra"},
		{"trace", "parse"},
		{"inspect", "extra", "--group", "g", "--brokers", "127.0.0.1:1"},
		{"version", "extra"},
	} {
		code, _, errs := runArgs(t, args...)
		if code != exitcode.Usage || !strings.Contains(errs, "--help") {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitcode.Usage, errs)
		}
	}
	for _, args := range [][]string{{}, {"trace"}, {"help", "repro"}} {
		if code, _, errs := runArgs(t, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

func TestAMalformedSecretPropertyIsNeverEchoed(t *testing.T) {
	for _, o := range []string{"table", "json"} {
		code, out, errs := runArgs(t, "inspect", "--group", "g", "--brokers", "127.0.0.1:1", "-o", o, "-X", "sasl.password:S3CRET")
		// the error is on stderr, or (-o json) the one JSON document on stdout
		if code != exitcode.Usage || strings.Contains(out+errs, "S3CRET") || !strings.Contains(out+errs, "sasl.password") {
			t.Errorf("-o %s: exit %d:\n%s%s", o, code, out, errs)
		}
	}
}

func TestInspectNamesAPropertyItDoesNotRead(t *testing.T) {
	_, _, errs := runArgs(t, "inspect", "--group", "g", "--brokers", "127.0.0.1:1", "--timeout", "200ms", "-X", "securty.protocol=SSL")
	if !strings.Contains(errs, "securty.protocol is not read by this command") {
		t.Fatalf("no warning naming the misspelt key:\n%s", errs)
	}
}

// runSeen runs kstranded as a person at a pipe sees it: with -o json, the document on
// stdout alone (stderr may hold client logs); else stdout and stderr in the order they
// were written, because on a pipe the prose around a table goes to stderr (see
// TestOnAPipeTheTableIsStdoutAndTheProseStderr for the split itself).
func runSeen(args []string, stdin string) (int, string, string) {
	return runSeenCtx(context.Background(), args, stdin)
}

func runSeenCtx(ctx context.Context, args []string, stdin string) (int, string, string) {
	var o, e, both bytes.Buffer
	code := run(ctx, args, IO{In: strings.NewReader(stdin), Out: io.MultiWriter(&o, &both), Err: io.MultiWriter(&e, &both)})
	if wantsJSON(&Globals{}, args) {
		return code, o.String(), e.String()
	}
	return code, both.String(), e.String()
}

// TestOnAPipeTheTableIsStdoutAndTheProseStderr: a script reading stdout gets the table's
// header on the first line and one row per line after it; what a person reads around the
// table (verdict lines, details, findings) goes to stderr.
func TestOnAPipeTheTableIsStdoutAndTheProseStderr(t *testing.T) {
	b := strandedBroker(t)
	trace := writeFile(t, "t.jsonl", strandedTrace)
	for _, tc := range []struct {
		name   string
		args   []string
		header string
		prose  string
	}{
		{"inspect", []string{"inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", trace}, "TOPIC\tPARTITION\tCOMMITTED", "LOST: 118 records"},
		{"rewind", []string{"rewind", "--brokers", b.Addr(), "--group", "g", "--delivered", trace}, "TOPIC\tPARTITION\tCOMMITTED\tTARGET", "DRY RUN: 1 partition would move"},
		{"trace parse", []string{"trace", "parse", fixture("kstranded-v1.10.0.trace")}, "PARTITION\tFETCHED\tDELIVERED", "118 records (82-199) were fetched, never delivered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			run(context.Background(), tc.args, IO{In: strings.NewReader(""), Out: &out, Err: &errs})
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if !strings.HasPrefix(lines[0], tc.header) {
				t.Fatalf("stdout does not start with the header %q:\n%s", tc.header, out.String())
			}
			for _, l := range lines[1:] {
				if strings.Count(l, "\t") != strings.Count(lines[0], "\t") {
					t.Fatalf("stdout line %q is not a row of the table:\n%s", l, out.String())
				}
			}
			if !strings.Contains(errs.String(), tc.prose) || strings.Contains(out.String(), tc.prose) {
				t.Fatalf("the prose %q belongs on stderr\nstdout:\n%s\nstderr:\n%s", tc.prose, out.String(), errs.String())
			}
		})
	}
}

// TestGroupAndTopicCompletionReadTheBrokersOfTheCommandLineBeingCompleted: the root's
// pre-run ran for __complete before cobra parsed the completed command's flags and
// cached a configuration without brokers, so only $KSTRANDED_BROKERS named a cluster.
// Every spelling of the brokers on the line being completed now does.
func TestGroupAndTopicCompletionReadTheBrokersOfTheCommandLineBeingCompleted(t *testing.T) {
	t.Setenv(brokersEnv, "")
	b := strandedBroker(t)
	props := filepath.Join(t.TempDir(), "client.properties")
	if err := os.WriteFile(props, []byte("bootstrap.servers="+b.Addr()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, spelling := range [][]string{
		{"--brokers", b.Addr()},
		{"-b", b.Addr()},
		{"--bootstrap-server", b.Addr()},
		{"--brokers=" + b.Addr()},
		{"-X", "bootstrap.servers=" + b.Addr()},
		{"--config", props},
	} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"__complete", "inspect", "--group", ""}, "g"},
			{[]string{"__complete", "repro", "--topic", ""}, "stranded"},
		} {
			args := append(append(tc.args[:2:2], spelling...), tc.args[2:]...)
			code, out, _ := runArgs(t, args...)
			if code != 0 || !strings.Contains("\n"+out, "\n"+tc.want+"\n") {
				t.Errorf("%v: exit %d, does not offer %q:\n%s", args, code, tc.want, out)
			}
		}
	}
	t.Setenv(brokersEnv, b.Addr())
	if code, out, _ := runArgs(t, "__complete", "inspect", "--group", ""); code != 0 || !strings.Contains("\n"+out, "\ng\n") {
		t.Errorf("with $%s: exit %d, does not offer g:\n%s", brokersEnv, code, out)
	}
}
