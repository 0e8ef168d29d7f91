package repro

import (
	"fmt"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
)

// The handler's seek() and heartbeat() on the seed at the agreement suite's settings
// (integration/jsclient_test.go's seek-forward, seek-forward-isstale and heartbeat
// shapes: scenario.js's 5 s auto-commit interval is 500 s here): the model's side of
// FIDELITY.md's rows. The seek falls in the batch of 2-21 at 3m50s (its round of 14-16)
// and goes to 100: 22-99 (the handler finishing its stale batch) or 17-99 (breaking at
// isStale() after that round) are committed past, never delivered; 1.10.0 also loses
// 180-199 to the cache expiry (the seek deleted the last-consumed entry; eachBatch never
// writes one). heartbeat() is a no-op: the seed's loss, 82-199 on 1.10.0.
func TestTheHandlersSeekAndHeartbeatAtTheAgreementSuitesSettings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    eachbatch.Policy
		opts      func(*Options)
		lost      string
		committed []int64
	}{
		{"seek-forward", eachbatch.V1_10_0, seekTo100(true), "[22-99 180-199]", []int64{180, 202}},
		{"seek-forward", eachbatch.V1_10_1, seekTo100(true), "[22-99]", []int64{200, 202}},
		{"seek-forward-isstale", eachbatch.V1_10_0, seekTo100(false), "[17-99 180-199]", []int64{180, 202}},
		{"seek-forward-isstale", eachbatch.V1_10_1, seekTo100(false), "[17-99]", []int64{200, 202}},
		{"heartbeat", eachbatch.V1_10_0, func(o *Options) { o.Heartbeat = true }, "[82-199]", []int64{82, 202}},
		{"heartbeat", eachbatch.V1_10_1, func(o *Options) { o.Heartbeat = true }, "[]", []int64{200, 202}},
	} {
		t.Run(tc.name+"/"+string(tc.policy), func(t *testing.T) {
			o := DefaultOptions()
			o.Policy, o.AutoCommitInterval = tc.policy, 500*time.Second
			tc.opts(&o)
			res := simulate(t, o)
			p := res.Partitions[0]
			if got := fmt.Sprint(p.Lost); got != tc.lost {
				t.Errorf("lost %s, want %s", got, tc.lost)
			}
			if fmt.Sprint(p.CommittedByPhase) != fmt.Sprint(tc.committed) {
				t.Errorf("committed by phase %v, want %v", p.CommittedByPhase, tc.committed)
			}
		})
	}
}

func seekTo100(autoResolve bool) func(*Options) {
	return func(o *Options) {
		o.SeekAt, o.SeekTo, o.AutoResolve = 230*time.Second, 100, autoResolve
	}
}

func TestSeekAndHeartbeatOptionsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"a negative seek time", func(o *Options) { o.SeekAt = -time.Second }, "--seek-at must be >= 0"},
		{"a negative offset", func(o *Options) { o.SeekAt, o.SeekTo = time.Minute, -2 }, "--seek-to must be an offset >= 0, got -2"},
		{"heartbeat with eachMessage", func(o *Options) { o.Heartbeat, o.Handler = true, eachbatch.EachMessage }, "--heartbeat applies to --handler each-batch only (the handler awaits heartbeat() after each round)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.set(&o)
			if err := o.Validate(); err == nil || err.Error() != tc.want {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
