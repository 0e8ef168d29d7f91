package repro

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/testenv"
)

// TestABrokerThatFreezesAsTheConsumerStartsEndsTheRunWithinTimeout: a broker that stops
// answering between the consumer's join and its engine's start (the first OffsetFetch:
// librdkafka's on assignment, or the engine's own read of where the ledger starts) must
// end the run within --timeout of the freeze, as a freeze later in the phase does. The
// engine's start read waited the whole --timeout and its failure was not counted as
// trouble, so the unreachable bound started only after it, and the clean-up after the
// error that ended the run (a lost assignment) waited --timeout per step: this test ended
// 20.9 s after the freeze at --timeout 6s before the fix; a local make test-kafka ended
// integration's killed-broker run 16 s after SIGKILL at --timeout 10s.
func TestABrokerThatFreezesAsTheConsumerStartsEndsTheRunWithinTimeout(t *testing.T) {
	testenv.MustLive(t) // a live librdkafka consumer on the wall clock
	cfg, frozeAt := freezingBroker(t, "unused", kmsg.OffsetFetch)
	o := DefaultOptions()
	o.Kafka = cfg
	o.TimeScale = 0.05
	o.Timeout = 8 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	ended := time.Now()
	at, frozen := frozeAt()
	if !frozen {
		t.Fatalf("the broker never froze: %v", err)
	}
	after := ended.Sub(at)
	t.Logf("the run ended %s after the broker froze: %v", after.Round(time.Millisecond), err)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("error %v, want %v", err, ErrUnreachable)
	}
	if after > o.Timeout {
		t.Errorf("the run ended %s after the broker froze, beyond --timeout %s", after.Round(time.Millisecond), o.Timeout)
	}
	if res == nil || res.Complete {
		t.Fatalf("a run cut short must say complete: false: %+v", res)
	}
}

// A run that failed on another error (here the wait for an assignment) while the cluster
// did not answer a probe names the unreachable broker, keeping its own error: the same
// ErrUnreachable whatever step the broker's death cut short. An interrupted run, a run
// the cluster still answered, and an error that already says so are left as they are.
func TestAFailureWhileTheClusterIsSilentNamesTheUnreachableBroker(t *testing.T) {
	noAssignment := errors.New("no partition assignment from brokers b:9092 within --timeout 6s: 2/2 brokers are down")
	live := context.Background()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name        string
		ctx         context.Context
		unreachable bool
		err         error
		wrapped     bool
	}{
		{"silent", live, true, noAssignment, true},
		{"answering", live, false, noAssignment, false},
		{"interrupted", canceled, true, noAssignment, false},
		{"already said", live, true, fmt.Errorf("%w: no answer from the cluster for 3s", ErrUnreachable), false},
		{"no error", live, true, nil, false},
	}
	for _, c := range cases {
		d := &driver{ctx: c.ctx, res: &Result{unreachable: c.unreachable}}
		got := unreachableErr(d, c.err)
		if c.err == nil {
			if got != nil {
				t.Errorf("%s: %v, want nil", c.name, got)
			}
			continue
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: %v no longer wraps %v", c.name, got, c.err)
		}
		if c.wrapped != (got != c.err) || !errors.Is(got, ErrUnreachable) && (c.wrapped || errors.Is(c.err, ErrUnreachable)) {
			t.Errorf("%s: %v (wrapped: want %v)", c.name, got, c.wrapped)
		}
		if c.wrapped && !strings.Contains(got.Error(), "broker unreachable") {
			t.Errorf("%s: %q does not name the unreachable broker", c.name, got)
		}
	}
}

// TestAConsumeWhoseBrokerDiesBeforeTheAssignmentNamesTheUnreachableBroker: a broker that
// stops answering once the consumer has joined, before its assignment (every request from
// the first SyncGroup on gets no answer), ends `repro consume` on the wait for an
// assignment; the probe after it finds the cluster silent, so the error is ErrUnreachable
// as when the broker dies later in the run (integration's killed-broker test met this
// order once in make test and failed on the error's words), within --timeout and the
// clean-up's bound.
func TestAConsumeWhoseBrokerDiesBeforeTheAssignmentNamesTheUnreachableBroker(t *testing.T) {
	testenv.MustLive(t) // a live librdkafka consumer on the wall clock
	const topic = "consumed"
	cfg, frozeAt := freezingBroker(t, topic, kmsg.SyncGroup)
	o := DefaultOptions()
	o.Kafka = cfg
	o.Topic, o.Group = topic, "consume-frozen"
	o.TimeScale = 0.05
	o.Timeout = 6 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	_, err := Consume(ctx, o, false, false)
	took := time.Since(start)
	if _, frozen := frozeAt(); !frozen {
		t.Fatalf("the consumer never sent its SyncGroup: %v", err)
	}
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no partition assignment") {
		t.Fatalf("error %v, want %v naming the wait for an assignment", err, ErrUnreachable)
	}
	// the wait (--timeout), one probe (a second at most) and a bounded close (a second)
	if took > o.Timeout+4*time.Second {
		t.Errorf("consume ended %s after it started, beyond --timeout %s and the clean-up's bound", took.Round(time.Millisecond), o.Timeout)
	}
	t.Logf("%v after %s", err, took.Round(time.Millisecond))
}

// freezingBroker starts an embedded broker with topic (one partition) on which every
// request from the first one of key on gets no answer: the connections stay open, as
// under SIGSTOP. frozeAt says when it froze, and whether it did; the test's end thaws and
// closes it.
func freezingBroker(t *testing.T, topic string, key kmsg.Key) (kafkaconf.Config, func() (time.Time, bool)) {
	t.Helper()
	b, err := embedded.Start(embedded.Options{Topic: topic, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		frozen   atomic.Bool
		frozeAt  time.Time
		freezeMu sync.Mutex
	)
	b.Cluster().Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		if !frozen.Load() && req.Key() == int16(key) {
			freezeMu.Lock()
			frozeAt = time.Now()
			freezeMu.Unlock()
			frozen.Store(true)
		}
		return nil, nil, frozen.Load()
	})
	t.Cleanup(func() {
		frozen.Store(false)
		b.Close()
	})
	cfg, err := kafkaconf.Load(b.Addr(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, func() (time.Time, bool) {
		freezeMu.Lock()
		defer freezeMu.Unlock()
		return frozeAt, frozen.Load()
	}
}
