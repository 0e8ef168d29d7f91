// Package exitcode is the one place where kstranded's outcomes become process exit codes.
//
// Domain packages return errors; the command layer wraps them with these sentinels
// (or returns the sentinels for verdicts), and main maps the result with Code. Scripts
// and runbooks branch on these numbers, so they are documented in README.md and in the
// root command's help and never change meaning.
package exitcode

import (
	"errors"
	"fmt"

	"github.com/kstranded/kstranded/internal/verdict"
)

// The documented exit codes.
const (
	OK       = 0 // the command did what was asked; no loss found
	Error    = 1 // an operational error: broker unreachable, timeout, bad file, ...
	Usage    = 2 // invalid flags or arguments
	Lost     = 3 // records were lost: committed past, never delivered
	Stranded = 4 // records not delivered and not yet committed past (stalled, not lost)
	Refused  = 5 // a repair was refused for safety (group has members, forward move, ...)
	// NoEvidence: the inputs cannot support a verdict (no delivery read, most evidence
	// lines malformed, a partition's commit unknown): never 0, which would be a false
	// all-clear. The output says what would settle it.
	NoEvidence  = 6
	Interrupted = 130 // interrupted (Ctrl-C); a partial result was printed
)

// Sentinels. Wrap them (fmt.Errorf("%w: ...", ErrUsage)) to add the detail.
var (
	ErrUsage       = errors.New("usage error")
	ErrLost        = errors.New("records lost")
	ErrStranded    = errors.New("records stranded")
	ErrRefused     = errors.New("refused")
	ErrNoEvidence  = errors.New("not enough evidence to judge")
	ErrInterrupted = errors.New("interrupted")
	// ErrReported marks an error whose message was already printed (for example as JSON);
	// main must not print it again. It still maps to the code of the error it wraps.
	ErrReported = errors.New("already reported")
)

// Code maps an error to its exit code. nil is OK; unknown errors are Error.
func Code(err error) int {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, ErrUsage):
		return Usage
	case errors.Is(err, ErrLost):
		return Lost
	case errors.Is(err, ErrStranded):
		return Stranded
	case errors.Is(err, ErrRefused):
		return Refused
	case errors.Is(err, ErrNoEvidence):
		return NoEvidence
	case errors.Is(err, ErrInterrupted):
		return Interrupted
	default:
		return Error
	}
}

// Usagef returns a usage error naming what was wrong.
func Usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Reported wraps err so that main does not print it a second time.
func Reported(err error) error {
	if err == nil {
		return nil
	}
	return reported{err}
}

type reported struct{ err error }

func (r reported) Error() string { return r.err.Error() }
func (r reported) Unwrap() []error {
	return []error{r.err, ErrReported}
}

// Table lists every code with its meaning, for help texts and docs.
var Table = []struct {
	Code    int
	Meaning string
}{
	{OK, "success; no records lost"},
	{Error, "operational error (broker unreachable, timeout, unreadable file, ...)"},
	{Usage, "invalid flags or arguments"},
	{Lost, "records lost: committed past but never delivered"},
	{Stranded, "records stranded: not delivered, not yet committed past"},
	{Refused, "repair refused for safety (group has members, forward move, below log start)"},
	{NoEvidence, "not enough evidence to judge (no delivery read, evidence mostly malformed, commit unknown); the output says what would settle it"},
	{Interrupted, "interrupted; partial result printed"},
}

// ForVerdict is the result a command returns for an overall verdict (the worst of its
// partitions, verdict.Worse): the same code for the same word in every command. nil
// for OK. detail is added to the message.
func ForVerdict(v verdict.Verdict, detail string) error {
	var sentinel error
	switch v {
	case verdict.OK:
		return nil
	case verdict.Lost:
		sentinel = ErrLost
	case verdict.Stranded:
		sentinel = ErrStranded
	case verdict.NoEvidence, verdict.NoCommitEvidence, verdict.NoRecordEvidence:
		sentinel = ErrNoEvidence
	default: // ERROR, INCOMPLETE: a partition could not be judged
		if detail == "" {
			detail = string(v)
		}
		return errors.New(detail)
	}
	if detail == "" {
		return sentinel
	}
	return fmt.Errorf("%w: %s", sentinel, detail)
}
