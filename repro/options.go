package repro

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
)

// CommitMode says who decides the committed offset.
type CommitMode string

// Commit modes.
const (
	// CommitAuto is the client's own behaviour: librdkafka auto-commits stored offsets.
	CommitAuto CommitMode = "auto"
	// CommitLedger commits the ledger's frontier (the completed prefix) instead of the
	// client's stored offsets: librdkafka auto-commit off, manual commits.
	CommitLedger CommitMode = "ledger"
	// CommitManual is the client's own manual commit, the idiom of upstream #476:
	// kafkaJS autoCommit false, eachBatchAutoResolve false, resolveOffset() per record
	// and `await commitOffsetsIfNecessary()` at the end of each batch
	// (eachbatch.Settings.ManualCommit). eachBatch only.
	CommitManual CommitMode = "manual"
	// CommitExplicit is the other manual-commit idiom: autoCommit false, and the handler
	// commits the offset it names, `await consumer.commitOffsets([{topic, partition,
	// offset: last + 1}])`: eachBatch at the end of each batch (the CommitManual handler
	// otherwise: eachBatchAutoResolve false, resolveOffset per record), eachMessage after
	// each record (eachbatch.Settings.ExplicitCommit).
	CommitExplicit CommitMode = "explicit"
)

// CommitModes lists the commit modes in comparison order (--commit all).
var CommitModes = []CommitMode{CommitAuto, CommitLedger, CommitManual, CommitExplicit}

// Who calls pause() (--pause-from).
const (
	// PauseFromHandler: the handler calls its payload's pause() (the default).
	PauseFromHandler = "handler"
	// PauseFromOutside: the application calls consumer.pause([{topic}]) from a timer,
	// outside the handler (eachbatch.Settings.PauseOutside).
	PauseFromOutside = "outside"
)

// Options configure a run. Durations are the seed's (unscaled); TimeScale scales them.
type Options struct {
	Kafka      kafkaconf.Config // Brokers empty: the embedded broker
	Topic      string
	Partitions int32
	Workload   workload.Spec // the records phase 1 writes
	Group      string        // empty: generated per run
	// AllowSharedGroup: a named Group that another member is in, at start or at any
	// point of the run, gives a result with a warning; without it such a run is
	// INCOMPLETE (ErrSharedGroup).
	AllowSharedGroup bool
	// GroupProtocol is --group-protocol: classic or consumer (KIP-848); empty: what
	// group.protocol in Kafka.Props says, else classic.
	GroupProtocol string
	// Members is --members: consumers in the group, each its own engine and client
	// (0 or 1: one).
	Members int
	// RebalanceAt is --rebalance-at: members joining or leaving during the run.
	RebalanceAt []RebalanceStep

	Policy eachbatch.Policy
	Commit CommitMode
	// Handler is --handler: eachBatch (the seed's) or eachMessage.
	Handler eachbatch.Handler
	// AutoResolve is --auto-resolve (eachBatchAutoResolve); false: the handler resolves
	// each round itself and stops when the batch is stale.
	AutoResolve bool
	// PauseAt is --pause-at: the handler calls its payload's pause() at its first round
	// (record) starting this long after the consumer started; ResumeAfter
	// (--resume-after) later it resumes (eachbatch.Settings.PauseAt). 0: never.
	PauseAt     time.Duration
	ResumeAfter time.Duration
	// PauseFrom is --pause-from: PauseFromHandler (empty too) or PauseFromOutside, where
	// PauseAt is when the application pauses the topic from a timer.
	PauseFrom string
	// PausePartitions is --pause-partitions: with PauseFromOutside, the partitions the
	// application pauses (`consumer.pause([{topic, partitions}])`) and resumes; empty:
	// every assigned partition (eachbatch.Settings.PausePartitions).
	PausePartitions []int32
	// SeekAt is --seek-at: the handler calls consumer.seek() on its own partition, to
	// SeekTo (--seek-to), at its first round (record) starting this long after the
	// consumer started (eachbatch.Settings.SeekAt). 0: never.
	SeekAt time.Duration
	SeekTo int64
	// Seeks is --seek (repeatable): more seek() calls from the handler, of its own
	// partition or another (eachbatch.Settings.Seeks).
	Seeks []Seek
	// Heartbeat is --heartbeat: the eachBatch handler awaits heartbeat() after every
	// round, a no-op in the JS client (eachbatch.Settings.Heartbeat).
	Heartbeat bool
	// HandlerFailAt is --handler-fail-at: offsets where the handler throws once per
	// partition.
	HandlerFailAt []int64

	TimeScale       float64
	Concurrency     int
	BatchSize       int
	HandlerDelay    time.Duration
	HandlerParallel int
	MaxPollInterval time.Duration
	// CacheSizePerWorker is js.consumer.max.cache.size.per.worker.ms (1500 ms, 1.7.0 and
	// later): #updateMaxMessageCacheSize sizes a fetch to this long of handling per worker.
	// 0: the client's default.
	CacheSizePerWorker time.Duration
	// RetryWait is 1.3.0's #nextFetchRetry timer (1 s, eachbatch.Settings.RetryWait):
	// how long a worker that found nothing waits (policies v1.3.0 and v1.0.0 only). 0: 1 s.
	RetryWait time.Duration
	// ConsumeTimeout is how long 0.x's consume call waits for its first record (1 s,
	// eachbatch.Settings.ConsumeTimeout; policy v0.2.0 only). 0: 1 s.
	ConsumeTimeout    time.Duration
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	// ConsumerHeartbeatInterval (simulated runs only) is the broker's
	// group.consumer.heartbeat.interval.ms under the consumer protocol: members learn of
	// a new target assignment at their next heartbeat (simkafka.Group.
	// SetConsumerHeartbeatInterval). 0: at once.
	ConsumerHeartbeatInterval time.Duration
	FetchWaitMax              time.Duration
	FetchWaitMaxSet           bool
	AutoCommitInterval        time.Duration
	MaxBytes                  int
	MaxBytesPerPartition      int
	AutoCommit                bool
	ReadCommitted             bool
	FromBeginning             bool

	MaxInFlight      int           // ledger back-pressure: unfinished records per partition before it is paused (0: no bound)
	MaxInFlightBytes int           // same in bytes (0: no bound)
	Grace            time.Duration // on shutdown, how long batches in flight may finish
	MaxRestarts      int           // --commit ledger: restarts while records stay stranded

	// FetchOrder is simulate's --fetch-order: the partitions the simulated consumer's
	// fetch list serves first, in this order (simkafka.Client.Order; the others follow
	// by number). nil: the lowest first, and Simulate explores other orders (one
	// member). In a group every member serves its partitions in this order. Simulate
	// only.
	FetchOrder []int32
	// Phase2Order is simulate's --phase2-order: the order phase 2's records are produced
	// in, which is the order they reach the consumer's queue (the partitions named
	// first, the others by number; simkafka.Client.Append): librdkafka's producer writes
	// one partition per ProduceRequest, and which of them each Fetch of the waiting
	// consumer carries is timing, any order (FIDELITY.md). nil: by number. Simulate only.
	Phase2Order []int32

	Keep         bool
	Timeout      time.Duration // bound on each broker operation
	PhaseTimeout time.Duration // bound on each phase reaching quiescence (0: derived)

	Trace    *traceevent.Writer
	Progress func(Progress)

	// simEvents, when > 0, is Simulate's event budget instead of MaxSimulatedEvents
	// (tests reach it in milliseconds).
	simEvents uint64
	// simScale lifts MaxPartitions and MaxSimulatedRecords for BenchmarkSimulateScale
	// (issue 25 §1: the cost measured up to 10^7 records and 10^4 partitions), with no
	// event budget; the CLI cannot set it.
	simScale bool
}

// MinTimeScale is the smallest --time-scale accepted.
const MinTimeScale = 1e-6

// DefaultOptions are the seed's settings at the default time scale.
func DefaultOptions() Options {
	s := eachbatch.DefaultSettings()
	return Options{
		Topic: "stranded", Partitions: 20, Workload: workload.Seed(),
		Policy: eachbatch.V1_10_0, Commit: CommitAuto, Handler: eachbatch.EachBatch, AutoResolve: true, TimeScale: 0.01,
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
	s.Handler = o.handler()
	s.AutoResolve = o.AutoResolve
	switch o.Commit {
	case CommitManual:
		s.ManualCommit, s.AutoResolve = true, false
	case CommitExplicit:
		s.ExplicitCommit = true
		s.AutoResolve = s.EachMessage() // eachMessage resolves each record itself
	}
	s.PauseOutside = o.PauseFrom == PauseFromOutside && o.PauseAt > 0
	if s.PauseOutside {
		s.PausePartitions = o.PausePartitions
	}
	s.FailAt = o.HandlerFailAt
	s.PauseAt, s.ResumeAfter = o.scale(o.PauseAt), o.scale(o.ResumeAfter)
	if o.PauseAt > 0 && s.PauseAt <= 0 {
		s.PauseAt = 1 // scaled below a nanosecond: still a pause
	}
	s.SeekAt, s.SeekTo, s.Heartbeat = o.scale(o.SeekAt), o.SeekTo, o.Heartbeat
	if o.SeekAt > 0 && s.SeekAt <= 0 {
		s.SeekAt = 1 // scaled below a nanosecond: still a seek
	}
	s.Seeks = o.engineSeeks()
	s.Concurrency = o.Concurrency
	s.BatchSize = o.BatchSize
	s.MaxPollInterval = o.scale(o.MaxPollInterval)
	s.HandlerDelay = o.scale(o.HandlerDelay)
	s.HandlerParallel = o.HandlerParallel
	if o.CacheSizePerWorker > 0 {
		s.CacheSizePerWorker = o.CacheSizePerWorker
	}
	s.CacheSizePerWorker = o.scale(s.CacheSizePerWorker)
	s.FetchValve = o.scale(s.FetchValve)
	if o.RetryWait > 0 {
		s.RetryWait = o.RetryWait
	}
	s.RetryWait = max(o.scale(s.RetryWait), time.Millisecond)
	if o.ConsumeTimeout > 0 {
		s.ConsumeTimeout = o.ConsumeTimeout
	}
	s.ConsumeTimeout = max(o.scale(s.ConsumeTimeout), time.Millisecond)
	// The expiry loop's 100 ms floor, scaled, but never below 1 ms: on the wall clock a
	// shorter sleep only burns CPU.
	s.MinWake = max(o.scale(s.MinWake), time.Millisecond)
	// #seekInternal commits the offset it seeks to only when enable.auto.commit is on.
	s.CommitOnSeek = o.Commit == CommitAuto && o.AutoCommit
	return s
}

// Validate checks the options; errors name the flag.
// MaxPollIntervalLimit and MaxHandlerDelay bound the durations a scenario may name
// (issue 27 §9): librdkafka's max.poll.interval.ms limit (24h, which the JS client
// doubles), and a day per record.
const (
	MaxPollIntervalLimit = 12 * time.Hour
	MaxHandlerDelay      = 24 * time.Hour
	MaxPartitions        = 1000
	MaxMembers           = 100
	// MaxRebalanceAt bounds a --rebalance-at step's time: a day. A simulation steps
	// through the idle virtual time before it (the expiry loop's ticks while the workers
	// wait): 24h takes about 1.5 s, 100h took 3.4 s and 999999h would take days.
	MaxRebalanceAt = 24 * time.Hour
)

func (o Options) Validate() error {
	switch {
	case o.Partitions <= 0:
		return fmt.Errorf("--partitions must be > 0, got %d", o.Partitions)
	case o.Partitions > MaxPartitions && !o.simScale:
		// the simulation's cost grows faster than the partitions (5,000: 55 s)
		return fmt.Errorf("--partitions must be at most %d, got %d", MaxPartitions, o.Partitions)
	case o.Members > MaxMembers:
		// more members than partitions hold nothing; the cost grows with their square
		// (200: 7 s, 1,000: 98 s)
		return fmt.Errorf("--members must be at most %d, got %d", MaxMembers, o.Members)
	case strings.TrimSpace(o.Topic) == "":
		return errors.New("--topic must not be empty")
	case math.IsNaN(o.TimeScale) || o.TimeScale < MinTimeScale || o.TimeScale > 10:
		// Below MinTimeScale every scaled duration (a 40 s handler, a 15 min poll
		// interval) rounds to nanoseconds: the run would spin, not reproduce anything.
		return fmt.Errorf("--time-scale must be between %g and 10, got %g", MinTimeScale, o.TimeScale)
	case o.PhaseTimeout < 0:
		return fmt.Errorf("--phase-timeout must be >= 0 (0: derived from the settings), got %s", o.PhaseTimeout)
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
	case o.CacheSizePerWorker < 0 || o.CacheSizePerWorker > 24*time.Hour:
		return errors.New("--cache-size-per-worker must be at most 24h and not negative (0: the default)")
	case o.RetryWait < 0 || o.RetryWait > 24*time.Hour:
		return errors.New("--retry-wait must be at most 24h and not negative (0: the default)")
	case o.ConsumeTimeout < 0 || o.ConsumeTimeout > 24*time.Hour:
		return errors.New("--consume-timeout must be at most 24h and not negative (0: the default)")
	case o.MaxPollInterval > MaxPollIntervalLimit:
		// and a larger one overflowed the phase bound into a negative duration
		return fmt.Errorf("--max-poll-interval must be at most %s, got %s: the JS client hands librdkafka twice it as max.poll.interval.ms, whose limit is 86400000 (24h)", MaxPollIntervalLimit, o.MaxPollInterval)
	case o.HandlerDelay > MaxHandlerDelay:
		return fmt.Errorf("--handler-delay must be at most %s, got %s", MaxHandlerDelay, o.HandlerDelay)
	case o.AutoCommitInterval > 24*time.Hour:
		return fmt.Errorf("--auto-commit-interval must be at most 24h (librdkafka's auto.commit.interval.ms limit), got %s", o.AutoCommitInterval)
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
	case o.Commit != CommitAuto && o.Commit != CommitLedger && o.Commit != CommitManual && o.Commit != CommitExplicit:
		return fmt.Errorf("--commit %q: want auto, ledger, manual, explicit or all", o.Commit)
	case o.Commit == CommitAuto && !o.AutoCommit:
		return errors.New("--auto-commit=false: with --commit auto the client's auto-commit is what this scenario reproduces; use --commit manual or explicit for the client's manual commit (resolveOffset, commitOffsetsIfNecessary or commitOffsets([...])) or --commit ledger for kstranded's")
	case HandlerErr(o.handler(), o.Commit, o.Heartbeat, o.AutoResolve) != nil:
		return HandlerErr(o.handler(), o.Commit, o.Heartbeat, o.AutoResolve)
	case o.PauseFrom != "" && o.PauseFrom != PauseFromHandler && o.PauseFrom != PauseFromOutside:
		return fmt.Errorf("--pause-from %q: want handler or outside", o.PauseFrom)
	case o.PauseFrom == PauseFromOutside && o.PauseAt == 0:
		return errors.New("--pause-from outside: the application's pause needs --pause-at (when it pauses)")
	case len(o.PausePartitions) > 0 && o.PauseFrom != PauseFromOutside:
		return errors.New("--pause-partitions names what the application pauses from outside the handler: give --pause-from outside (the payload's pause() pauses its own partition)")
	case o.pausePartitionsErr() != nil:
		return o.pausePartitionsErr()
	case o.PauseAt < 0 || o.ResumeAfter < 0:
		return errors.New("--pause-at and --resume-after must be >= 0")
	case o.PauseAt > MaxRebalanceAt:
		return fmt.Errorf("--pause-at must be at most %s", MaxRebalanceAt)
	case o.SeekAt < 0:
		return errors.New("--seek-at must be >= 0")
	case o.SeekAt > MaxRebalanceAt:
		return fmt.Errorf("--seek-at must be at most %s", MaxRebalanceAt)
	case o.seeksErr() != nil:
		return o.seeksErr()
	case o.SeekAt > 0 && o.SeekTo < 0:
		return fmt.Errorf("--seek-to must be an offset >= 0, got %d", o.SeekTo)
	case o.MaxInFlight < 0 || o.MaxInFlightBytes < 0:
		return errors.New("--max-in-flight and --max-in-flight-bytes must be >= 0")
	case o.Grace < 0:
		return errors.New("--grace must be >= 0")
	case o.MaxRestarts < 1:
		return errors.New("--max-restarts must be >= 1")
	}
	for _, st := range o.RebalanceAt {
		if st.At > MaxRebalanceAt {
			return fmt.Errorf("--rebalance-at %s: at most %s after the start", st, MaxRebalanceAt)
		}
	}
	if err := o.validateMembers(); err != nil {
		return err
	}
	if err := o.Workload.Validate(o.Partitions); err != nil {
		return err
	}
	if _, err := eachbatch.ParsePolicy(string(o.Policy)); err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if _, err := eachbatch.ParseHandler(string(o.handler())); err != nil {
		return fmt.Errorf("--handler: %w", err)
	}
	for _, off := range o.HandlerFailAt {
		if off < 0 {
			return errors.New("--handler-fail-at: offsets must be >= 0")
		}
	}
	if _, err := o.Kafka.GroupProtocol(o.GroupProtocol); err != nil {
		return err
	}
	return nil
}

// HandlerErr refuses the handler settings that are eachBatch's alone with --handler
// each-message: the model's (Validate) and the real client's (repro --real-client, whose
// scenario.js would run them as something else: never committing, or no heartbeat).
func HandlerErr(h eachbatch.Handler, commit CommitMode, heartbeat, autoResolve bool) error {
	if h != eachbatch.EachMessage {
		return nil
	}
	switch {
	case commit == CommitManual:
		return errors.New("--commit manual is the eachBatch idiom (eachBatchAutoResolve false, resolveOffset per record, commitOffsetsIfNecessary at the end of each batch): eachMessage's payload has no commitOffsetsIfNecessary; use --handler each-batch")
	case heartbeat:
		return errors.New("--heartbeat applies to --handler each-batch only (the handler awaits heartbeat() after each round)")
	case !autoResolve:
		return errors.New("--auto-resolve=false applies to --handler each-batch only (eachMessage stores each record when the handler returns)")
	}
	return nil
}

// handler is the handler, eachBatch when unset.
func (o Options) handler() eachbatch.Handler {
	if o.Handler == "" {
		return eachbatch.EachBatch
	}
	return o.Handler
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

func (o Options) settingsMap() map[string]string {
	m := map[string]string{
		"time_scale":              fmt.Sprint(o.TimeScale),
		"spread":                  o.Workload.String(),
		"transactions":            fmt.Sprint(o.Workload.Transactions),
		"records":                 fmt.Sprint(o.Workload.Total()),
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
		"handler":                 string(o.handler()),
		"auto_resolve":            fmt.Sprint(o.AutoResolve),
	}
	if o.CacheSizePerWorker > 0 && o.CacheSizePerWorker != eachbatch.DefaultSettings().CacheSizePerWorker {
		m["cache_size_per_worker"] = o.CacheSizePerWorker.String() // only when set: older traces stay as they were
	}
	if o.RetryWait > 0 && o.RetryWait != eachbatch.DefaultSettings().RetryWait {
		m["retry_wait"] = o.RetryWait.String()
	}
	if o.ConsumeTimeout > 0 && o.ConsumeTimeout != eachbatch.DefaultSettings().ConsumeTimeout {
		m["consume_timeout"] = o.ConsumeTimeout.String()
	}
	if o.Commit == CommitManual || o.Commit == CommitExplicit {
		// the client's settings in manual mode, whatever --auto-commit and
		// --auto-resolve say (EngineSettings)
		m["auto_commit"] = "false"
		m["auto_resolve"] = fmt.Sprint(o.Commit == CommitExplicit && o.handler() == eachbatch.EachMessage)
		delete(m, "auto_commit_interval")
	}
	if o.PauseAt > 0 {
		m["pause_at"], m["resume_after"] = o.PauseAt.String(), o.ResumeAfter.String()
		if o.PauseFrom == PauseFromOutside {
			m["pause_from"] = PauseFromOutside
			if len(o.PausePartitions) > 0 {
				m["pause_partitions"] = joinInt32(o.PausePartitions)
			}
		}
	}
	if len(o.Seeks) > 0 {
		var ks []string
		for _, k := range o.Seeks {
			ks = append(ks, k.String())
		}
		m["seeks"] = strings.Join(ks, ",")
	}
	if o.SeekAt > 0 {
		m["seek_at"], m["seek_to"] = o.SeekAt.String(), fmt.Sprint(o.SeekTo)
	}
	if o.Heartbeat {
		m["heartbeat"] = "true"
	}
	if len(o.HandlerFailAt) > 0 {
		m["handler_fail_at"] = fmt.Sprint(o.HandlerFailAt)
	}
	if len(o.FetchOrder) > 0 {
		m["fetch_order"] = fmt.Sprint(o.FetchOrder)
	}
	if len(o.Phase2Order) > 0 {
		m["phase2_order"] = fmt.Sprint(o.Phase2Order)
	}
	if o.grouped() {
		m["members"] = fmt.Sprint(o.members())
		if len(o.RebalanceAt) > 0 {
			var steps []string
			for _, st := range o.RebalanceAt {
				steps = append(steps, st.String())
			}
			m["rebalance_at"] = strings.Join(steps, ",")
		}
	}
	if o.groupProtocol() == kafkaconf.GroupProtocolConsumer {
		// Not sent: the broker's group.consumer.* settings apply.
		delete(m, "session_timeout")
		delete(m, "heartbeat_interval")
		if o.ConsumerHeartbeatInterval > 0 {
			m["consumer_heartbeat_interval"] = o.ConsumerHeartbeatInterval.String()
		}
	}
	return m
}

// pausePartitionsErr checks --pause-partitions: partitions of the topic, each named once.
func (o Options) pausePartitionsErr() error {
	for i, p := range o.PausePartitions {
		if p < 0 || p >= o.Partitions {
			return fmt.Errorf("--pause-partitions %s: partition %d is not one of the topic's %d", joinInt32(o.PausePartitions), p, o.Partitions)
		}
		if slices.Contains(o.PausePartitions[:i], p) {
			return fmt.Errorf("--pause-partitions %s: partition %d named twice", joinInt32(o.PausePartitions), p)
		}
	}
	return nil
}

// joinInt32 writes partitions as the flags take them: 1,2,3.
func joinInt32(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}
