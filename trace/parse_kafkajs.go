package trace

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// kafkajsParser reads the instrumented confluent-kafka-javascript trace of the
// eachBatch cache-expiration bug report: lines of an optional time, an event name and an
// optional JSON payload, e.g.
//
//	14:26:59 clearCacheAndResetPositions {"assignedSize":0,"lastConsumedKeys":[]}
//	consume-result {"count":1, "offsets":["0:0"]}
//	... 670 x consume-result {"count":0}     # repeated lines
//	cache:nextN-null 220331                  # a counts-summary line
//
// People paste annotations after the lines ("# ...", "<- ...", box-drawing brackets) and
// on lines of their own; those are kept apart from events and never counted as malformed.
type kafkajsParser struct {
	inAnnotation bool
	day          time.Time
	last         time.Time
	timed        bool
}

// kafkajsNames are the event names the instrumentation writes; they make detection sure.
var kafkajsNames = []string{"consume-request", "consume-result", "cache:nextN", "cache-expiration",
	"clearCacheAndResetPositions", "clearCache-", "park-wait-", "valve-1s-fire", "batch-eachBatch", "worker-exit"}

func looksKafkaJS(l []byte) bool {
	for _, n := range kafkajsNames {
		if bytes.Contains(l, []byte(n)) {
			return true
		}
	}
	return false
}

func isAnnotationStart(l []byte) bool {
	for _, p := range []string{"<-", "#", "//", "```", "┐", "│", "┘", "└", "┌", "->"} {
		if bytes.HasPrefix(l, []byte(p)) {
			return true
		}
	}
	return false
}

// parseClock reads HH:MM:SS[.fff] or an RFC 3339 time at the start of s.
func parseClock(s string) (time.Time, bool, bool, int) {
	tok := s
	if i := strings.IndexByte(s, ' '); i >= 0 {
		tok = s[:i]
	}
	if t, err := time.Parse(time.RFC3339Nano, tok); err == nil {
		return t, true, true, len(tok)
	}
	if len(tok) >= 8 && tok[2] == ':' && tok[5] == ':' {
		layout := "15:04:05"
		if len(tok) > 8 {
			layout = "15:04:05.999999999"
		}
		if t, err := time.Parse(layout, tok); err == nil {
			return t, false, true, len(tok)
		}
	}
	return time.Time{}, false, false, 0
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == ':' || c == '_' || c == '.' || c == '*' || c == '#'
}

// stripAnnotation cuts a trailing annotation ("# ...", "<- ...", box brackets).
func stripAnnotation(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	cut := len(s)
	for _, m := range []string{" #", "\t#", "<-", "┐", "│", "┘", "└", "┌"} {
		if i := strings.Index(s, m); i >= 0 && i < cut {
			cut = i
		}
	}
	return strings.TrimSpace(s[:cut])
}

type kafkajsPayload struct {
	Count            *int      `json:"count"`
	Offsets          []string  `json:"offsets"`
	Served           *int      `json:"served"`
	Remaining        *int      `json:"remaining"`
	Partition        *int32    `json:"partition"`
	Topic            string    `json:"topic"`
	Offset           *int64    `json:"offset"`
	AssignedSize     *int      `json:"assignedSize"`
	LastConsumedKeys *[]string `json:"lastConsumedKeys"`
	SinceFetchMs     *float64  `json:"sinceLastFetchMs"`
	SinceFetchMs2    *float64  `json:"sinceFetchMs"`
	TimeoutMs        *float64  `json:"timeoutMs"`
	ExpirationMs     *float64  `json:"cacheExpirationTimeoutMs"`
	MaxPollMs        *float64  `json:"maxPollIntervalMs"`
	Key              string    `json:"key"`
	Reason           string    `json:"reason"`
}

func (p *kafkajsParser) Line(raw []byte, emit func(Event)) error {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return nil
	}
	if isAnnotationStart(raw) || isAnnotationStart([]byte(s)) {
		p.inAnnotation = true
		return nil
	}
	if v, ok := settingIn(s, "max.poll.interval.ms"); ok {
		e := newEvent(KindSetting)
		e.Name, e.Reason = "max.poll.interval.ms", v
		p.stamp(&e, false)
		emit(e)
		p.inAnnotation = false
		return nil
	}
	rest := s
	rest = strings.TrimPrefix(rest, "...")
	rest = strings.TrimSpace(rest)
	t, timed, rest := p.clock(rest)
	repeat := 1
	// "670 x consume-result ..."
	if i := strings.Index(rest, " x "); i > 0 {
		if k, err := strconv.Atoi(strings.TrimSpace(rest[:i])); err == nil && k >= 0 {
			repeat, rest = k, strings.TrimSpace(rest[i+3:])
		}
	}
	names, rest := eventNames(rest)
	if len(names) == 0 || !strings.ContainsAny(names[0], "-:") && !looksKafkaJS([]byte(names[0])) {
		return p.notAnEvent(s)
	}
	var payload kafkajsPayload
	hasPayload := false
	count := Unknown
	if strings.HasPrefix(rest, "{") {
		dec := json.NewDecoder(strings.NewReader(rest))
		if err := dec.Decode(&payload); err != nil {
			return errMalformed("bad JSON payload: " + err.Error())
		}
		hasPayload = true
		rest = strings.TrimSpace(rest[dec.InputOffset():])
	} else if j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); j != 0 && rest != "" {
		if j < 0 {
			j = len(rest)
		}
		count, _ = strconv.Atoi(rest[:j])
		rest = strings.TrimSpace(rest[j:])
	}
	if rest != "" && stripAnnotation(rest) != "" {
		return p.notAnEvent(s)
	}
	p.inAnnotation = false
	if timed {
		p.last, p.timed = t, true
	}
	for _, name := range names {
		if count != Unknown && !hasPayload {
			// a counts-summary line: "cache:nextN-null 220331"
			e := newEvent(KindCounter)
			e.Name, e.Count = name, count
			p.stamp(&e, timed)
			emit(e)
			continue
		}
		for _, e := range kafkajsEvents(name, payload, hasPayload, repeat) {
			if timed {
				e.Time, e.Timed = t, true
			} else {
				p.stamp(&e, false)
			}
			emit(e)
		}
	}
	return nil
}

// clock reads the time at the start of rest: a date and time, or a time of day, whose day
// is the trace's first, moved on each time the clock goes backwards across midnight.
func (p *kafkajsParser) clock(rest string) (time.Time, bool, string) {
	t, dated, ok, n := parseClock(rest)
	if !ok {
		return t, false, rest
	}
	rest = strings.TrimSpace(rest[n:])
	if !dated {
		t = time.Date(0, 1, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		// a clock that goes backwards crossed midnight
		if p.timed && t.Add(24*time.Hour).Sub(p.last) < 12*time.Hour && t.Before(p.last) {
			p.day = p.day.Add(24 * time.Hour)
		}
		t = t.Add(p.day.Sub(time.Time{}))
	}
	return t, true, rest
}

// eventNames reads the event name(s) at the start of rest, "a / b", and returns them and
// what follows.
func eventNames(rest string) ([]string, string) {
	var names []string
	for {
		j := 0
		for j < len(rest) && isNameByte(rest[j]) {
			j++
		}
		if j == 0 || !strings.ContainsAny(rest[:j], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			break
		}
		names = append(names, rest[:j])
		rest = strings.TrimSpace(rest[j:])
		if strings.HasPrefix(rest, "/ ") {
			rest = strings.TrimSpace(rest[1:])
			continue
		}
		break
	}
	return names, rest
}

func (p *kafkajsParser) stamp(e *Event, timed bool) {
	if !timed {
		e.Time = p.last
	}
}

func (p *kafkajsParser) notAnEvent(s string) error {
	if p.inAnnotation {
		return nil // prose continuing a pasted annotation
	}
	return errMalformed("not a trace line (time, event name, JSON payload)")
}

// settingIn finds `key: 123`, `key=123` or `'key': 123` in s.
func settingIn(s, key string) (string, bool) {
	i := strings.Index(s, key)
	if i < 0 {
		return "", false
	}
	r := strings.TrimLeft(s[i+len(key):], `'" `)
	r = strings.TrimLeft(r, ":= ")
	j := 0
	for j < len(r) && r[j] >= '0' && r[j] <= '9' {
		j++
	}
	if j == 0 {
		return "", false
	}
	return r[:j], true
}

func partOffset(s string) (int32, int64, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return 0, 0, false
	}
	p, err1 := strconv.ParseInt(s[:i][strings.LastIndexByte(s[:i], ':')+1:], 10, 32)
	o, err2 := strconv.ParseInt(s[i+1:], 10, 64)
	return int32(p), o, err1 == nil && err2 == nil
}

func kafkajsEvents(name string, pl kafkajsPayload, hasPayload bool, repeat int) []Event {
	part := func(e *Event) {
		if pl.Partition != nil {
			e.Partition = *pl.Partition
		}
		e.Topic = pl.Topic
		e.Name = name
	}
	switch {
	case name == "consume-result":
		return consumeResultEvents(pl, repeat, part)
	case name == "consume-request":
		e := newEvent(KindNote)
		part(&e)
		e.Count = repeat
		return []Event{e}
	case strings.HasPrefix(name, "cache:nextN-served"):
		e := newEvent(KindDeliver)
		part(&e)
		if pl.Served != nil {
			e.Count = *pl.Served
		}
		if pl.Remaining != nil {
			e.Remaining = *pl.Remaining
		}
		for _, s := range pl.Offsets {
			if pt, o, ok := partOffset(s); ok {
				e.Partition = pt
				e.Ranges = append(e.Ranges, kpart.Range{First: o, Last: o})
			}
		}
		return []Event{e}
	case strings.HasPrefix(name, "cache:nextN-null"):
		e := newEvent(KindEmptyRead)
		part(&e)
		e.Count = repeat
		return []Event{e}
	case strings.HasPrefix(name, "cache-expiration"):
		e := newEvent(KindExpiry)
		part(&e)
		if v := firstOf(pl.SinceFetchMs, pl.SinceFetchMs2); v != nil {
			e.SinceFetch = msDur(v)
		}
		if v := firstOf(pl.TimeoutMs, pl.ExpirationMs); v != nil {
			e.Timeout = msDur(v)
		}
		if pl.MaxPollMs != nil {
			e.Reason = "maxPollIntervalMs=" + strconv.FormatFloat(*pl.MaxPollMs, 'f', -1, 64)
		}
		return []Event{e}
	case name == "clearCacheAndResetPositions":
		e := newEvent(KindClear)
		part(&e)
		if pl.LastConsumedKeys != nil {
			e.Keys, e.KeysKnown = *pl.LastConsumedKeys, true
		}
		if pl.AssignedSize != nil {
			e.Reason = "assignedSize=" + strconv.Itoa(*pl.AssignedSize)
		}
		return []Event{e}
	case strings.HasPrefix(name, "clearCache-skip-rewind"):
		e := newEvent(KindRewindSkip)
		part(&e)
		e.Count = repeat
		e.Reason = pl.Reason
		if e.Reason == "" {
			e.Reason = "no last-consumed entry"
		}
		return []Event{e}
	case strings.HasPrefix(name, "clearCache-rewind") || name == "seek":
		e := newEvent(KindRewind)
		if name == "seek" {
			e.Kind = KindSeek
		}
		part(&e)
		if pl.Offset != nil {
			e.Offset = *pl.Offset
		}
		return []Event{e}
	}
	e := newEvent(KindNote)
	part(&e)
	e.Count = repeat
	return []Event{e}
}

// consumeResultEvents reads a consume-result: an empty fetch, or the records fetched by
// partition; part names the partition of an event as the payload does.
func consumeResultEvents(pl kafkajsPayload, repeat int, part func(*Event)) []Event {
	if pl.Count == nil || *pl.Count == 0 {
		e := newEvent(KindEmptyFetch)
		part(&e)
		e.Count = repeat
		return []Event{e}
	}
	// offsets are listed as "partition:offset" (the list may be cut short: count wins)
	byPart := map[int32]*kpart.RangeSet{}
	var order []int32
	for _, s := range pl.Offsets {
		pt, o, ok := partOffset(s)
		if !ok {
			continue
		}
		if byPart[pt] == nil {
			byPart[pt] = &kpart.RangeSet{}
			order = append(order, pt)
		}
		byPart[pt].Add(o, o)
	}
	var out []Event
	for _, pt := range order {
		e := newEvent(KindFetch)
		part(&e)
		e.Partition = pt
		rs := *byPart[pt]
		if len(order) == 1 && int64(len(pl.Offsets)) < int64(*pl.Count) {
			// a cut list: the count is contiguous from the first listed offset
			rs = kpart.RangeSet{{First: rs[0].First, Last: rs[0].First + int64(*pl.Count) - 1}}
			e.Reason = "offsets list cut short; range inferred from count"
		}
		e.Ranges, e.Count = rs, int(rs.Count())
		out = append(out, e)
	}
	if len(out) == 0 {
		e := newEvent(KindFetch)
		part(&e)
		e.Count = *pl.Count
		e.Reason = "offsets not listed"
		out = append(out, e)
	}
	return out
}

func firstOf(ps ...*float64) *float64 {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}
