package runbook

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Consumer is a command in a step that starts a Kafka consumer in a group.
type Consumer struct {
	Command string // the command as written, words joined by spaces
	Group   string // the group argument as written, quotes removed ("$GROUP"); "" if none
}

// Assignment is a shell variable a step assigns (NAME=VALUE, export NAME=VALUE).
type Assignment struct {
	Name, Value string // Value with quotes removed, variable references as written
}

// Commands splits a step into simple commands, each a list of words with quotes removed
// (variable references stay as written: "$GROUP" is the word $GROUP). It understands what
// the runbooks write: quotes, backslash line continuations, comments, the separators
// ; & && || | and newlines, and $( ) and backquote substitutions, whose commands are
// listed as commands of their own. It does not interpret shell.
func Commands(code string) [][]string {
	var (
		cmds  [][]string
		words []string
		word  strings.Builder
		inW   bool
	)
	endWord := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	rs := []rune(code)
	inDQ := false   // inside "..."
	var subs []bool // open $( ): whether each opened inside "..."
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if inDQ {
			switch {
			case c == '"':
				inDQ = false
			case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
				i++
				subs = append(subs, true)
				inDQ = false
				endCmd()
			case c == '\\' && i+1 < len(rs):
				i++
				word.WriteRune(rs[i])
			default:
				word.WriteRune(c)
			}
			continue
		}
		switch {
		case c == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++ // a continuation
		case c == '\\' && i+1 < len(rs):
			word.WriteRune(rs[i+1])
			inW = true
			i++
		case c == '\'':
			inW = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				word.WriteRune(rs[i])
			}
		case c == '"':
			inW, inDQ = true, true
		case c == '#' && !inW:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			endCmd()
		case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
			i++
			subs = append(subs, false)
			endCmd()
		case c == ')':
			endCmd()
			if n := len(subs); n > 0 {
				inDQ = subs[n-1]
				subs = subs[:n-1]
				inW = inDQ
			}
		case c == '`' || c == ';' || c == '&' || c == '|' || c == '\n':
			endCmd()
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteRune(c)
			inW = true
		}
	}
	endCmd()
	return cmds
}

var assignRe = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// Assignments lists the variables a step assigns, in order.
func Assignments(code string) []Assignment {
	var out []Assignment
	for _, words := range Commands(code) {
		if len(words) > 0 && (words[0] == "export" || words[0] == "declare" || words[0] == "local" || words[0] == "readonly") {
			words = words[1:]
		}
		for _, w := range words {
			m := assignRe.FindStringSubmatch(w)
			if m == nil {
				break // the command itself: NAME=VALUE cmd sets it for cmd only
			}
			out = append(out, Assignment{m[1], m[2]})
		}
	}
	return out
}

// Consumers lists the commands of a step that start a consumer in a group: kstranded's
// model consumer (repro consume, and repro itself when given --group), Kafka's console,
// verifiable and perf-test consumers, and kcat in balanced-group mode or with a group.id.
func Consumers(code string) []Consumer {
	var out []Consumer
	for _, words := range Commands(code) {
		words = program(words)
		if len(words) == 0 {
			continue
		}
		name := strings.TrimSuffix(path.Base(words[0]), ".sh")
		args := words[1:]
		group, consumer := "", false
		switch name {
		case "kstranded":
			if len(args) > 0 && args[0] == "repro" {
				sub := ""
				if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
					sub = args[1]
				}
				group = flagValue(args, "--group")
				// repro consume always joins --group; repro without one makes its own
				consumer = sub == "consume" || (sub == "" && group != "")
			}
		case "kafka-console-consumer", "kafka-consumer-perf-test":
			consumer = true
			group = flagValue(args, "--group")
			if group == "" {
				group = propValue(args, "--consumer-property", "group.id")
			}
		case "kafka-verifiable-consumer":
			consumer, group = true, flagValue(args, "--group-id")
		case "kcat", "kafkacat":
			if g := flagValue(args, "-G"); g != "" {
				consumer, group = true, g
			} else if g := propValue(args, "-X", "group.id"); g != "" && hasFlag(args, "-C") {
				consumer, group = true, g
			}
		}
		if consumer {
			out = append(out, Consumer{Command: strings.Join(words, " "), Group: group})
		}
	}
	return out
}

// program drops what runs the command (env assignments, exec, nohup, time, env,
// timeout DURATION) and returns the command's words.
func program(words []string) []string {
	for len(words) > 0 {
		switch w := words[0]; {
		case assignRe.MatchString(w):
			words = words[1:]
		case w == "exec" || w == "nohup" || w == "time" || w == "env" || w == "command" || w == "sudo":
			words = words[1:]
		case w == "timeout" && len(words) > 1:
			words = words[2:]
		default:
			return words
		}
	}
	return nil
}

// flagValue is the value of --flag V or --flag=V ("" if absent).
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// propValue is KEY's value in --flag KEY=V (or -XKEY=V) ("" if absent).
func propValue(args []string, flag, key string) string {
	for i, a := range args {
		kv := ""
		switch {
		case a == flag && i+1 < len(args):
			kv = args[i+1]
		case strings.HasPrefix(a, flag) && len(flag) == 2:
			kv = a[2:]
		}
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

// Variables lists the shell variables s refers to.
func Variables(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// GroupConsumers lists the consumers that a runbook's steps (the ones the test runs,
// which an operator pastes) start in a group the page did not make: the incident's
// group "$GROUP" (the operator sets it, the test's setup exports it; even a page that
// assigns it itself: a stale $GROUP from an incident in the same terminal is one missed
// step away), a variable assigned
// from it, or any variable no run step of the page assigned. Only the user's application
// belongs in the user's group (issue 21 §3): a test consumer there receives the records a
// repair made the group deliver again, and commits past them. A group written as a
// literal name, or derived with text of its own ("$GROUP-kstranded-test"), is a group
// of the page's own. Skipped and application steps are not run and not listed.
func GroupConsumers(rb *Runbook) []string {
	tainted := map[string]bool{"GROUP": true}
	owned := map[string]bool{}
	var out []string
	for _, s := range rb.Steps {
		if s.Skip {
			continue
		}
		for _, a := range Assignments(s.Code) {
			bad := false
			for _, v := range Variables(a.Value) {
				bad = bad || tainted[v]
			}
			if a.Name == "GROUP" {
				continue // the incident's group, whatever a page sets it to
			}
			tainted[a.Name], owned[a.Name] = bad, !bad
		}
		for _, c := range Consumers(s.Code) {
			m := soleVar.FindStringSubmatch(c.Group)
			switch {
			case m == nil:
				continue // a literal group, one named with text of its own, or none
			case tainted[m[1]]:
				out = append(out, fmt.Sprintf("%s:%d: starts a consumer in the operator's group (%s): %s", rb.Name, s.Line, c.Group, c.Command))
			case !owned[m[1]]:
				out = append(out, fmt.Sprintf("%s:%d: starts a consumer in a group the page did not make (%s, assigned by no step it runs): %s", rb.Name, s.Line, c.Group, c.Command))
			}
		}
	}
	return out
}

// soleVar is a word that is one variable reference and nothing else.
var soleVar = regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)
