package ledger

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
)

var tp0 = kpart.TopicPartition{Topic: "orders", Partition: 0}

// harness drives one partition through a scenario. tok is the current
// incarnation, old the one before the last reassign.
type harness struct {
	t        *testing.T
	l        *Ledger
	tok, old Token
}

type step func(h *harness)

func newHarness(t *testing.T, start int64) *harness {
	l := New()
	return &harness{t: t, l: l, tok: l.Assign(tp0, start)}
}

func reg(offsets ...int64) step {
	return func(h *harness) {
		h.t.Helper()
		for _, o := range offsets {
			if _, err := h.l.Register(tp0, h.tok, o, 3); err != nil {
				h.t.Fatalf("Register(%d): %v", o, err)
			}
		}
	}
}

func evidence(next int64) step {
	return func(h *harness) {
		h.t.Helper()
		if err := h.l.Evidence(tp0, h.tok, next, 3); err != nil {
			h.t.Fatalf("Evidence(%d): %v", next, err)
		}
	}
}

func complete(offsets ...int64) step {
	return func(h *harness) {
		h.t.Helper()
		for _, o := range offsets {
			if ok, err := h.l.Complete(tp0, h.tok, o); !ok || err != nil {
				h.t.Fatalf("Complete(%d) = %v, %v; want true, nil", o, ok, err)
			}
		}
	}
}

func discard(offsets ...int64) step {
	return func(h *harness) {
		h.t.Helper()
		if _, err := h.l.Discard(tp0, h.tok, offsets...); err != nil {
			h.t.Fatalf("Discard(%v): %v", offsets, err)
		}
	}
}

var errDLQDown = errors.New("dead-letter topic unavailable")

func quarantine(offset int64, dispositionErr error) step {
	return func(h *harness) {
		h.t.Helper()
		ok, err := h.l.Quarantine(tp0, h.tok, offset, func() error { return dispositionErr })
		if dispositionErr == nil && (!ok || err != nil) {
			h.t.Fatalf("Quarantine(%d) = %v, %v; want true, nil", offset, ok, err)
		}
		if dispositionErr != nil && (ok || !errors.Is(err, dispositionErr)) {
			h.t.Fatalf("Quarantine(%d) = %v, %v; want false, %v", offset, ok, err, dispositionErr)
		}
	}
}

// reassign revokes the partition and assigns it again from start.
func reassign(start int64) step {
	return func(h *harness) {
		h.l.Revoke(tp0)
		h.old, h.tok = h.tok, h.l.Assign(tp0, start)
	}
}

func staleComplete(offset int64) step {
	return func(h *harness) {
		h.t.Helper()
		if ok, err := h.l.Complete(tp0, h.old, offset); ok || err != nil {
			h.t.Fatalf("Complete(stale token, %d) = %v, %v; want false, nil", offset, ok, err)
		}
	}
}

func TestFrontier(t *testing.T) {
	tests := []struct {
		name         string
		start        int64
		steps        []step
		wantFrontier int64
		wantPending  []int64
	}{
		{
			name:         "the start offset is the frontier before the client returns anything",
			start:        42,
			wantFrontier: 42,
		},
		{
			name:         "a pending record between completed ones holds the frontier at its offset",
			start:        10,
			steps:        []step{reg(10, 11, 12), evidence(13), complete(10, 12)},
			wantFrontier: 11,
			wantPending:  []int64{11},
		},
		{
			name:         "completing the last pending record advances the frontier to the next-offset evidence",
			start:        10,
			steps:        []step{reg(10, 11, 12), evidence(13), complete(10, 12, 11)},
			wantFrontier: 13,
		},
		{
			name:         "evidence beyond the last returned record carries the frontier over trailing gaps",
			start:        10,
			steps:        []step{reg(10, 11, 12), evidence(15), complete(10, 11, 12)},
			wantFrontier: 15,
		},
		{
			name:         "a sparse offset is a gap, not pending work, once the record before it completes",
			start:        10,
			steps:        []step{reg(10, 12), evidence(13), complete(10)},
			wantFrontier: 12,
			wantPending:  []int64{12},
		},
		{
			name:         "a sparse offset does not hold the frontier after the records around it complete",
			start:        10,
			steps:        []step{reg(10, 12), evidence(13), complete(10, 12)},
			wantFrontier: 13,
		},
		{
			name:         "without evidence the frontier stops right after the highest finished record",
			start:        10,
			steps:        []step{reg(10, 12), complete(12, 10)},
			wantFrontier: 13,
		},
		{
			name:         "a record from an earlier poll keeps blocking after later polls complete",
			start:        10,
			steps:        []step{reg(10), evidence(11), reg(11, 12), evidence(13), complete(11, 12)},
			wantFrontier: 10,
			wantPending:  []int64{10},
		},
		{
			name:         "evidence lower than the evidence already held is ignored",
			start:        10,
			steps:        []step{reg(10, 11), evidence(12), evidence(11), complete(10, 11)},
			wantFrontier: 12,
		},
		{
			name:  "a stale completion from before a revoke and reassign is ignored",
			start: 10,
			steps: []step{
				reg(10, 11), evidence(12), complete(10),
				reassign(11), reg(11), evidence(12),
				staleComplete(11),
			},
			wantFrontier: 11,
			wantPending:  []int64{11},
		},
		{
			name:         "a quarantine whose disposition fails does not advance the frontier",
			start:        10,
			steps:        []step{reg(10, 11), evidence(12), complete(11), quarantine(10, errDLQDown)},
			wantFrontier: 10,
			wantPending:  []int64{10},
		},
		{
			name:         "a quarantine with a durable disposition advances the frontier",
			start:        10,
			steps:        []step{reg(10, 11), evidence(12), complete(11), quarantine(10, errDLQDown), quarantine(10, nil)},
			wantFrontier: 12,
		},
		{
			name:         "records discarded from the client cache stay pending and block the frontier",
			start:        10,
			steps:        []step{reg(10, 11, 12), evidence(13), discard(11, 12), complete(10)},
			wantFrontier: 11,
			wantPending:  []int64{11, 12},
		},
		{
			name:  "a discarded record registered again is the same pending entry, finished once",
			start: 10,
			steps: []step{
				reg(10, 11, 12), evidence(13), discard(11, 12), complete(10),
				reg(11, 12), evidence(13), complete(11, 12),
			},
			wantFrontier: 13,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.start)
			for _, s := range tt.steps {
				s(h)
			}
			got, ok := h.l.Frontier(tp0)
			if !ok || got != tt.wantFrontier {
				t.Errorf("Frontier = %d, %v; want %d, true", got, ok, tt.wantFrontier)
			}
			if p := h.l.Pending(tp0); !slices.Equal(p, tt.wantPending) {
				t.Errorf("Pending = %v; want %v", p, tt.wantPending)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	tests := []struct {
		name    string
		steps   []step
		offset  int64
		want    State
		wantErr error
	}{
		{
			name:   "a new record at or above the frontier is pending",
			steps:  []step{reg(10)},
			offset: 11,
			want:   Pending,
		},
		{
			name:   "a completed record returned again after a rewind reports completed, not new work",
			steps:  []step{reg(10, 11), complete(11)},
			offset: 11,
			want:   Completed,
		},
		{
			name:    "a record behind the frontier that was finished and pruned is refused",
			steps:   []step{reg(10), evidence(11), complete(10)},
			offset:  10,
			wantErr: ErrBehindFrontier,
		},
		{
			name:    "a gap the evidence skipped cannot become pending work later",
			steps:   []step{reg(10, 12), evidence(13), complete(10, 12)},
			offset:  11,
			wantErr: ErrBehindFrontier,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 10)
			for _, s := range tt.steps {
				s(h)
			}
			before, _ := h.l.Frontier(tp0)
			got, err := h.l.Register(tp0, h.tok, tt.offset, 3)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("Register(%d) = %v, %v; want %v, %v", tt.offset, got, err, tt.want, tt.wantErr)
			}
			if after, _ := h.l.Frontier(tp0); after < before {
				t.Errorf("frontier moved backward from %d to %d", before, after)
			}
		})
	}
}

func TestOwnership(t *testing.T) {
	t.Run("operations with a stale token change nothing", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10, 11)(h)
		reassign(10)(h)
		reg(10)(h)
		before, _ := h.l.Stats(tp0)
		if _, err := h.l.Register(tp0, h.old, 12, 3); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Register(stale) err = %v; want ErrNotOwned", err)
		}
		if err := h.l.Evidence(tp0, h.old, 20, 3); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Evidence(stale) err = %v; want ErrNotOwned", err)
		}
		if _, err := h.l.Discard(tp0, h.old, 10); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Discard(stale) err = %v; want ErrNotOwned", err)
		}
		called := false
		if ok, err := h.l.Quarantine(tp0, h.old, 10, func() error { called = true; return nil }); ok || err != nil || called {
			t.Errorf("Quarantine(stale) = %v, %v, dispose called %v; want false, nil, not called", ok, err, called)
		}
		staleComplete(10)(h)
		if after, _ := h.l.Stats(tp0); after != before {
			t.Errorf("Stats changed:\n got %+v\nwant %+v", after, before)
		}
	})
	t.Run("completions still apply while a revocation drains", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10, 11)(h)
		evidence(12)(h)
		h.l.Revoke(tp0)
		if _, err := h.l.Register(tp0, h.tok, 12, 3); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Register after Revoke err = %v; want ErrNotOwned", err)
		}
		complete(10, 11)(h)
		if f, _ := h.l.Frontier(tp0); f != 12 {
			t.Errorf("Frontier = %d; want 12", f)
		}
	})
	t.Run("nothing applies after a loss", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10)(h)
		h.l.Lose(tp0)
		if ok, err := h.l.Complete(tp0, h.tok, 10); ok || err != nil {
			t.Errorf("Complete after Lose = %v, %v; want false, nil", ok, err)
		}
		if p := h.l.Pending(tp0); !slices.Equal(p, []int64{10}) {
			t.Errorf("Pending after Lose = %v; want [10] (still visible)", p)
		}
	})
	t.Run("a completion for a record never registered is an error", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10)(h)
		if ok, err := h.l.Complete(tp0, h.tok, 11); ok || !errors.Is(err, ErrUnknownRecord) {
			t.Errorf("Complete(11) = %v, %v; want false, ErrUnknownRecord", ok, err)
		}
	})
	t.Run("a quarantine whose incarnation ends during the disposition does not apply", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10)(h)
		ok, err := h.l.Quarantine(tp0, h.tok, 10, func() error { h.l.Lose(tp0); return nil })
		if ok || err != nil {
			t.Errorf("Quarantine = %v, %v; want false, nil", ok, err)
		}
		if s, _ := h.l.Stats(tp0); s.Pending != 1 || s.Quarantined != 0 {
			t.Errorf("Stats = %+v; want 1 pending, 0 quarantined", s)
		}
	})
}

func TestFinalCommit(t *testing.T) {
	tests := []struct {
		name   string
		end    func(l *Ledger)
		wantOK bool
	}{
		{name: "a revoked partition gets its completed frontier", end: func(l *Ledger) { l.Revoke(tp0) }, wantOK: true},
		{name: "a lost partition gets no final commit", end: func(l *Ledger) { l.Lose(tp0) }},
		{name: "a partition revoked and then lost gets no final commit", end: func(l *Ledger) { l.Revoke(tp0); l.Lose(tp0) }},
		{name: "a partition still assigned gets no final commit", end: func(*Ledger) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 10)
			reg(10, 11, 12)(h)
			evidence(13)(h)
			complete(10, 12)(h)
			tt.end(h.l)
			c, ok := h.l.FinalCommit(tp0)
			if ok != tt.wantOK {
				t.Fatalf("FinalCommit ok = %v; want %v", ok, tt.wantOK)
			}
			if ok && (c.Offset != 11 || c.Token != h.tok) {
				t.Errorf("FinalCommit = %+v; want offset 11 token %d", c, h.tok)
			}
		})
	}
}

func TestCommitSequencing(t *testing.T) {
	t.Run("a commit lower than one stored for the same incarnation is refused", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10, 11, 12)(h)
		evidence(13)(h)
		complete(10)(h)
		stale, _ := h.l.PrepareCommit(tp0) // snapshot 11
		complete(11, 12)(h)
		c, ok := h.l.PrepareCommit(tp0)
		if !ok || c.Offset != 13 {
			t.Fatalf("PrepareCommit = %+v, %v; want 13", c, ok)
		}
		if err := h.l.Committed(c); err != nil {
			t.Fatalf("Committed(13): %v", err)
		}
		if stale.Offset != 11 {
			t.Fatalf("stale snapshot = %d; want 11", stale.Offset)
		}
		if err := h.l.CheckCommit(stale); !errors.Is(err, ErrCommitRegression) {
			t.Errorf("CheckCommit(11 after 13) = %v; want ErrCommitRegression", err)
		}
		if err := h.l.Committed(stale); !errors.Is(err, ErrCommitRegression) {
			t.Errorf("Committed(11 after 13) = %v; want ErrCommitRegression", err)
		}
		if s, _ := h.l.Stats(tp0); s.Committed != 13 {
			t.Errorf("stored commit = %d; want 13 kept", s.Committed)
		}
	})
	t.Run("nothing new to commit once the frontier is stored", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10)(h)
		complete(10)(h)
		c, _ := h.l.PrepareCommit(tp0)
		if err := h.l.Committed(c); err != nil {
			t.Fatal(err)
		}
		if c, ok := h.l.PrepareCommit(tp0); ok {
			t.Errorf("PrepareCommit = %+v, true; want false", c)
		}
	})
	t.Run("a new incarnation may commit below what the previous one stored", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10)(h)
		complete(10)(h)
		c, _ := h.l.PrepareCommit(tp0)
		if err := h.l.Committed(c); err != nil {
			t.Fatal(err)
		}
		reassign(5)(h)
		c, ok := h.l.PrepareCommit(tp0)
		if !ok || c.Offset != 5 {
			t.Fatalf("PrepareCommit = %+v, %v; want 5", c, ok)
		}
		if err := h.l.Committed(c); err != nil {
			t.Errorf("Committed(5) for the new incarnation: %v", err)
		}
	})
	t.Run("a commit from an earlier incarnation is not owned", func(t *testing.T) {
		h := newHarness(t, 10)
		c, _ := h.l.PrepareCommit(tp0)
		reassign(10)(h)
		if err := h.l.Committed(c); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Committed(old token) = %v; want ErrNotOwned", err)
		}
	})
	t.Run("a commit past the frontier is recorded and reports the stranded records", func(t *testing.T) {
		h := newHarness(t, 10)
		reg(10, 11, 12)(h)
		evidence(13)(h)
		complete(10, 12)(h)
		past := Commit{TopicPartition: tp0, Token: h.tok, Offset: 13}
		if err := h.l.CheckCommit(past); !errors.Is(err, ErrPastFrontier) {
			t.Errorf("CheckCommit(13) = %v; want ErrPastFrontier", err)
		}
		if err := h.l.Committed(past); !errors.Is(err, ErrPastFrontier) {
			t.Errorf("Committed(13) = %v; want ErrPastFrontier", err)
		}
		if s, _ := h.l.Stats(tp0); s.Committed != 13 || s.Frontier != 11 {
			t.Errorf("Stats = %+v; want committed 13, frontier 11", s)
		}
	})
}

func TestCommitLeaderEpoch(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  int32
	}{
		{
			name:  "the epoch comes from the next-offset evidence when the frontier reaches it",
			steps: []step{reg(10), evidence(11), complete(10)},
			want:  3,
		},
		{
			name: "the epoch comes from the last finished record below a pending one",
			steps: []step{func(h *harness) {
				_, _ = h.l.Register(tp0, h.tok, 10, 7)
				_, _ = h.l.Register(tp0, h.tok, 11, 8)
			}, complete(10)},
			want: 7,
		},
		{
			name: "the epoch is unknown before anything finished",
			want: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 10)
			for _, s := range tt.steps {
				s(h)
			}
			c, ok := h.l.PrepareCommit(tp0)
			if !ok || c.LeaderEpoch != tt.want {
				t.Errorf("PrepareCommit = %+v, %v; want leader epoch %d", c, ok, tt.want)
			}
		})
	}
}

func TestPruningKeepsMemoryBoundedWithoutMovingTheFrontier(t *testing.T) {
	// A long run: records are returned in polls of 50, and each poll's
	// records complete in reverse order one poll later, so about 100 records
	// are in flight at any time. Offsets divisible by 7 are gaps.
	l := New()
	tok := l.Assign(tp0, 0)
	const polls, perPoll = 4000, 50
	var prev []int64
	var next int64
	maxTracked := 0
	for range polls {
		var batch []int64
		for len(batch) < perPoll {
			if next%7 != 0 {
				if _, err := l.Register(tp0, tok, next, 1); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, next)
			}
			next++
		}
		if err := l.Evidence(tp0, tok, next, 1); err != nil {
			t.Fatal(err)
		}
		for i := len(prev) - 1; i >= 0; i-- {
			if _, err := l.Complete(tp0, tok, prev[i]); err != nil {
				t.Fatal(err)
			}
			// Reverse completion: everything below prev[i] in prev is
			// still pending, so the frontier is prev[0] until the last one.
			want := prev[0]
			if i == 0 {
				want = batch[0]
			}
			if f, _ := l.Frontier(tp0); f != want {
				t.Fatalf("Frontier = %d; want %d", f, want)
			}
		}
		s, _ := l.Stats(tp0)
		maxTracked = max(maxTracked, s.Tracked)
		prev = batch
	}
	s, _ := l.Stats(tp0)
	if maxTracked > 2*perPoll {
		t.Errorf("tracked up to %d records; want at most %d (the in-flight window)", maxTracked, 2*perPoll)
	}
	if want := (polls - 1) * perPoll; s.Completed != want {
		t.Errorf("Completed = %d; want %d (pruning must not lose counts)", s.Completed, want)
	}
}

func TestConcurrentCompletions(t *testing.T) {
	l := New()
	tok := l.Assign(tp0, 0)
	const n = 2000
	for o := range int64(n) {
		if _, err := l.Register(tp0, tok, o, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Evidence(tp0, tok, n, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for o := int64(w); o < n; o += 8 {
				if o%100 == 0 {
					_, _ = l.Quarantine(tp0, tok, o, func() error { return nil })
				} else {
					_, _ = l.Complete(tp0, tok, o)
				}
				if f, _ := l.Frontier(tp0); f > n {
					t.Errorf("Frontier %d beyond evidence %d", f, n)
				}
			}
		})
	}
	wg.Wait()
	if f, _ := l.Frontier(tp0); f != n {
		t.Errorf("Frontier = %d; want %d", f, n)
	}
	if s, _ := l.Stats(tp0); s.Completed+s.Quarantined != n || s.Tracked != 0 {
		t.Errorf("Stats = %+v; want %d finished, nothing tracked", s, n)
	}
}
