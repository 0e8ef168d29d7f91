package loop

import (
	"context"
	"errors"
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
