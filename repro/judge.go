package repro

import (
	"slices"
	"sort"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
	"github.com/kstranded/kstranded/traceevent"
)

// PartitionVerdict is the judgement of one partition.
type PartitionVerdict struct {
	Records    int                // offsets that hold a deliverable record (from the producer's acks)
	Delivered  int                // distinct records delivered
	Duplicates int                // deliveries beyond the first
	Lost       []traceevent.Range // records below committed, never delivered
	Stranded   []traceevent.Range // records at or above committed, never delivered
	Verdict    verdict.Verdict
	// Judgement is the judge's full answer (package judge), the same shape as every
	// command's.
	Judgement judge.Judgement
}

// LostCount is the number of lost records.
func (v PartitionVerdict) LostCount() int { return countRanges(v.Lost) }

// StrandedCount is the number of stranded records.
func (v PartitionVerdict) StrandedCount() int { return countRanges(v.Stranded) }

// Judge compares what a partition holds with what was delivered and committed, through
// the one judge (package judge). records are the offsets that hold deliverable records:
// the evidence comes from the producer's delivery reports, never from offset arithmetic,
// so a transaction marker (which takes an offset but is not a record) is never counted
// as lost. high is the partition's high watermark (what the producer's acknowledgements
// cover); a committed offset of -1 is none.
func Judge(partition int32, records []int64, delivered map[int64]int, committed, high int64) PartitionVerdict {
	var c kpart.Counts
	for o, n := range delivered {
		for ; n > 0; n-- {
			c.Inc(o)
		}
	}
	return judgeCounts(partition, records, &c, committed, high)
}

// judgeCounts is Judge on the deliveries as counts (nil: none), as the engine keeps
// them: no map of every offset (issue 25). records are read, never changed: a sorted
// list is judged as it is, shared with the caller, not copied.
func judgeCounts(partition int32, records []int64, delivered *kpart.Counts, committed, high int64) PartitionVerdict {
	rs := records
	if !slices.IsSorted(rs) {
		rs = slices.Clone(records)
		slices.Sort(rs)
	}
	if n := len(rs); n > 0 && high <= rs[n-1] {
		high = rs[n-1] + 1
	}
	in := judge.Input{Partition: partition, From: judge.Unknown, LogStart: 0, LastStable: judge.Unknown, HighWatermark: judge.Unknown,
		Commit:   judge.Commit{Known: true, Offset: committed, Peak: judge.Unknown, Source: "the group's committed offsets"},
		Contents: judge.Contents{Spans: judge.RecordSpans(rs, 0, high), Source: "the producer's acknowledgements"}}
	dels := judgedDeliveries(delivered, "the consumer's deliveries")
	in.Deliveries = dels
	dup := dels.Duplicates
	j := judge.Judge(in)
	v := PartitionVerdict{Records: len(rs), Duplicates: int(dup), Verdict: j.Verdict, Judgement: j}
	// Delivered offsets that hold records: each distinct record (rs is sorted and may
	// repeat an offset) counted once if it was delivered.
	for i, o := range rs {
		if (i == 0 || rs[i-1] != o) && delivered.Get(o) > 0 {
			v.Delivered++
		}
	}
	if len(j.Lost) > 0 {
		v.Lost = traceevent.InPartition(partition, j.Lost)
	}
	if len(j.Stranded) > 0 {
		v.Stranded = traceevent.InPartition(partition, j.Stranded)
	}
	return v
}

// judgedDeliveries are a partition's deliveries (offset: times it reached a handler;
// nil: none) as the judge reads them, from source: the offsets delivered as ranges,
// and the deliveries beyond the first of each.
func judgedDeliveries(delivered *kpart.Counts, source string) *judge.Deliveries {
	d := &judge.Deliveries{Source: source}
	d.Ranges, d.Duplicates = delivered.Ranges()
	return d
}

func countRanges(rs []traceevent.Range) int {
	n := 0
	for _, r := range rs {
		n += int(r.Count)
	}
	return n
}

// Phase is the state at the end of a phase.
type Phase struct {
	N          int
	Elapsed    time.Duration
	Partitions []PhasePartition
}

// PhasePartition is one partition at a phase end.
type PhasePartition struct {
	Partition int32
	Delivered int
	Committed int64
	Frontier  int64 // the ledger's safe commit (-1: unknown)
	High      int64
	Verdict   verdict.Verdict // judged on what was produced and delivered by then
	Lost      int
	Stranded  int
}

// PartitionResult is the verdict of one partition.
type PartitionResult struct {
	Partition        int32
	Produced         int
	High             int64
	CommittedByPhase []int64
	FrontierByPhase  []int64           // the ledger's safe commit at each phase end
	VerdictByPhase   []verdict.Verdict // the verdict at each phase end
	PartitionVerdict
}

// FetchOrder is a simulated run's outcome with partition First's records served first.
type FetchOrder struct {
	First int32
	// Order: the partitions holding data in the order the fetch list served them
	// (First first).
	Order []int32
	// Phase2Order: the partitions in the order phase 2's records reached the consumer's
	// queue (Options.Phase2Order; simkafka.Client.Append).
	Phase2Order []int32
	// EveryOrder: the partitions hold the same records, so every order of the fetch
	// list, and every order of phase 2's records, has this outcome with the partitions
	// renamed by their places: the partition served k-th in phase 1 and j-th in phase 2
	// has Order[k]'s phase-1 outcome (its phase-1 records delivered or not, and what
	// phase 1 committed) and Phase2Order[j]'s phase-2 outcome (its phase-2 record
	// delivered or stranded). In one run each partition has its own pair of places; the
	// pair is what decides its outcome (TestEveryFetchOrderOfAlikePartitionsIsTheFirstRenamed).
	EveryOrder bool
	Partitions []OrderPartition
}

// OrderPartition is one partition's outcome under a fetch order.
type OrderPartition struct {
	Partition int32
	Verdict   verdict.Verdict
	Lost      []traceevent.Range
	Stranded  []traceevent.Range
	Committed int64 // at the end of the run (-1: none)
}

// fetchOrder is r's outcome as served with partition first first.
func fetchOrder(order []int32, r *Result) FetchOrder {
	fo := FetchOrder{First: order[0], Order: order}
	for _, p := range r.Partitions {
		c := int64(-1)
		if n := len(p.CommittedByPhase); n > 0 {
			c = p.CommittedByPhase[n-1]
		}
		fo.Partitions = append(fo.Partitions, OrderPartition{Partition: p.Partition, Verdict: p.Verdict, Lost: p.Lost, Stranded: p.Stranded, Committed: c})
	}
	return fo
}

// Result is a run's outcome.
type Result struct {
	RunID     string
	Topic     string
	Group     string
	Brokers   string
	Embedded  bool
	Simulated bool // Simulate: no broker, virtual time
	// Client names what consumed: "" for the model; the real client's package and
	// release for RunRealClient ("@confluentinc/kafka-javascript 1.10.1").
	Client      string
	Policy      eachbatch.Policy
	Handler     eachbatch.Handler
	Commit      CommitMode
	Settings    map[string]string
	Produced    ProduceResult
	Phases      []Phase
	Partitions  []PartitionResult
	Verdict     verdict.Verdict
	LossAt      time.Duration  // when records were dropped from the cache without a rewind (0: never)
	Restarts    int            // consumer restarts in phase 3 (--commit ledger)
	Members     []MemberResult // --members / --rebalance-at: each member (nil for one member that stays)
	Elapsed     time.Duration
	Interrupted bool
	// Complete is true when every phase ended as the scenario says (quiescent and
	// committed); false when an error or an interrupt cut the run short, Error saying
	// which. An incomplete run carries no verdict it did not reach (see incomplete).
	Complete bool
	Error    string
	Warnings []string
	// FetchOrders: Simulate's outcome with each partition holding data served first
	// (the first one is the result's own), when it explored them; nil otherwise.
	FetchOrders []FetchOrder
	// EveryPhase: an incomplete run that went through every phase (its group was
	// shared, ErrSharedGroup): what cut it short is not a phase that did not end.
	EveryPhase bool

	unreachable bool // the broker stopped answering: the run ended on it, or was interrupted while it was silent
}

// cleanup bounds each clean-up step (a close, a read-back, the topic's deletion) at the
// end of a run: timeout (--timeout), but a second once the broker stopped answering,
// so that the run ends within --timeout of its last answer.
func (r *Result) cleanup(timeout time.Duration) time.Duration {
	if r.unreachable {
		return min(timeout, closeUnreachable)
	}
	return timeout
}

// incomplete withdraws the verdicts a run cut short did not reach. LOST stays: records
// below an offset the group committed (read back from the broker at a phase end or at
// the interruption) that were never delivered are lost whatever would have followed,
// since nothing fetches below the committed offset again. STRANDED and OK are only
// judgements at the end of a phase that never ended: those partitions are INCOMPLETE,
// their counts saying what was not delivered so far.
func (r *Result) incomplete() {
	worst := verdict.OK
	for i := range r.Partitions {
		p := &r.Partitions[i]
		if p.Verdict != verdict.Lost {
			p.Verdict = verdict.Incomplete
			p.Judgement.Verdict = verdict.Incomplete
			p.Judgement.Reason = "the run stopped before the phase ended: no judgement of what it did not reach"
		}
		worst = verdict.Worse(worst, p.Verdict)
	}
	if worst == verdict.OK {
		worst = verdict.Incomplete // no partition at all: nothing was judged
	}
	r.Verdict = worst
}

// Lost is the number of records lost over all partitions.
func (r *Result) Lost() int {
	n := 0
	for _, p := range r.Partitions {
		n += p.LostCount()
	}
	return n
}

func (r *Result) judge(delivered map[kpart.TopicPartition]*kpart.Counts, records map[int32][]int64, highs map[int32]int64, current map[kpart.TopicPartition]int64) {
	parts := map[int32]bool{}
	for p := range records {
		parts[p] = true
	}
	byPart := map[int32]*kpart.Counts{}
	for tp, d := range delivered {
		parts[tp.Partition] = true
		byPart[tp.Partition] = d
	}
	ids := make([]int32, 0, len(parts))
	for p := range parts {
		ids = append(ids, p)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	// each partition's entries of the phases, in phase order (one pass over the phases,
	// not one a partition: 10,000 partitions made that the judge's quadratic cost)
	type phaseEntries struct {
		byPhase, frontiers []int64
		verdicts           []verdict.Verdict
	}
	entries := make(map[int32]*phaseEntries, len(ids))
	for _, ph := range r.Phases {
		for _, pp := range ph.Partitions {
			e := entries[pp.Partition]
			if e == nil {
				e = &phaseEntries{}
				entries[pp.Partition] = e
			}
			e.byPhase = append(e.byPhase, pp.Committed)
			e.frontiers = append(e.frontiers, pp.Frontier)
			e.verdicts = append(e.verdicts, pp.Verdict)
		}
	}
	r.Partitions = nil
	worst := verdict.OK
	for _, p := range ids {
		committed := int64(-1)
		var byPhase, frontiers []int64
		var verdicts []verdict.Verdict
		if e := entries[p]; e != nil {
			byPhase, frontiers, verdicts = e.byPhase, e.frontiers, e.verdicts
			committed = byPhase[len(byPhase)-1]
		}
		if v, ok := current[kpart.TopicPartition{Topic: r.Topic, Partition: p}]; ok && len(r.Phases) < 2 {
			committed = v
		}
		v := judgeCounts(p, records[p], byPart[p], committed, highs[p])
		r.Partitions = append(r.Partitions, PartitionResult{Partition: p, Produced: len(records[p]), High: highs[p],
			CommittedByPhase: byPhase, FrontierByPhase: frontiers, VerdictByPhase: verdicts, PartitionVerdict: v})
		switch {
		case v.Verdict == verdict.Lost:
			worst = verdict.Lost
		case v.Verdict == verdict.Stranded && worst == verdict.OK:
			worst = verdict.Stranded
		}
	}
	r.Verdict = worst
}

func (r *Result) partitionStates() []traceevent.PartitionState {
	out := make([]traceevent.PartitionState, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		st := traceevent.PartitionState{Partition: p.Partition, Delivered: p.Delivered, Duplicates: p.Duplicates,
			High: p.High, Lost: p.Lost, Stranded: p.Stranded, Verdict: string(p.Verdict), Committed: -1}
		if n := len(p.CommittedByPhase); n > 0 {
			st.Committed = p.CommittedByPhase[n-1]
		}
		out = append(out, st)
	}
	return out
}
