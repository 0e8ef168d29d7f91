package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The rule RuleCacheExpiry (CACHE-EXPIRY): the cache expired; since fetch, since serve, against
// max.poll.interval.ms.

// expiryTimes are the times since the last fetch and serve when the cache expired, from
// the expiry line or the lines before it, with a note on where each came from.
type expiryTimes struct {
	sinceFetch, sinceServe time.Duration
	fetchAtLeast           time.Duration // the kafkajs trace: a lower bound of sinceFetch (Unknown: none)
	fetchNote, serveNote   string
}

func newExpiryTimes(x expiryRec) expiryTimes {
	e := x.e
	sinceFetch, sinceServe := e.SinceFetch, e.SinceServe
	fetchNote, serveNote := "", ""
	if sinceFetch == Unknown {
		if !x.lastFetch.IsZero() && e.Timed {
			sinceFetch = e.Time.Sub(x.lastFetch)
			fetchNote = " (last fetch " + clock(x.lastFetch) + ")"
		} else {
			fetchNote = " (the trace's fetch lines carry no time)"
		}
	}
	// The kafkajs trace times no fetch; the first timed serve after the last productive
	// fetch bounds it from above, so at least this long passed since the last fetch.
	fetchAtLeast := time.Duration(Unknown)
	if sinceFetch == Unknown && !x.fetchBound.IsZero() && e.Timed && !e.Time.Before(x.fetchBound) {
		fetchAtLeast = e.Time.Sub(x.fetchBound)
		fetchNote = fmt.Sprintf(" (the fetch lines carry no time; the last productive fetch filled the cache no later than %s, when the first batch was served from it: at least %s before the expiry)",
			clock(x.fetchBound), fmtDur(fetchAtLeast))
	}
	if sinceServe == Unknown && !x.lastServe.IsZero() && e.Timed {
		sinceServe = e.Time.Sub(x.lastServe)
		serveNote = " (last serve " + clock(x.lastServe) + ")"
	}
	return expiryTimes{sinceFetch, sinceServe, fetchAtLeast, fetchNote, serveNote}
}

func (a *Analyzer) expiryFinding(x expiryRec, r *Report) Finding {
	e := x.e
	t := newExpiryTimes(x)
	sinceFetch, sinceServe, fetchAtLeast := t.sinceFetch, t.sinceServe, t.fetchAtLeast
	fetchNote, serveNote := t.fetchNote, t.serveNote
	f := Finding{Rule: RuleCacheExpiry, Severity: SevWarn, Partition: e.Partition, Topic: e.Topic,
		Facts: map[string]string{}, Evidence: []Evidence{{e.Ref, "cache expired"}}}
	facts := func(k string, d time.Duration) {
		if d >= 0 {
			f.Facts[k] = strconv.FormatInt(d.Milliseconds(), 10)
		} else {
			f.Facts[k] = "unknown"
		}
	}
	// a scaled trace (kstranded repro, time_scale 0.01) measures every duration in its own,
	// faster time: max.poll.interval is compared after scaling it the same way, and the
	// message gives the full-scale figures next to the trace's own
	scale := r.TimeScale
	if scale <= 0 {
		scale = 1
	}
	scaled := scale != 1
	full := func(d time.Duration) string {
		if !scaled || d < 0 {
			return ""
		}
		return fmt.Sprintf(" (%s at full scale)", fmtDur(time.Duration(float64(d)/scale)))
	}
	maxPoll := r.MaxPollInterval // in the trace's time
	if maxPoll >= 0 && scaled {
		maxPoll = time.Duration(float64(maxPoll) * scale)
	}
	facts("since_fetch_ms", sinceFetch)
	facts("since_serve_ms", sinceServe)
	facts("max_poll_interval_ms", r.MaxPollInterval)
	facts("timeout_ms", e.Timeout)
	if scaled {
		f.Facts["time_scale"] = strconv.FormatFloat(scale, 'g', -1, 64)
		facts("max_poll_interval_trace_ms", maxPoll)
	}
	msg := fmt.Sprintf("cache expired at %s: %s since the last fetch%s%s, %s since the last serve%s%s, max.poll.interval.ms %s",
		clock(e.Time), fmtDur(sinceFetch), full(sinceFetch), fetchNote, fmtDur(sinceServe), full(sinceServe), serveNote, fmtMaxPoll(r))
	if fetchAtLeast >= 0 {
		msg = strings.Replace(msg, "unknown since the last fetch", "at least "+fmtDur(fetchAtLeast)+" since the last fetch", 1)
	}
	if scaled {
		msg += fmt.Sprintf(", %s in this trace's time (its durations are scaled by time_scale %s, %s)",
			fmtDur(maxPoll), f.Facts["time_scale"], r.TimeScaleSource)
	}
	if e.Timeout >= 0 {
		msg += fmt.Sprintf(", expiration timeout in effect %s (timeout_ms %d in the trace)%s", fmtDur(e.Timeout), e.Timeout.Milliseconds(), full(e.Timeout))
	}
	if r.MaxPollSource != "" && r.MaxPollSource != "--max-poll-interval" {
		for _, k := range []string{"max.poll.interval.ms", "max_poll_interval"} {
			if v, ok := a.settings[k]; ok {
				f.Evidence = append(f.Evidence, Evidence{a.settingRef[k], k + "=" + v})
				break
			}
		}
	}
	if scaled {
		f.Evidence = append(f.Evidence, Evidence{a.settingRef["time_scale"], "time_scale=" + a.settings["time_scale"]})
	}
	if fetchAtLeast >= 0 {
		f.Evidence = append(f.Evidence, Evidence{x.fetchRef, "the last productive fetch"}, Evidence{x.fetchBoundRef, "first serve from it at " + clock(x.fetchBound)})
		facts("since_fetch_at_least_ms", fetchAtLeast)
	}
	msg += t.compare(e, r.MaxPollInterval, maxPoll, scale)
	if x.e.Reason != "" {
		msg += " (" + x.e.Reason + ")"
	}
	f.Message = msg
	return f
}

// compare says what the times say of the timeout in effect at the expiry e against
// max.poll.interval.ms (configured, and maxPoll in the trace's time; scale: the trace's
// time_scale).
func (t expiryTimes) compare(e Event, configured, maxPoll time.Duration, scale float64) string {
	sinceFetch, sinceServe, fetchAtLeast := t.sinceFetch, t.sinceServe, t.fetchAtLeast
	scaled := scale != 1
	msg := ""
	// the elapsed time bounds the timeout that was in effect
	elapsed := sinceFetch
	what := "the last fetch"
	if elapsed < 0 {
		elapsed, what = sinceServe, "the last serve"
	}
	// timers fire a little late and durations are rounded: within 1 % (or 5 ms) is "the same"
	same := func(x, y time.Duration) bool {
		d := x - y
		if d < 0 {
			d = -d
		}
		return d <= 5*time.Millisecond || float64(d) <= 0.01*float64(y)
	}
	switch {
	case configured < 0:
		msg += "; pass --max-poll-interval to compare"
	case e.Timeout >= 0 && !same(e.Timeout, maxPoll):
		msg += fmt.Sprintf("; the timeout in effect (%s) is not max.poll.interval.ms (%s)", fmtDur(e.Timeout), fmtDur(maxPoll))
	case e.Timeout < 0 && fetchAtLeast >= 0 && same(fetchAtLeast, maxPoll):
		msg += fmt.Sprintf("; the expiry came %s after the cache was filled: max.poll.interval.ms (%s) was honoured, counted from the last fetch. The %s is the time since the last serve, not since the last fetch: while a worker holds the only partition with cached records the others wait for a partition and never fetch, so nothing restarted the count (every fetch, even an empty one, does)",
			fmtDur(fetchAtLeast), fmtDur(maxPoll), fmtDur(sinceServe))
	case e.Timeout < 0 && fetchAtLeast >= 0 && fetchAtLeast > maxPoll:
		msg += fmt.Sprintf("; at least %s passed since the last productive fetch, more than max.poll.interval.ms (%s): fetches the trace does not time (empty ones count too) may have restarted the count", fmtDur(fetchAtLeast), fmtDur(maxPoll))
	case e.Timeout >= 0:
		msg += "; the timeout in effect is max.poll.interval.ms"
		if sinceFetch >= 0 && sinceServe >= 0 && sinceServe < e.Timeout && !same(sinceServe, e.Timeout) {
			ago := fmtDur(sinceServe) + " ago"
			if scaled {
				ago += ", " + fmtDur(time.Duration(float64(sinceServe)/scale)) + " at full scale"
			}
			msg += fmt.Sprintf(", counted from the last fetch (%s ago), not from the last serve (%s): the handler was still being served from the cache, but nothing had been fetched for max.poll.interval, so the cache was dropped",
				fmtDur(sinceFetch), ago)
		}
	case elapsed >= 0 && elapsed < maxPoll && !same(elapsed, maxPoll):
		msg += fmt.Sprintf("; it fired %s after %s, %s before max.poll.interval.ms would allow: the expiration timeout in effect was at most %s, not the configured %s",
			fmtDur(elapsed), what, fmtDur(maxPoll-elapsed), fmtDur(elapsed), fmtDur(maxPoll))
	case elapsed >= 0:
		msg += "; consistent with max.poll.interval.ms"
	}
	return msg
}

func fmtMaxPoll(r *Report) string {
	if r.MaxPollInterval < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d (%s, from %s)", r.MaxPollInterval.Milliseconds(), fmtDur(r.MaxPollInterval), r.MaxPollSource)
}
