package repro

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"regexp"
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
				bound := o.Timeout
				if res.unreachable {
					bound = min(bound, closeUnreachable)
				}
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

	r := &run{o: o, ctx: ctx, cfg: cfg, topic: topic, group: group, res: res, start: start, lp: loop.NewReal(), kfake: kfake,
		records: map[int32][]int64{}, highs: map[int32]int64{}, delivered: map[kpart.TopicPartition]map[int64]int{}}
	r.emit(traceevent.Event{Ev: traceevent.Run, Schema: traceevent.Schema, Topic: topic, Group: group,
		Policy: string(o.Policy), Commit: string(o.Commit), Settings: res.Settings})

	prod, err := Produce(ctx, cfg, topic, o.Workload, "kstranded-"+runID, o.Timeout)
	if err != nil {
		return nil, err
	}
	res.Produced = prod
	for _, pp := range prod.Partitions {
		r.records[pp.Partition] = append([]int64(nil), pp.Offsets...)
		r.highs[pp.Partition] = pp.High
		r.emit(traceevent.Event{Ev: traceevent.Produce, Topic: topic, Partition: traceevent.P(pp.Partition), N: len(pp.Offsets),
			First: traceevent.P(pp.First()), Last: traceevent.P(pp.Last()), High: traceevent.P(pp.High)})
	}

	if err := r.startConsumer(); err != nil {
		r.stopConsumer()
		return nil, err
	}
	defer r.stopConsumer()
	if o.Group != "" && !res.Embedded {
		// A group named on a cluster others use: someone may join it while the run goes
		// on (issue 27 §4); cmd checked who was there at start.
		if r.shared, err = watchShared(ctx, cfg, group, r.clientID(), o.Timeout, func() int { return int(r.started.Load()) }, func() time.Duration { return time.Since(start) }); err != nil {
			return nil, err
		}
	}
	if o.Progress != nil {
		var tick func()
		tick = func() {
			if r.c != nil {
				o.Progress(Progress{Phase: len(res.Phases) + 1, Status: r.c.eng.Status(), Elapsed: time.Since(start)})
			}
			r.lp.After(200*time.Millisecond, tick)
		}
		r.lp.Post(tick)
	}

	// Phase 1: drain the workload.
	if err := r.phase(1, nil); err != nil {
		return r.finish(err)
	}
	// Phase 2: one more record on every partition that held workload records wakes the
	// consumer; auto-commit then moves past whatever was dropped, on every partition
	// where something was (as in production, where records keep arriving).
	parts := workloadPartitions(o.Workload)
	offs, highs, err := ProduceEach(ctx, cfg, topic, parts, o.Timeout)
	if err != nil {
		return r.finish(err)
	}
	for _, p := range parts {
		r.records[p] = append(r.records[p], offs[p])
		r.highs[p] = highs[p]
		for _, c := range r.cs {
			c.src.expect[kpart.TopicPartition{Topic: topic, Partition: p}] = highs[p]
		}
		r.emit(traceevent.Event{Ev: traceevent.Produce, Phase: 2, Topic: topic, Partition: traceevent.P(p), N: 1,
			First: traceevent.P(offs[p]), Last: traceevent.P(offs[p]), High: traceevent.P(highs[p])})
	}
	if err := r.phase(2, phase2Delivered(r.deliveredTimes, topic, offs)); err != nil {
		return r.finish(err)
	}
	if o.Commit == CommitLedger {
		// Phase 3: restart the consumer in the same group, as an operator would; the
		// ledger's commit never passed a stranded record, so the restart resumes below
		// it. Restart again while records remain stranded, up to MaxRestarts.
		if err := r.restarts(); err != nil {
			return r.finish(err)
		}
	}
	return r.finish(nil)
}

// run is one scenario in progress.
type run struct {
	o         Options
	ctx       context.Context
	cfg       kafkaconf.Config
	topic     string
	group     string
	res       *Result
	start     time.Time
	lp        *loop.Loop
	c         *consumer     // the first member (progress)
	cs        []*consumer   // every member of the current instance, in start order (joined ones last)
	began     time.Duration // on lp's clock, when the first consumer instance started: members' join and leave times count from it
	steps     int           // --rebalance-at steps not yet done
	records   map[int32][]int64
	highs     map[int32]int64
	delivered map[kpart.TopicPartition]map[int64]int // over every consumer instance
	restarted int
	byMember  memberTally  // distinct deliveries per member name, over instances
	kfake     bool         // the broker is kfake (embedded, or `kstranded broker`)
	started   atomic.Int64 // consumers started, over instances (sharedWatch)
	shared    *sharedWatch // a named group on --brokers: who else is in it while the run goes on
}

// clientID is the client.id of the run's consumers: the user's, else one of the run's
// own, which is how sharedWatch tells the run's members from anyone else's.
func (r *run) clientID() string {
	if id := r.cfg.Props["client.id"]; id != "" {
		return id
	}
	return "kstranded-" + r.res.RunID
}

// newSource starts one consumer client of the run in its group.
func (r *run) newSource() (*rdSource, error) {
	props := consumerProps(r.o, r.group, r.kfake)
	if r.cfg.Props["client.id"] == "" {
		props["client.id"] = r.clientID()
	}
	r.started.Add(1)
	return newRDSource(r.cfg, props, r.topic, r.trace, r.now)
}

// consumer is one consumer instance: librdkafka client, model engine, ledger.
type consumer struct {
	src    *rdSource
	eng    *eachbatch.Engine
	ft     *frontierTracker
	joined time.Duration
	left   time.Duration
	gone   bool // left on --rebalance-at
}

func (r *run) now() (time.Time, float64) {
	return time.Now().UTC(), float64(r.lp.Elapsed()) / float64(time.Millisecond)
}

func (r *run) trace(ev traceevent.Event) { r.o.Trace.Write(ev) }

func (r *run) emit(ev traceevent.Event) {
	ev.Time, ev.AtMs = r.now()
	r.trace(ev)
}

// startConsumer starts a consumer instance in the run's group: --members consumers,
// each its own librdkafka client and engine. They subscribe first and are polled in
// turn until every one holds partitions (an eager rebalance waits for every member to
// rejoin, so none may be left unpolled), then their engines start; from then on every
// rebalance goes through the engine's #rebalanceCallback.
func (r *run) startConsumer() error {
	o := r.o
	r.cs = nil
	for i := 0; i < o.members(); i++ {
		src, err := r.newSource()
		if err != nil {
			return err
		}
		if o.grouped() {
			src.member = fmt.Sprintf("m%d", i+1)
			src.emit(traceevent.Event{Ev: traceevent.Member, Reason: "join"})
		}
		r.cs = append(r.cs, &consumer{src: src})
	}
	r.c = r.cs[0]
	if len(r.cs) == 1 {
		if err := r.c.src.waitAssigned(r.ctx, r.cfg.Brokers, o.Timeout); err != nil {
			return err
		}
	} else if err := r.waitAllAssigned(); err != nil {
		return err
	}
	for _, c := range r.cs {
		if err := r.startEngine(c); err != nil {
			return err
		}
	}
	if r.restarted == 0 {
		r.began = r.lp.Elapsed()
		for _, st := range o.rebalanceSteps() {
			r.steps++
			r.lp.After(o.scale(st.At), func() { r.step(st) })
		}
	}
	return nil
}

// waitAllAssigned polls every member until each holds partitions.
func (r *run) waitAllAssigned() error {
	deadline := time.Now().Add(r.o.Timeout)
	for {
		all := true
		for _, c := range r.cs {
			if err := r.ctx.Err(); err != nil {
				return err
			}
			switch e := c.src.c.Poll(20).(type) {
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
				if err := c.src.Seek(tp, int64(e.TopicPartition.Offset), epoch); err != nil {
					return fmt.Errorf("consumer returned a record before its engine started and could not seek back to it: %v: %w", e.TopicPartition, err)
				}
			}
			all = all && len(c.src.assignment) > 0
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no partition assignment for all %d members from brokers %s within --timeout %s", len(r.cs), r.cfg.Brokers, r.o.Timeout)
		}
	}
}

// startEngine starts a member's engine and ledger on its assigned client.
func (r *run) startEngine(c *consumer) error {
	o := r.o
	src := c.src
	for p, h := range r.highs {
		src.expect[kpart.TopicPartition{Topic: r.topic, Partition: p}] = h
	}
	trace := r.trace
	if src.member != "" {
		trace = func(ev traceevent.Event) { ev.Member = src.member; r.trace(ev) }
	}
	eng, err := eachbatch.New(r.lp, src, o.EngineSettings(), trace)
	if err != nil {
		return err
	}
	c.eng = eng
	interval := max(o.scale(o.AutoCommitInterval), time.Millisecond)
	ft := newFrontierTracker(r.lp, o.Commit == CommitLedger, src, interval, trace)
	ft.maxInFlight, ft.maxBytes = o.MaxInFlight, o.MaxInFlightBytes
	start := map[kpart.TopicPartition]int64{}
	if c, err := src.committed(o.Timeout); err == nil {
		for tp, off := range c {
			if off >= 0 {
				start[tp] = off
			}
		}
	}
	ft.assign(src.Assignment(), start)
	ft.attach(eng)
	discarded := eng.OnDiscard
	eng.OnDiscard = func(recs []eachbatch.Record) {
		// The engine reports records dropped from the cache with no rewind at or below
		// them: from here on nothing will fetch them again.
		if r.res.LossAt == 0 {
			r.res.LossAt = time.Since(r.start)
		}
		discarded(recs)
	}
	src.onAssign = func(tps []kpart.TopicPartition) {
		// A partition assigned mid-run (a member joined or left, or librdkafka rejoined
		// after max.poll.interval) starts its ledger at the group's committed offset, as
		// the simulated run's does (simkafka.Client.Committed): librdkafka starts
		// fetching there too (kafkaTPs: OFFSET_INVALID). The read runs inside Poll's
		// rebalance callback, before the partitions are assigned; librdkafka serves it
		// from its main thread (rd_kafka_committed's OffsetFetch), not from this poll.
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
	c.ft = ft
	r.lp.Post(eng.Start)
	return nil
}

// join is a --rebalance-at TIME:join step live: a new member, its own librdkafka client
// in the group (subscribe()), engine and ledger, as an application instance started
// mid-run (connect, subscribe, run). Its engine starts at once, unassigned: its first
// consume call joins the group, and the assignment comes through its
// #rebalanceCallback like every later one. The members already in the group see the
// rebalance through theirs: under the classic protocol (roundrobin, EAGER) every
// partition is revoked (a pending #unassign once their batches in flight finish) and
// dealt again; under the consumer protocol (COOPERATIVE) only the partitions that move.
func (r *run) join() error {
	name := fmt.Sprintf("m%d", len(r.cs)+1)
	src, err := r.newSource()
	if err != nil {
		return err
	}
	src.member = name
	src.emit(traceevent.Event{Ev: traceevent.Member, Reason: "join"})
	c := &consumer{src: src, joined: r.lp.Elapsed() - r.began}
	r.cs = append(r.cs, c)
	return r.startEngine(c)
}

// step runs one --rebalance-at step live. A join starts a member (join). A leave is
// disconnect(): the member's engine stops (batches in flight finish), its ledger commits
// its completed frontier (ledger mode), and its client closes (close() revokes,
// librdkafka commits what was stored, and leaves the group).
func (r *run) step(st RebalanceStep) {
	defer func() { r.steps-- }()
	if st.Join {
		if err := r.join(); err != nil {
			r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("--rebalance-at %s: not done: %v", st, err))
		}
		return
	}
	var c *consumer
	if st.Member > 0 && st.Member <= len(r.cs) {
		c = r.cs[st.Member-1]
	}
	if st.Member == 0 {
		for i := len(r.cs) - 1; i >= 0 && c == nil; i-- {
			if !r.cs[i].gone {
				c = r.cs[i]
			}
		}
	}
	if c == nil || c.gone {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("--rebalance-at %s: not done (no such member in the group)", st))
		return
	}
	c.gone = true
	drain(r.lp, c.eng, r.o.Grace)
	c.eng.FlushTrace()
	c.ft.shutdown()
	if err := c.src.close(r.o.Timeout); err != nil {
		c.src.errs = append(c.src.errs, err)
	}
	c.left = r.lp.Elapsed() - r.began
	c.src.emit(traceevent.Event{Ev: traceevent.Member, Reason: "leave"})
}

// active are the members still in the group.
func (r *run) active() []*consumer {
	var out []*consumer
	for _, c := range r.cs {
		if !c.gone {
			out = append(out, c)
		}
	}
	return out
}

// stopConsumer stops admitting, lets batches in flight finish within the grace period
// while the consumer keeps its assignment, commits only the completed owned frontier
// (ledger mode; librdkafka commits what is stored on close in auto mode), and closes.
func (r *run) stopConsumer() {
	cs := r.cs
	if len(cs) == 0 {
		return
	}
	r.c, r.cs = nil, nil
	grace, closeBound := r.o.Grace, r.o.Timeout
	if r.res.unreachable {
		// Nothing can be committed or read back: no grace for batches in flight, and a
		// close bounded so that the run ends within --timeout of the broker's death.
		grace, closeBound = 0, min(closeBound, closeUnreachable)
	}
	var running []*consumer
	for _, c := range cs {
		if c.eng != nil && !c.gone {
			c.eng.Stop()
			running = append(running, c)
		}
	}
	if len(running) > 0 {
		expired := false
		t := r.lp.After(grace, func() { expired = true })
		_ = r.lp.Run(context.Background(), func() bool {
			for _, c := range running {
				if !c.eng.Stopped() {
					return expired
				}
			}
			return true
		})
		t.Stop()
	}
	for _, c := range cs {
		if c.eng != nil {
			c.eng.FlushTrace()
			for tp, d := range c.eng.Delivered() {
				m := r.delivered[tp]
				if m == nil {
					m = map[int64]int{}
					r.delivered[tp] = m
				}
				for off, n := range d {
					m[off] += n
				}
			}
		}
		if c.gone {
			r.warn(c)
			continue
		}
		if c.eng != nil && !r.res.unreachable {
			c.ft.shutdown()
		}
		if err := c.src.close(closeBound); err != nil {
			c.src.errs = append(c.src.errs, err)
		}
		r.warn(c)
	}
	if r.o.grouped() {
		r.recordMembers(cs)
	}
}

// recordMembers adds an instance's members to the result. A restarted instance (phase
// 3) adds to the same names, counting distinct records, as the simulated run does
// (simRun.recordMembers); a member that joined on --rebalance-at keeps its join time.
func (r *run) recordMembers(cs []*consumer) {
	for i, c := range cs {
		var delivered map[kpart.TopicPartition]map[int64]int
		if c.eng != nil {
			delivered = c.eng.Delivered()
		}
		m := r.byMember.record(r.res, fmt.Sprintf("m%d", i+1), c.joined, delivered)
		if c.left > 0 {
			m.Left = c.left
		}
		m.Lost += c.src.lostCount
	}
}

// warn turns what went wrong inside a consumer instance (client errors the JS client
// would only log, failed stores, seeks, commits, pauses) into warnings of the result, so a
// clean verdict is never printed over them.
func (r *run) warn(c *consumer) {
	var errs []error
	if c.eng != nil {
		errs = append(errs, c.eng.Errors...)
	}
	if c.ft != nil {
		errs = append(errs, c.ft.Errors...)
		errs = append(errs, c.ft.Regressions...)
	}
	errs = append(errs, c.src.errs...)
	seen := map[string]int{}
	var order []string
	for _, e := range errs {
		m := suppressed.ReplaceAllString(e.Error(), "")
		if seen[m] == 0 {
			order = append(order, m)
		}
		seen[m]++
	}
	for _, m := range order {
		if n := seen[m]; n > 1 {
			m = fmt.Sprintf("%s (%d times)", m, n)
		}
		r.res.Warnings = append(r.res.Warnings, m)
	}
}

// suppressed is librdkafka's count of identical errors it did not log again
// (rd_kafka_broker_fail: ", N identical error(s) suppressed"); without it the same
// error dedupes to one warning with its count.
var suppressed = regexp.MustCompile(`, \d+ identical error\(s\) suppressed`)

// drain stops admitting work and runs the loop until every batch in flight has
// finished or the grace period (on the loop's clock) has passed.
func drain(lp *loop.Loop, eng *eachbatch.Engine, grace time.Duration) {
	eng.Stop()
	expired := false
	t := lp.After(grace, func() { expired = true })
	defer t.Stop()
	_ = lp.Run(context.Background(), func() bool { return eng.Stopped() || expired })
}

// allDelivered merges what earlier consumer instances and the current one delivered.
func (r *run) allDelivered() map[kpart.TopicPartition]map[int64]int {
	out := map[kpart.TopicPartition]map[int64]int{}
	add := func(src map[kpart.TopicPartition]map[int64]int) {
		for tp, d := range src {
			m := out[tp]
			if m == nil {
				m = map[int64]int{}
				out[tp] = m
			}
			for off, n := range d {
				m[off] += n
			}
		}
	}
	add(r.delivered)
	for _, c := range r.cs {
		if c.eng != nil {
			add(c.eng.Delivered())
		}
	}
	return out
}

// deliveredTimes is how many times the record at offset of tp reached a handler, over
// every consumer instance: allDelivered's count of one record, without copying them all.
func (r *run) deliveredTimes(tp kpart.TopicPartition, offset int64) int {
	n := r.delivered[tp][offset]
	for _, c := range r.cs {
		if c.eng != nil {
			n += c.eng.DeliveredTimes(tp, offset)
		}
	}
	return n
}

// consumerRun is what phase 3's restart loop needs of a run, live or simulated.
type consumerRun interface {
	stopConsumer()
	startConsumer() error
	phase(n int, extra func() bool) error
	pending() int
}

// restartUntilDelivered is --commit ledger's phase 3: restart the consumer in the same
// group until the ledger holds no pending record or max restarts were made.
func restartUntilDelivered(c consumerRun, restarted *int, max int, res *Result) error {
	for {
		c.stopConsumer()
		*restarted++
		if err := c.startConsumer(); err != nil {
			return err
		}
		if err := c.phase(3, nil); err != nil {
			return err
		}
		if c.pending() == 0 || *restarted >= max {
			if n := c.pending(); n > 0 {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%d records still stranded after %d restarts (--max-restarts)", n, *restarted))
			}
			res.Restarts = *restarted
			return nil
		}
		// Quiescent with records still pending: the bug stranded them again. The
		// restart phase is recorded once, with its final state.
		res.Phases = res.Phases[:len(res.Phases)-1]
	}
}

func (r *run) restarts() error { return restartUntilDelivered(r, &r.restarted, r.o.MaxRestarts, r.res) }

func (r *run) finish(runErr error) (*Result, error) {
	if errors.Is(runErr, ErrUnreachable) {
		r.res.unreachable = true
	}
	if r.ctx.Err() != nil && !r.res.unreachable {
		// Interrupted while the broker was not answering: the read-back below, the close
		// and the topic's deletion are bounded as after an unreachable broker, else each
		// waits --timeout (issue 27 §5).
		for _, c := range r.active() {
			if c.src.silent(min(r.o.probeTimeout(), closeUnreachable)) {
				r.res.unreachable = true
				break
			}
		}
	}
	var current map[kpart.TopicPartition]int64
	if !r.res.unreachable {
		// Interrupted or failed mid-phase: what is committed now, if it can be read.
		for _, c := range r.active() {
			if got, err := c.src.committed(min(r.o.Timeout, 5*time.Second)); err == nil {
				if current == nil {
					current = map[kpart.TopicPartition]int64{}
				}
				maps.Copy(current, got)
			}
		}
	}
	r.stopConsumer()
	if who, at := r.shared.stop(); who != "" {
		msg := fmt.Sprintf("group %s had another member during the run: %s was in it at %s; it took part of the group's partitions and its joins and leaves rebalanced the run's consumers, so what this run counts is only its share, not the scenario's outcome (a group of the run's own gives that)",
			r.group, who, at.Round(time.Millisecond))
		if r.o.AllowSharedGroup {
			r.res.Warnings = append(r.res.Warnings, "--allow-shared-group: "+msg)
		} else if runErr == nil {
			runErr = fmt.Errorf("%w: %s", ErrSharedGroup, msg)
			r.res.EveryPhase = true
		}
	}
	r.res.Elapsed = time.Since(r.start)
	r.res.judge(r.allDelivered(), r.records, r.highs, current)
	if runErr != nil && (errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)) && r.ctx.Err() != nil {
		r.res.Interrupted = true
		r.emit(traceevent.Event{Ev: traceevent.Interrupt})
	}
	r.res.Complete = runErr == nil
	if runErr != nil {
		r.res.Error = runErr.Error()
		r.res.incomplete()
	}
	r.emit(traceevent.Event{Ev: traceevent.Verdict, Partitions: r.res.partitionStates(), Reason: string(r.res.Verdict)})
	return r.res, runErr
}

// phase runs the loop until the engine is quiescent and the group's committed offsets
// equal what the commit mode commits (the stored offsets with auto-commit, the ledger's
// frontier with --commit ledger), then records the phase.
func (r *run) phase(n int, extra func() bool) error {
	target := func() map[kpart.TopicPartition]int64 {
		out := map[kpart.TopicPartition]int64{}
		for _, c := range r.active() {
			if r.o.Commit == CommitLedger {
				for tp, f := range c.ft.frontiers() {
					if f > 0 && slices.Contains(c.src.assignment, tp) {
						out[tp] = f
					}
				}
				continue
			}
			for tp, o := range c.eng.Stored() {
				if slices.Contains(c.src.assignment, tp) {
					out[tp] = o
				}
			}
		}
		return out
	}
	if r.steps > 0 {
		// --rebalance-at steps still to come: the phase covers them.
		inner := extra
		extra = func() bool { return r.steps == 0 && (inner == nil || inner()) }
	}
	committed, err := r.o.settle(r.ctx, r.lp, r.active, extra, target)
	if err != nil {
		if errors.Is(err, ErrPhaseTimeout) {
			return fmt.Errorf("phase %d: %w", n, err)
		}
		return err
	}
	frontiers := map[kpart.TopicPartition]int64{}
	// The members at the phase's end, joined ones included: a member's ledger holds
	// only the partitions it owns (revoked ones are dropped from it).
	for _, c := range r.active() {
		maps.Copy(frontiers, c.ft.frontiers())
	}
	ph := newPhase(n, time.Since(r.start), committed, r.allDelivered(), frontiers, r.records, r.highs)
	r.res.Phases = append(r.res.Phases, ph)
	r.emit(ph.event())
	return nil
}

func (r *run) pending() int {
	n := 0
	for _, c := range r.active() {
		n += c.ft.pending()
	}
	return n
}

// settle runs the loop until the engine is quiescent (and extra holds) and the group's
// committed offsets equal target(), then returns the committed offsets. There is no
// idle timer: the check runs at the auto-commit interval and ends as soon as it holds.
func (o Options) settle(ctx context.Context, lp *loop.Loop, members func() []*consumer, extra func() bool,
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
			if unreachable = m.src.unreachable(o.unreachableAfter(), o.probeTimeout()); unreachable != nil {
				return
			}
			if unreachable = m.src.orphaned(o.unreachableAfter()); unreachable != nil {
				return
			}
			quiet = quiet && m.eng.Quiescent()
		}
		if quiet && (extra == nil || extra()) {
			all := map[kpart.TopicPartition]int64{}
			var err error
			for _, m := range members() {
				var c map[kpart.TopicPartition]int64
				if c, err = m.src.committed(o.probeTimeout()); err != nil {
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
	limit := o.PhaseTimeout
	if limit == 0 {
		// Generous: every record handled one batch at a time, plus two expiries.
		perRecord := o.scale(o.HandlerDelay) / time.Duration(o.HandlerParallel)
		limit = time.Duration(o.Workload.Total()+len(o.Workload.Parts))*perRecord + 4*o.scale(o.MaxPollInterval) + o.Timeout
	}
	deadline := lp.After(limit, func() { timedOut = true })
	defer deadline.Stop()
	fatal := func() error {
		for _, m := range members() {
			if m.src.fatal != nil {
				return m.src.fatal
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
	return func() bool {
		for p, off := range offs {
			if times(kpart.TopicPartition{Topic: topic, Partition: p}, off) == 0 {
				return false
			}
		}
		return true
	}
}

// newPhase records the state at a phase end: every partition with a committed offset,
// a delivery or workload records.
func newPhase(n int, elapsed time.Duration, committed map[kpart.TopicPartition]int64, del map[kpart.TopicPartition]map[int64]int,
	fr map[kpart.TopicPartition]int64, records map[int32][]int64, highs map[int32]int64) Phase {
	ph := Phase{N: n, Elapsed: elapsed}
	for tp, cm := range committed {
		d := del[tp]
		if cm < 0 && len(d) == 0 && highs[tp.Partition] == 0 {
			continue
		}
		f, ok := fr[tp]
		if !ok {
			f = -1
		}
		v := Judge(tp.Partition, records[tp.Partition], d, cm, highs[tp.Partition])
		ph.Partitions = append(ph.Partitions, PhasePartition{Partition: tp.Partition, Delivered: len(d), Committed: cm, Frontier: f,
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
