package eachbatch

import (
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

// Rebalances: #rebalanceCallback and #unassign of lib/kafkajs/_consumer.js
// (confluent-kafka-javascript 1.10.0 and 1.10.1 are identical here), with no user
// rebalance_cb. librdkafka serves rebalance events from inside a consume call, so a
// GroupSource calls RebalanceCallback from Consume; the engine then behaves as the JS
// client does:
//   - assign: assignmentFn calls assign() (EAGER) or incrementalAssign() (COOPERATIVE)
//     at once; librdkafka starts each partition at the group's committed offset.
//   - revoke: unassignmentFn queues #unassign as a pending operation
//     (#addPendingOperation), which schedules worker termination: batches in flight
//     finish (and store their offsets) before the partitions are unassigned. #unassign
//     then calls unassign() and MessageCache.clear() under EAGER (every cached record of
//     every partition is dropped), or incrementalUnassign(revoked) and
//     markStale(revoked) under COOPERATIVE (only the revoked partitions' records).
//     #lastConsumedOffsets is left as it is (#unassign does not touch it).
//   - then, whichever the event: "Schedule worker termination here, in case the number
//     of workers is not equal to the target concurrency": workersToSpawn =
//     max(1, min(concurrency, #partitionCount)); when it differs from #workers.length
//     the workers stop and #runInternal respawns them, and every new generation
//     restarts the expiry clock (#lastFetchClockNs = hrtime.bigint()).
//   - a consume call that served a rebalance does not arm #nonEmpty
//     (`!processedRebalance` in #fetchAndResolveWith's finally).

// RebalanceCallback is #rebalanceCallback. It does nothing when the source is not a
// GroupSource.
func (e *Engine) RebalanceCallback(ev Rebalance) {
	gs, ok := e.src.(GroupSource)
	if !ok {
		return
	}
	e.rebalanced = true
	incremental := gs.RebalanceProtocol() == Cooperative
	tps := append([]kpart.TopicPartition(nil), ev.Partitions...)
	if ev.Assign {
		// assignmentFn: this.#internalClient.assign / incrementalAssign.
		if err := gs.GroupAssign(tps, incremental); err != nil {
			e.Errors = append(e.Errors, err)
		}
	} else {
		// unassignmentFn: #unassign now when disconnecting, else as a pending operation.
		if e.stopping {
			e.unassign(gs, tps, incremental)
		} else {
			e.addPendingOp(pendingOp{name: "unassign", run: func() { e.unassign(gs, tps, incremental) }})
		}
	}
	// workersToSpawn against #workers.length: #partitionCount changes only when the
	// (pending) #unassign runs, so a revoke leaves it as it was here.
	n := max(1, min(e.s.Concurrency, len(gs.Assignment())))
	if e.running && n != len(e.workers) {
		e.scheduleTermination()
	}
}

// unassign is #unassign.
func (e *Engine) unassign(gs GroupSource, tps []kpart.TopicPartition, incremental bool) {
	contents := e.cache.contents()
	var gone []kpart.TopicPartition
	if incremental {
		gone = tps
	} else {
		for tp := range contents {
			gone = append(gone, tp)
		}
	}
	kpart.Sort(gone)
	ev := traceevent.Event{Ev: traceevent.Pending, Op: "unassign", Reason: gs.RebalanceProtocol()}
	for _, tp := range gone {
		if recs := contents[tp]; len(recs) > 0 {
			ev.Discarded = append(ev.Discarded, ranges(recs)...)
		}
	}
	if incremental {
		if err := gs.GroupUnassign(tps, true); err != nil {
			e.Errors = append(e.Errors, err)
		}
		e.cache.markStale(tps) // this.#messageCache.markStale(assignment)
	} else {
		if err := gs.GroupUnassign(nil, false); err != nil {
			e.Errors = append(e.Errors, err)
		}
		e.cache.clear() // this.#messageCache.clear()
	}
	e.emit(ev)
}
