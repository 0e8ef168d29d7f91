package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/view"
	"github.com/kstranded/kstranded/workload"
)

func newReproProduceCmd(g *Globals) *cobra.Command {
	var topic string
	var partitions int32
	var wl workload.Flags
	c := &cobra.Command{
		Use:   "produce",
		Short: "Write the workload (by default 200 records to partition 0 in ONE transaction; needs --brokers)",
		Long: `Write a workload with a confluent-kafka-go producer (idempotence, acks=all; with
--transactions N > 0, transactional: each transaction writes a chunk of every partition and
commits before the next begins). By default the seed's: 200 records on partition 0 in ONE
transaction. --spread puts records on several partitions (12x10, or 0:200,3:50). Prints, per
partition, the first and last record offsets and the high watermark (each commit marker
takes the offset after its chunk). The topic is created if missing. Point --brokers at your
cluster or at ` + "`kstranded broker`" + `.`,
		Example: `  kstranded repro produce --brokers 127.0.0.1:19092 --topic my-test
  kstranded repro produce --brokers 127.0.0.1:19092 --topic my-test --spread 12x10 --transactions 2`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			spec, err := resolveWorkload(c.Flags(), &wl)
			if err != nil {
				return err
			}
			k, err := g.LiveKafka("repro produce writes to a live cluster; start one with: kstranded broker")
			if err != nil {
				return err
			}
			if partitions <= 0 {
				return exitcode.Usagef("--partitions must be > 0, got %d", partitions)
			}
			if strings.TrimSpace(topic) == "" {
				return exitcode.Usagef("--topic must not be empty")
			}
			if err := spec.Validate(partitions); err != nil {
				return exitcode.Usagef("%v", err)
			}
			if err := repro.EnsureTopic(c.Context(), k, topic, partitions, g.Timeout); err != nil {
				return interrupted(c.Context(), err)
			}
			res, err := repro.Produce(c.Context(), k, topic, spec, "kstranded-produce-"+topic, g.Timeout)
			if err != nil {
				return interrupted(c.Context(), err)
			}
			f, _ := g.Format()
			return view.PrintProduced(g.IO.Out, view.NewProduced(res), f)
		},
	}
	c.Flags().StringVar(&topic, "topic", "stranded", "topic (created if missing)")
	c.Flags().Int32Var(&partitions, "partitions", 20, "partitions when the topic is created")
	bindWorkloadFlags(c.Flags(), &wl)
	return c
}

func newReproConsumeCmd(g *Globals) *cobra.Command {
	o := &reproOptions{Options: repro.DefaultOptions()}
	var until, useExisting bool
	c := &cobra.Command{
		Use:   "consume",
		Short: "Run only the model consumer against data already in a topic (needs --brokers, --group)",
		Long: `Run the modeled eachBatch consumer (same settings and policies as repro) in --group against
the records already in --topic, until interrupted or, with --until-quiescent, until nothing is
left to deliver and the committed offsets caught up. Prints what was delivered and committed per
partition, and a verdict on the records the consumer fetched: LOST (never delivered, below
the committed offset, exit 3), STRANDED (never delivered, not committed past, exit 4), OK.
Interrupted (Ctrl-C, SIGTERM), it exits 130 after printing what it saw.

It is a test consumer, not your application: it joins --group and COMMITS its own
deliveries there. So it refuses (exit 5) a --group that already has committed offsets (an
application's, or an earlier run's): the refusal lists them and says what the run would
commit; --use-existing-group runs anyway, warns, and reports each partition's committed
offset at start (committed_at_start in -o json). A group name that holds no offsets (a
new one) runs. Never run it in your application's group to "verify" a repair: it would
commit past records your application has not processed; verify with the application's own
delivery log (inspect --delivered) after it runs again. A --group with other members at
start is refused too (exit 5, naming them) unless --allow-shared-group: the run would judge
only its share of the partitions.

--commit auto (the default) is librdkafka's auto-commit of the stored offsets; --commit
ledger switches it off and commits the ledger's frontier (the completed prefix) at the
auto-commit interval and when the consumer stops, as repro --commit ledger does. It runs
one consumer: --client (alias --policy), --handler and --commit take one value (all is refused, exit 2; it
is for repro and simulate). Use it with ` + "`repro produce`" + ` against your own cluster or ` + "`kstranded broker`" + `.

` + exitHelp(exitCodes{exitcode.OK, ""}, exitCodes{exitcode.Error, ""}, exitCodes{exitcode.Usage, "also --client/--handler/--commit all"},
			exitCodes{exitcode.Lost, ""}, exitCodes{exitcode.Stranded, ""},
			exitCodes{exitcode.Refused, "--group has committed offsets (without --use-existing-group), or other members at start (without --allow-shared-group)"}, exitCodes{exitcode.Interrupted, ""}),
		Example: `  kstranded repro consume --brokers 127.0.0.1:19092 --group my-test-group --topic my-test --until-quiescent
  kstranded repro consume --brokers 127.0.0.1:19092 --group my-test-group --topic my-test --commit ledger --until-quiescent`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.fetchWaitSet = c.Flags().Changed("fetch-wait-max")
			if err := oneCase(o); err != nil {
				return err
			}
			if _, err := o.complete(g); err != nil {
				return err
			}
			if _, err := g.LiveKafka("repro consume reads a live cluster"); err != nil {
				return err
			}
			if o.Group == "" {
				return exitcode.Usagef("--group is required (repro consume joins the group it names)")
			}
			shared, err := sharedGroup(c.Context(), o.Kafka, o.Group, o.Timeout, o.AllowSharedGroup)
			if err != nil {
				return interrupted(c.Context(), err)
			}
			existing, err := existingGroup(c.Context(), o, useExisting)
			if err != nil {
				return interrupted(c.Context(), err)
			}
			if existing != "" {
				// before the run, so that whoever watches knows what it is about to do
				fmt.Fprintln(g.IO.Err, "kstranded: warning: "+render.Safe(existing))
			}
			closeTrace, err := o.openTrace()
			if err != nil {
				return err
			}
			defer closeTrace()
			res, err := repro.Consume(c.Context(), o.Options, until, existing != "")
			if res != nil && shared != "" {
				res.Warnings = append([]string{shared}, res.Warnings...)
			}
			if res != nil && existing != "" {
				res.Warnings = append([]string{existing}, res.Warnings...)
			}
			if res != nil {
				format, _ := g.Format()
				if perr := view.PrintConsume(g.Out(), view.NewConsume(res), format, g.Pretty()); perr != nil {
					return perr
				}
			}
			if c.Context().Err() != nil {
				// a plain consume ends this way, but the run was interrupted all the
				// same: 130, as every command (the table above is the partial result)
				if err == nil {
					return exitcode.ErrInterrupted
				}
				return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, err)
			}
			if err != nil {
				return err
			}
			// the same code for the same word as every command: LOST 3, STRANDED 4
			return verdictOutcome(res.Verdict)
		},
	}
	bindModelFlags(c.Flags(), o)
	bindClientFlags(c.Flags(), o)
	bindRunFlags(c.Flags(), o)
	bindTimeScaleFlag(c.Flags(), o)
	c.Flags().StringVar(&o.Group, "group", "", "consumer group the run joins (required); one with members at start is refused (exit 5) unless --allow-shared-group")
	c.Flags().BoolVar(&o.AllowSharedGroup, "allow-shared-group", false, "consume although --group has other members at start (the result then carries a warning)")
	c.Flags().BoolVar(&until, "until-quiescent", false, "stop once nothing is left to deliver and commits caught up")
	for flag, usage := range map[string]string{
		"client":  clientUsage + " (one: all is for repro and simulate)",
		"handler": "the application's run() callback: each-batch or each-message (one: all is for repro and simulate)",
		"commit":  "who commits: auto (librdkafka's auto-commit of the stored offsets) or ledger (auto-commit off; the ledger's frontier, the completed prefix, is committed)",
	} {
		c.Flags().Lookup(flag).Usage = usage
	}
	c.Flags().BoolVar(&useExisting, "use-existing-group", false, "consume although --group already has committed offsets (an application's or an earlier run's): the run starts at them and commits its own deliveries into the group")
	return c
}

// oneCase refuses "all" for the flags that take it in repro and simulate: those run a
// case per value, repro consume runs one consumer (it used to run the first silently).
func oneCase(o *reproOptions) error {
	for _, f := range []struct{ flag, value, want string }{
		{"client/--policy", o.Policy, "the releases and patches in docs/releases.md"},
		{"handler", o.Handler, "each-batch or each-message"},
		{"commit", o.Commit, "auto or ledger"},
	} {
		if strings.EqualFold(strings.TrimSpace(f.value), "all") {
			return exitcode.Usagef("--%s all: repro consume runs one consumer; give one of %s (all is for repro and simulate, which run a case per value)", f.flag, f.want)
		}
	}
	return nil
}
