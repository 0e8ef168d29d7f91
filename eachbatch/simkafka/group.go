package simkafka

import (
	"fmt"
	"sort"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// Group is the simulated group coordinator and the topic's logs, shared by the clients
// made on it. A Client from New is alone in an unmanaged group (assigned by hand with
// Client.Assign); NewGroup makes a managed group whose members (Group.NewMember, then
// Group.Join) are assigned by the coordinator and see rebalances through
// eachbatch.GroupSource, served from inside Consume as librdkafka serves them.
//
// What a managed group models, from librdkafka (src/rdkafka_cgrp.c, rdkafka_assignment.c)
// and the JS client (lib/kafkajs/_consumer.js):
//
//   - the assignor: classic groups use roundrobin, the strategy #kafkaJSToConsumerConfig
//     sets when the application names none (partitions in order, dealt to members in
//     turn; members are ordered by join order here, by member id in librdkafka, which
//     is random: which member gets which partition may differ live, not how many).
//     Consumer-protocol groups (KIP-848) get a balanced, sticky target (the broker's
//     uniform assignor keeps partitions where they are when it can).
//
//   - EAGER (classic): a rebalance revokes every member's whole assignment; the new
//     assignment is handed out once every member has unassigned (JoinGroup/SyncGroup
//     wait for all). COOPERATIVE (consumer protocol): only partitions that move are
//     revoked, and a partition is assigned to its new owner once the old one released it.
//
//   - max.poll.interval.ms (the value librdkafka is given, twice the JS setting):
//     rd_kafka_cgrp_max_poll_interval_check_tmr_cb checks every 500 ms whether the
//     application has not polled for longer, and then leaves the group, resets its
//     member id and revokes every partition as lost. A lost assignment commits nothing
//     (rd_kafka_cgrp_assigned_offsets_commit: "not committing assigned offsets:
//     assignment lost"), and the member rejoins only once the application polls again
//     (rd_kafka_cgrp_join: "do not rejoin group until the application has called
//     poll") and has unassigned.
//
//   - unassign commits the stored offsets of the partitions it removes, unless they were
//     lost (rd_kafka_assignment_serve_removals with enable.auto.commit).
//
//   - commits from a client that is not in the group (left, or past max.poll.interval)
//     are refused (the broker answers UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION).
//
//   - a partition newly assigned starts at the group's committed offset.
//
//   - heartbeats (classic, SetHeartbeatInterval): a member in the group learns of a
//     rebalance another member caused (a join, a leave, a max.poll.interval leave) from
//     the coordinator's answer to its next heartbeat (REBALANCE_IN_PROGRESS,
//     rd_kafka_cgrp_handle_Heartbeat), every heartbeat.interval.ms counted from its join;
//     only then is its revoke queued for its next poll, and only then is it in
//     wait-unassign-call. Seen with the real JS client (FIDELITY.md,
//     member-leave-mid-batch): m2 joined 57 ms after m1's assignment, and m1's consume
//     calls in the next second served no revoke.
//
//   - heartbeats (consumer protocol, SetConsumerHeartbeatInterval): a member learns its
//     new target (partitions to revoke, partitions newly its own) from the answer to its
//     next ConsumerGroupHeartbeat; a joining member is answered at once.
//
// Not modeled: the rebalance timeout (a member slow to unassign holds an eager
// rebalance until it does; librdkafka's own max.poll.interval check, which has the same
// length, usually removes it first), session timeouts, static membership.
type Group struct {
	l    *loop.Loop
	logs map[TP][]Kind
	// changes counts the changes to what EndEvidence reads (a log, a client's
	// position or assignment), so a caller can skip asking again when it is the same.
	changes   uint64
	committed map[TP]int64
	commits   []Commit
	clients   []*Client

	managed     bool
	cooperative bool
	maxPoll     time.Duration
	partitions  []TP
	members     []*Client // in the group, in join order
	syncing     bool      // eager: a rebalance waits for members to unassign
	owner       map[TP]*Client
	moving      map[TP]*Client // cooperative: released to this member once its owner unassigns
	heartbeat   time.Duration  // classic: members learn of a rebalance at their next heartbeat (0: at once)
	// cooperative (consumer protocol): members learn of a new target assignment at their
	// next ConsumerGroupHeartbeat (0: at once); joining is the member whose join's
	// heartbeat is being answered (it learns at once)
	consumerHeartbeat time.Duration
	joining           *Client
}

// SetConsumerHeartbeatInterval is the broker's group.consumer.heartbeat.interval.ms for a
// consumer-protocol group (KIP-848): a member learns of partitions to revoke or newly
// assigned to it from the answer to its next ConsumerGroupHeartbeat, every interval
// counted from its join, except a joining member, whose first heartbeat is answered with
// the partitions free then. A member's release reaches the broker at once (librdkafka
// expedites the heartbeat that acknowledges it). Seen with the real JS client on the
// embedded broker (kfake, 5000 ms; FIDELITY.md, kip848 shapes): a member joining 5 s in
// was given its partitions at its own heartbeat 10 s after the old owner's revoke.
// 0 (NewGroup's) tells every member at once.
func (g *Group) SetConsumerHeartbeatInterval(d time.Duration) { g.consumerHeartbeat = d }

// SetHeartbeatInterval is heartbeat.interval.ms of a classic group's members: a member
// learns of a rebalance it did not cause at its next heartbeat. 0 (NewGroup's) tells
// every member at once.
func (g *Group) SetHeartbeatInterval(d time.Duration) { g.heartbeat = d }

// MaxPollCheck is how often librdkafka checks max.poll.interval.ms (a 500 ms timer,
// not scaled with the run).
const MaxPollCheck = 500 * time.Millisecond

func newGroup(l *loop.Loop) *Group {
	return &Group{l: l, logs: map[TP][]Kind{}, committed: map[TP]int64{}, owner: map[TP]*Client{}, moving: map[TP]*Client{}}
}

// NewGroup returns a managed group subscribed to partitions. cooperative is
// group.protocol=consumer; maxPoll is the max.poll.interval.ms librdkafka enforces (0:
// never). Each member traces its group events through its own trace (NewMember).
func NewGroup(l *loop.Loop, partitions []TP, cooperative bool, maxPoll time.Duration) *Group {
	g := newGroup(l)
	g.managed, g.cooperative, g.maxPoll = true, cooperative, maxPoll
	g.partitions = append([]TP(nil), partitions...)
	kpart.Sort(g.partitions)
	return g
}

// NewMember returns a client of the group that has not joined yet.
func (g *Group) NewMember(name string, autoCommit time.Duration, trace func(traceevent.Event)) *Client {
	c := g.newClient(autoCommit, trace)
	c.name = name
	return c
}

func (g *Group) newClient(autoCommit time.Duration, trace func(traceevent.Event)) *Client {
	tracing := trace != nil
	if trace == nil {
		trace = func(traceevent.Event) {}
	}
	c := &Client{l: g.l, g: g, pos: map[TP]int64{}, stored: map[TP]int64{}, autoCommit: autoCommit, paused: map[TP]bool{}, trace: trace,
		tracing: tracing}
	g.clients = append(g.clients, c)
	return c
}

// Members are the clients in the group now, in join order.
func (g *Group) Members() []*Client { return append([]*Client(nil), g.members...) }

// Owner is the member holding (or being handed) tp, nil when none.
func (g *Group) Owner(tp TP) *Client { return g.owner[tp] }

// Settled reports whether no rebalance is under way: nothing waits to be revoked or
// assigned, and no member has an event it has not been served.
func (g *Group) Settled() bool {
	if g.syncing || len(g.moving) > 0 {
		return false
	}
	for _, m := range g.members {
		if len(m.events) > 0 {
			return false
		}
		// consumer protocol: a heartbeat still to tell it of its target (asked after
		// every task: the diff, a walk of every partition, only when a heartbeat is armed)
		if m.chbTimer != nil {
			if r, a := m.targetDiff(); len(r)+len(a) > 0 {
				return false
			}
		}
	}
	return true
}

func (g *Group) emit(c *Client, ev traceevent.Event) {
	if !c.tracing {
		return
	}
	ev.Time, ev.AtMs = g.l.Now().UTC(), msSince(g.l)
	if c.name != "" {
		ev.Member = c.name
	}
	c.trace(ev)
}

// Join is subscribe(): the client joins and the group rebalances.
func (g *Group) Join(c *Client) {
	if c.inGroup {
		return
	}
	c.inGroup, c.lost, c.exceeded = true, false, false
	c.joinedAt, c.lastPoll = g.l.Now(), g.l.Now()
	g.members = append(g.members, c)
	g.emit(c, traceevent.Event{Ev: traceevent.Member, Reason: "join"})
	if g.maxPoll > 0 && c.pollTimer == nil {
		c.armPollCheck()
	}
	if c.autoCommit > 0 && !c.autoTimer.Pending() {
		c.armAutoCommit()
	}
	g.joining = c
	g.rebalance()
	g.joining = nil
}

// Leave is close() of a member: the assignment is revoked (not lost), its stored
// offsets committed by the unassign, and the member leaves; the others rebalance.
// The application must have stopped consuming first (the JS disconnect() waits for its
// workers).
func (g *Group) Leave(c *Client) {
	if !c.inGroup {
		return
	}
	if len(c.assignment) > 0 {
		g.emit(c, traceevent.Event{Ev: traceevent.Revoke, N: len(c.assignment), Reason: "revoked", Partitions: c.partStates(c.assignment)})
		if c.awaitingUnassign() {
			// librdkafka sends LeaveGroup before the unassign's commit, which the broker
			// then refuses (UNKNOWN_MEMBER_ID): nothing is committed
			c.lost = true
			c.closeErr = fmt.Errorf("%s closed while an eager rebalance waited for its revoke: LeaveGroup went first and the unassign's commit of its stored offsets was refused (UNKNOWN_MEMBER_ID); the next owners start at the offsets committed before", c.name)
			g.emit(c, traceevent.Event{Ev: traceevent.Commit, Reason: "unassign", Error: c.closeErr.Error(), Partitions: c.partStates(c.assignment)})
		}
		c.unassign(c.Assignment())
	}
	c.events = nil
	g.remove(c)
	c.autoTimer.Stop()
	if c.pollTimer != nil {
		c.pollTimer.Stop()
		c.pollTimer = nil
	}
	g.emit(c, traceevent.Event{Ev: traceevent.Member, Reason: "leave"})
	g.rebalance()
}

func (g *Group) remove(c *Client) {
	c.inGroup = false
	if c.chbTimer != nil {
		c.chbTimer.Stop()
		c.chbTimer = nil
	}
	for i, m := range g.members {
		if m == c {
			g.members = append(g.members[:i:i], g.members[i+1:]...)
			break
		}
	}
	for tp, m := range g.moving {
		if m == c {
			// Its new owner is gone: the current owner keeps it (a revoke not served
			// yet is withdrawn; one already served releases it for reassignment).
			if o := g.owner[tp]; o != nil {
				o.dropRevoke(tp)
			}
			delete(g.moving, tp)
		}
	}
}

// rebalance computes the new assignment after a membership change.
func (g *Group) rebalance() {
	if g.cooperative {
		g.rebalanceCooperative()
		return
	}
	// EAGER: every member gives up everything; an assign nobody was served yet is
	// withdrawn (the member never saw it).
	g.syncing = true
	for _, m := range g.members {
		m.dropAssignEvents()
		m.rejoined = len(m.assignment) == 0 && !m.hasRevoke()
		if len(m.assignment) > 0 && !m.hasRevoke() {
			m.learnOfRebalance()
		}
	}
	for tp, m := range g.owner {
		if !m.inGroup || !m.assigned(tp) {
			delete(g.owner, tp)
		}
	}
	g.maybeSync()
}

// learnOfRebalance queues the revoke of c's whole assignment (eager) for its next poll:
// at once, or at its next heartbeat when the group has a heartbeat interval.
func (c *Client) learnOfRebalance() {
	g := c.g
	if g.heartbeat <= 0 {
		c.events = append(c.events, eachbatch.Rebalance{Partitions: c.Assignment()})
		return
	}
	if c.hbTimer != nil {
		return // already waiting for its next heartbeat
	}
	now := c.l.Now()
	at := c.joinedAt.Add((now.Sub(c.joinedAt)/g.heartbeat + 1) * g.heartbeat)
	c.hbTimer = c.l.After(at.Sub(now), func() {
		c.hbTimer = nil
		// the rebalance may be over (the member left, or was told otherwise meanwhile)
		if !c.inGroup || !g.syncing || c.rejoined || len(c.assignment) == 0 || c.hasRevoke() {
			return
		}
		g.emit(c, traceevent.Event{Ev: traceevent.Member, Reason: "heartbeat: rebalance in progress"})
		c.events = append(c.events, eachbatch.Rebalance{Partitions: c.Assignment()})
	})
}

// maybeSync hands out the roundrobin assignment once every member has unassigned.
func (g *Group) maybeSync() {
	if !g.syncing {
		return
	}
	for _, m := range g.members {
		if !m.rejoined {
			return
		}
	}
	g.syncing = false
	if len(g.members) == 0 {
		return
	}
	share := map[*Client][]TP{}
	for i, tp := range g.partitions {
		m := g.members[i%len(g.members)]
		share[m] = append(share[m], tp)
		g.owner[tp] = m
	}
	for _, m := range g.members {
		m.events = append(m.events, eachbatch.Rebalance{Assign: true, Partitions: share[m]})
		m.wake()
	}
}

// rebalanceCooperative moves only what must move to balance the members.
func (g *Group) rebalanceCooperative() {
	for tp, m := range g.owner {
		if !m.inGroup {
			delete(g.owner, tp)
		}
	}
	n := len(g.members)
	if n == 0 {
		return
	}
	quota := map[*Client]int{}
	for i, m := range g.members {
		quota[m] = len(g.partitions) / n
		if i < len(g.partitions)%n {
			quota[m]++
		}
	}
	target := map[TP]*Client{}
	var free []TP
	for _, tp := range g.partitions {
		if m := g.owner[tp]; m != nil && quota[m] > 0 {
			target[tp] = m
			quota[m]--
			continue
		}
		free = append(free, tp)
	}
	for _, tp := range free {
		for _, m := range g.members {
			if quota[m] > 0 {
				target[tp] = m
				quota[m]--
				break
			}
		}
	}
	revoke := map[*Client][]TP{}
	give := map[*Client][]TP{}
	for _, tp := range g.partitions {
		to, from := target[tp], g.owner[tp]
		switch {
		case from == to:
			if g.moving[tp] != nil {
				// It was to move and stays: withdraw a revoke not served yet.
				delete(g.moving, tp)
				from.dropRevoke(tp)
			}
		case from == nil:
			g.owner[tp] = to
			give[to] = append(give[to], tp)
		default:
			if g.moving[tp] == nil {
				revoke[from] = append(revoke[from], tp)
			}
			g.moving[tp] = to
		}
	}
	for _, m := range g.members {
		if g.consumerHeartbeat > 0 && (len(revoke[m]) > 0 || len(give[m]) > 0 && m != g.joining) {
			// it learns at its next heartbeat what the target then says (a joining
			// member's first heartbeat is answered with what is free now)
			m.reconcileAtHeartbeat()
			if m != g.joining {
				continue
			}
			revoke[m] = nil
		}
		if len(revoke[m]) > 0 {
			m.events = append(m.events, eachbatch.Rebalance{Partitions: revoke[m]})
		}
		if len(give[m]) > 0 {
			m.events = append(m.events, eachbatch.Rebalance{Assign: true, Partitions: give[m]})
			m.wake()
		}
	}
}

// targetDiff is what c's next consumer-protocol heartbeat would tell it: the partitions it
// holds that the target moves (to revoke) and those the target gives it that it does not
// hold (to assign), less those a queued event already names.
func (c *Client) targetDiff() (revoke, give []TP) {
	g := c.g
	queued := map[TP]bool{}
	for _, ev := range c.events {
		for _, tp := range ev.Partitions {
			queued[tp] = true
		}
	}
	for _, tp := range g.partitions {
		switch {
		case queued[tp] || g.owner[tp] != c:
		case c.assigned(tp) && g.moving[tp] != nil:
			revoke = append(revoke, tp)
		case !c.assigned(tp) && g.moving[tp] == nil:
			give = append(give, tp)
		}
	}
	return revoke, give
}

// reconcileAtHeartbeat arms c's next consumer-protocol heartbeat (on the grid of its
// join), whose answer tells it the target assignment as it is then: the partitions it
// holds that move (a revoke) and those now its own that it does not hold (an assign).
func (c *Client) reconcileAtHeartbeat() {
	g := c.g
	if c.chbTimer != nil {
		return
	}
	now := c.l.Now()
	at := c.joinedAt.Add((now.Sub(c.joinedAt)/g.consumerHeartbeat + 1) * g.consumerHeartbeat)
	c.chbTimer = c.l.After(at.Sub(now), func() {
		c.chbTimer = nil
		if !c.inGroup {
			return
		}
		revoke, give := c.targetDiff()
		if len(revoke)+len(give) == 0 {
			return
		}
		g.emit(c, traceevent.Event{Ev: traceevent.Member, Reason: "heartbeat: new target assignment"})
		if len(revoke) > 0 {
			c.events = append(c.events, eachbatch.Rebalance{Partitions: revoke})
		}
		if len(give) > 0 {
			c.events = append(c.events, eachbatch.Rebalance{Assign: true, Partitions: give})
			c.wake()
		}
	})
}

// released is told that c unassigned tps.
func (g *Group) released(c *Client, tps []TP) {
	for _, tp := range tps {
		if g.owner[tp] == c {
			delete(g.owner, tp)
		}
	}
	if !g.cooperative {
		if c.inGroup {
			c.rejoined = true
			g.maybeSync()
		}
		return
	}
	give := map[*Client][]TP{}
	for _, tp := range tps {
		if to := g.moving[tp]; to != nil {
			delete(g.moving, tp)
			g.owner[tp] = to
			give[to] = append(give[to], tp)
		}
	}
	for _, m := range g.members {
		if len(give[m]) > 0 && g.consumerHeartbeat > 0 {
			m.reconcileAtHeartbeat() // the new owner learns at its next heartbeat
			continue
		}
		if len(give[m]) > 0 {
			m.events = append(m.events, eachbatch.Rebalance{Assign: true, Partitions: give[m]})
			m.wake()
		}
	}
	for _, tp := range tps {
		if g.owner[tp] == nil {
			// Released with nowhere to go (its new owner left meanwhile): the
			// coordinator assigns it again.
			g.rebalanceCooperative()
			return
		}
	}
}

// dropRevoke withdraws tp from revoke events not served yet.
func (c *Client) dropRevoke(tp TP) {
	kept := c.events[:0]
	for _, ev := range c.events {
		if !ev.Assign {
			var rest []TP
			for _, p := range ev.Partitions {
				if p != tp {
					rest = append(rest, p)
				}
			}
			if len(rest) == 0 {
				continue
			}
			ev.Partitions = rest
		}
		kept = append(kept, ev)
	}
	c.events = kept
}

// armPollCheck arms the max.poll.interval.ms check for the first 500 ms tick (counted
// from the join) past lastPoll + maxPoll.
func (c *Client) armPollCheck() {
	g := c.g
	deadline := c.lastPoll.Add(g.maxPoll)
	ticks := deadline.Sub(c.joinedAt)/MaxPollCheck + 1
	at := c.joinedAt.Add(ticks * MaxPollCheck)
	c.pollTimer = c.l.After(at.Sub(c.l.Now()), func() {
		c.pollTimer = nil
		if !c.inGroup {
			return
		}
		if c.l.Now().Sub(c.lastPoll) <= g.maxPoll {
			c.armPollCheck()
			return
		}
		c.maxPollExceeded()
	})
}

// maxPollExceeded is rd_kafka_cgrp_max_poll_interval_check_tmr_cb.
func (c *Client) maxPollExceeded() {
	g := c.g
	over := c.l.Now().Sub(c.lastPoll) - g.maxPoll
	g.emit(c, traceevent.Event{Ev: traceevent.Member, Reason: "max.poll.interval.ms exceeded: leaving group",
		Error: fmt.Sprintf("Application maximum poll interval (%dms) exceeded by %dms", g.maxPoll.Milliseconds(), over.Milliseconds())})
	c.exceeded, c.lost = true, true
	c.lostCount++
	c.dropAssignEvents()
	g.remove(c)
	if len(c.assignment) > 0 {
		c.events = append(c.events, eachbatch.Rebalance{Partitions: c.Assignment(), Lost: true})
	}
	g.rebalance()
}

func (c *Client) dropAssignEvents() {
	kept := c.events[:0]
	for _, ev := range c.events {
		if ev.Assign {
			for _, tp := range ev.Partitions {
				if c.g.owner[tp] == c {
					delete(c.g.owner, tp)
				}
			}
			continue
		}
		kept = append(kept, ev)
	}
	c.events = kept
}

// awaitingUnassign reports librdkafka's join state wait-unassign-call under the classic
// (eager) protocol: the member learnt of a rebalance and has a revoke to serve. Seen live
// with -X debug=cgrp (BENCHMARKS.md, "live joins"): its auto-commit timer commits nothing
// then, and a close() sends LeaveGroup before the unassign's commit, which the broker
// refuses as from an unknown member.
func (c *Client) awaitingUnassign() bool { return !c.g.cooperative && c.g.managed && c.hasRevoke() }

func (c *Client) hasRevoke() bool {
	for _, ev := range c.events {
		if !ev.Assign {
			return true
		}
	}
	return false
}

// wake tells a member's engine that a consume call has something for it.
func (c *Client) wake() {
	if c.OnNonEmpty != nil {
		c.l.Post(c.OnNonEmpty)
	}
}

// serveRebalance is called at the start of Consume: it records the poll, rejoins after a
// max.poll.interval leave, and serves one rebalance event. It reports whether it did.
func (c *Client) serveRebalance() bool {
	if !c.g.managed {
		return false
	}
	c.lastPoll = c.l.Now()
	if c.exceeded && !c.inGroup && len(c.assignment) == 0 && len(c.events) == 0 {
		c.g.Join(c)
	}
	if len(c.events) == 0 {
		return false
	}
	ev := c.events[0]
	c.events = c.events[1:]
	if ev.Assign {
		c.g.emit(c, traceevent.Event{Ev: traceevent.Assign, N: len(ev.Partitions), Partitions: c.partStates(ev.Partitions)})
	} else {
		reason := "revoked"
		if ev.Lost {
			reason = "lost"
		}
		c.g.emit(c, traceevent.Event{Ev: traceevent.Revoke, N: len(ev.Partitions), Reason: reason, Partitions: c.partStates(ev.Partitions)})
	}
	if c.OnRebalance != nil {
		c.OnRebalance(ev)
	}
	return true
}

// RebalanceProtocol implements eachbatch.GroupSource.
func (c *Client) RebalanceProtocol() string {
	if c.g.cooperative {
		return eachbatch.Cooperative
	}
	return eachbatch.Eager
}

// GroupAssign implements eachbatch.GroupSource: each partition starts at the group's
// committed offset.
func (c *Client) GroupAssign(tps []TP, incremental bool) error {
	c.g.changes++
	if !incremental {
		c.assignment = nil
	}
	for _, tp := range tps {
		if !c.assignedScan(tp) {
			c.assignment = append(c.assignment, tp)
		}
		c.pos[tp] = c.g.committed[tp]
		delete(c.stored, tp)
	}
	kpart.Sort(c.assignment)
	return nil
}

// GroupUnassign implements eachbatch.GroupSource.
func (c *Client) GroupUnassign(tps []TP, incremental bool) error {
	if !incremental {
		tps = c.Assignment()
	}
	c.unassign(tps)
	return nil
}

// unassign removes tps, committing their stored offsets first unless they were lost.
// An application's pause outlives the assignment: librdkafka resets only its own pause
// (RD_KAFKA_TOPPAR_F_LIB_PAUSE) when a partition leaves it, never the application's
// (F_APP_PAUSE; rd_kafka_assignment_serve_removals in rdkafka_assignment.c of 2.5.3,
// 2.15.0 and 2.15.1, the JS client 0.2.1, 1.10.0 and 1.10.1 bundle),
// and the JS client does not resume what it paused at a rebalance (its #pausedPartitions
// only answers paused()). A partition paused, revoked and assigned again stays paused:
// real 1.10.0 and 1.10.1 runs do the same (integration
// TestAPauseOutlivesARebalanceInTheRealClient, FIDELITY.md).
func (c *Client) unassign(tps []TP) {
	if c.autoCommit > 0 && !c.lost {
		offs := map[TP]int64{}
		for _, tp := range tps {
			if o, ok := c.stored[tp]; ok && c.g.committed[tp] != o {
				offs[tp] = o
			}
		}
		if len(offs) > 0 {
			c.commit(offs, true)
		}
	}
	c.g.changes++
	gone := map[TP]bool{}
	for _, tp := range tps {
		gone[tp] = true
		delete(c.stored, tp)
		delete(c.pos, tp)
	}
	kept := c.assignment[:0]
	for _, tp := range c.assignment {
		if !gone[tp] {
			kept = append(kept, tp)
		}
	}
	c.assignment = kept
	if len(c.assignment) == 0 {
		c.lost = false
	}
	c.g.released(c, tps)
}

// CloseError is what went wrong when the member left (Group.Leave), nil for nothing.
func (c *Client) CloseError() error { return c.closeErr }

// InGroup reports whether the client is a member of the group now.
func (c *Client) InGroup() bool { return !c.g.managed || c.inGroup }

// LostCount is how often librdkafka left the group for this member on
// max.poll.interval.ms.
func (c *Client) LostCount() int { return c.lostCount }

// Name is the member's name.
func (c *Client) Name() string { return c.name }

// partStates is the partitions of a trace event (nil when the client has no trace: the
// event is not written).
func (c *Client) partStates(tps []TP) []traceevent.PartitionState {
	if !c.tracing {
		return nil
	}
	out := make([]traceevent.PartitionState, len(tps))
	for i, tp := range tps {
		out[i] = traceevent.PartitionState{Partition: tp.Partition}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}
