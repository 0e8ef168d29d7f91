package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
)

type brokerOptions struct {
	Port       int
	Partitions int32
	Topic      string
}

// newBrokerCmd builds `kstranded broker`; runF, when not nil (tests), receives the
// validated options instead of the broker being started.
func newBrokerCmd(g *Globals, runF func(context.Context, *brokerOptions) error) *cobra.Command {
	o := &brokerOptions{}
	c := &cobra.Command{
		Use:   "broker",
		Short: "Serve the embedded Kafka broker (kfake) on loopback until interrupted",
		Long: `Serve kstranded's embedded broker (franz-go kfake, in process) on 127.0.0.1 in the
foreground and print its bootstrap address, so any client (your own consumer, in any
language) can be pointed at it. Only Ctrl-C (or SIGTERM) stops it, with exit 130 as
any interrupted kstranded command; its data lives in memory only.

` + exitHelp(exitCodes{exitcode.Error, "the port could not be bound"}, exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Interrupted, "stopped by Ctrl-C or SIGTERM, the only way it stops"}),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), o)
			}
			return runBroker(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.IntVar(&o.Port, "port", 0, "port on 127.0.0.1 (0: a free port)")
	f.Int32Var(&o.Partitions, "partitions", 20, "partitions of the seeded topic and of auto-created topics")
	f.StringVar(&o.Topic, "topic", "stranded", "topic to create at start (empty: none)")
	return c
}

func (o *brokerOptions) validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return exitcode.Usagef("--port must be 0..65535, got %d", o.Port)
	}
	if o.Partitions <= 0 {
		return exitcode.Usagef("--partitions must be > 0, got %d", o.Partitions)
	}
	return nil
}

func runBroker(ctx context.Context, g *Globals, o *brokerOptions) error {
	b, err := embedded.Start(embedded.Options{Port: o.Port, Topic: o.Topic, Partitions: o.Partitions})
	if err != nil {
		return err
	}
	defer b.Close()
	if f, _ := g.Format(); f == render.JSON {
		_ = render.WriteJSON(g.IO.Out, struct {
			render.Meta
			Bootstrap  string  `json:"bootstrap"`
			Topic      *string `json:"topic"` // null: no topic created
			Partitions int32   `json:"partitions"`
		}{render.NewMeta("kstranded.broker/v1", "broker"), b.Addr(), nilIfEmpty(o.Topic), o.Partitions})
	} else {
		fmt.Fprintf(g.IO.Out, "bootstrap: %s\n", b.Addr())
		if o.Topic != "" {
			fmt.Fprintf(g.IO.Out, "topic:     %s (%d partitions)\n", o.Topic, o.Partitions)
		}
		fmt.Fprintln(g.IO.Out, "serving until interrupted (Ctrl-C)")
	}
	<-ctx.Done()
	return exitcode.ErrInterrupted // the only way it stops
}

// nilIfEmpty is nil for "", so a JSON document says null for a missing value.
func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
