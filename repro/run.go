package repro

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// Progress is a live status for terminals.
type Progress struct {
	Phase int
	eachbatch.Status
	Elapsed time.Duration
}

// ErrPhaseTimeout is returned when a phase never becomes quiescent.
var ErrPhaseTimeout = errors.New("the consumer did not become quiescent")

// ErrUnreachable is returned when the consumer's errors and the broker's silence
// outlast the unreachable bound (half of --timeout): a dead or frozen broker ends the
// run within --timeout, whatever the phase timeout.
var ErrUnreachable = errors.New("broker unreachable")

// unreachableAfter is how long the client may report errors with no contact before a
// phase ends, and probeTimeout bounds each committed-offsets probe; together with the
// bounded clean-up (closeUnreachable) a dead broker ends the run within --timeout.
func (o Options) unreachableAfter() time.Duration { return o.Timeout / 2 }
func (o Options) probeTimeout() time.Duration     { return max(o.Timeout/4, 10*time.Millisecond) }

// checkEvery is how often a phase looks for quiescence and for a broker that stopped
// answering: an auto-commit interval (scaled), but at least every second, so that a
// dead broker is found within about half of --timeout at any --time-scale.
func (o Options) checkEvery() time.Duration {
	return min(max(o.scale(o.AutoCommitInterval), 10*time.Millisecond), time.Second)
}

// closeUnreachable bounds each clean-up step (close, topic deletion) once the broker is
// known unreachable: nothing there can succeed, and the run must end within --timeout.
const closeUnreachable = time.Second

func newRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Run runs the scenario once. On interruption (ctx cancelled) it returns the partial
// result with Interrupted set, together with ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	runID := newRunID()
	res := &Result{RunID: runID, Policy: o.Policy, Handler: o.handler(), Commit: o.Commit, Settings: o.settingsMap()}
	cfg := o.Kafka
	topic := o.Topic
	kfake := false
	if cfg.Brokers == "" {
		b, err := embedded.Start(embedded.Options{Topic: topic, Partitions: o.Partitions})
		if err != nil {
			return nil, err
		}
		defer b.Close()
		cfg = cfg.WithBrokers(b.Addr())
		res.Embedded, kfake = true, true
	} else {
		// A user's cluster: a topic of our own per run, deleted afterwards unless --keep.
		topic = fmt.Sprintf("%s-%s", o.Topic, runID)
		if err := EnsureTopic(ctx, cfg, topic, o.Partitions, o.Timeout); err != nil {
			return nil, err
		}
		if id, err := ClusterID(ctx, cfg, o.Timeout); err == nil && id == embedded.ClusterID {
			kfake = true // `kstranded broker`: kfake needs a short fetch wait
		}
		if !o.Keep {
			defer func() {
				bound := res.cleanup(o.Timeout)
				dctx, cancel := context.WithTimeout(context.Background(), bound)
				defer cancel()
				if err := DeleteTopic(dctx, cfg, topic, bound); err != nil {
					res.Warnings = append(res.Warnings, fmt.Sprintf("could not delete topic %s: %v", topic, err))
				}
			}()
		}
	}
	group := o.Group
	if group == "" {
		group = fmt.Sprintf("kstranded-%s-%s-%s", o.Policy, o.Commit, runID)
	}
	res.Topic, res.Group, res.Brokers = topic, group, cfg.Brokers

	lc := &liveCluster{o: o, ctx: ctx, cfg: cfg, topic: topic, group: group, runID: runID, began: start, kfake: kfake}
	d := newDriver(ctx, o, loop.NewReal(), topic, group, res, o.Trace.Write)
	d.cl, lc.d = lc, d
	return d.run(func() error {
		if o.Group != "" && !res.Embedded {
			// A group named on a cluster others use: someone may join it while the run
			// goes on (issue 27 §4); cmd checked who was there at start.
			var err error
			if lc.shared, err = watchShared(ctx, cfg, group, lc.clientID(), o.Timeout, func() int { return int(lc.started.Load()) }, func() time.Duration { return time.Since(start) }); err != nil {
				return err
			}
		}
		if o.Progress != nil {
			var tick func()
			tick = func() {
				if len(d.members) > 0 && d.members[0].eng != nil {
					o.Progress(Progress{Phase: len(res.Phases) + 1, Status: d.members[0].eng.Status(), Elapsed: time.Since(start)})
				}
				d.lp.After(200*time.Millisecond, tick)
			}
			d.lp.Post(tick)
		}
		return nil
	})
}

// liveCluster is the scenario's cluster on a broker: each member is a librdkafka
// client (rdSource) in the run's group, on the wall clock.
type liveCluster struct {
	o       Options
	ctx     context.Context
	cfg     kafkaconf.Config
	topic   string
	group   string
	runID   string
	began   time.Time // when Run began: the result's times count from it
	kfake   bool      // the broker is kfake (embedded, or `kstranded broker`)
	d       *driver
	started atomic.Int64 // consumers started, over instances (sharedWatch)
	shared  *sharedWatch // a named group on --brokers: who else is in it while the run goes on
	// consumed is set on `repro consume`: the group's data already in the topic, read
	// where the consumer is assigned, instead of a workload produced (consume.go).
	consumed *consumed
}

// rd is a live member's client.
func rd(m *member) *rdSource { return m.client.(*rdSource) }

func (c *liveCluster) elapsed() time.Duration { return time.Since(c.began) }

func (c *liveCluster) produce() (ProduceResult, error) {
	return Produce(c.ctx, c.cfg, c.topic, c.o.Workload, "kstranded-"+c.runID, c.o.Timeout)
}

func (c *liveCluster) produceEach(parts []int32) (map[int32]int64, map[int32]int64, error) {
	offs, highs, err := ProduceEach(c.ctx, c.cfg, c.topic, parts, c.o.Timeout)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range parts {
		for _, m := range c.d.members {
			rd(m).expect[kpart.TopicPartition{Topic: c.topic, Partition: p}] = highs[p]
		}
	}
	return offs, highs, nil
}

// clientID is the client.id of the run's consumers: the user's, else one of the run's
// own, which is how sharedWatch tells the run's members from anyone else's.
func (c *liveCluster) clientID() string {
	if id := c.cfg.Props["client.id"]; id != "" {
		return id
	}
	return "kstranded-" + c.runID
}

// newSource starts one consumer client of the run in its group.
func (c *liveCluster) newSource() (*rdSource, error) {
	props := consumerProps(c.o, c.group, c.kfake)
	if c.cfg.Props["client.id"] == "" && c.runID != "" { // repro consume has no run ID: librdkafka's
		props["client.id"] = c.clientID()
	}
	c.started.Add(1)
	return newRDSource(c.cfg, props, c.topic, c.d.trace, func() (time.Time, float64) {
		return time.Now().UTC(), float64(c.d.lp.Elapsed()) / float64(time.Millisecond)
	})
}

// start starts a consumer instance in the run's group: n consumers, each its own
// librdkafka client and engine. They subscribe first and are polled in turn until every
// one holds partitions (an eager rebalance waits for every member to rejoin, so none may
// be left unpolled), then their engines start; from then on every rebalance goes
// through the engine's #rebalanceCallback.
func (c *liveCluster) start(d *driver, n int) ([]*member, error) {
	var ms []*member
	for i := 0; i < n; i++ {
		src, err := c.newSource()
		if err != nil {
			return ms, err
		}
		if c.o.grouped() {
			src.member = fmt.Sprintf("m%d", i+1)
			src.emit(traceevent.Event{Ev: traceevent.Member, Reason: "join"})
		}
		ms = append(ms, &member{name: fmt.Sprintf("m%d", i+1), client: src})
	}
	if len(ms) == 1 {
		if err := rd(ms[0]).waitAssigned(c.ctx, c.cfg.Brokers, c.o.Timeout); err != nil {
			return ms, err
		}
		if c.consumed != nil {
			if err := c.readStart(rd(ms[0])); err != nil {
				return ms, err
			}
		}
	} else if err := c.waitAllAssigned(ms); err != nil {
		return ms, err
	}
	for _, m := range ms {
		if err := c.startEngine(m); err != nil {
			return ms, err
		}
	}
	return ms, nil
}

// waitAllAssigned polls every member until each holds partitions.
func (c *liveCluster) waitAllAssigned(ms []*member) error {
	deadline := time.Now().Add(c.o.Timeout)
	for {
		all := true
		for _, m := range ms {
			src := rd(m)
			if err := c.ctx.Err(); err != nil {
				return err
			}
			switch e := src.c.Poll(20).(type) {
			case kafka.Error:
				if e.IsFatal() {
					return fmt.Errorf("consumer: %w", e)
				}
			case *kafka.Message:
				// A member assigned first fetches while the others wait for theirs; it is
				// polled on (an eager rebalance needs it), and the record is fetched
				// again once its engine runs: seek back to it.
				tp := kpart.TopicPartition{Topic: *e.TopicPartition.Topic, Partition: e.TopicPartition.Partition}
				epoch := int32(-1)
				if e.TopicPartition.LeaderEpoch != nil {
					epoch = *e.TopicPartition.LeaderEpoch
				}
				if err := src.Seek(tp, int64(e.TopicPartition.Offset), epoch); err != nil {
					return fmt.Errorf("consumer returned a record before its engine started and could not seek back to it: %v: %w", e.TopicPartition, err)
				}
			}
			all = all && len(src.assignment) > 0
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no partition assignment for all %d members from brokers %s within --timeout %s", len(ms), c.cfg.Brokers, c.o.Timeout)
		}
	}
}

// startEngine starts a member's engine and ledger on its assigned client.
func (c *liveCluster) startEngine(m *member) error {
	o, d := c.o, c.d
	src := rd(m)
	for p, h := range d.highs {
		src.expect[kpart.TopicPartition{Topic: c.topic, Partition: p}] = h
	}
	trace := d.trace
	if src.member != "" {
		trace = func(ev traceevent.Event) { ev.Member = src.member; d.trace(ev) }
	}
	if err := d.attach(m, src, src, trace); err != nil {
		return err
	}
	start := map[kpart.TopicPartition]int64{}
	var got map[kpart.TopicPartition]int64
	var err error
	if c.consumed != nil {
		got = c.consumed.startAt // read as it was assigned (readStart)
	} else {
		// Bounded like the phase's probes: a broker that stops answering here (between
		// the join and the engine's start) must leave the run its unreachable bound.
		if got, err = src.committed(o.probeTimeout()); err != nil {
			src.unanswered(fmt.Errorf("committed offsets unreadable as the engine started: %w", err))
			src.errs = append(src.errs, fmt.Errorf("committed offsets of %s's partitions as its engine started: %w (its ledger starts with none)", src.name(), err))
		}
	}
	if err == nil {
		for tp, off := range got {
			if off >= 0 {
				start[tp] = off
			}
		}
	}
	m.ft.assign(src.Assignment(), start)
	followAssignment(o, src, m.eng, m.ft)
	d.lp.Post(m.eng.Start)
	return nil
}

// followAssignment makes a live member's ledger and engine follow its client's
// rebalances. A partition assigned mid-run (a member joined or left, or librdkafka
// rejoined after max.poll.interval) starts its ledger at the group's committed offset,
// as the simulated run's does (simkafka.Client.Committed): librdkafka starts fetching
// there too (kafkaTPs: OFFSET_INVALID). The read runs inside Poll's rebalance callback,
// before the partitions are assigned; librdkafka serves it from its main thread
// (rd_kafka_committed's OffsetFetch), not from this poll.
func followAssignment(o Options, src *rdSource, eng *eachbatch.Engine, ft *frontierTracker) {
	src.onAssign = func(tps []kpart.TopicPartition) {
		start := map[kpart.TopicPartition]int64{}
		got, err := src.committedOf(tps, o.probeTimeout())
		if err != nil {
			src.errs = append(src.errs, fmt.Errorf("committed offsets of the partitions assigned to %s: %w (their ledger starts with none)", src.name(), err))
		}
		for tp, off := range got {
			if off >= 0 {
				start[tp] = off
			}
		}
		ft.assign(tps, start)
	}
	src.onRevoke = ft.revoked
	src.onRebalance = eng.RebalanceCallback
}

// join is a --rebalance-at TIME:join step live: a new member, its own librdkafka client
// in the group (subscribe()), engine and ledger, as an application instance started
// mid-run (connect, subscribe, run). Its engine starts at once, unassigned: its first
// consume call joins the group, and the assignment comes through its
// #rebalanceCallback like every later one. The members already in the group see the
// rebalance through theirs: under the classic protocol (roundrobin, EAGER) every
// partition is revoked (a pending #unassign once their batches in flight finish) and
// dealt again; under the consumer protocol (COOPERATIVE) only the partitions that move.
func (c *liveCluster) join(d *driver, name string) (*member, error) {
	src, err := c.newSource()
	if err != nil {
		return nil, err
	}
	src.member = name
	src.emit(traceevent.Event{Ev: traceevent.Member, Reason: "join"})
	m := &member{name: name, client: src}
	return m, c.startEngine(m)
}

// whenStopped is a leave live: the loop runs until the member's batches in flight
// finish or --grace passes.
func (c *liveCluster) whenStopped(m *member, then func()) {
	drain(c.d.lp, m.eng, c.o.Grace)
	then()
	rd(m).emit(traceevent.Event{Ev: traceevent.Member, Reason: "leave"})
}

func (s *rdSource) leave(bound time.Duration) {
	if err := s.close(bound); err != nil {
		s.errs = append(s.errs, err)
	}
}

func (s *rdSource) problems() []error  { return s.errs }
func (s *rdSource) maxPollLeaves() int { return s.lostCount }

// drain stops admitting work and runs the loop until every batch in flight has
// finished or the grace period (on the loop's clock) has passed.
func drain(lp *loop.Loop, eng *eachbatch.Engine, grace time.Duration) {
	eng.Stop()
	expired := false
	t := lp.After(grace, func() { expired = true })
	defer t.Stop()
	_ = lp.Run(context.Background(), func() bool { return eng.Stopped() || expired })
}

// phase2Done holds once every phase-2 record was delivered, or taken from librdkafka by
// a member assigned its partition (its end-of-partition evidence is past the record), as
// simulate's phase2Done: 1.7.0's consume loop (eachbatch.V1_7_0) takes records no handler
// ever gets, and waiting for their delivery would wait for ever. The phase still ends only
// when every member is quiescent; the judge then says what became of the record.
func (c *liveCluster) phase2Done(d *driver, offs map[int32]int64) func() bool {
	pend := newPhase2Pending(d.deliveredTimes, c.topic, offs)
	return func() bool {
		if pend.delivered() {
			return true
		}
		for _, p := range pend.pending {
			tp := kpart.TopicPartition{Topic: c.topic, Partition: p}
			taken := false
			for _, m := range d.members {
				src := rd(m)
				if !slices.Contains(src.assignment, tp) {
					continue
				}
				if end, ok := src.EndEvidence(tp); ok && end > offs[p] {
					taken = true
				}
			}
			if !taken {
				return false
			}
		}
		return true
	}
}

// silent probes the cluster once through the run's consumers (a failed read of the
// committed offsets within the probe's bound): true when none answers, and the run's
// clean-up is then bounded as after an unreachable broker.
func (c *liveCluster) silent(d *driver) bool {
	for _, m := range d.active() {
		if rd(m).silent(min(c.o.probeTimeout(), closeUnreachable)) {
			d.res.unreachable = true
			return true
		}
	}
	return false
}

// unreachableErr names an unreachable broker as the cause of err, a run that failed on
// another error (no assignment, a lost one) while the cluster was not answering (silent):
// the same error, whatever the step the broker's death cut short.
func unreachableErr(d *driver, err error) error {
	if err == nil || !d.res.unreachable || errors.Is(err, ErrUnreachable) || d.ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: no answer to a probe once the run failed: %w", ErrUnreachable, err)
}

// current reads what is committed when a run is interrupted or failed mid-phase, if it
// can be read.
func (c *liveCluster) current(d *driver) map[kpart.TopicPartition]int64 {
	if (d.ctx.Err() != nil || d.failed) && !d.res.unreachable {
		// Interrupted, or failed on another error (no assignment, a lost one), while the
		// broker was not answering: the read-back below, the close and the topic's
		// deletion are bounded as after an unreachable broker, else each waits --timeout
		// (issue 27 §5; a broker frozen as the consumer started ended the run 20 s after
		// the freeze at --timeout 6s).
		c.silent(d)
	}
	if d.res.unreachable {
		return nil
	}
	var current map[kpart.TopicPartition]int64
	for _, m := range d.active() {
		if got, err := rd(m).committed(min(c.o.Timeout, 5*time.Second)); err == nil {
			if current == nil {
				current = map[kpart.TopicPartition]int64{}
			}
			maps.Copy(current, got)
		}
	}
	return current
}

// stopped ends the shared-group watch: another member in the run's group fails the run
// unless --allow-shared-group.
func (c *liveCluster) stopped(runErr error) error {
	if who, at := c.shared.stop(); who != "" {
		msg := fmt.Sprintf("group %s had another member during the run: %s was in it at %s; it took part of the group's partitions and its joins and leaves rebalanced the run's consumers, so what this run counts is only its share, not the scenario's outcome (a group of the run's own gives that)",
			c.group, who, at.Round(time.Millisecond))
		if c.o.AllowSharedGroup {
			c.d.res.Warnings = append(c.d.res.Warnings, "--allow-shared-group: "+msg)
		} else if runErr == nil {
			runErr = fmt.Errorf("%w: %s", ErrSharedGroup, msg)
			c.d.res.EveryPhase = true
		}
	}
	return runErr
}

// settle: the phase ends when the members are quiescent and the group's committed
// offsets equal what the commit mode commits (the stored offsets with auto-commit, the
// ledger's frontier with --commit ledger) on the partitions each member holds.
func (c *liveCluster) settle(d *driver, n int, extra func() bool) (map[kpart.TopicPartition]int64, error) {
	target := func() map[kpart.TopicPartition]int64 {
		out := map[kpart.TopicPartition]int64{}
		for _, m := range d.active() {
			held := rd(m).assignment
			if c.o.Commit == CommitLedger {
				for tp, f := range m.ft.frontiers() {
					if f > 0 && slices.Contains(held, tp) {
						out[tp] = f
					}
				}
				continue
			}
			for tp, o := range m.eng.Stored() {
				if slices.Contains(held, tp) {
					out[tp] = o
				}
			}
		}
		return out
	}
	// Every partition holding workload records has an owner, as the simulated group's
	// settle asks (simkafka.Group.Settled and an owner per partition): in the middle of a
	// cooperative move (a leave, then the join's assignment) a partition can be nobody's,
	// its stored and committed offsets then in no member's view, and the phase read as
	// settled without it (seen live: three of 20 partitions without a phase-1 commit).
	owned := func() bool {
		for p := range d.records {
			tp := kpart.TopicPartition{Topic: c.topic, Partition: p}
			found := false
			for _, m := range d.active() {
				if slices.Contains(rd(m).assignment, tp) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return extra == nil || extra()
	}
	return c.o.settle(c.ctx, d.lp, d.active, owned, target)
}

// frontiers: a live member's ledger holds only the partitions it owns (revoked ones are
// dropped from it); the members at the phase's end, joined ones included.
func (c *liveCluster) frontiers(active []*member) map[kpart.TopicPartition]int64 {
	out := map[kpart.TopicPartition]int64{}
	for _, m := range active {
		maps.Copy(out, m.ft.frontiers())
	}
	return out
}

// settle runs the loop until the engine is quiescent (and extra holds) and the group's
// committed offsets equal target(), then returns the committed offsets. There is no
// idle timer: the check runs at the auto-commit interval and ends as soon as it holds.
func (o Options) settle(ctx context.Context, lp *loop.Loop, members func() []*member, extra func() bool,
	target func() map[kpart.TopicPartition]int64) (map[kpart.TopicPartition]int64, error) {
	settled, timedOut := false, false
	var unreachable error
	var committed map[kpart.TopicPartition]int64
	check := o.checkEvery()
	var tick func()
	tick = func() {
		if settled || unreachable != nil {
			return
		}
		quiet := true
		for _, m := range members() {
			if unreachable = rd(m).unreachable(o.unreachableAfter(), o.probeTimeout()); unreachable != nil {
				return
			}
			if unreachable = rd(m).orphaned(o.unreachableAfter()); unreachable != nil {
				return
			}
			quiet = quiet && m.eng.Quiescent()
		}
		if quiet && (extra == nil || extra()) {
			all := map[kpart.TopicPartition]int64{}
			var err error
			for _, m := range members() {
				var c map[kpart.TopicPartition]int64
				if c, err = rd(m).committed(o.probeTimeout()); err != nil {
					break
				}
				maps.Copy(all, c)
			}
			if err == nil && storedCommitted(target(), all) {
				settled, committed = true, all
				return
			}
		}
		lp.After(check, tick)
	}
	lp.After(check, tick)
	limit := o.phaseLimit(o.Timeout)
	deadline := lp.After(limit, func() { timedOut = true })
	defer deadline.Stop()
	fatal := func() error {
		for _, m := range members() {
			if rd(m).fatal != nil {
				return rd(m).fatal
			}
		}
		return nil
	}
	if err := lp.Run(ctx, func() bool { return settled || timedOut || unreachable != nil || fatal() != nil }); err != nil {
		return nil, err
	}
	if err := fatal(); err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	if unreachable != nil {
		return nil, unreachable
	}
	if timedOut {
		return nil, fmt.Errorf("%w within %s", ErrPhaseTimeout, limit)
	}
	return committed, nil
}

// phaseLimit bounds a phase when --phase-timeout is 0. Generous: every record handled
// one batch at a time, plus two expiries, plus the cluster's slack (live: --timeout).
func (o Options) phaseLimit(slack time.Duration) time.Duration {
	if o.PhaseTimeout != 0 {
		return o.PhaseTimeout
	}
	perRecord := o.scale(o.HandlerDelay) / time.Duration(o.HandlerParallel)
	if o.handler() == eachbatch.EachMessage {
		// eachMessage hands a partition's records over one at a time: --handler-parallel
		// does not apply (the seed's eachMessage at max.poll 5m ran past a third of the
		// bound and was cut short, INCOMPLETE, while it was still delivering)
		perRecord = o.scale(o.HandlerDelay)
	}
	return time.Duration(o.Workload.Total()+len(o.Workload.Parts))*perRecord + 4*o.scale(o.MaxPollInterval) + slack
}

func storedCommitted(stored, committed map[kpart.TopicPartition]int64) bool {
	for tp, s := range stored {
		if committed[tp] != s {
			return false
		}
	}
	return true
}

// workloadPartitions are the partitions that hold workload records, sorted.
func workloadPartitions(w workload.Spec) []int32 {
	out := make([]int32, len(w.Parts))
	for i, p := range w.Parts {
		out[i] = p.Partition
	}
	return out
}

// phase2Delivered holds once every phase-2 record reached the handler.
func phase2Delivered(times func(kpart.TopicPartition, int64) int, topic string, offs map[int32]int64) func() bool {
	return newPhase2Pending(times, topic, offs).delivered
}

// phase2Pending is phase 2's records not delivered yet. A delivery is not taken back,
// so a record once seen delivered leaves the list: the check after every task costs the
// records still pending, not every partition's (10,000 partitions made it quadratic).
// It is read on the loop's goroutine only.
type phase2Pending struct {
	times   func(kpart.TopicPartition, int64) int
	topic   string
	offs    map[int32]int64
	pending []int32 // partitions, ascending
}

func newPhase2Pending(times func(kpart.TopicPartition, int64) int, topic string, offs map[int32]int64) *phase2Pending {
	p := &phase2Pending{times: times, topic: topic, offs: offs}
	for part := range offs {
		p.pending = append(p.pending, part)
	}
	slices.Sort(p.pending)
	return p
}

// delivered drops the delivered records from the list and reports whether none is left.
func (p *phase2Pending) delivered() bool {
	p.pending = slices.DeleteFunc(p.pending, func(part int32) bool {
		return p.times(kpart.TopicPartition{Topic: p.topic, Partition: part}, p.offs[part]) > 0
	})
	return len(p.pending) == 0
}

// newPhase records the state at a phase end: every partition with a committed offset,
// a delivery or workload records.
func newPhase(n int, elapsed time.Duration, committed map[kpart.TopicPartition]int64, del map[kpart.TopicPartition]*kpart.Counts,
	fr map[kpart.TopicPartition]int64, records map[int32][]int64, highs map[int32]int64) Phase {
	ph := Phase{N: n, Elapsed: elapsed}
	for tp, cm := range committed {
		d := del[tp]
		if cm < 0 && d.Len() == 0 && highs[tp.Partition] == 0 {
			continue
		}
		f, ok := fr[tp]
		if !ok {
			f = -1
		}
		v := judgeCounts(tp.Partition, records[tp.Partition], d, cm, highs[tp.Partition])
		ph.Partitions = append(ph.Partitions, PhasePartition{Partition: tp.Partition, Delivered: d.Len(), Committed: cm, Frontier: f,
			High: highs[tp.Partition], Verdict: v.Verdict, Lost: v.LostCount(), Stranded: v.StrandedCount()})
	}
	sort.Slice(ph.Partitions, func(i, j int) bool { return ph.Partitions[i].Partition < ph.Partitions[j].Partition })
	return ph
}

// event is the phase's trace event.
func (ph Phase) event() traceevent.Event {
	states := make([]traceevent.PartitionState, 0, len(ph.Partitions))
	for _, p := range ph.Partitions {
		states = append(states, traceevent.PartitionState{Partition: p.Partition, Delivered: p.Delivered, Committed: p.Committed,
			High: p.High, Frontier: traceevent.P(p.Frontier), Verdict: string(p.Verdict)})
	}
	return traceevent.Event{Ev: traceevent.PhaseEnd, Phase: ph.N, Partitions: states}
}
