// Package jsclient runs the real @confluentinc/kafka-javascript: it installs a release
// with npm into a cache directory (Ensure), carries the scenario application that drives
// it (scenario.js, embedded), and maps a scenario's settings both to that application's
// arguments and to simulate's, so the agreement suite (integration/jsclient_test.go) and
// `kstranded repro --real-client` run the real client and the model on one description
// of a shape (Shape).
//
// It does not judge: what the client delivered (scenario.js's delivery lines) and the
// group's commits go to the one judge like every other run's evidence. It has no cobra
// and no terminal; errors carry the exit-code sentinels of internal/exitcode.
package jsclient

import (
	"fmt"
	"strconv"
	"time"
)

// Scale is scenario.js's time scale: it runs the bug report's durations divided by 100
// (max.poll.interval 15 m is 9 s there, a record's 40 s of work is 400 ms), while
// simulate runs them at full scale.
const Scale = 100

// Shape is one scenario: the settings scenario.js takes. A zero field is scenario.js's
// default, which is the bug report's seed (200 records on partition 0, eachBatch,
// partitionsConsumedConcurrently 20, 3 records at a time, 400 ms each, max.poll 9 s,
// batch size 20, auto-commit).
type Shape struct {
	// Records on partition 0 (scenario.js --records), when Spread is empty.
	Records int
	// Spread: records per partition, PxN or P:N,... (simulate's --spread syntax).
	Spread string
	// Handler: "eachBatch" or "eachMessage".
	Handler string
	// Concurrency: partitionsConsumedConcurrently.
	Concurrency int
	// Parallel: records the eachBatch handler works on at a time.
	Parallel int
	// Delay: a record's work, in the scenario's (scaled) time.
	Delay time.Duration
	// MaxPoll: max.poll.interval.ms, in the scenario's (scaled) time.
	MaxPoll time.Duration
	// BatchSize: js.consumer.max.batch.size.
	BatchSize int
	// Commit: "auto" (the client's auto-commit) or "manual" (upstream #476's idiom:
	// autoCommit false, resolveOffset per record, commitOffsetsIfNecessary per batch).
	Commit string
	// PauseAt: the eachBatch handler calls its payload's pause() this long after run()
	// (scenario.js --pause-at-ms; upstream #517), in the scenario's (scaled) time;
	// ResumeAfter: it calls resume() this long after the pause. Zero: no pause.
	PauseAt, ResumeAfter time.Duration
	// CacheSizePerWorker: js.consumer.max.cache.size.per.worker.ms, in the scenario's
	// (scaled) time (scenario.js --cache-size-per-worker-ms). Zero: the client's default,
	// 1500 ms unscaled, which simulate is told as 150 s (simulateCommon).
	CacheSizePerWorker time.Duration
}

// scenario.js's fixed settings that simulate must be told: the JS client's auto-commit
// interval is its default 5 s, not scaled by scenario.js, so 500 s at simulate's scale.
// (Its fetch.wait.max.ms 50 is the broker's wait, which the model does not have.)
var simulateCommon = []string{"--auto-commit-interval", fmt.Sprint(5 * time.Second * Scale)}

// defaultCacheSizePerWorker is js.consumer.max.cache.size.per.worker.ms's default. Not
// scaled by scenario.js either: the real client at 1/100 keeps 100 times as many records'
// worth of handling per worker as the bug report's client did. 1.8.0 and later round the
// estimate up to a whole batch set (400 records in the seed) either way; 1.7.0's
// Math.round makes the difference between a fetch of 400 and one of 0 (eachbatch.V1_7_0).
const defaultCacheSizePerWorker = 1500 * time.Millisecond

// ScenarioArgs are scenario.js's arguments for the shape (its defaults left out).
func (s Shape) ScenarioArgs() []string {
	var a []string
	add := func(flag, v string) { a = append(a, flag, v) }
	if s.Records != 0 {
		add("--records", strconv.Itoa(s.Records))
	}
	if s.Spread != "" {
		add("--spread", s.Spread)
	}
	if s.Handler != "" {
		add("--handler", s.Handler)
	}
	if s.Concurrency != 0 {
		add("--concurrency", strconv.Itoa(s.Concurrency))
	}
	if s.Parallel != 0 {
		add("--parallel", strconv.Itoa(s.Parallel))
	}
	if s.Delay != 0 {
		add("--delay-ms", strconv.FormatInt(s.Delay.Milliseconds(), 10))
	}
	if s.MaxPoll != 0 {
		add("--max-poll-ms", strconv.FormatInt(s.MaxPoll.Milliseconds(), 10))
	}
	if s.BatchSize != 0 {
		add("--batch-size", strconv.Itoa(s.BatchSize))
	}
	if s.Commit != "" {
		add("--commit", s.Commit)
	}
	if s.PauseAt != 0 {
		add("--pause-at-ms", strconv.FormatInt(s.PauseAt.Milliseconds(), 10))
		add("--resume-after-ms", strconv.FormatInt(s.ResumeAfter.Milliseconds(), 10))
	}
	if s.CacheSizePerWorker != 0 {
		add("--cache-size-per-worker-ms", strconv.FormatInt(s.CacheSizePerWorker.Milliseconds(), 10))
	}
	return a
}

// SimulateArgs are simulate's arguments for the same settings at full scale (without
// --client, which the caller names). A shape the model cannot express returns the
// reason instead.
func (s Shape) SimulateArgs() ([]string, error) {
	a := append([]string(nil), simulateCommon...)
	add := func(flag, v string) { a = append(a, flag, v) }
	cache := defaultCacheSizePerWorker
	if s.CacheSizePerWorker != 0 {
		cache = s.CacheSizePerWorker
	}
	add("--cache-size-per-worker", (cache * Scale).String())
	if s.Records != 0 {
		add("--records", strconv.Itoa(s.Records))
	}
	if s.Spread != "" {
		add("--spread", s.Spread)
	}
	switch s.Handler {
	case "", "eachBatch":
	case "eachMessage":
		add("--handler", "each-message")
	default:
		return nil, fmt.Errorf("handler %q: scenario.js runs eachBatch or eachMessage", s.Handler)
	}
	if s.Concurrency != 0 {
		add("--concurrency", strconv.Itoa(s.Concurrency))
	}
	if s.Parallel != 0 {
		add("--handler-parallel", strconv.Itoa(s.Parallel))
	}
	if s.Delay != 0 {
		add("--handler-delay", (s.Delay * Scale).String())
	}
	if s.MaxPoll != 0 {
		add("--max-poll-interval", (s.MaxPoll * Scale).String())
	}
	if s.BatchSize != 0 {
		add("--batch-size", strconv.Itoa(s.BatchSize))
	}
	switch s.Commit {
	case "", "auto":
	case "manual":
		// the client's own manual commit (eachbatch.Settings.ManualCommit), not
		// kstranded's ledger commit
		add("--commit", "manual")
	default:
		return nil, fmt.Errorf("commit %q: scenario.js commits auto or manual", s.Commit)
	}
	if s.PauseAt != 0 {
		add("--pause-at", (s.PauseAt * Scale).String())
		add("--resume-after", (s.ResumeAfter * Scale).String())
	}
	return a, nil
}

// Seed is the bug report's shape: every setting at scenario.js's default.
var Seed = Shape{}
