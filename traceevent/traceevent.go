// Package traceevent defines kstranded's trace format, "kstranded.trace/v1": one JSON
// object per line, written by `kstranded repro --trace FILE` and read by
// `kstranded trace parse` and `kstranded inspect --delivered`.
//
// The format is documented in docs/trace-format.md and is stable: fields are only ever
// added. Every line carries a wall-clock timestamp ("ts"), the run's own elapsed time
// ("at_ms": virtual time under test, real time live), and an event name ("ev"). The first
// line is a "run" event naming the schema, topic, group, policy and settings.
//
// This package only defines and (de)serialises events; it does not decide anything.
package traceevent

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Schema names this format version.
const Schema = "kstranded.trace/v1"

// Event names.
const (
	Run        = "run"        // first line: schema, topic, group, policy, commit mode, settings
	Produce    = "produce"    // the workload was written: first/last offsets, high watermark
	Assign     = "assign"     // partitions assigned to the consumer
	Revoke     = "revoke"     // partitions revoked (or lost: Reason "lost")
	Spawn      = "spawn"      // a generation of workers was started (count in N)
	Fetch      = "fetch"      // the client consumed from librdkafka into the cache: Requested, Returned, Ranges
	Serve      = "serve"      // a batch was handed to the handler: Partition, Offsets, Worker, Remaining
	BatchEnd   = "batch-end"  // the handler returned for a batch: Partition, Offsets (those resolved)
	Store      = "store"      // an offset was stored for commit (offsets-store): Partition, Offset
	Commit     = "commit"     // a commit completed: Offsets per partition, Error if it failed
	Expiry     = "expiry"     // the cache expired: SinceFetchMs, TimeoutMs
	Pending    = "pending-op" // an operation was queued to run once all batches settle: Op
	Clear      = "clear"      // the cache was cleared: Discarded, Rewinds, Skipped, LastConsumedKeys
	Seek       = "seek"       // the fetch position was moved: Partition, Offset, Reason
	Returned   = "return"     // records taken from the cache were put back (pending operation)
	Spin       = "spin"       // counters of empty cache reads / empty fetches since the last spin event
	PhaseEnd   = "phase-end"  // a phase of the scenario ended: Phase, Partitions (delivered, committed)
	Verdict    = "verdict"    // final verdict per partition
	Interrupt  = "interrupt"  // the run was interrupted
	LedgerMark = "frontier"   // the ledger's safe commit frontier for a partition changed
	Member     = "member"     // a group member joined or left (Reason), in runs with several members
	Pause      = "pause"      // pause() was called (Reason "payload pause()": the handler, its partition; "consumer pause()": the application, outside the handler, one event per partition): Partition, Reason; Discarded and Offset (the repair seek) when #pauseInternal ran
	Resume     = "resume"     // the partition was resumed (the function pause() returned): Partition
	Heartbeat  = "heartbeat"  // the eachBatch handler awaited its payload's heartbeat(), a no-op in the JS client: Partition, Offset (the round's last record), Reason
	Wake       = "wake"       // workers waiting for the consumer queue (#nonEmpty) were woken: Reason, N, SinceFetchMs, Requested, Returned
)

// Events lists every event name above, in that order: what a reader of the format must
// know (trace parse names each in its timeline; trace's TestEveryEventOfTheFormatHasANameInTheTimeline
// reads this file's constants and checks the list against them).
var Events = []string{Run, Produce, Assign, Revoke, Spawn, Fetch, Serve, BatchEnd, Store, Commit, Expiry,
	Pending, Clear, Seek, Returned, Spin, PhaseEnd, Verdict, Interrupt, LedgerMark, Member, Pause, Resume,
	Heartbeat, Wake}

// Range is a contiguous run of offsets of one partition (inclusive), with a count of the
// records actually present in it (sparse ranges have Count < Last-First+1).
type Range struct {
	Partition int32 `json:"partition"`
	kpart.RecordRange
}

// PartitionRange returns the Range [first, last] of partition holding count records.
func PartitionRange(partition int32, first, last, count int64) Range {
	return Range{partition, kpart.Counted(first, last, count)}
}

// Rewind is a rewind done or skipped for one partition during a cache clear.
type Rewind struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset,omitempty"` // target, when done
	Reason    string `json:"reason"`           // e.g. "last-consumed+1", "no last-consumed entry", "pending head"
}

// PartitionOffset is one partition's offset (commit results, phase summaries).
type PartitionOffset struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error,omitempty"`
}

// PartitionState summarises one partition at a phase end or in the verdict.
type PartitionState struct {
	Partition  int32   `json:"partition"`
	Delivered  int     `json:"delivered"`
	Duplicates int     `json:"duplicates"`
	Committed  int64   `json:"committed"`
	High       int64   `json:"high_watermark"`
	Frontier   *int64  `json:"frontier,omitempty"`
	Lost       []Range `json:"lost,omitempty"`
	Stranded   []Range `json:"stranded,omitempty"`
	Verdict    string  `json:"verdict,omitempty"`
}

// Event is one trace line. Only the fields that matter for an event are set.
type Event struct {
	Time  time.Time `json:"ts"`
	AtMs  float64   `json:"at_ms"`
	Ev    string    `json:"ev"`
	Phase int       `json:"phase,omitempty"`

	// run
	Schema   string            `json:"schema,omitempty"`
	Topic    string            `json:"topic,omitempty"`
	Group    string            `json:"group,omitempty"`
	Policy   string            `json:"policy,omitempty"`
	Commit   string            `json:"commit,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`

	// Member names the group member an event is about, in runs with several members
	// (m1, m2, ...); empty with one.
	Member    string  `json:"member,omitempty"`
	Partition *int32  `json:"partition,omitempty"`
	Worker    int     `json:"worker,omitempty"`
	Offset    *int64  `json:"offset,omitempty"`
	Offsets   []int64 `json:"offsets,omitempty"` // explicit offsets (serve, batch-end): sparse-safe
	Requested int     `json:"requested,omitempty"`
	Returned  int     `json:"returned,omitempty"`
	Remaining *int    `json:"remaining,omitempty"` // records left in the partition's cache after a serve
	Ranges    []Range `json:"ranges,omitempty"`    // fetch: what was returned, per partition
	N         int     `json:"n,omitempty"`

	// produce
	First *int64 `json:"first,omitempty"`
	Last  *int64 `json:"last,omitempty"`
	High  *int64 `json:"high_watermark,omitempty"`

	// expiry
	SinceFetchMs *float64 `json:"since_fetch_ms,omitempty"`
	SinceServeMs *float64 `json:"since_serve_ms,omitempty"`
	TimeoutMs    *float64 `json:"timeout_ms,omitempty"`

	// pending-op, seek, revoke
	Op     string `json:"op,omitempty"`
	Reason string `json:"reason,omitempty"`

	// clear
	Discarded        []Range  `json:"discarded,omitempty"`
	Rewinds          []Rewind `json:"rewinds,omitempty"`
	Skipped          []Rewind `json:"skipped,omitempty"`
	LastConsumedKeys []string `json:"last_consumed_keys"`

	// commit
	Committed []PartitionOffset `json:"committed,omitempty"`
	Error     string            `json:"error,omitempty"`

	// spin
	EmptyReads   int      `json:"empty_reads,omitempty"`
	EmptyFetches int      `json:"empty_fetches,omitempty"`
	WindowMs     *float64 `json:"window_ms,omitempty"` // the time the spin counters cover

	// phase-end, verdict; assign and revoke list their partitions here too
	Partitions []PartitionState `json:"partitions,omitempty"`
}

// MarshalJSON keeps last_consumed_keys only on clear events (where an empty list is
// evidence: the seed's `lastConsumedKeys: []`).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	if e.Ev != Clear {
		type noKeys struct {
			plain
			LastConsumedKeys []string `json:"last_consumed_keys,omitempty"`
		}
		return json.Marshal(noKeys{plain: plain(e)})
	}
	if e.LastConsumedKeys == nil {
		e.LastConsumedKeys = []string{}
	}
	return json.Marshal(plain(e))
}

// P returns a pointer to v (for the optional fields).
func P[T any](v T) *T { return &v }

// Clone returns a copy of e that shares nothing with it: what e's line says when it is
// written, whatever the writer does later with the slices and variables it pointed to.
func (e Event) Clone() Event {
	c := e
	c.Settings = maps.Clone(e.Settings)
	c.Partition, c.Offset, c.Remaining = clonePtr(e.Partition), clonePtr(e.Offset), clonePtr(e.Remaining)
	c.First, c.Last, c.High = clonePtr(e.First), clonePtr(e.Last), clonePtr(e.High)
	c.SinceFetchMs, c.SinceServeMs, c.TimeoutMs, c.WindowMs = clonePtr(e.SinceFetchMs), clonePtr(e.SinceServeMs), clonePtr(e.TimeoutMs), clonePtr(e.WindowMs)
	c.Offsets, c.Ranges, c.Discarded = slices.Clone(e.Offsets), slices.Clone(e.Ranges), slices.Clone(e.Discarded)
	c.Rewinds, c.Skipped, c.LastConsumedKeys = slices.Clone(e.Rewinds), slices.Clone(e.Skipped), slices.Clone(e.LastConsumedKeys)
	c.Committed = slices.Clone(e.Committed)
	if e.Partitions != nil {
		c.Partitions = make([]PartitionState, len(e.Partitions))
		for i, p := range e.Partitions {
			p.Frontier, p.Lost, p.Stranded = clonePtr(p.Frontier), slices.Clone(p.Lost), slices.Clone(p.Stranded)
			c.Partitions[i] = p
		}
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return P(*p)
}

// Writer writes events as JSON lines. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	bw   *bufio.Writer
	enc  *json.Encoder
	err  error
	also func(Event) // NewTee's
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriterSize(w, 64*1024)
	return &Writer{bw: bw, enc: json.NewEncoder(bw)}
}

// NewTee returns a Writer that writes to w as NewWriter's does (no lines when w is nil)
// and hands also a copy (Clone) of every event, in the order written: repro --svg gives
// a run's events to the trace analyzer as they are, not as JSON to parse back.
func NewTee(w io.Writer, also func(Event)) *Writer {
	t := &Writer{also: also}
	if w != nil {
		t.bw = bufio.NewWriterSize(w, 64*1024)
		t.enc = json.NewEncoder(t.bw)
	}
	return t
}

// Write appends one event; the first error is kept and returned by Flush.
func (w *Writer) Write(e Event) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.also != nil {
		w.also(e.Clone())
	}
	if w.enc != nil && w.err == nil {
		w.err = w.enc.Encode(e)
	}
}

// Flush flushes buffered lines.
func (w *Writer) Flush() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bw == nil {
		return w.err
	}
	if err := w.bw.Flush(); w.err == nil {
		w.err = err
	}
	return w.err
}

// InPartition names the partition of each range of rs.
func InPartition(partition int32, rs []kpart.RecordRange) []Range {
	if rs == nil {
		return nil
	}
	out := make([]Range, len(rs))
	for i, r := range rs {
		out[i] = Range{partition, r}
	}
	return out
}

// Decode reads one line of the format: the one decoder of it, used by trace parse and by
// the evidence reader. It fails on a line that is not an event object (the encoding/json
// error, for the reader to word) and on a run line naming another schema (*SchemaError,
// with the event read, so a reader may check its other fields first). What else an event
// must carry is the reader's to check: trace parse and inspect --delivered need different
// fields.
func Decode(line []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return Event{}, err
	}
	if e.Ev == Run && e.Schema != "" && e.Schema != Schema {
		return e, &SchemaError{Schema: e.Schema}
	}
	return e, nil
}

// SchemaError is a run line of a schema other than this package's.
type SchemaError struct{ Schema string }

func (e *SchemaError) Error() string {
	return "schema " + strconv.Quote(e.Schema) + ", want " + strconv.Quote(Schema)
}
