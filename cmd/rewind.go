package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/buildinfo"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/rewind"
	"github.com/kstranded/kstranded/view"
)

type rewindOptions struct {
	Group  string
	Topics []string
	evidenceFlags
	To           []string
	FromFile     string
	Execute      bool
	DryRun       bool
	AllowForward bool
	Force        bool
	UndoFile     string
	MaxScan      int64

	// kafka-consumer-groups.sh --reset-offsets spellings (kcgReset)
	ResetOffsets bool
	ToOffset     int64
	ToEarliest   bool
	ToLatest     bool
	ShiftBy      int64
	ToDatetime   string
	ByDuration   string
	AllTopics    bool
	Export       bool

	// completed by Validate
	targets []rewind.Target
	source  rewind.Source
	reset   *rewind.Reset
}

// newRewindCmd builds `kstranded rewind`; runF, when not nil (tests), receives the
// validated options instead of the plan being made against a cluster.
func newRewindCmd(g *Globals, runF func(context.Context, *rewindOptions) error) *cobra.Command {
	o := &rewindOptions{}
	c := &cobra.Command{
		Use:   "rewind --group GROUP (--delivered FILE ... | --to TOPIC/PARTITION=OFFSET,... | --from-file FILE) [--execute]",
		Short: "Move a group's committed offsets back to its first lost records (dry run unless --execute)",
		Long: `Plan, and with --execute apply, the repair for lost records: per partition, move the
group's committed offset back to the first record it committed past without delivering,
so the group's next consumer delivers everything lost (and, again, whatever was
delivered after it).

Targets come from one of:
  --delivered FILE   the delivery evidence, analysed exactly as ` + "`kstranded inspect`" + ` does:
                     each LOST partition moves to its safe rewind offset
  --to T/P=OFFSET    targets by hand (repeatable or comma separated), e.g. --to stranded/0=82
                     (or stranded:0=82, as kafka-consumer-groups.sh spells a partition);
                     with --delivered too, the counts say which records were lost
  --from-file FILE   a saved plan (rewind -o json), an undo file written by --execute, or
                     kafka-consumer-groups.sh's CSV (topic,partition,offset lines)
  --reset-offsets    as kafka-consumer-groups.sh: --to-offset N, --to-earliest, --to-latest,
                     --shift-by N, --to-datetime 2026-12-01T10:00:00.000 or --by-duration
                     PT1H, for --topic T (all partitions), --topic T:0,1 or --all-topics;
                     a target outside the log is refused, not clamped; --export writes
                     the plan as the tool's CSV

Without --execute nothing is written: the table shows each partition's committed offset,
the target, and the records that will be delivered again (read from the partition:
transaction markers and aborted records are not counted; with evidence, split into LOST,
never seen by the application, and ALREADY-DELIVERED, which it will see twice).

Safety rules (each refusal names its reason, exit 5, nothing changed):
  - the group must have no members: a live consumer commits its own position and would
    overwrite the rewind, and Kafka accepts an admin offset commit only for an empty group
  - never forward (that skips records) unless --allow-forward; restoring an undo file is
    a forward move, so its restore command carries --allow-forward
  - never below the log start offset (those records were deleted) or beyond the high
    watermark
  - a saved plan is refused if the committed offset moved since it was made, and an undo
    file if the group is no longer where the rewind left it (its rewound_to): a consumer
    that committed since would have its progress undone or skipped; --force restores
    anyway, with the records it skips counted

--execute first writes the current offsets (with leader epoch and metadata) to the undo
file (--undo-file, default kstranded-undo-GROUP-TIME.json, never overwritten) and prints
the command that restores them (a partition that had no committed offset is restored by
deleting the group's offset there); after committing it reads the offsets back and shows
they match: offset and metadata, which carries a per-run token (an undo file restores the
original metadata instead), so that a second rewind or a consumer committing in between is
reported rather than a DONE.

--delivered reads the same evidence as inspect (gzip accepted; --pattern REGEXP reads an
application's own log; --delivered-when FIELD=VALUE picks the log lines that mean
delivered, e.g. msg=processed), and shows what it counted and ignored per kind of line.
Evidence that names no delivery, whose lines are mostly malformed, or whose log names
records in several kinds of line ("processing" and "processed") without
--delivered-when, makes no plan: NO EVIDENCE, exit 6.

` + exitHelp(
			exitCodes{exitcode.OK, "plan shown, or applied and verified, or nothing to rewind"},
			exitCodes{exitcode.Error, "also when the offsets read back differ from the ones written, or carry another writer's metadata: another writer (a consumer, a second rewind) intervened; the rewind commits a per-run token (kstranded-rewind:...) as the offset metadata to tell its commit apart"},
			exitCodes{exitcode.Lost, "records never delivered were deleted below the log start: no rewind restores them (the plan is still shown or applied)"},
			exitCodes{exitcode.Usage, "--to syntax, unknown partition, conflicting flags, a file that is not a plan or undo file"},
			exitCodes{exitcode.Refused, "also beyond the high watermark, or a saved plan whose offsets moved"},
			exitCodes{exitcode.NoEvidence, "--delivered names no delivery, its lines are mostly malformed, or it has several kinds of delivery line and no --delivered-when: no plan made"}),
		Example: `  kstranded rewind --brokers kafka:9092 --group billing --delivered trace.jsonl
  kstranded rewind --brokers kafka:9092 --group billing --delivered trace.jsonl --execute
  kstranded rewind --brokers kafka:9092 --group billing --to orders/3=1200,orders/7=880
  kstranded rewind --brokers kafka:9092 --group billing --delivered trace.jsonl -o json > plan.json
  kstranded rewind --brokers kafka:9092 --from-file plan.json --execute
  kstranded rewind --bootstrap-server kafka:9092 --group billing --reset-offsets --to-datetime 2026-12-01T10:00:00.000 --topic orders:3,7 --execute
  kstranded rewind --brokers kafka:9092 --from-file kstranded-undo-billing-20260102T030405Z.json --allow-forward --execute`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validateReset(c, time.Now()); err != nil {
				return err
			}
			if err := o.validate(g); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), o)
			}
			return runRewind(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Group, "group", "g", "", "consumer group to repair (required unless --from-file names it)")
	f.StringArrayVarP(&o.Topics, "topic", "t", nil, "with --delivered: limit the plan to these topics (repeatable)")
	o.evidenceFlags.bind(f, "delivery evidence file, as for inspect (repeatable; - for stdin; gzip accepted)")
	f.StringArrayVar(&o.To, "to", nil, "target TOPIC/PARTITION=OFFSET or TOPIC:PARTITION=OFFSET (repeatable, or comma separated)")
	f.StringVar(&o.FromFile, "from-file", "", "apply a saved plan (rewind -o json) or an undo file")
	f.BoolVar(&o.Execute, "execute", false, "apply the plan (default: dry run)")
	f.BoolVar(&o.DryRun, "dry-run", false, "only show the plan (the default; conflicts with --execute)")
	f.BoolVar(&o.AllowForward, "allow-forward", false, "allow moving an offset forward (skipping records), e.g. to restore an undo file")
	f.BoolVar(&o.Force, "force", false, "restore an undo file although the group moved on since the rewind (the records that skips are counted)")
	f.StringVar(&o.UndoFile, "undo-file", "", "where --execute writes the offsets it replaces (default kstranded-undo-GROUP-TIME.json)")
	f.Int64Var(&o.MaxScan, "max-scan", 10_000_000, "most offsets to read per partition when judging and counting records")
	f.BoolVar(&o.ResetOffsets, "reset-offsets", false, "kafka-consumer-groups.sh's verb: plan targets from one of --to-offset, --to-earliest, --to-latest, --shift-by, --to-datetime, --by-duration for --topic T[:P,P] or --all-topics")
	f.Int64Var(&o.ToOffset, "to-offset", 0, "with --reset-offsets: every partition in scope to this offset")
	f.BoolVar(&o.ToEarliest, "to-earliest", false, "with --reset-offsets: to the log start offset")
	f.BoolVar(&o.ToLatest, "to-latest", false, "with --reset-offsets: to the high watermark (a forward move: needs --allow-forward)")
	f.Int64Var(&o.ShiftBy, "shift-by", 0, "with --reset-offsets: the committed offset plus N (negative re-delivers)")
	f.StringVar(&o.ToDatetime, "to-datetime", "", "with --reset-offsets: to the first record at or after YYYY-MM-DDTHH:mm:SS.sss[zone] (local time without a zone)")
	f.StringVar(&o.ByDuration, "by-duration", "", "with --reset-offsets: to the first record at or after now minus an ISO-8601 duration (PT1H, P1DT2H)")
	f.BoolVar(&o.AllTopics, "all-topics", false, "with --reset-offsets: every topic the group has committed offsets for")
	f.BoolVar(&o.Export, "export", false, "write the plan as kafka-consumer-groups.sh's CSV (topic,partition,offset lines) instead of the table; --from-file reads it back")
	return c
}

// validateReset reads kafka-consumer-groups.sh's --reset-offsets flags into o.reset: one
// rule, and the partitions it applies to (--topic T, T:0,1, or --all-topics). The rule
// flags are accepted without --reset-offsets too: they mean the same thing.
func (o *rewindOptions) validateReset(c *cobra.Command, now time.Time) error {
	fl := c.Flags()
	var rules []string
	for _, name := range []string{"to-offset", "to-earliest", "to-latest", "shift-by", "to-datetime", "by-duration"} {
		if fl.Changed(name) {
			rules = append(rules, "--"+name)
		}
	}
	switch {
	case len(rules) > 1:
		return exitcode.Usagef("%s each set the targets; give one", strings.Join(rules, " and "))
	case len(rules) == 0 && o.ResetOffsets:
		return exitcode.Usagef("--reset-offsets needs where to: --to-offset N, --to-earliest, --to-latest, --shift-by N, --to-datetime T or --by-duration D (or kstranded's --to TOPIC/PARTITION=OFFSET)")
	case len(rules) == 0 && o.AllTopics:
		return exitcode.Usagef("--all-topics scopes a --reset-offsets rule (--to-earliest, ...); give one")
	case len(rules) == 0:
		return nil
	}
	other := ""
	switch {
	case len(o.To) > 0:
		other = "--to"
	case o.FromFile != "":
		other = "--from-file"
	case len(o.Delivered) > 0:
		other = "--delivered"
	}
	if other != "" {
		return exitcode.Usagef("%s and %s both set the targets; give one", rules[0], other)
	}
	r := &rewind.Reset{}
	switch rules[0] {
	case "--to-offset":
		if o.ToOffset < 0 {
			return exitcode.Usagef("--to-offset must be >= 0, got %d", o.ToOffset)
		}
		r.Kind, r.N = rewind.ToOffset, o.ToOffset
	case "--to-earliest":
		r.Kind = rewind.ToEarliest
	case "--to-latest":
		r.Kind = rewind.ToLatest
	case "--shift-by":
		r.Kind, r.N = rewind.ShiftBy, o.ShiftBy
	case "--to-datetime":
		t, err := rewind.ParseDateTime(o.ToDatetime, time.Local)
		if err != nil {
			return exitcode.Usagef("--to-datetime %v", err)
		}
		r.Kind, r.Millis = rewind.ToTime, t.UnixMilli()
	case "--by-duration":
		d, err := rewind.ParseISODuration(o.ByDuration)
		if err != nil {
			return exitcode.Usagef("--by-duration %v", err)
		}
		r.Kind, r.Millis = rewind.ToTime, now.Add(-d).UnixMilli()
	}
	switch {
	case o.AllTopics && len(o.Topics) > 0:
		return exitcode.Usagef("--all-topics and --topic both scope the reset; give one")
	case !o.AllTopics && len(o.Topics) == 0:
		return exitcode.Usagef("%s needs the partitions it applies to: --topic TOPIC (all its partitions), --topic TOPIC:0,1, or --all-topics", rules[0])
	case len(o.Topics) > 0:
		scope, err := rewind.ParseScope(o.Topics)
		if err != nil {
			return exitcode.Usagef("--topic %v", err)
		}
		r.Scope = scope
	}
	o.reset = r
	return nil
}

// validate checks the flags and reads --to and --from-file.
func (o *rewindOptions) validate(g *Globals) error {
	if o.Execute && o.DryRun {
		return exitcode.Usagef("--execute and --dry-run contradict each other")
	}
	if len(o.To) > 0 && o.FromFile != "" {
		return exitcode.Usagef("--to and --from-file both set targets; give one")
	}
	if len(o.To) == 0 && o.FromFile == "" && len(o.Delivered) == 0 && o.reset == nil {
		return exitcode.Usagef("rewind needs --delivered FILE (plan from the loss, as inspect finds it), --to TOPIC/PARTITION=OFFSET, or --from-file FILE")
	}
	if o.Force && o.FromFile == "" {
		return exitcode.Usagef("--force applies to restoring an undo file (--from-file)")
	}
	if len(o.Topics) > 0 && (len(o.To) > 0 || o.FromFile != "") {
		return exitcode.Usagef("--topic limits a plan made from --delivered or scopes a --reset-offsets rule; --to and --from-file name their partitions")
	}
	if o.Export && o.Execute {
		return exitcode.Usagef("--export writes the plan as CSV and changes nothing; apply it later with --from-file FILE --execute")
	}
	if o.Export && g.Output == "json" {
		return exitcode.Usagef("--export writes CSV; -o json writes the plan as JSON; give one")
	}
	if o.MaxScan <= 0 {
		return exitcode.Usagef("--max-scan must be > 0, got %d", o.MaxScan)
	}
	if err := o.evidenceFlags.check(); err != nil {
		return err
	}
	if o.stdin() == 1 && o.FromFile == "-" {
		return exitcode.Usagef("stdin (-) can be read once: --delivered - and --from-file -")
	}
	if len(o.To) > 0 {
		ts, err := rewind.ParseTargets(o.To)
		if err != nil {
			return exitcode.Usagef("--to %v", err)
		}
		o.targets, o.source = ts, rewind.FromFlag
	}
	if o.FromFile != "" {
		var r io.Reader = g.IO.In
		name := "stdin"
		if o.FromFile != "-" {
			fh, err := os.Open(o.FromFile)
			if err != nil {
				return fmt.Errorf("--from-file: %w", err)
			}
			defer fh.Close()
			r, name = fh, o.FromFile
		}
		file, err := view.ReadRewindFile(r, name)
		if err != nil {
			return exitcode.Usagef("--from-file %v", err)
		}
		if o.Group != "" && file.Group != "" && o.Group != file.Group {
			return exitcode.Usagef("--group %s, but --from-file %s is for group %s", o.Group, name, file.Group)
		}
		if file.Group != "" { // kafka-consumer-groups.sh's three-column CSV names none: --group does
			o.Group = file.Group
		}
		o.targets, o.source = file.Targets, file.Kind
	}
	if strings.TrimSpace(o.Group) == "" {
		return exitcode.Usagef("--group is required")
	}
	_, err := g.LiveKafka("rewind changes a live cluster")
	return err
}

func runRewind(ctx context.Context, g *Globals, o *rewindOptions) error {
	g.warnIgnoredProperties("rewind")
	opts, err := g.KgoOpts()
	if err != nil {
		return err
	}
	k, err := rewind.NewKafka(opts, g.Timeout)
	if err != nil {
		return err
	}
	defer k.Close()
	return rewindWith(ctx, g, o, rewindCluster(k))
}

// rewindCluster is the cluster runRewind plans and commits against: the broker's. A test
// wraps it to interrupt the run at a chosen step (after the commit was sent).
var rewindCluster = func(k *rewind.Kafka) rewind.Cluster { return k }

// rewindWith plans against cl, prints the plan, and with --execute applies it.
func rewindWith(ctx context.Context, g *Globals, o *rewindOptions, cl rewind.Cluster) error {
	format, _ := g.Format()
	ev, err := o.evidenceFlags.read(ctx, g)
	if err != nil {
		return err
	}
	if ev != nil {
		if why := ev.Insufficient(); why != "" {
			// No plan from evidence that says nothing: it would find nothing lost and
			// report "nothing to rewind", a false all-clear.
			if err := view.PrintEvidenceRead(g.IO.Err, ev); err != nil {
				return err
			}
			return fmt.Errorf("%w: NO EVIDENCE: %s; no plan made; %s", exitcode.ErrNoEvidence, why, ev.Settle())
		}
	}
	topics := o.Topics
	if o.reset != nil {
		topics = nil // the reset's scope
	}
	plan, err := rewind.NewPlan(ctx, cl, rewind.Options{
		Group: o.Group, Topics: topics, Evidence: ev, Reset: o.reset,
		Targets: o.targets, Source: o.source, AllowForward: o.AllowForward, Force: o.Force, MaxScan: o.MaxScan,
	})
	if err != nil {
		switch {
		case errors.Is(err, rewind.ErrUnknownPartition):
			return fmt.Errorf("%w: %v", exitcode.ErrUsage, err)
		case errors.Is(err, inspect.ErrEvidenceTopic):
			return fmt.Errorf("%w: %v", exitcode.ErrUsage, err)
		case errors.Is(err, context.Canceled):
			return exitcode.ErrInterrupted
		}
		return err
	}
	if !o.Execute {
		if o.Export {
			if err := view.WriteRewindCSV(g.IO.Out, plan); err != nil {
				return err
			}
			return planOutcome(plan)
		}
		if err := view.PrintRewind(g.Out(), view.NewRewindPlan(plan), format, g.Pretty()); err != nil {
			return err
		}
		return planOutcome(plan)
	}

	undo := o.UndoFile
	if undo == "" {
		undo = rewind.DefaultUndoPath(".", plan.Group.ID, time.Now())
	}
	restore := func(path string) string { return restoreCommand(g, plan.Group.ID, path) }
	res, xerr := rewind.Execute(ctx, cl, plan, rewind.ExecOptions{UndoPath: undo, UniqueUndo: o.UndoFile == "", Version: buildinfo.Version(), Restore: restore})
	if err := view.PrintRewind(g.Out(), view.NewRewindExecution(plan, res, xerr), format, g.Pretty()); err != nil {
		return err
	}
	switch {
	case xerr == nil:
		return unrecoverable(plan)
	case rewind.IsRefusal(xerr):
		return fmt.Errorf("%w: %v", exitcode.ErrRefused, xerr)
	case errors.Is(xerr, context.Canceled):
		return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, xerr)
	}
	return xerr
}

// planOutcome is the exit of a dry run: refused (5) when the plan refuses a move
// (rewind.Plan.Refusal), else as unrecoverable says.
func planOutcome(plan *rewind.Plan) error {
	if why := plan.Refusal(); why != "" {
		return fmt.Errorf("%w: %s", exitcode.ErrRefused, why)
	}
	return unrecoverable(plan)
}

// unrecoverable is the outcome of a plan that leaves records no rewind restores: exit 3,
// records lost, whatever the moves did.
func unrecoverable(plan *rewind.Plan) error {
	if n := plan.UnrecoverableCount(); n > 0 {
		return fmt.Errorf("%w: %d offsets never delivered were deleted below the log start; no rewind restores them", exitcode.ErrLost, n)
	}
	return nil
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// restoreCommand is the command that applies an undo file. -X values are left out (they
// may hold secrets); --config paths are kept.
func restoreCommand(g *Globals, group, path string) string {
	args := []string{"kstranded", "rewind"}
	if g.Brokers != "" {
		args = append(args, "--brokers", shellQuote(g.Brokers))
	}
	for _, c := range g.ConfigFiles {
		args = append(args, "--config", shellQuote(c))
	}
	args = append(args, "--group", shellQuote(group), "--from-file", shellQuote(path), "--allow-forward", "--execute")
	s := strings.Join(args, " ")
	if len(g.X) > 0 {
		s += "   # plus your -X connection properties"
	}
	return s
}
