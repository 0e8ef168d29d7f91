package repro

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/rewind"
)

// ErrSharedGroup: another member was in the run's --group while it ran (issue 27 §4).
// The group's partitions were split with it and its joins and leaves rebalanced the
// run's consumers, so the run saw only its share: what it counted is not the
// scenario's outcome (two runs started together in one group each report part of one
// loss as if it were the whole). The run is INCOMPLETE unless --allow-shared-group.
var ErrSharedGroup = errors.New("shared group")

// sharedEvery is how often a run in a named group describes it.
const sharedEvery = 500 * time.Millisecond

// sharedWatch describes the run's named group while the run goes on, looking for a
// member that is not one of the run's consumers: a client.id other than the run's, or
// more members with the run's client.id than the run has started consumers (another
// process configured with the same client.id). The check before the run (cmd's
// sharedGroup) sees only who is there at start; a second run started at the same moment
// passes it too.
type sharedWatch struct {
	mu       sync.Mutex
	stranger string        // the first member seen that is not the run's, described
	at       time.Duration // when, since the run began
	cancel   context.CancelFunc
	done     chan struct{}
}

// watchShared starts describing group every sharedEvery until stop. clientID is the
// run's consumers' client.id, started how many consumers the run has started so far,
// since when the run's elapsed time.
func watchShared(ctx context.Context, cfg kafkaconf.Config, group, clientID string, timeout time.Duration, started func() int, since func() time.Duration) (*sharedWatch, error) {
	opts, err := cfg.KgoOpts()
	if err != nil {
		return nil, err
	}
	k, err := inspect.NewKafka(opts, timeout)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &sharedWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer k.Close()
		t := time.NewTicker(sharedEvery)
		defer t.Stop()
		for {
			if g, err := k.DescribeGroup(ctx, group); err == nil {
				if s := stranger(g, clientID, started()); s != "" {
					w.mu.Lock()
					w.stranger, w.at = s, since()
					w.mu.Unlock()
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w, nil
}

// stranger describes the first member of g that is not one of the run's started
// consumers ("" when every member is the run's).
func stranger(g inspect.Group, clientID string, started int) string {
	ours := 0
	for _, m := range g.Members {
		if m.ClientID != clientID {
			return rewind.DescribeMember(m)
		}
		ours++
	}
	if ours > started {
		return fmt.Sprintf("%d members with the run's client.id %s, where the run started %d consumers", ours, clientID, started)
	}
	return ""
}

// stop ends the watch and says what it saw: the stranger and when ("" if none).
func (w *sharedWatch) stop() (string, time.Duration) {
	if w == nil {
		return "", 0
	}
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stranger, w.at
}
