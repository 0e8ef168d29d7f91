package cmd

import (
	"regexp"
	"strings"
)

// kcgFlags are kafka-consumer-groups.sh's flags that mean nothing in kstranded, each with
// the kstranded way to the same end. Operators come with the Java tool's spellings; a
// bare "unknown flag" would leave them guessing. The flags that do mean the same thing
// are accepted where they apply (--bootstrap-server, --command-config, --describe,
// --list, --reset-offsets and its rules, --export, --from-file, --dry-run, --execute).
var kcgFlags = map[string]string{
	"all-groups":        "kstranded works on one group: give --group GROUP; kstranded inspect without --group lists them, and watch --group-regex '.*' follows them all",
	"members":           "kstranded inspect --group GROUP shows the members with the partitions each owns",
	"state":             "kstranded inspect (without --group) shows each group's state; inspect --group GROUP shows one's",
	"offsets":           "kstranded inspect --group GROUP shows the offsets by default",
	"verbose":           "kstranded inspect --group GROUP shows the members' assignments by default",
	"delete":            "kstranded does not delete groups; kafka-consumer-groups.sh --delete does",
	"delete-offsets":    "kstranded rewind deletes a committed offset only when restoring an undo file; kafka-consumer-groups.sh --delete-offsets deletes others",
	"to-current":        "kstranded leaves a partition where it is by not naming it; kstranded rewind --to TOPIC/PARTITION=OFFSET sets one",
	"type":              "kstranded inspect (without --group) shows each group's protocol (classic or consumer)",
	"group-id":          "kstranded spells it --group",
	"consumer-property": "kstranded takes client properties as -X key=value or --config FILE",
	// the verbs, given to the other command
	"reset-offsets": "kstranded rewind --group GROUP --reset-offsets (--to-offset N, --to-earliest, ...) --topic T resets offsets",
	"describe":      "kstranded inspect --group GROUP describes a group",
	"list":          "kstranded inspect (without --group) lists the groups",
}

var unknownFlag = regexp.MustCompile(`^unknown flag: --([A-Za-z0-9-]+)`)

// kcgPointer names the kstranded way for a kafka-consumer-groups.sh flag that a command
// does not know, from pflag's error; "" when it is no such flag.
func kcgPointer(err error) string {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	if says, ok := kcgFlags[m[1]]; ok {
		return "--" + m[1] + " is kafka-consumer-groups.sh's; " + says
	}
	return ""
}

// kcgTimeout: kafka-consumer-groups.sh's --timeout is milliseconds, kstranded's a
// duration; a bare number is the Java spelling.
func kcgTimeout(err error) string {
	s := err.Error()
	if strings.Contains(s, `for "--timeout" flag`) && strings.Contains(s, "missing unit") {
		return "--timeout is a duration here (30s, 500ms); kafka-consumer-groups.sh's --timeout 5000 is --timeout 5000ms"
	}
	return ""
}
