package view

// This file shapes trace parse's --timeline table for a reader: one partition when asked
// (--partition), the same event on many partitions folded into one line ("rewind skipped on
// 20 partitions"), details that do not repeat the EVENT column's word, and findings as a
// headline with detail lines. The JSON timeline stays one entry per event: scripts fold
// what they need themselves.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kstranded/kstranded/internal/render"
)

// PartitionFilter selects one partition of the timeline: Topic "" matches every topic.
type PartitionFilter struct {
	Topic     string
	Partition int32
}

// ParsePartitionFilter reads --partition: "0", "stranded/0" or "stranded[0]".
func ParsePartitionFilter(s string) (PartitionFilter, error) {
	s = strings.TrimSpace(s)
	topic, num := "", s
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		topic, num = s[:i], s[i+1:]
	} else if strings.HasSuffix(s, "]") {
		if i := strings.LastIndexByte(s, '['); i >= 0 {
			topic, num = strings.TrimSpace(s[:i]), s[i+1:len(s)-1]
		}
	}
	p, err := strconv.ParseInt(num, 10, 32)
	if err != nil || p < 0 {
		return PartitionFilter{}, fmt.Errorf("%q is not a partition: give N, TOPIC/N or TOPIC[N]", s)
	}
	return PartitionFilter{Topic: topic, Partition: int32(p)}, nil
}

func (f PartitionFilter) String() string {
	if f.Topic == "" {
		return fmt.Sprintf("partition %d", f.Partition)
	}
	return fmt.Sprintf("%s/%d", f.Topic, f.Partition)
}

// Matches says whether an entry of topic and partition (nil: every partition) belongs to
// the selected partition; entries about every partition (an expiry, a rebalance) do.
func (f PartitionFilter) Matches(topic string, p *int32) bool {
	if p == nil {
		return true
	}
	return *p == f.Partition && (f.Topic == "" || topic == "" || topic == f.Topic)
}

// FilterTimeline keeps the timeline entries of one partition and those about all of them.
// The summary, the findings and the verdict stay the whole report's: the filter narrows
// what is shown, never what is judged.
func FilterTimeline(d *Trace, f PartitionFilter) {
	kept := d.Timeline[:0:0]
	for _, e := range d.Timeline {
		if f.Matches(string(e.Topic), e.Partition) {
			kept = append(kept, e)
		}
	}
	d.Timeline = kept
	d.TimelineFilter = Text(f.String())
}

// timelineRow is one line of the table: one entry, or a run of entries folded.
type timelineRow struct {
	first, last TraceEntry
	parts       []int32 // the partitions folded, in order
	n           int
}

// foldTimeline folds runs of adjacent entries with the same event and detail: the same
// line of the log naming many partitions (a cache clear skipping the rewind of 20) becomes
// one row naming how many.
func foldTimeline(es []TraceEntry) []timelineRow {
	var rows []timelineRow
	for _, e := range es {
		if n := len(rows); n > 0 {
			r := &rows[n-1]
			if r.last.Event == e.Event && r.last.Detail == e.Detail && r.last.Topic == e.Topic &&
				r.last.Source.File == e.Source.File && (r.last.Partition == nil) == (e.Partition == nil) && e.Event != "fetch" && e.Event != "deliver" {
				r.last, r.n = e, r.n+1
				if e.Partition != nil {
					r.parts = append(r.parts, *e.Partition)
				}
				continue
			}
		}
		r := timelineRow{first: e, last: e, n: 1}
		if e.Partition != nil {
			r.parts = []int32{*e.Partition}
		}
		rows = append(rows, r)
	}
	return rows
}

// distinct counts the different partitions of a folded row.
func distinct(ps []int32) int {
	seen := map[int32]bool{}
	for _, p := range ps {
		seen[p] = true
	}
	return len(seen)
}

// partitionsText names the partitions of a folded row: "stranded[0-19]" when they are
// consecutive, else the count.
func partitionsText(topic string, ps []int32) string {
	ps = slices.Clone(ps)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	consecutive := true
	for i := 1; i < len(ps); i++ {
		if ps[i] != ps[i-1]+1 {
			consecutive = false
		}
	}
	if !consecutive {
		return fmt.Sprintf("%d partitions", distinct(ps))
	}
	span := fmt.Sprintf("%d-%d", ps[0], ps[len(ps)-1])
	if topic == "" {
		return span
	}
	return fmt.Sprintf("%s[%s]", topic, span)
}

// eventWords are the words a detail starts with that only repeat its EVENT column.
var eventWords = map[string][]string{
	"fetch": {"fetched"}, "deliver": {"delivered"}, "store": {"stored"}, "commit": {"committed"},
	"assign": {"assigned"}, "revoke": {"revoked"}, "pause": {"paused"}, "resume": {"resumed"},
	"clear": {"cache cleared:"}, "rewind-skipped": {"rewind skipped:", "rewind skipped"},
	"rewind": {"rewound", "rewind"}, "seek": {"seek", "seeked"},
}

var oneRecords = regexp.MustCompile(`\b1 records\b`)

// plainDetail is the detail without the words of its EVENT column, doubled words
// ("run run", "produce produced") or doubled spaces.
func plainDetail(event, detail string) string {
	for _, w := range eventWords[event] {
		if rest, ok := strings.CutPrefix(detail, w); ok && (rest == "" || rest[0] == ' ') {
			detail = rest
			break
		}
	}
	words := strings.Fields(detail)
	out := words[:0:0]
	for i, w := range words {
		if i+1 < len(words) && sameWord(w, words[i+1]) {
			continue
		}
		out = append(out, w)
	}
	return oneRecords.ReplaceAllString(strings.Join(out, " "), "1 record")
}

// sameWord: "run" "run", "produce" "produced", "fetch" "fetched".
func sameWord(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b {
		return true
	}
	stem := strings.TrimSuffix(a, "e")
	return len(stem) >= 3 && (b == stem+"ed" || b == stem+"es" || b == a+"d" || b == a+"ed")
}

// TimelineGrid is the chronological table, folded.
func TimelineGrid(d Trace) render.Grid {
	g := render.Grid{Header: []string{"TIME", "PARTITION", "EVENT", "DETAIL", "SOURCE"}}
	for _, r := range foldTimeline(d.Timeline) {
		e := r.first
		part := partName(string(e.Topic), e.Partition)
		detail := plainDetail(e.Event, e.Detail)
		src := e.Source.String()
		if r.n > 1 {
			if r.last.Source != e.Source {
				src += fmt.Sprintf("-%d", r.last.Source.Line)
			}
			switch k := distinct(r.parts); {
			case k > 1:
				part = partitionsText(string(e.Topic), r.parts)
				detail = joinDetail(fmt.Sprintf("on %d partitions", k), detail)
			default:
				detail = joinDetail(fmt.Sprintf("%d times", r.n), detail)
				if r.last.Time != e.Time {
					detail += " until " + r.last.Time
				}
			}
		}
		g.Rows = append(g.Rows, []string{render.Safe(e.Time), render.Safe(part), render.Safe(e.Event), render.Safe(detail), render.Safe(src)})
	}
	return g
}

func joinDetail(head, detail string) string {
	if detail == "" {
		return head
	}
	return head + ": " + detail
}

// findingLines splits a finding's message into a headline and detail lines: the message's
// clauses ("; ") become lines; a first clause too long for a headline is cut at its colon
// ("cache expired at T: 1m0s since the last fetch, ...") and its list goes one item a line.
func findingLines(msg string) (string, []string) {
	clauses := splitTop(msg, "; ")
	head, rest := clauses[0], clauses[1:]
	if len(head) > 90 {
		for i := 0; i+2 < len(head); i++ {
			// a colon after a headline of its own ("cache expired at T:"), not after a
			// partition's name ("stranded-729333bd [0]:")
			if !strings.HasPrefix(head[i:], ": ") || i < 20 || len(strings.Fields(head[:i])) < 3 {
				continue
			}
			// a list after the colon goes one item a line; a sentence stays one line
			items := splitTop(head[i+2:], ", ")
			if len(items) < 3 {
				items = []string{head[i+2:]}
			}
			head = head[:i]
			rest = append(items, rest...)
			break
		}
	}
	return head, rest
}

// splitTop splits s at sep outside parentheses and brackets.
func splitTop(s, sep string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			parts = append(parts, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, s[start:])
}
