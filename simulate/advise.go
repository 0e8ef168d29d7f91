package simulate

import (
	"context"
	"fmt"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
)

// Advice is what --advise found for the user's settings.
type Advice struct {
	Case
	Lost     int      // records the user's settings lose
	Settings []Range  // the safe range of each setting the user can change
	Policies []Policy // each version's outcome at the user's settings
}

// Verdict is the advice's outcome at the user's own settings: LOST when they lose
// records, else OK (the search settles every point it reports).
func (a *Advice) Verdict() verdict.Verdict {
	if a.Lost > 0 {
		return verdict.Lost
	}
	return verdict.OK
}

// Range is the safe range of one setting, the others held at the user's values.
type Range struct {
	Flag    string
	Current string
	Safe    string // e.g. ">= 14m41s", "<= 13", "none found up to 24h0m0s"
	Margin  string // how far the current value is inside (or outside) the safe range
	IsSafe  bool   // the current value is safe
}

// Policy is one modelled rule at the user's settings, with the client versions it models.
type Policy struct {
	Policy   eachbatch.Policy
	Releases []string // the releases and patches of eachbatch.Releases with this policy
	Lost     int
}

// Advise searches the model for the safe range of max.poll.interval (larger is safer:
// doubled up to 24h, then bisected to 1 s), batch size (smaller is safer: bisected
// between 1 and the current value) and concurrency (each value from 1 to the current one
// or the workload's partition count, at most 64), each with the others at the user's values, and runs every policy at the
// user's settings. The searches assume the loss is monotone in the setting, which holds
// for the shapes the tests cover; the range printed is checked at its edge.
func Advise(ctx context.Context, o repro.Options, c Case) (*Advice, error) {
	o.Policy, o.Commit, o.Trace, o.Progress = c.Policy, c.Commit, nil, nil
	run := func(o repro.Options) (int, error) {
		r, err := repro.Simulate(ctx, o)
		if err != nil {
			return 0, err
		}
		return r.Lost(), nil
	}
	a := &Advice{Case: c}
	var err error
	if a.Lost, err = run(o); err != nil {
		return nil, err
	}

	// max.poll.interval: the smallest safe value.
	{
		rg := Range{Flag: "max-poll-interval", Current: o.MaxPollInterval.String()}
		safeAt := func(d time.Duration) (bool, error) {
			v := o
			v.MaxPollInterval = d
			n, err := run(v)
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
		if !ok {
			rg.Safe = "none found up to " + hi.String()
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
			rg.Safe = ">= " + hi.String()
			rg.IsSafe = o.MaxPollInterval >= hi
			if rg.IsSafe {
				rg.Margin = fmt.Sprintf("%s above the edge", o.MaxPollInterval-hi)
			} else {
				rg.Margin = fmt.Sprintf("%s short", hi-o.MaxPollInterval)
			}
		}
		a.Settings = append(a.Settings, rg)
	}

	// batch size: the largest safe value up to the current one.
	if o.BatchSize > 0 {
		rg := Range{Flag: "batch-size", Current: fmt.Sprint(o.BatchSize)}
		safeAt := func(n int) (bool, error) {
			v := o
			v.BatchSize = n
			l, err := run(v)
			return l == 0, err
		}
		if a.Lost == 0 {
			rg.Safe, rg.IsSafe, rg.Margin = fmt.Sprintf("<= %d (at least; larger not searched)", o.BatchSize), true, "the current value is safe"
		} else if ok, err := safeAt(1); err != nil {
			return nil, err
		} else if !ok {
			rg.Safe = "none: even batches of 1 lose records"
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
			rg.Safe = fmt.Sprintf("<= %d", lo)
			rg.Margin = fmt.Sprintf("%d too large", o.BatchSize-lo)
		}
		a.Settings = append(a.Settings, rg)
	}

	// concurrency: every value from 1 to the current one or the number of workload
	// partitions, whichever is larger (at most 64).
	{
		top := min(max(o.Concurrency, len(o.Workload.Parts)), 64)
		rg := Range{Flag: "concurrency", Current: fmt.Sprint(o.Concurrency)}
		var safe []int
		for n := 1; n <= top; n++ {
			v := o
			v.Concurrency = n
			l, err := run(v)
			if err != nil {
				return nil, err
			}
			if l == 0 {
				safe = append(safe, n)
			}
		}
		rg.IsSafe = a.Lost == 0
		switch {
		case len(safe) == 0:
			rg.Safe = fmt.Sprintf("none from 1 to %d", top)
		default:
			rg.Safe = "safe at " + runs(safe)
		}
		a.Settings = append(a.Settings, rg)
	}

	for _, p := range eachbatch.Policies {
		v := o
		v.Policy = p
		l, err := run(v)
		if err != nil {
			return nil, err
		}
		a.Policies = append(a.Policies, Policy{Policy: p, Releases: eachbatch.ReleasesOf(p), Lost: l})
	}
	return a, nil
}

// runs prints sorted integers as ranges: 1-3, 7.
func runs(ns []int) string {
	out := ""
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if out != "" {
			out += ", "
		}
		if i == j {
			out += fmt.Sprint(ns[i])
		} else {
			out += fmt.Sprintf("%d-%d", ns[i], ns[j])
		}
		i = j + 1
	}
	return out
}
