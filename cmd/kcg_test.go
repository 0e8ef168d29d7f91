package cmd

import (
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// kafka-consumer-groups.sh's flags that mean nothing here are usage errors that name the
// kstranded way, not pflag's bare "unknown flag"; a flag of neither tool still gets it.
func TestKafkaConsumerGroupsFlagsWithoutAMeaningNameTheKstrandedWay(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"--all-groups points to inspect's list and watch", []string{"inspect", "--all-groups"}, "inspect without --group lists them"},
		{"--members points to inspect --group", []string{"inspect", "--group", "g", "--members"}, "shows the members with the partitions each owns"},
		{"--state points to the list", []string{"inspect", "--list", "--state"}, "shows each group's state"},
		{"--offsets is inspect's default", []string{"inspect", "--group", "g", "--offsets"}, "shows the offsets by default"},
		{"--verbose is inspect's default", []string{"inspect", "--group", "g", "--verbose"}, "assignments by default"},
		{"--delete is the Java tool's", []string{"inspect", "--group", "g", "--delete"}, "kstranded does not delete groups"},
		{"--delete-offsets is the Java tool's", []string{"rewind", "--group", "g", "--delete-offsets"}, "kafka-consumer-groups.sh --delete-offsets"},
		{"--reset-offsets on inspect points to rewind", []string{"inspect", "--group", "g", "--reset-offsets"}, "kstranded rewind --group GROUP --reset-offsets"},
		{"--describe on rewind points to inspect", []string{"rewind", "--group", "g", "--describe"}, "kstranded inspect --group GROUP describes"},
		{"a --timeout in milliseconds says the duration", []string{"inspect", "--group", "g", "--timeout", "5000"}, "--timeout 5000ms"},
		{"a flag of neither tool is unknown", []string{"inspect", "--bogus"}, "unknown flag: --bogus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runArgs(t, append(c.args, "--brokers", "127.0.0.1:1")...)
			if code != exitcode.Usage || !strings.Contains(errOut, c.says) {
				t.Fatalf("exit %d, stderr %q; want exit 2 saying %q", code, errOut, c.says)
			}
			if c.args[len(c.args)-1] != "--bogus" && strings.Contains(errOut, "unknown flag") {
				t.Fatalf("a kafka-consumer-groups.sh flag answered with a bare unknown flag: %s", errOut)
			}
		})
	}
}
