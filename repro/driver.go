package repro

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// cluster is what the scenario driver runs on: the live one (librdkafka clients on a
// broker, run.go) or the simulated one (simkafka on virtual time, simulate.go). The
// phases, the members, the restarts, finishing and judging are the driver's, once;
// live and simulated runs differ only where a cluster's method does.
type cluster interface {
	// elapsed is the run's time for the result (live: the wall clock since the run
	// began; simulated: virtual time).
	elapsed() time.Duration
	// produce writes the workload; produceEach one record on each partition (phase 2),
	// returning its offset and the partition's high watermark after it.
	produce() (ProduceResult, error)
	produceEach(parts []int32) (offs, highs map[int32]int64, err error)
	// start starts a consumer instance of n members in the group (m1 to mn); the
	// members made are returned on an error too, to be stopped.
	start(d *driver, n int) ([]*member, error)
	// join starts one member mid-run (--rebalance-at TIME:join); a member returned
	// with an error is stopped with the others.
	join(d *driver, name string) (*member, error)
	// whenStopped stops m's engine and calls then once its batches in flight finished
	// (--rebalance-at TIME:leave).
	whenStopped(m *member, then func())
	// settle runs the loop until the members are quiescent, extra holds and the
	// group's committed offsets equal what the commit mode commits, and returns them.
	settle(d *driver, n int, extra func() bool) (map[kpart.TopicPartition]int64, error)
	// frontiers are the ledger frontiers a phase records.
	frontiers(active []*member) map[kpart.TopicPartition]int64
	// phase2Done is phase 2's end condition on its records (offs): live, each was
	// delivered; simulated, each was delivered or taken by its partition's owner.
	phase2Done(d *driver, offs map[int32]int64) func() bool
	// current is what the group has committed when a run finishes early, if it can be
	// read (nil: not read).
	current(d *driver) map[kpart.TopicPartition]int64
	// stopped is called once the members stopped at the end of a run; it may turn a
	// clean run into a failed one (live: another member in a shared group).
	stopped(runErr error) error
}

// memberClient is a member's consumer client, as the driver stops it.
type memberClient interface {
	// leave closes the client (close() revokes, commits what is stored, and leaves the
	// group) within bound; what went wrong is kept for problems.
	leave(bound time.Duration)
	// problems are what went wrong inside the client: errors the JS client would only
	// log, a failed close.
	problems() []error
	// maxPollLeaves counts the times librdkafka left the group for it on
	// max.poll.interval.ms.
	maxPollLeaves() int
}

// member is one consumer of the group: its client, engine and ledger.
type member struct {
	name   string
	client memberClient
	eng    *eachbatch.Engine // nil until its engine started
	ft     *frontierTracker
	joined time.Duration
	left   time.Duration
	gone   bool // left on --rebalance-at, or stopped
}

// driver is one scenario in progress on a cluster.
type driver struct {
	o         Options
	ctx       context.Context
	cl        cluster
	lp        *loop.Loop
	topic     string
	res       *Result
	trace     func(traceevent.Event) // nil: no trace
	members   []*member              // the current consumer instance, in join order (left ones too)
	began     time.Duration          // on lp's clock, when the first instance started: join and leave times count from it
	steps     int                    // --rebalance-at steps not yet done
	records   map[int32][]int64
	highs     map[int32]int64
	delivered map[kpart.TopicPartition]*kpart.Counts // over earlier consumer instances
	byMember  memberTally
	restarted int
	failed    bool // the run ended on an error (stop)
}

// newDriver begins a run of group on topic: its trace starts with the run's event.
func newDriver(ctx context.Context, o Options, lp *loop.Loop, topic, group string, res *Result, trace func(traceevent.Event)) *driver {
	d := &driver{o: o, ctx: ctx, lp: lp, topic: topic, res: res, trace: trace,
		records: map[int32][]int64{}, highs: map[int32]int64{}, delivered: map[kpart.TopicPartition]*kpart.Counts{}}
	d.emit(traceevent.Event{Ev: traceevent.Run, Schema: traceevent.Schema, Topic: topic, Group: group,
		Policy: string(o.Policy), Commit: string(o.Commit), Settings: o.settingsMap()})
	return d
}

func (d *driver) emit(ev traceevent.Event) {
	if d.trace == nil {
		return
	}
	ev.Time, ev.AtMs = d.lp.Now().UTC(), float64(d.lp.Elapsed())/float64(time.Millisecond)
	d.trace(ev)
}

// run runs the scenario: produce the workload; phase 1 drains it; phase 2 produces one
// more record on every partition that held workload records, which wakes the consumer
// so that auto-commit moves past whatever was dropped, on every partition where
// something was (as in production, where records keep arriving); with --commit ledger
// phase 3 restarts the consumer while records stay stranded. started, if any, runs once
// the first consumer instance started; its error ends the run with no result.
func (d *driver) run(started func() error) (*Result, error) {
	if err := d.produce(); err != nil {
		return nil, err
	}
	err := d.startConsumer()
	if err == nil && started != nil {
		err = started()
	}
	if err != nil {
		d.stopConsumer()
		return nil, err
	}
	return d.finish(d.phases())
}

// produce writes the workload and records it.
func (d *driver) produce() error {
	prod, err := d.cl.produce()
	if err != nil {
		return err
	}
	d.res.Produced = prod
	for _, pp := range prod.Partitions {
		// shared with the result, not copied: phase 2's append goes past its length,
		// unseen by it (in place when the cluster left room for it)
		d.records[pp.Partition] = pp.Offsets
		d.highs[pp.Partition] = pp.High
		d.emit(traceevent.Event{Ev: traceevent.Produce, Topic: d.topic, Partition: traceevent.P(pp.Partition), N: len(pp.Offsets),
			First: traceevent.P(pp.First()), Last: traceevent.P(pp.Last()), High: traceevent.P(pp.High)})
	}
	return nil
}

func (d *driver) phases() error {
	if err := d.phase(1, nil); err != nil {
		return err
	}
	parts := workloadPartitions(d.o.Workload)
	offs, highs, err := d.cl.produceEach(parts)
	if err != nil {
		return err
	}
	for _, p := range parts {
		d.records[p] = append(d.records[p], offs[p])
		d.highs[p] = highs[p]
		d.emit(traceevent.Event{Ev: traceevent.Produce, Phase: 2, Topic: d.topic, Partition: traceevent.P(p), N: 1,
			First: traceevent.P(offs[p]), Last: traceevent.P(offs[p]), High: traceevent.P(highs[p])})
	}
	if err := d.phase(2, d.cl.phase2Done(d, offs)); err != nil {
		return err
	}
	if d.o.Commit == CommitLedger {
		// Phase 3: restart the consumer in the same group, as an operator would; the
		// ledger's commit never passed a stranded record, so the restart resumes below
		// it. Restart again while records remain stranded, up to MaxRestarts.
		return d.restarts()
	}
	return nil
}

// startConsumer starts a consumer instance: --members members join the group, and on
// the first start the --rebalance-at steps are scheduled.
func (d *driver) startConsumer() error {
	ms, err := d.cl.start(d, d.o.members())
	d.members = ms
	if err != nil {
		return err
	}
	if d.restarted == 0 {
		d.began = d.lp.Elapsed()
		for _, st := range d.o.rebalanceSteps() {
			d.steps++
			d.lp.After(d.o.scale(st.At), func() { d.step(st) })
		}
	}
	return nil
}

// attach gives m its engine over src and its ledger committing to target: the shared
// part of starting a member on either cluster.
func (d *driver) attach(m *member, src eachbatch.Source, target committer, trace func(traceevent.Event)) error {
	eng, err := eachbatch.New(d.lp, src, d.o.EngineSettings(), trace)
	if err != nil {
		return err
	}
	m.eng = eng
	ft := newFrontierTracker(d.lp, d.o.Commit == CommitLedger, target, max(d.o.scale(d.o.AutoCommitInterval), time.Millisecond), trace)
	ft.maxInFlight, ft.maxBytes = d.o.MaxInFlight, d.o.MaxInFlightBytes
	ft.attach(eng)
	discarded := eng.OnDiscard
	eng.OnDiscard = func(recs []eachbatch.Record) {
		// The engine reports records dropped from the cache with no rewind at or below
		// them: from here on nothing will fetch them again.
		if d.res.LossAt == 0 {
			d.res.LossAt = d.cl.elapsed()
		}
		discarded(recs)
	}
	m.ft = ft
	return nil
}

// step runs one --rebalance-at step. A join starts a member (cluster.join). A leave is
// disconnect(): the member's engine stops (batches in flight finish), its ledger commits
// its completed frontier (ledger mode), and its client closes (close() revokes,
// committing what was stored, and leaves the group).
func (d *driver) step(st RebalanceStep) {
	if st.Join {
		at := d.lp.Elapsed() - d.began
		m, err := d.cl.join(d, fmt.Sprintf("m%d", len(d.members)+1))
		if m != nil {
			m.joined = at
			d.members = append(d.members, m)
		}
		if err != nil {
			d.res.Warnings = append(d.res.Warnings, fmt.Sprintf("--rebalance-at %s: not done: %v", st, err))
		}
		d.steps--
		return
	}
	var m *member
	if st.Member > 0 && st.Member <= len(d.members) {
		m = d.members[st.Member-1]
	}
	if st.Member == 0 {
		for i := len(d.members) - 1; i >= 0 && m == nil; i-- {
			if !d.members[i].gone {
				m = d.members[i]
			}
		}
	}
	if m == nil || m.gone || m.eng == nil {
		d.res.Warnings = append(d.res.Warnings, fmt.Sprintf("--rebalance-at %s: not done (no such member in the group)", st))
		d.steps--
		return
	}
	m.gone = true
	d.cl.whenStopped(m, func() {
		m.eng.FlushTrace()
		m.ft.shutdown()
		m.client.leave(d.o.Timeout)
		m.left = d.lp.Elapsed() - d.began
		d.steps--
	})
}

// active are the members still in the group.
func (d *driver) active() []*member {
	var out []*member
	for _, m := range d.members {
		if !m.gone {
			out = append(out, m)
		}
	}
	return out
}

// stopConsumer stops admitting, lets batches in flight finish within the grace period
// while the members keep their assignments, commits only the completed owned frontier
// (ledger mode; the client commits what is stored on close in auto mode), and closes.
func (d *driver) stopConsumer() {
	ms := d.members
	if len(ms) == 0 {
		return
	}
	d.members = nil
	grace, closeBound := d.o.Grace, d.res.cleanup(d.o.Timeout)
	if d.res.unreachable {
		// Nothing can be committed or read back: no grace for batches in flight (and
		// a close bounded so that the run ends within --timeout of the broker's death).
		grace = 0
	}
	var running []*member
	for _, m := range ms {
		if m.eng != nil && !m.gone {
			m.eng.Stop()
			running = append(running, m)
		}
	}
	if len(running) > 0 {
		expired := false
		t := d.lp.After(grace, func() { expired = true })
		_ = d.lp.Run(context.Background(), func() bool {
			for _, m := range running {
				if !m.eng.Stopped() {
					return expired
				}
			}
			return true
		})
		t.Stop()
	}
	for _, m := range ms {
		if m.eng != nil {
			m.eng.FlushTrace()
			addDelivered(d.delivered, m.eng.DeliveredCounts())
		}
		if !m.gone {
			if m.eng != nil && !d.res.unreachable {
				m.ft.shutdown()
			}
			m.client.leave(closeBound)
			m.gone = true
		}
		d.warn(m)
	}
	if d.o.grouped() {
		d.recordMembers(ms)
	}
}

// recordMembers adds an instance's members to the result. A restarted instance (phase
// 3) adds to the same names, counting distinct records; a member that joined on
// --rebalance-at keeps its join time.
func (d *driver) recordMembers(ms []*member) {
	for _, m := range ms {
		var delivered map[kpart.TopicPartition]*kpart.Counts
		if m.eng != nil {
			delivered = m.eng.DeliveredCounts()
		}
		mr := d.byMember.record(d.res, m.name, m.joined, delivered)
		if m.left > 0 {
			mr.Left = m.left
		}
		mr.MaxPollLeaves += m.client.maxPollLeaves()
	}
}

// warn turns what went wrong inside a member (client errors the JS client would only
// log, failed stores, seeks, commits, pauses) into warnings of the result, so a clean
// verdict is never printed over them.
func (d *driver) warn(m *member) {
	var errs []error
	if m.eng != nil {
		errs = append(errs, m.eng.Errors...)
	}
	if m.ft != nil {
		errs = append(errs, m.ft.Errors...)
		errs = append(errs, m.ft.Regressions...)
	}
	errs = append(errs, m.client.problems()...)
	seen := map[string]int{}
	var order []string
	for _, e := range errs {
		msg := suppressed.ReplaceAllString(e.Error(), "")
		if seen[msg] == 0 {
			order = append(order, msg)
		}
		seen[msg]++
	}
	for _, msg := range order {
		if n := seen[msg]; n > 1 {
			msg = fmt.Sprintf("%s (%d times)", msg, n)
		}
		d.res.Warnings = append(d.res.Warnings, msg)
	}
}

// suppressed is librdkafka's count of identical errors it did not log again
// (rd_kafka_broker_fail: ", N identical error(s) suppressed"); without it the same
// error dedupes to one warning with its count.
var suppressed = regexp.MustCompile(`, \d+ identical error\(s\) suppressed`)

// addDelivered adds from's counts to to's (from's are read, never changed).
func addDelivered(to, from map[kpart.TopicPartition]*kpart.Counts) {
	for tp, c := range from {
		m := to[tp]
		if m == nil {
			m = &kpart.Counts{}
			to[tp] = m
		}
		m.Merge(c)
	}
}

// allDelivered merges what earlier consumer instances and the current one delivered.
// A partition only one source delivered is that source's counts, shared, not copied:
// the result is read, never changed.
func (d *driver) allDelivered() map[kpart.TopicPartition]*kpart.Counts {
	srcs := []map[kpart.TopicPartition]*kpart.Counts{d.delivered}
	for _, m := range d.members {
		if m.eng != nil {
			srcs = append(srcs, m.eng.DeliveredCounts())
		}
	}
	out := map[kpart.TopicPartition]*kpart.Counts{}
	shared := map[kpart.TopicPartition]bool{}
	for _, src := range srcs {
		for tp, c := range src {
			switch prev := out[tp]; {
			case prev == nil:
				out[tp], shared[tp] = c, true
			case shared[tp]:
				m := prev.Clone()
				m.Merge(c)
				out[tp], shared[tp] = m, false
			default:
				prev.Merge(c)
			}
		}
	}
	return out
}

// deliveredTimes is how many times the record at offset of tp reached a handler, over
// every consumer instance: allDelivered's count of one record, without copying them all
// (phase 2 asks it after every task; copying every delivery each time was quadratic).
func (d *driver) deliveredTimes(tp kpart.TopicPartition, offset int64) int {
	n := d.delivered[tp].Get(offset)
	for _, m := range d.members {
		if m.eng != nil {
			n += m.eng.DeliveredTimes(tp, offset)
		}
	}
	return n
}

// phase runs the loop until every --rebalance-at step is done and the cluster is
// settled (cluster.settle), then records the phase.
func (d *driver) phase(n int, extra func() bool) error {
	if d.steps > 0 {
		// --rebalance-at steps still to come: the phase covers them.
		inner := extra
		extra = func() bool { return d.steps == 0 && (inner == nil || inner()) }
	}
	committed, err := d.cl.settle(d, n, extra)
	if err != nil {
		if errors.Is(err, ErrPhaseTimeout) {
			return fmt.Errorf("phase %d: %w", n, err)
		}
		return err
	}
	ph := newPhase(n, d.cl.elapsed(), committed, d.allDelivered(), d.cl.frontiers(d.active()), d.records, d.highs)
	d.res.Phases = append(d.res.Phases, ph)
	d.emit(ph.event())
	return nil
}

func (d *driver) pending() int {
	n := 0
	for _, m := range d.active() {
		n += m.ft.pending()
	}
	return n
}

// restarts is --commit ledger's phase 3: restart the consumer in the same group until
// the ledger holds no pending record or --max-restarts restarts were made.
func (d *driver) restarts() error {
	for {
		d.stopConsumer()
		d.restarted++
		if err := d.startConsumer(); err != nil {
			return err
		}
		if err := d.phase(3, nil); err != nil {
			return err
		}
		if d.pending() == 0 || d.restarted >= d.o.MaxRestarts {
			if n := d.pending(); n > 0 {
				d.res.Warnings = append(d.res.Warnings, fmt.Sprintf("%d records still stranded after %d restarts (--max-restarts)", n, d.restarted))
			}
			d.res.Restarts = d.restarted
			return nil
		}
		// Quiescent with records still pending: the bug stranded them again. The
		// restart phase is recorded once, with its final state.
		d.res.Phases = d.res.Phases[:len(d.res.Phases)-1]
	}
}

// stop ends a run that ended on runErr: it reads what the group has committed, if it
// can (cluster.current), and stops the consumer, within the clean-up bound of a broker
// that stopped answering if it did.
func (d *driver) stop(runErr error) map[kpart.TopicPartition]int64 {
	if errors.Is(runErr, ErrUnreachable) {
		d.res.unreachable = true
	}
	d.failed = runErr != nil
	current := d.cl.current(d)
	d.stopConsumer()
	return current
}

// finish stops the consumer and judges what was delivered and committed.
func (d *driver) finish(runErr error) (*Result, error) {
	current := d.stop(runErr)
	runErr = unreachableErr(d, d.cl.stopped(runErr))
	d.res.Elapsed = d.cl.elapsed()
	d.res.judge(d.allDelivered(), d.records, d.highs, current)
	if runErr != nil && (errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)) && d.ctx.Err() != nil {
		d.res.Interrupted = true
		d.emit(traceevent.Event{Ev: traceevent.Interrupt})
	}
	d.res.Complete = runErr == nil
	if runErr != nil {
		d.res.Error = runErr.Error()
		d.res.incomplete()
	}
	d.emit(traceevent.Event{Ev: traceevent.Verdict, Partitions: d.res.partitionStates(), Reason: string(d.res.Verdict)})
	return d.res, runErr
}
