package repro

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// RebalanceStep is one --rebalance-at change of the group's membership: at At (from
// the start of the consumers, unscaled), a new member joins, or a member leaves
// (disconnect(): its batches in flight finish, close() commits what it stored, then the
// group rebalances). Member names the leaving member (m1 is the first started); 0 is the
// member that joined most recently and is still in the group.
type RebalanceStep struct {
	At     time.Duration
	Join   bool
	Member int
}

// ParseRebalanceStep parses "5m:join", "8m:leave" or "8m:leave=2".
func ParseRebalanceStep(s string) (RebalanceStep, error) {
	at, what, ok := strings.Cut(s, ":")
	if !ok {
		return RebalanceStep{}, fmt.Errorf("--rebalance-at %q: want TIME:join, TIME:leave or TIME:leave=N", s)
	}
	d, err := time.ParseDuration(at)
	if err != nil || d < 0 {
		return RebalanceStep{}, fmt.Errorf("--rebalance-at %q: %q is not a duration >= 0", s, at)
	}
	st := RebalanceStep{At: d}
	switch {
	case what == "join":
		st.Join = true
	case what == "leave":
	case strings.HasPrefix(what, "leave="):
		n, err := strconv.Atoi(strings.TrimPrefix(what, "leave="))
		if err != nil || n < 1 {
			return RebalanceStep{}, fmt.Errorf("--rebalance-at %q: leave=N names a member, N >= 1", s)
		}
		st.Member = n
	default:
		return RebalanceStep{}, fmt.Errorf("--rebalance-at %q: want TIME:join, TIME:leave or TIME:leave=N", s)
	}
	return st, nil
}

func (st RebalanceStep) String() string {
	switch {
	case st.Join:
		return st.At.String() + ":join"
	case st.Member > 0:
		return fmt.Sprintf("%s:leave=%d", st.At, st.Member)
	}
	return st.At.String() + ":leave"
}

// members is --members, 1 when unset.
func (o Options) members() int {
	return max(1, o.Members)
}

// grouped reports whether the run has more than one member or membership changes: the
// result then reports each member.
func (o Options) grouped() bool { return o.members() > 1 || len(o.RebalanceAt) > 0 }

// rebalanceSteps returns the steps in time order (stable: steps at the same time keep
// the order given).
func (o Options) rebalanceSteps() []RebalanceStep {
	steps := append([]RebalanceStep(nil), o.RebalanceAt...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].At < steps[j].At })
	return steps
}

// validateMembers checks --members and --rebalance-at: the group never runs out of
// members, and a named member exists and is still in the group when it leaves.
func (o Options) validateMembers() error {
	if o.Members < 0 {
		return errors.New("--members must be >= 1")
	}
	in := map[int]bool{}
	order := []int{}
	for i := 1; i <= o.members(); i++ {
		in[i] = true
		order = append(order, i)
	}
	next := o.members() + 1
	for _, st := range o.rebalanceSteps() {
		if st.Join {
			in[next] = true
			order = append(order, next)
			next++
			continue
		}
		m := st.Member
		if m == 0 {
			for i := len(order) - 1; i >= 0; i-- {
				if in[order[i]] {
					m = order[i]
					break
				}
			}
		}
		if !in[m] {
			return fmt.Errorf("--rebalance-at %s: member %d is not in the group then", st, m)
		}
		delete(in, m)
		if len(in) == 0 {
			return fmt.Errorf("--rebalance-at %s: the last member would leave (the run needs one to finish)", st)
		}
	}
	return nil
}

// MemberResult is what one member of the group did.
type MemberResult struct {
	Name          string
	Delivered     int           // distinct records this member handed to its handler
	Joined        time.Duration // since the consumers started
	Left          time.Duration // when it left on --rebalance-at (0: it stayed)
	MaxPollLeaves int           // times librdkafka left the group for it on max.poll.interval.ms: lost assignments, not records
}

// memberTally counts the distinct records each member delivered, by name, over the
// consumer instances of a run (a phase-3 restart's members add to the same names).
type memberTally map[string]map[kpart.TopicPartition]*kpart.Counts

// record adds what the member name delivered in this instance and returns its result in
// res, added (with its join time) the first time the name is seen.
func (t *memberTally) record(res *Result, name string, joined time.Duration, delivered map[kpart.TopicPartition]*kpart.Counts) *MemberResult {
	if *t == nil {
		*t = memberTally{}
	}
	seen := (*t)[name]
	if seen == nil {
		seen = map[kpart.TopicPartition]*kpart.Counts{}
		(*t)[name] = seen
	}
	addDelivered(seen, delivered)
	n := 0
	for _, d := range seen {
		n += d.Len()
	}
	var m *MemberResult
	for i := range res.Members {
		if res.Members[i].Name == name {
			m = &res.Members[i]
		}
	}
	if m == nil {
		res.Members = append(res.Members, MemberResult{Name: name, Joined: joined})
		m = &res.Members[len(res.Members)-1]
	}
	m.Delivered = n
	return m
}
