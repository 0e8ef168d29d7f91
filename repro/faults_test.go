package repro

import (
	"context"
	"errors"
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
	b, err := embedded.Start(embedded.Options{Topic: "unused", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		frozen   atomic.Bool
		frozeAt  time.Time
		freezeMu sync.Mutex
	)
	// Every request from the first OffsetFetch on gets no answer: the connections stay
	// open, as under SIGSTOP.
	b.Cluster().Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		if !frozen.Load() && req.Key() == int16(kmsg.OffsetFetch) {
			freezeMu.Lock()
			frozeAt = time.Now()
			freezeMu.Unlock()
			frozen.Store(true)
		}
		return nil, nil, frozen.Load()
	})
	defer func() {
		frozen.Store(false)
		b.Close()
	}()
	cfg, err := kafkaconf.Load(b.Addr(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Kafka = cfg
	o.TimeScale = 0.05
	o.Timeout = 8 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	ended := time.Now()
	if !frozen.Load() {
		t.Fatalf("the broker never froze: %v", err)
	}
	freezeMu.Lock()
	after := ended.Sub(frozeAt)
	freezeMu.Unlock()
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
