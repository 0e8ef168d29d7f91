package repro

import (
	"errors"
	"fmt"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/ledger"
	"github.com/kstranded/kstranded/traceevent"
)

// committer is what the frontier tracker commits through and pauses with.
type committer interface {
	Commit(offsets map[kpart.TopicPartition]int64) error
	Assignment() []kpart.TopicPartition
}

// pauser pauses and resumes fetching of partitions (back-pressure).
type pauser interface {
	Pause(tp kpart.TopicPartition) error
	Resume(tp kpart.TopicPartition) error
}

// evidencer gives the client's next-offset evidence beyond the last returned record
// (the end of the partition once it was reached: past a trailing transaction marker).
type evidencer interface {
	EndEvidence(tp kpart.TopicPartition) (int64, bool)
}

// evidenceVersioner tells when the end-of-partition evidence may have changed.
type evidenceVersioner interface {
	EvidenceVersion() uint64
}

// frontierTracker keeps an application ledger beside the modeled client: every record
// the client fetched is registered before it is served, completions come from batch
// ends, and records the cache dropped stay pending. In auto mode it only watches (the
// frontier is shown next to what the client committed); in ledger mode it commits the
// frontier at the auto-commit interval and on shutdown.
type frontierTracker struct {
	lp      *loop.Loop
	led     *ledger.Ledger
	tokens  map[kpart.TopicPartition]ledger.Token
	commits bool // ledger mode: commit the frontier
	target  committer
	pause   pauser
	ev      evidencer
	trace   func(traceevent.Event)

	interval    time.Duration
	maxInFlight int // records per partition registered and not finished; 0: no bound
	maxBytes    int // bytes per partition registered and not finished; 0: no bound
	inflight    map[kpart.TopicPartition]*flight
	paused      map[kpart.TopicPartition]bool
	timer       *loop.Timer
	last        map[kpart.TopicPartition]int64 // last frontier traced
	pushed      map[kpart.TopicPartition]pushedEvidence
	evVersion   uint64 // the client's EvidenceVersion when every partition's evidence was last pushed
	evPushed    bool   // evVersion holds, for the current tokens

	Regressions []error
	Errors      []error
	Pauses      int
}

type flight struct {
	n, bytes int
	size     map[int64]int
}

func newFrontierTracker(lp *loop.Loop, commits bool, target committer, interval time.Duration, trace func(traceevent.Event)) *frontierTracker {
	t := &frontierTracker{lp: lp, led: ledger.New(), tokens: map[kpart.TopicPartition]ledger.Token{}, commits: commits,
		target: target, interval: interval, trace: trace, inflight: map[kpart.TopicPartition]*flight{},
		paused: map[kpart.TopicPartition]bool{}, last: map[kpart.TopicPartition]int64{},
		pushed: map[kpart.TopicPartition]pushedEvidence{}}
	if p, ok := target.(pauser); ok {
		t.pause = p
	}
	if e, ok := target.(evidencer); ok {
		t.ev = e
	}
	return t
}

func lkey(tp kpart.TopicPartition) kpart.TopicPartition {
	return kpart.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
}

// attach hooks the tracker to the engine's events.
func (t *frontierTracker) attach(e *eachbatch.Engine) {
	e.OnFetch = t.fetched
	e.OnBatchEnd = t.finished
	e.OnDiscard = t.discarded
}

// assign starts an ownership incarnation for partitions (start: committed, or -1).
func (t *frontierTracker) assign(tps []kpart.TopicPartition, start map[kpart.TopicPartition]int64) {
	for _, tp := range tps {
		s, ok := start[tp]
		if !ok {
			s = -1
		}
		t.tokens[tp] = t.led.Assign(lkey(tp), s)
		t.evPushed = false
		t.inflight[tp] = &flight{size: map[int64]int{}}
	}
	if !t.timer.Pending() && t.interval > 0 {
		t.armTick()
	}
}

func (t *frontierTracker) fetched(recs []eachbatch.Record) {
	last := map[kpart.TopicPartition]eachbatch.Record{}
	t.eachRun(recs, func(tp kpart.TopicPartition, tok ledger.Token, f *flight, run []eachbatch.Record) {
		key := lkey(tp)
		registered := -1 // the run's last record registered
		for k, r := range run {
			st, err := t.led.Register(key, tok, r.Offset, r.LeaderEpoch)
			switch {
			case errors.Is(err, ledger.ErrBehindFrontier):
				// Re-fetched after its completion (a rewind to an earlier position): the
				// handler sees it again, the frontier does not move back.
				continue
			case err != nil:
				t.Errors = append(t.Errors, err)
				continue
			}
			if f != nil && st == ledger.Pending {
				if _, seen := f.size[r.Offset]; !seen {
					f.size[r.Offset] = r.Size
					f.n++
					f.bytes += r.Size
				}
			}
			registered = k
		}
		if registered >= 0 {
			last[tp] = run[registered]
		}
	})
	for tp, r := range last {
		// The client's position after returning r is r+1: exact evidence for r's
		// partition, never arithmetic over record counts.
		_ = t.led.Evidence(lkey(tp), t.tokens[tp], r.Offset+1, r.LeaderEpoch)
		t.admit(tp)
	}
	t.traceFrontiers()
}

// eachRun calls fn with each run of one partition's records in recs (a fetch or a batch
// is such runs) whose partition is assigned: its token, and its flight when back-pressure
// bounds are set (nil otherwise). The token and flight are looked up once a run, not once
// a record (issue 25).
func (t *frontierTracker) eachRun(recs []eachbatch.Record, fn func(tp kpart.TopicPartition, tok ledger.Token, f *flight, run []eachbatch.Record)) {
	bounded := t.bounded()
	for i := 0; i < len(recs); {
		tp := recs[i].TopicPartition
		j := i + 1
		for j < len(recs) && recs[j].TopicPartition == tp {
			j++
		}
		run := recs[i:j]
		i = j
		tok, ok := t.tokens[tp]
		if !ok {
			continue
		}
		var f *flight
		if bounded {
			f = t.inflight[tp]
		}
		fn(tp, tok, f, run)
	}
}

// bounded reports whether back-pressure bounds are set: only then are the records in
// flight counted (a map entry a record, which admit alone reads).
func (t *frontierTracker) bounded() bool {
	return t.pause != nil && (t.maxInFlight > 0 || t.maxBytes > 0)
}

func (t *frontierTracker) finished(recs []eachbatch.Record, resolved bool) {
	if !resolved {
		return
	}
	t.eachRun(recs, func(tp kpart.TopicPartition, tok ledger.Token, f *flight, run []eachbatch.Record) {
		key := lkey(tp)
		for _, r := range run {
			if _, err := t.led.Complete(key, tok, r.Offset); err != nil && !errors.Is(err, ledger.ErrBehindFrontier) && !errors.Is(err, ledger.ErrUnknownRecord) {
				t.Errors = append(t.Errors, err)
			}
			if f != nil {
				if sz, ok := f.size[r.Offset]; ok {
					delete(f.size, r.Offset)
					f.n--
					f.bytes -= sz
				}
			}
		}
	})
	if len(recs) > 0 {
		t.admit(recs[0].TopicPartition)
	}
	t.traceFrontiers()
}

func (t *frontierTracker) discarded(recs []eachbatch.Record) {
	by := map[kpart.TopicPartition][]int64{}
	for _, r := range recs {
		by[r.TopicPartition] = append(by[r.TopicPartition], r.Offset)
	}
	for tp, offs := range by {
		if tok, ok := t.tokens[tp]; ok {
			_, _ = t.led.Discard(lkey(tp), tok, offs...)
		}
	}
}

// admit pauses a partition whose unfinished records exceed the bounds, and resumes it
// once they are back under. Pausing only stops fetching: it never completes anything,
// so it never moves the frontier.
func (t *frontierTracker) admit(tp kpart.TopicPartition) {
	if t.pause == nil || (t.maxInFlight <= 0 && t.maxBytes <= 0) {
		return
	}
	f := t.inflight[tp]
	if f == nil {
		return
	}
	full := (t.maxInFlight > 0 && f.n >= t.maxInFlight) || (t.maxBytes > 0 && f.bytes >= t.maxBytes)
	switch {
	case full && !t.paused[tp]:
		if err := t.pause.Pause(tp); err != nil {
			t.Errors = append(t.Errors, fmt.Errorf("pause %s: %w", tp, err))
		} else {
			t.paused[tp] = true
			t.Pauses++
		}
	case !full && t.paused[tp]:
		if err := t.pause.Resume(tp); err != nil {
			t.Errors = append(t.Errors, fmt.Errorf("resume %s: %w", tp, err))
		} else {
			t.paused[tp] = false
		}
	}
}

// evidence pulls the client's end-of-partition evidence (past trailing markers).
func (t *frontierTracker) evidence() {
	if t.ev == nil {
		return
	}
	v, versioned := t.ev.(evidenceVersioner)
	if versioned && t.evPushed && v.EvidenceVersion() == t.evVersion {
		return // nothing EndEvidence reads changed since every partition's was pushed
	}
	for tp, tok := range t.tokens {
		if off, ok := t.ev.EndEvidence(tp); ok {
			// The same evidence for the same incarnation again changes nothing in the
			// ledger (lower or equal evidence is ignored): it is pushed once, not at
			// every tick of a long idle stretch (a third of the seed's time, issue 25).
			if e, seen := t.pushed[tp]; seen && e.tok == tok && e.off == off {
				continue
			}
			t.pushed[tp] = pushedEvidence{tok, off}
			_ = t.led.Evidence(lkey(tp), tok, off, -1)
		}
	}
	if versioned {
		t.evVersion, t.evPushed = v.EvidenceVersion(), true
	}
}

// pushedEvidence is the end-of-partition evidence last given to the ledger.
type pushedEvidence struct {
	tok ledger.Token
	off int64
}

// armTick arms the next tick: one timer, re-armed at every tick (a timer and a method
// value a tick allocated; issue 25).
func (t *frontierTracker) armTick() {
	if t.timer == nil {
		t.timer = t.lp.NewTimer(t.tick)
	}
	t.timer.Reset(t.interval)
}

func (t *frontierTracker) tick() {
	t.evidence()
	t.traceFrontiers()
	if t.commits {
		t.commitPrepared()
	}
	t.armTick()
}

// commitPrepared commits every partition whose frontier moved past its last commit.
func (t *frontierTracker) commitPrepared() {
	offs := map[kpart.TopicPartition]int64{}
	var cs []ledger.Commit
	for tp := range t.tokens {
		c, ok := t.led.PrepareCommit(lkey(tp))
		if !ok || c.Offset == 0 {
			continue // nothing ever consumed there: no progress to record
		}
		if err := t.led.CheckCommit(c); err != nil {
			if errors.Is(err, ledger.ErrCommitRegression) {
				t.Regressions = append(t.Regressions, err)
			}
			continue
		}
		offs[tp] = c.Offset
		cs = append(cs, c)
	}
	t.send(offs, cs)
}

func (t *frontierTracker) send(offs map[kpart.TopicPartition]int64, cs []ledger.Commit) {
	if len(offs) == 0 {
		return
	}
	if err := t.target.Commit(offs); err != nil {
		t.Errors = append(t.Errors, err)
		return
	}
	for _, c := range cs {
		if err := t.led.Committed(c); err != nil && errors.Is(err, ledger.ErrCommitRegression) {
			t.Regressions = append(t.Regressions, err)
		}
	}
}

// revoked handles a rebalance that takes partitions away: a revoked partition commits
// its completed owned frontier (ledger mode), a lost one commits nothing.
func (t *frontierTracker) revoked(tps []kpart.TopicPartition, lost bool) {
	offs := map[kpart.TopicPartition]int64{}
	var cs []ledger.Commit
	for _, tp := range tps {
		if _, ok := t.tokens[tp]; !ok {
			continue
		}
		if lost {
			t.led.Lose(lkey(tp))
		} else {
			t.led.Revoke(lkey(tp))
			if c, ok := t.led.FinalCommit(lkey(tp)); ok && t.commits && c.Offset > 0 {
				offs[tp] = c.Offset
				cs = append(cs, c)
			}
		}
		delete(t.tokens, tp)
		t.evPushed = false
		delete(t.inflight, tp)
		delete(t.paused, tp)
	}
	t.send(offs, cs)
}

// shutdown revokes every partition and commits only the completed owned frontier
// (ledger mode); records still in a handler keep the commit below them.
func (t *frontierTracker) shutdown() {
	t.timer.Stop()
	t.evidence()
	offs := map[kpart.TopicPartition]int64{}
	var cs []ledger.Commit
	for tp := range t.tokens {
		t.led.Revoke(lkey(tp))
		if c, ok := t.led.FinalCommit(lkey(tp)); ok && t.commits && c.Offset > 0 {
			offs[tp] = c.Offset
			cs = append(cs, c)
		}
	}
	t.send(offs, cs)
	t.traceFrontiers()
}

// frontiers returns the ledger's frontier per partition (only known ones).
func (t *frontierTracker) frontiers() map[kpart.TopicPartition]int64 {
	out := map[kpart.TopicPartition]int64{}
	for tp := range t.tokens {
		if f, ok := t.led.Frontier(lkey(tp)); ok {
			out[tp] = f
		}
	}
	return out
}

// frontier returns the ledger's frontier of tp: frontiers' entry, without the map.
func (t *frontierTracker) frontier(tp kpart.TopicPartition) (int64, bool) {
	if _, owned := t.tokens[tp]; !owned {
		return 0, false
	}
	return t.led.Frontier(lkey(tp))
}

// pending counts the owned records that are registered and unfinished.
func (t *frontierTracker) pending() int {
	n := 0
	for tp := range t.tokens {
		n += len(t.led.Pending(lkey(tp)))
	}
	return n
}

func (t *frontierTracker) traceFrontiers() {
	if t.trace == nil {
		return
	}
	tps := make([]kpart.TopicPartition, 0, len(t.tokens))
	for tp := range t.tokens {
		tps = append(tps, tp)
	}
	kpart.Sort(tps)
	for _, tp := range tps {
		f, ok := t.led.Frontier(lkey(tp))
		if !ok {
			continue
		}
		if prev, seen := t.last[tp]; seen && prev == f {
			continue
		}
		t.last[tp] = f
		t.trace(traceevent.Event{Time: t.lp.Now().UTC(), AtMs: float64(t.lp.Elapsed()) / float64(time.Millisecond),
			Ev: traceevent.LedgerMark, Topic: tp.Topic, Partition: traceevent.P(tp.Partition), Offset: traceevent.P(f)})
	}
}
