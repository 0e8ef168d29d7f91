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
	Group        string
	Topics       []string
	Delivered    []string
	Pattern      string
	When         string // --delivered-when
	OTLPComplete bool   // --otlp-complete
	To           []string
	FromFile     string
	Execute      bool
	DryRun       bool
	AllowForward bool
	Force        bool
	UndoFile     string
	MaxScan      int64

	// completed by Validate
	targets []rewind.Target
	source  rewind.Source
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
  --to T/P=OFFSET    targets by hand (repeatable or comma separated), e.g. --to stranded/0=82;
                     with --delivered too, the counts say which records were lost
  --from-file FILE   a saved plan (rewind -o json) or an undo file written by --execute

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
  kstranded rewind --brokers kafka:9092 --from-file kstranded-undo-billing-20260102T030405Z.json --allow-forward --execute`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
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
	f.StringArrayVar(&o.Delivered, "delivered", nil, "delivery evidence file, as for inspect (repeatable; - for stdin; gzip accepted)")
	f.StringVar(&o.Pattern, "pattern", "", "read --delivered through this regular expression (named groups partition, offset, topic optional), as inspect and trace parse do")
	f.StringVar(&o.When, "delivered-when", "", deliveredWhenHelp)
	f.BoolVar(&o.OTLPComplete, "otlp-complete", false, otlpCompleteHelp)
	f.StringArrayVar(&o.To, "to", nil, "target TOPIC/PARTITION=OFFSET (repeatable, or comma separated)")
	f.StringVar(&o.FromFile, "from-file", "", "apply a saved plan (rewind -o json) or an undo file")
	f.BoolVar(&o.Execute, "execute", false, "apply the plan (default: dry run)")
	f.BoolVar(&o.DryRun, "dry-run", false, "only show the plan (the default; conflicts with --execute)")
	f.BoolVar(&o.AllowForward, "allow-forward", false, "allow moving an offset forward (skipping records), e.g. to restore an undo file")
	f.BoolVar(&o.Force, "force", false, "restore an undo file although the group moved on since the rewind (the records that skips are counted)")
	f.StringVar(&o.UndoFile, "undo-file", "", "where --execute writes the offsets it replaces (default kstranded-undo-GROUP-TIME.json)")
	f.Int64Var(&o.MaxScan, "max-scan", 10_000_000, "most offsets to read per partition when judging and counting records")
	return c
}

// validate checks the flags and reads --to and --from-file.
func (o *rewindOptions) validate(g *Globals) error {
	if o.Execute && o.DryRun {
		return exitcode.Usagef("--execute and --dry-run contradict each other")
	}
	if len(o.To) > 0 && o.FromFile != "" {
		return exitcode.Usagef("--to and --from-file both set targets; give one")
	}
	if len(o.To) == 0 && o.FromFile == "" && len(o.Delivered) == 0 {
		return exitcode.Usagef("rewind needs --delivered FILE (plan from the loss, as inspect finds it), --to TOPIC/PARTITION=OFFSET, or --from-file FILE")
	}
	if o.Force && o.FromFile == "" {
		return exitcode.Usagef("--force applies to restoring an undo file (--from-file)")
	}
	if len(o.Topics) > 0 && (len(o.To) > 0 || o.FromFile != "") {
		return exitcode.Usagef("--topic limits a plan made from --delivered; --to and --from-file name their partitions")
	}
	if o.MaxScan <= 0 {
		return exitcode.Usagef("--max-scan must be > 0, got %d", o.MaxScan)
	}
	if err := checkEvidenceFlags(o.Delivered, o.Pattern, o.When); err != nil {
		return err
	}
	stdin := 0
	for _, d := range o.Delivered {
		if d == "-" {
			stdin++
		}
	}
	if stdin > 1 || (stdin == 1 && o.FromFile == "-") {
		return exitcode.Usagef("stdin (-) can be read once")
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
		if o.Group != "" && o.Group != file.Group {
			return exitcode.Usagef("--group %s, but --from-file %s is for group %s", o.Group, name, file.Group)
		}
		o.Group, o.targets, o.source = file.Group, file.Targets, file.Kind
	}
	if strings.TrimSpace(o.Group) == "" {
		return exitcode.Usagef("--group is required")
	}
	k, err := g.Kafka()
	if err != nil {
		return err
	}
	if k.Brokers == "" {
		return exitcode.Usagef("--brokers is required (rewind changes a live cluster)")
	}
	return nil
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
	return rewindWith(ctx, g, o, k)
}

// rewindWith plans against cl, prints the plan, and with --execute applies it.
func rewindWith(ctx context.Context, g *Globals, o *rewindOptions, cl rewind.Cluster) error {
	format, _ := g.Format()
	ev, err := readEvidence(ctx, g, o.Delivered, o.Pattern, o.When, o.OTLPComplete)
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
	plan, err := rewind.NewPlan(ctx, cl, rewind.Options{
		Group: o.Group, Topics: o.Topics, Evidence: ev,
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
