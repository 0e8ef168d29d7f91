// Package runbook reads the operator runbooks in docs/runbooks so that their commands can
// be run as tests: a runbook whose commands drift from the tool fails the build.
//
// The convention stays readable as plain markdown:
//
//   - every ```sh fenced block is a step; the steps of a file run in order in ONE shell
//     session, as an operator pasting them into one terminal would (variables, `cd` and
//     background jobs carry over);
//   - <!-- expect exit=N --> after a step gives its expected exit code (default 0);
//   - the first ```text block after a step, before the next step, lists lines its output
//     must contain: each non-blank line must occur in some output line, where "…" stands
//     for any text and runs of spaces and tabs compare equal;
//   - <!-- runbook: skip --> right before a step shows it to the reader but does not run
//     it (a production-only command, or one the test environment replaces);
//   - <!-- runbook: application writes=FILE (what the reader does) --> right before a
//     step: the operator's own application runs here (restarted after a repair, say) and
//     its delivery log is cut to FILE. The step is shown, not run (as skip); the test
//     harness plays the application instead, in Go, not as a runbook step, and writes
//     FILE for the next step to read. No step a runbook runs may start a consumer in the
//     incident's group ("$GROUP"): only the user's application belongs there (issue 21
//     §3; Consumers finds them, a test checks every runbook). The old
//     <!-- runbook: stand-in --> marker, a test consumer run in "$GROUP" as a step, is
//     refused;
//   - <!-- runbook-setup: NAME --> anywhere in the file names the fixture the test
//     prepares before the first step (see runbook_test.go); the runbook tells the
//     operator how to set the same variables ($BROKER, $GROUP, $TOPIC, $TRACE).
//
// What it deliberately does not do: it does not interpret shell, and it runs nothing;
// the test harness does.
package runbook

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Step is one ```sh block.
type Step struct {
	Line   int    // line of the opening fence
	Code   string // the commands
	Exit   int    // expected exit code
	Expect []string
	Skip   bool
	// App: the operator's application runs here (<!-- runbook: application -->); the step
	// is shown, not run (Skip), and the test harness plays the application, writing its
	// delivery log to AppLog.
	App    bool
	AppLog string
}

// Runbook is a parsed runbook.
type Runbook struct {
	Name  string
	Setup string
	Steps []Step
}

var (
	expectRe = regexp.MustCompile(`^<!--\s*expect\s+exit=(\d+)\s*-->$`)
	skipRe   = regexp.MustCompile(`^<!--\s*runbook:\s*skip\b.*-->$`)
	standRe  = regexp.MustCompile(`^<!--\s*runbook:\s*stand-in\b.*-->$`)
	appRe    = regexp.MustCompile(`^<!--\s*runbook:\s*application\s+writes=(\S+)(\s.*)?-->$`)
	setupRe  = regexp.MustCompile(`^<!--\s*runbook-setup:\s*([A-Za-z0-9_-]+)\s*-->$`)
)

// Parse reads a runbook.
func Parse(name, text string) (*Runbook, error) {
	rb := &Runbook{Name: name}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var (
		n        int
		fence    string // the open fence's info string; "" outside a block
		fenceAt  int
		body     []string
		skipNext bool
		app      string // the application's log, for the next step
		// cur is the last step while its expectations may still follow.
		cur       *Step
		expectSet bool
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, "```") && strings.Trim(trimmed, "`") == "" {
				switch fence {
				case "sh":
					rb.Steps = append(rb.Steps, Step{Line: fenceAt, Code: strings.Join(body, "\n"), Skip: skipNext || app != "", App: app != "", AppLog: app})
					cur, expectSet, skipNext, app = &rb.Steps[len(rb.Steps)-1], false, false, ""
				case "text":
					if cur != nil && !expectSet {
						for _, l := range body {
							if strings.TrimSpace(l) != "" {
								cur.Expect = append(cur.Expect, l)
							}
						}
						expectSet = true
					}
				}
				fence, body = "", nil
				continue
			}
			body = append(body, line)
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			fence = strings.ToLower(strings.TrimSpace(strings.TrimLeft(trimmed, "`")))
			if fence == "" {
				fence = "plain"
			}
			fenceAt = n
			continue
		}
		if m := expectRe.FindStringSubmatch(trimmed); m != nil {
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: expect before any ```sh block", name, n)
			}
			cur.Exit, _ = strconv.Atoi(m[1])
			continue
		}
		if skipRe.MatchString(trimmed) {
			skipNext = true
			continue
		}
		if standRe.MatchString(trimmed) {
			return nil, fmt.Errorf("%s:%d: <!-- runbook: stand-in --> runs a test consumer in the operator's group as a step; name the application's restart with <!-- runbook: application writes=FILE --> and let the test harness play it", name, n)
		}
		if m := appRe.FindStringSubmatch(trimmed); m != nil {
			app = m[1]
			continue
		}
		if strings.HasPrefix(trimmed, "<!--") && regexp.MustCompile(`runbook:\s*application`).MatchString(trimmed) {
			return nil, fmt.Errorf("%s:%d: unreadable application step %q (want <!-- runbook: application writes=FILE ... -->)", name, n, trimmed)
		}
		if m := setupRe.FindStringSubmatch(trimmed); m != nil {
			rb.Setup = m[1]
			continue
		}
		if strings.HasPrefix(trimmed, "<!--") && strings.Contains(trimmed, "expect") {
			return nil, fmt.Errorf("%s:%d: unreadable expectation %q (want <!-- expect exit=N -->)", name, n, trimmed)
		}
	}
	if fence != "" {
		return nil, fmt.Errorf("%s:%d: unclosed ``` block", name, fenceAt)
	}
	return rb, sc.Err()
}

var spaces = regexp.MustCompile(`[ \t]+`)

func normalize(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// Missing returns the expected lines that no line of output matches.
func Missing(expect []string, output string) []string {
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		lines[i] = normalize(l)
	}
	var missing []string
	for _, e := range expect {
		if !matchAny(normalize(e), lines) {
			missing = append(missing, e)
		}
	}
	return missing
}

func matchAny(pattern string, lines []string) bool {
	parts := strings.Split(pattern, "…")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	for _, l := range lines {
		if matchLine(parts, l) {
			return true
		}
	}
	return false
}

func matchLine(parts []string, line string) bool {
	at := 0
	for _, p := range parts {
		if p == "" {
			continue
		}
		i := strings.Index(line[at:], p)
		if i < 0 {
			return false
		}
		at += i + len(p)
	}
	return true
}
