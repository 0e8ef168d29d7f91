package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/trace"
	"github.com/kstranded/kstranded/view"
)

func newTraceCmd(g *Globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Read consumer traces and logs",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newTraceParseCmd(g, nil))
	return c
}

type traceParseOptions struct {
	Files           []string
	Format          string
	Pattern         string
	Timeline        bool
	SVG             string
	MaxPollInterval time.Duration
	MaxPartitions   int
}

// newTraceParseCmd builds `kstranded trace parse`; runF, when not nil (tests), receives
// the options instead of the files being parsed.
func newTraceParseCmd(g *Globals, runF func(context.Context, *traceParseOptions) error) *cobra.Command {
	o := &traceParseOptions{}
	c := &cobra.Command{
		Use:   "parse FILE...",
		Short: "Turn client traces and logs into per-partition timelines and loss findings",
		Long: `Read what a consumer wrote and say, with the evidence lines (file:line), where records
were lost and why. Each FILE (or - for stdin; gzip is accepted) is one of:

  kstranded   kstranded's own trace (kstranded repro --trace), kstranded.trace/v1 JSON lines
  kafkajs     an instrumented confluent-kafka-javascript trace: [HH:MM:SS] event {json}
              (consume-result, cache:nextN-served, cache-expiration-break,
              clearCacheAndResetPositions, ...); pasted "# ..." and "<- ..." annotations are fine
  librdkafka  a librdkafka debug log (debug=consumer,fetch,cgrp) from any librdkafka client
  jsclient    confluent-kafka-javascript's own log output with its default logger at DEBUG:
              the { message, fac, name, timestamp } objects Node prints, librdkafka's debug
              lines forwarded in them, mixed with the application's lines (read with --pattern)
  jsclient-json  the same through a JSON logger (pino, winston, bunyan: msg or message, fac,
              timestamp or time), one object a line; other lines are the application's
  pattern     an application's delivery log, one line per record handed to the handler, read
              with --pattern REGEXP naming the groups partition and offset (topic, time optional)

The format is detected per file (--format forces it), from the first line that decides it
(up to 16 MiB in; with --pattern and no other format, the whole file is read with the
pattern), and the header says which line decided and how many lines matched. Several files
merge into one timeline: a librdkafka log says what was fetched and committed, the
application log what was delivered; a JS client log can carry all of it in one file.

Findings: LOST (committed past fetched, never-delivered records), CLEAR-NO-REWIND,
CACHE-EXPIRY (time since fetch and serve against max.poll.interval.ms; a kstranded repro
trace's durations are scaled by its settings' time_scale and are compared as such), HOT-SPIN,
COMMIT-REGRESSION, POSITION-PAST-UNDELIVERED, MAX-POLL-EXCEEDED.

Limits (memory stays under 256 MB whatever the input): ` + strconv.Itoa(trace.DefaultMaxPartitions) + ` partitions are tracked
(--max-partitions); events about partitions named after them are counted, not tracked, and
the result is marked INCOMPLETE. At ` + strconv.Itoa(trace.MaxRanges) + ` distinct offset ranges held (fetched,
delivered, discarded; all partitions) the parse stops, INCOMPLETE. Reasons and names are kept to 256
bytes, timeline entries to 16 ranges. Interrupted (Ctrl-C, SIGTERM), it prints what it read
so far marked INTERRUPTED. See docs/trace-format.md.

` + exitHelp(
			exitCodes{exitcode.OK, ""},
			exitCodes{exitcode.Error, "an unreadable file, one in no known format, or a result INCOMPLETE at a limit"},
			exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Lost, "a LOST finding exists (in a complete read)"},
			exitCodes{exitcode.Interrupted, "the partial result is marked INTERRUPTED"}),
		Example: `  kstranded trace parse repro.trace
  kstranded trace parse --max-poll-interval 15m --timeline consumer.trace
  kstranded trace parse rdkafka.log app.log \
      --pattern '(?P<time>\S+) delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)'
  kstranded trace parse -o json --svg timeline.svg repro.trace.gz`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if runF != nil {
				return runF(c.Context(), o)
			}
			return traceParse(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Format, "format", "auto", "input format: auto, kstranded, kafkajs, librdkafka, jsclient, jsclient-json or pattern")
	f.StringVar(&o.Pattern, "pattern", "", "regular expression for delivery lines, with named groups partition, offset (topic, time optional)")
	f.BoolVar(&o.Timeline, "timeline", false, "print the chronological timeline instead of the summary")
	f.StringVar(&o.SVG, "svg", "", "also draw the timeline as SVG into this file")
	f.DurationVar(&o.MaxPollInterval, "max-poll-interval", 0, "the consumer's max.poll.interval.ms (e.g. 15m) when the trace does not carry it")
	f.IntVar(&o.MaxPartitions, "max-partitions", trace.DefaultMaxPartitions, "partitions tracked; events about more are counted, not tracked (memory grows with it: about 5 KB a partition)")
	return c
}

// traceMemoryLimit is trace parse's soft memory limit (runtime/debug.SetMemoryLimit).
const traceMemoryLimit = 40 << 20

func traceParse(ctx context.Context, g *Globals, o *traceParseOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	format, err := trace.ParseFormat(o.Format)
	if err != nil {
		return exitcode.Usagef("--format: %v", err)
	}
	if err := positiveDur("max-poll-interval", o.MaxPollInterval, true); err != nil {
		return err
	}
	if o.MaxPartitions < 1 {
		return exitcode.Usagef("--max-partitions must be at least 1, got %d", o.MaxPartitions)
	}
	opt := trace.Options{MaxPollInterval: o.MaxPollInterval, MaxPartitions: o.MaxPartitions}
	if o.Pattern != "" {
		re, err := regexp.Compile(o.Pattern)
		if err != nil {
			return exitcode.Usagef("--pattern: %v", err)
		}
		if err := trace.CheckPattern(re); err != nil {
			return exitcode.Usagef("%v", err)
		}
		opt.Pattern = re
	} else if format == trace.FormatPattern {
		return exitcode.Usagef("--format pattern needs --pattern")
	}
	out, err := g.Format()
	if err != nil {
		return err
	}
	// the parse streams (its memory does not grow with the input): a soft limit makes the
	// garbage collector keep the heap near what is live instead of twice it (GOGC=100),
	// unless the user set GOMEMLIMIT
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(traceMemoryLimit))
	}
	stdinUsed := false
	a := trace.NewAnalyzer(opt)
	var stop error // an interrupt or a limit: the partial result is printed, then this
	for _, name := range o.Files {
		var r io.Reader
		if name == "-" {
			if stdinUsed {
				return exitcode.Usagef("stdin (-) given twice")
			}
			stdinUsed, r, name = true, g.IO.In, "<stdin>"
		} else {
			fh, err := os.Open(name)
			if err != nil {
				return err
			}
			defer fh.Close()
			r = fh
		}
		if _, err := a.ParseContext(ctx, name, r, format); err != nil {
			if ctx.Err() != nil {
				stop = fmt.Errorf("%w: %v", exitcode.ErrInterrupted, err)
				break
			}
			if errors.Is(err, trace.ErrLimit) {
				stop = err
				break
			}
			return err
		}
	}
	rep := a.Finish()
	doc := view.NewTrace(rep, "trace parse", o.Timeline)
	if o.SVG != "" {
		if err := writeFileWith(o.SVG, func(w io.Writer) error { return view.WriteTraceSVG(w, rep) }); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	if err := view.PrintTrace(g.IO.Out, doc, out, g.Pretty(), o.Timeline); err != nil {
		return err
	}
	if stop != nil {
		return stop // a partial read: no verdict, not even LOST (the rest may deliver them)
	}
	if rep.Lost() {
		var first trace.Finding
		for _, f := range rep.Findings {
			if f.Rule == trace.RuleLoss {
				first = f
				break
			}
		}
		err := fmt.Errorf("%w: %s", exitcode.ErrLost, first.Message)
		if out == render.JSON {
			return exitcode.Reported(err) // the JSON document already says so
		}
		return err
	}
	if !rep.Complete() {
		// every line was read, but partitions past the limit were not tracked: no verdict
		// for them, so no success
		return fmt.Errorf("%w: %s", trace.ErrLimit, strings.Join(rep.Incomplete, "; "))
	}
	return nil
}

func writeFileWith(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
