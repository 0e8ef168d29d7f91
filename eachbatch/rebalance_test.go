package eachbatch_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/eachbatch/simkafka"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/loop"
	"github.com/kstranded/kstranded/traceevent"
)

// groupRun is a managed simulated group with one engine per member.
type groupRun struct {
	t       *testing.T
	l       *loop.Loop
	g       *simkafka.Group
	s       eachbatch.Settings
	members []*member
	events  []traceevent.Event
	tps     []kpart.TopicPartition
	high    map[kpart.TopicPartition]int64
}

type member struct {
	name string
	c    *simkafka.Client
	e    *eachbatch.Engine
}

// newGroupRun lays out one transaction of records[p] records per partition; librdkafka
// is given twice the JS max.poll.interval.ms (#finalizedConfig).
func newGroupRun(t *testing.T, s eachbatch.Settings, cooperative bool, records ...int) *groupRun {
	t.Helper()
	r := &groupRun{t: t, l: loop.NewVirtual(time.Unix(0, 0)), s: s, high: map[kpart.TopicPartition]int64{}}
	for p := range records {
		r.tps = append(r.tps, kpart.TopicPartition{Topic: "stranded", Partition: int32(p)})
	}
	r.g = simkafka.NewGroup(r.l, r.tps, cooperative, 2*s.MaxPollInterval)
	w := r.g.NewMember("", 0, nil) // writes the logs; never joins
	for i, n := range records {
		w.Transaction(r.tps[i], n)
		r.high[r.tps[i]] = w.HighWatermark(r.tps[i]) // past the commit marker
	}
	return r
}

func (r *groupRun) trace(ev traceevent.Event) { r.events = append(r.events, ev) }

func (r *groupRun) join(name string) *member {
	r.t.Helper()
	m := &member{name: name, c: r.g.NewMember(name, 5*time.Second, r.trace)}
	tr := func(ev traceevent.Event) { ev.Member = name; r.trace(ev) }
	e, err := eachbatch.New(r.l, m.c, r.s, tr)
	if err != nil {
		r.t.Fatal(err)
	}
	m.e = e
	m.c.OnRebalance = e.RebalanceCallback
	m.c.OnNonEmpty = e.NotifyNonEmpty
	r.members = append(r.members, m)
	r.g.Join(m.c)
	r.l.Post(e.Start)
	return m
}

// leave is disconnect(): the workers stop (batches in flight finish), then close()
// revokes and leaves.
func (r *groupRun) leave(m *member) {
	m.e.Stop()
	var check func()
	check = func() {
		if m.e.Stopped() {
			r.g.Leave(m.c)
			return
		}
		r.l.After(100*time.Millisecond, check)
	}
	check()
}

// at runs f at virtual time d.
func (r *groupRun) at(d time.Duration, f func()) { r.l.After(d-r.l.Elapsed(), f) }

// run runs until every member in the group is quiescent, the group settled and every
// owned partition committed at its end, or until limit.
func (r *groupRun) run(limit time.Duration) {
	r.t.Helper()
	end := false
	r.l.After(limit, func() { end = true })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.l.Run(ctx, func() bool { return end || r.done() }); err != nil {
		r.t.Fatal(err)
	}
}

func (r *groupRun) done() bool {
	if !r.g.Settled() || len(r.g.Members()) == 0 {
		return false
	}
	for _, m := range r.members {
		if m.c.InGroup() && !m.e.Quiescent() {
			return false
		}
	}
	for _, tp := range r.tps {
		if r.g.Owner(tp) == nil || r.members[0].c.Committed(tp) != r.high[tp]-1 {
			return false
		}
	}
	return true
}

// delivered sums every member's deliveries.
func (r *groupRun) delivered() map[kpart.TopicPartition]map[int64]int {
	out := map[kpart.TopicPartition]map[int64]int{}
	for _, m := range r.members {
		for tp, d := range m.e.Delivered() {
			if out[tp] == nil {
				out[tp] = map[int64]int{}
			}
			for o, n := range d {
				out[tp][o] += n
			}
		}
	}
	return out
}

// summary renders delivered offsets per partition as ranges, with duplicates.
func summary(d map[kpart.TopicPartition]map[int64]int, tps []kpart.TopicPartition) string {
	var b strings.Builder
	for _, tp := range tps {
		var once, twice []int64
		for o, n := range d[tp] {
			once = append(once, o)
			if n > 1 {
				twice = append(twice, o)
			}
		}
		fmt.Fprintf(&b, "p%d delivered %s dup %s; ", tp.Partition, rangesOf(once), rangesOf(twice))
	}
	return b.String()
}

// The JS client gives librdkafka twice max.poll.interval.ms; a batch that runs past it
// without a consume call makes librdkafka leave the group with its assignment lost: the
// lost partition commits nothing (not the seek's commit either: the member is no longer
// in the group), the revoke reaches the JS client at its next consume call (#unassign
// clears the cache), and the member rejoins and starts over from the committed offset.
func TestMaxPollIntervalLeavesTheGroupLosesTheAssignmentAndRejoinsAtTheCommittedOffset(t *testing.T) {
	s := eachbatch.DefaultSettings()
	s.Policy = eachbatch.V1_10_1
	s.Concurrency = 1
	s.BatchSize = -1 // one batch of 200 records: 67 rounds of 40 s = 2680 s
	r := newGroupRun(t, s, false, 200)
	m := r.join("m1")
	r.run(5000 * time.Second)
	var got []string
	for _, ev := range r.events {
		switch {
		case ev.Ev == traceevent.Member, ev.Ev == traceevent.Assign, ev.Ev == traceevent.Revoke,
			ev.Ev == traceevent.Commit, ev.Ev == traceevent.Pending && ev.Op == "unassign" && ev.Reason != "":
			got = append(got, fmt.Sprintf("%.1fs %s %s", ev.AtMs/1000, ev.Ev, ev.Reason))
		}
	}
	want := []string{
		"0.0s member join",
		"0.0s assign ",
		// lastPoll 0 s + 1800 s, seen by the first 500 ms check past it.
		"1800.5s member max.poll.interval.ms exceeded: leaving group",
		// The batch ends at 2680 s (stale past 2 x 900 s: not resolved, seek back to 0),
		// the next consume call serves the lost revoke, #unassign clears the cache.
		"2680.0s revoke lost",
		"2680.0s pending-op EAGER",
		"2680.0s member join",
		"2680.0s assign ",
		"4480.5s member max.poll.interval.ms exceeded: leaving group",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("group events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := m.c.Committed(r.tps[0]); c != -1 {
		t.Errorf("committed %d, want none: a lost assignment commits nothing", c)
	}
	refused := 0
	for _, err := range m.e.Errors {
		if strings.Contains(err.Error(), "UNKNOWN_MEMBER_ID") {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refused commits (%v), want 1: the seek to 0 at 2680 s", refused, m.e.Errors)
	}
	if got, want := summary(r.delivered(), r.tps), "p0 delivered 0-199 dup 0-199; "; got != want {
		t.Errorf("delivered %s, want %s", got, want)
	}
}

// A rebalance after the cache expiry: under EAGER (classic, roundrobin) every partition
// is revoked, the unassign commits what was stored and the reassignment starts at the
// committed offset, which is below the records v1.10.0's clear dropped: they are
// fetched again. Under COOPERATIVE (group.protocol=consumer) a partition that stays
// with its member is never revoked, and v1.10.0 loses them as with one member.
func TestAJoinAndLeaveAfterTheExpiryClearRescuesTheDroppedRecordsOnlyUnderEager(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cooperative bool
		delivered   string
		committed0  int64
	}{
		{"eager: the revoke commits 82, the reassignment fetches 82-99 again", false, "p0 delivered 0-99 dup -; p1 delivered 0-39 dup -; ", 100},
		{"cooperative: p0 stays with m1 and 82-99 stay lost", true, "p0 delivered 0-81 dup -; p1 delivered 0-39 dup -; ", 82},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := eachbatch.DefaultSettings() // v1.10.0, concurrency 20, batches of 20
			r := newGroupRun(t, s, tc.cooperative, 100, 40)
			r.join("m1")
			// m2 joins at 5 m and leaves at 8 m; m1, busy with full batches, polls
			// next at 1200 s, after its cache expired at 980 s and the clear dropped
			// 82-99.
			r.at(5*time.Minute, func() { r.join("m2") })
			r.at(8*time.Minute, func() { r.leave(r.members[1]) })
			r.run(2 * time.Hour)
			if got := summary(r.delivered(), r.tps); got != tc.delivered {
				t.Errorf("delivered %s, want %s", got, tc.delivered)
			}
			if got := r.members[0].c.Committed(r.tps[0]); got != tc.committed0 {
				t.Errorf("p0 committed %d, want %d", got, tc.committed0)
			}
		})
	}
}

// A member that leaves mid-run (disconnect: batches in flight finish, close() commits
// what was stored) hands its partition over at the committed offset: the records it had
// cached and not delivered go to the next owner, nothing is lost, nothing duplicated.
func TestAMemberLeavingHandsItsPartitionOverAtTheCommittedOffset(t *testing.T) {
	for _, tc := range []struct {
		name        string
		policy      eachbatch.Policy
		cooperative bool
		p0          string
		committed0  int64
	}{
		{"v1.10.0 eager", eachbatch.V1_10_0, false, "0-99", 100},
		// Under COOPERATIVE m1 keeps p0 through m2's leave, and v1.10.0's expiry
		// clear drops 82-99 as with one member.
		{"v1.10.0 cooperative", eachbatch.V1_10_0, true, "0-81", 82},
		{"v1.10.1 eager", eachbatch.V1_10_1, false, "0-99", 100},
		{"v1.10.1 cooperative", eachbatch.V1_10_1, true, "0-99", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := eachbatch.DefaultSettings()
			s.Policy = tc.policy
			r := newGroupRun(t, s, tc.cooperative, 100, 100)
			m1, m2 := r.join("m1"), r.join("m2") // roundrobin: p0 to m1, p1 to m2
			r.at(8*time.Minute, func() { r.leave(m2) })
			r.run(2 * time.Hour)
			if got, want := summary(m2.e.Delivered(), r.tps), "p0 delivered - dup -; p1 delivered 0-41 dup -; "; got != want {
				t.Errorf("m2 delivered %s, want %s", got, want)
			}
			if got, want := summary(m1.e.Delivered(), r.tps), "p0 delivered "+tc.p0+" dup -; p1 delivered 42-99 dup -; "; got != want {
				t.Errorf("m1 delivered %s, want %s", got, want)
			}
			if got := m1.c.Committed(r.tps[0]); got != tc.committed0 {
				t.Errorf("p0 committed %d, want %d", got, tc.committed0)
			}
			if got := m1.c.Committed(r.tps[1]); got != 100 {
				t.Errorf("p1 committed %d, want 100", got)
			}
		})
	}
}

func rangesOf(offs []int64) string {
	slices.Sort(offs)
	return kpart.Join(kpart.Runs(offs))
}

// A member that closes while an eager rebalance waits for its revoke (librdkafka's join
// state wait-unassign-call, seen live with -X debug=cgrp): its auto-commit timer commits
// nothing once the rebalance began, and close() sends LeaveGroup before the unassign's
// commit, which the broker refuses. m2 joins at 5m while m1's workers are busy; m1 leaves
// at 8m, before it served the revoke. The next owner starts at the offsets committed
// before the join: 40 records of each partition come twice, and what v1.10.0's expiry
// clear dropped after those commits is lost (live on the embedded broker, one run of
// three: LOST 84-99 / 80-99 with 40 duplicates a partition; BENCHMARKS.md). Under the
// consumer protocol nothing waits for m1 and its close commits: everything once.
func TestAMemberClosingWhileAnEagerRebalanceWaitsForItsRevokeCommitsNothing(t *testing.T) {
	for _, tc := range []struct {
		coop      bool
		refused   int
		delivered string
	}{
		{false, 1, "p0 delivered 0-83 dup 2-41; p1 delivered 0-79 dup 0-39; "},
		{true, 0, "p0 delivered 0-99 dup -; p1 delivered 0-99 dup -; "},
	} {
		s := eachbatch.DefaultSettings()
		s.Policy = eachbatch.V1_10_0
		r := newGroupRun(t, s, tc.coop, 100, 100)
		m1 := r.join("m1")
		r.at(5*time.Minute, func() { r.join("m2") })
		r.at(8*time.Minute, func() { r.leave(m1) })
		r.run(3 * time.Hour)
		refused, late := 0, 0
		for _, ev := range r.events {
			if ev.Ev != traceevent.Commit || ev.Member != "m1" {
				continue
			}
			switch {
			case ev.Error != "":
				refused++
			case !tc.coop && ev.AtMs > float64(5*time.Minute/time.Millisecond):
				late++
			}
		}
		if refused != tc.refused || late != 0 {
			t.Errorf("cooperative %v: %d refused commits of m1, %d commits after the join; want %d and 0", tc.coop, refused, late, tc.refused)
		}
		if got := summary(r.delivered(), r.tps); got != tc.delivered {
			t.Errorf("cooperative %v: %s, want %s", tc.coop, got, tc.delivered)
		}
	}
}

// Under the classic protocol a member learns of a rebalance another member caused from
// its next heartbeat (librdkafka: the coordinator answers REBALANCE_IN_PROGRESS), not
// from its next poll. The real JS client, 1.10.0 and 1.10.1 (FIDELITY.md,
// member-leave-mid-batch): m2 joined 57 ms after m1 was assigned, and m1's consume calls
// in the next second served no revoke; its heartbeat (1.5 s, 150 s at this scale) came
// after its fetch of the rest of the partition, so the revoke waited for its next consume.
// With no heartbeat interval the member learns at once and serves the revoke at its next
// consume call, at 40 s.
func TestAMemberLearnsOfAJoinAtItsNextHeartbeat(t *testing.T) {
	for _, tc := range []struct {
		heartbeat time.Duration
		learnt    float64 // ms; -1: no heartbeat event
		revokedBy func(ms float64) bool
		want      string
	}{
		{0, -1, func(ms float64) bool { return ms == 40_000 }, "at its consume call at 40s"},
		{150 * time.Second, 150_000, func(ms float64) bool { return ms > 15*60_000 }, "at its consume call after the expiry"},
	} {
		s := eachbatch.DefaultSettings()
		s.Policy = eachbatch.V1_10_0
		r := newGroupRun(t, s, false, 200)
		r.g.SetHeartbeatInterval(tc.heartbeat)
		r.join("m1")
		r.at(5*time.Second, func() { r.join("m2") })
		r.run(40 * time.Minute)
		learnt, revoked := -1.0, -1.0
		for _, ev := range r.events {
			if ev.Member != "m1" {
				continue
			}
			if ev.Ev == traceevent.Member && strings.HasPrefix(ev.Reason, "heartbeat") && learnt < 0 {
				learnt = ev.AtMs
			}
			if ev.Ev == traceevent.Revoke && revoked < 0 {
				revoked = ev.AtMs
			}
		}
		if learnt != tc.learnt || !tc.revokedBy(revoked) {
			t.Errorf("heartbeat %s: m1 learnt at %vms and served its revoke at %vms; want learnt at %vms, revoked %s", tc.heartbeat, learnt, revoked, tc.learnt, tc.want)
		}
	}
}

// Under the consumer protocol with the broker's heartbeat interval (kfake's 5 s at
// simulate's scale: 500 s), a member learns of a join that takes partitions from it at its
// next heartbeat, not at the join, and the joiner is given them at its own heartbeat
// after the owner released them, as the real JS client was (FIDELITY.md, kip848 shapes);
// a joining member is answered at once with what is free.
func TestUnderTheConsumerProtocolMembersLearnTheirTargetAtTheirHeartbeat(t *testing.T) {
	for _, hb := range []time.Duration{0, 500 * time.Second} {
		s := eachbatch.DefaultSettings()
		s.Policy = eachbatch.V1_10_1
		r := newGroupRun(t, s, true, 20, 20)
		r.g.SetConsumerHeartbeatInterval(hb)
		r.join("m1")
		r.at(50*time.Second, func() { r.join("m2") })
		r.run(40 * time.Minute)
		learnt, revoked, m2Assigned := -1.0, -1.0, -1.0
		for _, ev := range r.events {
			switch {
			case ev.Member == "m1" && ev.Ev == traceevent.Member && strings.HasPrefix(ev.Reason, "heartbeat") && learnt < 0:
				learnt = ev.AtMs
			case ev.Member == "m1" && ev.Ev == traceevent.Revoke && revoked < 0:
				revoked = ev.AtMs
			case ev.Member == "m2" && ev.Ev == traceevent.Assign && m2Assigned < 0:
				m2Assigned = ev.AtMs
			}
		}
		if hb == 0 {
			// told at once: the revoke is served at m1's first consume call after the join
			if learnt != -1 || revoked < 50_000 || revoked >= 500_000 || m2Assigned != revoked {
				t.Errorf("heartbeat 0: m1 learnt at %v, revoked at %v, m2 assigned at %v; want no heartbeat, the revoke before 500s and m2 assigned at the release", learnt, revoked, m2Assigned)
			}
			continue
		}
		// m1's grid: 500 s, 1000 s, ...; m2's (joined at 50 s): 550 s, 1050 s, ...
		if learnt != 500_000 || revoked < learnt || m2Assigned <= revoked || int64(m2Assigned-50_000)%500_000 != 0 {
			t.Errorf("heartbeat %s: m1 learnt at %vms, revoked at %vms, m2 assigned at %vms; want m1 told at 500000, m2 at a heartbeat of its own (50000 + k*500000) after the release", hb, learnt, revoked, m2Assigned)
		}
		if got := len(r.delivered()); got != 2 {
			t.Errorf("heartbeat %s: %d partitions delivered, want 2", hb, got)
		}
	}
}
