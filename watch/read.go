package watch

import (
	"context"
	"fmt"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/judge"
)

// read is inspect.Read, keeping what earlier evaluations read of the partition: what
// the offsets below the last stable offset hold does not change, so only the offsets
// past the previous read are fetched. Without it a partition that lost records, whose
// window starts at its first lost record and never moves on, was read from there to its
// end at every evaluation, a read that grew with the partition.
func (p *Partition) read(ctx context.Context, cl inspect.Cluster, o inspect.Offsets, maxScan int64) (inspect.Offsets, *inspect.Scan) {
	if o.Err != "" {
		return o, nil
	}
	from, to, trunc, need := inspect.Window(o, p.Delivered, maxScan)
	c := p.scan
	if !need {
		return o, nil
	}
	if c == nil || c.From > from || c.To <= from {
		o, sc := inspect.Read(ctx, cl, o, p.Delivered, maxScan)
		p.scan = nil
		if o.Err == "" && sc != nil {
			p.scan = &inspect.Scan{From: sc.From, To: sc.To, Spans: sc.Spans}
		}
		return o, sc
	}
	spans := spansWithin(c.Spans, from, min(to, c.To))
	if c.To >= to {
		return o, &inspect.Scan{From: from, To: to, Spans: spans, Truncated: trunc}
	}
	more, err := cl.Scan(ctx, o.Topic, o.Partition, c.To, to)
	if more != nil {
		spans = append(spans, more.Spans...)
	}
	if err != nil {
		// judged as far as the reads went, as inspect.Read does
		o.Err = fmt.Sprintf("scan of offsets %d-%d failed: %v", c.To, to-1, err)
		reached := c.To
		if more != nil && more.To > reached {
			reached = more.To
		}
		p.scan = nil
		return o, &inspect.Scan{From: from, To: reached, Spans: spans}
	}
	sc := &inspect.Scan{From: from, To: to, Spans: spans, Truncated: trunc, Requests: more.Requests}
	p.scan = &inspect.Scan{From: from, To: to, Spans: spans}
	return o, sc
}

// spansWithin returns the parts of spans within [from, to).
func spansWithin(spans []judge.Span, from, to int64) []judge.Span {
	out := make([]judge.Span, 0, len(spans))
	for _, s := range spans {
		if s.Last < from || s.First >= to {
			continue
		}
		s.First, s.Last = max(s.First, from), min(s.Last, to-1)
		out = append(out, s)
	}
	return out
}
