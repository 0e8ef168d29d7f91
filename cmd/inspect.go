package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/ctxio"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/view"
)

type inspectOptions struct {
	Group  string
	Topics []string
	evidenceFlags
	MaxScan int64
	Watch   time.Duration
	Count   int
	// List (--list, or no --group): list the cluster's groups instead of inspecting one.
	// Describe (--describe) is kafka-consumer-groups.sh's verb for inspecting one: it
	// changes nothing but asks for --group.
	List     bool
	Describe bool

	// afterPoll, when set (tests), is called after inspection i was printed.
	afterPoll func(i int)
}

// newInspectCmd builds `kstranded inspect`; runF, when not nil (tests), receives the
// validated options instead of a cluster being inspected.
func newInspectCmd(g *Globals, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	o := &inspectOptions{}
	c := &cobra.Command{
		Use:   "inspect [--group GROUP [--topic T ...] [--delivered FILE ...] | --list]",
		Short: "Show a group's committed offsets and, with delivery evidence, which records it lost",
		Long: `Without --group (or with --list), list the cluster's groups: each one's state, its
protocol (classic, or consumer for a KIP-848 group) and its members' protocol type.
--describe --group GROUP, as kafka-consumer-groups.sh spells it, is --group GROUP.

Inspect a consumer group on a live cluster: per partition the committed offset (with its
leader epoch and metadata), log start offset, last stable offset (what a read_committed
consumer can reach), high watermark, lag to the last stable offset (transaction markers
are not lag), and which member owns the partition.

With --delivered FILE (repeatable; - for stdin) saying what the application processed,
each partition gets a verdict. Which offsets hold a deliverable record is read from the
partition itself (read_committed fetches with control records and the broker's
aborted-transaction list), never assumed from offset arithmetic:
  LOST        records below the committed offset that were never delivered
  STRANDED    undelivered records at or after the committed offset (the consumer will get them)
  OK          nothing undelivered
  INCOMPLETE  the scan stopped (--max-scan) below the committed offset
  ERROR       the partition could not be read (topic deleted, broker stopped answering)
  NO EVIDENCE the evidence does not name the topic
The safe rewind offset is the first lost record.

Evidence formats (auto-detected per line, named in the output; gzip accepted):
kstranded.trace/v1 (repro --trace), kstranded trace parse -o json, JSON lines as
applications log them (pino, winston, bunyan: partition and offset as numbers or
numeric strings, topic optional, at the top level or nested under msg, message, record
or kafka; other log lines are ignored), and text lines "TOPIC PARTITION OFFSET",
"PARTITION:OFFSET", "TOPIC/PARTITION:FIRST-LAST". With --pattern REGEXP every line is
read through the expression instead, as trace parse reads it: named groups partition
and offset (topic optional); lines it does not match are ignored.

What was counted and what was ignored is shown per kind of line. JSON log lines that
carry a partition and an offset are told apart by their message (msg, or winston's
message): a log with "processing" and "processed" lines, or heartbeats that mention an
offset, has several kinds, and counting them all would call a record the handler never
finished delivered. Such evidence is refused (NO EVIDENCE, exit 6, each kind listed with
its lines and offsets) until --delivered-when names the kind that means delivered:
FIELD=VALUE (msg=processed; a dotted path for a nested field), FIELD~REGEXP, or ~REGEXP
on the whole line. It applies to JSON log lines and --pattern lines (a line must match
both); traces, trace parse output and text offset lines are read whole.

No verdict without evidence: when no delivery was read (an empty file, only other log
lines, a pattern that matched nothing), a file has more malformed lines than delivery
lines, or a log has several kinds of delivery line and no --delivered-when, no partition
is judged: NO EVIDENCE, exit 6, with what would settle it. Binary
data and a truncated gzip are errors (exit 1).

` + exitHelp(
			exitCodes{exitcode.OK, "nothing lost (or, without --delivered, the offsets view: nothing judged)"},
			exitCodes{exitcode.Error, "unknown group, group without offsets, unknown --topic, unreadable evidence, broker not answering within --timeout, or (with nothing lost or stranded) a partition not fully judged"},
			exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Lost, "even if some other partition could not be judged"},
			exitCodes{exitcode.Stranded, "none lost"},
			exitCodes{exitcode.NoEvidence, "no delivery read, evidence mostly malformed, several kinds of delivery line without --delivered-when, or partitions whose topic the evidence does not name"},
			exitCodes{exitcode.Interrupted, "the partial report is marked INTERRUPTED"}),
		Example: `  kstranded inspect --brokers kafka:9092
  kstranded inspect --brokers kafka:9092 --group billing
  kstranded inspect --brokers kafka:9092 --group billing --delivered trace.jsonl
  kstranded inspect --brokers kafka:9092 --group billing --delivered app.log.gz \
      --pattern 'handled (?P<topic>\S+)\[(?P<partition>\d+)\]@(?P<offset>\d+)'
  kstranded inspect --brokers kafka:9092 --group billing --delivered app.log --delivered-when msg=processed
  app-offsets.sh | kstranded inspect --brokers kafka:9092 --group billing --topic orders --delivered -
  kstranded inspect --brokers kafka:9092 --group billing --watch 5s --count 12`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validateMode(c); err != nil {
				return err
			}
			if o.MaxScan <= 0 {
				return exitcode.Usagef("--max-scan must be > 0, got %d", o.MaxScan)
			}
			if err := positiveDur("watch", o.Watch, true); err != nil {
				return err
			}
			if o.Count < 0 {
				return exitcode.Usagef("--count must be >= 0, got %d", o.Count)
			}
			if o.Count > 0 && o.Watch == 0 {
				return exitcode.Usagef("--count needs --watch")
			}
			if err := o.evidenceFlags.check(); err != nil {
				return err
			}
			if o.stdin() == 1 && o.Watch > 0 {
				return exitcode.Usagef("--watch re-reads the evidence each time; stdin cannot be re-read")
			}
			if _, err := g.LiveKafka("inspect reads a live cluster"); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), o)
			}
			return runInspect(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Group, "group", "g", "", "consumer group to inspect (required)")
	f.StringArrayVarP(&o.Topics, "topic", "t", nil, "limit to these topics and show all their partitions (repeatable)")
	o.evidenceFlags.bind(f, "delivery evidence file (repeatable; - for stdin; gzip accepted)")
	f.Int64Var(&o.MaxScan, "max-scan", 10_000_000, "most offsets to read per partition when classifying undelivered offsets")
	f.DurationVar(&o.Watch, "watch", 0, "re-inspect at this interval and print what changed")
	f.IntVar(&o.Count, "count", 0, "with --watch: number of inspections (0: until interrupted)")
	f.BoolVar(&o.List, "list", false, "list the cluster's groups with their state and protocol (the default without --group)")
	f.BoolVar(&o.Describe, "describe", false, "inspect --group GROUP (kafka-consumer-groups.sh's spelling; this is what inspect does)")
	return c
}

// validateMode decides between listing the groups and inspecting one: --list, or no
// --group without --describe, lists; every flag about one group then asks for --group.
func (o *inspectOptions) validateMode(c *cobra.Command) error {
	group := strings.TrimSpace(o.Group) != ""
	switch {
	case o.List && o.Describe:
		return exitcode.Usagef("--list lists the groups and --describe inspects one; give one")
	case o.List && group:
		return exitcode.Usagef("--list lists every group; to inspect %s, drop --list", o.Group)
	case o.Describe && !group:
		return exitcode.Usagef("--describe needs --group GROUP (inspect --list, or inspect without --group, lists the groups)")
	case group:
		return nil
	}
	o.List = true
	for _, name := range []string{"topic", "delivered", "pattern", "delivered-when", "max-scan", "watch", "count"} {
		if c.Flags().Changed(name) {
			return exitcode.Usagef("--%s is about one group: give --group GROUP (without it, inspect lists the cluster's groups)", name)
		}
	}
	return nil
}

// deliveredWhenHelp is --delivered-when's help, for every command that reads evidence.
const deliveredWhenHelp = "which log lines of --delivered mean delivered, when the log names a record in more than one kind of line " +
	"(\"processing\" and \"processed\", heartbeats with an offset): FIELD=VALUE (a JSON field, dotted for a nested one: msg=processed), " +
	"FIELD~REGEXP (the field matches), or ~REGEXP (the whole line matches; with --pattern a line must match both); " +
	"the other lines with an offset are ignored and counted"

// checkEvidenceFlags validates --pattern and --delivered-when, which read --delivered.
func checkEvidenceFlags(delivered []string, pattern, when string) error {
	if pattern != "" {
		if len(delivered) == 0 {
			return exitcode.Usagef("--pattern reads --delivered FILE; give one")
		}
		if _, err := evidence.CompilePattern(pattern); err != nil {
			return exitcode.Usagef("%v", err)
		}
	}
	if when != "" {
		if len(delivered) == 0 {
			return exitcode.Usagef("%s picks lines of --delivered FILE; give one", evidence.WhenFlag)
		}
		if _, err := evidence.ParseWhen(when); err != nil {
			return exitcode.Usagef("%v", err)
		}
	}
	return nil
}

// readEvidence reads --delivered files, each read ending at ctx's end (a pipe gone quiet,
// a FIFO with no writer, /dev/zero: an interrupt stops them within a read).

func readEvidence(ctx context.Context, g *Globals, files []string, pattern, when string, spansComplete bool) (*evidence.Set, error) {
	if len(files) == 0 {
		return nil, nil
	}
	s := evidence.NewSet()
	s.SpansComplete = spansComplete
	if pattern != "" {
		p, err := evidence.CompilePattern(pattern)
		if err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
		s.Pattern = p
	}
	if when != "" {
		w, err := evidence.ParseWhen(when)
		if err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
		s.When = w
	}
	for _, name := range files {
		var r io.Reader
		if name == "-" {
			r, name = g.IO.In, "stdin"
		} else {
			fh, err := ctxio.Open(ctx, name)
			if err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("%w: opening --delivered %s", exitcode.ErrInterrupted, name)
				}
				return nil, fmt.Errorf("--delivered: %w", err)
			}
			defer fh.Close()
			r = fh
		}
		if err := s.Read(ctxio.Interruptible(ctx, r), name); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: reading --delivered %s", exitcode.ErrInterrupted, name)
			}
			return nil, fmt.Errorf("--delivered: %w", err)
		}
	}
	return s, nil
}

func runInspect(ctx context.Context, g *Globals, o *inspectOptions) error {
	g.warnIgnoredProperties("inspect")
	opts, err := g.KgoOpts()
	if err != nil {
		return err
	}
	k, err := inspect.NewKafka(opts, g.Timeout)
	if err != nil {
		return err
	}
	defer k.Close()
	if o.List {
		return listGroups(ctx, g, k)
	}
	return inspectLoop(ctx, g, o, k)
}

// groupLister is what listing the groups needs from the cluster.
type groupLister interface {
	ListGroups(ctx context.Context) ([]inspect.Listing, error)
}

// listGroups prints the cluster's groups.
func listGroups(ctx context.Context, g *Globals, cl groupLister) error {
	format, _ := g.Format()
	ls, err := cl.ListGroups(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.ErrInterrupted
		}
		return err
	}
	return view.PrintGroups(g.Out(), view.NewGroups(ls), format, g.Pretty())
}

// inspectLoop runs one inspection, or --watch inspections, against cl.
func inspectLoop(ctx context.Context, g *Globals, o *inspectOptions, cl inspect.Cluster) error {
	format, _ := g.Format()
	var prev *inspect.Report
	var last error
	for i := 0; ; i++ {
		ev, err := o.evidenceFlags.read(ctx, g)
		if err != nil {
			return err
		}
		r, err := inspect.Run(ctx, cl, inspect.Options{Group: o.Group, Topics: o.Topics, Evidence: ev, MaxScan: o.MaxScan})
		if err != nil {
			if ctx.Err() == nil {
				return inspectError(err)
			}
			// Interrupted: the partial report is shown (marked INTERRUPTED, partial) unless
			// --watch already showed a full one.
			if r != nil && prev == nil {
				if perr := view.PrintInspect(g.Out(), view.NewInspect(r), format, g.Pretty()); perr != nil {
					return perr
				}
			}
			return exitcode.ErrInterrupted
		}
		if prev == nil {
			err = view.PrintInspect(g.Out(), view.NewInspect(r), format, g.Pretty())
		} else {
			err = view.PrintInspectChanges(g.IO.Out, view.NewInspectChanges(r, inspect.Changes(prev, r)), format)
		}
		if err != nil {
			return err
		}
		if o.afterPoll != nil {
			o.afterPoll(i)
		}
		prev, last = r, outcome(r)
		if o.Watch == 0 || (o.Count > 0 && i+1 >= o.Count) {
			return last
		}
		select {
		case <-ctx.Done():
			return exitcode.ErrInterrupted
		case <-time.After(o.Watch):
		}
	}
}

func inspectError(err error) error {
	switch {
	case errors.Is(err, inspect.ErrEvidenceTopic):
		return fmt.Errorf("%w: %v", exitcode.ErrUsage, err)
	case errors.Is(err, context.Canceled):
		return exitcode.ErrInterrupted
	}
	return err
}

// outcome maps a report to the command's result, the code of its verdict as every
// command maps it (exitcode.ForVerdict): lost 3, stranded 4, a partition not fully
// judged 1, no evidence 6, else success. The summary line already says it.
func outcome(r *inspect.Report) error {
	s := r.Summarize()
	v := r.Verdict()
	switch v {
	case verdict.Lost:
		return exitcode.Reported(exitcode.ForVerdict(v, fmt.Sprintf("%d records on %d partitions", s.Lost, s.LostPartitions)))
	case verdict.Stranded:
		return exitcode.Reported(exitcode.ForVerdict(v, fmt.Sprintf("%d records", s.Stranded)))
	case verdict.NoEvidence, verdict.NoCommitEvidence, verdict.NoRecordEvidence:
		return exitcode.Reported(exitcode.ForVerdict(v, r.NoEvidence))
	}
	var bad []string
	for _, p := range r.Partitions {
		if p.Err != "" || (p.Judgement != nil && (p.Judgement.Verdict == verdict.Incomplete || p.Judgement.Verdict == verdict.Error)) {
			bad = append(bad, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], "...")
		}
		return fmt.Errorf("%d partitions could not be fully inspected (%s); the report above marks them", len(bad), strings.Join(bad, ", "))
	}
	return nil
}
