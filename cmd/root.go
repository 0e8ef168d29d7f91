// Package cmd wires kstranded's cobra commands to the domain packages. Each file here
// only parses flags into an options struct, validates them, and calls a domain package;
// the work and the decisions live elsewhere (repro, inspect, trace, ...).
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/render"
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Globals are the flags every command shares.
type Globals struct {
	IO          IO
	Brokers     string
	X           []string
	ConfigFiles []string
	Output      string
	Timeout     time.Duration
}

// Kafka returns the user's connection configuration.
func (g *Globals) Kafka() (kafkaconf.Config, error) {
	return kafkaconf.Load(g.Brokers, g.ConfigFiles, g.X)
}

// KgoOpts returns franz-go options for the user's connection configuration.
func (g *Globals) KgoOpts() ([]kgo.Opt, error) {
	k, err := g.Kafka()
	if err != nil {
		return nil, err
	}
	return k.KgoOpts()
}

// Format returns the output format.
func (g *Globals) Format() (render.Format, error) { return render.ParseFormat(g.Output) }

// Pretty reports whether table output goes to a terminal.
func (g *Globals) Pretty() bool { return render.IsTerminal(g.IO.Out) }

// registry holds the constructors of the top-level commands; each command file adds
// itself in init, so this file does not change when a command is added.
var registry []func(*Globals) *cobra.Command

func register(f func(*Globals) *cobra.Command) { registry = append(registry, f) }

func exitCodeHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range exitcode.Table {
		fmt.Fprintf(&b, "  %3d  %s\n", e.Code, e.Meaning)
	}
	return b.String()
}

// NewRoot builds the root command.
func NewRoot(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "kstranded",
		Short: "Find, explain and repair Kafka records a consumer fetched but never delivered",
		Long: `kstranded reproduces, proves, explains and repairs stranded Kafka records: records a
consumer fetched but never handed to its handler while the group's committed offset
moved past them. Lag does not show this loss; kstranded does.

Connection settings are librdkafka properties (-X key=value, --config FILE), so TLS and
SASL work as for any librdkafka client. Secrets are never printed.

` + exitCodeHelp(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(g.IO.In)
	root.SetOut(g.IO.Out)
	root.SetErr(g.IO.Err)
	pf := root.PersistentFlags()
	pf.StringVar(&g.Brokers, "brokers", "", "bootstrap brokers (host:port,...); default: the embedded broker where a command supports it")
	pf.StringArrayVarP(&g.X, "property", "X", nil, "librdkafka property key=value (repeatable), e.g. -X security.protocol=SSL")
	pf.StringArrayVar(&g.ConfigFiles, "config", nil, "librdkafka properties file (key=value lines; repeatable; -X wins)")
	pf.StringVarP(&g.Output, "output", "o", "table", "output format: table or json")
	pf.DurationVar(&g.Timeout, "timeout", 30*time.Second, "bound on each broker operation (connect, produce, admin requests)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitcode.Usagef("%v (see %s --help)", err, c.CommandPath())
	})
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if g.Timeout <= 0 {
			return exitcode.Usagef("--timeout must be > 0")
		}
		if _, err := g.Format(); err != nil {
			return err
		}
		if _, err := g.Kafka(); err != nil {
			return err
		}
		return nil
	}
	cmds := make([]*cobra.Command, 0, len(registry))
	for _, f := range registry {
		cmds = append(cmds, f(g))
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name() < cmds[j].Name() })
	root.AddCommand(cmds...)
	return root
}

// Main runs kstranded with args and returns the process exit code.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, IO{In: in, Out: out, Err: errw})
}

func run(ctx context.Context, args []string, streams IO) int {
	g := &Globals{IO: streams}
	root := NewRoot(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, exitcode.ErrReported) {
		msg := err.Error()
		if k, kerr := g.Kafka(); kerr == nil {
			msg = kafkaconf.ExplainError(k.Props, msg)
		}
		if f, _ := g.Format(); f == render.JSON {
			_ = render.WriteJSON(streams.Err, map[string]any{"error": msg, "exit_code": exitcode.Code(err)})
		} else {
			fmt.Fprintln(streams.Err, "kstranded: "+msg)
		}
	}
	return exitcode.Code(err)
}

// positiveDur validates a duration flag.
func positiveDur(name string, d time.Duration, allowZero bool) error {
	if d < 0 || (!allowZero && d == 0) {
		return exitcode.Usagef("--%s must be > 0, got %s", name, d)
	}
	return nil
}
