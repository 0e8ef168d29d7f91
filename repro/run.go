package repro

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

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
		r.c.src.expect[kpart.TopicPartition{Topic: topic, Partition: p}] = highs[p]
		r.emit(traceevent.Event{Ev: traceevent.Produce, Phase: 2, Topic: topic, Partition: traceevent.P(p), N: 1,
			First: traceevent.P(offs[p]), Last: traceevent.P(offs[p]), High: traceevent.P(highs[p])})
	}
	eng := r.c.eng
	if err := r.phase(2, phase2Delivered(eng.Delivered, topic, offs)); err != nil {
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
	c         *consumer
	records   map[int32][]int64
	highs     map[int32]int64
	delivered map[kpart.TopicPartition]map[int64]int // over every consumer instance
	restarted int
	kfake     bool // the broker is kfake (embedded, or `kstranded broker`)
}

// consumer is one consumer instance: librdkafka client, model engine, ledger.
type consumer struct {
	src *rdSource
	eng *eachbatch.Engine
	ft  *frontierTracker
}

func (r *run) now() (time.Time, float64) {
	return time.Now().UTC(), float64(r.lp.Elapsed()) / float64(time.Millisecond)
}

func (r *run) trace(ev traceevent.Event) { r.o.Trace.Write(ev) }

func (r *run) emit(ev traceevent.Event) {
	ev.Time, ev.AtMs = r.now()
	r.trace(ev)
}

// startConsumer starts a consumer instance in the run's group.
func (r *run) startConsumer() error {
	o := r.o
	src, err := newRDSource(r.cfg, consumerProps(o, r.group, r.kfake), r.topic, r.trace, r.now)
	if err != nil {
		return err
	}
	r.c = &consumer{src: src}
	if err := src.waitAssigned(r.ctx, r.cfg.Brokers, o.Timeout); err != nil {
		return err
	}
	for p, h := range r.highs {
		src.expect[kpart.TopicPartition{Topic: r.topic, Partition: p}] = h
	}
	s := o.EngineSettings()
	eng, err := eachbatch.New(r.lp, src, s, r.trace)
	if err != nil {
		return err
	}
	r.c.eng = eng
	interval := max(o.scale(o.AutoCommitInterval), time.Millisecond)
	ft := newFrontierTracker(r.lp, o.Commit == CommitLedger, src, interval, r.trace)
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
	src.onAssign = func(tps []kpart.TopicPartition) { ft.assign(tps, nil) }
	src.onRevoke = ft.revoked
	r.c.ft = ft
	r.lp.Post(eng.Start)
	return nil
}

// stopConsumer stops admitting, lets batches in flight finish within the grace period
// while the consumer keeps its assignment, commits only the completed owned frontier
// (ledger mode; librdkafka commits what is stored on close in auto mode), and closes.
func (r *run) stopConsumer() {
	c := r.c
	if c == nil {
		return
	}
	r.c = nil
	grace, closeBound := r.o.Grace, r.o.Timeout
	if r.res.unreachable {
		// Nothing can be committed or read back: no grace for batches in flight, and a
		// close bounded so that the run ends within --timeout of the broker's death.
		grace, closeBound = 0, min(closeBound, closeUnreachable)
	}
	if c.eng != nil {
		drain(r.lp, c.eng, grace)
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
		if !r.res.unreachable {
			c.ft.shutdown()
		}
	}
	if err := c.src.close(closeBound); err != nil {
		c.src.errs = append(c.src.errs, err)
	}
	r.warn(c)
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
	if r.c != nil && r.c.eng != nil {
		add(r.c.eng.Delivered())
	}
	return out
}

func (r *run) restarts() error {
	for {
		r.stopConsumer()
		r.restarted++
		if err := r.startConsumer(); err != nil {
			return err
		}
		if err := r.phase(3, nil); err != nil {
			return err
		}
		if r.c.ft.pending() == 0 || r.restarted >= r.o.MaxRestarts {
			if n := r.c.ft.pending(); n > 0 {
				r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("%d records still stranded after %d restarts (--max-restarts)", n, r.restarted))
			}
			r.res.Restarts = r.restarted
			return nil
		}
		// Quiescent with records still pending: the bug stranded them again. The
		// restart phase is recorded once, with its final state.
		r.res.Phases = r.res.Phases[:len(r.res.Phases)-1]
	}
}

func (r *run) finish(runErr error) (*Result, error) {
	if errors.Is(runErr, ErrUnreachable) {
		r.res.unreachable = true
	}
	var current map[kpart.TopicPartition]int64
	if r.c != nil && r.c.src != nil && !r.res.unreachable {
		// Interrupted or failed mid-phase: what is committed now, if it can be read.
		current, _ = r.c.src.committed(min(r.o.Timeout, 5*time.Second))
	}
	r.stopConsumer()
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
	c := r.c
	target := c.eng.Stored
	if r.o.Commit == CommitLedger {
		target = func() map[kpart.TopicPartition]int64 {
			out := map[kpart.TopicPartition]int64{}
			for tp, f := range c.ft.frontiers() {
				if f > 0 {
					out[tp] = f
				}
			}
			return out
		}
	}
	committed, err := r.o.settle(r.ctx, r.lp, c.eng, c.src, extra, target)
	if err != nil {
		if errors.Is(err, ErrPhaseTimeout) {
			return fmt.Errorf("phase %d: %w", n, err)
		}
		return err
	}
	ph := newPhase(n, time.Since(r.start), committed, r.allDelivered(), c.ft.frontiers(), r.records, r.highs)
	r.res.Phases = append(r.res.Phases, ph)
	r.emit(ph.event())
	return nil
}

// settle runs the loop until the engine is quiescent (and extra holds) and the group's
// committed offsets equal target(), then returns the committed offsets. There is no
// idle timer: the check runs at the auto-commit interval and ends as soon as it holds.
func (o Options) settle(ctx context.Context, lp *loop.Loop, eng *eachbatch.Engine, src *rdSource, extra func() bool,
	target func() map[kpart.TopicPartition]int64) (map[kpart.TopicPartition]int64, error) {
	settled, timedOut := false, false
	var unreachable error
	var committed map[kpart.TopicPartition]int64
	check := max(o.scale(o.AutoCommitInterval), 10*time.Millisecond)
	var tick func()
	tick = func() {
		if settled || unreachable != nil {
			return
		}
		if unreachable = src.unreachable(o.unreachableAfter(), o.probeTimeout()); unreachable != nil {
			return
		}
		if unreachable = src.orphaned(o.unreachableAfter()); unreachable != nil {
			return
		}
		if eng.Quiescent() && (extra == nil || extra()) {
			c, err := src.committed(o.probeTimeout())
			if err == nil && storedCommitted(target(), c) {
				settled, committed = true, c
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
	if err := lp.Run(ctx, func() bool { return settled || timedOut || unreachable != nil || src.fatal != nil }); err != nil {
		return nil, err
	}
	if src.fatal != nil {
		return nil, fmt.Errorf("consumer: %w", src.fatal)
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
func phase2Delivered(delivered func() map[kpart.TopicPartition]map[int64]int, topic string, offs map[int32]int64) func() bool {
	return func() bool {
		del := delivered()
		for p, off := range offs {
			if del[kpart.TopicPartition{Topic: topic, Partition: p}][off] == 0 {
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
		v := Judge(tp.Partition, records[tp.Partition], d, cm)
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
