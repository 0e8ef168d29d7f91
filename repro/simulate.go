package repro

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// simStart is where a simulation's virtual clock starts: a fixed instant, so the same
// options always give the same trace.
var simStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Simulate runs Run's scenario with no broker: the same workload, engine, ledger,
// phases and verdicts, over the simulated log of eachbatch/simkafka on virtual time at
// full scale (TimeScale is ignored: durations are the real ones, and a 15-minute
// scenario takes milliseconds). Result.Elapsed, phase times and LossAt are virtual.
//
// What the simulation does not have, and a live run does: fetch latency and fetch
// sizes bounded by bytes (the simulated client has prefetched everything; the engine's
// adaptive fetch size still applies, and a consume call interleaves partitions in runs
// of --max-bytes / 100-byte records, see simkafka.Client.Chunk), rebalances, broker
// errors, and the wall clock's jitter. Where those matter, see BENCHMARKS.md ("live and simulated").
func Simulate(ctx context.Context, o Options) (*Result, error) {
	o.TimeScale = 1
	if err := o.Validate(); err != nil {
		return nil, err
	}
	group := o.Group
	if group == "" {
		group = fmt.Sprintf("kstranded-%s-%s-simulated", o.Policy, o.Commit)
	}
	lp := loop.NewVirtual(simStart)
	res := &Result{RunID: "simulated", Topic: o.Topic, Group: group, Simulated: true, Policy: o.Policy, Handler: o.handler(), Commit: o.Commit,
		Settings: o.settingsMap()}
	var trace func(traceevent.Event)
	if o.Trace != nil {
		trace = o.Trace.Write
	}
	emit := func(ev traceevent.Event) {
		if trace != nil {
			ev.Time, ev.AtMs = lp.Now().UTC(), float64(lp.Elapsed())/float64(time.Millisecond)
			trace(ev)
		}
	}
	emit(traceevent.Event{Ev: traceevent.Run, Schema: traceevent.Schema, Topic: o.Topic, Group: group,
		Policy: string(o.Policy), Commit: string(o.Commit), Settings: res.Settings})

	autoCommit := time.Duration(0)
	if o.Commit == CommitAuto && o.AutoCommit {
		autoCommit = max(o.AutoCommitInterval, time.Millisecond)
	}
	sim := simkafka.New(lp, autoCommit, trace)
	// A consume call returns runs of about fetch.message.max.bytes per partition in turn
	// (simkafka.Client.Chunk documents the assumption); --max-bytes is the property
	// librdkafka gets (it wins over --max-bytes-per-partition, as in kafkajs-compat).
	sim.Chunk = max(1, o.MaxBytes/simkafka.RecordSize)
	s := &simRun{o: o, ctx: ctx, lp: lp, sim: sim, res: res, trace: trace, emit: emit,
		records: map[int32][]int64{}, highs: map[int32]int64{}, delivered: map[kpart.TopicPartition]map[int64]int{}}
	for p := int32(0); p < o.Partitions; p++ {
		s.all = append(s.all, kpart.TopicPartition{Topic: o.Topic, Partition: p})
	}
	// The workload, laid out as the live producer writes it: each transaction's chunk
	// of every partition, then its commit marker.
	res.Produced = ProduceResult{Topic: o.Topic, Spec: o.Workload}
	for _, tx := range o.Workload.Layout() {
		for _, part := range tx {
			tp := kpart.TopicPartition{Topic: o.Topic, Partition: part.Partition}
			kinds := make([]simkafka.Kind, part.Records, part.Records+1)
			if o.Workload.Transactions > 0 {
				kinds = append(kinds, simkafka.Control)
			}
			first := sim.Append(tp, kinds...)
			for i := 0; i < part.Records; i++ {
				s.records[part.Partition] = append(s.records[part.Partition], first+int64(i))
			}
		}
	}
	for _, part := range o.Workload.Parts {
		tp := kpart.TopicPartition{Topic: o.Topic, Partition: part.Partition}
		offs := s.records[part.Partition]
		s.highs[part.Partition] = sim.HighWatermark(tp)
		res.Produced.Partitions = append(res.Produced.Partitions, ProducedPartition{Partition: part.Partition,
			Offsets: append([]int64(nil), offs...), High: s.highs[part.Partition]})
		emit(traceevent.Event{Ev: traceevent.Produce, Topic: o.Topic, Partition: traceevent.P(part.Partition), N: len(offs),
			First: traceevent.P(offs[0]), Last: traceevent.P(offs[len(offs)-1]), High: traceevent.P(s.highs[part.Partition])})
	}

	if err := s.startConsumer(); err != nil {
		return nil, err
	}
	if err := s.phase(1, nil); err != nil {
		return s.finish(err)
	}
	offs := map[int32]int64{}
	for _, p := range workloadPartitions(o.Workload) {
		tp := kpart.TopicPartition{Topic: o.Topic, Partition: p}
		offs[p] = sim.Append(tp, simkafka.Data)
		s.records[p] = append(s.records[p], offs[p])
		s.highs[p] = sim.HighWatermark(tp)
		emit(traceevent.Event{Ev: traceevent.Produce, Phase: 2, Topic: o.Topic, Partition: traceevent.P(p), N: 1,
			First: traceevent.P(offs[p]), Last: traceevent.P(offs[p]), High: traceevent.P(s.highs[p])})
	}
	if err := s.phase(2, phase2Delivered(s.eng, o.Topic, offs)); err != nil {
		return s.finish(err)
	}
	if o.Commit == CommitLedger {
		if err := s.restarts(); err != nil {
			return s.finish(err)
		}
	}
	return s.finish(nil)
}

// simRun is one simulation in progress: Run's run with the simulated client.
type simRun struct {
	o         Options
	ctx       context.Context
	lp        *loop.Loop
	sim       *simkafka.Client
	res       *Result
	trace     func(traceevent.Event)
	emit      func(traceevent.Event)
	all       []kpart.TopicPartition
	eng       *eachbatch.Engine
	ft        *frontierTracker
	records   map[int32][]int64
	highs     map[int32]int64
	delivered map[kpart.TopicPartition]map[int64]int // over earlier consumer instances
	restarted int
}

// startConsumer starts a consumer instance in the group: assigned every partition,
// from the committed offsets.
func (s *simRun) startConsumer() error {
	s.sim.Assign(s.all...)
	eng, err := eachbatch.New(s.lp, s.sim, s.o.EngineSettings(), s.trace)
	if err != nil {
		return err
	}
	s.eng = eng
	s.sim.OnNonEmpty = eng.NotifyNonEmpty
	ft := newFrontierTracker(s.lp, s.o.Commit == CommitLedger, s.sim, max(s.o.AutoCommitInterval, time.Millisecond), s.trace)
	ft.maxInFlight, ft.maxBytes = s.o.MaxInFlight, s.o.MaxInFlightBytes
	start := map[kpart.TopicPartition]int64{}
	for _, tp := range s.all {
		if c := s.sim.Committed(tp); c >= 0 {
			start[tp] = c
		}
	}
	ft.assign(s.all, start)
	ft.attach(eng)
	discarded := eng.OnDiscard
	eng.OnDiscard = func(recs []eachbatch.Record) {
		if s.res.LossAt == 0 {
			s.res.LossAt = s.lp.Elapsed()
		}
		discarded(recs)
	}
	s.ft = ft
	s.lp.Post(eng.Start)
	return nil
}

func (s *simRun) stopConsumer() {
	if s.eng == nil {
		return
	}
	drain(s.lp, s.eng, s.o.Grace)
	s.eng.FlushTrace()
	for tp, d := range s.eng.Delivered() {
		m := s.delivered[tp]
		if m == nil {
			m = map[int64]int{}
			s.delivered[tp] = m
		}
		for off, n := range d {
			m[off] += n
		}
	}
	s.ft.shutdown()
	s.sim.Close()
	for _, e := range append(s.eng.Errors, append(s.ft.Errors, s.ft.Regressions...)...) {
		s.res.Warnings = append(s.res.Warnings, e.Error())
	}
	s.eng, s.ft = nil, nil
}

func (s *simRun) allDelivered() map[kpart.TopicPartition]map[int64]int {
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
	add(s.delivered)
	if s.eng != nil {
		add(s.eng.Delivered())
	}
	return out
}

func (s *simRun) committed() map[kpart.TopicPartition]int64 {
	out := make(map[kpart.TopicPartition]int64, len(s.all))
	for _, tp := range s.all {
		out[tp] = s.sim.Committed(tp)
	}
	return out
}

// phase runs the loop until the engine is quiescent, extra holds and the group's
// committed offsets equal what the commit mode commits, then records the phase.
func (s *simRun) phase(n int, extra func() bool) error {
	eng, ft := s.eng, s.ft
	target := eng.Stored
	if s.o.Commit == CommitLedger {
		target = func() map[kpart.TopicPartition]int64 {
			out := map[kpart.TopicPartition]int64{}
			for tp, f := range ft.frontiers() {
				if f > 0 {
					out[tp] = f
				}
			}
			return out
		}
	}
	settled := func() bool {
		if !eng.Quiescent() || (extra != nil && !extra()) {
			return false
		}
		for tp, want := range target() {
			if s.sim.Committed(tp) != want {
				return false
			}
		}
		return true
	}
	limit := s.o.PhaseTimeout
	if limit == 0 {
		perRecord := s.o.HandlerDelay / time.Duration(s.o.HandlerParallel)
		limit = time.Duration(s.o.Workload.Total()+len(s.o.Workload.Parts))*perRecord + 4*s.o.MaxPollInterval + time.Hour
	}
	timedOut := false
	deadline := s.lp.After(limit, func() { timedOut = true })
	defer deadline.Stop()
	if err := s.lp.Run(s.ctx, func() bool { return timedOut || settled() }); err != nil {
		return err
	}
	if timedOut && !settled() {
		return fmt.Errorf("phase %d: %w within %s of virtual time", n, ErrPhaseTimeout, limit)
	}
	ph := newPhase(n, s.lp.Elapsed(), s.committed(), s.allDelivered(), ft.frontiers(), s.records, s.highs)
	s.res.Phases = append(s.res.Phases, ph)
	s.emit(ph.event())
	return nil
}

func (s *simRun) restarts() error {
	for {
		s.stopConsumer()
		s.restarted++
		if err := s.startConsumer(); err != nil {
			return err
		}
		if err := s.phase(3, nil); err != nil {
			return err
		}
		if s.ft.pending() == 0 || s.restarted >= s.o.MaxRestarts {
			if n := s.ft.pending(); n > 0 {
				s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%d records still stranded after %d restarts (--max-restarts)", n, s.restarted))
			}
			s.res.Restarts = s.restarted
			return nil
		}
		s.res.Phases = s.res.Phases[:len(s.res.Phases)-1]
	}
}

func (s *simRun) finish(runErr error) (*Result, error) {
	s.stopConsumer()
	s.res.Elapsed = s.lp.Elapsed()
	s.res.judge(s.allDelivered(), s.records, s.highs, nil)
	if runErr != nil && (errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)) && s.ctx.Err() != nil {
		s.res.Interrupted = true
		s.emit(traceevent.Event{Ev: traceevent.Interrupt})
	}
	s.emit(traceevent.Event{Ev: traceevent.Verdict, Partitions: s.res.partitionStates(), Reason: string(s.res.Verdict)})
	return s.res, runErr
}
