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
	"container/heap"
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
	vnow   atomic.Int64
	start  time.Time
	tasks  []func()
	timers timerHeap
	seq    uint64
	wake   chan struct{}
	ran    uint64 // tasks and timers run, for Ran
}

// NewVirtual returns a loop whose clock starts at start and only moves when the loop
// advances it to the next timer.
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tasks) > 0 {
		return time.Time{}, false, false
	}
	if len(l.timers) == 0 {
		return time.Time{}, false, true
	}
	return l.timers[0].when, true, true
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

// Post queues f to run on the loop. It is safe to call from any goroutine.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	l.tasks = append(l.tasks, f)
	l.mu.Unlock()
	l.signal()
}

func (l *Loop) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Timer is a pending call of After.
type Timer struct {
	when  time.Time
	seq   uint64
	f     func()
	index int
	l     *Loop
}

// Stop cancels the timer; it reports whether the timer was still pending.
func (t *Timer) Stop() bool {
	if t == nil {
		return false
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.l.timers, t.index)
	return true
}

// After runs f on the loop once d has passed. It is safe to call from any goroutine.
func (l *Loop) After(d time.Duration, f func()) *Timer {
	if d < 0 {
		d = 0
	}
	now := l.Now()
	l.mu.Lock()
	l.seq++
	t := &Timer{when: now.Add(d), seq: l.seq, f: f, l: l}
	heap.Push(&l.timers, t)
	l.mu.Unlock()
	l.signal()
	return t
}

// next pops a runnable function: a task, or a due timer. On a virtual clock a timer is
// due once no task is left (time is advanced to it). It returns the wait until the next
// timer when nothing is runnable (zero and ok=false when nothing is scheduled at all).
func (l *Loop) next() (f func(), wait time.Duration, scheduled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tasks) > 0 {
		f = l.tasks[0]
		l.tasks[0] = nil
		l.tasks = l.tasks[1:]
		return f, 0, true
	}
	if len(l.timers) == 0 {
		return nil, 0, false
	}
	t := l.timers[0]
	if l.virtual {
		if d := t.when.Sub(l.start); d > time.Duration(l.vnow.Load()) {
			l.vnow.Store(int64(d))
		}
		heap.Pop(&l.timers)
		return t.f, 0, true
	}
	now := time.Now()
	if !t.when.After(now) {
		heap.Pop(&l.timers)
		return t.f, 0, true
	}
	return nil, t.when.Sub(now), true
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

type timerHeap []*Timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
