// Package simkafka simulates what the modeled consumer sees of Kafka and librdkafka:
// partition logs with data records, transaction control markers and aborted records, a
// read_committed client that has already prefetched everything up to the end of each
// assigned partition, offsets stored and auto-committed on a timer, and commits.
//
// It runs on the same event loop as the model, so tests run on virtual time. It is a
// model of outcomes, not of the protocol: fetch latency and fetch sizes are not
// simulated (the live Source, over librdkafka, has them for real). Rebalances are, in a
// managed Group (group.go) and only there: a Client from New is alone and assigned by
// hand.
package simkafka

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// Kind is what occupies an offset.
type Kind byte

// Kinds of log entries.
const (
	Data    Kind = iota // a committed (or non-transactional) record: deliverable
	Control             // a transaction marker: never delivered
	Aborted             // a record of an aborted transaction: never delivered read_committed
)

// TP is a topic-partition.
type TP = kpart.TopicPartition

// Commit is one commit that reached the (simulated) group coordinator.
type Commit struct {
	At     time.Duration
	TP     TP
	Offset int64
	Auto   bool
}

// Client is a simulated librdkafka consumer in one group, with the group's committed
// offsets.
type Client struct {
	l          *loop.Loop
	g          *Group
	assignment []TP
	pos        map[TP]int64
	stored     map[TP]int64
	committed  map[TP]int64
	commits    []Commit
	autoCommit time.Duration
	autoTimer  *loop.Timer // autoCommitTick's timer, re-armed at every tick (armAutoCommit)
	paused     map[TP]bool
	pauses     uint64 // counts Pause and Resume calls, for drained
	// drained caches whether every assigned partition is read to its end or paused,
	// AtEnd's loop, asked after every task of a simulated run (three map lookups a
	// partition each time: issue 25). It holds while the group's changes and pauses
	// are those of drainedAt.
	drained      bool
	drainedKnown bool
	drainedAt    [2]uint64
	// stores counts StoreOffset calls; upToDate is (stores, the group's commits) when
	// commitStored last left every stored offset at or behind the committed one, so
	// the next auto-commit tick with neither changed has nothing to commit (it walked
	// the stored offsets every 5 s of virtual time: issue 25).
	stores        uint64
	upToDate      [2]uint64
	upToDateKnown bool
	trace         func(traceevent.Event)
	tracing       bool // trace was given: events are built only then
	// OnNonEmpty is called (posted on the loop) when records are appended: librdkafka's
	// queue-non-empty callback.
	OnNonEmpty func()
	// Chunk is how many records of one partition the consumer queue holds in a row
	// before the next partition's (0: every buffered record of a partition, then the
	// next).
	//
	// The assumption: librdkafka fetches from each partition's leader with one Fetch
	// request covering every assigned partition; each partition's part of the response
	// (at most max.partition.fetch.bytes, fetch.message.max.bytes in librdkafka) becomes
	// one op on the consumer queue, in the order of the response, and consume calls pop
	// the queue's records in that order. So the queue holds runs of about Chunk records
	// per partition, in turn, not one partition drained after another; and a consume
	// call starts where the previous one stopped, inside a run if it stopped there: the
	// real client's consume(1), consume(1), consume(40) return 0:0, 0:1, then 0:2-4,
	// 1:0-4, ... (testenv/jsclient captures, 8x5 at concurrency 2), not one record of
	// each partition in turn. Set Chunk to max.partition.fetch.bytes / record size;
	// the simulation does not model fetch sizes beyond that (no per-broker requests,
	// no fetch.max.bytes cap, no batch boundaries).
	Chunk int
	// Order is librdkafka's fetch list: the partitions in the order their records are
	// queued, one run each in turn (assigned partitions it does not name follow in
	// assignment order; nil: assignment order). Runs whose outcome depends on it are
	// simulated once per rotation of the list to know every outcome it allows
	// (repro.Simulate).
	//
	// The source: rd_kafka_broker_fetch_toppars (src/rdkafka_fetcher.c) writes a
	// Fetch request's partitions from rkb_active_toppar_next round the broker's list of
	// active partitions (rkb_active_toppars) and moves the start one partition on per
	// request; a partition joins that list when its fetch state becomes active
	// (rd_kafka_toppar_fetch_decide keeps a partition off it until then; fetch states
	// offset-query, offset-wait, active in rdkafka_partition.c): once its start offset
	// is known, which each partition learns on its own. That order is not the
	// partitions' numbers: the real JS client's captures served 8x5's partitions 6, 7,
	// 5 and 4 first, and 20x3's 19, 18, 9-13, 5, 4, 0-3 (FIDELITY.md). So any order is
	// one a live consumer may take.
	Order  []int32
	ring   []int // assignment indexes in queue order, for ringOf
	ringOf []TP  // the assignment ring was built for
	next   int   // index in the ring of the partition at the head of the queue
	inRun  int   // records of that partition's current run already consumed
	// arrived: partitions whose records were appended while the client had consumed
	// them to their end, in the order of the appends (see Append).
	arrived  []TP
	closeErr error
	started  bool

	// Membership in a managed group (group.go).
	name      string
	inGroup   bool
	lost      bool // the assignment was lost (max.poll.interval.ms): unassign commits nothing
	exceeded  bool // left on max.poll.interval.ms; rejoins at the next poll once unassigned
	lostCount int  // times it left on max.poll.interval.ms
	rejoined  bool // eager: unassigned in the current rebalance
	events    []eachbatch.Rebalance
	joinedAt  time.Time
	lastPoll  time.Time
	pollTimer *loop.Timer
	hbTimer   *loop.Timer // the heartbeat that tells it of a rebalance (Group.SetHeartbeatInterval)
	chbTimer  *loop.Timer // the consumer-protocol heartbeat that tells it its target (Group.SetConsumerHeartbeatInterval)
	// OnRebalance is the rebalance callback (eachbatch.Engine.RebalanceCallback),
	// called from inside Consume.
	OnRebalance func(eachbatch.Rebalance)
}

// New returns a client on l. autoCommit is auto.commit.interval.ms (0: no auto-commit).
func New(l *loop.Loop, autoCommit time.Duration, trace func(traceevent.Event)) *Client {
	if trace == nil {
		trace = func(traceevent.Event) {}
	}
	return newGroup(l).newClient(autoCommit, trace)
}

// Append writes entries to a partition's log and returns the offset of the first.
//
// Records appended to a partition a client had consumed to its end reach that client's
// queue in the order of the appends, before the fetch list's turn (Consume): librdkafka's
// fetcher waits at the end of such partitions in a Fetch request the broker answers when
// records arrive, and librdkafka's producer writes one partition per ProduceRequest
// (rd_kafka_ProduceRequest(rkb, rktp, ...), src/rdkafka_request.c), so records produced
// together reach the broker, and the waiting consumer, partition by partition. Which
// partitions one Fetch response then carries, and so the order the consumer queue holds
// them in, is timing (the producer's in-flight requests, the broker's turn between them
// and the waiting fetch, the fetch list's rotation): any order (FIDELITY.md, "The fetch
// order"); the simulation takes the appends' order, which repro's Phase2Order sets.
func (c *Client) Append(tp TP, kinds ...Kind) int64 {
	c.g.changes++
	first := int64(len(c.g.logs[tp]))
	c.g.logs[tp] = append(c.g.logs[tp], kinds...)
	for _, o := range c.g.clients {
		if o.assigned(tp) && o.started && o.pos[tp] == first && !slices.Contains(o.arrived, tp) {
			o.arrived = append(o.arrived, tp)
		}
		if o.OnNonEmpty != nil && o.assigned(tp) && !o.paused[tp] {
			c.l.Post(o.OnNonEmpty)
		}
	}
	return first
}

// Transaction appends n committed records and their commit marker; it returns the first
// and last record offsets.
func (c *Client) Transaction(tp TP, n int) (first, last int64) {
	kinds := make([]Kind, n+1)
	kinds[n] = Control
	first = c.Append(tp, kinds...)
	return first, first + int64(n) - 1
}

// HighWatermark is the partition's end offset.
func (c *Client) HighWatermark(tp TP) int64 { return int64(len(c.g.logs[tp])) }

// Assign assigns partitions, starting each at its committed offset (or 0).
func (c *Client) Assign(tps ...TP) {
	c.g.changes++
	c.assignment = append([]TP(nil), tps...)
	kpart.Sort(c.assignment)
	ps := make([]int32, len(tps))
	for i, tp := range tps {
		c.pos[tp] = c.g.committed[tp]
		ps[i] = tp.Partition
	}
	c.trace(traceevent.Event{Time: c.l.Now().UTC(), AtMs: msSince(c.l), Ev: traceevent.Assign, N: len(tps)})
	if c.autoCommit > 0 && !c.autoTimer.Pending() {
		c.armAutoCommit()
	}
}

// Close stops auto-commit (after a final auto-commit, as librdkafka does on close) and
// forgets the stored offsets: a consumer started afterwards (Assign) begins from the
// group's committed offsets with nothing stored, like a new librdkafka instance.
//
// A member of a managed group closes as the JS client's disconnect() ends: close()
// revokes its assignment (the unassign commits what was stored, unless the assignment
// was lost) and leaves the group; a member librdkafka already dropped on
// max.poll.interval.ms commits nothing.
func (c *Client) Close() {
	if c.g.managed {
		c.g.Leave(c)
		c.autoTimer.Stop()
		if c.pollTimer != nil {
			c.pollTimer.Stop()
			c.pollTimer = nil
		}
		c.events = nil
		c.g.changes++
		c.assignment = nil
		c.exceeded = false
		c.stored = map[TP]int64{}
		c.paused = map[TP]bool{}
		return
	}
	if c.autoTimer.Stop() {
		c.commitStored(true)
	}
	c.g.changes++
	c.assignment = nil
	c.stored = map[TP]int64{}
	c.paused = map[TP]bool{}
}

// assigned reports whether tp is assigned: a binary search, the assignment being kept
// sorted (a scan made the end-of-partition evidence of every partition quadratic in
// the partitions, issue 25).
func (c *Client) assigned(tp TP) bool {
	_, ok := slices.BinarySearchFunc(c.assignment, tp, kpart.Compare)
	return ok
}

// assignedScan is assigned for an assignment being built, not sorted yet.
func (c *Client) assignedScan(tp TP) bool { return slices.Contains(c.assignment, tp) }

func (c *Client) autoCommitTick() {
	if !c.lost && c.InGroup() && !c.awaitingUnassign() {
		// A lost assignment is not committed (rd_kafka_cgrp_assigned_offsets_commit).
		c.commitStored(true)
	}
	c.armAutoCommit()
}

// armAutoCommit arms the next auto-commit tick: one timer, re-armed at every tick (a
// timer and a method value a tick allocated; issue 25).
func (c *Client) armAutoCommit() {
	if c.autoTimer == nil {
		c.autoTimer = c.l.NewTimer(c.autoCommitTick)
	}
	c.autoTimer.Reset(c.autoCommit)
}

// commitStored commits the stored offsets that are past the committed ones: librdkafka
// includes a partition in a commit of its stored offsets only when
// rd_kafka_fetch_pos_cmp(stored, committed) > 0 (rd_kafka_topic_partition_list_set_offsets,
// src/rdkafka_partition.c of the librdkafka 2.15.0 that @confluentinc/kafka-javascript
// 1.10.0 bundles; offsets compared when a leader epoch is unknown, as the seek's commit's
// is). A stored offset behind the committed one, as after the handler's seek() forward
// commits the offset it seeks to, is "not including in commit" (the real client's cgrp
// log, FIDELITY.md).
func (c *Client) commitStored(auto bool) {
	if c.upToDateKnown && c.upToDate == [2]uint64{c.stores, uint64(len(c.g.commits))} {
		return
	}
	offs := map[TP]int64{}
	for tp, o := range c.stored {
		if cur, ok := c.g.committed[tp]; !ok || o > cur {
			offs[tp] = o
		}
	}
	if len(offs) > 0 {
		c.commit(offs, auto)
	}
	c.upToDate, c.upToDateKnown = [2]uint64{c.stores, uint64(len(c.g.commits))}, true
}

func (c *Client) commit(offs map[TP]int64, auto bool) {
	tps := make([]TP, 0, len(offs))
	for tp := range offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].Partition < tps[j].Partition })
	at := c.l.Elapsed()
	for _, tp := range tps {
		c.g.committed[tp] = offs[tp]
		c.g.commits = append(c.g.commits, Commit{At: at, TP: tp, Offset: offs[tp], Auto: auto})
	}
	if !c.tracing {
		return
	}
	ev := traceevent.Event{Time: c.l.Now().UTC(), AtMs: msSince(c.l), Ev: traceevent.Commit, Reason: "manual"}
	if auto {
		ev.Reason = "auto"
	}
	for _, tp := range tps {
		ev.Committed = append(ev.Committed, traceevent.PartitionOffset{Partition: tp.Partition, Offset: offs[tp]})
	}
	c.trace(ev)
}

// Committed returns the group's committed offset (-1 when none).
func (c *Client) Committed(tp TP) int64 {
	if o, ok := c.g.committed[tp]; ok {
		return o
	}
	return -1
}

// Commits returns every commit so far.
func (c *Client) Commits() []Commit { return append([]Commit(nil), c.g.commits...) }

// Consume implements eachbatch.Source: records already prefetched, up to max, in runs
// of Chunk records per partition in turn (see Chunk).
func (c *Client) Consume(max int) ([]eachbatch.Record, error) {
	var out []eachbatch.Record
	if c.serveRebalance() {
		// The call served a rebalance event; its records come with the next call.
		return nil, nil
	}
	if !c.started && len(c.assignment) > 0 {
		c.started, c.next = true, 0
	}
	if max > 0 && c.allDrained() {
		// Nothing to return: a turn over every partition (three map lookups each,
		// at every empty fetch) would find nothing and leave the queue where it
		// is, at the start of a run (issue 25).
		if n := len(c.assignment); c.Chunk > 0 && n > 0 {
			c.next, c.inRun = c.next%n, 0
		}
		return nil, nil
	}
	if n := c.available(max); n > 0 {
		// One array of the call's size: grown run by run, the calls' arrays were half
		// the bytes a run of 10^6 records allocated (issue 25).
		out = make([]eachbatch.Record, 0, n)
	}
	if c.Chunk <= 0 {
		out = c.takeArrived(out, max)
		if ring := c.queueRing(); ring != nil {
			for _, i := range ring {
				out = c.take(out, c.assignment[i], max)
			}
			return out, nil
		}
		for _, tp := range c.assignment {
			out = c.take(out, tp, max)
		}
		return out, nil
	}
	n := len(c.assignment)
	if n == 0 {
		return out, nil
	}
	out = c.takeArrived(out, max)
	c.next %= n
	ring := c.queueRing()
	// Pop the queue: the rest of the head partition's run, then the next partition's,
	// until the call is full or a whole turn over the partitions found nothing.
	for idle := 0; idle < n && len(out) < max; {
		tp := c.assignment[c.next]
		if ring != nil {
			tp = c.assignment[ring[c.next]]
		}
		before := len(out)
		out = c.take(out, tp, min(max, len(out)+c.Chunk-c.inRun))
		c.inRun += len(out) - before
		if len(out) == before {
			idle++
		} else {
			idle = 0
		}
		if c.inRun >= c.Chunk || !c.hasMore(tp) {
			c.next, c.inRun = (c.next+1)%n, 0
		}
	}
	return out, nil
}

// takeArrived takes the records appended to partitions the client had consumed to their
// end, partition by partition in the order of the appends (Append), until out holds max.
func (c *Client) takeArrived(out []eachbatch.Record, max int) []eachbatch.Record {
	if len(c.arrived) == 0 {
		return out
	}
	kept := c.arrived[:0]
	for i, tp := range c.arrived {
		switch {
		case len(out) >= max:
			kept = append(kept, c.arrived[i:]...) // the call is full
			c.arrived = kept
			return out
		case !c.assigned(tp):
			continue
		case c.paused[tp]:
			kept = append(kept, tp) // its records wait for the resume
			continue
		}
		out = c.take(out, tp, max)
		if c.hasMore(tp) {
			kept = append(kept, tp)
		}
	}
	c.arrived = kept
	return out
}

// queueRing is Order as assignment indexes, the listed partitions first (nil without
// Order: the assignment's own order). It is rebuilt when the assignment changes.
func (c *Client) queueRing() []int {
	if len(c.Order) == 0 {
		return nil
	}
	if len(c.ringOf) == len(c.assignment) && len(c.ring) == len(c.assignment) &&
		(len(c.ringOf) == 0 || &c.ringOf[0] == &c.assignment[0]) {
		return c.ring
	}
	c.ring, c.ringOf = c.ring[:0], c.assignment
	listed := make([]bool, len(c.assignment))
	for _, p := range c.Order {
		for i, tp := range c.assignment {
			if tp.Partition == p && !listed[i] {
				listed[i] = true
				c.ring = append(c.ring, i)
			}
		}
	}
	for i := range c.assignment {
		if !listed[i] {
			c.ring = append(c.ring, i)
		}
	}
	return c.ring
}

// available bounds what a call of limit returns: the entries past the position of the
// partitions not paused (records, and markers it skips), at most limit.
func (c *Client) available(limit int) int {
	n := 0
	for _, tp := range c.assignment {
		if n >= limit {
			break
		}
		if left := int64(len(c.g.logs[tp])) - c.pos[tp]; left > 0 && !c.paused[tp] {
			n += int(left)
		}
	}
	return min(n, limit)
}

// hasMore reports whether tp holds records past the client's position that it returns.
func (c *Client) hasMore(tp TP) bool {
	return !c.paused[tp] && c.pos[tp] < int64(len(c.g.logs[tp]))
}

// take appends tp's deliverable records until out holds max.
func (c *Client) take(out []eachbatch.Record, tp TP, max int) []eachbatch.Record {
	if c.paused[tp] {
		return out
	}
	log := c.g.logs[tp]
	pos := c.pos[tp]
	if n := min(int64(max-len(out)), int64(len(log))-pos); n > 0 {
		out = slices.Grow(out, int(n)) // one allocation a call, not a doubling series
	}
	for len(out) < max && pos < int64(len(log)) {
		o := pos
		pos++
		if log[o] == Data {
			out = append(out, eachbatch.Record{TopicPartition: tp, Offset: o, Size: RecordSize})
		}
	}
	if pos != c.pos[tp] {
		c.g.changes++
		c.pos[tp] = pos
	}
	return out
}

// Seek implements eachbatch.Source.
func (c *Client) Seek(tp TP, offset int64, _ int32) error {
	c.g.changes++
	// A seek restarts the partition's fetching (a new fetch version; it leaves and
	// rejoins librdkafka's fetch list): its records come in the list's turn.
	c.arrived = slices.DeleteFunc(c.arrived, func(a TP) bool { return a == tp })
	c.pos[tp] = offset
	return nil
}

// StoreOffset implements eachbatch.Source.
func (c *Client) StoreOffset(tp TP, offset int64, _ int32) error {
	c.stored[tp] = offset
	c.stores++
	return nil
}

// Commit implements eachbatch.Source.
func (c *Client) Commit(offs map[TP]int64) error {
	if !c.InGroup() {
		// The member left (or was dropped on max.poll.interval.ms): the coordinator
		// refuses its commits.
		return fmt.Errorf("commit refused: %s is not a member of the group (UNKNOWN_MEMBER_ID)", c.name)
	}
	c.commit(offs, false)
	return nil
}

// CommitStored implements eachbatch.StoredCommitter: rd_kafka_commit with no list, the
// stored offsets past the committed ones (the JS client's commitOffsets()
// with no argument). Nothing stored is no error (ERR__NO_OFFSET, which the JS client
// resolves).
func (c *Client) CommitStored() error {
	if !c.InGroup() {
		return fmt.Errorf("commit refused: %s is not a member of the group (UNKNOWN_MEMBER_ID)", c.name)
	}
	c.commitStored(false)
	return nil
}

// Assignment implements eachbatch.Source.
func (c *Client) Assignment() []TP { return append([]TP(nil), c.assignment...) }

// AtEnd implements eachbatch.Source.
func (c *Client) AtEnd() bool {
	if c.g.managed {
		// A member may hold no partition; it is at its end when the group is settled
		// and it is in it.
		if !c.inGroup || !c.g.Settled() {
			return false
		}
	} else if len(c.assignment) == 0 {
		return false
	}
	return c.allDrained()
}

// allDrained reports whether every assigned partition is read to its end or paused.
func (c *Client) allDrained() bool {
	at := [2]uint64{c.g.changes, c.pauses}
	if c.drainedKnown && c.drainedAt == at {
		return c.drained
	}
	drained := true
	for _, tp := range c.assignment {
		if c.pos[tp] < int64(len(c.g.logs[tp])) && !c.paused[tp] {
			drained = false
			break
		}
	}
	c.drained, c.drainedKnown, c.drainedAt = drained, true, at
	return drained
}

// RecordSize is the size the simulation gives every record.
const RecordSize = 100

// Pause stops returning tp's records (back-pressure).
func (c *Client) Pause(tp TP) error {
	c.paused[tp] = true
	c.pauses++
	return nil
}

// Resume resumes tp.
func (c *Client) Resume(tp TP) error {
	if c.paused[tp] {
		c.pauses++
		delete(c.paused, tp)
		if c.OnNonEmpty != nil && c.pos[tp] < int64(len(c.g.logs[tp])) {
			c.l.Post(c.OnNonEmpty)
		}
	}
	return nil
}

// Paused reports whether tp is paused.
func (c *Client) Paused(tp TP) bool { return c.paused[tp] }

// EndEvidence is the client's position once it consumed the whole partition: past
// trailing markers.
func (c *Client) EndEvidence(tp TP) (int64, bool) {
	end := int64(len(c.g.logs[tp]))
	if c.assigned(tp) && c.pos[tp] >= end {
		return end, true
	}
	return 0, false
}

// EvidenceVersion changes whenever what EndEvidence reports may have changed.
func (c *Client) EvidenceVersion() uint64 { return c.g.changes }

// Position is the next offset the client will return for tp.
func (c *Client) Position(tp TP) int64 { return c.pos[tp] }

func msSince(l *loop.Loop) float64 { return float64(l.Elapsed()) / float64(time.Millisecond) }
