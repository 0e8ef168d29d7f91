package repro

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/internal/verdict"
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
// of --max-bytes / 100-byte records, see simkafka.Client.Chunk), broker errors,
// session timeouts and the rebalance timeout, and the wall clock's jitter. Where those
// matter, see BENCHMARKS.md ("live and simulated"). Rebalances it has: the consumers
// (--members, --rebalance-at) run on a simkafka.Group, which also models librdkafka
// leaving the group on max.poll.interval.ms.
//
// Which partition's records reach a live consumer's queue first is the broker's and the
// network's, and some shapes' outcome depends on it (two partitions, one worker: the
// partition served first holds the worker while the other's records wait in the cache).
// So a run of one member over 2 to maxFetchOrders partitions holding data is simulated
// once more for each other partition served first (simkafka.Client.StartAt); an order
// with another outcome is named in the warnings, and the verdict is the worst of them:
// a shape is safe only if it is safe whatever the broker answers first. The partitions
// in the result are those of the first order (the lowest partition served first). Runs
// of several partitions not explored (several members, more partitions) say so in a
// warning; an order cut short leaves the result incomplete.
func Simulate(ctx context.Context, o Options) (*Result, error) {
	res, err := simulateOrder(ctx, o)
	if err != nil || o.simStartAt != 0 {
		return res, err
	}
	parts := workloadPartitions(o.Workload)
	switch {
	case len(parts) < 2:
		return res, nil
	case o.grouped():
		res.Warnings = append(res.Warnings, FetchOrderWarning+"not explored with several members or rebalances: the verdict is for each member's lowest partition served first")
		return res, nil
	case len(parts) > maxFetchOrders:
		res.Warnings = append(res.Warnings, fmt.Sprintf(FetchOrderWarning+"not explored for %d partitions holding data (at most %d are): the verdict is for the lowest partition served first", len(parts), maxFetchOrders))
		return res, nil
	}
	main := orderOutcome(res)
	res.FetchOrders = []FetchOrder{fetchOrder(parts[0], res)}
	alt := o
	alt.Trace, alt.Progress = nil, nil
	for _, p := range parts[1:] {
		// one member holds every partition in order (roundrobin, sticky): the assignment
		// index of partition p is p
		alt.simStartAt = int(p)
		r, err := simulateOrder(ctx, alt)
		if err != nil {
			// cut short (an interrupt): the shape was not judged by every order
			res.Complete, res.Error = false, fmt.Sprintf("simulating partition %d served first: %v", p, err)
			res.Interrupted = r != nil && r.Interrupted
			res.incomplete()
			return res, err
		}
		res.FetchOrders = append(res.FetchOrders, fetchOrder(p, r))
		if got := orderOutcome(r); got != main {
			res.Warnings = append(res.Warnings, fmt.Sprintf(FetchOrderWarning+"with partition %d's records served first the outcome differs: %s (simulated; the table shows partition %d served first)", p, got, parts[0]))
			res.Verdict = verdict.Worse(res.Verdict, r.Verdict)
		}
	}
	return res, nil
}

// FetchOrderWarning starts the warning that names a fetch order with another outcome.
const FetchOrderWarning = "fetch order: "

// maxFetchOrders bounds the partitions holding data for which every first-served order
// is simulated (each is one more simulation).
const maxFetchOrders = 8

// orderOutcome says per partition what a fetch order decides: its verdict and what was
// lost or stranded.
func orderOutcome(r *Result) string {
	var parts []string
	for _, p := range r.Partitions {
		s := fmt.Sprintf("partition %d %s", p.Partition, p.Verdict)
		if len(p.Lost) > 0 {
			s += " " + kpart.Join(p.Lost)
		}
		if len(p.Stranded) > 0 {
			s += " stranded " + kpart.Join(p.Stranded)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// MaxSimulatedRecords bounds the records a simulation takes (the workload: --records,
// --spread), checked with the flags; a live run's bound is workload.MaxRecords. A
// simulation's cost follows its events, about 21 a record with no handler delay:
// 1,000,000 records (issue 25's shape) run in 1.1 to 1.3 s and 160 to 240 MB on a
// shared 2-core machine (BENCHMARKS.md); 10,000,000 (workload.MaxRecords) ran past
// 76 s and 2.35 GB (issue 27 §9).
const MaxSimulatedRecords = 1_000_000

// MaxSimulatedEvents bounds the events (the loop's tasks and timers) one simulation
// runs, every phase and restart together. A run that reaches it ends INCOMPLETE with
// ErrEventBudget, where a stretch of virtual time the model steps through (a stalled
// phase under a long --phase-timeout: stale batches delivered again and again) would
// otherwise cost time in proportion to the virtual time, not to what happens in it. It
// is above what MaxSimulatedRecords records need (21,000,000 events with the defaults).
const MaxSimulatedEvents = 24_000_000

// ErrEventBudget is returned when a simulation runs MaxSimulatedEvents events before
// its phase settles.
var ErrEventBudget = errors.New("the simulation spent its event budget before the phase settled")

// ValidateSimulated checks the options for a simulation: Validate's checks, and the
// workload within MaxSimulatedRecords.
func (o Options) ValidateSimulated() error {
	if err := o.Validate(); err != nil {
		return err
	}
	if n := o.Workload.Total(); n > MaxSimulatedRecords {
		return fmt.Errorf("--records/--spread: a simulation takes at most %d records, got %d (its cost follows its events, about 21 a record)", MaxSimulatedRecords, n)
	}
	return nil
}

func simulateOrder(ctx context.Context, o Options) (*Result, error) {
	o.TimeScale = 1
	if err := o.ValidateSimulated(); err != nil {
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
	var all []kpart.TopicPartition
	for p := int32(0); p < o.Partitions; p++ {
		all = append(all, kpart.TopicPartition{Topic: o.Topic, Partition: p})
	}
	// Every simulation runs its consumers in a managed group, one member or more: the
	// assignor of the group protocol, rebalances served from inside consume calls, and
	// librdkafka leaving the group when max.poll.interval.ms is exceeded (the JS client
	// gives librdkafka twice its own setting, #finalizedConfig).
	g := simkafka.NewGroup(lp, all, o.groupProtocol() == kafkaconf.GroupProtocolConsumer, 2*o.MaxPollInterval)
	s := &simRun{o: o, ctx: ctx, lp: lp, g: g, w: g.NewMember("", 0, nil), all: all, autoCommit: autoCommit, res: res, trace: trace, emit: emit,
		records: map[int32][]int64{}, highs: map[int32]int64{}, delivered: map[kpart.TopicPartition]map[int64]int{}}
	sim := s.w
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
	if err := s.phase(2, s.phase2Taken(offs)); err != nil {
		return s.finish(err)
	}
	if o.Commit == CommitLedger {
		if err := s.restarts(); err != nil {
			return s.finish(err)
		}
	}
	return s.finish(nil)
}

// simRun is one simulation in progress: Run's run with simulated clients in a
// simulated group.
type simRun struct {
	o          Options
	ctx        context.Context
	lp         *loop.Loop
	g          *simkafka.Group
	w          *simkafka.Client // writes the logs and reads the group's offsets; never joins
	autoCommit time.Duration
	res        *Result
	trace      func(traceevent.Event)
	emit       func(traceevent.Event)
	all        []kpart.TopicPartition
	members    []*simMember // the current consumer instances, in join order (left ones too)
	steps      int          // --rebalance-at steps not yet done
	records    map[int32][]int64
	highs      map[int32]int64
	delivered  map[kpart.TopicPartition]map[int64]int // over earlier consumer instances
	byMember   memberTally
	restarted  int
}

// simMember is one consumer of the group: its client, engine and ledger.
type simMember struct {
	name   string
	c      *simkafka.Client
	eng    *eachbatch.Engine
	ft     *frontierTracker
	joined time.Duration
	left   time.Duration
	gone   bool // left on --rebalance-at or stopped
}

// startConsumer starts a consumer instance: --members members join the group, and on
// the first start the --rebalance-at steps are scheduled.
func (s *simRun) startConsumer() error {
	s.members = nil
	for i := 0; i < s.o.members(); i++ {
		if err := s.join(); err != nil {
			return err
		}
	}
	if s.restarted > 0 {
		return nil
	}
	for _, st := range s.o.rebalanceSteps() {
		s.steps++
		s.lp.After(st.At-s.lp.Elapsed(), func() { s.step(st) })
	}
	return nil
}

// join starts a member: its engine's rebalance callback is the client's, as the JS
// client registers #rebalanceCallback with librdkafka.
func (s *simRun) join() error {
	name := fmt.Sprintf("m%d", len(s.members)+1)
	var trace func(traceevent.Event)
	if s.trace != nil {
		trace = s.trace
		if s.o.grouped() {
			trace = func(ev traceevent.Event) { ev.Member = name; s.trace(ev) }
		}
	}
	c := s.g.NewMember(name, s.autoCommit, trace)
	// A consume call returns runs of about fetch.message.max.bytes per partition in turn
	// (simkafka.Client.Chunk documents the assumption); --max-bytes is the property
	// librdkafka gets (it wins over --max-bytes-per-partition, as in kafkajs-compat).
	c.Chunk = max(1, s.o.MaxBytes/simkafka.RecordSize)
	c.StartAt = s.o.simStartAt
	eng, err := eachbatch.New(s.lp, c, s.o.EngineSettings(), trace)
	if err != nil {
		return err
	}
	ft := newFrontierTracker(s.lp, s.o.Commit == CommitLedger, c, max(s.o.AutoCommitInterval, time.Millisecond), trace)
	ft.maxInFlight, ft.maxBytes = s.o.MaxInFlight, s.o.MaxInFlightBytes
	ft.attach(eng)
	discarded := eng.OnDiscard
	eng.OnDiscard = func(recs []eachbatch.Record) {
		if s.res.LossAt == 0 {
			s.res.LossAt = s.lp.Elapsed()
		}
		discarded(recs)
	}
	c.OnNonEmpty = eng.NotifyNonEmpty
	c.OnRebalance = func(ev eachbatch.Rebalance) {
		// The application's ledger follows the ownership: an assigned partition starts
		// at the group's committed offset; a revoked one commits its completed
		// frontier (ledger mode), a lost one nothing.
		if ev.Assign {
			start := map[kpart.TopicPartition]int64{}
			for _, tp := range ev.Partitions {
				if o := c.Committed(tp); o >= 0 {
					start[tp] = o
				}
			}
			ft.assign(ev.Partitions, start)
		} else {
			ft.revoked(ev.Partitions, ev.Lost)
		}
		eng.RebalanceCallback(ev)
	}
	m := &simMember{name: name, c: c, eng: eng, ft: ft, joined: s.lp.Elapsed()}
	s.members = append(s.members, m)
	s.g.Join(c)
	s.lp.Post(eng.Start)
	return nil
}

// step runs one --rebalance-at step.
func (s *simRun) step(st RebalanceStep) {
	if st.Join {
		if err := s.join(); err != nil {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("--rebalance-at %s: %v", st, err))
		}
		s.steps--
		return
	}
	var m *simMember
	if st.Member > 0 && st.Member <= len(s.members) {
		m = s.members[st.Member-1]
	}
	if st.Member == 0 {
		for i := len(s.members) - 1; i >= 0 && m == nil; i-- {
			if !s.members[i].gone {
				m = s.members[i]
			}
		}
	}
	if m == nil || m.gone {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("--rebalance-at %s: no such member in the group", st))
		s.steps--
		return
	}
	m.gone = true
	// disconnect(): the workers stop, batches in flight finish (and store), then the
	// client closes: close() revokes (committing what was stored) and leaves.
	m.eng.Stop()
	var check func()
	check = func() {
		if !m.eng.Stopped() {
			s.lp.After(100*time.Millisecond, check)
			return
		}
		m.eng.FlushTrace()
		m.ft.shutdown()
		m.c.Close()
		m.left = s.lp.Elapsed()
		s.steps--
	}
	check()
}

// active are the members not stopped.
func (s *simRun) active() []*simMember {
	var out []*simMember
	for _, m := range s.members {
		if !m.gone {
			out = append(out, m)
		}
	}
	return out
}

func (s *simRun) stopConsumer() {
	if len(s.members) == 0 {
		return
	}
	active := s.active()
	for _, m := range active {
		m.eng.Stop()
	}
	expired := false
	t := s.lp.After(s.o.Grace, func() { expired = true })
	_ = s.lp.Run(context.Background(), func() bool {
		for _, m := range active {
			if !m.eng.Stopped() {
				return expired
			}
		}
		return true
	})
	t.Stop()
	for _, m := range active {
		m.eng.FlushTrace()
		m.ft.shutdown()
		m.c.Close()
		m.gone = true
	}
	for _, m := range s.members {
		for tp, d := range m.eng.Delivered() {
			dm := s.delivered[tp]
			if dm == nil {
				dm = map[int64]int{}
				s.delivered[tp] = dm
			}
			for off, n := range d {
				dm[off] += n
			}
		}
		for _, e := range append(m.eng.Errors, append(m.ft.Errors, m.ft.Regressions...)...) {
			s.res.Warnings = append(s.res.Warnings, e.Error())
		}
		if err := m.c.CloseError(); err != nil {
			s.res.Warnings = append(s.res.Warnings, err.Error())
		}
	}
	if s.o.grouped() {
		s.recordMembers()
	}
	s.members = nil
}

// recordMembers adds the current instance's members to the result (a restarted
// instance's members add to the same names).
func (s *simRun) recordMembers() {
	for _, m := range s.members {
		mr := s.byMember.record(s.res, m.name, m.joined, m.eng.Delivered())
		mr.Left = m.left
		mr.Lost += m.c.LostCount()
	}
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
	for _, m := range s.members {
		add(m.eng.Delivered())
	}
	return out
}

// deliveredTimes is how many times the record at offset of tp reached a handler, over
// every member and earlier instance: allDelivered's count of one record, without copying
// them all (asked after every task of phase 2).
func (s *simRun) deliveredTimes(tp kpart.TopicPartition, offset int64) int {
	n := s.delivered[tp][offset]
	for _, m := range s.members {
		n += m.eng.DeliveredTimes(tp, offset)
	}
	return n
}

func (s *simRun) committed() map[kpart.TopicPartition]int64 {
	out := make(map[kpart.TopicPartition]int64, len(s.all))
	for _, tp := range s.all {
		out[tp] = s.w.Committed(tp)
	}
	return out
}

func (s *simRun) member(c *simkafka.Client) *simMember {
	for _, m := range s.members {
		if m.c == c {
			return m
		}
	}
	return nil
}

// frontiers are the ledger frontiers of every partition's owner.
func (s *simRun) frontiers() map[kpart.TopicPartition]int64 {
	out := map[kpart.TopicPartition]int64{}
	for _, m := range s.active() {
		for tp, f := range m.ft.frontiers() {
			if s.g.Owner(tp) == m.c {
				out[tp] = f
			}
		}
	}
	return out
}

// phase2Taken holds once every phase-2 record was delivered, or taken from the source by
// the member that owns its partition (its position is past it): a record the JS cache
// takes and then drops without a rewind (v1.10.0 on a second expiry) is never fetched
// again, so waiting for its delivery would wait for ever. The phase still ends only
// when every member is quiescent; the judge then says what became of the record.
func (s *simRun) phase2Taken(offs map[int32]int64) func() bool {
	delivered := phase2Delivered(s.deliveredTimes, s.o.Topic, offs)
	return func() bool {
		if delivered() {
			return true
		}
		for p, off := range offs {
			tp := kpart.TopicPartition{Topic: s.o.Topic, Partition: p}
			if s.deliveredTimes(tp, off) > 0 {
				continue
			}
			c := s.g.Owner(tp)
			if c == nil || c.Position(tp) <= off {
				return false
			}
		}
		return true
	}
}

// phase runs the loop until every --rebalance-at step is done, the group is settled
// with every member in it, each member is quiescent, extra holds and the group's
// committed offsets equal what the commit mode commits, then records the phase.
func (s *simRun) phase(n int, extra func() bool) error {
	settled := func() bool {
		if s.steps > 0 || !s.g.Settled() {
			return false
		}
		for _, m := range s.active() {
			if !m.c.InGroup() || !m.eng.Quiescent() {
				return false
			}
		}
		if extra != nil && !extra() {
			return false
		}
		for _, tp := range s.all {
			m := s.member(s.g.Owner(tp))
			if m == nil {
				return false
			}
			want, ok := m.eng.StoredOffset(tp)
			if s.o.Commit == CommitLedger {
				want, ok = m.ft.frontier(tp)
				ok = ok && want > 0
			}
			if ok && s.w.Committed(tp) != want {
				return false
			}
		}
		return true
	}
	limit := s.o.PhaseTimeout
	if limit == 0 {
		perRecord := s.o.HandlerDelay / time.Duration(s.o.HandlerParallel)
		limit = time.Duration(s.o.Workload.Total()+len(s.o.Workload.Parts))*perRecord + 4*s.o.MaxPollInterval + time.Hour
		if steps := s.o.rebalanceSteps(); len(steps) > 0 && n == 1 {
			limit += steps[len(steps)-1].At
		}
	}
	timedOut := false
	deadline := s.lp.After(limit, func() { timedOut = true })
	defer deadline.Stop()
	budget := uint64(MaxSimulatedEvents)
	if s.o.simEvents > 0 {
		budget = s.o.simEvents
	}
	spent := func() bool { return s.lp.Ran() >= budget }
	if err := s.lp.Run(s.ctx, func() bool { return timedOut || spent() || settled() }); err != nil {
		return err
	}
	if spent() && !settled() {
		return fmt.Errorf("phase %d: %w (%d events, at %s of virtual time; no verdict: fewer records or a shorter --phase-timeout fit)",
			n, ErrEventBudget, budget, s.lp.Elapsed().Round(time.Millisecond))
	}
	if timedOut && !settled() {
		return fmt.Errorf("phase %d: %w within %s of virtual time", n, ErrPhaseTimeout, limit)
	}
	ph := newPhase(n, s.lp.Elapsed(), s.committed(), s.allDelivered(), s.frontiers(), s.records, s.highs)
	s.res.Phases = append(s.res.Phases, ph)
	s.emit(ph.event())
	return nil
}

func (s *simRun) pending() int {
	n := 0
	for _, m := range s.active() {
		n += m.ft.pending()
	}
	return n
}

func (s *simRun) restarts() error {
	return restartUntilDelivered(s, &s.restarted, s.o.MaxRestarts, s.res)
}

func (s *simRun) finish(runErr error) (*Result, error) {
	s.stopConsumer()
	s.res.Elapsed = s.lp.Elapsed()
	s.res.judge(s.allDelivered(), s.records, s.highs, nil)
	if runErr != nil && (errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)) && s.ctx.Err() != nil {
		s.res.Interrupted = true
		s.emit(traceevent.Event{Ev: traceevent.Interrupt})
	}
	s.res.Complete = runErr == nil
	if runErr != nil {
		s.res.Error = runErr.Error()
		s.res.incomplete()
	}
	s.emit(traceevent.Event{Ev: traceevent.Verdict, Partitions: s.res.partitionStates(), Reason: string(s.res.Verdict)})
	return s.res, runErr
}
