package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/view"
)

func newReproProduceCmd(g *Globals) *cobra.Command {
	var topic string
	var partitions, partition int32
	var records int
	c := &cobra.Command{
		Use:   "produce",
		Short: "Write the workload: N records to one partition in ONE transaction (needs --brokers)",
		Long: `Write the seed's workload with a transactional confluent-kafka-go producer
(transactional.id, idempotence, acks=all): N records to one partition in ONE transaction,
commit, disconnect. Prints the first and last record offsets and the partition's high
watermark (the commit marker takes the offset after the last record). The topic is created
if missing. Point --brokers at your cluster or at ` + "`kstranded broker`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := g.Kafka()
			if err != nil {
				return err
			}
			if k.Brokers == "" {
				return exitcode.Usagef("repro produce needs --brokers (start one with: kstranded broker)")
			}
			if records <= 0 || partitions <= 0 || partition < 0 || partition >= partitions {
				return exitcode.Usagef("--records and --partitions must be > 0 and --partition in 0..%d", partitions-1)
			}
			if err := repro.EnsureTopic(c.Context(), k, topic, partitions, g.Timeout); err != nil {
				return err
			}
			res, err := repro.Produce(c.Context(), k, topic, partition, records, "kstranded-produce-"+topic, g.Timeout)
			if err != nil {
				return err
			}
			if f, _ := g.Format(); f == render.JSON {
				return render.WriteJSON(g.IO.Out, struct {
					render.Meta
					Topic     string `json:"topic"`
					Partition int32  `json:"partition"`
					Count     int    `json:"count"`
					First     int64  `json:"first_offset"`
					Last      int64  `json:"last_offset"`
					High      int64  `json:"high_watermark"`
				}{render.NewMeta("kstranded.produce/v1", "repro produce"), topic, partition, len(res.Offsets), res.First(), res.Last(), res.High})
			}
			fmt.Fprintf(g.IO.Out, "produced %d records to %s/%d in one transaction: offsets %d-%d, high watermark %d\n",
				len(res.Offsets), topic, partition, res.First(), res.Last(), res.High)
			return nil
		},
	}
	c.Flags().StringVar(&topic, "topic", "stranded", "topic (created if missing)")
	c.Flags().Int32Var(&partitions, "partitions", 20, "partitions when the topic is created")
	c.Flags().Int32Var(&partition, "partition", 0, "partition to write to")
	c.Flags().IntVar(&records, "records", 200, "records in the transaction")
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
Interrupted (Ctrl-C, SIGTERM), it exits 130 after printing what it saw. Use it with ` + "`repro produce`" + ` against your own cluster or ` + "`kstranded broker`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.fetchWaitSet = c.Flags().Changed("fetch-wait-max")
			if _, err := o.complete(g); err != nil {
				return err
			}
			if o.Kafka.Brokers == "" || o.Group == "" {
				return exitcode.Usagef("repro consume needs --brokers and --group")
			}
			closeTrace, err := o.openTrace()
			if err != nil {
				return err
			}
			defer closeTrace()
			res, err := repro.Consume(c.Context(), o.Options, until)
			if res != nil {
				format, _ := g.Format()
				if perr := view.PrintConsume(g.IO.Out, view.NewConsume(res), format, g.Pretty()); perr != nil {
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
	c.Flags().StringVar(&o.Group, "group", "", "consumer group (required)")
	c.Flags().BoolVar(&until, "until-quiescent", false, "stop once nothing is left to deliver and commits caught up")
	return c
}
