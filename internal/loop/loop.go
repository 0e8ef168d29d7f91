// Package loop is a single-threaded event loop with an injectable clock, the Go
// counterpart of the JavaScript event loop the modeled consumer runs on.
//
// All state changes of a model happen in functions run by the loop, one at a time, in a
// deterministic order: posted tasks first-in first-out, then timers by deadline (ties by
// creation order). With a virtual clock, time jumps straight to the next timer when
// nothing is runnable, so a 15-minute scenario runs in milliseconds and the same inputs
// always give the same outputs. With the real clock, the loop sleeps until the next timer
// or until another goroutine posts a task.
//
// It does not run tasks in parallel and is not a general scheduler.
package loop

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrIdle is returned by Run on a virtual clock when nothing is runnable and no timer is
// pending before done() became true: the model can never make progress.
var ErrIdle = errors.New("loop: idle with nothing scheduled")

// Loop runs tasks and timers.
type Loop struct {
	virtual bool

	mu sync.Mutex
	// vnow is the virtual clock, in nanoseconds since start: atomic, so Now is read
	// without the mutex (it is asked for at every event; issue 25).
	vnow  atomic.Int64
	start time.Time
	// tasks[head:] are queued; the slice is reused from its start once drained (a
	// queue resliced from the front regrows its array again and again).
	tasks  []func()
	head   int
	timers timerHeap
	free   []*Timer // timers of Schedule that ran, for the next Schedule to reuse
	seq    uint64
	wake   chan struct{}
	ran    uint64 // tasks and timers run, for Ran
}

// NewVirtual returns a loop whose clock starts at start and only moves when the loop
// advances it to the next timer. It belongs to one goroutine: the one that runs it,
// which alone posts and arms timers on it.
func NewVirtual(start time.Time) *Loop {
	return &Loop{virtual: true, start: start, wake: make(chan struct{}, 1)}
}

// NewReal returns a loop on the wall clock.
func NewReal() *Loop {
	return &Loop{start: time.Now(), wake: make(chan struct{}, 1)}
}

// Virtual reports whether the loop runs on virtual time.
func (l *Loop) Virtual() bool { return l.virtual }

// Idle reports whether no task is queued, and the deadline of the earliest pending
// timer (ok false when none). A model uses it to skip virtual time it can prove idle.
func (l *Loop) Idle() (next time.Time, ok bool, idle bool) {
	l.lock()
	defer l.unlock()
	if l.head < len(l.tasks) {
		return time.Time{}, false, false
	}
	if len(l.timers) == 0 {
		return time.Time{}, false, true
	}
	return l.start.Add(time.Duration(l.timers[0].when)), true, true
}

// Ran returns how many tasks and timers the loop has run: the cost of a virtual run
// follows it, not the virtual time it covers. Call it from the loop's goroutine (or
// between runs).
func (l *Loop) Ran() uint64 { return l.ran }

// Now returns the loop's current time.
func (l *Loop) Now() time.Time {
	if !l.virtual {
		return time.Now()
	}
	return l.start.Add(time.Duration(l.vnow.Load()))
}

// Elapsed returns the time since the loop was created.
func (l *Loop) Elapsed() time.Duration {
	if l.virtual {
		return time.Duration(l.vnow.Load())
	}
	return time.Since(l.start)
}

// Start returns the loop's creation time.
func (l *Loop) Start() time.Time { return l.start }

// Post queues f to run on the loop. It is safe to call from any goroutine (a virtual
// loop's: from its own).
func (l *Loop) Post(f func()) {
	l.lock()
	l.tasks = append(l.tasks, f)
	l.unlock()
	l.signal()
}

// lock guards the queues of a real loop, which other goroutines post to. A virtual
// loop belongs to the goroutine that runs it (what it runs, and what posts to it, run
// there: a virtual run is deterministic only then), so it takes no lock: two of them
// an event were a tenth of a simulated run (issue 25).
func (l *Loop) lock() {
	if !l.virtual {
		l.mu.Lock()
	}
}

func (l *Loop) unlock() {
	if !l.virtual {
		l.mu.Unlock()
	}
}

func (l *Loop) signal() {
	if l.virtual {
		return // its Run never waits for a post
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// elapsed is the loop's clock as nanoseconds since start, the unit of a timer's
// deadline.
func (l *Loop) elapsed() int64 {
	if l.virtual {
		return l.vnow.Load()
	}
	return int64(time.Since(l.start))
}

// Timer is a pending call of After (or a timer of NewTimer, armed by Reset).
type Timer struct {
	when   int64 // deadline, nanoseconds since the loop's start
	seq    uint64
	f      func()
	index  int // in the heap; -1 when not pending
	l      *Loop
	pooled bool // made by Schedule: nobody holds it, it is reused once it ran
}

// Stop cancels the timer; it reports whether the timer was still pending.
func (t *Timer) Stop() bool {
	if t == nil {
		return false
	}
	t.l.lock()
	defer t.l.unlock()
	if t.index < 0 {
		return false
	}
	t.l.timers.remove(t.index)
	return true
}

// Pending reports whether the timer is armed and has not run yet (false for nil).
func (t *Timer) Pending() bool {
	if t == nil {
		return false
	}
	t.l.lock()
	defer t.l.unlock()
	return t.index >= 0
}

// Reset arms the timer to run its function once d has passed from now, cancelling a
// pending run first. It orders like a timer made by After now: a deadline shared with
// another timer runs after the timers made or reset before it. A model that re-arms
// the same timer again and again (an expiry loop, an auto-commit interval) keeps one
// Timer instead of allocating one per arming.
func (t *Timer) Reset(d time.Duration) {
	l := t.l
	if d < 0 {
		d = 0
	}
	now := l.elapsed()
	l.lock()
	if t.index >= 0 {
		l.timers.remove(t.index)
	}
	l.seq++
	t.when, t.seq = now+int64(d), l.seq
	l.timers.push(t)
	l.unlock()
	l.signal()
}

// NewTimer returns a timer that runs f on the loop each time it is armed with Reset;
// it is not armed yet.
func (l *Loop) NewTimer(f func()) *Timer { return &Timer{f: f, index: -1, l: l} }

// After runs f on the loop once d has passed. It is safe to call from any goroutine (a
// virtual loop's: from its own).
func (l *Loop) After(d time.Duration, f func()) *Timer {
	t := l.NewTimer(f)
	t.Reset(d)
	return t
}

// Schedule is After for a caller that never stops the timer: it returns nothing, so
// the loop reuses the timer once it ran (a simulated run arms hundreds of thousands of
// such timers, one per batch and handler round; issue 25). It is safe to call from any
// goroutine (a virtual loop's: from its own).
func (l *Loop) Schedule(d time.Duration, f func()) {
	if d < 0 {
		d = 0
	}
	now := l.elapsed()
	l.lock()
	var t *Timer
	if n := len(l.free); n > 0 {
		t = l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
	} else {
		t = &Timer{l: l, pooled: true}
	}
	l.seq++
	t.when, t.seq, t.f = now+int64(d), l.seq, f
	l.timers.push(t)
	l.unlock()
	l.signal()
}

// next pops a runnable function: a task, or a due timer. On a virtual clock a timer is
// due once no task is left (time is advanced to it). It returns the wait until the next
// timer when nothing is runnable (zero and ok=false when nothing is scheduled at all).
func (l *Loop) next() (f func(), wait time.Duration, scheduled bool) {
	l.lock()
	defer l.unlock()
	if l.head < len(l.tasks) {
		f = l.tasks[l.head]
		l.tasks[l.head] = nil
		l.head++
		if l.head == len(l.tasks) {
			l.tasks, l.head = l.tasks[:0], 0
		}
		return f, 0, true
	}
	if len(l.timers) == 0 {
		return nil, 0, false
	}
	t := l.timers[0]
	if l.virtual {
		if t.when > l.vnow.Load() {
			l.vnow.Store(t.when)
		}
		return l.pop(), 0, true
	}
	now := int64(time.Since(l.start))
	if t.when <= now {
		return l.pop(), 0, true
	}
	return nil, time.Duration(t.when - now), true
}

// pop removes the earliest timer and returns its function; a timer of Schedule goes
// back to the free list.
func (l *Loop) pop() func() {
	t := l.timers.remove(0)
	f := t.f
	if t.pooled {
		t.f = nil
		l.free = append(l.free, t)
	}
	return f
}

// Run runs tasks and timers until done() reports true (checked after every task), or
// ctx ends (its error is returned), or, on a virtual clock, nothing is left to run
// (ErrIdle).
func (l *Loop) Run(ctx context.Context, done func() bool) error {
	for {
		if done() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		f, wait, scheduled := l.next()
		if f != nil {
			l.ran++
			f()
			continue
		}
		if l.virtual {
			return ErrIdle
		}
		if !scheduled {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-l.wake:
			}
			continue
		}
		tm := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-l.wake:
			tm.Stop()
		case <-tm.C:
		}
	}
}

// timerHeap is a binary min-heap of timers by deadline, then by seq: a total order
// (seq is unique), so timers run in the same order whatever the heap's layout.
type timerHeap []*Timer

func (h timerHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	return a.when < b.when || (a.when == b.when && a.seq < b.seq)
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timerHeap) push(t *Timer) {
	t.index = len(*h)
	*h = append(*h, t)
	h.up(t.index)
}

// remove takes out the timer at i and returns it.
func (h *timerHeap) remove(i int) *Timer {
	old := *h
	n := len(old) - 1
	if n != i {
		old.swap(i, n)
	}
	t := old[n]
	old[n] = nil
	t.index = -1
	*h = old[:n]
	if n != i {
		if !h.down(i) {
			h.up(i)
		}
	}
	return t
}

func (h timerHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// down moves the timer at i down; it reports whether it moved.
func (h timerHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		j := 2*i + 1
		if j >= n || j < 0 {
			break
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
