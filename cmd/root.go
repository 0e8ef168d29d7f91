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
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/buildinfo"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/render"
)

// brokersEnv names the environment variable that gives the brokers when neither
// --brokers nor --bootstrap-server is set.
const brokersEnv = "KSTRANDED_BROKERS"

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

	// the connection configuration, read once per invocation (--config files are read
	// on the first call, after flag parsing)
	kafka    *kafkaconf.Config
	kafkaErr error
}

// Kafka returns the user's connection configuration. The --config files are read once:
// every later call returns the same result.
func (g *Globals) Kafka() (kafkaconf.Config, error) {
	if g.kafka == nil && g.kafkaErr == nil {
		k, err := kafkaconf.Load(g.Brokers, g.ConfigFiles, g.X)
		g.kafka, g.kafkaErr = &k, err
	}
	return *g.kafka, g.kafkaErr
}

// LiveKafka is Kafka for a command that needs a live cluster: without --brokers (or
// bootstrap.servers in a --config file) it is a usage error saying why, "inspect reads
// a live cluster".
func (g *Globals) LiveKafka(why string) (kafkaconf.Config, error) {
	k, err := g.Kafka()
	if err == nil && k.Brokers == "" {
		err = exitcode.Usagef("--brokers is required (%s)", why)
	}
	return k, err
}

// KgoOpts returns franz-go options for the user's connection configuration.
func (g *Globals) KgoOpts() ([]kgo.Opt, error) {
	k, err := g.Kafka()
	if err != nil {
		return nil, err
	}
	return k.KgoOpts()
}

// warnIgnoredProperties names, on stderr, the properties a franz-go command (inspect,
// rewind) does not read, so a misspelt key is seen rather than silently dropped.
func (g *Globals) warnIgnoredProperties(command string) {
	k, err := g.Kafka()
	if err != nil {
		return
	}
	if ign := k.IgnoredByKgo(); len(ign) > 0 {
		fmt.Fprintf(g.IO.Err, "kstranded %s: note: %s not read by this command (it uses only bootstrap.servers, security.protocol, ssl.* and sasl.* connection properties); check the spelling if you meant one of those\n",
			command, render.Safe(strings.Join(ign, ", "))+map[bool]string{true: " is", false: " are"}[len(ign) == 1]) // -X keys are the user's
	}
}

// Format returns the output format.
func (g *Globals) Format() (render.Format, error) { return render.ParseFormat(g.Output) }

// Out is where a command prints its result: the table (or JSON) on stdout; the prose
// around a table goes with it on a terminal and to stderr on a pipe, so a script reading
// stdout gets the header first and one row per line.
func (g *Globals) Out() io.Writer {
	if f, _ := g.Format(); f == render.JSON || g.Pretty() {
		return g.IO.Out
	}
	return &render.Output{Writer: g.IO.Out, Notes: g.IO.Err}
}

// Pretty reports whether table output goes to a terminal.
func (g *Globals) Pretty() bool { return render.IsTerminal(g.IO.Out) }

func exitCodeHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range exitcode.Table {
		fmt.Fprintf(&b, "  %3d  %s\n", e.Code, e.Meaning)
	}
	return b.String()
}

// exitCodes is one line of a command's "Exit codes:" help: a code of exitcode.Table and,
// where the command says more than the table, its own gloss.
type exitCodes struct {
	code  int
	gloss string
}

// exitHelp renders a command's "Exit codes:" section from exitcode.Table, so the
// meanings are written once; a gloss adds what the code means for this command.
func exitHelp(lines ...exitCodes) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, l := range lines {
		meaning := ""
		for _, e := range exitcode.Table {
			if e.Code == l.code {
				meaning = e.Meaning
			}
		}
		if meaning == "" {
			panic(fmt.Sprintf("exit code %d is not in exitcode.Table", l.code))
		}
		fmt.Fprintf(&b, "  %3d  %s\n", l.code, meaning)
		if l.gloss != "" {
			fmt.Fprintf(&b, "       here: %s\n", l.gloss)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// NewRoot builds the root command.
func NewRoot(g *Globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "kstranded",
		Short: "Find, explain and repair Kafka records a consumer fetched but never delivered",
		Long: `kstranded reproduces, proves, explains and repairs stranded Kafka records: records a
consumer fetched but never handed to its handler while the group's committed offset
moved past them. Lag does not show this loss; kstranded does.

Connection settings are librdkafka properties (-X key=value, --config FILE; a Java
client properties file, as kafka-consumer-groups.sh --command-config takes it, is read
too), so TLS and SASL work as for any librdkafka client. Secrets are never printed.

` + exitCodeHelp(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(g.IO.In)
	root.SetOut(g.IO.Out)
	root.SetErr(g.IO.Err)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.Brokers, "brokers", "b", "", "bootstrap brokers (host:port,...); also $"+brokersEnv+" or bootstrap.servers in --config; default: the embedded broker where a command supports it")
	pf.StringVar(&g.Brokers, "bootstrap-server", "", "alias of --brokers (as kafka-consumer-groups.sh spells it)")
	pf.StringArrayVarP(&g.X, "property", "X", nil, "librdkafka property key=value (repeatable), e.g. -X security.protocol=SSL")
	pf.Var(fileList{&g.ConfigFiles}, "config", "properties file, librdkafka's or a Java client's (key=value lines; repeatable, later files win; -X wins)")
	pf.Var(fileList{&g.ConfigFiles}, "command-config", "alias of --config (as kafka-consumer-groups.sh spells it; its Java client properties are read)")
	pf.StringVarP(&g.Output, "output", "o", "table", "output format: table or json")
	pf.DurationVar(&g.Timeout, "timeout", 30*time.Second, "bound on each broker operation (connect, produce, admin requests)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		for _, pointer := range []func(error) string{kcgPointer, kcgTimeout} {
			if says := pointer(err); says != "" {
				return exitcode.Usagef("%s (see %s --help)", says, c.CommandPath())
			}
		}
		return exitcode.Usagef("%v (see %s --help)", err, c.CommandPath())
	})
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			// A shell asking for completions: cobra parses the completed command's flags
			// (--brokers, -X, --config) only after this runs, so the connection
			// configuration must not be read, and cached without them, here; the
			// completion functions read it (clusterNames).
			return nil
		}
		if c.Flags().Changed("brokers") && c.Flags().Changed("bootstrap-server") {
			return exitcode.Usagef("--brokers and --bootstrap-server are the same setting; give one")
		}
		if g.Brokers == "" {
			g.Brokers = os.Getenv(brokersEnv)
		}
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
	// Every command is added here, explicitly; nil run functions mean the real ones
	// (tests pass their own to capture the parsed options).
	root.AddCommand(
		newBrokerCmd(g, nil),
		newInspectCmd(g, nil),
		newReproCmd(g, nil),
		newRewindCmd(g, nil),
		newSimulateCmd(g, nil),
		newTraceCmd(g),
		newVersionCmd(g, nil),
		newWatchCmd(g, nil),
	)
	usageArgs(root)
	wrapHelp(root)
	root.Version = buildinfo.Version()
	root.SetVersionTemplate("{{with .Annotations}}{{end}}" + currentVersion().String())
	registerCompletions(root, g)
	return root
}

// usageArgs makes every positional-argument error a usage error (exit 2, as README's
// table says), as flag errors already are: cobra returns plain errors for an unknown
// command, an extra argument or a missing one. The root command, whose positional
// arguments can only be command names, rejects anything else as an unknown command.
func usageArgs(c *cobra.Command) {
	if !c.HasParent() || (c.HasSubCommands() && !c.Runnable()) {
		// the root and commands that only group subcommands (trace): cobra prints help
		// and exits 0 for any word that names no subcommand unless the command runs
		unknown := func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return exitcode.Usagef("unknown command %q for %q (see %s --help)", args[0], c.CommandPath(), c.CommandPath())
			}
			return nil
		}
		c.Args = unknown
		c.RunE = func(c *cobra.Command, args []string) error {
			if err := unknown(c, args); err != nil {
				return err
			}
			return c.Help()
		}
	} else if check := c.Args; check != nil {
		c.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return exitcode.Usagef("%v (see %s --help)", err, c.CommandPath())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// Main runs kstranded with args and returns the process exit code.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, IO{In: in, Out: out, Err: errw})
}

// countingWriter remembers whether anything was written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

// Unwrap is the stream written to: whether it is a terminal, and how wide, is its
// (render.IsTerminal and render.Width look through; without it every table on a
// terminal came out in its pipe form).
func (c *countingWriter) Unwrap() io.Writer { return c.w }

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func run(ctx context.Context, args []string, streams IO) int {
	out := &countingWriter{w: streams.Out}
	streams.Out = out
	g := &Globals{IO: streams}
	root := NewRoot(g)
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	if ctx.Err() != nil && !errors.Is(err, exitcode.ErrInterrupted) {
		// A signal (SIGINT, SIGTERM) arrived: 130 in every command, whatever it
		// returned (broker and a plain repro consume end this way; a command that
		// finished its work as the signal came still did not run undisturbed).
		if err == nil {
			err = exitcode.ErrInterrupted
		} else {
			err = fmt.Errorf("%w: %v", exitcode.ErrInterrupted, err)
		}
	}
	if err != nil && !errors.Is(err, exitcode.ErrReported) {
		msg := err.Error()
		if k, kerr := g.Kafka(); kerr == nil {
			msg = kafkaconf.ExplainError(k.Props, msg)
		}
		if wantsJSON(g, args) {
			// every outcome is one JSON document on stdout: the error is that document
			// when the command printed none (a command that printed its document and
			// then failed says so on stderr, keeping stdout one document)
			command := strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), root.Name()))
			to := io.Writer(out)
			if out.n > 0 {
				to = streams.Err
			}
			_ = render.WriteJSON(to, ErrorDoc{Meta: render.NewMeta(ErrorSchema, command), Error: msg, ExitCode: exitcode.Code(err)})
		} else {
			// an error quotes what came from outside (a client.id, a topic, a file
			// name): escaped for the terminal as the tables are
			fmt.Fprintln(streams.Err, "kstranded: "+render.Safe(msg))
		}
	}
	return exitcode.Code(err)
}

// ErrorSchema names the JSON document of an error (with -o json: on stdout when the
// command printed nothing there, else on stderr).
const ErrorSchema = "kstranded.error/v1"

// ErrorDoc is what a failed command writes with -o json.
type ErrorDoc struct {
	render.Meta
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

// wantsJSON reports whether the user asked for JSON, wherever -o stands on the command
// line: a flag error can stop parsing before -o json is reached, and the error must
// still be JSON then.
func wantsJSON(g *Globals, args []string) bool {
	if f, err := g.Format(); err == nil && f == render.JSON && g.Output != "table" {
		return true
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		switch {
		case a == "-o" || a == "--output":
			if i+1 < len(args) && strings.EqualFold(args[i+1], "json") {
				return true
			}
		case strings.EqualFold(a, "-ojson"), strings.EqualFold(a, "-o=json"), strings.EqualFold(a, "--output=json"):
			return true
		}
	}
	return false
}

// fileList is a repeatable file flag whose spellings (--config, --command-config) append
// to one list in command-line order, so a later file wins whichever name gave it (two
// pflag string arrays on one slice would each replace what the other read).
type fileList struct{ files *[]string }

// String is empty for no files, so help shows no "(default [])".
func (f fileList) String() string {
	if f.files == nil || len(*f.files) == 0 {
		return ""
	}
	return "[" + strings.Join(*f.files, ",") + "]"
}

func (f fileList) Set(v string) error { *f.files = append(*f.files, v); return nil }

func (f fileList) Type() string { return "stringArray" }

// positiveDur validates a duration flag.
func positiveDur(name string, d time.Duration, allowZero bool) error {
	if d < 0 || (!allowZero && d == 0) {
		return exitcode.Usagef("--%s must be > 0, got %s", name, d)
	}
	return nil
}
