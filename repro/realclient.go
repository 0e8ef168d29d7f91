package repro

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/jsclient"
)

// RealClientOptions is one run of the real @confluentinc/kafka-javascript (issue 23 §3).
type RealClientOptions struct {
	// Version is the release; Dir its install (jsclient.Ensure).
	Version string
	Dir     string
	Shape   jsclient.Shape
	// Kafka: Brokers empty runs the embedded broker, as repro does.
	Kafka      kafkaconf.Config
	Partitions int32
	Group      string
	Timeout    time.Duration
	// Keep leaves the run's topic on o.Kafka.Brokers (repro's --keep); otherwise it is
	// deleted after the run, as repro deletes its own.
	Keep bool
	// Log, when not nil, receives scenario.js's whole output (the client's lines too).
	Log io.Writer
}

// RealClientPackage is the npm package RunRealClient runs.
const RealClientPackage = "@confluentinc/kafka-javascript"

// RunRealClient runs jsclient's scenario with the real client on the embedded broker (or
// o.Kafka.Brokers, on a topic of the run's own) and judges it with the one judge
// (Judge), per partition: the records scenario.js produced (jsclient.Log.Records), what
// its handler delivered (its delivery lines) and the group's committed offset it read
// back after phase 2. scenario.js produces its own records (a transaction, then one more
// per partition), as the bug report's application did: repro's producer is not used, so
// the workload is the shape's (Spread or Records), not repro's workload flags.
func RunRealClient(ctx context.Context, o RealClientOptions) (*Result, error) {
	start := time.Now()
	runID := newRunID()
	if o.Partitions <= 0 {
		o.Partitions = 20
	}
	res := &Result{RunID: runID, Client: RealClientPackage + " " + o.Version, Commit: CommitMode("auto"),
		Handler: eachbatch.EachBatch, Settings: map[string]string{"client": o.Version, "time_scale": fmt.Sprint(1.0 / jsclient.Scale)}}
	if p, err := eachbatch.ParsePolicy(o.Version); err == nil {
		res.Policy = p
	} else {
		res.Policy = eachbatch.Policy(o.Version)
	}
	if o.Shape.Handler == "eachMessage" {
		res.Handler = eachbatch.EachMessage
	}
	if o.Shape.Commit != "" {
		res.Commit = CommitMode(o.Shape.Commit)
	}
	// scenario.js's arguments: --flag value, a lone --flag (--heartbeat) is true, a
	// repeated one (--rebalance-at) lists its values
	args := o.Shape.ScenarioArgs()
	for i := 0; i < len(args); i++ {
		k, v := args[i][2:], "true"
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			v = args[i+1]
			i++
		}
		if prev, ok := res.Settings[k]; ok {
			v = prev + "," + v
		}
		res.Settings[k] = v
	}
	cfg := o.Kafka
	topic := jsclient.Topic
	if cfg.Brokers == "" {
		b, err := embedded.Start(embedded.Options{Topic: topic, Partitions: o.Partitions})
		if err != nil {
			return nil, err
		}
		defer b.Close()
		cfg = cfg.WithBrokers(b.Addr())
		res.Embedded = true
	} else {
		// a topic of the run's own: the records' offsets follow from a fresh topic
		topic = fmt.Sprintf("%s-%s", jsclient.Topic, runID)
		if err := EnsureTopic(ctx, cfg, topic, o.Partitions, o.Timeout); err != nil {
			return nil, err
		}
		if o.Keep {
			res.Warnings = append(res.Warnings, fmt.Sprintf("topic %s is kept on the cluster (--keep: delete it when done)", topic))
		} else {
			defer func() {
				dctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
				defer cancel()
				if err := DeleteTopic(dctx, cfg, topic, o.Timeout); err != nil {
					res.Warnings = append(res.Warnings, fmt.Sprintf("could not delete topic %s: %v", topic, err))
				}
			}()
		}
	}
	if o.Shape.Members > 1 {
		// measured (FIDELITY.md, issue 23 §1): kfake completes a JoinGroup at once when
		// every member it knows has joined, so the first member's join completes alone and
		// the others' are rebalances of their own
		res.Warnings = append(res.Warnings, fmt.Sprintf("--members %d: the real members, started together, join one at a time: the broker completes the first join alone and the others' are rebalances of their own, with duplicates (FIDELITY.md); simulate assigns the %d together", o.Shape.Members, o.Shape.Members))
	}
	group := o.Group
	if group == "" {
		group = fmt.Sprintf("kstranded-js-%s-%s", o.Version, runID)
	}
	res.Topic, res.Group, res.Brokers = topic, group, cfg.Brokers

	var out bytes.Buffer
	var w io.Writer = &out
	if o.Log != nil {
		w = io.MultiWriter(&out, o.Log)
	}
	err := jsclient.Run(ctx, jsclient.RunOptions{Dir: o.Dir, Brokers: cfg.Brokers, Group: group, Topic: topic, Shape: o.Shape, Log: w})
	res.Elapsed = time.Since(start)
	if err != nil {
		res.Error = err.Error()
		res.Interrupted = ctx.Err() != nil
		return res, fmt.Errorf("the real client's run: %w", err)
	}
	l, err := jsclient.ParseLog(&out)
	if err != nil {
		return res, err
	}
	if l.Client != "" && l.Client != o.Version {
		return res, fmt.Errorf("scenario.js ran %s %s, not %s (NODE_PATH: %s)", RealClientPackage, l.Client, o.Version, o.Dir)
	}
	judgeRealClient(res, l)
	// each member's distinct deliveries (scenario.js names the member with two or more)
	var names []string
	for name := range l.ByMember {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	for _, name := range names {
		res.Members = append(res.Members, MemberResult{Name: name, Delivered: l.ByMember[name]})
	}
	res.Complete = true
	return res, nil
}

// judgeRealClient fills the result's partitions and verdict from a run's log, with the
// one judge.
func judgeRealClient(res *Result, l *jsclient.Log) {
	var ps []int32
	for p := range l.Produced {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	res.Verdict = verdict.OK
	res.Produced = ProduceResult{Topic: res.Topic}
	for _, p := range ps {
		rs := l.Records(p)
		committed := int64(-1)
		if cs := l.Committed[p]; len(cs) > 0 {
			committed = cs[len(cs)-1]
		}
		v := Judge(p, rs, l.Delivered[p], committed, l.High[p])
		res.Partitions = append(res.Partitions, PartitionResult{Partition: p, Produced: len(rs), High: l.High[p],
			CommittedByPhase: l.Committed[p], PartitionVerdict: v})
		res.Produced.Partitions = append(res.Produced.Partitions, ProducedPartition{Partition: p, Offsets: rs, High: l.High[p]})
		res.Verdict = verdict.Worse(res.Verdict, v.Verdict)
	}
}
