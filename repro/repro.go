// Package repro runs kstranded's reproduction of the eachBatch cache-expiration loss:
// the seed's workload (200 records in one transaction on one partition of a 20-partition
// topic), the modeled eachBatch consumer (package eachbatch) over a real librdkafka
// consumer (confluent-kafka-go) against the embedded broker or the user's cluster, two
// phases (drain, then one more record), and a verdict per partition from the
// producer's own delivery reports.
//
// It returns results; printing them is the caller's business.
package repro

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/traceevent"
)

// CommitMode says who decides the committed offset.
type CommitMode string

// Commit modes.
const (
	// CommitAuto is the client's own behaviour: librdkafka auto-commits stored offsets.
	CommitAuto CommitMode = "auto"
)

// Options configure a run. Durations are the seed's (unscaled); TimeScale scales them.
type Options struct {
	Kafka      kafkaconf.Config // Brokers empty: the embedded broker
	Topic      string
	Partitions int32
	Partition  int32
	Records    int
	Group      string // empty: generated per run
	// GroupProtocol is --group-protocol: classic or consumer (KIP-848); empty: what
	// group.protocol in Kafka.Props says, else classic.
	GroupProtocol string

	Policy eachbatch.Policy
	Commit CommitMode

	TimeScale            float64
	Concurrency          int
	BatchSize            int
	HandlerDelay         time.Duration
	HandlerParallel      int
	MaxPollInterval      time.Duration
	SessionTimeout       time.Duration
	HeartbeatInterval    time.Duration
	FetchWaitMax         time.Duration
	FetchWaitMaxSet      bool
	AutoCommitInterval   time.Duration
	MaxBytes             int
	MaxBytesPerPartition int
	AutoCommit           bool
	ReadCommitted        bool
	FromBeginning        bool

	MaxInFlight      int           // ledger back-pressure: unfinished records per partition before it is paused (0: no bound)
	MaxInFlightBytes int           // same in bytes (0: no bound)
	Grace            time.Duration // on shutdown, how long batches in flight may finish
	MaxRestarts      int           // --commit ledger: restarts while records stay stranded

	Keep         bool
	Timeout      time.Duration // bound on each broker operation
	PhaseTimeout time.Duration // bound on each phase reaching quiescence (0: derived)

	Trace    *traceevent.Writer
	Progress func(Progress)
}

// DefaultOptions are the seed's settings at the default time scale.
func DefaultOptions() Options {
	s := eachbatch.DefaultSettings()
	return Options{
		Topic: "stranded", Partitions: 20, Partition: 0, Records: 200,
		Policy: eachbatch.V1_10_0, Commit: CommitAuto, TimeScale: 0.01,
		Concurrency: s.Concurrency, BatchSize: s.BatchSize,
		HandlerDelay: s.HandlerDelay, HandlerParallel: s.HandlerParallel,
		MaxPollInterval: s.MaxPollInterval, SessionTimeout: 6 * time.Second, HeartbeatInterval: 1500 * time.Millisecond,
		FetchWaitMax: 5 * time.Second, AutoCommitInterval: 5 * time.Second,
		MaxBytes: 8192, MaxBytesPerPartition: 8192,
		AutoCommit: true, ReadCommitted: true, FromBeginning: true,
		Timeout: 30 * time.Second, Grace: 10 * time.Second, MaxRestarts: 5,
	}
}

func (o Options) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * o.TimeScale)
}

// EngineSettings are the model's settings at the run's time scale.
func (o Options) EngineSettings() eachbatch.Settings {
	s := eachbatch.DefaultSettings()
	s.Policy = o.Policy
	s.Concurrency = o.Concurrency
	s.BatchSize = o.BatchSize
	s.MaxPollInterval = o.scale(o.MaxPollInterval)
	s.HandlerDelay = o.scale(o.HandlerDelay)
	s.HandlerParallel = o.HandlerParallel
	s.CacheSizePerWorker = o.scale(s.CacheSizePerWorker)
	s.FetchValve = o.scale(s.FetchValve)
	// The expiry loop's 100 ms floor, scaled, but never below 1 ms: on the wall clock a
	// shorter sleep only burns CPU.
	s.MinWake = max(o.scale(s.MinWake), time.Millisecond)
	// #seekInternal commits the offset it seeks to only when enable.auto.commit is on.
	s.CommitOnSeek = o.Commit == CommitAuto && o.AutoCommit
	return s
}

// Validate checks the options; errors name the flag.
func (o Options) Validate() error {
	switch {
	case o.Records <= 0:
		return errors.New("--records must be > 0")
	case o.Partitions <= 0:
		return errors.New("--partitions must be > 0")
	case o.Partition < 0 || o.Partition >= o.Partitions:
		return fmt.Errorf("--partition must be in 0..%d", o.Partitions-1)
	case o.TimeScale <= 0 || o.TimeScale > 10:
		return errors.New("--time-scale must be > 0 and <= 10")
	case o.Concurrency <= 0:
		return errors.New("--concurrency must be > 0")
	case o.BatchSize == 0 || o.BatchSize < -1:
		return errors.New("--batch-size must be > 0 (or -1 for unbounded)")
	case o.HandlerDelay < 0:
		return errors.New("--handler-delay must be >= 0")
	case o.HandlerParallel <= 0:
		return errors.New("--handler-parallel must be > 0")
	case o.MaxPollInterval <= 0:
		return errors.New("--max-poll-interval must be > 0")
	case o.groupProtocol() == kafkaconf.GroupProtocolClassic && (o.SessionTimeout <= 0 || o.HeartbeatInterval <= 0 || o.HeartbeatInterval >= o.SessionTimeout):
		return errors.New("--session-timeout and --heartbeat-interval must be > 0, heartbeat below session")
	case o.AutoCommitInterval <= 0:
		return errors.New("--auto-commit-interval must be > 0")
	case o.FetchWaitMax < 0:
		return errors.New("--fetch-wait-max must be >= 0")
	case o.MaxBytes <= 0 || o.MaxBytesPerPartition <= 0:
		return errors.New("--max-bytes and --max-bytes-per-partition must be > 0")
	case o.Timeout <= 0:
		return errors.New("--timeout must be > 0")
	case o.Commit != CommitAuto && o.Commit != CommitLedger:
		return fmt.Errorf("--commit %q: want auto, ledger or all", o.Commit)
	case o.Commit == CommitAuto && !o.AutoCommit:
		return errors.New("--auto-commit=false: with --commit auto the client's auto-commit is what this scenario reproduces; use --commit ledger for manual commits")
	case o.MaxInFlight < 0 || o.MaxInFlightBytes < 0:
		return errors.New("--max-in-flight and --max-in-flight-bytes must be >= 0")
	case o.Grace < 0:
		return errors.New("--grace must be >= 0")
	case o.MaxRestarts < 1:
		return errors.New("--max-restarts must be >= 1")
	}
	if _, err := eachbatch.ParsePolicy(string(o.Policy)); err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if _, err := o.Kafka.GroupProtocol(o.GroupProtocol); err != nil {
		return err
	}
	return nil
}

// groupProtocol is the consumer's group protocol (classic when the options disagree;
// Validate reports that).
func (o Options) groupProtocol() string {
	p, err := o.Kafka.GroupProtocol(o.GroupProtocol)
	if err != nil {
		return kafkaconf.GroupProtocolClassic
	}
	return p
}

// Progress is a live status for terminals.
type Progress struct {
	Phase int
	eachbatch.Status
	Elapsed time.Duration
}

// Phase is the state at the end of a phase.
type Phase struct {
	N          int
	Elapsed    time.Duration
	Partitions []PhasePartition
}

// PhasePartition is one partition at a phase end.
type PhasePartition struct {
	Partition int32
	Delivered int
	Committed int64
	Frontier  int64 // the ledger's safe commit (-1: unknown)
	High      int64
	Verdict   verdict.Verdict // judged on what was produced and delivered by then
	Lost      int
	Stranded  int
}

// PartitionResult is the verdict of one partition.
type PartitionResult struct {
	Partition        int32
	Produced         int
	High             int64
	CommittedByPhase []int64
	FrontierByPhase  []int64           // the ledger's safe commit at each phase end
	VerdictByPhase   []verdict.Verdict // the verdict at each phase end
	PartitionVerdict
}

// Result is a run's outcome.
type Result struct {
	RunID       string
	Topic       string
	Group       string
	Brokers     string
	Embedded    bool
	Policy      eachbatch.Policy
	Commit      CommitMode
	Settings    map[string]string
	Produced    ProduceResult
	Phases      []Phase
	Partitions  []PartitionResult
	Verdict     verdict.Verdict
	LossAt      time.Duration // when records were dropped from the cache without a rewind (0: never)
	Restarts    int           // consumer restarts in phase 3 (--commit ledger)
	Elapsed     time.Duration
	Interrupted bool
	Warnings    []string
}

// Lost is the number of records lost over all partitions.
func (r *Result) Lost() int {
	n := 0
	for _, p := range r.Partitions {
		n += p.LostCount()
	}
	return n
}

// ErrPhaseTimeout is returned when a phase never becomes quiescent.
var ErrPhaseTimeout = errors.New("the consumer did not become quiescent")

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
	res := &Result{RunID: runID, Policy: o.Policy, Commit: o.Commit, Settings: o.settingsMap()}
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
				dctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
				defer cancel()
				if err := DeleteTopic(dctx, cfg, topic, o.Timeout); err != nil {
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

	prod, err := Produce(ctx, cfg, topic, o.Partition, o.Records, "kstranded-"+runID, o.Timeout)
	if err != nil {
		return nil, err
	}
	res.Produced = prod
	r.records[o.Partition] = append([]int64(nil), prod.Offsets...)
	r.highs[o.Partition] = prod.High
	r.emit(traceevent.Event{Ev: traceevent.Produce, Topic: topic, Partition: traceevent.P(o.Partition), N: len(prod.Offsets),
		First: traceevent.P(prod.First()), Last: traceevent.P(prod.Last()), High: traceevent.P(prod.High)})

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
	// Phase 2: one more record wakes the consumer; auto-commit then moves past whatever
	// was dropped.
	off, high, err := ProduceOne(ctx, cfg, topic, o.Partition, o.Timeout)
	if err != nil {
		return r.finish(err)
	}
	r.records[o.Partition] = append(r.records[o.Partition], off)
	r.highs[o.Partition] = high
	tp := kpart.TopicPartition{Topic: topic, Partition: o.Partition}
	r.c.src.expect[tp] = high
	r.emit(traceevent.Event{Ev: traceevent.Produce, Phase: 2, Topic: topic, Partition: traceevent.P(o.Partition), N: 1,
		First: traceevent.P(off), Last: traceevent.P(off), High: traceevent.P(high)})
	eng := r.c.eng
	if err := r.phase(2, func() bool { return eng.Delivered()[tp][off] > 0 }); err != nil {
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
	if c.eng != nil {
		drain(r.lp, c.eng, r.o.Grace)
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
		c.ft.shutdown()
	}
	if err := c.src.close(r.o.Timeout); err != nil {
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
		m := e.Error()
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
	var current map[kpart.TopicPartition]int64
	if r.c != nil && r.c.src != nil {
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
	ph := Phase{N: n, Elapsed: time.Since(r.start)}
	del := r.allDelivered()
	fr := c.ft.frontiers()
	for tp, cm := range committed {
		d := del[tp]
		if cm < 0 && len(d) == 0 && r.highs[tp.Partition] == 0 {
			continue
		}
		f, ok := fr[tp]
		if !ok {
			f = -1
		}
		v := Judge(tp.Partition, r.records[tp.Partition], d, cm)
		ph.Partitions = append(ph.Partitions, PhasePartition{Partition: tp.Partition, Delivered: len(d), Committed: cm, Frontier: f,
			High: r.highs[tp.Partition], Verdict: v.Verdict, Lost: v.LostCount(), Stranded: v.StrandedCount()})
	}
	sort.Slice(ph.Partitions, func(i, j int) bool { return ph.Partitions[i].Partition < ph.Partitions[j].Partition })
	r.res.Phases = append(r.res.Phases, ph)
	states := make([]traceevent.PartitionState, 0, len(ph.Partitions))
	for _, p := range ph.Partitions {
		states = append(states, traceevent.PartitionState{Partition: p.Partition, Delivered: p.Delivered, Committed: p.Committed,
			High: p.High, Frontier: traceevent.P(p.Frontier), Verdict: string(p.Verdict)})
	}
	r.emit(traceevent.Event{Ev: traceevent.PhaseEnd, Phase: n, Partitions: states})
	return nil
}

// settle runs the loop until the engine is quiescent (and extra holds) and the group's
// committed offsets equal target(), then returns the committed offsets. There is no
// idle timer: the check runs at the auto-commit interval and ends as soon as it holds.
func (o Options) settle(ctx context.Context, lp *loop.Loop, eng *eachbatch.Engine, src *rdSource, extra func() bool,
	target func() map[kpart.TopicPartition]int64) (map[kpart.TopicPartition]int64, error) {
	settled, timedOut := false, false
	var committed map[kpart.TopicPartition]int64
	check := max(o.scale(o.AutoCommitInterval), 10*time.Millisecond)
	var tick func()
	tick = func() {
		if settled {
			return
		}
		if eng.Quiescent() && (extra == nil || extra()) {
			c, err := src.committed(o.Timeout)
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
		limit = time.Duration(o.Records+1)*perRecord + 4*o.scale(o.MaxPollInterval) + o.Timeout
	}
	deadline := lp.After(limit, func() { timedOut = true })
	defer deadline.Stop()
	if err := lp.Run(ctx, func() bool { return settled || timedOut || src.fatal != nil }); err != nil {
		return nil, err
	}
	if src.fatal != nil {
		return nil, fmt.Errorf("consumer: %w", src.fatal)
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

func (r *Result) judge(delivered map[kpart.TopicPartition]map[int64]int, records map[int32][]int64, highs map[int32]int64, current map[kpart.TopicPartition]int64) {
	parts := map[int32]bool{}
	for p := range records {
		parts[p] = true
	}
	byPart := map[int32]map[int64]int{}
	for tp, d := range delivered {
		parts[tp.Partition] = true
		byPart[tp.Partition] = d
	}
	ids := make([]int32, 0, len(parts))
	for p := range parts {
		ids = append(ids, p)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	r.Partitions = nil
	worst := verdict.OK
	for _, p := range ids {
		committed := int64(-1)
		var byPhase, frontiers []int64
		var verdicts []verdict.Verdict
		for _, ph := range r.Phases {
			for _, pp := range ph.Partitions {
				if pp.Partition == p {
					byPhase = append(byPhase, pp.Committed)
					frontiers = append(frontiers, pp.Frontier)
					verdicts = append(verdicts, pp.Verdict)
					committed = pp.Committed
				}
			}
		}
		if v, ok := current[kpart.TopicPartition{Topic: r.Topic, Partition: p}]; ok && len(r.Phases) < 2 {
			committed = v
		}
		v := Judge(p, records[p], byPart[p], committed)
		r.Partitions = append(r.Partitions, PartitionResult{Partition: p, Produced: len(records[p]), High: highs[p],
			CommittedByPhase: byPhase, FrontierByPhase: frontiers, VerdictByPhase: verdicts, PartitionVerdict: v})
		switch {
		case v.Verdict == verdict.Lost:
			worst = verdict.Lost
		case v.Verdict == verdict.Stranded && worst == verdict.OK:
			worst = verdict.Stranded
		}
	}
	r.Verdict = worst
}

func (r *Result) partitionStates() []traceevent.PartitionState {
	out := make([]traceevent.PartitionState, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		st := traceevent.PartitionState{Partition: p.Partition, Delivered: p.Delivered, Duplicates: p.Duplicates,
			High: p.High, Lost: p.Lost, Stranded: p.Stranded, Verdict: string(p.Verdict), Committed: -1}
		if n := len(p.CommittedByPhase); n > 0 {
			st.Committed = p.CommittedByPhase[n-1]
		}
		out = append(out, st)
	}
	return out
}

func (o Options) settingsMap() map[string]string {
	m := map[string]string{
		"time_scale":              fmt.Sprint(o.TimeScale),
		"records":                 fmt.Sprint(o.Records),
		"partition":               fmt.Sprint(o.Partition),
		"partitions":              fmt.Sprint(o.Partitions),
		"concurrency":             fmt.Sprint(o.Concurrency),
		"batch_size":              fmt.Sprint(o.BatchSize),
		"handler_delay":           o.HandlerDelay.String(),
		"handler_parallel":        fmt.Sprint(o.HandlerParallel),
		"max_poll_interval":       o.MaxPollInterval.String(),
		"group_protocol":          o.groupProtocol(),
		"session_timeout":         o.SessionTimeout.String(),
		"heartbeat_interval":      o.HeartbeatInterval.String(),
		"fetch_wait_max":          o.FetchWaitMax.String(),
		"auto_commit":             fmt.Sprint(o.AutoCommit),
		"auto_commit_interval":    o.AutoCommitInterval.String(),
		"max_bytes":               fmt.Sprint(o.MaxBytes),
		"max_bytes_per_partition": fmt.Sprint(o.MaxBytesPerPartition),
		"read_committed":          fmt.Sprint(o.ReadCommitted),
		"from_beginning":          fmt.Sprint(o.FromBeginning),
	}
	if o.groupProtocol() == kafkaconf.GroupProtocolConsumer {
		// Not sent: the broker's group.consumer.* settings apply.
		delete(m, "session_timeout")
		delete(m, "heartbeat_interval")
	}
	return m
}
