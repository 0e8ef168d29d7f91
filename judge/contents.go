package judge

import "fmt"

// Kind is what one offset of a partition holds.
type Kind uint8

// The kinds of offsets.
const (
	// Record: a record a read_committed consumer receives (non-transactional, or
	// transactional and committed).
	Record Kind = iota
	// Aborted: a record of an aborted transaction; read_committed consumers never see it.
	Aborted
	// CommitMarker and AbortMarker: transaction control records; no consumer sees them,
	// yet each takes an offset (the reason a caught-up transactional consumer's
	// high watermark is one past its position).
	CommitMarker
	AbortMarker
	// Absent: no record holds this offset any more (compacted away, or the batch gap).
	Absent
	// Control: a control record a client's log names without saying which (a fetch
	// line that counts control records).
	Control
	// Unacknowledged: no record the producer wrote was acknowledged at this offset (the
	// producer's delivery reports are the evidence: a transaction marker sits there).
	Unacknowledged
	// Skipped: the consumer's fetches went past this offset without returning a record
	// (its next fetch started after it, and no seek moved it there): whatever the offset
	// holds, a marker, an aborted or a compacted record, it has nothing to deliver.
	Skipped
)

func (k Kind) String() string {
	switch k {
	case Record:
		return "record"
	case Aborted:
		return "aborted-transaction record"
	case CommitMarker:
		return "control marker (commit)"
	case AbortMarker:
		return "control marker (abort)"
	case Absent:
		return "absent (compacted or deleted)"
	case Control:
		return "control record"
	case Unacknowledged:
		return "no acknowledged record (a transaction marker)"
	case Skipped:
		return "skipped by the consumer's fetches (no deliverable record)"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Deliverable reports whether a consumer is meant to receive a record at this offset.
func (k Kind) Deliverable() bool { return k == Record }

// Span is a run of offsets [First, Last] of one kind.
type Span struct {
	First, Last int64
	Kind        Kind
}

// Contents is what the evidence says the partition's offsets hold: Spans, sorted and
// disjoint, are known; an offset no span covers is unknown (never guessed from offset
// arithmetic: markers, aborted transactions and compaction all take offsets).
type Contents struct {
	Spans []Span
	// Source names the evidence: "a read of the partition", "the producer's
	// acknowledgements", "the log's fetch lines".
	Source string
	// Truncated: the read stopped at TruncatedAt (a bound such as --max-scan) before
	// the end of what mattered; the offsets past it are unknown for that reason.
	Truncated   bool
	TruncatedAt int64
	// Why names the flag or setting that bounded the read, for the reason.
	Why string
}

// RecordSpans turns the sorted offsets that hold records into spans over [from, to):
// an offset in between that holds none is Unacknowledged.
func RecordSpans(records []int64, from, to int64) []Span {
	var out []Span
	push := func(first, last int64, k Kind) {
		if last < first {
			return
		}
		if n := len(out); n > 0 && out[n-1].Kind == k && out[n-1].Last+1 == first {
			out[n-1].Last = last
			return
		}
		out = append(out, Span{first, last, k})
	}
	at := from
	for _, o := range records {
		if o < at || o >= to {
			continue
		}
		push(at, o-1, Unacknowledged)
		push(o, o, Record)
		at = o + 1
	}
	push(at, to-1, Unacknowledged)
	return out
}
