package inspect

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstranded/kstranded/internal/kafkaconf"
)

// Kafka implements Cluster with franz-go: kadm for the group's offsets and
// description, one raw ListOffsets request per kind (log start, last stable offset via
// read_committed isolation, high watermark) for all partitions at once, and raw Fetch
// requests for scans. franz-go is used rather than librdkafka because librdkafka hides
// control records and aborted records from its consumers; the raw fetch response keeps
// both, plus the aborted-transaction list, which is what exact classification needs.
type Kafka struct {
	cl      *kgo.Client
	adm     *kadm.Client
	timeout time.Duration
	// FetchMaxBytes bounds one scan fetch response (and one partition in it).
	FetchMaxBytes int32

	mu   sync.Mutex
	meta map[string]topicMeta
	// answered counts the responses read from any broker: evidence for errors that
	// guess at the cause of a closed connection (kafkaconf.ExplainClosed).
	answered atomic.Int64
}

// answerCounter is the kgo hook that counts responses read without error.
type answerCounter struct{ n *atomic.Int64 }

func (a answerCounter) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		a.n.Add(1)
	}
}

type topicMeta struct {
	id      [16]byte
	leaders map[int32]int32
}

// NewKafka connects with opts (from kafkaconf.Config.KgoOpts); timeout bounds every
// broker operation.
func NewKafka(opts []kgo.Opt, timeout time.Duration) (*Kafka, error) {
	k := &Kafka{timeout: timeout, FetchMaxBytes: 32 << 20, meta: map[string]topicMeta{}}
	opts = append(opts,
		kgo.DialTimeout(timeout),
		kgo.RetryTimeout(timeout),
		kgo.RequestRetries(3),
		kgo.WithHooks(answerCounter{&k.answered}),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	k.cl, k.adm = cl, kadm.NewClient(cl)
	return k, nil
}

// Close closes the client.
func (k *Kafka) Close() { k.cl.Close() }

// Client returns the franz-go client, so a caller that also writes to the cluster
// (rewind's offset commit) shares its connections, metadata and options instead of
// opening a second client. Close still belongs to Kafka.
func (k *Kafka) Client() *kgo.Client { return k.cl }

func (k *Kafka) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, k.timeout)
}

// timeoutErr names the operation that exceeded --timeout, or the connection a broker
// closed (with the answers it gave earlier, kafkaconf.ExplainClosed).
func (k *Kafka) timeoutErr(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %s (--timeout): %w", op, k.timeout, err)
	}
	return fmt.Errorf("%s: %w", op, kafkaconf.ExplainClosed(err, k.answered.Load()))
}

// Explain is timeoutErr for callers that share the client (rewind's commits).
func (k *Kafka) Explain(op string, err error) error { return k.timeoutErr(op, err) }

// Snapshot implements Cluster: the group's description and committed offsets (asked at
// once), then the partitions in scope and their log start, last stable offset and high
// watermark.
func (k *Kafka) Snapshot(ctx context.Context, group string, topics []string) (*Snapshot, error) {
	ss, err := k.snapshots(ctx, []string{group}, topics)
	if err != nil {
		return nil, err
	}
	if err := ss.Errs[group]; err != nil {
		return nil, err
	}
	snap := ss.Groups[group]
	snap.Requests = ss.Requests
	return snap, nil
}

// Snapshots is Snapshot for many groups in the requests of one: one OffsetFetch for all
// of them (kadm sends it per coordinator), one DescribeGroups and one
// ConsumerGroupDescribe, then one Metadata and one ListOffsets per kind for the union of
// their topics. What a group alone cannot answer (unknown, no offsets) is in Errs; only
// a cluster that does not answer fails the call.
func (k *Kafka) Snapshots(ctx context.Context, groups []string) (*Snapshots, error) {
	return k.snapshots(ctx, groups, nil)
}

func (k *Kafka) snapshots(ctx context.Context, ids []string, topics []string) (*Snapshots, error) {
	out := &Snapshots{Groups: map[string]*Snapshot{}, Errs: map[string]error{}}
	if len(ids) == 0 {
		return out, nil
	}
	var (
		committed map[string]map[string]map[int32]CommittedOffset
		groups    map[string]*Group
		errO      error
		errD      error
		wg        sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		committed, errO = k.committedOffsets(ctx, ids, out.Errs)
	}()
	go func() {
		defer wg.Done()
		var n int
		groups, n, errD = k.describeGroups(ctx, ids)
		out.Requests += n
	}()
	wg.Wait()
	out.Requests++
	if errO != nil {
		return nil, errO
	}
	if errD != nil {
		return nil, errD
	}
	names := map[string][]string{}
	union := map[string]bool{}
	for _, id := range ids {
		g := groups[id]
		if out.Errs[id] != nil {
			continue
		}
		if len(committed[id]) == 0 && g.State == StateUnknown && g.Err == "" {
			out.Errs[id] = fmt.Errorf("%w: %q has no members and no committed offsets on this cluster", ErrGroupNotFound, id)
			continue
		}
		ns, err := topicsInScope(*g, committed[id], topics)
		if err != nil {
			out.Errs[id] = err
			continue
		}
		names[id] = ns
		for _, t := range ns {
			union[t] = true
		}
	}
	if len(union) == 0 {
		return out, nil
	}
	all := make([]string, 0, len(union))
	for t := range union {
		all = append(all, t)
	}
	sort.Strings(all)
	metas, err := k.metadata(ctx, all)
	out.Requests++
	if err != nil {
		return nil, err
	}
	var live []string
	for _, t := range all {
		if _, ok := metas[t]; ok {
			live = append(live, t)
		}
	}
	ends, err := k.listOffsets(ctx, live, metas)
	out.Requests += len(offsetKinds)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		ns, ok := names[id]
		if !ok {
			continue
		}
		g := groups[id]
		snap := &Snapshot{Group: *g}
		for _, t := range ns {
			if _, ok := metas[t]; ok {
				continue
			}
			if len(topics) > 0 && len(committed[id][t]) == 0 {
				out.Errs[id] = fmt.Errorf("%w: topic %q does not exist (if it was deleted, the broker also dropped the group's offsets for it)", ErrUnknownTopic, t)
				break
			}
			snap.DeletedTopics = append(snap.DeletedTopics, t)
		}
		if out.Errs[id] != nil {
			continue
		}
		snap.Partitions = partitionOffsets(ns, topics, committed[id], g.owners(), metas, ends)
		out.Groups[id] = snap
	}
	return out, nil
}

// DescribeGroup describes group alone (protocol, state, members and what they own), as
// Snapshot does, for a caller that must know who is in the group before it joins
// (repro's shared-group check). A group the broker does not know is StateUnknown with no
// members; a broker error for the group is in Group.Err.
//
// A coordinator that is not available yet is transient: on a fresh cluster the first use
// of a group creates __consumer_offsets, and its coordinator answers
// COORDINATOR_NOT_AVAILABLE (or is loading, or moved) for a moment. The group is then
// described again until --timeout, and what the last answer said is returned.
func (k *Kafka) DescribeGroup(ctx context.Context, group string) (Group, error) {
	deadline := time.Now().Add(k.timeout)
	for {
		gs, _, err := k.describeGroups(ctx, []string{group})
		if err != nil {
			return Group{ID: group, Members: []Member{}}, err
		}
		g := *gs[group]
		if !g.coordinatorMoving || !time.Now().Before(deadline) {
			return g, nil
		}
		select {
		case <-ctx.Done():
			return g, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// coordinatorMoving reports the group coordinator errors Kafka documents as retriable
// while a coordinator is elected or loads its partition of __consumer_offsets.
func coordinatorMoving(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.NotCoordinator)
}

// committedOffsets reads the groups' committed offsets (CommittedOffsets, one
// OffsetFetch), keeping only partitions with a valid one, by topic and partition. A
// group the coordinator does not know has none; an error the broker gives for one group
// goes to errs, under the group; a request that was not answered fails the call.
func (k *Kafka) committedOffsets(ctx context.Context, ids []string, errs map[string]error) (map[string]map[string]map[int32]CommittedOffset, error) {
	fetched, err := k.CommittedOffsets(ctx, ids...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]map[int32]CommittedOffset{}
	for _, id := range ids {
		f := fetched[id]
		if err := f.Err; err != nil && !errors.Is(err, ErrGroupNotFound) {
			errs[id] = err
			continue
		}
		committed := map[string]map[int32]CommittedOffset{}
		for tp, o := range f.Offsets {
			if o.Offset < 0 {
				continue
			}
			if committed[tp.Topic] == nil {
				committed[tp.Topic] = map[int32]CommittedOffset{}
			}
			committed[tp.Topic][tp.Partition] = o
		}
		out[id] = committed
	}
	return out, nil
}

// describeGroups describes the groups ids (protocol, state, members and their
// partitions) and returns the requests it sent. A group is described through the API
// that knows it: ConsumerGroupDescribe for a KIP-848 consumer-protocol group,
// DescribeGroups for a classic one; each answers GROUP_ID_NOT_FOUND for the other kind
// (Kafka 4's GroupMetadataManager: "Group %s is not a consumer group" / "... not a
// classic group"), and DescribeGroups calls such a group Dead with no members, which is
// why both are asked, at once, each once for all the groups. A group neither knows is
// StateUnknown. An error the broker returns for a group is recorded in its Err; only a
// timeout or a cancelled context is returned.
func (k *Kafka) describeGroups(ctx context.Context, ids []string) (map[string]*Group, int, error) {
	var (
		classic      kadm.DescribedGroups
		consumer     map[string]*kmsg.ConsumerGroupDescribeResponseGroup
		errCl, errCo error
		wg           sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		c, cancel := k.bound(ctx)
		defer cancel()
		classic, errCl = k.adm.DescribeGroups(c, ids...)
	}()
	go func() {
		defer wg.Done()
		consumer, errCo = k.describeConsumerGroups(ctx, ids)
	}()
	wg.Wait()
	requests := 2
	for _, err := range []error{errCl, errCo} {
		if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
			return nil, requests, k.timeoutErr("describing the group", err)
		}
	}
	var names map[[16]byte]string
	if needsTopicNames(consumer) {
		var err error
		names, err = k.topicNames(ctx)
		requests++
		if err != nil {
			return nil, requests, err
		}
	}
	out := make(map[string]*Group, len(ids))
	for _, id := range ids {
		g := &Group{ID: id, Members: []Member{}}
		out[id] = g
		co := consumer[id]
		if co != nil && co.ErrorCode == 0 {
			consumerGroup(g, co, names)
			continue
		}
		cl, clKnown := classic[id]
		if clKnown && errCl == nil && cl.Err == nil && cl.State != "Dead" {
			classicGroup(g, cl)
			continue
		}
		// Neither API describes the group. It is unknown unless one of them failed:
		// then nothing says it has no members.
		g.State = StateUnknown
		var errs []string
		if errCl != nil {
			// FindCoordinator's COORDINATOR_NOT_AVAILABLE on a fresh cluster comes back
			// as the request's error (kadm.ShardErrors), not the group's
			errs = append(errs, "DescribeGroups: "+kafkaconf.ExplainClosed(errCl, k.answered.Load()).Error())
			g.coordinatorMoving = coordinatorMoving(errCl)
		} else if cl.Err != nil && !errors.Is(cl.Err, kerr.GroupIDNotFound) {
			errs = append(errs, "DescribeGroups: "+cl.Err.Error())
			g.coordinatorMoving = coordinatorMoving(cl.Err)
		}
		if errCo != nil && !errors.Is(errCo, errNoConsumerGroups) {
			errs = append(errs, "ConsumerGroupDescribe: "+kafkaconf.ExplainClosed(errCo, k.answered.Load()).Error())
			g.coordinatorMoving = g.coordinatorMoving || coordinatorMoving(errCo)
		} else if co != nil {
			if err := kerr.ErrorForCode(co.ErrorCode); !errors.Is(err, kerr.GroupIDNotFound) {
				errs = append(errs, "ConsumerGroupDescribe: "+brokerError(err, co.ErrorMessage))
				g.coordinatorMoving = g.coordinatorMoving || coordinatorMoving(err)
			}
		} else if errCo == nil {
			errs = append(errs, fmt.Sprintf("ConsumerGroupDescribe: the broker did not describe group %q", id))
		}
		g.Err = strings.Join(errs, "; ")
	}
	return out, requests, nil
}

// errNoConsumerGroups: the broker does not implement ConsumerGroupDescribe (before
// Kafka 3.7), so no group there uses the consumer protocol.
var errNoConsumerGroups = errors.New("the broker does not support ConsumerGroupDescribe")

// describeConsumerGroups sends ConsumerGroupDescribe (KIP-848) for the groups ids. The
// request goes raw rather than through kadm.DescribeConsumerGroups to keep each group's
// error message and the assignments' topic IDs (kfake names topics only by ID there).
func (k *Kafka) describeConsumerGroups(ctx context.Context, ids []string) (map[string]*kmsg.ConsumerGroupDescribeResponseGroup, error) {
	c, cancel := k.bound(ctx)
	defer cancel()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = ids
	out := map[string]*kmsg.ConsumerGroupDescribeResponseGroup{}
	for _, sh := range k.cl.RequestSharded(c, req) {
		if sh.Err != nil {
			if errors.Is(sh.Err, kerr.UnsupportedVersion) || strings.Contains(sh.Err.Error(), "broker is too old") {
				return nil, errNoConsumerGroups
			}
			return nil, sh.Err
		}
		resp := sh.Resp.(*kmsg.ConsumerGroupDescribeResponse)
		for i := range resp.Groups {
			out[resp.Groups[i].Group] = &resp.Groups[i]
		}
	}
	return out, nil
}

// needsTopicNames: some consumer-protocol group's assignment names a topic only by ID.
func needsTopicNames(consumer map[string]*kmsg.ConsumerGroupDescribeResponseGroup) bool {
	for _, d := range consumer {
		if d.ErrorCode != 0 {
			continue
		}
		for _, m := range d.Members {
			for _, a := range []kmsg.Assignment{m.Assignment, m.TargetAssignment} {
				for _, tp := range a.TopicPartitions {
					if tp.Topic == "" {
						return true
					}
				}
			}
		}
	}
	return false
}

// brokerError is the broker's error code with its own message when it sent one.
func brokerError(err error, msg *string) string {
	if msg != nil && *msg != "" {
		return fmt.Sprintf("%v (%s)", err, *msg)
	}
	return err.Error()
}

// consumerGroup fills g from a ConsumerGroupDescribe answer; names maps the topic IDs
// the answer gives without a name.
func consumerGroup(g *Group, d *kmsg.ConsumerGroupDescribeResponseGroup, names map[[16]byte]string) {
	g.GroupProtocol, g.ProtocolType, g.Protocol = ProtocolConsumer, "consumer", d.AssignorName
	g.State = d.State
	g.Epoch, g.AssignmentEpoch = ptr(d.Epoch), ptr(d.AssignmentEpoch)
	assignment := func(a kmsg.Assignment) Assignment {
		out := Assignment{}
		for _, tp := range a.TopicPartitions {
			t := tp.Topic
			if t == "" {
				if t = names[tp.TopicID]; t == "" {
					t = fmt.Sprintf("topic-id:%x", tp.TopicID)
				}
			}
			out = out.add(t, tp.Partitions...)
		}
		return out
	}
	for _, m := range d.Members {
		mm := Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, MemberEpoch: ptr(m.MemberEpoch)}
		if m.InstanceID != nil {
			mm.InstanceID = *m.InstanceID
		}
		mm.Assigned = assignment(m.Assignment)
		mm.Partitions = mm.Assigned.Count()
		if target := assignment(m.TargetAssignment); !target.Equal(mm.Assigned) {
			mm.Target = target
		}
		g.Members = append(g.Members, mm)
	}
	sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].ID < g.Members[j].ID })
}

// classicGroup fills g from a DescribeGroups answer.
func classicGroup(g *Group, d kadm.DescribedGroup) {
	g.GroupProtocol = ProtocolClassic
	g.State, g.ProtocolType, g.Protocol = d.State, d.ProtocolType, d.Protocol
	for _, m := range d.Members {
		mm := Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: Assignment{}}
		if m.InstanceID != nil {
			mm.InstanceID = *m.InstanceID
		}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				mm.Assigned = mm.Assigned.add(t.Topic, t.Partitions...)
			}
		}
		mm.Partitions = mm.Assigned.Count()
		g.Members = append(g.Members, mm)
	}
}

// topicNames maps every topic's ID to its name (one Metadata request for all topics).
func (k *Kafka) topicNames(ctx context.Context) (map[[16]byte]string, error) {
	c, cancel := k.bound(ctx)
	defer cancel()
	kr, err := k.cl.Request(c, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil, k.timeoutErr("naming the topics of the group's assignment", err)
	}
	out := map[[16]byte]string{}
	for _, t := range kr.(*kmsg.MetadataResponse).Topics {
		if t.Topic != nil {
			out[t.TopicID] = *t.Topic
		}
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

// topicsInScope returns, sorted, the topics asked for, or else those with committed offsets.
func topicsInScope(g Group, committed map[string]map[int32]CommittedOffset, topics []string) ([]string, error) {
	want := map[string]bool{}
	if len(topics) > 0 {
		for _, t := range topics {
			want[t] = true
		}
	} else {
		for t := range committed {
			want[t] = true
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("%w: %q exists (state %s, %d members) but has committed no offsets (a broker drops the offsets of deleted topics); pass --topic to see a topic's partitions", ErrNoOffsets, g.ID, g.State, len(g.Members))
	}
	names := make([]string, 0, len(want))
	for t := range want {
		names = append(names, t)
	}
	sort.Strings(names)
	return names, nil
}

// partitionOffsets joins, for each partition in scope (those with a committed offset,
// and every partition of the topics asked for), its committed offset, owner and ends,
// sorted by topic and partition.
func partitionOffsets(names, topics []string, committed map[string]map[int32]CommittedOffset, owners map[string]map[int32]string, metas map[string]topicMeta, ends partitionEnds) []Offsets {
	var out []Offsets
	add := func(t string, p int32) {
		o := Offsets{Topic: t, Partition: p, Committed: -1, CommittedEpoch: -1, LogStart: -1, LastStable: -1, HighWatermark: -1}
		if c, ok := committed[t][p]; ok {
			o.Committed, o.CommittedEpoch, o.Metadata = c.Offset, c.LeaderEpoch, c.Metadata
		}
		o.Owner = owners[t][p]
		if _, ok := metas[t]; !ok {
			o.Err = "topic no longer exists"
		} else if _, ok := metas[t].leaders[p]; !ok {
			o.Err = "partition no longer exists"
		} else {
			o.LogStart = ends.at[0][t][p]
			o.LastStable = ends.at[1][t][p]
			o.HighWatermark = ends.at[2][t][p]
			o.Err = ends.errs[t][p]
		}
		out = append(out, o)
	}
	for _, t := range names {
		seen := map[int32]bool{}
		for p := range committed[t] {
			seen[p] = true
			add(t, p)
		}
		if len(topics) > 0 {
			for p := range metas[t].leaders {
				if !seen[p] {
					add(t, p)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

// offsetKinds are the ListOffsets requests a snapshot sends: log start, last stable
// offset (read_committed), high watermark (read_uncommitted).
var offsetKinds = []struct {
	ts  int64
	iso int8
}{{-2, 0}, {-1, 1}, {-1, 0}}

// partitionEnds holds, per offsetKinds entry, each partition's offset, and the
// per-partition errors the broker returned.
type partitionEnds struct {
	at   []map[string]map[int32]int64
	errs map[string]map[int32]string
}

// listOffsets sends one ListOffsets request per kind for all partitions of live (kgo
// splits each per leader), the kinds concurrently.
func (k *Kafka) listOffsets(ctx context.Context, live []string, metas map[string]topicMeta) (partitionEnds, error) {
	ends := partitionEnds{at: make([]map[string]map[int32]int64, len(offsetKinds)), errs: map[string]map[int32]string{}}
	errs := make([]error, len(offsetKinds))
	var (
		wg     sync.WaitGroup
		perrMu sync.Mutex
	)
	for i, kd := range offsetKinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID = -1
			req.IsolationLevel = kd.iso
			for _, t := range live {
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = t
				for p := range metas[t].leaders {
					rp := kmsg.NewListOffsetsRequestTopicPartition()
					rp.Partition = p
					rp.Timestamp = kd.ts
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
			}
			c, cancel := k.bound(ctx)
			defer cancel()
			out := map[string]map[int32]int64{}
			for _, sh := range k.cl.RequestSharded(c, req) {
				if sh.Err != nil {
					errs[i] = sh.Err
					continue
				}
				for _, t := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
					if out[t.Topic] == nil {
						out[t.Topic] = map[int32]int64{}
					}
					for _, p := range t.Partitions {
						if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
							perrMu.Lock()
							if ends.errs[t.Topic] == nil {
								ends.errs[t.Topic] = map[int32]string{}
							}
							ends.errs[t.Topic][p.Partition] = "listing offsets: " + err.Error()
							perrMu.Unlock()
							continue
						}
						out[t.Topic][p.Partition] = p.Offset
					}
				}
			}
			ends.at[i] = out
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return ends, k.timeoutErr("listing partition offsets", err)
		}
	}
	return ends, nil
}

// metadata fetches and caches topic IDs and leaders; missing topics are left out.
func (k *Kafka) metadata(ctx context.Context, topics []string) (map[string]topicMeta, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	c, cancel := k.bound(ctx)
	defer cancel()
	kr, err := k.cl.Request(c, req)
	if err != nil {
		return nil, k.timeoutErr("reading topic metadata", err)
	}
	out := map[string]topicMeta{}
	for _, t := range kr.(*kmsg.MetadataResponse).Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				continue
			}
			return nil, fmt.Errorf("reading metadata of topic %q: %w", *t.Topic, err)
		}
		tm := topicMeta{id: t.TopicID, leaders: map[int32]int32{}}
		for _, p := range t.Partitions {
			tm.leaders[p.Partition] = p.Leader
		}
		out[*t.Topic] = tm
	}
	k.mu.Lock()
	for t, m := range out {
		k.meta[t] = m
	}
	k.mu.Unlock()
	return out, nil
}

func (k *Kafka) topicMeta(ctx context.Context, topic string, refresh bool) (topicMeta, error) {
	k.mu.Lock()
	m, ok := k.meta[topic]
	k.mu.Unlock()
	if ok && !refresh {
		return m, nil
	}
	ms, err := k.metadata(ctx, []string{topic})
	if err != nil {
		return topicMeta{}, err
	}
	m, ok = ms[topic]
	if !ok {
		return topicMeta{}, fmt.Errorf("topic %q no longer exists", topic)
	}
	return m, nil
}

// Scan implements Cluster. It reads with isolation read_committed so that the broker
// returns its aborted-transaction list with the batches (it does not for
// read_uncommitted); control batches and aborted batches still come back raw, so every
// offset below the last stable offset is classified exactly (see classifier). On an
// error it returns what it classified so far with the error.
func (k *Kafka) Scan(ctx context.Context, topic string, partition int32, from, to int64) (*Scan, error) {
	sc := &Scan{From: from, To: from}
	c := &classifier{next: from, to: to}
	refresh := false
	empty := 0
	for c.next < to {
		tm, err := k.topicMeta(ctx, topic, refresh)
		if err != nil {
			return sc, err
		}
		leader, ok := tm.leaders[partition]
		if !ok {
			return sc, fmt.Errorf("partition %d of %q no longer exists", partition, topic)
		}
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis = 100
		req.MinBytes = 1
		req.MaxBytes = k.FetchMaxBytes
		req.IsolationLevel = 1
		req.SessionID = 0
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, tm.id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = partition
		rp.FetchOffset = c.next
		rp.PartitionMaxBytes = k.FetchMaxBytes
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)

		rctx, cancel := k.bound(ctx)
		kr, err := k.cl.Broker(int(leader)).Request(rctx, req)
		cancel()
		sc.Requests++
		if err != nil {
			return sc, k.timeoutErr(fmt.Sprintf("fetching %s/%d at offset %d", topic, partition, c.next), err)
		}
		resp := kr.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return sc, fmt.Errorf("fetching %s/%d: %w", topic, partition, err)
		}
		var part *kmsg.FetchResponseTopicPartition
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].Partition == partition {
					part = &resp.Topics[i].Partitions[j]
				}
			}
		}
		if part == nil {
			return sc, fmt.Errorf("fetching %s/%d: the broker returned no data for the partition", topic, partition)
		}
		switch err := kerr.ErrorForCode(part.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.OffsetOutOfRange) && part.LogStartOffset > c.next:
			// Deleted (retention, DeleteRecords) since the offsets were listed.
			end := min(part.LogStartOffset, to)
			c.emit(end-1, end-1, Absent)
			sc.To, sc.Spans = c.next, c.spans
			continue
		case !refresh && (errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.FencedLeaderEpoch) ||
			errors.Is(err, kerr.UnknownLeaderEpoch) || errors.Is(err, kerr.UnknownTopicID) || errors.Is(err, kerr.InconsistentTopicID)):
			refresh = true
			continue
		case errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID):
			return sc, fmt.Errorf("%s/%d: the topic was deleted during the scan", topic, partition)
		default:
			return sc, fmt.Errorf("fetching %s/%d at offset %d: %w", topic, partition, c.next, err)
		}
		refresh = false
		before := c.next
		if _, err := c.feed(part); err != nil {
			return sc, fmt.Errorf("%s/%d: %w", topic, partition, err)
		}
		sc.To, sc.Spans = c.next, c.spans
		if c.next == before {
			if empty++; empty >= 3 {
				return sc, fmt.Errorf("%s/%d: the broker returned no records at offset %d (last stable offset %d, high watermark %d)",
					topic, partition, c.next, part.LastStableOffset, part.HighWatermark)
			}
		} else {
			empty = 0
		}
	}
	sc.To, sc.Spans = c.next, c.spans
	return sc, nil
}
