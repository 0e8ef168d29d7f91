package cmd

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/simulate"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/view"
)

type simulateOptions struct {
	reproOptions
	Sweep  string
	SVG    string
	Advise bool
	// given reports whether a flag was on the command line (the flag set's Changed).
	given func(flag string) bool
}

// newSimulateCmd builds `kstranded simulate`; runF, when not nil (tests), receives the
// options (flags parsed, not yet completed) instead of the run.
func newSimulateCmd(g *Globals, runF func(context.Context, *simulateOptions) error) *cobra.Command {
	o := &simulateOptions{reproOptions: reproOptions{Options: repro.DefaultOptions()}}
	c := &cobra.Command{
		Use:   "simulate",
		Short: "Run repro's scenario on the consumer model with no broker, on virtual time, at full scale",
		Long: `Run repro's scenario (the same workload, consumer settings, policies, phases and verdicts)
on the model alone: the eachBatch engine over a simulated partition log, on virtual time.
No broker, no wall-clock wait: the seed's 15-minute scenario takes milliseconds, and
durations are the real ones (there is no --time-scale). The output is repro's, with
"simulated": true and virtual durations.

Use it to ask "am I safe with these settings?": give your own shape (--spread with the
partitions that hold data, --concurrency, --batch-size, --handler-delay, --max-poll-interval)
and your client version (--client 1.9.1, alias --policy; docs/releases.md). It exits 3 when the model loses records. Which
partition's records the broker's first fetch answer serves first decides some shapes'
outcome (two partitions, one worker): a single consumer over 2 to 8 partitions holding
data is simulated once per first-served partition, the verdict is the worst of them, and a
"fetch order:" warning names an order whose outcome differs from the table's. Partitions
holding the same records (--spread NxM) are told apart only by their place in the fetch
list, which follows the order they became fetchable, not their numbers: the run's
outcome stands for every order (the k-th partition served has the k-th outcome;
fetch_orders[0].every_order in -o json). --fetch-order 7,2,3,4 simulates one order, such
as the order of first deliveries in your client's log. In a group (--members,
--rebalance-at) each rotation of the fetch list is simulated (up to 8 partitions), every
member serving its own partitions in that order, and --fetch-order has every member
serve its partitions in the order given. The same holds for the order phase
2's records reach the consumer (librdkafka's producer writes one partition per request, and
which the waiting consumer's fetches carry is timing): --phase2-order sets it, such as the
order of phase 2's deliveries in the log (fetch_orders[].phase2_order).

--sweep FLAG=VALUES runs one setting over a list (1m,5m,15m) or a range (1m..30m/1m; counts
1..20), one row per value, and states where the loss starts; --svg FILE plots it (without
--sweep, --svg FILE draws the run as repro --svg does). Spreads
are listed with ";" (spread=1x10;4x10). --advise searches the safe range of max.poll.interval,
batch size and concurrency at your other settings, and which releases are safe.

--members N runs N consumers in one group, each its own engine on the shared simulated
group (roundrobin and eager rebalances for --group-protocol classic, a sticky cooperative
assignment for consumer); --rebalance-at 5m:join or 8m:leave changes the membership during
the run. A member learns of another's join or leave at its next heartbeat:
--heartbeat-interval under classic, --consumer-heartbeat-interval (the broker's
group.consumer.heartbeat.interval.ms; default 0, at once) under consumer.
A record delivered by any member counts; deliveries by several are duplicates.
Every run, one member or more, models librdkafka leaving the group when a batch keeps the
client from polling for twice --max-poll-interval (the JS client's setting, doubled).

Your client's configuration applies as it would to the JS client, with -X or --config:
max.poll.interval.ms and auto.commit.interval.ms (milliseconds, as the JS configuration
writes them), enable.auto.commit, js.consumer.max.batch.size, fetch.message.max.bytes
(or its alias max.partition.fetch.bytes) and group.protocol set what --max-poll-interval,
--auto-commit-interval, --auto-commit, --batch-size, --max-bytes and --group-protocol
set; given with that flag too, the two must agree. Any other
property is refused (exit 2), naming where it applies: simulate runs no client, so
--brokers, --timeout and connection properties have no meaning here.

What the model leaves out (fetch latency, fetch sizes in bytes, broker errors, session
timeouts) is listed in BENCHMARKS.md under "live and simulated".

` + exitHelp(exitCodes{exitcode.OK, "no records lost (a sweep: at any point swept)"}, exitCodes{exitcode.Error, "a run or a sweep point never settled (INCOMPLETE)"},
			exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Lost, "the model loses records at these settings (a sweep: at any point; also --advise)"},
			exitCodes{exitcode.Stranded, ""}, exitCodes{exitcode.Interrupted, "a sweep prints the rows finished"}),
		Example: `  kstranded simulate
  kstranded simulate --client 1.10.1 --spread 0:100,1:40 --concurrency 1 --batch-size -1
  kstranded simulate --members 2 --rebalance-at 8m:leave --group-protocol consumer
  kstranded simulate --policy all --sweep max-poll-interval=10m..60m/1m --svg sweep.svg
  kstranded simulate --client 1.9.1 --spread 12x10 --concurrency 2 --advise
  kstranded simulate -X max.poll.interval.ms=2700000 -X js.consumer.max.batch.size=5`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.given = c.Flags().Changed
			o.readWorkload(c.Flags())
			if runF != nil {
				return runF(c.Context(), o)
			}
			return runSimulate(c.Context(), g, o)
		},
	}
	// the model's settings and the run's; no client or broker settings, no time scale
	o.simulated = true
	bindModelFlags(c.Flags(), &o.reproOptions)
	bindRunFlags(c.Flags(), &o.reproOptions)
	bindPhaseFlags(c.Flags(), &o.reproOptions)
	bindWorkloadFlags(c.Flags(), &o.wl)
	bindMemberFlags(c.Flags(), &o.reproOptions)
	c.Flags().StringVar(&o.Sweep, "sweep", "", "FLAG=VALUES: run one setting over values (sweepable: "+fmt.Sprint(simulate.Sweepable())+")")
	c.Flags().StringVar(&o.SVG, "svg", "", "draw the run as SVG into FILE, as repro --svg and trace parse --svg draw theirs (several runs: FILE-POLICY-HANDLER-COMMIT.svg each); with --sweep: plot lost records against the swept value")
	c.Flags().BoolVar(&o.Advise, "advise", false, "search the safe range of max.poll.interval, batch size and concurrency, and the versions without loss")
	c.Flags().DurationVar(&o.ConsumerHeartbeatInterval, "consumer-heartbeat-interval", 0, "with --group-protocol consumer: the broker's heartbeat interval for consumer groups; a member learns of partitions to revoke or newly its own at its next heartbeat (a joining member at once; 0: every member at once)")
	c.Flags().Int32SliceVar(&o.FetchOrder, "fetch-order", nil, "P,P,...: the partitions librdkafka's fetch list serves first, in this order (the others follow by number), e.g. the order of first deliveries in a log; that order only")
	c.Flags().Int32SliceVar(&o.Phase2Order, "phase2-order", nil, "P,P,...: the order phase 2's records are produced in, and so reach the consumer (the others follow by number), e.g. the order of phase 2's deliveries in a log")
	hideInherited(c, noClientFlags...)
	return c
}

// noClientFlags are the global flags that configure a client on a broker: simulate runs
// none, so its help leaves them out and it refuses them.
var noClientFlags = []string{"brokers", "bootstrap-server", "timeout"}

// hideInherited leaves the named global flags out of c's help (they stay parsed, so the
// command can refuse them by name rather than as unknown flags).
func hideInherited(c *cobra.Command, names ...string) {
	c.SetHelpFunc(func(c *cobra.Command, args []string) {
		for _, n := range names {
			if f := c.InheritedFlags().Lookup(n); f != nil && !f.Hidden {
				f.Hidden = true
				defer func() { f.Hidden = false }()
			}
		}
		c.Root().HelpFunc()(c, args)
	})
}

func (o *simulateOptions) check() error {
	for _, n := range noClientFlags {
		if o.given != nil && o.given(n) {
			return exitcode.Usagef("simulate runs no client: --%s has no meaning (the model runs on virtual time; --phase-timeout bounds a phase)", n)
		}
	}
	switch {
	case o.SVG != "" && o.Advise:
		return exitcode.Usagef("--svg draws a run or a sweep: not with --advise")
	case o.Advise && o.Sweep != "":
		return exitcode.Usagef("--advise and --sweep: one at a time")
	case o.TraceFile != "" && (o.Sweep != "" || o.Advise):
		return exitcode.Usagef("--trace writes one run's events: not with --sweep or --advise")
	}
	return nil
}

func runSimulate(ctx context.Context, g *Globals, o *simulateOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	o.TimeScale = 1
	if err := o.applyProperties(g); err != nil {
		return err
	}
	cases, err := o.complete(g)
	if err != nil {
		return err
	}
	if err := o.Options.ValidateSimulated(); err != nil {
		return exitcode.Usagef("%v", err)
	}
	format, _ := g.Format()
	var scases []simulate.Case
	for _, c := range cases {
		if (o.Sweep != "" || o.Advise) && c.handler != cases[0].handler {
			return exitcode.Usagef("--sweep and --advise take one --handler")
		}
		scases = append(scases, simulate.Case{Policy: c.policy, Commit: c.commit})
	}
	switch {
	case o.Sweep != "":
		sw, err := simulate.ParseSweep(o.Sweep)
		if err != nil {
			return exitcode.Usagef("%v", err)
		}
		if render.IsTerminal(g.IO.Err) && format == render.Table {
			sw.Progress = func(finished, total int) {
				fmt.Fprintf(g.IO.Err, "\r\033[Ksweep: %d of %d points", finished, total)
			}
		}
		res, runErr := simulate.Run(ctx, o.Options, scases, sw, 0)
		if sw.Progress != nil {
			fmt.Fprint(g.IO.Err, "\r\033[K")
		}
		if res != nil {
			if err := view.PrintSweep(g.Out(), view.NewSweep(res), format, g.Pretty()); err != nil {
				return err
			}
			if o.SVG != "" && !res.Interrupted {
				if err := writeSweepSVG(o.SVG, res); err != nil {
					return err
				}
			}
		}
		if runErr != nil && ctx.Err() != nil {
			return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, runErr)
		}
		if runErr != nil {
			return runErr
		}
		return sweepOutcome(res)
	case o.Advise:
		if len(scases) > 1 {
			return exitcode.Usagef("--advise takes one --client and one --commit (yours)")
		}
		a, err := simulate.Advise(ctx, o.Options, scases[0])
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, err)
			}
			return err
		}
		if err := view.PrintAdvice(g.Out(), view.NewAdvice(a), format, g.Pretty()); err != nil {
			return err
		}
		return verdictOutcome(a.Verdict())
	}
	traceFile, closeTrace, err := o.openTraceFile()
	if err != nil {
		return err
	}
	defer closeTrace()
	var results []*repro.Result
	var runErr error
	for _, c := range cases {
		opts := o.Options
		opts.Policy, opts.Handler, opts.Commit = c.policy, c.handler, c.commit
		var svgTrace *[]traceevent.Event
		opts.Trace, svgTrace = runEvents(traceFile, o.SVG != "")
		res, err := repro.Simulate(ctx, opts)
		if res != nil {
			results = append(results, res)
		}
		if ferr := opts.Trace.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("--trace: %w", ferr)
		}
		if err == nil && o.SVG != "" {
			// drawn as repro --svg draws a live run
			err = reproSVG(svgFileOf(o.SVG, len(cases), c.policy, c.handler, c.commit), fmt.Sprintf("simulate %s/%s/%s", c.policy, c.handler, c.commit), *svgTrace)
		}
		if err != nil {
			runErr = err
			break
		}
	}
	return printCases(ctx, g, "simulate", results, runErr)
}

// sweepOutcome is the exit of a sweep: the code of its verdict, the worst of its
// points' (simulate.Result.Verdict), INCOMPLETE included, saying how many never settled.
func sweepOutcome(res *simulate.Result) error {
	v := res.Verdict()
	if v == verdict.Incomplete {
		stalled, points := res.Stalled()
		return exitcode.ForVerdict(v, fmt.Sprintf("sweep: %d of %d points never settled (no verdict there)", stalled, points))
	}
	return verdictOutcome(v)
}

// applyProperties sets the model's settings from the client properties given with -X
// or --config (repro.ModelProperties: durations in milliseconds, as the JS client's
// configuration writes them), so `-X max.poll.interval.ms=2700000` simulates 45m. A
// property the model does not read is refused, naming the flag or command that sets it:
// simulate runs no client, and a property it dropped would leave the user believing it
// applied. A property and the flag of the same setting must agree.
func (o *simulateOptions) applyProperties(g *Globals) error {
	k, err := g.Kafka()
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(k.Props))
	for key := range k.Props {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	byFlag := map[string]string{}
	for _, key := range keys {
		flag, modelled := repro.ModelFlag(key)
		if !modelled {
			return exitcode.Usagef("-X/--config %s: simulate does not model it%s; it reads only %s", key, unmodelledHint(key), strings.Join(repro.ModelProperties(), ", "))
		}
		before := o.Options
		changed, err := o.SetProperty(key, k.Props[key])
		if err != nil {
			return exitcode.Usagef("-X/--config %v", err)
		}
		if other, twice := byFlag[flag]; twice && changed {
			return exitcode.Usagef("-X/--config %s and %s set the same setting (--%s) to different values; give one", other, key, flag)
		}
		byFlag[flag] = key
		if changed && o.given != nil && o.given(flag) {
			o.Options = before
			return exitcode.Usagef("-X/--config %s=%s contradicts --%s; give one", key, k.Props[key], flag)
		}
	}
	return nil
}

// unmodelledHint says where a property the simulation does not read has its effect.
func unmodelledHint(key string) string {
	switch {
	case key == "bootstrap.servers" || key == "security.protocol" || key == "client.id" ||
		strings.HasPrefix(key, "ssl.") || strings.HasPrefix(key, "sasl."):
		return " (simulate runs no client: connection settings have no meaning)"
	}
	for k, flag := range map[string]string{
		"fetch.wait.max.ms": "fetch-wait-max", "session.timeout.ms": "session-timeout",
		"isolation.level": "read-committed", "auto.offset.reset": "from-beginning",
	} {
		if key == k {
			return fmt.Sprintf(" (a live run sets it: repro --%s)", flag)
		}
	}
	return ""
}

func writeSweepSVG(path string, res *simulate.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	if err := view.SweepSVG(f, view.NewSweep(res)); err != nil {
		f.Close()
		return fmt.Errorf("--svg: %w", err)
	}
	return f.Close()
}
