package integration

import (
	"strings"
	"testing"
	"time"
)

// TestAnUnreachableBrokerIsReportedOnceWithoutLibrdkafkasLogLines: librdkafka writes each
// refused connection to stderr itself ("%3|...|FAIL|kstranded#producer-1| ..."), ahead of
// kstranded's error, unless its lines are routed away (kafkaconf.NewProducer). Against
// 127.0.0.1:1, where nothing listens, stderr is kstranded's one error line, naming the
// brokers and the broker's last error.
func TestAnUnreachableBrokerIsReportedOnceWithoutLibrdkafkasLogLines(t *testing.T) {
	for _, args := range [][]string{
		{"repro"},
		{"repro", "produce", "--topic", "kstranded-integration-never-created"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := kstranded(t, time.Minute, append(args, "--brokers", "127.0.0.1:1", "--timeout", "3s")...)
			if r.Code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.Code, r)
			}
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "kstranded: ") {
				t.Fatalf("stderr is not kstranded's one error line\n%s", r)
			}
			for _, want := range []string{"cannot reach brokers 127.0.0.1:1", "last broker error: ", "Connection refused"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("error line does not say %q\n%s", want, r)
				}
			}
		})
	}
}
