package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
)

// CheckpointSchema names the checkpoint's format.
const CheckpointSchema = "kstranded.watch-checkpoint/v1"

// Checkpoint is what a restart remembers: where each source was read to, each
// partition's deliveries above its floor, its lost counter and its verdict.
type Checkpoint struct {
	Schema     string                `json:"schema"`
	Written    time.Time             `json:"written"`
	Sources    []SourcePosition      `json:"sources"`
	Partitions []PartitionCheckpoint `json:"partitions"`
	Counts     []SourceCounts        `json:"counts,omitempty"`
	// Pending are deliveries read and not yet taken by a watched partition: from stdin
	// or an OTLP receiver since the last evaluation, or for a group that has not
	// committed yet. A restart that forgot them would judge those records undelivered.
	Pending []PendingCheckpoint `json:"pending,omitempty"`
}

// PendingCheckpoint is one partition's deliveries not yet taken (Group: the consumer
// group the evidence named, "" when it named none).
type PendingCheckpoint struct {
	Group     string         `json:"group,omitempty"`
	Topic     string         `json:"topic"`
	Partition int32          `json:"partition"`
	Delivered kpart.RangeSet `json:"delivered"`
}

// SourcePosition is where a followed file was read to.
type SourcePosition struct {
	Path   string `json:"path"`
	Inode  uint64 `json:"inode"`
	Offset int64  `json:"offset"`
	Done   bool   `json:"done"`
}

// SourceCounts is what a source (a followed file, stdin, an OTLP receiver) gave up to
// the checkpoint: a restart that forgot them would say NO EVIDENCE of a log that had
// given deliveries and has been quiet since.
type SourceCounts struct {
	Path      string          `json:"path"`
	Format    evidence.Format `json:"format"`
	Lines     int64           `json:"lines"`
	Counted   int64           `json:"counted"`
	Ignored   int64           `json:"ignored"`
	Malformed int64           `json:"malformed"`
}

// PartitionCheckpoint is one partition's remembered state.
type PartitionCheckpoint struct {
	Group     string          `json:"group"`
	Topic     string          `json:"topic"`
	Partition int32           `json:"partition"`
	Floor     int64           `json:"floor"`
	Delivered kpart.RangeSet  `json:"delivered"`
	LostTotal int64           `json:"lost_total"`
	LostNow   int64           `json:"lost_now"` // lost at the last evaluation: a restart does not count them again
	Verdict   verdict.Verdict `json:"verdict"`
}

// LoadCheckpoint reads a checkpoint. A missing file is no checkpoint (nil, nil); a file
// that does not read as one is an error the caller reports and ignores: a corrupt
// checkpoint is never trusted.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt (%v)", path, err)
	}
	if cp.Schema != CheckpointSchema {
		return nil, fmt.Errorf("checkpoint %s is not a %s file (schema %q)", path, CheckpointSchema, cp.Schema)
	}
	check := func(topic string, partition int32, rs kpart.RangeSet) error {
		for i, r := range rs {
			if r.Last < r.First || (i > 0 && r.First <= rs[i-1].Last+1) {
				return fmt.Errorf("checkpoint %s is corrupt: %s/%d's delivered ranges are not sorted and disjoint", path, topic, partition)
			}
		}
		return nil
	}
	for _, p := range cp.Partitions {
		if err := check(p.Topic, p.Partition, p.Delivered); err != nil {
			return nil, err
		}
	}
	for _, p := range cp.Pending {
		if err := check(p.Topic, p.Partition, p.Delivered); err != nil {
			return nil, err
		}
	}
	return &cp, nil
}

// Source returns the source for path, resuming where the checkpoint read it to.
func (cp *Checkpoint) Source(path string) *Source {
	if cp != nil {
		for _, s := range cp.Sources {
			if s.Path == path {
				src := NewSource(path, s.Inode, s.Offset)
				src.Done = s.Done
				return src
			}
		}
	}
	return NewSource(path, 0, 0)
}

// Restore gives w the checkpoint's partitions.
func (cp *Checkpoint) Restore(w *Watcher) {
	if cp == nil {
		return
	}
	for _, p := range cp.Partitions {
		k := Key{p.Group, kpart.TopicPartition{Topic: p.Topic, Partition: p.Partition}}
		w.parts[k] = &Partition{Group: p.Group, Topic: p.Topic, Partition: p.Partition, Floor: p.Floor, Delivered: p.Delivered,
			LostTotal: p.LostTotal, lostNow: p.LostNow, Verdict: p.Verdict, Committed: -2, LastProgress: w.opt.Now()}
	}
	for _, c := range cp.Counts {
		st := w.stats[c.Path]
		if st == nil {
			// a source not given this time: what it gave is in the partitions' deliveries
			st = &SourceStats{Path: c.Path}
			w.stats[c.Path] = st
		}
		st.Lines, st.Counted, st.Ignored, st.Malformed = c.Lines, c.Counted, c.Ignored, c.Malformed
		if c.Format != "" {
			st.Format = c.Format
		}
	}
	for _, p := range cp.Pending {
		k := pendingKey{group: p.Group, TopicPartition: kpart.TopicPartition{Topic: p.Topic, Partition: p.Partition}}
		rs := w.pending[k]
		for _, r := range p.Delivered {
			rs.Add(r.First, r.Last)
		}
		w.pending[k] = rs
	}
}

// SaveCheckpoint writes w's state to path atomically (a temporary file renamed over it).
func SaveCheckpoint(path string, w *Watcher) error {
	cp := Checkpoint{Schema: CheckpointSchema, Written: w.opt.Now().UTC(), Sources: []SourcePosition{}, Partitions: []PartitionCheckpoint{}}
	for _, s := range w.opt.Sources {
		cp.Sources = append(cp.Sources, SourcePosition{Path: s.Path, Inode: s.Inode, Offset: s.Offset - int64(len(s.rest)), Done: s.Done})
	}
	for _, p := range w.Partitions() {
		cp.Partitions = append(cp.Partitions, PartitionCheckpoint{Group: p.Group, Topic: p.Topic, Partition: p.Partition, Floor: p.Floor,
			Delivered: p.Delivered, LostTotal: p.LostTotal, LostNow: p.lostNow, Verdict: p.Verdict})
	}
	for _, st := range w.Sources() {
		cp.Counts = append(cp.Counts, SourceCounts{Path: st.Path, Format: st.Format, Lines: st.Lines, Counted: st.Counted, Ignored: st.Ignored, Malformed: st.Malformed})
	}
	for k, rs := range w.pending {
		cp.Pending = append(cp.Pending, PendingCheckpoint{Group: k.group, Topic: k.Topic, Partition: k.Partition, Delivered: rs})
	}
	sort.Slice(cp.Pending, func(i, j int) bool {
		a, b := cp.Pending[i], cp.Pending[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kstranded-checkpoint-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
