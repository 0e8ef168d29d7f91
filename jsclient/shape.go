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
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	// Commit: "auto" (the client's auto-commit), "manual" (upstream #476's idiom:
	// autoCommit false, resolveOffset per record, commitOffsetsIfNecessary per batch) or
	// "explicit" (autoCommit false, the handler's consumer.commitOffsets([{topic,
	// partition, offset: last + 1}]): after each batch, resolving as manual does, or
	// after each message).
	Commit string
	// PauseAt: the eachBatch handler calls its payload's pause() this long after run()
	// (scenario.js --pause-at-ms; upstream #517), in the scenario's (scaled) time;
	// ResumeAfter: it calls resume() this long after the pause. Zero: no pause.
	PauseAt, ResumeAfter time.Duration
	// JoinAt: a second consumer of the group (m2, the same settings and handler) joins
	// this long after m1's run() (scenario.js --join-at-ms, simulate --rebalance-at
	// TIME:join); zero: one consumer. A group of two is always one joined after the
	// other: kfake, as a broker, completes a join once every known member joined, so m1
	// is assigned alone first. LeaveAt: member Leave (1 or 2; 0 is 1) calls disconnect()
	// this long after m1's run() (scenario.js --leave-at-ms/--leave, simulate
	// --rebalance-at TIME:leave=N). Durations in the scenario's (scaled) time.
	JoinAt, LeaveAt time.Duration
	Leave           int
	// Members: consumers of the group connected and subscribed together at the start
	// (m1..mN; scenario.js --members, simulate --members); 0 is 1.
	Members int
	// Rebalance: membership changes after JoinAt's and LeaveAt's, each at its time from
	// m1's run(), in the scenario's (scaled) time (scenario.js and simulate
	// --rebalance-at). A join starts the next member; a leave stops Member (0: the most
	// recently started member still in the group).
	Rebalance []Step
	// GroupProtocol: "" or "classic", or "consumer" (KIP-848: group.protocol=consumer for
	// every member; scenario.js and simulate --group-protocol).
	GroupProtocol string
	// PauseFrom: "" or "handler" (the payload's pause()), or "outside": the application
	// calls consumer.pause([{topic}]) from a timer PauseAt after run() and the function
	// it returned ResumeAfter later (scenario.js --pause-from). With several members each
	// does, PauseAt after its own run(), as each member of the model.
	PauseFrom string
	// PausePartitions: with PauseFrom "outside", the partitions the application pauses,
	// consumer.pause([{topic, partitions}]), and resumes, as P,P,... (scenario.js and
	// simulate --pause-partitions). Empty: every partition the member is assigned.
	PausePartitions string
	// SeekAt: the handler calls consumer.seek() on its own partition, to SeekTo, this
	// long after run() (scenario.js --seek-at-ms/--seek-to; simulate --seek-at/--seek-to),
	// in the scenario's (scaled) time. Zero: no seek.
	SeekAt time.Duration
	SeekTo int64
	// Seeks: more seek() calls from the handler, comma-separated [P:]OFFSET@TIME in the
	// scenario's (scaled) time, e.g. "1:5@3s,0:22@5.3s" (scenario.js --seek P:OFFSET@MS,
	// simulate --seek at full scale); without P the handler's own partition.
	Seeks string
	// Heartbeat: the eachBatch handler awaits heartbeat() after every round
	// (scenario.js and simulate --heartbeat).
	Heartbeat bool
	// ResolveEachRound: eachBatchAutoResolve false, and the handler breaks at
	// `!isRunning() || isStale()` before each round and resolves the round's last record
	// after it (scenario.js --auto-resolve false; simulate --auto-resolve=false).
	ResolveEachRound bool
	// CacheSizePerWorker: js.consumer.max.cache.size.per.worker.ms, in the scenario's
	// (scaled) time (scenario.js --cache-size-per-worker-ms). Zero: the client's default,
	// 1500 ms unscaled, which simulate is told as 150 s (simulateCommon).
	CacheSizePerWorker time.Duration
}

// Step is one change of the group's membership (repro.RebalanceStep's words): at At, a
// new member joins, or member Member leaves (0: the most recently started one still in
// the group).
type Step struct {
	At     time.Duration
	Join   bool
	Member int
}

// leaver is the member LeaveAt names.
func (s Shape) leaver() int { return max(1, s.Leave) }

// members is Members, 1 when unset.
func (s Shape) members() int { return max(1, s.Members) }

// steps are the shape's membership changes in time order (stable): JoinAt's, LeaveAt's,
// then Rebalance's, as scenario.js orders them.
func (s Shape) steps() []Step {
	var st []Step
	if s.JoinAt != 0 {
		st = append(st, Step{At: s.JoinAt, Join: true})
	}
	if s.LeaveAt != 0 {
		st = append(st, Step{At: s.LeaveAt, Member: s.leaver()})
	}
	st = append(st, s.Rebalance...)
	slices.SortStableFunc(st, func(a, b Step) int { return cmp.Compare(a.At, b.At) })
	return st
}

// checkMembers checks the membership as scenario.js (planMembers) and simulate do: a
// leaving member is in the group then, and one always stays.
func (s Shape) checkMembers() error {
	if s.Members < 0 {
		return fmt.Errorf("members %d: at least 1", s.Members)
	}
	var in []int
	for i := 1; i <= s.members(); i++ {
		in = append(in, i)
	}
	next := s.members() + 1
	for _, st := range s.steps() {
		if st.Join {
			in = append(in, next)
			next++
			continue
		}
		m := st.Member
		if m == 0 {
			m = in[len(in)-1]
		}
		i := slices.Index(in, m)
		if i < 0 {
			return fmt.Errorf("leave of m%d at %s: m%d is not in the group then (a leave needs a second member)", m, st.At, m)
		}
		in = slices.Delete(in, i, i+1)
		if len(in) == 0 {
			return fmt.Errorf("leave of m%d at %s: the last member would leave (a leave needs a second member)", m, st.At)
		}
	}
	return nil
}

func (st Step) scenarioArg() string {
	ms := strconv.FormatInt(st.At.Milliseconds(), 10)
	switch {
	case st.Join:
		return ms + ":join"
	case st.Member > 0:
		return fmt.Sprintf("%s:leave=%d", ms, st.Member)
	}
	return ms + ":leave"
}

func (st Step) simulateArg() string {
	at := (st.At * Scale).String()
	switch {
	case st.Join:
		return at + ":join"
	case st.Member > 0:
		return fmt.Sprintf("%s:leave=%d", at, st.Member)
	}
	return at + ":leave"
}

// scenario.js's fixed settings that simulate must be told: the JS client's auto-commit
// interval is its default 5 s, not scaled by scenario.js, so 500 s at simulate's scale.
// (Its fetch.wait.max.ms 50 is the broker's wait, which the model does not have.)
// So is its heartbeat.interval.ms, 1500 (the bug report's): 150 s at simulate's scale,
// when a member learns of another's join or leave (simkafka.Group.SetHeartbeatInterval).
var simulateCommon = []string{"--auto-commit-interval", fmt.Sprint(5 * time.Second * Scale),
	"--heartbeat-interval", fmt.Sprint(1500 * time.Millisecond * Scale)}

// consumerHeartbeat is the embedded broker's group.consumer.heartbeat.interval.ms (kfake's
// default, which `kstranded broker` keeps): under the consumer protocol a member learns of
// partitions to revoke or newly its own at its next heartbeat (FIDELITY.md, the kip848
// shapes).
const consumerHeartbeat = 5000 * time.Millisecond

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
		if s.PauseFrom != "" {
			add("--pause-from", s.PauseFrom)
		}
		if s.PausePartitions != "" {
			add("--pause-partitions", s.PausePartitions)
		}
	}
	if s.JoinAt != 0 {
		add("--join-at-ms", strconv.FormatInt(s.JoinAt.Milliseconds(), 10))
	}
	if s.LeaveAt != 0 {
		add("--leave-at-ms", strconv.FormatInt(s.LeaveAt.Milliseconds(), 10))
		add("--leave", fmt.Sprintf("m%d", s.leaver()))
	}
	if s.Members > 1 {
		add("--members", strconv.Itoa(s.Members))
	}
	for _, st := range s.Rebalance {
		add("--rebalance-at", st.scenarioArg())
	}
	if s.GroupProtocol != "" && s.GroupProtocol != "classic" {
		add("--group-protocol", s.GroupProtocol)
	}
	if s.SeekAt != 0 {
		add("--seek-at-ms", strconv.FormatInt(s.SeekAt.Milliseconds(), 10))
		add("--seek-to", strconv.FormatInt(s.SeekTo, 10))
	}
	if ks, err := s.seeks(); err == nil {
		for _, k := range ks {
			add("--seek", k.target+strconv.FormatInt(k.at.Milliseconds(), 10))
		}
	}
	if s.Heartbeat {
		a = append(a, "--heartbeat")
	}
	if s.ResolveEachRound {
		add("--auto-resolve", "false")
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
	// 1.3.0's #nextFetchRetry timer, 1000 ms, is a constant scenario.js does not scale
	// either (the model reads it for 1.0.0 to 1.3.0 only)
	add("--retry-wait", (time.Second * Scale).String())
	// and 0.x's consume timeout, node-rdkafka's default of 1000 ms (read for 0.2.0 to
	// 0.3.0 only)
	add("--consume-timeout", (time.Second * Scale).String())
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
	case "manual", "explicit":
		// the client's own manual commit (eachbatch.Settings.ManualCommit,
		// ExplicitCommit), not kstranded's ledger commit
		add("--commit", s.Commit)
	default:
		return nil, fmt.Errorf("commit %q: scenario.js commits auto, manual or explicit", s.Commit)
	}
	if s.PausePartitions != "" && (s.PauseAt == 0 || s.PauseFrom != "outside") {
		return nil, fmt.Errorf("pause partitions %s: the application's pause from outside (PauseFrom outside, PauseAt)", s.PausePartitions)
	}
	if s.PauseAt != 0 {
		add("--pause-at", (s.PauseAt * Scale).String())
		add("--resume-after", (s.ResumeAfter * Scale).String())
		switch s.PauseFrom {
		case "", "handler":
		case "outside":
			add("--pause-from", "outside")
			if s.PausePartitions != "" {
				add("--pause-partitions", s.PausePartitions)
			}
		default:
			return nil, fmt.Errorf("pause from %q: scenario.js pauses from the handler or outside", s.PauseFrom)
		}
	}
	// scenario.js runs m1..mN, and one more at each join
	if err := s.checkMembers(); err != nil {
		return nil, err
	}
	if s.Members > 1 {
		add("--members", strconv.Itoa(s.Members))
	}
	for _, st := range s.steps() {
		add("--rebalance-at", st.simulateArg())
	}
	switch s.GroupProtocol {
	case "", "classic":
	case "consumer":
		// members learn of their target at kfake's ConsumerGroupHeartbeat interval, its
		// default 5000 ms (group.consumer.heartbeat.interval.ms), not scaled by scenario.js
		add("--group-protocol", "consumer")
		add("--consumer-heartbeat-interval", (consumerHeartbeat * Scale).String())
	default:
		return nil, fmt.Errorf("group protocol %q: classic or consumer", s.GroupProtocol)
	}
	if s.SeekAt != 0 {
		add("--seek-at", (s.SeekAt * Scale).String())
		add("--seek-to", strconv.FormatInt(s.SeekTo, 10))
	}
	ks, err := s.seeks()
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		add("--seek", k.target+(k.at*Scale).String())
	}
	if s.Heartbeat {
		a = append(a, "--heartbeat")
	}
	if err := s.ResolveErr(); err != nil {
		return nil, err
	}
	if s.ResolveEachRound {
		a = append(a, "--auto-resolve=false")
	}
	return a, nil
}

// ResolveErr refuses ResolveEachRound with the client's manual or the handler's explicit
// commit, as scenario.js does (--auto-resolve false): the resolving handler is the
// auto-commit one (eachBatchAutoResolve false, the isStale() idiom); the others resolve
// or commit in their own way.
func (s Shape) ResolveErr() error {
	if s.ResolveEachRound && s.Commit != "" && s.Commit != "auto" {
		return fmt.Errorf("--auto-resolve=false is scenario.js's auto-commit handler that resolves each round (eachBatchAutoResolve false, the isStale() idiom); --commit %s has its own", s.Commit)
	}
	return nil
}

// Seed is the bug report's shape: every setting at scenario.js's default.
var Seed = Shape{}

// shapeSeek is one of Shape.Seeks: target is "[P:]OFFSET@", at the scenario's time.
type shapeSeek struct {
	target string
	at     time.Duration
}

// seeks reads Shape.Seeks.
func (s Shape) seeks() ([]shapeSeek, error) {
	if s.Seeks == "" {
		return nil, nil
	}
	var out []shapeSeek
	for _, k := range strings.Split(s.Seeks, ",") {
		target, at, ok := strings.Cut(k, "@")
		d, err := time.ParseDuration(at)
		if !ok || err != nil || d <= 0 || d%time.Millisecond != 0 {
			return nil, fmt.Errorf("seek %q: want [P:]OFFSET@TIME, TIME in whole milliseconds", k)
		}
		off := target
		if p, o, ok := strings.Cut(target, ":"); ok {
			if n, err := strconv.Atoi(p); err != nil || n < 0 {
				return nil, fmt.Errorf("seek %q: the partition is not a number >= 0", k)
			}
			off = o
		}
		if n, err := strconv.ParseInt(off, 10, 64); err != nil || n < 0 {
			return nil, fmt.Errorf("seek %q: the offset is not a number >= 0", k)
		}
		out = append(out, shapeSeek{target: target + "@", at: d})
	}
	return out, nil
}
