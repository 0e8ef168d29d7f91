package inspect

import (
	"fmt"
	"strconv"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Change is one difference between two inspections of a group.
type Change struct {
	Topic     string `json:"topic,omitempty"`
	Partition *int32 `json:"partition,omitempty"`
	Field     string `json:"field"`
	From      string `json:"from"`
	To        string `json:"to"`
}

func (c Change) String() string {
	where := "group"
	if c.Partition != nil {
		where = fmt.Sprintf("%s/%d", c.Topic, *c.Partition)
	}
	return fmt.Sprintf("%s %s %s -> %s", where, c.Field, c.From, c.To)
}

// Changes lists what differs from prev to cur: group state, protocol and members; per
// partition the committed offset, lag, owner, last stable offset and verdict.
func Changes(prev, cur *Report) []Change {
	var out []Change
	g := func(field, a, b string) {
		if a != b {
			out = append(out, Change{Field: field, From: a, To: b})
		}
	}
	g("group protocol", prev.Group.GroupProtocol, cur.Group.GroupProtocol)
	g("state", prev.Group.State, cur.Group.State)
	g("protocol", prev.Group.Protocol, cur.Group.Protocol)
	g("members", strconv.Itoa(len(prev.Group.Members)), strconv.Itoa(len(cur.Group.Members)))
	type key struct {
		t string
		p int32
	}
	old := map[key]PartitionReport{}
	for _, p := range prev.Partitions {
		old[key{p.Topic, p.Partition}] = p
	}
	for _, p := range cur.Partitions {
		pt := p.Partition
		add := func(field, a, b string) {
			if a != b {
				out = append(out, Change{Topic: p.Topic, Partition: &pt, Field: field, From: a, To: b})
			}
		}
		q, ok := old[key{p.Topic, p.Partition}]
		if !ok {
			add("committed", "-", kpart.OffsetText(p.Committed))
			continue
		}
		add("committed", kpart.OffsetText(q.Committed), kpart.OffsetText(p.Committed))
		add("lag", kpart.OffsetText(q.Lag()), kpart.OffsetText(p.Lag()))
		add("last-stable", kpart.OffsetText(q.LastStable), kpart.OffsetText(p.LastStable))
		add("owner", dash(q.Owner), dash(p.Owner))
		add("error", dash(q.Err), dash(p.Err))
		if q.Judgement != nil && p.Judgement != nil {
			add("verdict", string(q.Judgement.Verdict), string(p.Judgement.Verdict))
			add("lost", strconv.FormatInt(q.Judgement.LostCount, 10), strconv.FormatInt(p.Judgement.LostCount, 10))
		}
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
