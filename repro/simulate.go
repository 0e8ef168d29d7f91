package repro

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/traceevent"
	"github.com/kstranded/kstranded/workload"
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
// Which partition's records reach a live consumer's queue first is librdkafka's fetch
// list, in the order the partitions became fetchable (simkafka.Client.Order), and some
// shapes' outcome depends on it (two partitions, one worker: the partition served first
// holds the worker while the other's records wait in the cache). So a run over 2 to
// maxFetchOrders partitions holding data is simulated once more for each rotation of
// the fetch list (Options.FetchOrder, as --fetch-order); an order with another outcome is
// named in the warnings, and the verdict is the worst of them: a shape is safe only if
// it is safe whatever the broker answers first. The partitions in the result are those
// of the first order (the lowest partition served first). When every partition holds
// the same records (a spread NxM), the first order stands for every order of the list,
// however many partitions (FetchOrder.EveryOrder: the k-th partition served has the
// k-th outcome). In a group (--members, --rebalance-at) the assignor hands partitions
// out by number, so no order stands for the others: each rotation is simulated, every
// member serving its own partitions in that order (the real members-3-two-joins served
// 0,1,2, 2,0,1 and 1,2,0 in three captures, each with its own losses, FIDELITY.md). Runs
// of more partitions than maxFetchOrders not explored say so in a warning; an order
// cut short leaves the result incomplete.
func Simulate(ctx context.Context, o Options) (*Result, error) {
	res, err := simulateOrders(ctx, o)
	if res != nil {
		for i := range res.FetchOrders {
			res.FetchOrders[i].Phase2Order = servedOrder(o.Phase2Order, workloadPartitions(o.Workload))
		}
	}
	return res, err
}

// simulateOrders is Simulate but for the phase-2 order of its fetch orders.
func simulateOrders(ctx context.Context, o Options) (*Result, error) {
	res, err := simulateOrder(ctx, o)
	if err != nil {
		return res, err
	}
	if o.FetchOrder != nil {
		// the order asked for (a capture's, say): that order only
		res.FetchOrders = []FetchOrder{fetchOrder(servedOrder(o.FetchOrder, workloadPartitions(o.Workload)), res)}
		res.FetchOrders[0].EveryOrder = o.alike()
		return res, nil
	}
	parts := workloadPartitions(o.Workload)
	switch {
	case len(parts) < 2:
		return res, nil
	case o.grouped() && len(parts) > maxFetchOrders:
		res.Warnings = append(res.Warnings, fmt.Sprintf(FetchOrderWarning+"not explored with several members or rebalances for %d partitions holding data (at most %d are): the verdict is for each member's lowest partition served first (--fetch-order simulates another: every member serves its partitions in that order)", len(parts), maxFetchOrders))
		return res, nil
	case o.alike() && len(parts) > maxFetchOrders:
		res.FetchOrders = []FetchOrder{fetchOrder(parts, res)}
		res.FetchOrders[0].EveryOrder = true
		res.Warnings = append(res.Warnings, fmt.Sprintf(FetchOrderWarning+"librdkafka serves partitions in the order they became fetchable, which varies from run to run; these %d partitions hold the same records, so in any order the k-th partition served has the outcome of this run's k-th (this run serves the lowest first, then up)", len(parts)))
		return res, nil
	case len(parts) > maxFetchOrders:
		res.Warnings = append(res.Warnings, fmt.Sprintf(FetchOrderWarning+"not explored for %d partitions holding data (at most %d are): the verdict is for the lowest partition served first", len(parts), maxFetchOrders))
		return res, nil
	}
	main := orderOutcome(res)
	res.FetchOrders = []FetchOrder{fetchOrder(parts, res)}
	// Partitions with the same records are served alike: the model tells them apart
	// only by their places in the fetch list (simkafka.Client.Order), so with any other
	// order of the list the k-th partition served has the k-th partition's outcome here
	// (TestEveryFetchOrderOfAlikePartitionsIsTheFirstRenamed). The list's order is the
	// order the partitions became fetchable in, any order (the captures, FIDELITY.md):
	// this run stands for them all; the rotations below name some of them.
	res.FetchOrders[0].EveryOrder = o.alike()
	alt := o
	alt.Trace, alt.Progress = nil, nil
	for _, p := range parts[1:] {
		// the fetch list's rotation that starts at p, as --fetch-order gives it: every
		// member serves its own partitions in that order
		alt.FetchOrder = rotate(parts, p)
		r, err := simulateOrder(ctx, alt)
		if err != nil {
			// cut short (an interrupt): the shape was not judged by every order
			res.Complete, res.Error = false, fmt.Sprintf("simulating partition %d served first: %v", p, err)
			res.Interrupted = r != nil && r.Interrupted
			res.incomplete()
			return res, err
		}
		res.FetchOrders = append(res.FetchOrders, fetchOrder(rotate(parts, p), r))
		if got := orderOutcome(r); got != main {
			res.Warnings = append(res.Warnings, fmt.Sprintf(FetchOrderWarning+"with partition %d's records served first the outcome differs: %s (simulated; the table shows partition %d served first)", p, got, parts[0]))
			res.Verdict = verdict.Worse(res.Verdict, r.Verdict)
		}
	}
	return res, nil
}

// alike reports whether the partitions are told apart by their places in the fetch list
// only: they hold the same records (a spread NxM) and no setting names one of them (the
// application's pause of named partitions, --pause-partitions; a seek of a named
// partition, --seek P:OFFSET@TIME).
//
// Not in a group (--members, --rebalance-at): the assignor hands partitions out by
// number, so a member's partitions are told apart by more than their places.
func (o Options) alike() bool {
	return alike(o.Workload) && len(o.PausePartitions) == 0 && !o.seeksNamePartitions() && !o.grouped()
}

// alike reports whether every partition of the workload holds the same records (a
// spread NxM): their outcomes then depend on their places in the fetch list only.
func alike(w workload.Spec) bool {
	for _, p := range w.Parts {
		if p.Records != w.Parts[0].Records {
			return false
		}
	}
	return len(w.Parts) > 1
}

// rotate is parts (sorted) from partition first on, round the list: the fetch list of
// the assignment order with first served first (simkafka.Client.Order).
func rotate(parts []int32, first int32) []int32 {
	i := slices.Index(parts, first)
	return slices.Concat(parts[i:], parts[:i])
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
	// The simulation has no session timeout (simulate has no --session-timeout): the
	// heartbeat need not be below it, as librdkafka's configuration check wants live. The
	// JS scenario's 1.5 s heartbeat at 1/100 scale is --heartbeat-interval 150s here.
	if o.HeartbeatInterval >= o.SessionTimeout {
		o.SessionTimeout = o.HeartbeatInterval + 1
	}
	if err := o.Validate(); err != nil {
		return err
	}
	switch {
	case o.ConsumerHeartbeatInterval < 0:
		return errors.New("--consumer-heartbeat-interval must be >= 0")
	case o.ConsumerHeartbeatInterval > 0 && o.groupProtocol() != kafkaconf.GroupProtocolConsumer:
		return errors.New("--consumer-heartbeat-interval is the consumer protocol's (--group-protocol consumer); the classic one's is --heartbeat-interval")
	}
	if n := o.Workload.Total(); n > MaxSimulatedRecords && !o.simScale {
		return fmt.Errorf("--records/--spread: a simulation takes at most %d records, got %d (its cost follows its events, about 21 a record)", MaxSimulatedRecords, n)
	}
	for _, order := range []struct {
		flag string
		ps   []int32
	}{{"--fetch-order", o.FetchOrder}, {"--phase2-order", o.Phase2Order}} {
		if len(order.ps) == 0 {
			continue
		}
		seen := map[int32]bool{}
		for _, p := range order.ps {
			switch {
			case p < 0 || p >= o.Partitions:
				return fmt.Errorf("%s: partition %d is not one of the topic's 0-%d", order.flag, p, o.Partitions-1)
			case seen[p]:
				return fmt.Errorf("%s: partition %d named twice", order.flag, p)
			}
			seen[p] = true
		}
	}
	return nil
}

// servedOrder is the partitions holding data in the order a fetch list that starts with
// first serves them: first's, then the others by number (simkafka.Client.Order's rule).
func servedOrder(first, parts []int32) []int32 {
	var out []int32
	for _, p := range first {
		if slices.Contains(parts, p) {
			out = append(out, p)
		}
	}
	for _, p := range parts {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
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
	d := newDriver(ctx, o, lp, o.Topic, group, res, trace)

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
	if o.groupProtocol() == kafkaconf.GroupProtocolClassic {
		// a member learns of another's join or leave at its next heartbeat
		g.SetHeartbeatInterval(o.HeartbeatInterval)
	} else {
		g.SetConsumerHeartbeatInterval(o.ConsumerHeartbeatInterval)
	}
	d.cl = &simCluster{o: o, d: d, g: g, w: g.NewMember("", 0, nil), all: all, autoCommit: autoCommit}
	return d.run(nil)
}

// simCluster is the scenario's cluster simulated: simkafka clients in a simulated
// group, on virtual time.
type simCluster struct {
	o          Options
	d          *driver
	g          *simkafka.Group
	w          *simkafka.Client // writes the logs and reads the group's offsets; never joins
	autoCommit time.Duration
	all        []kpart.TopicPartition
}

// simClient is a simulated member's client.
type simClient struct{ c *simkafka.Client }

func (c simClient) leave(time.Duration) { c.c.Close() }
func (c simClient) maxPollLeaves() int  { return c.c.LostCount() }
func (c simClient) problems() []error {
	if err := c.c.CloseError(); err != nil {
		return []error{err}
	}
	return nil
}

// sim is a simulated member's client.
func sim(m *member) *simkafka.Client { return m.client.(simClient).c }

func (s *simCluster) elapsed() time.Duration { return s.d.lp.Elapsed() }

// produce lays the workload out as the live producer writes it: each transaction's
// chunk of every partition, then its commit marker.
func (s *simCluster) produce() (ProduceResult, error) {
	o := s.o
	prod := ProduceResult{Topic: o.Topic, Spec: o.Workload}
	// Each partition's offsets in one array, with room for phase 2's record: the
	// driver judges every phase on this array, shared, not copied (issue 25).
	records := map[int32][]int64{}
	for _, part := range o.Workload.Parts {
		records[part.Partition] = make([]int64, 0, part.Records+1)
	}
	for _, tx := range o.Workload.Layout() {
		for _, part := range tx {
			tp := kpart.TopicPartition{Topic: o.Topic, Partition: part.Partition}
			kinds := make([]simkafka.Kind, part.Records, part.Records+1)
			if o.Workload.Transactions > 0 {
				kinds = append(kinds, simkafka.Control)
			}
			first := s.w.Append(tp, kinds...)
			for i := 0; i < part.Records; i++ {
				records[part.Partition] = append(records[part.Partition], first+int64(i))
			}
		}
	}
	for _, part := range o.Workload.Parts {
		tp := kpart.TopicPartition{Topic: o.Topic, Partition: part.Partition}
		prod.Partitions = append(prod.Partitions, ProducedPartition{Partition: part.Partition,
			Offsets: records[part.Partition], High: s.w.HighWatermark(tp)})
	}
	return prod, nil
}

func (s *simCluster) produceEach(parts []int32) (map[int32]int64, map[int32]int64, error) {
	offs, highs := map[int32]int64{}, map[int32]int64{}
	// in Phase2Order: the order the records reach the consumer (simkafka.Client.Append)
	for _, p := range servedOrder(s.o.Phase2Order, parts) {
		tp := kpart.TopicPartition{Topic: s.o.Topic, Partition: p}
		offs[p] = s.w.Append(tp, simkafka.Data)
		highs[p] = s.w.HighWatermark(tp)
	}
	return offs, highs, nil
}

func (s *simCluster) start(d *driver, n int) ([]*member, error) {
	var ms []*member
	for i := 0; i < n; i++ {
		m, err := s.join(d, fmt.Sprintf("m%d", i+1))
		if m != nil {
			ms = append(ms, m)
		}
		if err != nil {
			return ms, err
		}
	}
	return ms, nil
}

// join starts a member: its engine's rebalance callback is the client's, as the JS
// client registers #rebalanceCallback with librdkafka.
func (s *simCluster) join(d *driver, name string) (*member, error) {
	var trace func(traceevent.Event)
	if d.trace != nil {
		trace = d.trace
		if s.o.grouped() {
			trace = func(ev traceevent.Event) { ev.Member = name; d.trace(ev) }
		}
	}
	c := s.g.NewMember(name, s.autoCommit, trace)
	// A consume call returns runs of about fetch.message.max.bytes per partition in turn
	// (simkafka.Client.Chunk documents the assumption); --max-bytes is the property
	// librdkafka gets (it wins over --max-bytes-per-partition, as in kafkajs-compat).
	c.Chunk = max(1, s.o.MaxBytes/simkafka.RecordSize)
	c.Order = s.o.FetchOrder
	m := &member{name: name, client: simClient{c}}
	if err := d.attach(m, c, c, trace); err != nil {
		return nil, err
	}
	eng, ft := m.eng, m.ft
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
	s.g.Join(c)
	d.lp.Post(eng.Start)
	return m, nil
}

// whenStopped is disconnect(): the workers stop, batches in flight finish (and store);
// then the client closes.
func (s *simCluster) whenStopped(m *member, then func()) {
	m.eng.Stop()
	var check func()
	check = func() {
		if !m.eng.Stopped() {
			s.d.lp.After(100*time.Millisecond, check)
			return
		}
		then()
	}
	check()
}

func (s *simCluster) committed() map[kpart.TopicPartition]int64 {
	out := make(map[kpart.TopicPartition]int64, len(s.all))
	for _, tp := range s.all {
		out[tp] = s.w.Committed(tp)
	}
	return out
}

func (s *simCluster) member(c *simkafka.Client) *member {
	for _, m := range s.d.members {
		if sim(m) == c {
			return m
		}
	}
	return nil
}

// frontiers are the ledger frontiers of every partition's owner.
func (s *simCluster) frontiers(active []*member) map[kpart.TopicPartition]int64 {
	out := map[kpart.TopicPartition]int64{}
	for _, m := range active {
		for tp, f := range m.ft.frontiers() {
			if s.g.Owner(tp) == sim(m) {
				out[tp] = f
			}
		}
	}
	return out
}

// phase2Done holds once every phase-2 record was delivered, or taken from the source by
// the member that owns its partition (its position is past it): a record the JS cache
// takes and then drops without a rewind (v1.10.0 on a second expiry) is never fetched
// again, so waiting for its delivery would wait for ever. The phase still ends only
// when every member is quiescent; the judge then says what became of the record.
func (s *simCluster) phase2Done(d *driver, offs map[int32]int64) func() bool {
	pend := newPhase2Pending(d.deliveredTimes, s.o.Topic, offs)
	return func() bool {
		if pend.delivered() {
			return true
		}
		for _, p := range pend.pending {
			tp := kpart.TopicPartition{Topic: s.o.Topic, Partition: p}
			c := s.g.Owner(tp)
			if c == nil || c.Position(tp) <= offs[p] {
				return false
			}
		}
		return true
	}
}

// settle runs the loop until the group is settled with every member in it, each member
// is quiescent, extra holds and the group's committed offsets equal what the commit
// mode commits.
func (s *simCluster) settle(d *driver, n int, extra func() bool) (map[kpart.TopicPartition]int64, error) {
	settled := func() bool {
		if !s.g.Settled() {
			return false
		}
		// d.active() without its slice: this runs after every task (a quarter of the
		// seed's allocations were that slice)
		for _, m := range d.members {
			if !m.gone && (!sim(m).InGroup() || !m.eng.Quiescent()) {
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
				if ok && s.w.Committed(tp) != want {
					return false
				}
				continue
			}
			// librdkafka commits a stored offset only above the committed one
			// (rd_kafka_topic_partition_list_set_offsets, rdkafka_partition.c): a store
			// below it (1.0.0's two workers on one partition ending out of order) is
			// never committed, and the partition is settled
			if ok && s.w.Committed(tp) < want {
				return false
			}
		}
		return true
	}
	// Simulated, the slack is an hour of virtual time, and phase 1 covers the
	// --rebalance-at steps.
	slack := time.Hour
	if steps := s.o.rebalanceSteps(); len(steps) > 0 && n == 1 {
		slack += steps[len(steps)-1].At
	}
	limit := s.o.phaseLimit(slack)
	timedOut := false
	deadline := d.lp.After(limit, func() { timedOut = true })
	defer deadline.Stop()
	budget := uint64(MaxSimulatedEvents)
	if s.o.simEvents > 0 {
		budget = s.o.simEvents
	} else if s.o.simScale {
		budget = ^uint64(0)
	}
	spent := func() bool { return d.lp.Ran() >= budget }
	if err := d.lp.Run(d.ctx, func() bool { return timedOut || spent() || settled() }); err != nil {
		return nil, err
	}
	if spent() && !settled() {
		return nil, fmt.Errorf("%w (%d events, at %s of virtual time; no verdict: fewer records or a shorter --phase-timeout fit)",
			ErrEventBudget, budget, d.lp.Elapsed().Round(time.Millisecond))
	}
	if timedOut && !settled() {
		return nil, fmt.Errorf("%w within %s of virtual time", ErrPhaseTimeout, limit)
	}
	return s.committed(), nil
}

// current: a simulation judges on the final commit only.
func (s *simCluster) current(*driver) map[kpart.TopicPartition]int64 { return nil }

func (s *simCluster) stopped(runErr error) error { return runErr }
