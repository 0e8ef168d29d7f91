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
	"github.com/kstranded/kstranded/internal/loop"
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
		Timeout: 30 * time.Second,
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
	case o.SessionTimeout <= 0 || o.HeartbeatInterval <= 0 || o.HeartbeatInterval >= o.SessionTimeout:
		return errors.New("--session-timeout and --heartbeat-interval must be > 0, heartbeat below session")
	case o.AutoCommitInterval <= 0:
		return errors.New("--auto-commit-interval must be > 0")
	case o.FetchWaitMax < 0:
		return errors.New("--fetch-wait-max must be >= 0")
	case o.MaxBytes <= 0 || o.MaxBytesPerPartition <= 0:
		return errors.New("--max-bytes and --max-bytes-per-partition must be > 0")
	case o.Timeout <= 0:
		return errors.New("--timeout must be > 0")
	case o.Commit != CommitAuto:
		return fmt.Errorf("--commit %q: want auto", o.Commit)
	case !o.AutoCommit:
		return errors.New("--auto-commit=false: the client's auto-commit is what this scenario reproduces; see --commit")
	}
	if _, err := eachbatch.ParsePolicy(string(o.Policy)); err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	return nil
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
	High      int64
}

// PartitionResult is the verdict of one partition.
type PartitionResult struct {
	Partition        int32
	Produced         int
	High             int64
	CommittedByPhase []int64
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
	Verdict     string
	LossAt      time.Duration // when records were dropped from the cache without a rewind (0: never)
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
	if cfg.Brokers == "" {
		b, err := embedded.Start(embedded.Options{Topic: topic, Partitions: o.Partitions})
		if err != nil {
			return nil, err
		}
		defer b.Close()
		cfg = cfg.WithBrokers(b.Addr())
		res.Embedded = true
	} else {
		// A user's cluster: a topic of our own per run, deleted afterwards unless --keep.
		topic = fmt.Sprintf("%s-%s", o.Topic, runID)
		if err := EnsureTopic(ctx, cfg, topic, o.Partitions, o.Timeout); err != nil {
			return nil, err
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
		group = fmt.Sprintf("kstranded-%s-%s", o.Policy, runID)
	}
	res.Topic, res.Group, res.Brokers = topic, group, cfg.Brokers

	lp := loop.NewReal()
	now := func() (time.Time, float64) {
		return time.Now().UTC(), float64(lp.Elapsed()) / float64(time.Millisecond)
	}
	trace := func(ev traceevent.Event) {
		if ev.Ev == traceevent.Clear && res.LossAt == 0 && len(ev.Discarded) > 0 && len(ev.Rewinds) == 0 {
			res.LossAt = time.Since(start)
		}
		o.Trace.Write(ev)
	}
	emit := func(ev traceevent.Event) {
		ev.Time, ev.AtMs = now()
		trace(ev)
	}
	emit(traceevent.Event{Ev: traceevent.Run, Schema: traceevent.Schema, Topic: topic, Group: group,
		Policy: string(o.Policy), Commit: string(o.Commit), Settings: res.Settings})

	prod, err := Produce(ctx, cfg, topic, o.Partition, o.Records, "kstranded-"+runID, o.Timeout)
	if err != nil {
		return nil, err
	}
	res.Produced = prod
	emit(traceevent.Event{Ev: traceevent.Produce, Topic: topic, Partition: traceevent.P(o.Partition), N: len(prod.Offsets),
		First: traceevent.P(prod.First()), Last: traceevent.P(prod.Last()), High: traceevent.P(prod.High)})

	src, err := newRDSource(cfg, consumerProps(o, group, res.Embedded), topic, trace, now)
	if err != nil {
		return nil, err
	}
	closed := false
	closeSrc := func() {
		if !closed {
			closed = true
			_ = src.close()
		}
	}
	defer closeSrc()
	if err := src.waitAssigned(ctx, cfg.Brokers, o.Timeout); err != nil {
		return nil, err
	}
	tp := eachbatch.TopicPartition{Topic: topic, Partition: o.Partition}
	src.expect[tp] = prod.High

	eng, err := eachbatch.New(lp, src, o.EngineSettings(), trace)
	if err != nil {
		return nil, err
	}
	lp.Post(eng.Start)
	if o.Progress != nil {
		var tick func()
		tick = func() {
			o.Progress(Progress{Phase: len(res.Phases) + 1, Status: eng.Status(), Elapsed: time.Since(start)})
			lp.After(200*time.Millisecond, tick)
		}
		lp.Post(tick)
	}
	records := map[int32][]int64{o.Partition: append([]int64(nil), prod.Offsets...)}
	highs := map[int32]int64{o.Partition: prod.High}

	finish := func(runErr error) (*Result, error) {
		eng.FlushTrace()
		closeSrc()
		res.Elapsed = time.Since(start)
		res.judge(eng.Delivered(), records, highs, src)
		emit(traceevent.Event{Ev: traceevent.Verdict, Partitions: res.partitionStates(), Reason: res.Verdict})
		if runErr != nil && (errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)) && ctx.Err() != nil {
			res.Interrupted = true
			emit(traceevent.Event{Ev: traceevent.Interrupt})
		}
		return res, runErr
	}

	// Phase 1: drain the workload.
	if err := o.runPhase(ctx, lp, eng, src, 1, nil, res, highs, start); err != nil {
		return finish(err)
	}
	// Phase 2: one more record wakes the consumer; auto-commit then moves past whatever
	// was dropped.
	off, high, err := ProduceOne(ctx, cfg, topic, o.Partition, o.Timeout)
	if err != nil {
		return finish(err)
	}
	records[o.Partition] = append(records[o.Partition], off)
	highs[o.Partition] = high
	src.expect[tp] = high
	emit(traceevent.Event{Ev: traceevent.Produce, Phase: 2, Topic: topic, Partition: traceevent.P(o.Partition), N: 1,
		First: traceevent.P(off), Last: traceevent.P(off), High: traceevent.P(high)})
	delivered := func() bool { return eng.Delivered()[tp][off] > 0 }
	if err := o.runPhase(ctx, lp, eng, src, 2, delivered, res, highs, start); err != nil {
		return finish(err)
	}
	return finish(nil)
}

// runPhase runs the loop until the engine is quiescent and the group's committed
// offsets equal the stored ones (auto-commit has caught up), then records the phase.
func (o Options) runPhase(ctx context.Context, lp *loop.Loop, eng *eachbatch.Engine, src *rdSource, n int,
	extra func() bool, res *Result, highs map[int32]int64, start time.Time) error {
	committed, err := o.settle(ctx, lp, eng, src, extra)
	if err != nil {
		if errors.Is(err, ErrPhaseTimeout) {
			return fmt.Errorf("phase %d: %w", n, err)
		}
		return err
	}
	ph := Phase{N: n, Elapsed: time.Since(start)}
	del := eng.Delivered()
	for tp, c := range committed {
		d := del[tp]
		if c < 0 && len(d) == 0 && highs[tp.Partition] == 0 {
			continue
		}
		ph.Partitions = append(ph.Partitions, PhasePartition{Partition: tp.Partition, Delivered: len(d), Committed: c, High: highs[tp.Partition]})
	}
	sort.Slice(ph.Partitions, func(i, j int) bool { return ph.Partitions[i].Partition < ph.Partitions[j].Partition })
	res.Phases = append(res.Phases, ph)
	states := make([]traceevent.PartitionState, 0, len(ph.Partitions))
	for _, p := range ph.Partitions {
		states = append(states, traceevent.PartitionState{Partition: p.Partition, Delivered: p.Delivered, Committed: p.Committed, High: p.High})
	}
	ev := traceevent.Event{Ev: traceevent.PhaseEnd, Phase: n, Partitions: states}
	ev.Time = time.Now().UTC()
	ev.AtMs = float64(lp.Elapsed()) / float64(time.Millisecond)
	o.Trace.Write(ev)
	return nil
}

// settle runs the loop until the engine is quiescent (and extra holds) and the group's
// committed offsets equal the stored ones, then returns the committed offsets. There is
// no idle timer: the check runs at the auto-commit interval and ends as soon as it holds.
func (o Options) settle(ctx context.Context, lp *loop.Loop, eng *eachbatch.Engine, src *rdSource, extra func() bool) (map[eachbatch.TopicPartition]int64, error) {
	settled, timedOut := false, false
	var committed map[eachbatch.TopicPartition]int64
	check := max(o.scale(o.AutoCommitInterval), 10*time.Millisecond)
	var tick func()
	tick = func() {
		if settled {
			return
		}
		if eng.Quiescent() && (extra == nil || extra()) {
			c, err := src.committed(o.Timeout)
			if err == nil && storedCommitted(eng.Stored(), c) {
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

func storedCommitted(stored, committed map[eachbatch.TopicPartition]int64) bool {
	for tp, s := range stored {
		if committed[tp] != s {
			return false
		}
	}
	return true
}

func (r *Result) judge(delivered map[eachbatch.TopicPartition]map[int64]int, records map[int32][]int64, highs map[int32]int64, src *rdSource) {
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
	worst := VerdictOK
	for _, p := range ids {
		committed := int64(-1)
		var byPhase []int64
		for _, ph := range r.Phases {
			for _, pp := range ph.Partitions {
				if pp.Partition == p {
					byPhase = append(byPhase, pp.Committed)
					committed = pp.Committed
				}
			}
		}
		if len(byPhase) < 2 && src != nil {
			// Interrupted or failed mid-run: read what is committed now, if we can.
			if c, err := src.committed(5 * time.Second); err == nil {
				if v, ok := c[eachbatch.TopicPartition{Topic: r.Topic, Partition: p}]; ok {
					committed = v
				}
			}
		}
		v := Judge(p, records[p], byPart[p], committed)
		r.Partitions = append(r.Partitions, PartitionResult{Partition: p, Produced: len(records[p]), High: highs[p],
			CommittedByPhase: byPhase, PartitionVerdict: v})
		switch {
		case v.Verdict == VerdictLoss:
			worst = VerdictLoss
		case v.Verdict == VerdictStranded && worst == VerdictOK:
			worst = VerdictStranded
		}
	}
	r.Verdict = worst
}

func (r *Result) partitionStates() []traceevent.PartitionState {
	out := make([]traceevent.PartitionState, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		st := traceevent.PartitionState{Partition: p.Partition, Delivered: p.Delivered, Duplicates: p.Duplicates,
			High: p.High, Lost: p.Lost, Stranded: p.Stranded, Verdict: p.Verdict, Committed: -1}
		if n := len(p.CommittedByPhase); n > 0 {
			st.Committed = p.CommittedByPhase[n-1]
		}
		out = append(out, st)
	}
	return out
}

func (o Options) settingsMap() map[string]string {
	return map[string]string{
		"time_scale":              fmt.Sprint(o.TimeScale),
		"records":                 fmt.Sprint(o.Records),
		"partition":               fmt.Sprint(o.Partition),
		"partitions":              fmt.Sprint(o.Partitions),
		"concurrency":             fmt.Sprint(o.Concurrency),
		"batch_size":              fmt.Sprint(o.BatchSize),
		"handler_delay":           o.HandlerDelay.String(),
		"handler_parallel":        fmt.Sprint(o.HandlerParallel),
		"max_poll_interval":       o.MaxPollInterval.String(),
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
}
