package loop

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"
)

func TestVirtualTimeJumpsToTimersInDeadlineOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewVirtual(start)
	var got []string
	l.After(15*time.Minute, func() { got = append(got, "expiry@"+l.Elapsed().String()) })
	l.After(40*time.Second, func() {
		got = append(got, "batch@"+l.Elapsed().String())
		l.Post(func() { got = append(got, "posted@"+l.Elapsed().String()) })
	})
	t2 := l.After(time.Minute, func() { got = append(got, "cancelled") })
	t2.Stop()
	err := l.Run(context.Background(), func() bool { return false })
	if !errors.Is(err, ErrIdle) {
		t.Fatalf("err = %v, want ErrIdle", err)
	}
	want := []string{"batch@40s", "posted@40s", "expiry@15m0s"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestTimersWithTheSameDeadlineRunInCreationOrder(t *testing.T) {
	l := NewVirtual(time.Unix(0, 0))
	var got []int
	for i := 0; i < 5; i++ {
		l.After(time.Second, func() { got = append(got, i) })
	}
	_ = l.Run(context.Background(), func() bool { return len(got) == 5 })
	for i, v := range got {
		if v != i {
			t.Fatalf("order %v", got)
		}
	}
}

func TestRealLoopRunsTasksPostedFromOtherGoroutines(t *testing.T) {
	l := NewReal()
	done := false
	go func() { l.Post(func() { done = true }) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Run(ctx, func() bool { return done }); err != nil {
		t.Fatal(err)
	}
}

func TestRealLoopStopsWhenTheContextEnds(t *testing.T) {
	l := NewReal()
	ctx, cancel := context.WithCancel(context.Background())
	l.After(time.Millisecond, cancel)
	if err := l.Run(ctx, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestResetRearmsATimerInTheOrderOfANewOne(t *testing.T) {
	l := NewVirtual(time.Unix(0, 0))
	var got []string
	tm := l.NewTimer(func() { got = append(got, "reset@"+l.Elapsed().String()) })
	if tm.Pending() {
		t.Fatal("a new timer is pending")
	}
	tm.Reset(time.Hour)
	l.After(time.Second, func() { got = append(got, "after@"+l.Elapsed().String()) })
	tm.Reset(time.Second) // moves the pending run: after the After made before it
	l.Schedule(time.Second, func() { got = append(got, "schedule@"+l.Elapsed().String()) })
	_ = l.Run(context.Background(), func() bool { return len(got) == 3 })
	want := "[after@1s reset@1s schedule@1s]"
	if s := fmt.Sprint(got); s != want {
		t.Fatalf("got %s, want %s", s, want)
	}
	if tm.Pending() {
		t.Fatal("a timer that ran is pending")
	}
	tm.Reset(time.Second)
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop of a reset timer")
	}
}

// TestTimersRunAsAReferenceOrdersThem arms, re-arms, stops and schedules timers at
// random, timers arming others as they run, and checks that each timer that runs is the
// first of a plain list of the pending ones ordered by (deadline, arming order): reusing
// a timer of Schedule once it ran, or re-arming one with Reset, changes no order.
func TestTimersRunAsAReferenceOrdersThem(t *testing.T) {
	type armed struct {
		when int64
		seq  int
		id   int
	}
	for seed := int64(0); seed < 50; seed++ {
		rng := rand.New(rand.NewSource(seed))
		l := NewVirtual(time.Unix(0, 0))
		var ref []armed // pending, in the reference
		seq, scheduled, ran := 0, 0, 0
		held := map[int]*Timer{}
		unref := func(id int) {
			for i, a := range ref {
				if a.id == id {
					ref = append(ref[:i], ref[i+1:]...)
					return
				}
			}
		}
		var arm func()
		fire := func(id int) func() {
			return func() {
				first := 0
				for i, a := range ref {
					if a.when < ref[first].when || (a.when == ref[first].when && a.seq < ref[first].seq) {
						first = i
					}
				}
				if len(ref) == 0 || ref[first].id != id || ref[first].when != l.vnow.Load() {
					t.Fatalf("seed %d: timer %d ran at %d, the reference's first is %+v", seed, id, l.vnow.Load(), ref[first])
				}
				ref = append(ref[:first], ref[first+1:]...)
				ran++
				if ran < 2000 {
					for n := rng.Intn(3); n > 0; n-- {
						arm()
					}
				}
			}
		}
		arm = func() {
			d := time.Duration(rng.Intn(5)) * time.Second
			id := rng.Intn(40)
			if id >= 20 { // fire and forget
				scheduled++
				id = -scheduled
				l.Schedule(d, fire(id))
				seq++
				ref = append(ref, armed{l.vnow.Load() + int64(d), seq, id})
				return
			}
			switch tm := held[id]; {
			case tm == nil:
				held[id] = l.After(d, fire(id))
			case rng.Intn(4) == 0:
				tm.Stop()
				if tm.Pending() {
					t.Fatalf("seed %d: timer %d pending after Stop", seed, id)
				}
				unref(id)
				return
			default:
				unref(id)
				tm.Reset(d)
			}
			seq++
			ref = append(ref, armed{l.vnow.Load() + int64(d), seq, id})
		}
		for i := 0; i < 30; i++ {
			arm()
		}
		if err := l.Run(context.Background(), func() bool { return false }); !errors.Is(err, ErrIdle) {
			t.Fatal(err)
		}
		if len(ref) != 0 || ran < 30 {
			t.Fatalf("seed %d: %d ran, %d left in the reference", seed, ran, len(ref))
		}
	}
}
