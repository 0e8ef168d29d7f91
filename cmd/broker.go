package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
)

func init() { register(newBrokerCmd) }

type brokerOptions struct {
	Port       int
	Partitions int32
	Topic      string
}

func newBrokerCmd(g *Globals) *cobra.Command {
	o := brokerOptions{}
	c := &cobra.Command{
		Use:   "broker",
		Short: "Serve the embedded Kafka broker (kfake) on loopback until interrupted",
		Long: `Serve kstranded's embedded broker (franz-go kfake, in process) on 127.0.0.1 in the
foreground and print its bootstrap address, so any client (your own consumer, in any
language) can be pointed at it. Ctrl-C stops it; its data lives in memory only.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.Port < 0 || o.Port > 65535 {
				return exitcode.Usagef("--port must be 0..65535, got %d", o.Port)
			}
			if o.Partitions <= 0 {
				return exitcode.Usagef("--partitions must be > 0, got %d", o.Partitions)
			}
			b, err := embedded.Start(embedded.Options{Port: o.Port, Topic: o.Topic, Partitions: o.Partitions})
			if err != nil {
				return err
			}
			defer b.Close()
			if f, _ := g.Format(); f == render.JSON {
				_ = render.WriteJSON(g.IO.Out, struct {
					render.Meta
					Bootstrap  string `json:"bootstrap"`
					Topic      string `json:"topic,omitempty"`
					Partitions int32  `json:"partitions"`
				}{render.NewMeta("kstranded.broker/v1", "broker"), b.Addr(), o.Topic, o.Partitions})
			} else {
				fmt.Fprintf(g.IO.Out, "bootstrap: %s\n", b.Addr())
				if o.Topic != "" {
					fmt.Fprintf(g.IO.Out, "topic:     %s (%d partitions)\n", o.Topic, o.Partitions)
				}
				fmt.Fprintln(g.IO.Out, "serving until interrupted (Ctrl-C)")
			}
			<-c.Context().Done()
			return nil
		},
	}
	f := c.Flags()
	f.IntVar(&o.Port, "port", 0, "port on 127.0.0.1 (0: a free port)")
	f.Int32Var(&o.Partitions, "partitions", 20, "partitions of the seeded topic and of auto-created topics")
	f.StringVar(&o.Topic, "topic", "stranded", "topic to create at start (empty: none)")
	return c
}
