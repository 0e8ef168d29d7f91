package simulate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
)

// Advice is what --advise found for the user's settings.
type Advice struct {
	Case
	Lost int // records the user's settings lose
	// Stalled: at the user's settings a phase never settled (stale batches delivered
	// again and again): no verdict there, and Lost is 0 for want of one.
	Stalled  bool
	Settings []Range  // the safe range of each setting the user can change
	Policies []Policy // each version's outcome at the user's settings
	// NeverSettles names the points of the searches that never settled, as
	// FLAG=VALUE: a search counts them unsafe (no verdict is no proof of safety) and
	// goes on, where it used to abort the whole advice.
	NeverSettles []string
}

// Verdict is the advice's outcome at the user's own settings: LOST when they lose
// records, INCOMPLETE when a phase never settled there (no verdict), else OK.
func (a *Advice) Verdict() verdict.Verdict {
	switch {
	case a.Lost > 0:
		return verdict.Lost
	case a.Stalled:
		return verdict.Incomplete
	}
	return verdict.OK
}

// Range is the safe range of one setting, the others held at the user's values. The
// numbers are in the setting's Kind: nanoseconds for a Duration, else the count; the
// texts say the same in words.
type Range struct {
	Flag    string
	Kind    Kind
	Current int64
	// Safe are the runs of safe values found, ascending; empty when none was found.
	Safe []Span
	// Searched is what the search covered (it assumes the loss is monotone in the
	// setting): none found inside it says nothing of values outside it.
	Searched Span
	// Margin is how far Current is inside (> 0) or outside (< 0) the one edge of Safe;
	// nil where there is no single edge (concurrency, none found, larger not searched).
	Margin *int64
	IsSafe bool // the current value is safe

	CurrentText string
	SafeText    string // e.g. ">= 14m41s", "<= 13", "none found up to 24h0m0s"
	MarginText  string // how far the current value is inside (or outside) the safe range
}

// Span is an inclusive run of values of a setting; Last is nil when it is open above.
type Span struct {
	First int64
	Last  *int64
}

func closed(first, last int64) Span { return Span{First: first, Last: &last} }

// Policy is one modelled rule at the user's settings, with the client versions it models.
type Policy struct {
	Policy   eachbatch.Policy
	Releases []string // the releases and patches of eachbatch.Releases with this policy
	Lost     int
	// Stranded: records never delivered and not committed past when the run ended (a
	// consumer that stops delivering, as 1.7.0's wedged one does): not safe either.
	Stranded int
	Stalled  bool // never settled at the user's settings: no verdict
	// FixedBatchSize: the policy's releases have no js.consumer.max.batch.size, so
	// eachBatch got batches of this size, not the user's (eachbatch.Policy.
	// FixedBatchSize); 0 when the user's batch size applied.
	FixedBatchSize int
}

// Advise searches the model for the safe range of max.poll.interval (larger is safer:
// doubled up to 24h, then bisected to 1 s), batch size (smaller is safer: bisected
// between 1 and the current value) and concurrency (each value from 1 to the current one
// or the workload's partition count, at most 64), each with the others at the user's values, and runs every policy at the
// user's settings. The searches assume the loss is monotone in the setting, which holds
// for the shapes the tests cover; the range printed is checked at its edge.
func Advise(ctx context.Context, o repro.Options, c Case) (*Advice, error) {
	o.Policy, o.Commit, o.Trace, o.Progress = c.Policy, c.Commit, nil, nil
	a := &Advice{Case: c}
	// stalled runs o; a point that never settles is unsafe for the searches (no verdict
	// proves nothing safe) and named in NeverSettles; any other error ends the advice.
	var last *repro.Result // the result of stalled's last run, when it settled
	stalled := func(o repro.Options, point string) (lost int, never bool, err error) {
		r, err := repro.Simulate(ctx, o)
		last = r
		if errors.Is(err, repro.ErrPhaseTimeout) && ctx.Err() == nil {
			if !slices.Contains(a.NeverSettles, point) {
				a.NeverSettles = append(a.NeverSettles, point)
			}
			return 0, true, nil
		}
		if err != nil {
			return 0, false, err
		}
		return r.Lost(), false, nil
	}
	// run is stalled for the searches: a point that never settles counts as losing
	run := func(o repro.Options, point string) (int, error) {
		n, never, err := stalled(o, point)
		if never {
			return 1, nil
		}
		return n, err
	}
	var err error
	if a.Lost, a.Stalled, err = stalled(o, "your settings"); err != nil {
		return nil, err
	}

	// max.poll.interval: the smallest safe value.
	{
		rg := Range{Flag: "max-poll-interval", Kind: Duration, Current: int64(o.MaxPollInterval), CurrentText: o.MaxPollInterval.String()}
		safeAt := func(d time.Duration) (bool, error) {
			v := o
			v.MaxPollInterval = d
			n, err := run(v, "max-poll-interval="+d.String())
			return n == 0, err
		}
		hi := o.MaxPollInterval
		ok, err := safeAt(hi)
		if err != nil {
			return nil, err
		}
		for !ok && hi < 24*time.Hour {
			hi *= 2
			if ok, err = safeAt(hi); err != nil {
				return nil, err
			}
		}
		rg.Searched = closed(int64(time.Second), int64(hi)) // bisected to 1 s; 0 is never valid
		if !ok {
			rg.SafeText = "none found up to " + hi.String()
		} else {
			lo := time.Duration(0) // 0 is never valid: treated as unsafe
			for hi-lo > time.Second {
				m := lo + (hi-lo)/2/time.Second*time.Second
				if m <= lo {
					m = lo + time.Second
				}
				s, err := safeAt(m)
				if err != nil {
					return nil, err
				}
				if s {
					hi = m
				} else {
					lo = m
				}
			}
			rg.Safe, rg.SafeText = []Span{{First: int64(hi)}}, ">= "+hi.String()
			rg.IsSafe = o.MaxPollInterval >= hi
			margin := int64(o.MaxPollInterval - hi)
			rg.Margin = &margin
			if rg.IsSafe {
				rg.MarginText = fmt.Sprintf("%s above the edge", o.MaxPollInterval-hi)
			} else {
				rg.MarginText = fmt.Sprintf("%s short", hi-o.MaxPollInterval)
			}
		}
		a.Settings = append(a.Settings, rg)
	}

	// batch size: the largest safe value up to the current one; none to search when the
	// release has no js.consumer.max.batch.size (1.6.0 and earlier: batches of 32).
	if fixed := o.Policy.FixedBatchSize(o.Handler); fixed > 0 {
		a.Settings = append(a.Settings, Range{Flag: "batch-size", Kind: Count, Current: int64(fixed),
			CurrentText: fmt.Sprintf("%d (fixed)", fixed), Searched: closed(int64(fixed), int64(fixed)),
			IsSafe:   a.Lost == 0 && !a.Stalled,
			SafeText: fmt.Sprintf("not a setting of %s: eachBatch gets batches of %d (js.consumer.max.batch.size came with 1.7.0)", o.Policy, fixed)})
	} else if o.BatchSize > 0 {
		rg := Range{Flag: "batch-size", Kind: Count, Current: int64(o.BatchSize), CurrentText: fmt.Sprint(o.BatchSize),
			Searched: closed(1, int64(o.BatchSize))}
		safeAt := func(n int) (bool, error) {
			v := o
			v.BatchSize = n
			l, err := run(v, fmt.Sprintf("batch-size=%d", n))
			return l == 0, err
		}
		if a.Lost == 0 && !a.Stalled {
			rg.Safe, rg.IsSafe = []Span{closed(1, int64(o.BatchSize))}, true
			rg.SafeText, rg.MarginText = fmt.Sprintf("<= %d (at least; larger not searched)", o.BatchSize), "the current value is safe"
		} else if ok, err := safeAt(1); err != nil {
			return nil, err
		} else if !ok {
			rg.SafeText = "none: even batches of 1 lose records"
		} else {
			lo, hi := 1, o.BatchSize // safe(lo), !safe(hi)
			for hi-lo > 1 {
				m := (lo + hi) / 2
				s, err := safeAt(m)
				if err != nil {
					return nil, err
				}
				if s {
					lo = m
				} else {
					hi = m
				}
			}
			margin := int64(lo - o.BatchSize)
			rg.Safe, rg.Margin = []Span{closed(1, int64(lo))}, &margin
			rg.SafeText = fmt.Sprintf("<= %d", lo)
			rg.MarginText = fmt.Sprintf("%d too large", o.BatchSize-lo)
		}
		a.Settings = append(a.Settings, rg)
	}

	// concurrency: every value from 1 to the current one or the number of workload
	// partitions, whichever is larger (at most 64).
	{
		top := min(max(o.Concurrency, len(o.Workload.Parts)), 64)
		rg := Range{Flag: "concurrency", Kind: Count, Current: int64(o.Concurrency), CurrentText: fmt.Sprint(o.Concurrency),
			Searched: closed(1, int64(top))}
		var safe []int
		for n := 1; n <= top; n++ {
			v := o
			v.Concurrency = n
			l, err := run(v, fmt.Sprintf("concurrency=%d", n))
			if err != nil {
				return nil, err
			}
			if l == 0 {
				safe = append(safe, n)
			}
		}
		rg.IsSafe = a.Lost == 0 && !a.Stalled
		switch {
		case len(safe) == 0:
			rg.SafeText = fmt.Sprintf("none from 1 to %d", top)
		default:
			rg.Safe = spans(safe)
			rg.SafeText = "safe at " + runs(safe)
		}
		a.Settings = append(a.Settings, rg)
	}

	for _, p := range eachbatch.Policies {
		v := o
		v.Policy = p
		l, never, err := stalled(v, "client="+string(p))
		if err != nil {
			return nil, err
		}
		pol := Policy{Policy: p, Releases: eachbatch.ReleasesOf(p), Lost: l, Stalled: never}
		if fixed := p.FixedBatchSize(o.Handler); fixed > 0 && fixed != o.BatchSize {
			pol.FixedBatchSize = fixed
		}
		if !never && last != nil {
			for _, pv := range last.Partitions {
				pol.Stranded += pv.StrandedCount()
			}
		}
		a.Policies = append(a.Policies, pol)
	}
	return a, nil
}

// spans groups sorted integers into runs: 1, 2, 3, 7 is 1-3 and 7-7.
func spans(ns []int) []Span {
	var out []Span
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		out = append(out, closed(int64(ns[i]), int64(ns[j])))
		i = j + 1
	}
	return out
}

// runs prints sorted integers as ranges: 1-3, 7.
func runs(ns []int) string {
	var out []string
	for _, s := range spans(ns) {
		if s.First == *s.Last {
			out = append(out, fmt.Sprint(s.First))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", s.First, *s.Last))
		}
	}
	return strings.Join(out, ", ")
}
