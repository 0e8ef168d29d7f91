package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/exitcode"
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
			k, err := g.Kafka()
			if err != nil {
				return err
			}
			if k.Brokers == "" {
				return exitcode.Usagef("repro produce needs --brokers (start one with: kstranded broker)")
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
				return err
			}
			res, err := repro.Produce(c.Context(), k, topic, spec, "kstranded-produce-"+topic, g.Timeout)
			if err != nil {
				return err
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
	var until bool
	c := &cobra.Command{
		Use:   "consume",
		Short: "Run only the model consumer against data already in a topic (needs --brokers, --group)",
		Long: `Run the modeled eachBatch consumer (same settings and policies as repro) in --group against
the records already in --topic, until interrupted or, with --until-quiescent, until nothing is
left to deliver and auto-commit has caught up. Prints what was delivered and committed per
partition, and a verdict on the records the consumer fetched: LOST (never delivered, below
the committed offset, exit 3), STRANDED (never delivered, not committed past, exit 4), OK.
Interrupted (Ctrl-C, SIGTERM), it exits 130 after printing what it saw. A --group with
other members at start is refused (exit 5, naming them) unless --allow-shared-group: the
run would judge only its share of the partitions. Use it with ` + "`repro produce`" + ` against your own cluster or ` + "`kstranded broker`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.fetchWaitSet = c.Flags().Changed("fetch-wait-max")
			if _, err := o.complete(g); err != nil {
				return err
			}
			if o.Kafka.Brokers == "" || o.Group == "" {
				return exitcode.Usagef("repro consume needs --brokers and --group")
			}
			shared, err := sharedGroup(c.Context(), o.Kafka, o.Group, o.Timeout, o.AllowSharedGroup)
			if err != nil {
				return err
			}
			closeTrace, err := o.openTrace()
			if err != nil {
				return err
			}
			defer closeTrace()
			res, err := repro.Consume(c.Context(), o.Options, until)
			if res != nil && shared != "" {
				res.Warnings = append([]string{shared}, res.Warnings...)
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
			return reproOutcome(res.Verdict)
		},
	}
	bindScenarioFlags(c.Flags(), o)
	c.Flags().StringVar(&o.Group, "group", "", "consumer group (required); one with members at start is refused (exit 5) unless --allow-shared-group")
	c.Flags().BoolVar(&o.AllowSharedGroup, "allow-shared-group", false, "consume although --group has other members at start (the result then carries a warning)")
	c.Flags().BoolVar(&until, "until-quiescent", false, "stop once nothing is left to deliver and commits caught up")
	return c
}
