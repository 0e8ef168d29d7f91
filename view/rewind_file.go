package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kstranded/kstranded/rewind"
)

// ReadRewindFile reads what `rewind --from-file` applies: a saved plan, the Rewind
// document this package writes (`rewind -o json`), read back through that same
// declaration; or an undo file, which package rewind writes and reads itself.
func ReadRewindFile(r io.Reader, name string) (*rewind.File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n"); len(trimmed) > 0 && trimmed[0] != '{' {
		// not JSON: kafka-consumer-groups.sh's CSV (topic,partition,offset lines)
		f, err := rewind.ReadCSV(data, name)
		if err != nil {
			return nil, fmt.Errorf("not a rewind plan or undo file (JSON with schema %s or %s), nor kafka-consumer-groups.sh's CSV: %w", RewindSchema, rewind.UndoSchema, err)
		}
		return f, nil
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
		return nil, fmt.Errorf("%s: not a rewind plan or undo file (want JSON with schema %s or %s): %v", name, RewindSchema, rewind.UndoSchema, err)
	}
	switch head.Schema {
	case rewind.UndoSchema:
		return rewind.ReadUndo(data, name)
	case RewindSchema:
	default:
		return nil, fmt.Errorf("%s: schema %q is neither a rewind plan (%s) nor an undo file (%s)", name, head.Schema, RewindSchema, rewind.UndoSchema)
	}
	var plan Rewind
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&plan); err != nil {
		return nil, fmt.Errorf("%s: not a rewind plan (%s): %v", name, RewindSchema, err)
	}
	// Which keys each move states: a hand-edited plan without a target or partition is
	// refused, not read as offset 0.
	var present struct {
		Moves []map[string]json.RawMessage `json:"moves"`
	}
	_ = json.Unmarshal(data, &present)
	moves := make([]rewind.PlannedMove, len(plan.Moves))
	for i, m := range plan.Moves {
		has := func(key string) bool {
			if i >= len(present.Moves) {
				return false
			}
			v, ok := present.Moves[i][key]
			return ok && string(v) != "null"
		}
		pm := rewind.PlannedMove{Topic: m.Topic, TargetMetadata: m.TargetMetadata, Direction: m.Direction}
		if has("partition") {
			pm.Partition = &plan.Moves[i].Partition
		}
		if has("committed") {
			pm.Committed = &plan.Moves[i].Committed
		}
		if has("target") {
			pm.Target = &plan.Moves[i].Target
		}
		if has("target_leader_epoch") {
			pm.TargetEpoch = &plan.Moves[i].TargetEpoch
		}
		moves[i] = pm
	}
	return rewind.PlanFile(name, plan.Group.ID, moves)
}
