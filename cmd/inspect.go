package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
)

func init() { register(newInspectCmd) }

// InspectSchema names the JSON document `inspect -o json` writes.
const InspectSchema = "kstranded.inspect/v1"

// InspectWatchSchema names the JSON lines `inspect --watch -o json` writes after the first report.
const InspectWatchSchema = "kstranded.inspect-changes/v1"

type inspectOptions struct {
	Group     string
	Topics    []string
	Delivered []string
	MaxScan   int64
	Watch     time.Duration
	Count     int
}

// inspectRunner lets tests substitute the cluster.
type inspectRunner func(ctx context.Context, g *Globals, o inspectOptions) error

func newInspectCmd(g *Globals) *cobra.Command {
	return newInspectCmdWith(g, runInspect)
}

func newInspectCmdWith(g *Globals, run inspectRunner) *cobra.Command {
	o := inspectOptions{}
	c := &cobra.Command{
		Use:   "inspect --group GROUP [--topic T ...] [--delivered FILE ...]",
		Short: "Show a group's committed offsets and, with delivery evidence, which records it lost",
		Long: `Inspect a consumer group on a live cluster: per partition the committed offset (with its
leader epoch and metadata), log start offset, last stable offset (what a read_committed
consumer can reach), high watermark, lag to the last stable offset (transaction markers
are not lag), and which member owns the partition.

With --delivered FILE (repeatable; - for stdin) saying what the application processed,
each partition gets a verdict. Which offsets hold a deliverable record is read from the
partition itself (read_committed fetches with control records and the broker's
aborted-transaction list), never assumed from offset arithmetic:
  LOST        records below the committed offset that were never delivered
  PENDING     undelivered records at or after the committed offset (the consumer will get them)
  OK          nothing undelivered
  INCOMPLETE  the scan stopped (--max-scan) below the committed offset
  ERROR       the partition could not be read (topic deleted, broker stopped answering)
  NO EVIDENCE the evidence does not name the topic
The safe rewind offset is the first lost record.

Evidence formats (auto-detected, named in the output): kstranded.trace/v1 (repro
--trace), kstranded trace parse -o json, JSON lines with topic/partition/offset, and text
lines "TOPIC PARTITION OFFSET", "PARTITION:OFFSET", "TOPIC/PARTITION:FIRST-LAST".

Exit codes: 0 nothing lost; 3 records lost (even if some other partition could not be
judged); 1 errors: unknown group, group without offsets, unknown --topic, broker not
answering within --timeout, or (with nothing lost) a partition not fully judged;
2 invalid flags.`,
		Example: `  kstranded inspect --brokers kafka:9092 --group billing
  kstranded inspect --brokers kafka:9092 --group billing --delivered trace.jsonl
  app-offsets.sh | kstranded inspect --brokers kafka:9092 --group billing --topic orders --delivered -
  kstranded inspect --brokers kafka:9092 --group billing --watch 5s --count 12`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if strings.TrimSpace(o.Group) == "" {
				return exitcode.Usagef("--group is required")
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
			stdin := 0
			for _, d := range o.Delivered {
				if d == "-" {
					stdin++
				}
			}
			if stdin > 1 {
				return exitcode.Usagef("--delivered - (stdin) can be given once")
			}
			if stdin == 1 && o.Watch > 0 {
				return exitcode.Usagef("--watch re-reads the evidence each time; stdin cannot be re-read")
			}
			k, err := g.Kafka()
			if err != nil {
				return err
			}
			if k.Brokers == "" {
				return exitcode.Usagef("--brokers is required (inspect reads a live cluster)")
			}
			return run(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Group, "group", "g", "", "consumer group to inspect (required)")
	f.StringArrayVarP(&o.Topics, "topic", "t", nil, "limit to these topics and show all their partitions (repeatable)")
	f.StringArrayVar(&o.Delivered, "delivered", nil, "delivery evidence file (repeatable; - for stdin)")
	f.Int64Var(&o.MaxScan, "max-scan", 10_000_000, "most offsets to read per partition when classifying undelivered offsets")
	f.DurationVar(&o.Watch, "watch", 0, "re-inspect at this interval and print what changed")
	f.IntVar(&o.Count, "count", 0, "with --watch: number of inspections (0: until interrupted)")
	return c
}

func readEvidence(g *Globals, files []string) (*evidence.Set, error) {
	if len(files) == 0 {
		return nil, nil
	}
	s := evidence.NewSet()
	for _, name := range files {
		var r io.Reader
		if name == "-" {
			r, name = g.IO.In, "stdin"
		} else {
			fh, err := os.Open(name)
			if err != nil {
				return nil, fmt.Errorf("--delivered: %w", err)
			}
			defer fh.Close()
			r = fh
		}
		if err := s.Read(r, name); err != nil {
			return nil, fmt.Errorf("--delivered: %w", err)
		}
	}
	return s, nil
}

func runInspect(ctx context.Context, g *Globals, o inspectOptions) error {
	opts, err := g.KgoOpts()
	if err != nil {
		return err
	}
	k, err := inspect.NewKafka(opts, g.Timeout)
	if err != nil {
		return err
	}
	defer k.Close()
	return inspectLoop(ctx, g, o, k)
}

// inspectLoop runs one inspection, or --watch inspections, against cl.
func inspectLoop(ctx context.Context, g *Globals, o inspectOptions, cl inspect.Cluster) error {
	format, _ := g.Format()
	var prev *inspect.Report
	var last error
	for i := 0; ; i++ {
		ev, err := readEvidence(g, o.Delivered)
		if err != nil {
			return err
		}
		r, err := inspect.Run(ctx, cl, inspect.Options{Group: o.Group, Topics: o.Topics, Evidence: ev, MaxScan: o.MaxScan})
		if err != nil {
			if ctx.Err() != nil && prev != nil {
				return exitcode.ErrInterrupted
			}
			return inspectError(err)
		}
		if prev == nil {
			if err := printReport(g, format, r); err != nil {
				return err
			}
		} else {
			printChanges(g, format, r, inspect.Changes(prev, r))
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

// outcome maps a report to the command's result: lost records first (exit 3), then
// anything not fully judged (exit 1), else success.
func outcome(r *inspect.Report) error {
	s := r.Summarize()
	if s.Lost > 0 {
		return exitcode.Reported(fmt.Errorf("%w: %d records on %d partitions", exitcode.ErrLost, s.Lost, s.LostPartitions))
	}
	var bad []string
	for _, p := range r.Partitions {
		if p.Err != "" || (p.Judgement != nil && (p.Judgement.Verdict == inspect.VerdictIncomplete || p.Judgement.Verdict == inspect.VerdictError)) {
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

// --- view model ---

type inspectView struct {
	render.Meta
	At            time.Time       `json:"at"`
	Group         inspect.Group   `json:"group"`
	Evidence      *evidenceView   `json:"evidence"`
	Partitions    []partitionView `json:"partitions"`
	DeletedTopics []string        `json:"deleted_topics"`
	StrayEvidence []inspect.Note  `json:"stray_evidence"`
	Summary       inspect.Summary `json:"summary"`
	Complete      bool            `json:"complete"`
	Note          string          `json:"note,omitempty"`
	Requests      int             `json:"requests"`
}

type evidenceView struct {
	Sources        []evidence.Source    `json:"sources"`
	MalformedTotal int                  `json:"malformed_total"`
	Malformed      []evidence.Malformed `json:"malformed"`
}

type partitionView struct {
	inspect.Offsets
	Lag       *int64             `json:"lag"`
	Judgement *inspect.Judgement `json:"judgement,omitempty"`
}

const noEvidenceNote = "loss cannot be judged without delivery evidence (--delivered FILE)"

func buildInspectView(r *inspect.Report) inspectView {
	v := inspectView{
		Meta:          render.NewMeta(InspectSchema, "inspect"),
		At:            r.At.UTC(),
		Group:         r.Group,
		Partitions:    make([]partitionView, 0, len(r.Partitions)),
		DeletedTopics: r.DeletedTopics,
		StrayEvidence: r.StrayEvidence,
		Summary:       r.Summarize(),
		Requests:      r.Requests,
	}
	if v.DeletedTopics == nil {
		v.DeletedTopics = []string{}
	}
	if v.StrayEvidence == nil {
		v.StrayEvidence = []inspect.Note{}
	}
	for _, p := range r.Partitions {
		pv := partitionView{Offsets: p.Offsets, Judgement: p.Judgement}
		if l := p.Lag(); l >= 0 {
			pv.Lag = &l
		}
		v.Partitions = append(v.Partitions, pv)
	}
	v.Complete = v.Summary.Incomplete == 0 && v.Summary.Errors == 0
	if r.Evidence == nil {
		v.Note = noEvidenceNote
	} else {
		v.Evidence = &evidenceView{Sources: r.Evidence.Sources, MalformedTotal: r.Evidence.MalformedTotal(), Malformed: r.Evidence.Malformed}
		if v.Evidence.Malformed == nil {
			v.Evidence.Malformed = []evidence.Malformed{}
		}
	}
	return v
}

func printReport(g *Globals, format render.Format, r *inspect.Report) error {
	v := buildInspectView(r)
	if format == render.JSON {
		return render.WriteJSON(g.IO.Out, v)
	}
	return writeInspectTable(g.IO.Out, v, g.Pretty())
}

func num(o int64) string {
	if o < 0 {
		return "-"
	}
	return strconv.FormatInt(o, 10)
}

func ranges(rs []inspect.Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

func writeInspectTable(w io.Writer, v inspectView, pretty bool) error {
	st := render.NewStyles(w)
	grp := v.Group
	state := grp.State
	if state == "" {
		state = "-"
	}
	proto := grp.ProtocolType
	if grp.Protocol != "" {
		proto += "/" + grp.Protocol
	}
	if proto == "" {
		proto = "-"
	}
	fmt.Fprintf(w, "group %s  state %s  protocol %s  members %d\n", st.Bold.Render(grp.ID), state, proto, len(grp.Members))
	if grp.Err != "" {
		fmt.Fprintf(w, "  group description failed: %s\n", grp.Err)
	}
	for _, m := range grp.Members {
		inst := ""
		if m.InstanceID != "" {
			inst = " instance " + m.InstanceID
		}
		fmt.Fprintf(w, "  member %s (client %s, host %s%s): %d partitions\n", m.ID, m.ClientID, m.Host, inst, m.Partitions)
	}
	if v.Evidence != nil {
		for _, s := range v.Evidence.Sources {
			extra := ""
			if s.Topic != "" {
				extra = ", topic " + s.Topic
			}
			if s.Group != "" {
				extra += ", group " + s.Group
				if s.Group != grp.ID {
					extra += " " + st.Warn.Render("(not the inspected group)")
				}
			}
			fmt.Fprintf(w, "evidence %s: %s%s, %d deliveries, %d malformed lines\n", s.Name, s.Format, extra, s.Records, s.Malformed)
		}
		for _, m := range v.Evidence.Malformed {
			fmt.Fprintf(w, "  %s:%d: %s: %q\n", m.Source, m.Line, m.Reason, m.Text)
		}
		if shown := len(v.Evidence.Malformed); v.Evidence.MalformedTotal > shown {
			fmt.Fprintf(w, "  ... %d more malformed lines\n", v.Evidence.MalformedTotal-shown)
		}
	}
	hasMeta := false
	for _, p := range v.Partitions {
		if p.Metadata != "" {
			hasMeta = true
		}
	}
	grid := render.Grid{Header: []string{"TOPIC", "PARTITION", "COMMITTED", "EPOCH"}}
	if hasMeta {
		grid.Header = append(grid.Header, "METADATA")
	}
	grid.Header = append(grid.Header, "LOG-START", "LAST-STABLE", "HIGH-WATERMARK", "LAG", "OWNER")
	if v.Evidence != nil {
		grid.Header = append(grid.Header, "DELIVERED", "LOST", "PENDING", "DUP", "REWIND", "VERDICT")
	}
	for i, h := range grid.Header {
		switch h {
		case "TOPIC", "METADATA", "OWNER", "VERDICT":
			grid.Align = append(grid.Align, render.Left)
		default:
			_ = i
			grid.Align = append(grid.Align, render.Right)
		}
	}
	for _, p := range v.Partitions {
		epoch := "-"
		if p.CommittedEpoch >= 0 {
			epoch = strconv.Itoa(int(p.CommittedEpoch))
		}
		lag := "-"
		if p.Lag != nil {
			lag = strconv.FormatInt(*p.Lag, 10)
		}
		owner := p.Owner
		if owner == "" {
			owner = "-"
		}
		row := []string{p.Topic, strconv.Itoa(int(p.Partition)), num(p.Committed), epoch}
		if hasMeta {
			row = append(row, p.Metadata)
		}
		row = append(row, num(p.LogStart), num(p.LastStable), num(p.HighWatermark), lag, owner)
		if v.Evidence != nil {
			j := p.Judgement
			rewind := "-"
			if j.SafeRewind != nil {
				rewind = strconv.FormatInt(*j.SafeRewind, 10)
			}
			verdict := string(j.Verdict)
			if pretty {
				verdict = st.Verdict(verdict)
			}
			row = append(row, strconv.FormatInt(j.Delivered, 10), strconv.FormatInt(j.LostCount, 10),
				strconv.FormatInt(j.PendingCount, 10), strconv.FormatInt(j.Duplicates, 10), rewind, verdict)
		}
		grid.Rows = append(grid.Rows, row)
	}
	if err := render.WriteGrid(w, grid, pretty); err != nil {
		return err
	}
	// Details: the ranges and what the scan found, per partition that has any.
	for _, p := range v.Partitions {
		name := fmt.Sprintf("%s/%d", p.Topic, p.Partition)
		if p.Err != "" {
			fmt.Fprintf(w, "%s: %s %s\n", name, st.Bad.Render("error:"), p.Err)
		}
		j := p.Judgement
		if j == nil {
			continue
		}
		if len(j.Lost) > 0 {
			fmt.Fprintf(w, "%s: %s %s (%d records); safe rewind offset %d\n", name, st.Bad.Render("LOST"), ranges(j.Lost), j.LostCount, *j.SafeRewind)
		}
		if len(j.Pending) > 0 {
			fmt.Fprintf(w, "%s: pending %s (%d records, the consumer will still get them)\n", name, ranges(j.Pending), j.PendingCount)
		}
		for _, n := range j.NotDeliverable {
			fmt.Fprintf(w, "%s: %s: %s, not lost\n", name, inspect.Range{First: n.First, Last: n.Last}, n.What)
		}
		for _, n := range j.InvalidEvidence {
			fmt.Fprintf(w, "%s: %s %s: %s\n", name, st.Warn.Render("invalid evidence"), inspect.Range{First: n.First, Last: n.Last}, n.What)
		}
		if j.Reason != "" && p.Err == "" && j.Verdict != inspect.VerdictNoEvidence {
			fmt.Fprintf(w, "%s: %s\n", name, j.Reason)
		}
	}
	for _, n := range v.StrayEvidence {
		fmt.Fprintf(w, "%s %s\n", st.Warn.Render("invalid evidence:"), n.What)
	}
	for _, t := range v.DeletedTopics {
		fmt.Fprintf(w, "%s topic %s no longer exists; the group still has committed offsets for it\n", st.Bad.Render("error:"), t)
	}
	fmt.Fprintln(w, summaryLine(st, v))
	return nil
}

func summaryLine(st render.Styles, v inspectView) string {
	s := v.Summary
	if v.Evidence == nil {
		return fmt.Sprintf("%d partitions, total lag %d. %s", s.Partitions, s.Lag, st.Dim.Render("Note: "+noEvidenceNote+"."))
	}
	incomplete := ""
	if !v.Complete {
		incomplete = " " + st.Warn.Render(fmt.Sprintf("INCOMPLETE: %d partitions not fully judged.", max(s.Incomplete, s.Errors)))
	}
	if s.Lost > 0 {
		return st.Bad.Render(fmt.Sprintf("LOST: %d records on %d of %d partitions were committed past without being delivered.", s.Lost, s.LostPartitions, s.Partitions)) +
			fmt.Sprintf(" pending %d, delivered %d, duplicates %d.", s.Pending, s.Delivered, s.Duplicates) + incomplete
	}
	if s.Pending > 0 {
		return st.Warn.Render(fmt.Sprintf("No records lost; %d pending (not yet delivered, not committed past).", s.Pending)) +
			fmt.Sprintf(" delivered %d, duplicates %d.", s.Delivered, s.Duplicates) + incomplete
	}
	if !v.Complete {
		return incomplete[1:]
	}
	return st.Good.Render(fmt.Sprintf("OK: no records lost on %d partitions.", s.Judged)) + fmt.Sprintf(" delivered %d, duplicates %d.", s.Delivered, s.Duplicates)
}

func printChanges(g *Globals, format render.Format, r *inspect.Report, cs []inspect.Change) {
	if format == render.JSON {
		if cs == nil {
			cs = []inspect.Change{}
		}
		_ = render.WriteJSON(g.IO.Out, struct {
			render.Meta
			At      time.Time        `json:"at"`
			Changes []inspect.Change `json:"changes"`
			Summary inspect.Summary  `json:"summary"`
		}{render.NewMeta(InspectWatchSchema, "inspect"), r.At.UTC(), cs, r.Summarize()})
		return
	}
	ts := r.At.Format("15:04:05")
	if len(cs) == 0 {
		fmt.Fprintf(g.IO.Out, "%s no change\n", ts)
		return
	}
	for _, c := range cs {
		fmt.Fprintf(g.IO.Out, "%s %s\n", ts, c)
	}
}
