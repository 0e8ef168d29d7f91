package cmd

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/trace"
)

// completionTimeout bounds the cluster look-ups behind group and topic completion: a
// shell waits on them, so a slow or absent cluster must not hang the prompt.
const completionTimeout = 3 * time.Second

// registerCompletions offers values for the flags that have a fixed set (--policy,
// --commit, -o, --format) and, where --brokers (or its alias, environment variable or
// --config) names a cluster, the group and topic names on it. It walks the command tree,
// so a command that defines one of these flags gets its completion without saying so.
func registerCompletions(root *cobra.Command, g *Globals) {
	fixed := map[string][]string{
		"commit":     {"auto", "ledger", "manual", "explicit", "all"},
		"pause-from": {"handler", "outside"},
		"output":     {"table", "json"},
	}
	for _, r := range eachbatch.Releases {
		if r.Group.Policy != "" {
			fixed["client"] = append(fixed["client"], r.Name)
		}
	}
	fixed["client"] = append(fixed["client"], "all")
	fixed["policy"] = fixed["client"]
	fixed["format"] = []string{"auto"}
	for _, f := range trace.Formats {
		fixed["format"] = append(fixed["format"], string(f))
	}
	_ = root.RegisterFlagCompletionFunc("output", values(fixed["output"]))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, vs := range fixed {
			if name != "output" && c.LocalNonPersistentFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, values(vs))
			}
		}
		if c.LocalNonPersistentFlags().Lookup("group") != nil {
			_ = c.RegisterFlagCompletionFunc("group", clusterNames(g, func(ctx context.Context, adm *kadm.Client) ([]string, error) {
				gs, err := adm.ListGroups(ctx)
				return gs.Groups(), err
			}))
		}
		if c.LocalNonPersistentFlags().Lookup("topic") != nil {
			_ = c.RegisterFlagCompletionFunc("topic", clusterNames(g, func(ctx context.Context, adm *kadm.Client) ([]string, error) {
				ts, err := adm.ListTopics(ctx)
				return ts.Names(), err
			}))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func values(vs []string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return vs, cobra.ShellCompDirectiveNoFileComp
	}
}

// clusterNames completes from the cluster the global flags name; without one, or when
// it does not answer within completionTimeout, it offers nothing (and no file names).
func clusterNames(g *Globals, list func(context.Context, *kadm.Client) ([]string, error)) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if g.Brokers == "" {
			g.Brokers = os.Getenv(brokersEnv)
		}
		opts, err := g.KgoOpts()
		if err != nil || !hasBootstrap(g) {
			return nil, none
		}
		cl, err := kgo.NewClient(append(opts, kgo.DialTimeout(completionTimeout))...)
		if err != nil {
			return nil, none
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(c.Context(), completionTimeout)
		defer cancel()
		names, err := list(ctx, kadm.NewClient(cl))
		if err != nil {
			return nil, none
		}
		return names, none
	}
}

func hasBootstrap(g *Globals) bool {
	k, err := g.Kafka()
	return err == nil && k.Brokers != ""
}
