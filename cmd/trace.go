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

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/ctxio"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
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
	Partition       string
	SVG             string
	MaxPollInterval time.Duration
	Group           string
	MaxPartitions   int
	MaxScan         int64
	When            string // --delivered-when
	OTLPComplete    bool   // --otlp-complete
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
  deliveries  a delivery log as inspect --delivered reads it, without --pattern: JSON lines with
              partition and offset (pino, winston, bunyan), text TOPIC PARTITION OFFSET lines

The format is detected per file (--format forces it), from the first line that decides it
(up to 16 MiB in; with --pattern and no other format, the whole file is read with the
pattern), and the header says which line decided and how many lines matched. Several files
merge into one timeline: a librdkafka log says what was fetched and committed, the
application log what was delivered; a JS client log can carry all of it in one file.

Findings: LOST (committed past fetched, never-delivered records), CLEAR-NO-REWIND,
CACHE-EXPIRY (time since fetch and serve against max.poll.interval.ms; a kstranded repro
trace's durations are scaled by its settings' time_scale and are compared as such), HOT-SPIN,
COMMIT-REGRESSION, POSITION-PAST-UNDELIVERED, MAX-POLL-EXCEEDED.

Verdicts per partition, from the one judge every command uses (README "One judge"): LOST,
STRANDED (dropped undelivered, the commit known and not past them), OK, NO EVIDENCE (no
delivery in the inputs: add the application's log), NO COMMIT EVIDENCE (deliveries but no
commit seen) and NO RECORD EVIDENCE (the commit passed undelivered offsets no fetch line
describes). --group GROUP with --brokers (and -X/--config) judges as inspect does: the
group's committed offsets and what the partitions' offsets hold, read live, for every
partition of the topics the inputs name; the timeline marks them "read live". librdkafka
logs its commits with debug=cgrp, and what each fetch returned with debug=fetch.

Limits (memory stays under 256 MB whatever the input): ` + strconv.Itoa(trace.DefaultMaxPartitions) + ` partitions are tracked
(--max-partitions); events about partitions named after them are counted, not tracked, and
the result is marked INCOMPLETE. At ` + strconv.Itoa(trace.MaxRanges) + ` distinct offset ranges held (fetched,
delivered, discarded; all partitions) the parse stops, INCOMPLETE. Reasons and names are kept
to 256 bytes, timeline entries to 16 ranges. Interrupted (Ctrl-C, SIGTERM), it prints what
it read so far marked INTERRUPTED (JSON "interrupted": true). See docs/trace-format.md.

` + exitHelp(
			exitCodes{exitcode.OK, "every partition judged OK"},
			exitCodes{exitcode.Error, "an unreadable file or one in no known format, --group unreadable, or a result INCOMPLETE at a limit with no loss proven"},
			exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Lost, "a LOST finding exists"},
			exitCodes{exitcode.Stranded, "records dropped undelivered, not yet committed past; none lost"},
			exitCodes{exitcode.NoEvidence, "a partition NO EVIDENCE, NO COMMIT EVIDENCE or NO RECORD EVIDENCE, an empty input, or a delivery log mostly malformed or ambiguous"},
			exitCodes{exitcode.Interrupted, "the partial result printed is marked INTERRUPTED"}),
		Example: `  kstranded trace parse repro.trace
  kstranded trace parse --max-poll-interval 15m --timeline consumer.trace
  kstranded trace parse --timeline --partition stranded/0 consumer.trace
  kstranded trace parse rdkafka.log app.log \
      --pattern '(?P<time>\S+) .* partition=(?P<partition>\d+) offset=(?P<offset>\d+)'
  kstranded trace parse -o json --svg timeline.svg repro.trace.gz
  kstranded trace parse app.log --pattern '...' --group billing --brokers kafka:9092`,
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
	f.StringVar(&o.Partition, "partition", "", "the timeline and the picture of one partition only: N or TOPIC/N (TOPIC[N] accepted) (the verdict stays every partition's)")
	f.StringVar(&o.SVG, "svg", "", "also draw the timeline as SVG into this file")
	f.DurationVar(&o.MaxPollInterval, "max-poll-interval", 0, "the consumer's max.poll.interval.ms (e.g. 15m) when the trace does not carry it")
	f.StringVarP(&o.Group, "group", "g", "", "with --brokers: judge with this group's committed offsets and the partitions' records, read live (as inspect does)")
	f.StringVar(&o.When, "delivered-when", "", deliveredWhenHelp)
	f.BoolVar(&o.OTLPComplete, "otlp-complete", false, otlpCompleteHelp)
	f.Int64Var(&o.MaxScan, "max-scan", 10_000_000, "with --group: most offsets to read per partition when classifying undelivered offsets")
	f.IntVar(&o.MaxPartitions, "max-partitions", trace.DefaultMaxPartitions, "partitions tracked; events about more are counted, not tracked (memory grows with it: about 5 KB a partition)")
	return c
}

// traceMemoryLimit is trace parse's soft memory limit (runtime/debug.SetMemoryLimit).
const traceMemoryLimit = 32 << 20 // 24 MiB doubles the time on busy logs (BENCHMARKS.md)

func traceParse(ctx context.Context, g *Globals, o *traceParseOptions) error {
	format, err := trace.ParseFormat(o.Format)
	if err != nil {
		return exitcode.Usagef("--format: %v", err)
	}
	var only *view.PartitionFilter
	if o.Partition != "" {
		pf, err := view.ParsePartitionFilter(o.Partition)
		if err != nil {
			return exitcode.Usagef("--partition: %v", err)
		}
		only = &pf
	}
	if err := positiveDur("max-poll-interval", o.MaxPollInterval, true); err != nil {
		return err
	}
	if o.MaxPartitions < 1 {
		return exitcode.Usagef("--max-partitions must be at least 1, got %d", o.MaxPartitions)
	}
	// the timeline is printed only with --timeline and drawn only with --svg
	opt := trace.Options{MaxPollInterval: o.MaxPollInterval, MaxPartitions: o.MaxPartitions, NoTimeline: !o.Timeline && o.SVG == ""}
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
	if o.When != "" {
		w, err := evidence.ParseWhen(o.When)
		if err != nil {
			return exitcode.Usagef("%v", err)
		}
		opt.When = w
	}
	// the delivery logs' evidence sets: the same rule as inspect's (--delivered-when,
	// --otlp-complete)
	when, spansComplete := opt.When, o.OTLPComplete
	opt.Delivered = func(s *evidence.Set) { s.When, s.SpansComplete = when, spansComplete }
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
	var live *inspect.Kafka
	brokers := ""
	if o.Group != "" {
		k, err := g.LiveKafka("--group reads the group's committed offsets live")
		if err != nil {
			return err
		}
		brokers = k.Brokers
		opts, err := k.KgoOpts()
		if err != nil {
			return err
		}
		if live, err = inspect.NewKafka(opts, g.Timeout); err != nil {
			return err
		}
		defer live.Close()
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
			fh, err := ctxio.Open(ctx, name) // a FIFO with no writer blocks in open: not past an interrupt
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("%w: opening %s", exitcode.ErrInterrupted, name)
				}
				return err
			}
			defer fh.Close()
			r = fh
		}
		// ParseContext stops at ctx's end in every reader (a pipe that went quiet included)
		// and keeps what it read: the partial result is printed below, marked
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
	if live != nil && stop == nil {
		if err := addLiveReads(ctx, a, live, o.Group, brokers, o.MaxScan); err != nil {
			return err
		}
	}
	rep := a.Finish()
	doc := view.NewTrace(rep, "trace parse", o.Timeline)
	if only != nil {
		view.FilterTimeline(&doc, *only)
	}
	if o.SVG != "" {
		if err := writeFileWith(o.SVG, func(w io.Writer) error { return view.WriteTraceSVG(w, rep, only) }); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	if err := view.PrintTrace(g.Out(), doc, out, g.Pretty(), o.Timeline); err != nil {
		return err
	}
	if stop != nil {
		return stop // a partial read: no verdict, not even LOST (the rest may deliver them)
	}
	if !rep.Complete() && rep.Verdict != verdict.Lost {
		// every line was read, but partitions past the limit were not tracked: no verdict
		// for them, so no success (a loss in the tracked partitions is proven all the same)
		return fmt.Errorf("%w: %s", trace.ErrLimit, strings.Join(rep.Incomplete, "; "))
	}
	return traceOutcome(rep, out)
}

// traceOutcome is the exit of trace parse: the code of its verdict as every command maps
// it (exitcode.ForVerdict): LOST 3, STRANDED 4, NO EVIDENCE / NO COMMIT EVIDENCE 6, OK 0.
func traceOutcome(rep *trace.Report, out render.Format) error {
	var detail string
	switch rep.Verdict {
	case verdict.OK:
		return nil
	case verdict.Lost:
		for _, f := range rep.Findings {
			if f.Rule == trace.RuleLoss {
				detail = f.Message
				break
			}
		}
	case verdict.Stranded:
		for _, f := range rep.Findings {
			if f.Rule == trace.RulePositionPast {
				detail = f.Message
				break
			}
		}
	default:
		detail = rep.NoEvidence
		if detail == "" {
			detail = "some partitions could not be judged (see VERDICT)"
		}
	}
	err := exitcode.ForVerdict(rep.Verdict, detail)
	if out == render.JSON {
		return exitcode.Reported(err) // the JSON document already says so
	}
	return err
}

// addLiveReads reads what the cluster says of the group's partitions, as inspect reads
// it (inspect.Read: the committed offsets and, over the window the judgement needs, what
// the partition's offsets hold), and gives it to the analyzer, marked as read live: the
// partitions are then judged as inspect judges them.
func addLiveReads(ctx context.Context, a *trace.Analyzer, cl inspect.Cluster, group, brokers string, maxScan int64) error {
	snap, err := cl.Snapshot(ctx, group, nil)
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.ErrInterrupted
		}
		return fmt.Errorf("--group: %w", err)
	}
	topics := map[string]bool{}
	for _, p := range snap.Partitions {
		topics[p.Topic] = true
	}
	single := len(topics) == 1
	var reads []trace.LiveRead
	for _, p := range snap.Partitions {
		if !a.Covers(p.Topic, single) {
			continue
		}
		o, sc := inspect.Read(ctx, cl, p, a.Delivered(p.Topic, p.Partition, single), maxScan)
		if ctx.Err() != nil {
			return exitcode.ErrInterrupted
		}
		lr := trace.LiveRead{Topic: p.Topic, Partition: p.Partition, Committed: o.Committed, LogStart: o.LogStart,
			LastStable: o.LastStable, HighWatermark: o.HighWatermark, Err: o.Err}
		if sc != nil {
			lr.Contents = inspect.Input(o, nil, sc, "").Contents
		}
		reads = append(reads, lr)
	}
	a.AddLiveReads(reads, fmt.Sprintf("group %s committed offsets, read live from %s at %s", group, brokers, time.Now().UTC().Format(time.RFC3339)))
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
