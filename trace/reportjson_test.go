package trace

import (
	"encoding/json"
	"testing"
)

// reportJSON is the whole report as JSON: findings, partitions, files and the timeline
// with its times and details.
func reportJSON(t *testing.T, r *Report) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
