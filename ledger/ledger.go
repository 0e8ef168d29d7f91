// Package ledger computes the offset a Kafka consumer may safely commit for
// each topic-partition: the completed prefix of the records the client
// returned, not the last completed record plus one.
//
// The application registers every record the client returns (from every
// poll or fetch, before the record is dispatched), reports the client's own
// next-offset evidence for the fetch, and reports each completion or durable
// quarantine. The frontier is the first position a replacement consumer can
// start from without skipping unfinished owned work:
//
//   - the lowest pending record of the current ownership incarnation, if any
//     record is pending;
//   - otherwise the highest of the assigned start offset, the highest
//     finished record plus one, and the client's next-offset evidence.
//
// Without next-offset evidence and with nothing pending, the frontier is the
// start offset or the highest finished record plus one, never further: the
// ledger cannot know what the client returned beyond what was registered.
//
// Offsets the client never returned (control markers, aborted transactional
// records, compacted positions) are gaps: the ledger never invents pending
// work for them, so they never hold the frontier back. The client returns a
// partition's records in offset order, so an offset below a registered one
// that was not registered was not returned; the next-offset evidence covers
// gaps after the last returned record (the article's "Sparse offsets must
// come from source evidence, not guessed holes"). A record registered and
// later dropped from a client cache (Discard) stays pending; it keeps
// blocking the frontier until it is redelivered and finished. That is the
// stranded-record case kstranded exists for.
//
// The design follows the article "Commit the Completed Kafka Prefix, Not the
// Last Completed Record" (reference profile: Apache Kafka and the Java
// client 4.3.1, traditional consumer groups).
//
// What it deliberately does not do: it talks to no Kafka client and no
// broker, it does not dispatch or retry work, it does not commit (it produces
// commit snapshots and checks the ones the caller reports as stored), and it
// cannot make an external effect idempotent. A stale completion from a
// revoked or lost incarnation is ignored here, but the effect it made
// downstream still happened; only the downstream resource can fence it.
//
// Every record belongs to the ownership incarnation (Token) that registered
// it; a new Assign starts a new incarnation and drops the old one's records,
// so the ledger keeps the token per partition rather than per record. Memory
// is bounded: finished records below the frontier are pruned, so a partition
// holds only its in-flight window, and a revoked or lost partition keeps its
// last window (for Stats and Pending) until it is assigned again.
//
// A Ledger is safe for concurrent use: handlers may report completions from
// their own goroutines. Commit sequencing still belongs to one owner (the
// goroutine that owns the consumer), as the article recommends; the ledger
// refuses commit regressions so that owner notices a stale snapshot.
package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotOwned: the token is not the current incarnation of the
	// partition, or the incarnation can no longer take this operation
	// (registering after a revoke, anything after a loss).
	ErrNotOwned = errors.New("ledger: partition not owned by this token")
	// ErrBehindFrontier: a record below the frontier that the ledger does
	// not hold. It is either finished (and pruned) or a gap the client
	// skipped; either way it must not be dispatched as new pending work,
	// because that would move the frontier backward.
	ErrBehindFrontier = errors.New("ledger: record behind the frontier")
	// ErrUnknownRecord: a completion or quarantine for an offset at or
	// above the frontier that was never registered.
	ErrUnknownRecord = errors.New("ledger: record was never registered")
	// ErrCommitRegression: a commit lower than one already stored for the
	// same ownership incarnation. Kafka would store it (the coordinator does
	// not refuse lower offsets), so the owner must not send it.
	ErrCommitRegression = errors.New("ledger: commit regression")
	// ErrPastFrontier: a commit above the frontier. Records below the commit
	// that are still pending are stranded: normal recovery starts after them.
	ErrPastFrontier = errors.New("ledger: commit past the frontier strands pending records")
)

// Token identifies one ownership incarnation of a partition: every Assign
// issues a new one. Work dispatched under a token can only change the ledger
// while that token is still the partition's current incarnation. The zero
// Token is never issued.
type Token uint64

// State is the state of one registered record.
type State uint8

const (
	// Pending: returned by the client and not yet finished. It caps the frontier.
	Pending State = iota + 1
	// Completed: the handler finished it.
	Completed
	// Quarantined: a durable disposition (a dead-letter write, say)
	// succeeded for it. Logging an error is not a disposition.
	Quarantined
)

func (s State) String() string {
	switch s {
	case Pending:
		return "pending"
	case Completed:
		return "completed"
	case Quarantined:
		return "quarantined"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Status is the ownership status of a partition's current incarnation.
type Status uint8

const (
	// Unassigned: the ledger has never seen the partition.
	Unassigned Status = iota
	// Assigned: owned; records may be registered and committed.
	Assigned
	// Revoked: a graceful revocation is under way. Completions still apply
	// (the revocation callback is the bounded window to drain in-flight
	// work) and FinalCommit returns the completed frontier; nothing new may
	// be registered.
	Revoked
	// Lost: another member may already own the partition. Nothing applies
	// any more and there is no final commit (onPartitionsLost grants no
	// commit window).
	Lost
)

func (s Status) String() string {
	switch s {
	case Unassigned:
		return "unassigned"
	case Assigned:
		return "assigned"
	case Revoked:
		return "revoked"
	case Lost:
		return "lost"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Commit is a commit snapshot: the offset to store for a partition (the next
// offset to consume, as Kafka commits are) and the incarnation it was taken
// from.
type Commit struct {
	TopicPartition kpart.TopicPartition
	Token          Token
	Offset         int64
	// LeaderEpoch is the leader epoch of the last record before Offset, as
	// Kafka's OffsetAndMetadata carries it: the epoch from the next-offset
	// evidence when the frontier equals it, else the epoch of the last
	// finished record below the frontier; -1 when unknown.
	LeaderEpoch int32
}

// Stats describes one partition's incarnation. Offsets are -1 when unknown.
type Stats struct {
	TopicPartition kpart.TopicPartition
	Token          Token
	Status         Status
	// Pending counts records that cap the frontier, Discarded those of them
	// the client dropped from its cache and has not returned again.
	Pending   int
	Discarded int
	// Completed, Quarantined and Redelivered count over the incarnation;
	// pruning does not reduce them.
	Completed   int
	Quarantined int
	Redelivered int
	// Tracked is the number of records held in memory: pending records and
	// finished records above the lowest pending one.
	Tracked       int
	Frontier      int64
	LowestPending int64
	Evidence      int64
	Committed     int64
}

type record struct {
	offset    int64
	epoch     int32
	state     State
	discarded bool
}

// partition is one incarnation. records is sorted by offset and, after every
// change, pruned so that it is empty or starts with a pending record: every
// finished record below the first pending one is dropped, because the
// frontier no longer depends on it. That keeps memory bounded by the
// in-flight window, not by the length of the run.
type partition struct {
	token  Token
	status Status
	start  int64

	records []record

	evidence      int64
	evidenceEpoch int32
	highestDone   int64 // highest finished offset, -1 if none
	floorOffset   int64 // highest pruned offset, -1 if none
	floorEpoch    int32
	committed     int64

	pending, discarded                  int
	completed, quarantined, redelivered int
}

// frontier returns the first position not proven finished, or -1 when the
// ledger knows no position at all (unknown start, nothing registered, no
// evidence).
func (p *partition) frontier() int64 {
	if len(p.records) > 0 {
		return p.records[0].offset // pending, by the pruning invariant
	}
	f := max(p.start, p.evidence)
	if p.highestDone >= 0 {
		f = max(f, p.highestDone+1)
	}
	return f
}

func (p *partition) commitEpoch(frontier int64) int32 {
	if p.evidence == frontier && p.evidenceEpoch >= 0 {
		return p.evidenceEpoch
	}
	if p.floorOffset >= 0 {
		return p.floorEpoch
	}
	return -1
}

func (p *partition) find(offset int64) (int, bool) {
	return slices.BinarySearchFunc(p.records, offset, func(r record, o int64) int { return cmp.Compare(r.offset, o) })
}

func (p *partition) finish(i int, s State) {
	r := &p.records[i]
	r.state = s
	if r.discarded {
		r.discarded = false
		p.discarded--
	}
	p.pending--
	if s == Completed {
		p.completed++
	} else {
		p.quarantined++
	}
	p.highestDone = max(p.highestDone, r.offset)
	p.prune()
}

func (p *partition) prune() {
	n := 0
	for n < len(p.records) && p.records[n].state != Pending {
		n++
	}
	if n == 0 {
		return
	}
	p.floorOffset = p.records[n-1].offset
	p.floorEpoch = p.records[n-1].epoch
	// Reslice rather than copy on every prune: records completed one by one
	// then cost amortised O(1) each (a copy per completion was quadratic in the
	// window: 40% of a simulation's allocations, issue 25). The backing array
	// pins at most the largest window held since it was allocated (an append
	// past its end reallocates to the live records), and it is copied once the
	// live records fill less than a quarter of what is left of it.
	p.records = p.records[n:]
	switch {
	case len(p.records) == 0:
		p.records = nil
	case len(p.records) < cap(p.records)/4:
		p.records = append([]record(nil), p.records...)
	}
}

// committable reports whether the incarnation may still produce and store
// commits.
func (p *partition) committable() bool { return p.status == Assigned || p.status == Revoked }

// Ledger tracks the completed prefix of every partition it has seen.
type Ledger struct {
	mu    sync.Mutex
	next  Token
	parts map[kpart.TopicPartition]*partition
}

// New returns an empty ledger.
func New() *Ledger {
	return &Ledger{parts: make(map[kpart.TopicPartition]*partition)}
}

// Assign starts a new ownership incarnation of tp and returns its token.
// start is the position consumption starts from (the committed offset, or
// -1 when it is not known yet, e.g. before auto.offset.reset resolves).
// Whatever an earlier incarnation held is dropped: its records belong to a
// previous owner and the new owner starts from start.
func (l *Ledger) Assign(tp kpart.TopicPartition, start int64) Token {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	l.parts[tp] = &partition{
		token:         l.next,
		status:        Assigned,
		start:         max(start, -1),
		evidence:      -1,
		evidenceEpoch: -1,
		highestDone:   -1,
		floorOffset:   -1,
		floorEpoch:    -1,
		committed:     -1,
	}
	return l.next
}

func (l *Ledger) assigned(tp kpart.TopicPartition, tok Token) (*partition, error) {
	p := l.parts[tp]
	if p == nil || p.token != tok || p.status != Assigned {
		return nil, fmt.Errorf("%w: %s token %d", ErrNotOwned, tp, tok)
	}
	return p, nil
}

// current returns the partition when tok may still finish work on it:
// the current incarnation, assigned or being revoked.
func (l *Ledger) current(tp kpart.TopicPartition, tok Token) *partition {
	p := l.parts[tp]
	if p == nil || p.token != tok || !p.committable() {
		return nil
	}
	return p
}

// Register records that the client returned the record at offset. Call it
// for every returned record, in the order the client returned them, before
// the record is dispatched, and before Evidence for the same fetch.
//
// Registering an offset the ledger already holds is the same record
// returned again (re-fetched after a rewind or a cache clear), not a
// duplicate: the state it has is returned and only Pending means "dispatch
// it". An unknown offset below the frontier fails with ErrBehindFrontier
// (finished and pruned, or a gap): do not dispatch it.
func (l *Ledger) Register(tp kpart.TopicPartition, tok Token, offset int64, leaderEpoch int32) (State, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.assigned(tp, tok)
	if err != nil {
		return 0, err
	}
	if offset < 0 {
		return 0, fmt.Errorf("ledger: %s: invalid offset %d", tp, offset)
	}
	i, found := p.find(offset)
	if found {
		r := &p.records[i]
		if r.discarded {
			r.discarded = false
			p.discarded--
			p.redelivered++
		}
		return r.state, nil
	}
	if f := p.frontier(); f >= 0 && offset < f {
		return 0, fmt.Errorf("%w: %s offset %d, frontier %d", ErrBehindFrontier, tp, offset, f)
	}
	p.records = slices.Insert(p.records, i, record{offset: offset, epoch: leaderEpoch, state: Pending})
	p.pending++
	return Pending, nil
}

// Evidence records the client's next-offset evidence after a fetch: the
// position after the records it returned (ConsumerRecords.nextOffsets() in
// the Java client, the fetch position elsewhere). Offsets below it that were
// not registered are gaps. Lower evidence than already held (a re-fetch
// after a rewind) is ignored. leaderEpoch is -1 when the client gives none.
func (l *Ledger) Evidence(tp kpart.TopicPartition, tok Token, nextOffset int64, leaderEpoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.assigned(tp, tok)
	if err != nil {
		return err
	}
	if nextOffset > p.evidence {
		p.evidence = nextOffset
		p.evidenceEpoch = leaderEpoch
	}
	return nil
}

// Discard records that the client dropped the given records from its cache
// before they were delivered (a fetch-buffer clear on seek, pause or
// rebalance). They stay pending: they were registered as returned work and
// nothing finished them, so the frontier must not pass them. A later
// Register of the same offset is their redelivery. It returns how many
// pending records it marked; finished or unknown offsets are ignored.
func (l *Ledger) Discard(tp kpart.TopicPartition, tok Token, offsets ...int64) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.assigned(tp, tok)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range offsets {
		i, found := p.find(o)
		if !found {
			continue
		}
		r := &p.records[i]
		if r.state == Pending && !r.discarded {
			r.discarded = true
			p.discarded++
			n++
		}
	}
	return n, nil
}

// Complete records that the handler finished the record at offset. It
// reports whether the ledger changed. A completion carrying a stale token
// (from before a revoke and reassign, or after a loss) is ignored: false,
// nil. So is a second completion of a finished record. An offset never
// registered fails with ErrUnknownRecord.
func (l *Ledger) Complete(tp kpart.TopicPartition, tok Token, offset int64) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.current(tp, tok)
	if p == nil {
		return false, nil
	}
	i, ok, err := p.pendingAt(tp, offset)
	if !ok {
		return false, err
	}
	p.finish(i, Completed)
	return true, nil
}

// pendingAt finds the pending record at offset. ok is false when there is
// none; err says why when that is a caller error rather than a finished
// record.
func (p *partition) pendingAt(tp kpart.TopicPartition, offset int64) (i int, ok bool, err error) {
	i, found := p.find(offset)
	if !found {
		if f := p.frontier(); f >= 0 && offset < f {
			return 0, false, nil // finished and pruned, or a gap
		}
		return 0, false, fmt.Errorf("%w: %s offset %d", ErrUnknownRecord, tp, offset)
	}
	return i, p.records[i].state == Pending, nil
}

// Quarantine finishes the pending record at offset as quarantined, but only
// if dispose, the durable disposition (a dead-letter write, a quarantine
// table insert), returns nil. When dispose fails the record stays pending,
// the frontier does not move, and the error is returned.
//
// dispose runs without the ledger's lock, so handlers may block in it. It
// is not called for a stale token or a record that is not pending. If the
// incarnation ends while dispose runs, the disposition has happened but the
// ledger is not changed (false, nil): make the disposition keyed by the
// record's coordinates so the next owner's disposition does not duplicate it.
func (l *Ledger) Quarantine(tp kpart.TopicPartition, tok Token, offset int64, dispose func() error) (bool, error) {
	l.mu.Lock()
	p := l.current(tp, tok)
	if p == nil {
		l.mu.Unlock()
		return false, nil
	}
	_, ok, err := p.pendingAt(tp, offset)
	l.mu.Unlock()
	if !ok {
		return false, err
	}

	if err := dispose(); err != nil {
		return false, fmt.Errorf("ledger: %s offset %d: disposition failed, record stays pending: %w", tp, offset, err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if p = l.current(tp, tok); p == nil {
		return false, nil
	}
	i, ok, _ := p.pendingAt(tp, offset)
	if !ok {
		return false, nil
	}
	p.finish(i, Quarantined)
	return true, nil
}

// Revoke marks tp's current incarnation as being revoked gracefully. Its
// completions still apply until FinalCommit is taken; nothing new can be
// registered. It reports whether the partition was assigned.
func (l *Ledger) Revoke(tp kpart.TopicPartition) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil || p.status != Assigned {
		return false
	}
	p.status = Revoked
	return true
}

// Lose marks tp's current incarnation as lost: another member may own the
// partition already, so nothing applies any more and there is no final
// commit. Records still pending stay visible in Stats and Pending. It
// reports whether the partition was assigned or being revoked.
func (l *Ledger) Lose(tp kpart.TopicPartition) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil || !p.committable() {
		return false
	}
	p.status = Lost
	return true
}

// Frontier returns tp's frontier: the lowest pending record, or when none is
// pending the highest of the start offset, the highest finished record plus
// one and the next-offset evidence. ok is false when the partition is unknown
// or no position is known yet. It is informative whatever the status; use
// PrepareCommit or FinalCommit for a value to commit.
func (l *Ledger) Frontier(tp kpart.TopicPartition) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil {
		return -1, false
	}
	f := p.frontier()
	return f, f >= 0
}

// PrepareCommit returns a commit snapshot of tp's frontier when there is
// progress to commit: the incarnation is assigned or being revoked, the
// frontier is known, and it is above the offset last stored by this
// incarnation.
func (l *Ledger) PrepareCommit(tp kpart.TopicPartition) (Commit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil || !p.committable() {
		return Commit{}, false
	}
	f := p.frontier()
	if f < 0 || f <= p.committed {
		return Commit{}, false
	}
	return Commit{TopicPartition: tp, Token: p.token, Offset: f, LeaderEpoch: p.commitEpoch(f)}, true
}

// FinalCommit returns the commit to make while a revocation is under way:
// the completed frontier, even when it was stored already, since the
// revocation callback is the last window this incarnation has. ok is false
// for a lost partition (no final commit), for one still assigned (call
// Revoke first), and when the frontier is unknown or below the stored
// commit.
func (l *Ledger) FinalCommit(tp kpart.TopicPartition) (Commit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil || p.status != Revoked {
		return Commit{}, false
	}
	f := p.frontier()
	if f < 0 || f < p.committed {
		return Commit{}, false
	}
	return Commit{TopicPartition: tp, Token: p.token, Offset: f, LeaderEpoch: p.commitEpoch(f)}, true
}

// CheckCommit checks a commit snapshot immediately before it is sent:
// ErrNotOwned for a snapshot from another incarnation or a lost one,
// ErrCommitRegression when it is below a commit already stored by this
// incarnation (the coordinator would store it), ErrPastFrontier when it is
// above the frontier. It changes nothing.
func (l *Ledger) CheckCommit(c Commit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.checkCommit(c)
	if err != nil {
		return err
	}
	if f := p.frontier(); c.Offset > f {
		return p.pastFrontier(c, f)
	}
	return nil
}

func (l *Ledger) checkCommit(c Commit) (*partition, error) {
	p := l.current(c.TopicPartition, c.Token)
	if p == nil {
		return nil, fmt.Errorf("%w: commit %d for %s token %d", ErrNotOwned, c.Offset, c.TopicPartition, c.Token)
	}
	if c.Offset < p.committed {
		return nil, fmt.Errorf("%w: %s commit %d is below stored commit %d for token %d",
			ErrCommitRegression, c.TopicPartition, c.Offset, p.committed, c.Token)
	}
	return p, nil
}

func (p *partition) pastFrontier(c Commit, f int64) error {
	n := 0
	for _, r := range p.records {
		if r.offset >= c.Offset {
			break
		}
		if r.state == Pending {
			n++
		}
	}
	return fmt.Errorf("%w: %s commit %d, frontier %d, %d pending record(s) below the commit",
		ErrPastFrontier, c.TopicPartition, c.Offset, f, n)
}

// Committed records that the coordinator stored c (the commit callback
// succeeded). A commit from another incarnation is ErrNotOwned and a commit
// below the stored one is ErrCommitRegression; neither is recorded. A commit
// above the frontier is recorded, since the broker has it, and reported
// with ErrPastFrontier: the pending records below it are stranded.
func (l *Ledger) Committed(c Commit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, err := l.checkCommit(c)
	if err != nil {
		return err
	}
	p.committed = c.Offset
	if f := p.frontier(); c.Offset > f {
		return p.pastFrontier(c, f)
	}
	return nil
}

// Pending returns tp's pending offsets in ascending order.
func (l *Ledger) Pending(tp kpart.TopicPartition) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil {
		return nil
	}
	var out []int64
	for _, r := range p.records {
		if r.state == Pending {
			out = append(out, r.offset)
		}
	}
	return out
}

// Stats returns a snapshot of tp's incarnation; ok is false when the ledger
// has never seen tp.
func (l *Ledger) Stats(tp kpart.TopicPartition) (Stats, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil {
		return Stats{TopicPartition: tp, Frontier: -1, LowestPending: -1, Evidence: -1, Committed: -1}, false
	}
	lowest := int64(-1)
	if len(p.records) > 0 {
		lowest = p.records[0].offset
	}
	return Stats{
		TopicPartition: tp,
		Token:          p.token,
		Status:         p.status,
		Pending:        p.pending,
		Discarded:      p.discarded,
		Completed:      p.completed,
		Quarantined:    p.quarantined,
		Redelivered:    p.redelivered,
		Tracked:        len(p.records),
		Frontier:       p.frontier(),
		LowestPending:  lowest,
		Evidence:       p.evidence,
		Committed:      p.committed,
	}, true
}
