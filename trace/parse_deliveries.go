package trace

import (
	"bufio"
	"context"
	"fmt"
	"github.com/kstranded/kstranded/internal/ctxio"
	"sort"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
)

// parseDeliveries reads an application's delivery log with package evidence, the reader
// inspect --delivered and rewind --delivered use, and folds each delivered range as a
// delivery event. Lines carry no time in this form: the deliveries join the timeline
// without one. A log the reader cannot support a verdict on (no delivery in it, mostly
// malformed, lines of several kinds it will not guess between) delivers nothing and makes
// the report NO EVIDENCE, saying why, as inspect does.
func (a *Analyzer) parseDeliveries(ctx context.Context, name string, br *bufio.Reader, st *FileStats) error {
	set := evidence.NewSet()
	if a.opt.Delivered != nil {
		a.opt.Delivered(set)
	}
	if err := set.Read(ctxio.Reader(ctx, br), name); err != nil {
		if ctx.Err() != nil {
			a.partial, a.interrupted = true, true
			a.stoppedAt = Ref{File: name}
			return fmt.Errorf("%w (read up to %s)", ctx.Err(), a.stoppedAt)
		}
		return err
	}
	src := set.Sources[len(set.Sources)-1]
	st.Lines, st.Ignored, st.Malformed, st.Matched = src.Lines+src.Ignored+src.Malformed, src.Ignored, src.Malformed, src.Lines
	st.Kinds = src.Kinds
	for _, m := range set.Malformed {
		if len(st.FirstErrors) < keepMalformed {
			st.FirstErrors = append(st.FirstErrors, Malformed{Line: m.Line, Text: m.Text, Reason: m.Reason})
		}
	}
	a.beginFile(name)
	if why := set.Insufficient(); why != "" {
		a.endFile()
		a.files = append(a.files, *st)
		a.unread = append(a.unread, name+": "+why)
		return nil
	}
	keys := make([]kpart.TopicPartition, 0, len(set.Parts))
	for tp := range set.Parts {
		keys = append(keys, tp)
	}
	sort.Slice(keys, func(i, j int) bool { return kpart.Compare(keys[i], keys[j]) < 0 })
	for _, tp := range keys {
		p := set.Parts[tp]
		e := newEvent(KindDeliver)
		e.Topic, e.Partition, e.Ranges = tp.Topic, tp.Partition, p.Delivered
		e.Ref = Ref{File: name}
		st.Events++
		a.add(e)
		if a.halt != nil {
			break
		}
	}
	a.endFile()
	a.files = append(a.files, *st)
	if a.halt != nil {
		a.partial = true
		return a.halt
	}
	return nil
}
