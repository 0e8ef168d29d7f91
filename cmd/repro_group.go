package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/rewind"
)

// sharedGroup describes --group before a repro run joins it (issue 16 §5). Two runs, or
// a run and an application, in one group split its partitions between them: each sees
// only its share, and each reports part of a loss as if it were the whole. So a group
// with members at start is refused (exit 5, naming them) unless allow; with allow the
// returned warning goes into the result. The description is inspect's (both group
// protocols). A group that cannot be described is refused the same way: nothing shows
// it has no members.
func sharedGroup(ctx context.Context, k kafkaconf.Config, group string, timeout time.Duration, allow bool) (string, error) {
	if group == "" || k.Brokers == "" {
		return "", nil // a group of the run's own, or the embedded broker: nobody else is in it
	}
	opts, err := k.KgoOpts()
	if err != nil {
		return "", err
	}
	cl, err := inspect.NewKafka(opts, timeout)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	g, err := cl.DescribeGroup(ctx, group) // asked again while its coordinator is not available yet
	if err != nil {
		return "", fmt.Errorf("describing --group %s before the run: %w", group, err)
	}
	why := rewind.Occupied(g, "other ", " at start")
	if why == "" {
		return "", nil
	}
	if !allow {
		return "", fmt.Errorf("%w: %s; the run would share the group's partitions with them and judge only its share (another --group, or --allow-shared-group to run anyway)", exitcode.ErrRefused, why)
	}
	return "--allow-shared-group: " + why + "; the run shares the group's partitions with them, so its verdict covers only the partitions it was assigned, and records the other members consume are never delivered to it", nil
}

// existingGroup reads --group's committed offsets before repro consume joins it (issue 21
// §3). A group with committed offsets was not made by this run: it is an application's
// (an operator following a runbook, say, after a rewind) or an earlier run's, and the
// model consumer would start at its offsets and commit its own deliveries over them:
// records the application never processed would be committed past again, with the
// model's trace as the only evidence that they were "delivered". So it is refused (exit 5,
// saying what the group holds and what the run would commit) unless allow; with allow
// the returned warning says the same and goes into the result. A fresh group name holds
// nothing and runs.
func existingGroup(ctx context.Context, o *reproOptions, allow bool) (string, error) {
	gs, err := repro.ExistingOffsets(ctx, o.Kafka, o.Group, o.Topic, o.Timeout)
	if err != nil {
		return "", err
	}
	why := gs.Describe(o.Options.Commit)
	if why == "" {
		return "", nil
	}
	if !allow {
		return "", fmt.Errorf("%w: %s; give a new group name (the model consumer in a group of its own), or --use-existing-group to run in this one anyway", exitcode.ErrRefused, why)
	}
	return "--use-existing-group: " + why, nil
}
