package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/trace"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/view"
	"github.com/kstranded/kstranded/workload"
)

type reproOptions struct {
	repro.Options
	Policy    string
	Commit    string
	Handler   string
	FailAt    []int64
	TraceFile string
	SVGFile   string

	fetchWaitSet bool // --fetch-wait-max given (else the embedded broker's short wait applies)
	wl           workload.Flags
	wlSpec       workload.Spec
	wlErr        error
	rebalanceAt  []string // --rebalance-at, parsed by complete
	seeks        []string // --seek, parsed by complete (parseSeeks)
	membersBound bool     // the command has --members
	simulated    bool     // simulate: no session timeout (repro.Options.ValidateSimulated)
	real         realClientOptions
}

// bindMemberFlags binds --members and --rebalance-at (simulate and repro).
func bindMemberFlags(f *pflag.FlagSet, o *reproOptions) {
	o.membersBound = true
	f.IntVar(&o.Members, "members", 1, "consumers in the group, each its own engine and client; partitions spread by the assignor of --group-protocol (classic: roundrobin, eager; consumer: sticky, cooperative)")
	f.StringArrayVar(&o.rebalanceAt, "rebalance-at", nil, "TIME:join, TIME:leave (the most recently joined member) or TIME:leave=N (member mN), from the consumers' start (repeatable), e.g. 5m:join")
}

// readWorkload resolves the workload flags once they are parsed.
func (o *reproOptions) readWorkload(f *pflag.FlagSet) {
	o.wlSpec, o.wlErr = resolveWorkload(f, &o.wl)
	if o.wlErr == nil {
		o.Workload = o.wlSpec
	}
}

// clientUsage describes --client (and its alias --policy).
const clientUsage = "the confluent-kafka-javascript version modelled: a release (0.2.0 to 1.10.1, e.g. 1.9.1 or v1.9.1; each maps to its cache clear rule, docs/releases.md), head (the reporter's patch) or pr518 (upstream PR #518)"

// The scenario's flags come in three sets, and each command binds the sets it reads,
// so its help shows nothing it ignores: the model's settings (the eachBatch engine, the
// ledger and the client behaviour the model reproduces: repro, repro consume and
// simulate), the client and broker settings only a librdkafka client on a broker reads
// (repro, repro consume), and the run's own settings. Every default is the seed's.

// bindModelFlags binds the settings the consumer model reads, live or simulated.
func bindModelFlags(f *pflag.FlagSet, o *reproOptions) {
	f.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "partitionsConsumedConcurrently")
	f.IntVar(&o.BatchSize, "batch-size", o.BatchSize, "js.consumer.max.batch.size (-1: unbounded)")
	f.DurationVar(&o.HandlerDelay, "handler-delay", o.HandlerDelay, "eachBatch time per record (seed: 40s)")
	f.IntVar(&o.HandlerParallel, "handler-parallel", o.HandlerParallel, "records eachBatch processes at a time (seed: 3)")
	f.DurationVar(&o.MaxPollInterval, "max-poll-interval", o.MaxPollInterval, "max.poll.interval.ms; the JS cache expires this long after the last fetch")
	f.DurationVar(&o.CacheSizePerWorker, "cache-size-per-worker", 1500*time.Millisecond, "the JS client's cache size per worker (1.7.0 and later): fetches are sized to hold this long of handling per worker")
	f.DurationVar(&o.RetryWait, "retry-wait", time.Second, "1.0.0 to 1.3.0 only: how long a worker that found nothing to fetch waits before it looks again (#nextFetchRetry's timer)")
	f.DurationVar(&o.ConsumeTimeout, "consume-timeout", time.Second, "0.2.0 to 0.3.0 only: how long the client's consume call waits for its first record (node-rdkafka's default consume timeout)")
	f.StringVar(&o.GroupProtocol, "group-protocol", "", "consumer group protocol: classic, or consumer (KIP-848, Kafka 4+; the broker then owns session timeout, heartbeat and assignor); default: group.protocol from -X/--config, else classic")
	f.BoolVar(&o.AutoCommit, "auto-commit", o.AutoCommit, "kafkaJS autoCommit")
	f.DurationVar(&o.AutoCommitInterval, "auto-commit-interval", o.AutoCommitInterval, "auto.commit.interval.ms")
	f.DurationVar(&o.HeartbeatInterval, "heartbeat-interval", o.HeartbeatInterval, "heartbeat.interval.ms (classic protocol only): a member learns of another's join or leave at its next heartbeat (live: not scaled)")
	f.IntVar(&o.MaxBytes, "max-bytes", o.MaxBytes, "kafkaJS maxBytes (fetch.message.max.bytes)")
	f.StringVar(&o.Policy, "client", string(o.Options.Policy), clientUsage+", or all (every modelled policy)")
	f.StringVar(&o.Policy, "policy", string(o.Options.Policy), "alias of --client")
	f.StringVar(&o.Handler, "handler", string(eachbatch.EachBatch), "the application's run() callback: each-batch, each-message, or all (a row per handler)")
	f.BoolVar(&o.AutoResolve, "auto-resolve", o.AutoResolve, "eachBatchAutoResolve; false: the handler calls resolveOffset after each round of --handler-parallel records and stops when the batch is stale")
	f.DurationVar(&o.PauseAt, "pause-at", 0, "the handler calls its payload's pause() at its first round (record) starting this long after the consumer started, and goes on with its batch (0: never); with --pause-from outside, the application pauses the topic at that time")
	f.DurationVar(&o.ResumeAfter, "resume-after", 500*time.Millisecond, "with --pause-at: resume() this long after the pause")
	f.StringVar(&o.PauseFrom, "pause-from", repro.PauseFromHandler, "with --pause-at, who calls pause(): handler (its payload's, for its partition) or outside (the application's consumer.pause([{topic}]) from a timer: every assigned partition, at any moment of a batch)")
	f.Int32SliceVar(&o.PausePartitions, "pause-partitions", nil, "with --pause-from outside: the partitions the application pauses and resumes, consumer.pause([{topic, partitions: [...]}]) (comma-separated; default: every assigned partition)")
	f.DurationVar(&o.SeekAt, "seek-at", 0, "the handler calls consumer.seek() on its partition, to --seek-to, at its first round (record) starting this long after the consumer started, and goes on with its batch (0: never)")
	f.Int64Var(&o.SeekTo, "seek-to", 0, "with --seek-at: the offset the handler seeks to (auto-commit commits it; skipped records are judged LOST)")
	f.StringArrayVar(&o.seeks, "seek", nil, "[PARTITION:]OFFSET@TIME: the handler calls consumer.seek() at its first round (record) starting TIME after the consumer started, of PARTITION (default: the partition it handles), and goes on (repeatable; a seek back redelivers), e.g. 1:100@3m50s")
	f.BoolVar(&o.Heartbeat, "heartbeat", false, "the eachBatch handler awaits heartbeat() after every round (a no-op in the JS client: it resets neither the cache expiry nor max.poll)")
	f.Int64SliceVar(&o.FailAt, "handler-fail-at", nil, "offsets where the handler throws, once per partition (comma-separated)")
	f.StringVar(&o.Commit, "commit", string(o.Options.Commit), "who commits: auto (the client's auto-commit), manual (the client's manual commit: autoCommit false, resolveOffset per record, commitOffsetsIfNecessary after each batch; eachBatch only), explicit (autoCommit false, the handler's commitOffsets([{topic, partition, offset: last+1}]) after each batch, resolving as manual does, or after each message), ledger (kstranded's commit of the completed prefix), or all")
	f.IntVar(&o.MaxInFlight, "max-in-flight", 0, "ledger back-pressure: unfinished records per partition before it is paused (0: no bound)")
	f.IntVar(&o.MaxInFlightBytes, "max-in-flight-bytes", 0, "ledger back-pressure: unfinished bytes per partition before it is paused (0: no bound)")
}

// bindClientFlags binds the settings only a librdkafka client on a broker reads: the
// simulation has no topic, no session, no fetch wait and no isolation level.
func bindClientFlags(f *pflag.FlagSet, o *reproOptions) {
	f.StringVar(&o.Topic, "topic", o.Topic, "topic (on --brokers, a per-run suffix is added unless the command reads an existing topic)")
	f.DurationVar(&o.SessionTimeout, "session-timeout", o.SessionTimeout, "session.timeout.ms (not scaled; classic protocol only)")
	f.DurationVar(&o.FetchWaitMax, "fetch-wait-max", o.FetchWaitMax, "fetch.wait.max.ms (not scaled; 10ms on the embedded broker unless set)")
	f.IntVar(&o.MaxBytesPerPartition, "max-bytes-per-partition", o.MaxBytesPerPartition, "kafkaJS maxBytesPerPartition (same librdkafka property as --max-bytes, which wins, as in kafkajs-compat)")
	f.BoolVar(&o.ReadCommitted, "read-committed", o.ReadCommitted, "isolation.level=read_committed (kafkaJS readUncommitted: false)")
	f.BoolVar(&o.FromBeginning, "from-beginning", o.FromBeginning, "kafkaJS fromBeginning (auto.offset.reset=earliest)")
}

// bindRunFlags binds the run's own settings every scenario command reads.
func bindRunFlags(f *pflag.FlagSet, o *reproOptions) {
	f.DurationVar(&o.Grace, "grace", o.Grace, "on shutdown or Ctrl-C, how long batches in flight may finish before the final commit")
	f.StringVar(&o.TraceFile, "trace", "", "write every engine event as kstranded.trace/v1 JSON lines to FILE")
}

// bindTimeScaleFlag binds --time-scale: live runs only (simulate runs the real durations
// on virtual time).
func bindTimeScaleFlag(f *pflag.FlagSet, o *reproOptions) {
	f.Float64Var(&o.TimeScale, "time-scale", o.TimeScale, "scale of every scenario duration (1: the real 15-minute scenario)")
}

// bindPhaseFlags binds the settings of the scenario's phases (repro, simulate; repro
// consume runs no phases).
func bindPhaseFlags(f *pflag.FlagSet, o *reproOptions) {
	f.Int32Var(&o.Partitions, "partitions", o.Partitions, "partitions of the topic")
	f.DurationVar(&o.PhaseTimeout, "phase-timeout", 0, "bound on each phase reaching quiescence (0: derived from the settings)")
	f.IntVar(&o.MaxRestarts, "max-restarts", o.MaxRestarts, "--commit ledger: phase 3 restarts the consumer while records stay stranded, at most this often")
}

// newReproCmd builds `kstranded repro` and its subcommands; runF, when not nil (tests),
// receives the options (flags parsed, not yet completed) instead of the run.
func newReproCmd(g *Globals, runF func(context.Context, *reproOptions) error) *cobra.Command {
	o := &reproOptions{Options: repro.DefaultOptions()}
	c := &cobra.Command{
		Use:   "repro",
		Short: "Reproduce the eachBatch cache-expiration loss end to end (embedded broker by default)",
		Long: `Reproduce confluent-kafka-javascript's eachBatch cache-expiration loss: 200 records in one
transaction on partition 0 of a 20-partition topic (or your own workload: --spread,
--transactions), consumed by a model of the kafkajs-compat
eachBatch consumer running over librdkafka (confluent-kafka-go) with the bug report's
settings (a 4m40s batch, max.poll.interval.ms 900000), then one more record.

Phase 1 drains the workload until the consumer is quiescent; phase 2 produces one record to
every partition that held workload records and waits until they are delivered and committed. The verdict per partition says which records were
LOST (committed past, never delivered), STRANDED (never delivered, not yet committed past) or
OK. Durations are scaled by --time-scale (default 0.01: the run takes seconds).

Without --brokers an embedded broker (kfake) runs in process. With --brokers, a topic and a
group of the run's own are used, and the topic is deleted afterwards unless --keep.

--members N runs N consumers in the group, each its own librdkafka client and engine;
every rebalance goes through the engine's #rebalanceCallback as in the JS client.
--rebalance-at TIME:join starts a new member mid-run (its own client, engine and ledger,
starting at the group's committed offsets); TIME:leave makes a member leave (times
unscaled, like the other durations). Under --group-protocol classic (roundrobin, eager)
each change revokes every partition of every member; under consumer, only the ones that move.

Progress: when stderr is a terminal, one line there (phase, records delivered, the cache's
expiry) is redrawn in place, fitted to the terminal's width. On a pipe or a file there is no
progress line (a log of redraws helps no one); the result comes when the run ends.

` + realClientHelp + `

` + exitHelp(exitCodes{exitcode.OK, ""}, exitCodes{exitcode.Error, ""}, exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Lost, ""}, exitCodes{exitcode.Stranded, ""},
			exitCodes{exitcode.Refused, "--group has other members at start (named), or cannot be described; --allow-shared-group runs anyway with a warning"}, exitCodes{exitcode.Interrupted, ""}),
		Example: `  kstranded repro
  kstranded repro --policy all
  kstranded repro --client 1.10.1 --spread 0:100,1:40 --concurrency 1 --batch-size -1
  kstranded repro --policy v1.10.1 --time-scale 1
  kstranded repro --members 2 --spread 0:100,1:100 --rebalance-at 8m:leave
  kstranded repro --brokers localhost:9092 --config client.properties --keep --trace t.jsonl
  kstranded repro --real-client --client 1.10.0 --compare-model`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.fetchWaitSet = c.Flags().Changed("fetch-wait-max")
			o.readWorkload(c.Flags())
			if runF != nil {
				return runF(c.Context(), o)
			}
			if o.real.RealClient {
				return runReproRealClient(c.Context(), g, c, o)
			}
			if o.real.CompareModel {
				return exitcode.Usagef("--compare-model compares the model with --real-client")
			}
			return runRepro(c.Context(), g, o)
		},
	}
	bindModelFlags(c.Flags(), o)
	bindClientFlags(c.Flags(), o)
	bindRunFlags(c.Flags(), o)
	bindTimeScaleFlag(c.Flags(), o)
	bindPhaseFlags(c.Flags(), o)
	bindWorkloadFlags(c.Flags(), &o.wl)
	bindMemberFlags(c.Flags(), o)
	bindRealClientFlags(c.Flags(), &o.real)
	c.Flags().StringVar(&o.Group, "group", "", "consumer group the run joins (default: a new group per run); one with members at start is refused (exit 5), and one another member joins during the run makes it INCOMPLETE, unless --allow-shared-group")
	c.Flags().BoolVar(&o.AllowSharedGroup, "allow-shared-group", false, "run although --group has other members, at start or joining later (the result then carries a warning: the run judges only its share of the partitions)")
	c.Flags().BoolVar(&o.Keep, "keep", false, "keep the run's topic on --brokers (for inspect and rewind)")
	c.Flags().StringVar(&o.SVGFile, "svg", "", "draw the run as SVG into FILE, as trace parse --svg draws its trace (several runs: FILE-POLICY-HANDLER-COMMIT.svg each)")
	c.AddCommand(newReproProduceCmd(g), newReproConsumeCmd(g))
	return c
}

// oneOrAll reads a flag that names one value or "all" of them.
func oneOrAll[T any](flag, value string, all []T, parse func(string) (T, error)) ([]T, error) {
	if strings.EqualFold(value, "all") {
		return all, nil
	}
	v, err := parse(value)
	if err != nil {
		return nil, exitcode.Usagef("--%s: %v", flag, err)
	}
	return []T{v}, nil
}

type reproCase struct {
	policy  eachbatch.Policy
	handler eachbatch.Handler
	commit  repro.CommitMode
}

func (o *reproOptions) complete(g *Globals) ([]reproCase, error) {
	if o.wlErr != nil {
		return nil, o.wlErr
	}
	k, err := g.Kafka()
	if err != nil {
		return nil, err
	}
	o.Kafka = k
	o.Timeout = g.Timeout
	o.FetchWaitMaxSet = o.fetchWaitSet
	policies, err := oneOrAll("client/--policy", o.Policy, eachbatch.Policies, eachbatch.ParsePolicy)
	if err != nil {
		return nil, err
	}
	handlers, err := oneOrAll("handler", o.Handler, eachbatch.Handlers, eachbatch.ParseHandler)
	if err != nil {
		return nil, err
	}
	o.HandlerFailAt = o.FailAt
	if o.membersBound && o.Members < 1 {
		return nil, exitcode.Usagef("--members must be >= 1")
	}
	if err := o.parseSeeks(); err != nil {
		return nil, err
	}
	o.RebalanceAt = nil
	for _, a := range o.rebalanceAt {
		st, err := repro.ParseRebalanceStep(a)
		if err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
		o.RebalanceAt = append(o.RebalanceAt, st)
	}
	var commits []repro.CommitMode
	allCommits := strings.ToLower(o.Commit) == "all"
	switch c := strings.ToLower(o.Commit); c {
	case "all":
		commits = repro.CommitModes
	default:
		commits = []repro.CommitMode{repro.CommitMode(c)}
	}
	// --commit all names manual commit for eachBatch only: with each-message it is
	// left out, where --commit manual given by name is refused (Validate)
	skip := func(h eachbatch.Handler, c repro.CommitMode) bool {
		return allCommits && c == repro.CommitManual && h == eachbatch.EachMessage
	}
	var cases []reproCase
	for _, p := range policies {
		for _, h := range handlers {
			for _, c := range commits {
				if !skip(h, c) {
					cases = append(cases, reproCase{p, h, c})
				}
			}
		}
	}
	o.Options.Policy, o.Options.Handler, o.Options.Commit = policies[0], handlers[0], commits[0]
	for _, h := range handlers {
		for _, c := range commits {
			if skip(h, c) {
				continue
			}
			v := o.Options
			v.Handler, v.Commit = h, c
			validate := v.Validate
			if o.simulated {
				validate = v.ValidateSimulated
			}
			if err := validate(); err != nil {
				return nil, exitcode.Usagef("%v", err)
			}
		}
	}
	return cases, nil
}

func runRepro(ctx context.Context, g *Globals, o *reproOptions) error {
	cases, err := o.complete(g)
	if err != nil {
		return err
	}
	shared, err := sharedGroup(ctx, o.Kafka, o.Group, o.Timeout, o.AllowSharedGroup)
	if err != nil {
		return interrupted(ctx, err)
	}
	format, _ := g.Format()
	traceFile, closeTrace, err := o.openTraceFile()
	if err != nil {
		return err
	}
	defer closeTrace()
	progress := render.IsTerminal(g.IO.Err) && format == render.Table
	var results []*repro.Result
	var runErr error
	started := time.Now()
	for i, rc := range cases {
		opts := o.Options
		opts.Policy, opts.Handler, opts.Commit = rc.policy, rc.handler, rc.commit
		var svgTrace *[]traceevent.Event
		opts.Trace, svgTrace = runEvents(traceFile, o.SVGFile != "")
		if progress {
			label := view.RunOf(i+1, len(cases), fmt.Sprintf("%s/%s/%s", rc.policy, rc.handler, rc.commit), time.Since(started))
			opts.Progress = func(pr repro.Progress) {
				// one column short of the width: a character in the last column leaves
				// some terminals waiting to wrap, and the next \r lands a line too low
				fmt.Fprintf(g.IO.Err, "\r\033[K%s", view.ProgressLine(label, pr, render.Width(g.IO.Err)-1))
			}
		}
		res, err := repro.Run(ctx, opts)
		if progress {
			fmt.Fprint(g.IO.Err, "\r\033[K")
		}
		if res != nil {
			if shared != "" {
				res.Warnings = append([]string{shared}, res.Warnings...)
			}
			results = append(results, res)
		}
		if ferr := opts.Trace.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("--trace: %w", ferr)
		}
		if err == nil && o.SVGFile != "" {
			err = reproSVG(svgFileOf(o.SVGFile, len(cases), rc.policy, rc.handler, rc.commit), fmt.Sprintf("repro %s/%s/%s", rc.policy, rc.handler, rc.commit), *svgTrace)
		}
		if err != nil {
			runErr = err
			break
		}
	}
	return printCases(ctx, g, "repro", results, runErr)
}

// printCases prints the results of repro's or simulate's cases (command names the
// document) and returns the command's outcome: the exit of their verdict, or the error
// that stopped them (an interrupt as such); the results before it are printed either way.
func printCases(ctx context.Context, g *Globals, command string, results []*repro.Result, runErr error) error {
	if len(results) > 0 {
		v := view.NewRepro(results)
		v.Command = command
		format, _ := g.Format()
		if err := view.PrintRepro(g.Out(), v, format, g.Pretty()); err != nil {
			return err
		}
		if runErr == nil {
			return verdictOutcome(repro.Outcome(results))
		}
	}
	if runErr != nil && ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, runErr)
	}
	return runErr
}

// runEvents is one run's event writer: to --trace FILE (file, when not nil) and, with
// svg, into the returned list, which the trace analyzer reads once the run is over
// (reproSVG). nil without either.
func runEvents(file io.Writer, svg bool) (*traceevent.Writer, *[]traceevent.Event) {
	if !svg {
		if file == nil {
			return nil, nil
		}
		return traceevent.NewWriter(file), nil
	}
	evs := &[]traceevent.Event{}
	return traceevent.NewTee(file, func(e traceevent.Event) { *evs = append(*evs, e) }), evs
}

// openTrace opens --trace FILE, if given; the returned function flushes and closes it.
func (o *reproOptions) openTrace() (func(), error) {
	if o.TraceFile == "" {
		return func() {}, nil
	}
	f, err := os.Create(o.TraceFile)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	o.Trace = traceevent.NewWriter(f)
	return func() {
		_ = o.Trace.Flush()
		_ = f.Close()
	}, nil
}

// openTraceFile opens --trace FILE, if given, for runs that write it with a writer of their
// own; the returned function closes it.
func (o *reproOptions) openTraceFile() (io.Writer, func(), error) {
	if o.TraceFile == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(o.TraceFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--trace: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}

// svgFileOf names a run's picture: FILE itself for one run, FILE-POLICY-HANDLER-COMMIT.svg
// for each of several.
func svgFileOf(file string, runs int, policy eachbatch.Policy, handler eachbatch.Handler, commit repro.CommitMode) string {
	if runs == 1 {
		return file
	}
	base := strings.TrimSuffix(file, filepath.Ext(file))
	return fmt.Sprintf("%s-%s-%s-%s.svg", base, policy, handler, commit)
}

// reproSVG reads a run's events as trace parse reads them from its kstranded trace
// (the analyzer's Events) and draws them.
func reproSVG(file, name string, run []traceevent.Event) error {
	a := trace.NewAnalyzer(trace.Options{})
	if _, err := a.Events(name, run); err != nil {
		return fmt.Errorf("--svg: reading the run's trace: %w", err)
	}
	rep := a.Finish()
	if err := writeFileWith(file, func(w io.Writer) error { return view.WriteTraceSVG(w, rep, nil) }); err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	return nil
}

// verdictOutcome is the exit of a command whose domain returned an overall verdict
// (repro.Outcome, a consume run's, a sweep's, advice's): its code as every command maps
// it (exitcode.ForVerdict). The output already says it.
func verdictOutcome(v verdict.Verdict) error {
	return exitcode.Reported(exitcode.ForVerdict(v, ""))
}

// parseSeeks reads --seek into Options.Seeks.
func (o *reproOptions) parseSeeks() error {
	o.Seeks = nil
	for _, a := range o.seeks {
		k, err := repro.ParseSeek(a)
		if err != nil {
			return exitcode.Usagef("%v", err)
		}
		o.Seeks = append(o.Seeks, k)
	}
	return nil
}
