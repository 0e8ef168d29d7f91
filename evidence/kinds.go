package evidence

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Kind is one kind of line in a source, and whether its lines were counted as
// deliveries. JSON log lines that carry a partition and an offset are told apart by
// their message (the top-level msg or message string: MessageOf), so that a log with
// "processing" and "processed" lines, or heartbeats that mention an offset, shows each
// kind with its count and offsets; other lines are one kind per format ("serve events",
// "text (ranges)", "other log lines", ...).
type Kind struct {
	Name string // `msg=processed`, `msg="heartbeat ok, lag check"`, "serve events", ...
	// Field and Value: the message field (msg or message) and its value, for a kind of
	// JSON log line told apart by its message; empty otherwise. Varies: the kind's lines
	// hold many messages that differ in words holding a digit ("processed order 81",
	// "processed order 82"), and Value shows those words as <n>.
	Field, Value string
	Varies       bool
	// AppLog: a kind of application log line that carries deliveries (JSON lines, lines
	// read through --pattern). When one source has more than one such kind and no When
	// picks among them, the evidence is ambiguous (Ambiguity).
	AppLog  bool
	Counted bool // its lines were read as deliveries
	Lines   int
	// First and Last are the lowest and highest offset its lines name, over all
	// partitions; -1 when its lines name none.
	First, Last int64
	Sample      string // the first line of the kind, cut to 120 bytes
	Why         string // for a kind not counted: why its lines were ignored
}

// Ambiguity says why a source's deliveries cannot be taken as they are, or "": more than
// one kind of application log line carries a partition and an offset, and nothing (no
// When) said which one means "delivered". Counting them all would count a record the
// handler started but never finished ("processing" without "processed"), or a heartbeat
// that mentions an offset, as delivered: a rewind planned from it skips records. The
// reason lists each kind with its line count and offsets and names the flag.
func Ambiguity(source string, kinds []Kind) string {
	var app []Kind
	for _, k := range kinds {
		if k.AppLog && k.Counted {
			app = append(app, k)
		}
	}
	if len(app) < 2 {
		return ""
	}
	const shown = 6
	var parts []string
	for i, k := range app {
		if i == shown && len(app) > shown+1 {
			parts = append(parts, fmt.Sprintf("and %d more", len(app)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Name, k.Tally()))
	}
	return fmt.Sprintf("%s: %d kinds of line carry a partition and an offset: %s; counting them all could count records "+
		"the handler never finished as delivered: say which kind means delivered with %s", source, len(app),
		strings.Join(parts, ", "), suggestWhen(app))
}

// Tally is "83 lines, offsets 0-201" ("3 lines" when they name no offset; "1 line,
// offset 82").
func (k Kind) Tally() string {
	s := fmt.Sprintf("%d lines", k.Lines)
	if k.Lines == 1 {
		s = "1 line"
	}
	if k.First >= 0 {
		if k.First == k.Last {
			s += fmt.Sprintf(", offset %d", k.First)
		} else {
			s += fmt.Sprintf(", offsets %d-%d", k.First, k.Last)
		}
	}
	return s
}

// looksDone is a message that says a handler finished a record.
var looksDone = regexp.MustCompile(`(?i)\b(processed|handled|delivered|consumed|done|completed?|finished|succeeded|success)\b`)

// suggestWhen is the flag for the kind that reads most like a finished record (else
// the first), or the flag's grammar when the kinds have no message.
func suggestWhen(kinds []Kind) string {
	pick := -1
	for i, k := range kinds {
		if k.Field != "" && looksDone.MatchString(k.Value) {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, k := range kinds {
			if k.Field != "" {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return WhenFlag + " FIELD=VALUE (or FIELD~REGEXP, or ~REGEXP on the whole line)"
	}
	k := kinds[pick]
	expr := k.Field + "=" + k.Value
	if k.Varies {
		parts := strings.Split(k.Value, "<n>")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		expr = k.Field + "~^" + strings.Join(parts, `\S+`) + "$"
	}
	return fmt.Sprintf("%s %s (or FIELD=VALUE, FIELD~REGEXP, ~REGEXP on the whole line)", WhenFlag, shellWord(expr))
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// messageKindName names a kind by its message: msg=processed, msg="two words".
func messageKindName(field, value string) string {
	if value != "" && strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-") == "" {
		return field + "=" + value
	}
	return field + "=" + strconv.Quote(value)
}
