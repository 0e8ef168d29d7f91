package ledger

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
)

// This file checks the ledger against a reference model: the article's
// completedFrontier function written as plainly as possible, over every
// record ever registered (no pruning, no incremental bookkeeping), driven by
// a random interleaving of operations decoded from bytes. Besides agreeing
// with the model, every step checks the invariants the ledger exists for:
//
//   - the frontier never passes a pending record of the current incarnation;
//   - the frontier never moves backward within one incarnation;
//   - once no work is pending, the frontier equals the next-offset evidence
//     (when the evidence covers everything registered);
//   - the ledger holds no record below the frontier (memory stays bounded).

type refRecord struct {
	state     State
	discarded bool
}

type refPartition struct {
	token    Token
	previous Token // the incarnation before token, for stale operations
	status   Status
	start    int64
	records  map[int64]*refRecord
	evidence int64

	committed                           int64
	completed, quarantined, redelivered int
}

func (r *refPartition) pending() []int64 {
	var out []int64
	for o, rec := range r.records {
		if rec.state == Pending {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// frontier is the article's completedFrontier, plus the start offset and
// the highest finished record when there is no evidence.
func (r *refPartition) frontier() int64 {
	if p := r.pending(); len(p) > 0 {
		return p[0]
	}
	f := max(r.start, r.evidence)
	for o, rec := range r.records {
		if rec.state != Pending {
			f = max(f, o+1)
		}
	}
	return f
}

func (r *refPartition) discarded() int {
	n := 0
	for _, rec := range r.records {
		if rec.state == Pending && rec.discarded {
			n++
		}
	}
	return n
}

type model struct {
	t     testing.TB
	l     *Ledger
	parts map[kpart.TopicPartition]*refPartition
	// last frontier seen per incarnation, for the monotonicity check.
	last map[Token]int64
	// trace of decoded operations, printed on failure.
	trace []string
}

func newModel(t testing.TB) *model {
	return &model{t: t, l: New(), parts: map[kpart.TopicPartition]*refPartition{}, last: map[Token]int64{}}
}

var errDisposition = errors.New("disposition failed")

// run decodes data three bytes at a time into operations and applies each to
// the ledger and the model, checking after every one.
func (m *model) run(data []byte) {
	for len(data) >= 3 {
		m.step(data[0], data[1], data[2])
		data = data[3:]
		for _, tp := range []kpart.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}} {
			m.check(tp)
		}
	}
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s\noperations:\n  %s", fmt.Sprintf(format, args...), joinTrace(m.trace))
}

func joinTrace(trace []string) string {
	s := ""
	for i, op := range trace {
		if i > 0 {
			s += "\n  "
		}
		s += op
	}
	return s
}

func (m *model) step(k, a, b byte) {
	m.t.Helper()
	tp := kpart.TopicPartition{Topic: "t", Partition: int32(a & 1)}
	r := m.parts[tp]
	if r == nil {
		r = &refPartition{status: Unassigned, start: -1, evidence: -1, committed: -1, records: map[int64]*refRecord{}}
	}

	// Token: mostly the current incarnation, sometimes the one before it
	// (a delayed message from before a reassign), sometimes one never issued.
	tok := r.token
	switch (a >> 1) & 3 {
	case 2:
		if r.previous != 0 {
			tok = r.previous
		}
	case 3:
		tok = 1 << 40
	}
	owned := tok == r.token && r.status == Assigned
	finishing := tok == r.token && (r.status == Assigned || r.status == Revoked)

	// Offset: a small raw offset, or one of the model's pending records so
	// completions hit registered work often.
	offset := int64(b & 0x1f)
	if p := r.pending(); b&0x80 != 0 && len(p) > 0 {
		offset = p[int(b&0x7f)%len(p)]
	}
	epoch := int32(a >> 4)

	switch k % 13 {
	case 0: // assign
		start := int64(b%34) - 1 // -1 (unknown) to 32
		m.trace = append(m.trace, fmt.Sprintf("Assign(%s, %d)", tp, start))
		prev := r.token
		tok := m.l.Assign(tp, start)
		r = &refPartition{token: tok, previous: prev, status: Assigned, start: start, evidence: -1, committed: -1, records: map[int64]*refRecord{}}
		m.parts[tp] = r

	case 1, 2: // register one record, or a sparse fetch followed by its evidence
		offsets := []int64{offset}
		if k%13 == 2 {
			stride := int64(a>>3)%2 + 1
			for i := range int64(a>>5) % 4 {
				offsets = append(offsets, offset+(i+1)*stride)
			}
		}
		for _, o := range offsets {
			m.trace = append(m.trace, fmt.Sprintf("Register(%s, tok %d, %d)", tp, tok, o))
			got, err := m.l.Register(tp, tok, o, epoch)
			var want State
			var wantErr error
			switch rec := r.records[o]; {
			case !owned:
				wantErr = ErrNotOwned
			case o < r.frontier():
				wantErr = ErrBehindFrontier
			case rec != nil:
				want = rec.state
				if rec.discarded {
					rec.discarded = false
					r.redelivered++
				}
			default:
				want = Pending
				r.records[o] = &refRecord{state: Pending}
			}
			if got != want || !errors.Is(err, wantErr) {
				m.fail("Register = %v, %v; want %v, %v", got, err, want, wantErr)
			}
		}
		if k%13 == 2 {
			next := offsets[len(offsets)-1] + 1
			m.evidence(tp, r, tok, owned, next, epoch)
		}

	case 3: // complete
		m.trace = append(m.trace, fmt.Sprintf("Complete(%s, tok %d, %d)", tp, tok, offset))
		got, err := m.l.Complete(tp, tok, offset)
		want, wantErr := m.finish(r, finishing, offset, Completed)
		if got != want || !errors.Is(err, wantErr) {
			m.fail("Complete = %v, %v; want %v, %v", got, err, want, wantErr)
		}

	case 4, 5: // quarantine with a durable disposition (4) or a failed one (5)
		dispositionOK := k%13 == 4
		m.trace = append(m.trace, fmt.Sprintf("Quarantine(%s, tok %d, %d, disposition ok %v)", tp, tok, offset, dispositionOK))
		called := false
		got, err := m.l.Quarantine(tp, tok, offset, func() error {
			called = true
			if dispositionOK {
				return nil
			}
			return errDisposition
		})
		rec := r.records[offset]
		wantCalled := finishing && rec != nil && rec.state == Pending
		var want bool
		var wantErr error
		switch {
		case wantCalled && dispositionOK:
			want, wantErr = m.finish(r, finishing, offset, Quarantined)
		case wantCalled:
			wantErr = errDisposition
		default:
			// Not pending or not finishing: finish changes nothing and
			// gives the answer (false, nil or ErrUnknownRecord).
			_, wantErr = m.finish(r, finishing, offset, Quarantined)
		}
		if got != want || !errors.Is(err, wantErr) || called != wantCalled {
			m.fail("Quarantine = %v, %v, dispose called %v; want %v, %v, %v", got, err, called, want, wantErr, wantCalled)
		}

	case 6: // next-offset evidence
		m.evidence(tp, r, tok, owned, offset, epoch)

	case 7: // revoke
		m.trace = append(m.trace, fmt.Sprintf("Revoke(%s)", tp))
		want := r.status == Assigned
		if got := m.l.Revoke(tp); got != want {
			m.fail("Revoke = %v; want %v", got, want)
		}
		if want {
			r.status = Revoked
		}

	case 8: // lose
		m.trace = append(m.trace, fmt.Sprintf("Lose(%s)", tp))
		want := r.status == Assigned || r.status == Revoked
		if got := m.l.Lose(tp); got != want {
			m.fail("Lose = %v; want %v", got, want)
		}
		if want {
			r.status = Lost
		}

	case 9: // the client drops two cached records
		m.trace = append(m.trace, fmt.Sprintf("Discard(%s, tok %d, %d, %d)", tp, tok, offset, offset+1))
		got, err := m.l.Discard(tp, tok, offset, offset+1)
		want := 0
		var wantErr error
		if !owned {
			wantErr = ErrNotOwned
		} else {
			for _, o := range []int64{offset, offset + 1} {
				if rec := r.records[o]; rec != nil && rec.state == Pending && !rec.discarded {
					rec.discarded = true
					want++
				}
			}
		}
		if got != want || !errors.Is(err, wantErr) {
			m.fail("Discard = %d, %v; want %d, %v", got, err, want, wantErr)
		}

	case 10: // the owner commits the prepared frontier and the commit is stored
		m.trace = append(m.trace, fmt.Sprintf("PrepareCommit(%s)+Committed", tp))
		c, ok := m.l.PrepareCommit(tp)
		f := r.frontier()
		wantOK := (r.status == Assigned || r.status == Revoked) && f >= 0 && f > r.committed
		if ok != wantOK || ok && (c.Offset != f || c.Token != r.token || c.TopicPartition != tp) {
			m.fail("PrepareCommit = %+v, %v; want offset %d token %d, %v", c, ok, f, r.token, wantOK)
		}
		if ok {
			if err := m.l.CheckCommit(c); err != nil {
				m.fail("CheckCommit(prepared %+v) = %v", c, err)
			}
			if err := m.l.Committed(c); err != nil {
				m.fail("Committed(prepared %+v) = %v", c, err)
			}
			r.committed = c.Offset
		}

	case 11: // some commit is reported stored: stale, regressing, past the frontier, or fine
		c := Commit{TopicPartition: tp, Token: tok, Offset: offset}
		m.trace = append(m.trace, fmt.Sprintf("Committed(%s, tok %d, %d)", tp, tok, offset))
		var wantErr error
		switch {
		case !(tok == r.token && r.token != 0 && (r.status == Assigned || r.status == Revoked)):
			wantErr = ErrNotOwned
		case offset < r.committed:
			wantErr = ErrCommitRegression
		case offset > r.frontier():
			wantErr = ErrPastFrontier
		}
		if err := m.l.CheckCommit(c); !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			m.fail("CheckCommit = %v; want %v", err, wantErr)
		}
		if err := m.l.Committed(c); !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			m.fail("Committed = %v; want %v", err, wantErr)
		}
		if wantErr == nil || errors.Is(wantErr, ErrPastFrontier) {
			r.committed = offset
		}

	case 12: // final commit
		m.trace = append(m.trace, fmt.Sprintf("FinalCommit(%s)", tp))
		c, ok := m.l.FinalCommit(tp)
		f := r.frontier()
		wantOK := r.status == Revoked && f >= 0 && f >= r.committed
		if ok != wantOK || ok && (c.Offset != f || c.Token != r.token) {
			m.fail("FinalCommit = %+v, %v; want offset %d, %v", c, ok, f, wantOK)
		}
		if r.status == Lost && ok {
			m.fail("a lost partition got a final commit %+v", c)
		}
	}
}

func (m *model) evidence(tp kpart.TopicPartition, r *refPartition, tok Token, owned bool, next int64, epoch int32) {
	m.t.Helper()
	m.trace = append(m.trace, fmt.Sprintf("Evidence(%s, tok %d, %d)", tp, tok, next))
	err := m.l.Evidence(tp, tok, next, epoch)
	var wantErr error
	if !owned {
		wantErr = ErrNotOwned
	} else {
		r.evidence = max(r.evidence, next)
	}
	if !errors.Is(err, wantErr) {
		m.fail("Evidence = %v; want %v", err, wantErr)
	}
}

// finish applies a completion or quarantine to the model and returns what
// the ledger should answer.
func (m *model) finish(r *refPartition, finishing bool, offset int64, s State) (bool, error) {
	if !finishing {
		return false, nil
	}
	rec := r.records[offset]
	switch {
	case rec != nil && rec.state == Pending:
		rec.state = s
		rec.discarded = false
		if s == Completed {
			r.completed++
		} else {
			r.quarantined++
		}
		return true, nil
	case rec != nil, offset < r.frontier():
		return false, nil
	}
	return false, ErrUnknownRecord
}

func (m *model) check(tp kpart.TopicPartition) {
	m.t.Helper()
	r := m.parts[tp]
	got, ok := m.l.Frontier(tp)
	if r == nil {
		if ok {
			m.fail("Frontier(%s) = %d for a partition never assigned", tp, got)
		}
		return
	}
	f := r.frontier()
	if got != f || ok != (f >= 0) {
		m.fail("Frontier(%s) = %d, %v; model says %d", tp, got, ok, f)
	}
	if !ok {
		return
	}

	// Invariant: the frontier never passes a pending record.
	pending := r.pending()
	for _, o := range pending {
		if got > o {
			m.fail("Frontier(%s) = %d passes pending record %d", tp, got, o)
		}
	}
	// Invariant: the frontier never moves backward within an incarnation.
	if last, seen := m.last[r.token]; seen && got < last {
		m.fail("Frontier(%s) moved backward from %d to %d within token %d", tp, last, got, r.token)
	}
	m.last[r.token] = got
	// Invariant: with all work finished and evidence covering everything
	// registered, the frontier is the evidence.
	if len(pending) == 0 && r.evidence >= r.start {
		covered := true
		for o := range r.records {
			if o >= r.evidence {
				covered = false
			}
		}
		if covered && got != r.evidence {
			m.fail("Frontier(%s) = %d with nothing pending; want evidence %d", tp, got, r.evidence)
		}
	}

	if p := m.l.Pending(tp); !slices.Equal(p, pending) {
		m.fail("Pending(%s) = %v; model says %v", tp, p, pending)
	}
	// Invariant: nothing below the frontier is held.
	tracked := 0
	if len(pending) > 0 {
		for o := range r.records {
			if o >= pending[0] {
				tracked++
			}
		}
	}
	lowest := int64(-1)
	if len(pending) > 0 {
		lowest = pending[0]
	}
	want := Stats{
		TopicPartition: tp, Token: r.token, Status: r.status,
		Pending: len(pending), Discarded: r.discarded(),
		Completed: r.completed, Quarantined: r.quarantined, Redelivered: r.redelivered,
		Tracked: tracked, Frontier: f, LowestPending: lowest, Evidence: r.evidence, Committed: r.committed,
	}
	if s, _ := m.l.Stats(tp); s != want {
		m.fail("Stats(%s)\n got %+v\nwant %+v", tp, s, want)
	}
}

// articleOps encodes the article's scenarios as operations, for fuzz seeds.
// Each operation is three bytes: kind, a (bit 0: partition; bits 1-2:
// token choice), b (the offset; for Assign the start offset plus one).
func articleOps() map[string][]byte {
	const (
		assign, register, complete, quarantineOK, quarantineFail, evidence = 0, 1, 3, 4, 5, 6
		revoke, lose, discard, commit, committed, final                    = 7, 8, 9, 10, 11, 12
		stale                                                              = 2 << 1 // a: previous token
	)
	return map[string][]byte{
		"pending 11 holds the frontier, then 13": {
			assign, 0, 11, register, 0, 10, register, 0, 11, register, 0, 12, evidence, 0, 13,
			complete, 0, 10, complete, 0, 12, commit, 0, 0, complete, 0, 11, commit, 0, 0,
		},
		"a marker at 11 is a gap": {
			assign, 0, 11, register, 0, 10, register, 0, 12, evidence, 0, 13,
			complete, 0, 10, commit, 0, 0, complete, 0, 12, commit, 0, 0,
		},
		"a stale completion after revoke and reassign is ignored": {
			assign, 0, 11, register, 0, 10, register, 0, 11, revoke, 0, 0, final, 0, 0,
			assign, 0, 11, register, 0, 10, complete, stale, 10, complete, 0, 10,
		},
		"a commit regression is refused": {
			assign, 0, 11, register, 0, 10, register, 0, 11, register, 0, 12, evidence, 0, 13,
			complete, 0, 10, complete, 0, 11, complete, 0, 12, committed, 0, 13, committed, 0, 11,
		},
		"quarantine counts only with a durable disposition": {
			assign, 0, 11, register, 0, 10, evidence, 0, 11, quarantineFail, 0, 10, commit, 0, 0,
			quarantineOK, 0, 10, commit, 0, 0,
		},
		"lost gets no final commit, revoked does": {
			assign, 0, 11, assign, 1, 11, register, 0, 10, register, 1, 10, complete, 0, 10, complete, 1, 10,
			lose, 0, 0, revoke, 1, 0, final, 0, 0, final, 1, 0,
		},
		"discarded records stay pending until redelivered": {
			assign, 0, 11, register, 0, 10, register, 0, 11, register, 0, 12, evidence, 0, 13,
			discard, 0, 11, complete, 0, 10, commit, 0, 0, register, 0, 11, register, 0, 12,
			complete, 0, 11, complete, 0, 12, commit, 0, 0,
		},
	}
}

func TestArticleScenariosAgainstTheModel(t *testing.T) {
	ops := articleOps()
	for _, name := range slices.Sorted(maps.Keys(ops)) {
		t.Run(name, func(t *testing.T) { newModel(t).run(ops[name]) })
	}
}

// TestLedgerAgreesWithTheModel is the property test: many deterministic
// random interleavings, each checked step by step.
func TestLedgerAgreesWithTheModel(t *testing.T) {
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	for seed := range uint64(iterations) {
		rng := rand.New(rand.NewPCG(seed, 0x6b737472616e6465))
		data := make([]byte, 3*(10+rng.IntN(150)))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		// Start with an assignment most of the time so runs do real work.
		if seed%4 != 0 {
			data[0] = 0
		}
		m := newModel(t)
		m.trace = append(m.trace, fmt.Sprintf("(seed %d)", seed))
		m.run(data)
	}
}

// FuzzLedger runs the model check on fuzzed interleavings. Its seed corpus
// is in testdata/fuzz/FuzzLedger: the article scenarios (articleOps, written
// out as files) and a few interleavings the fuzzer found; plain go test runs
// them.
func FuzzLedger(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 3*400 {
			data = data[:3*400]
		}
		newModel(t).run(data)
	})
}
