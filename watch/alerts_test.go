package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTheShippedAlertRulesFireWhenTheyShould: docs/alerts/kstranded.rules.test.yml,
// through Prometheus' own `promtool test rules`: each shipped alert (loss, stall,
// evidence gone quiet, no evidence, watch down) fires on the series watch exports, with
// its labels and annotations, and not before its `for`. The loss rule is also fired by a
// real Prometheus scraping watch (integration/watch_test.go).
func TestTheShippedAlertRulesFireWhenTheyShould(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not installed (.ci/run installs Debian's prometheus package)")
		}
		t.Skip("promtool not installed: apt-get install prometheus (CI installs it)")
	}
	cmd := exec.Command(promtool, "test", "rules", "kstranded.rules.test.yml")
	cmd.Dir = filepath.Join("..", "docs", "alerts")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
