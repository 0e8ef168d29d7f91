package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/jsclient"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/view"
)

// realClientOptions are repro's --real-client flags.
type realClientOptions struct {
	RealClient   bool
	CompareModel bool
}

// realClientHelp is repro's help on --real-client.
const realClientHelp = `--real-client runs the same scenario with the actual @confluentinc/kafka-javascript of
--client VERSION (a release, X.Y.Z), installed on demand with npm into a cache directory
($KSTRANDED_CACHE, default ~/.cache/kstranded/jsclient-VERSION; compiled once, about two
minutes, and reused after): it needs Node.js, npm and a C toolchain (gcc, g++, make,
python3, and libzstd-dev liblz4-dev libsasl2-dev libcurl4-openssl-dev), and names what is
missing (exit 1). The application that drives the client is scenario.js, carried in the
binary: it produces its own records (the shape's, in one transaction, then one more per
partition; repro's producer is not used), consumes them at 1/100 of the durations given
(the default --time-scale, the only one it runs) and prints each delivery. The run is
judged by the same judge as repro's: its deliveries against the group's committed offsets.
It takes the shape flags --spread/--records, --handler, --concurrency, --handler-parallel,
--handler-delay, --max-poll-interval, --batch-size, --commit auto|manual|explicit, --pause-at,
--resume-after, --pause-from, --pause-partitions, --seek-at, --seek, --seek-to, --heartbeat, --auto-resolve, --members,
--rebalance-at, --group-protocol, --partitions and --group; the others are refused (exit 2,
naming them). --members N runs N consumers of the group in scenario.js's node process,
connected together (m1..mN; which the broker assigns first is its own doing), each its own
copy of the application as each member of the model (its pause and seeks count from its own
run()), and each --rebalance-at join one more, each leave a disconnect(), at 1/100 of the time given (whole
milliseconds there); --group-protocol consumer gives every member group.protocol=consumer
(KIP-848), scenario.js then leaves sessionTimeout and heartbeatInterval to the broker.
--heartbeat-interval and --session-timeout are scenario.js's own (1.5 s, 6 s) and refused.
--compare-model also runs simulate on the same settings and prints model and reality side
by side (the CLIENT column).`

// bindRealClientFlags binds --real-client and --compare-model.
func bindRealClientFlags(f *pflag.FlagSet, o *realClientOptions) {
	f.BoolVar(&o.RealClient, "real-client", false, "run the real @confluentinc/kafka-javascript of --client (installed with npm on first use) instead of the model")
	f.BoolVar(&o.CompareModel, "compare-model", false, "with --real-client: also run the model (simulate) on the same settings, side by side")
}

// realClientFlags are the flags --real-client reads; any other of repro's own is refused.
var realClientFlags = map[string]bool{
	"real-client": true, "compare-model": true, "client": true, "policy": true, "spread": true, "records": true,
	"handler": true, "concurrency": true, "handler-parallel": true, "handler-delay": true, "max-poll-interval": true,
	"batch-size": true, "commit": true, "pause-at": true, "resume-after": true, "pause-from": true, "pause-partitions": true, "partitions": true, "group": true,
	"seek-at": true, "seek-to": true, "seek": true, "heartbeat": true, "auto-resolve": true,
	"members": true, "rebalance-at": true, "group-protocol": true,
}

// realClientShape maps repro's own flags (not the global ones) to the scenario's
// shape: only the flags given (a flag left alone is the seed's setting on both sides).
func realClientShape(c *cobra.Command, o *reproOptions) (jsclient.Shape, error) {
	f := c.Flags()
	var s jsclient.Shape
	var bad []string
	f.Visit(func(fl *pflag.Flag) {
		if c.InheritedFlags().Lookup(fl.Name) != nil || c.PersistentFlags().Lookup(fl.Name) != nil {
			return // a global flag: --brokers, --timeout, -o (-X and --config are refused below)
		}
		if !realClientFlags[fl.Name] && (fl.Name != "time-scale" || o.TimeScale != 1.0/jsclient.Scale) {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		return s, exitcode.Usagef("--real-client runs scenario.js, which takes no %s (see repro --help)", strings.Join(bad, ", "))
	}
	scaled := func(name string, d time.Duration) (time.Duration, error) {
		if d%jsclient.Scale != 0 || d/jsclient.Scale < time.Millisecond {
			return 0, exitcode.Usagef("--%s %s: the real client runs it at 1/%d, to the millisecond", name, d, jsclient.Scale)
		}
		return d / jsclient.Scale, nil
	}
	var err error
	if f.Changed("spread") {
		s.Spread = o.wl.Spread
	}
	if f.Changed("records") {
		s.Records = o.wl.Records
	}
	if f.Changed("handler") {
		switch eachbatch.Handler(strings.ToLower(o.Handler)) {
		case eachbatch.EachBatch:
			s.Handler = "eachBatch"
		case eachbatch.EachMessage:
			s.Handler = "eachMessage"
		default:
			return s, exitcode.Usagef("--real-client: --handler %s: one of each-batch, each-message", o.Handler)
		}
	}
	if f.Changed("concurrency") {
		s.Concurrency = o.Concurrency
	}
	if f.Changed("handler-parallel") {
		s.Parallel = o.HandlerParallel
	}
	if f.Changed("handler-delay") {
		if s.Delay, err = scaled("handler-delay", o.HandlerDelay); err != nil {
			return s, err
		}
	}
	if f.Changed("max-poll-interval") {
		if s.MaxPoll, err = scaled("max-poll-interval", o.MaxPollInterval); err != nil {
			return s, err
		}
	}
	if f.Changed("batch-size") {
		s.BatchSize = o.BatchSize
	}
	if f.Changed("commit") {
		switch c := strings.ToLower(o.Commit); c {
		case "auto":
		case "manual", "explicit":
			s.Commit = c
		default:
			return s, exitcode.Usagef("--real-client: --commit %s: the client commits auto, manual or explicit (kstranded's ledger commit is the model's)", o.Commit)
		}
	}
	if o.PauseAt != 0 {
		if s.PauseAt, err = scaled("pause-at", o.PauseAt); err != nil {
			return s, err
		}
		if s.ResumeAfter, err = scaled("resume-after", o.ResumeAfter); err != nil {
			return s, err
		}
		switch o.PauseFrom {
		case "", repro.PauseFromHandler:
		case repro.PauseFromOutside:
			s.PauseFrom = o.PauseFrom
			for i, p := range o.PausePartitions {
				if i > 0 {
					s.PausePartitions += ","
				}
				s.PausePartitions += strconv.Itoa(int(p))
			}
		default:
			return s, exitcode.Usagef("--pause-from %q: want handler or outside", o.PauseFrom)
		}
	}
	if o.SeekAt != 0 {
		if s.SeekAt, err = scaled("seek-at", o.SeekAt); err != nil {
			return s, err
		}
		s.SeekTo = o.SeekTo
	}
	if err := o.parseSeeks(); err != nil {
		return s, err
	}
	for i, k := range o.Seeks {
		at, err := scaled("seek", k.At)
		if err != nil {
			return s, err
		}
		if at%time.Millisecond != 0 {
			return s, exitcode.Usagef("--seek %s: the real client runs it at 1/%d, to the millisecond", k, jsclient.Scale)
		}
		if i > 0 {
			s.Seeks += ","
		}
		k.At = at
		s.Seeks += k.String()
	}
	s.Heartbeat = o.Heartbeat
	s.ResolveEachRound = !o.AutoResolve
	// what the model refuses with eachMessage, scenario.js would run as something else
	// (no commit at all, no heartbeat): refused the same way
	h, commit := eachbatch.EachBatch, repro.CommitAuto
	if s.Handler == "eachMessage" {
		h = eachbatch.EachMessage
	}
	if s.Commit != "" {
		commit = repro.CommitMode(s.Commit)
	}
	if err := repro.HandlerErr(h, commit, s.Heartbeat, !s.ResolveEachRound); err != nil {
		return s, exitcode.Usagef("--real-client: %v", err)
	}
	if err := s.ResolveErr(); err != nil {
		// scenario.js's own refusal, before any client starts
		return s, exitcode.Usagef("--real-client: %v", err)
	}
	if f.Changed("members") {
		if o.Members < 1 {
			return s, exitcode.Usagef("--members must be >= 1")
		}
		s.Members = o.Members
	}
	for _, a := range o.rebalanceAt {
		st, err := repro.ParseRebalanceStep(a)
		if err != nil {
			return s, exitcode.Usagef("%v", err)
		}
		// scenario.js's steps are whole milliseconds at 1/100
		if st.At%(jsclient.Scale*time.Millisecond) != 0 {
			return s, exitcode.Usagef("--rebalance-at %s: the real client runs it at 1/%d, to the millisecond (a multiple of %s)", a, jsclient.Scale, jsclient.Scale*time.Millisecond)
		}
		s.Rebalance = append(s.Rebalance, jsclient.Step{At: st.At / jsclient.Scale, Join: st.Join, Member: st.Member})
	}
	if f.Changed("group-protocol") {
		switch p := strings.ToLower(o.GroupProtocol); p {
		case "classic":
		case "consumer":
			s.GroupProtocol = p
		default:
			return s, exitcode.Usagef("--group-protocol %s: classic or consumer", o.GroupProtocol)
		}
	}
	if o.Partitions < 1 || o.Partitions > repro.MaxPartitions {
		// the topic scenario.js runs on, and the model's with --compare-model
		return s, exitcode.Usagef("--partitions must be between 1 and %d, got %d", repro.MaxPartitions, o.Partitions)
	}
	if _, err := s.SimulateArgs(); err != nil && (s.Members > 1 || len(s.Rebalance) > 0) {
		// the member plan is scenario.js's too: one that leaves a member not in the group,
		// or the last one, is refused before any client starts
		return s, exitcode.Usagef("--members/--rebalance-at: %v", err)
	}
	return s, nil
}

// runReproRealClient is repro --real-client.
func runReproRealClient(ctx context.Context, g *Globals, c *cobra.Command, o *reproOptions) error {
	if o.wlErr != nil {
		return o.wlErr
	}
	shape, err := realClientShape(c, o)
	if err != nil {
		return err
	}
	if len(g.X) > 0 || len(g.ConfigFiles) > 0 {
		// scenario.js sets the consumer's configuration itself (the bug report's)
		return exitcode.Usagef("--real-client passes no -X or --config to the real client: scenario.js configures it (only --brokers reaches it)")
	}
	version := strings.TrimPrefix(o.Policy, "v")
	k, err := g.Kafka()
	if err != nil {
		return err
	}
	format, _ := g.Format()
	dir, err := jsclient.Ensure(ctx, version, g.IO.Err)
	if err != nil {
		return err
	}
	var results []*repro.Result
	res, runErr := repro.RunRealClient(ctx, repro.RealClientOptions{Version: version, Dir: dir, Shape: shape, Kafka: k,
		Partitions: o.Partitions, Group: o.Group, Timeout: g.Timeout, Keep: o.Keep})
	if res != nil {
		results = append(results, res)
	}
	if runErr == nil && o.real.CompareModel {
		model, err := modelOfShape(ctx, g, version, shape, o.Partitions)
		if err != nil {
			return err
		}
		results = append(results, model)
	}
	if len(results) > 0 && runErr == nil {
		if err := view.PrintRepro(g.Out(), view.NewRepro(results), format, g.Pretty()); err != nil {
			return err
		}
		return verdictOutcome(repro.Outcome(results))
	}
	if ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, runErr)
	}
	return runErr
}

// modelOfShape runs simulate on the shape's settings, through simulate's own flags
// (jsclient.Shape.SimulateArgs, the mapping the agreement suite uses) and its run.
func modelOfShape(ctx context.Context, g *Globals, version string, shape jsclient.Shape, partitions int32) (*repro.Result, error) {
	args, err := modelArgs(version, shape, partitions)
	if err != nil {
		return nil, err
	}
	// the model's own globals: no connection settings (simulate runs no client)
	mg := &Globals{IO: g.IO, Output: g.Output, Timeout: g.Timeout}
	var res *repro.Result
	c := newSimulateCmd(mg, func(ctx context.Context, o *simulateOptions) error {
		if err := o.check(); err != nil {
			return err
		}
		o.TimeScale = 1
		if err := o.applyProperties(mg); err != nil {
			return err
		}
		cases, err := o.complete(mg)
		if err != nil {
			return err
		}
		if err := o.Options.ValidateSimulated(); err != nil {
			return exitcode.Usagef("%v", err)
		}
		opts := o.Options
		opts.Policy, opts.Handler, opts.Commit = cases[0].policy, cases[0].handler, cases[0].commit
		res, err = repro.Simulate(ctx, opts)
		return err
	})
	c.SetArgs(args)
	c.SilenceUsage, c.SilenceErrors = true, true
	if err := c.ExecuteContext(ctx); err != nil {
		return nil, fmt.Errorf("--compare-model: simulate %s: %w", strings.Join(args, " "), err)
	}
	return res, nil
}

// modelArgs are simulate's arguments for the real run's shape and topic: the shape's own
// (jsclient.Shape.SimulateArgs) and the topic's partitions, which decide each member's
// workers (min(concurrency, assigned)) and the assignor's split as on the real run's
// topic.
func modelArgs(version string, shape jsclient.Shape, partitions int32) ([]string, error) {
	args, err := shape.SimulateArgs()
	if err != nil {
		return nil, exitcode.Usagef("--compare-model: the model cannot express the shape: %v", err)
	}
	return append([]string{"--client", version, "--partitions", strconv.Itoa(int(partitions))}, args...), nil
}
