package rewind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The JSON documents rewind reads and writes.
const (
	// PlanSchema: `rewind -o json` (dry run or executed); --from-file applies its moves.
	PlanSchema = "kstranded.rewind/v1"
	// UndoSchema: the undo file written before every commit; --from-file restores it.
	UndoSchema = "kstranded.rewind-undo/v1"
)

// Undo is the undo file: the committed offsets of the moved partitions as they were
// before the commit, with their leader epoch and metadata, so restoring is exact.
type Undo struct {
	Schema  string       `json:"schema"`
	Command string       `json:"_command"`
	Version string       `json:"_version"`
	Group   string       `json:"group"`
	At      time.Time    `json:"written_at"`
	Offsets []UndoOffset `json:"offsets"`
	// Restore is the command that applies this file (for the operator reading it).
	Restore string `json:"restore"`
}

// UndoOffset is one partition of an undo file.
type UndoOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the committed offset before the rewind; -1 with NoCommittedOffset.
	Offset int64 `json:"offset"`
	// NoCommittedOffset: the group had no committed offset on the partition (the move
	// was a Set); restoring deletes the group's offset there rather than committing one.
	NoCommittedOffset bool   `json:"no_committed_offset,omitempty"`
	LeaderEpoch       int32  `json:"leader_epoch"`
	Metadata          string `json:"metadata"`
	// RewoundTo is where the rewind left the partition (-1: it deleted the committed
	// offset). Restoring checks that the group is still there: if a consumer committed
	// since, restoring would skip what it consumed. Nil in a file that lacks it.
	RewoundTo *int64 `json:"rewound_to"`
}

// NewUndo records the committed offsets the active moves of p replace.
func NewUndo(p *Plan, version string) Undo {
	u := Undo{Schema: UndoSchema, Command: "rewind", Version: version, Group: p.Group.ID, At: time.Now().UTC(), Offsets: []UndoOffset{}}
	for _, m := range p.Active() {
		to := m.Target
		o := UndoOffset{Topic: m.Topic, Partition: m.Partition, Offset: m.Committed, LeaderEpoch: m.CommittedEpoch, Metadata: m.CommittedMetadata, RewoundTo: &to}
		if m.Committed < 0 {
			o.Offset, o.NoCommittedOffset, o.LeaderEpoch, o.Metadata = -1, true, -1, ""
		}
		u.Offsets = append(u.Offsets, o)
	}
	return u
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultUndoPath names the undo file after the group and the time, in dir.
func DefaultUndoPath(dir, group string, at time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("kstranded-undo-%s-%s.json", unsafeName.ReplaceAllString(group, "_"), at.UTC().Format("20060102T150405Z")))
}

// WriteUndoFile writes u to path, which must not exist yet (an earlier undo file is
// never overwritten), and syncs it to disk before returning: the commit happens only
// after the way back is safely stored.
func WriteUndoFile(path string, u Undo) error {
	f, _, err := createUndoFile(path, false)
	if err != nil {
		return err
	}
	return writeUndo(f, u)
}

// createUndoFile creates path, never overwriting a file. With unique (the default name,
// which has one-second resolution) a taken name gets a suffix (-2, -3, ...) instead of
// an error, so two rewinds in the same second each keep their own undo file; O_EXCL
// makes the choice race-free between processes.
func createUndoFile(path string, unique bool) (*os.File, string, error) {
	try := path
	for n := 2; ; n++ {
		f, err := os.OpenFile(try, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, try, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("writing the undo file: %w", err)
		}
		if !unique || n > 1000 {
			return nil, "", fmt.Errorf("undo file %s already exists; it is never overwritten (choose another --undo-file)", try)
		}
		ext := filepath.Ext(path)
		try = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), n, ext)
	}
}

func writeUndo(f *os.File, u Undo) error {
	data, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing the undo file %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing the undo file %s: %w", f.Name(), err)
	}
	return f.Close()
}

// File is a saved plan or an undo file, read back.
type File struct {
	Kind    Source // FromPlan or FromUndo
	Group   string
	Targets []Target
}

// fileDoc is the union of the two documents' fields that matter here.
type fileDoc struct {
	Schema  string       `json:"schema"`
	Group   *groupField  `json:"group"`
	Offsets []UndoOffset `json:"offsets"`
	Moves   []struct {
		Topic          string    `json:"topic"`
		Partition      *int32    `json:"partition"`
		Committed      *int64    `json:"committed"`
		Target         *int64    `json:"target"`
		TargetEpoch    *int32    `json:"target_leader_epoch"`
		TargetMetadata string    `json:"target_metadata"`
		Direction      Direction `json:"direction"`
	} `json:"moves"`
}

// groupField accepts the group as a string (undo files) or as inspect's group object
// (plans), so either document names it the same way to the reader.
type groupField struct{ ID string }

func (g *groupField) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &g.ID)
	}
	var obj struct {
		ID string `json:"group"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	g.ID = obj.ID
	return nil
}

// ReadFile reads a plan (`rewind -o json`) or an undo file. A plan's moves carry the
// committed offset they were planned against, so applying a plan after the group moved
// on is refused; an undo file restores each partition's offset, epoch and metadata.
func ReadFile(r io.Reader, name string) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var d fileDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: not a rewind plan or undo file (want JSON with schema %s or %s): %v", name, PlanSchema, UndoSchema, err)
	}
	f := &File{}
	if d.Group != nil {
		f.Group = d.Group.ID
	}
	if f.Group == "" {
		return nil, fmt.Errorf("%s: the file names no group", name)
	}
	switch d.Schema {
	case UndoSchema:
		f.Kind = FromUndo
		for i, o := range d.Offsets {
			switch {
			case o.Topic == "" || o.Partition < 0:
				return nil, fmt.Errorf("%s: offsets[%d]: want topic, partition >= 0 and offset >= 0", name, i)
			case o.NoCommittedOffset && o.Offset != -1:
				return nil, fmt.Errorf("%s: offsets[%d]: no_committed_offset with offset %d; want offset -1", name, i, o.Offset)
			case o.NoCommittedOffset || o.Offset == -1:
				// The group had no committed offset here (undo files written before
				// no_committed_offset existed say so with offset -1 alone): restore by
				// deleting the group's offset.
				f.Targets = append(f.Targets, Target{Topic: o.Topic, Partition: o.Partition, Offset: -1, LeaderEpoch: -1, Delete: true, Expect: o.RewoundTo, Undo: true})
			case o.Offset < 0:
				return nil, fmt.Errorf("%s: offsets[%d]: want topic, partition >= 0 and offset >= 0", name, i)
			default:
				f.Targets = append(f.Targets, Target{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, Expect: o.RewoundTo, Undo: true})
			}
			if o.RewoundTo != nil && *o.RewoundTo < -1 {
				return nil, fmt.Errorf("%s: offsets[%d]: rewound_to %d; want an offset >= 0, or -1 for a deleted committed offset", name, i, *o.RewoundTo)
			}
		}
	case PlanSchema:
		f.Kind = FromPlan
		for i, m := range d.Moves {
			del := m.Direction == Delete
			if m.Topic == "" || m.Partition == nil || m.Target == nil || *m.Partition < 0 || (*m.Target < 0 && !(del && *m.Target == -1)) {
				return nil, fmt.Errorf("%s: moves[%d]: want topic, partition and target", name, i)
			}
			t := Target{Topic: m.Topic, Partition: *m.Partition, Offset: *m.Target, LeaderEpoch: -1, Metadata: m.TargetMetadata, Delete: del}
			if del {
				t.Offset = -1
			}
			if m.TargetEpoch != nil {
				t.LeaderEpoch = *m.TargetEpoch
			}
			if m.Committed != nil {
				c := *m.Committed
				t.Expect = &c
			}
			f.Targets = append(f.Targets, t)
		}
	default:
		return nil, fmt.Errorf("%s: schema %q is neither a rewind plan (%s) nor an undo file (%s)", name, d.Schema, PlanSchema, UndoSchema)
	}
	if len(f.Targets) == 0 {
		return nil, fmt.Errorf("%s: the file has no partitions to apply", name)
	}
	seen := map[string]bool{}
	for _, t := range f.Targets {
		if seen[t.TP().String()] {
			return nil, fmt.Errorf("%s: partition %s appears twice", name, t.TP())
		}
		seen[t.TP().String()] = true
	}
	return f, nil
}
