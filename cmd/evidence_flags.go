package cmd

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/internal/exitcode"
)

// evidenceFlags are the flags of the application's delivery evidence, the same in every
// command that judges from it (inspect, rewind, watch): the files, how to read their
// lines, and whether spans alone are complete. One binding, one check, one reader.
type evidenceFlags struct {
	Delivered    []string
	Pattern      string
	When         string // --delivered-when
	OTLPComplete bool   // --otlp-complete
}

// bind registers the flags; delivered is --delivered's help, the one that differs.
func (e *evidenceFlags) bind(f *pflag.FlagSet, delivered string) {
	f.StringArrayVar(&e.Delivered, "delivered", nil, delivered)
	f.StringVar(&e.Pattern, "pattern", "", "read --delivered through this regular expression, with named groups partition, offset (topic optional), as trace parse does")
	f.StringVar(&e.When, "delivered-when", "", deliveredWhenHelp)
	f.BoolVar(&e.OTLPComplete, "otlp-complete", false, otlpCompleteHelp)
}

// check validates --pattern and --delivered-when (they need --delivered) and that
// stdin (--delivered -) is given once.
func (e *evidenceFlags) check() error {
	if e.stdin() > 1 {
		return exitcode.Usagef("--delivered - (stdin) can be given once")
	}
	return checkEvidenceFlags(e.Delivered, e.Pattern, e.When)
}

// stdin counts the --delivered - (stdin) given.
func (e *evidenceFlags) stdin() int {
	n := 0
	for _, d := range e.Delivered {
		if d == "-" {
			n++
		}
	}
	return n
}

// read reads --delivered as the flags say (nil without --delivered).
func (e *evidenceFlags) read(ctx context.Context, g *Globals) (*evidence.Set, error) {
	return readEvidence(ctx, g, e.Delivered, e.Pattern, e.When, e.OTLPComplete)
}

// otlpCompleteHelp is --otlp-complete's help, the same in every command that reads evidence.
const otlpCompleteHelp = "every delivery is exported as an OpenTelemetry span (no sampling): spans alone can prove a loss (without it, evidence of spans alone is NO EVIDENCE)"
