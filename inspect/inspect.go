package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/judge"
)

// Errors the command layer maps to messages and exit codes.
var (
	// ErrGroupNotFound: the coordinator knows no such group and it has no offsets.
	ErrGroupNotFound = errors.New("group not found")
	// ErrNoOffsets: the group exists but has committed no offsets (and no --topic was given).
	ErrNoOffsets = errors.New("group has no committed offsets")
	// ErrUnknownTopic: a --topic that does not exist.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrEvidenceTopic: evidence lines without a topic, and no single topic to give them.
	ErrEvidenceTopic = errors.New("evidence names no topic")
)

// The group protocols, as the output names them: the classic JoinGroup/SyncGroup
// protocol, and KIP-848's consumer protocol (group.protocol=consumer, Kafka 4).
const (
	ProtocolClassic  = "classic"
	ProtocolConsumer = "consumer"
)

// StateUnknown is the state of a group neither DescribeGroups nor ConsumerGroupDescribe
// knows: the broker has no such group of either kind.
const StateUnknown = "unknown"

// Member is one member of the group.
type Member struct {
	ID         string
	InstanceID string
	ClientID   string
	Host       string
	Partitions int
	// Assigned are the partitions the member owns now (classic: its SyncGroup
	// assignment; consumer protocol: the assignment it has reconciled).
	Assigned Assignment
	// Target is the consumer protocol's target assignment for the member, only when it
	// differs from Assigned (the member is still reconciling).
	Target Assignment
	// MemberEpoch is the member's epoch (consumer protocol only).
	MemberEpoch *int32
}

// Group is the group's description.
type Group struct {
	ID string
	// GroupProtocol is ProtocolClassic or ProtocolConsumer; empty when the group is
	// StateUnknown.
	GroupProtocol string
	// State is as the broker reports it, or StateUnknown.
	State string
	// ProtocolType and Protocol: classic, the group's protocol type and the assignor its
	// members chose ("consumer", "range"); consumer protocol, "consumer" and the
	// broker's assignor ("uniform", "range").
	ProtocolType string
	Protocol     string
	// Epoch and AssignmentEpoch are the consumer protocol's group epoch and the epoch of
	// its target assignment.
	Epoch           *int32
	AssignmentEpoch *int32
	Members         []Member
	Err             string
	// coordinatorMoving: Err is (or includes) a coordinator that is not available yet
	coordinatorMoving bool
}

// owners maps each partition a member owns to the member.
func (g Group) owners() map[string]map[int32]string {
	out := map[string]map[int32]string{}
	for _, m := range g.Members {
		for _, ta := range m.Assigned {
			if out[ta.Topic] == nil {
				out[ta.Topic] = map[int32]string{}
			}
			for _, p := range ta.Partitions {
				out[ta.Topic][p] = m.ID
			}
		}
	}
	return out
}

// TopicAssignment is a member's partitions of one topic.
type TopicAssignment struct {
	Topic      string
	Partitions []int32
}

// Assignment is a member's partitions, by topic, sorted.
type Assignment []TopicAssignment

func (a Assignment) add(topic string, ps ...int32) Assignment {
	i := sort.Search(len(a), func(i int) bool { return a[i].Topic >= topic })
	if i == len(a) || a[i].Topic != topic {
		a = append(a, TopicAssignment{})
		copy(a[i+1:], a[i:])
		a[i] = TopicAssignment{Topic: topic, Partitions: []int32{}}
	}
	a[i].Partitions = append(a[i].Partitions, ps...)
	slices.Sort(a[i].Partitions)
	a[i].Partitions = slices.Compact(a[i].Partitions)
	return a
}

// Count is the number of partitions.
func (a Assignment) Count() int {
	n := 0
	for _, t := range a {
		n += len(t.Partitions)
	}
	return n
}

// Equal reports whether a and b hold the same partitions.
func (a Assignment) Equal(b Assignment) bool {
	return slices.EqualFunc(a, b, func(x, y TopicAssignment) bool {
		return x.Topic == y.Topic && slices.Equal(x.Partitions, y.Partitions)
	})
}

// String prints "topic/0,1 other/3", or "-" for no partitions.
func (a Assignment) String() string {
	var parts []string
	for _, t := range a {
		if len(t.Partitions) == 0 {
			continue
		}
		ps := make([]string, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t.Topic+"/"+strings.Join(ps, ","))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// Snapshot is the offsets view of a group: its description and, per partition, the
// committed offset and the partition's offsets.
type Snapshot struct {
	Group      Group
	Partitions []Offsets
	// DeletedTopics have committed offsets but no longer exist.
	DeletedTopics []string
	Requests      int // admin requests issued
}

// Snapshots are the snapshots of many groups taken at once (Kafka.Snapshots).
type Snapshots struct {
	Groups map[string]*Snapshot
	// Errs holds, per group, why it has no snapshot (unknown, no committed offsets, an
	// error the broker gave for that group alone).
	Errs     map[string]error
	Requests int // admin requests issued for all of them
}

// Cluster is what inspect needs from Kafka. Implementations bound every broker
// operation with their own timeout.
type Cluster interface {
	// Snapshot describes group and lists, for each partition the group has committed
	// offsets for (and every partition of topics), its offsets.
	Snapshot(ctx context.Context, group string, topics []string) (*Snapshot, error)
	// Scan classifies the offsets [from, to) of a partition.
	Scan(ctx context.Context, topic string, partition int32, from, to int64) (*Scan, error)
}

// Options configures Run.
type Options struct {
	Group    string
	Topics   []string
	Evidence *evidence.Set // nil: offsets view only
	MaxScan  int64         // offsets per partition; <= 0: unbounded
	// Parallel bounds concurrent partition scans (default 8).
	Parallel int
}

// PartitionReport is one partition of a Report.
type PartitionReport struct {
	Offsets
	Judgement *Judgement `json:"judgement,omitempty"`
}

// Report is the result of one inspection.
type Report struct {
	At             time.Time
	Group          Group
	Partitions     []PartitionReport
	DeletedTopics  []string
	Evidence       *evidence.Set
	Requests       int
	ScanDuration   time.Duration
	ScannedOffsets int64
	// StrayEvidence: evidence for partitions the group has no committed offset for.
	StrayEvidence []Note
	// Interrupted: the context ended during the scans; the partitions not fully read
	// are judged as far as they were (ERROR), and the report is partial.
	Interrupted bool
	// NoEvidence says why the evidence given cannot support a verdict
	// (evidence.Set.Insufficient); every partition is then NO EVIDENCE and none is
	// judged.
	NoEvidence string
}

// SettleHint says what would let a NO EVIDENCE inspection judge.
const SettleHint = "to judge, " + evidence.Hint

// Verdict is the inspection's verdict: the worst of its partitions' (verdict.Worse),
// NO EVIDENCE when evidence was given but judged nothing, and OK without evidence (the
// offsets view judges nothing and claims nothing).
//
// Without delivery evidence nothing was judged and there is no verdict: it returns "",
// never OK (the offsets view says what the offsets are, not that nothing was lost).
func (r *Report) Verdict() verdict.Verdict {
	if r.Evidence == nil {
		return ""
	}
	var js []judge.Judgement
	for _, p := range r.Partitions {
		if p.Judgement != nil {
			js = append(js, p.Judgement.Judgement)
		}
	}
	return judge.Overall(js)
}

// Run inspects a group. When ctx ends during the scans it returns the partial report
// (Interrupted set) together with ctx.Err(), so the caller can still show it.
func Run(ctx context.Context, cl Cluster, o Options) (*Report, error) {
	snap, err := cl.Snapshot(ctx, o.Group, o.Topics)
	if err != nil {
		return nil, err
	}
	r := &Report{At: time.Now(), Group: snap.Group, DeletedTopics: snap.DeletedTopics, Evidence: o.Evidence, Requests: snap.Requests}
	r.Partitions = make([]PartitionReport, len(snap.Partitions))
	for i, p := range snap.Partitions {
		r.Partitions[i].Offsets = p
	}
	if o.Evidence == nil {
		return r, nil
	}
	if why := o.Evidence.Insufficient(); why != "" {
		// No verdict without evidence: a file the readers did not understand would
		// otherwise judge every record undelivered (LOST), or none (a false OK).
		r.NoEvidence = why
		for i := range r.Partitions {
			r.Partitions[i].Judgement = &Judgement{Judgement: judge.NotJudged(verdict.NoEvidence, why)}
		}
		return r, nil
	}
	if err := resolveEvidenceTopic(o.Evidence, snap); err != nil {
		return nil, err
	}
	source := o.Evidence.Describe()
	type job struct {
		i        int
		from, to int64
		trunc    bool
	}
	var jobs []job
	for i := range r.Partitions {
		p := &r.Partitions[i]
		if !o.Evidence.Covers(p.Topic) {
			p.Judgement = &Judgement{Judgement: judge.NotJudged(verdict.NoEvidence, "the evidence does not name this topic")}
			continue
		}
		ev := o.Evidence.Parts[kpart.TopicPartition{Topic: p.Topic, Partition: p.Partition}]
		if p.Err != "" {
			j := JudgeFrom(p.Offsets, ev, nil, source)
			p.Judgement = &j
			continue
		}
		from, to, trunc, need := ScanWindow(p.Offsets, ev, o.MaxScan)
		if !need {
			j := JudgeFrom(p.Offsets, ev, nil, source)
			p.Judgement = &j
			continue
		}
		jobs = append(jobs, job{i, from, to, trunc})
	}
	known := map[kpart.TopicPartition]bool{}
	for _, p := range r.Partitions {
		if p.Committed >= 0 {
			known[kpart.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = true
		}
	}
	for tp, ev := range o.Evidence.Parts {
		if !known[tp] && len(ev.Delivered) > 0 {
			r.StrayEvidence = append(r.StrayEvidence, Note{First: ev.Delivered[0].First, Last: ev.Delivered[len(ev.Delivered)-1].Last,
				What: fmt.Sprintf("%s: %d delivered offsets, but the group has no committed offset for this partition", tp, ev.Count)})
		}
	}
	sort.Slice(r.StrayEvidence, func(i, j int) bool { return r.StrayEvidence[i].What < r.StrayEvidence[j].What })
	par := o.Parallel
	if par <= 0 {
		par = 8
	}
	start := time.Now()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		sem = make(chan struct{}, par)
	)
	for _, jb := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			p := &r.Partitions[jb.i]
			ev := o.Evidence.Parts[kpart.TopicPartition{Topic: p.Topic, Partition: p.Partition}]
			sc, err := cl.Scan(ctx, p.Topic, p.Partition, jb.from, jb.to)
			var j Judgement
			if err != nil {
				// The partition is judged as far as it was read, and says why it stopped.
				off := p.Offsets
				off.Err = fmt.Sprintf("scan of offsets %d-%d failed: %v", jb.from, jb.to-1, err)
				j = JudgeFrom(off, ev, sc, source)
			} else {
				sc.Truncated = jb.trunc
				j = JudgeFrom(p.Offsets, ev, sc, source)
			}
			mu.Lock()
			if sc != nil {
				r.ScannedOffsets += sc.To - sc.From
				r.Requests += sc.Requests
			}
			mu.Unlock()
			p.Judgement = &j
		}()
	}
	wg.Wait()
	r.ScanDuration = time.Since(start)
	r.Interrupted = ctx.Err() != nil
	return r, ctx.Err()
}

// resolveEvidenceTopic gives topicless evidence lines the only topic in scope.
func resolveEvidenceTopic(ev *evidence.Set, snap *Snapshot) error {
	hasBlank := false
	for tp := range ev.Parts {
		if tp.Topic == "" {
			hasBlank = true
			break
		}
	}
	if !hasBlank {
		return nil
	}
	topics := map[string]bool{}
	for _, p := range snap.Partitions {
		topics[p.Topic] = true
	}
	if len(topics) != 1 {
		names := make([]string, 0, len(topics))
		for t := range topics {
			names = append(names, t)
		}
		sort.Strings(names)
		return fmt.Errorf("%w: some evidence lines name no topic and the group covers %d topics %v; pass exactly one --topic", ErrEvidenceTopic, len(names), names)
	}
	for t := range topics {
		ev.ResolveTopic(t)
	}
	return nil
}

// Summary totals a report.
type Summary struct {
	Partitions      int   `json:"partitions"`
	Judged          int   `json:"judged"`
	LostPartitions  int   `json:"lost_partitions"`
	Lost            int64 `json:"lost"`
	Unrecoverable   int64 `json:"unrecoverable"` // offsets never delivered, deleted below the log start (not in lost)
	Stranded        int64 `json:"stranded"`
	Delivered       int64 `json:"delivered"`
	Duplicates      int64 `json:"duplicates"`
	Incomplete      int   `json:"incomplete"` // partitions not fully judged (errors, truncated scans)
	Errors          int   `json:"errors"`
	InvalidEvidence int   `json:"invalid_evidence"`
	Lag             int64 `json:"lag"`
}

// Summarize totals r.
func (r *Report) Summarize() Summary {
	s := Summary{Partitions: len(r.Partitions), InvalidEvidence: len(r.StrayEvidence)}
	for _, p := range r.Partitions {
		if l := p.Lag(); l > 0 {
			s.Lag += l
		}
		j := p.Judgement
		// a partition whose offsets could not be read, or whose scan failed (the
		// judgement's ERROR, its reason the scan's error): both are errors
		if p.Err != "" || (j != nil && j.Verdict == verdict.Error) {
			s.Errors++
		}
		if j == nil {
			continue
		}
		if j.Verdict != verdict.NoEvidence {
			s.Judged++
		}
		s.Lost += j.LostCount
		s.Unrecoverable += j.UnrecoverableCount
		s.Stranded += j.StrandedCount
		s.Delivered += j.Delivered
		s.Duplicates += j.Duplicates
		s.InvalidEvidence += len(j.InvalidEvidence)
		if j.LostCount > 0 || j.UnrecoverableCount > 0 {
			s.LostPartitions++
		}
		if j.Verdict == verdict.Incomplete || j.Verdict == verdict.Error {
			s.Incomplete++
		}
	}
	return s
}

// SnapshotEach is Snapshots for a Cluster that reads one group at a time (test
// clusters): a group the cluster does not know, or that has no offsets, is an error of
// its own; any other error fails the call, as a cluster that does not answer does.
func SnapshotEach(ctx context.Context, cl Cluster, groups []string) (*Snapshots, error) {
	out := &Snapshots{Groups: map[string]*Snapshot{}, Errs: map[string]error{}}
	for _, g := range groups {
		s, err := cl.Snapshot(ctx, g, nil)
		switch {
		case errors.Is(err, ErrGroupNotFound) || errors.Is(err, ErrNoOffsets):
			out.Errs[g] = err
		case err != nil:
			return nil, fmt.Errorf("group %s: %w", g, err)
		default:
			out.Groups[g] = s
			out.Requests += s.Requests
		}
	}
	return out, nil
}
