package rewind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// ReadUndo reads an undo file: each partition's offset, epoch and metadata to restore,
// and where the rewind left it (rewound_to, checked before restoring). The undo file is
// this package's own document: Execute writes it before committing, and this reads it
// back through the same declaration (Undo). A saved plan is the view's document
// (`rewind -o json`); the view reads it back and hands its moves to PlanFile.
func ReadUndo(data []byte, name string) (*File, error) {
	var u Undo
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&u); err != nil {
		return nil, fmt.Errorf("%s: not an undo file (want JSON with schema %s): %v", name, UndoSchema, err)
	}
	if u.Schema != UndoSchema {
		return nil, fmt.Errorf("%s: schema %q is not an undo file (%s)", name, u.Schema, UndoSchema)
	}
	if u.Group == "" {
		return nil, fmt.Errorf("%s: the file names no group", name)
	}
	f := &File{Kind: FromUndo, Group: u.Group}
	for i, o := range u.Offsets {
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
	return f, checkFile(f, name)
}

// PlannedMove is one move of a saved plan as the file states it; nil fields were absent.
type PlannedMove struct {
	Topic          string
	Partition      *int32
	Committed      *int64
	Target         *int64
	TargetEpoch    *int32
	TargetMetadata string
	Direction      Direction
}

// PlanFile turns a saved plan's moves into targets. Each carries the committed offset it
// was planned against, so applying the plan after the group moved on is refused.
func PlanFile(name, group string, moves []PlannedMove) (*File, error) {
	if group == "" {
		return nil, fmt.Errorf("%s: the file names no group", name)
	}
	f := &File{Kind: FromPlan, Group: group}
	for i, m := range moves {
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
	return f, checkFile(f, name)
}

func checkFile(f *File, name string) error {
	if len(f.Targets) == 0 {
		return fmt.Errorf("%s: the file has no partitions to apply", name)
	}
	seen := map[string]bool{}
	for _, t := range f.Targets {
		if seen[t.TP().String()] {
			return fmt.Errorf("%s: partition %s appears twice", name, t.TP())
		}
		seen[t.TP().String()] = true
	}
	return nil
}

// FromCSV: targets read from kafka-consumer-groups.sh's CSV (--export, --from-file).
const FromCSV Source = "CSV file"

// ReadCSV reads the CSV kafka-consumer-groups.sh --reset-offsets --export writes and
// --from-file reads: a line per partition, topic,partition,offset, or
// group,topic,partition,offset when it was written for several groups (one group per
// rewind here). The file carries no committed offsets, so its targets are plain, as --to's
// are. Group is empty for the three-column form: --group names it.
func ReadCSV(data []byte, name string) (*File, error) {
	f := &File{Kind: FromCSV}
	columns := 0
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
		if line == "" {
			continue
		}
		fields := strings.Split(line, ",")
		if n := len(fields); n != 3 && n != 4 {
			return nil, fmt.Errorf("%s: line %d: %q: want topic,partition,offset (or group,topic,partition,offset)", name, i+1, line)
		}
		if columns == 0 {
			columns = len(fields)
		} else if len(fields) != columns {
			return nil, fmt.Errorf("%s: line %d: %d columns after lines of %d", name, i+1, len(fields), columns)
		}
		if len(fields) == 4 {
			group := strings.TrimSpace(fields[0])
			if f.Group != "" && group != f.Group {
				return nil, fmt.Errorf("%s: line %d: group %s, but earlier lines are for %s; rewind one group at a time", name, i+1, group, f.Group)
			}
			f.Group, fields = group, fields[1:]
		}
		t, err := parseTarget(strings.TrimSpace(fields[0]) + "/" + strings.TrimSpace(fields[1]) + "=" + strings.TrimSpace(fields[2]))
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %v", name, i+1, err)
		}
		f.Targets = append(f.Targets, t)
	}
	return f, checkFile(f, name)
}
