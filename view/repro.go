package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/repro"
	"github.com/kstranded/kstranded/traceevent"
)

// ReproSchema versions the JSON of `kstranded repro`.
const ReproSchema = "kstranded.repro/v2"

// Repro is the JSON document of `kstranded repro`: one entry per policy run.
type Repro struct {
	render.Meta
	Verdict verdict.Verdict `json:"verdict"`
	Lost    int             `json:"lost"`
	// Complete is false when any run was cut short (an error, an interrupt): its
	// verdict is then only what it reached (LOST, else INCOMPLETE).
	Complete bool       `json:"complete"`
	Runs     []ReproRun `json:"runs"`
}

// ReproRun is one run.
type ReproRun struct {
	RunID     string `json:"run_id"`
	Topic     string `json:"topic"`
	Group     string `json:"group"`
	Brokers   string `json:"brokers"`
	Embedded  bool   `json:"embedded_broker"`
	Simulated bool   `json:"simulated"`
	// Client says what consumed: the model ("model (librdkafka live)", "model
	// (simulated)") or the real client and its release ("@confluentinc/kafka-javascript
	// 1.10.1", repro --real-client).
	Client     string            `json:"client"`
	Workload   ReproWorkload     `json:"workload"`
	Policy     string            `json:"policy"`
	Handler    string            `json:"handler"`
	Commit     string            `json:"commit"`
	Settings   map[string]string `json:"settings"`
	Produced   ReproProduced     `json:"produced"`
	Phases     []ReproPhase      `json:"phases"`
	Partitions []ReproPartition  `json:"partitions"`
	Verdict    verdict.Verdict   `json:"verdict"`
	Lost       int               `json:"lost"`
	LossAtMs   *float64          `json:"loss_at_ms"`
	Restarts   int               `json:"restarts"`
	// Members are the group's consumers (--members, --rebalance-at); empty for one
	// consumer that stays.
	Members     []ReproMember `json:"members"`
	ElapsedMs   float64       `json:"elapsed_ms"`
	Interrupted bool          `json:"interrupted"`
	Complete    bool          `json:"complete"`
	Error       Text          `json:"error"` // what cut the run short
	Warnings    []string      `json:"warnings"`
	// FetchOrders: simulate's outcome with each partition holding data served first
	// (the first entry is the run's own), when the shape's outcome may depend on which
	// partition a broker answers first; empty when not explored (see the warnings).
	FetchOrders []ReproFetchOrder `json:"fetch_orders"`
	// everyPhase: the run went through every phase and is incomplete for another
	// reason (repro.Result.EveryPhase)
	everyPhase bool
}

// ReproFetchOrder is the outcome with the records of partition first_partition served
// first.
type ReproFetchOrder struct {
	FirstPartition int32 `json:"first_partition"`
	// Order: the partitions holding data in the order the fetch list served them.
	Order []int32 `json:"order"`
	// Phase2Order: the partitions in the order phase 2's records reached the consumer
	// (optional in repro.v2: documents written before 2026-12-05 have none).
	Phase2Order []int32 `json:"phase2_order,omitempty"`
	// EveryOrder: the partitions hold the same records, so with any order of the fetch
	// list, and of phase 2's records, the partition served k-th in phase 1 and j-th in
	// phase 2 has the phase-1 outcome of this order's k-th and the phase-2 outcome of
	// phase2_order's j-th (repro.FetchOrder).
	EveryOrder bool                  `json:"every_order"`
	Partitions []ReproOrderPartition `json:"partitions"`
}

// ReproOrderPartition is one partition's outcome under a fetch order.
type ReproOrderPartition struct {
	Partition int32              `json:"partition"`
	Verdict   verdict.Verdict    `json:"verdict"`
	Lost      []traceevent.Range `json:"lost"`
	Stranded  []traceevent.Range `json:"stranded"`
	Committed int64              `json:"committed"`
}

// ReproMember is one consumer of the group: how many distinct records it handed to its
// handler (the partitions' delivered counts are over every member, and a record
// delivered by two members counts as a duplicate there).
type ReproMember struct {
	Name      string   `json:"name"`
	Delivered int      `json:"delivered"`
	JoinedMs  float64  `json:"joined_ms"`
	LeftMs    *float64 `json:"left_ms"` // --rebalance-at leave; null: it stayed to the end
	// MaxPollLeaves counts how often librdkafka left the group for it on
	// max.poll.interval.ms (its assignment lost, rejoined at its next poll).
	MaxPollLeaves int `json:"max_poll_leaves"`
}

// ReproWorkload is the workload spec and what each partition received.
type ReproWorkload struct {
	Spread       string          `json:"spread"`
	Transactions int             `json:"transactions"`
	Records      int             `json:"records"`
	Partitions   []ReproProduced `json:"partitions"`
}

// ReproProduced is what one partition received in phase 1. A run's "produced" is its
// first workload partition (the only one with the one-partition shorthand), kept for
// readers of the document from before --spread.
type ReproProduced struct {
	Partition int32 `json:"partition"`
	Count     int   `json:"count"`
	First     int64 `json:"first_offset"`
	Last      int64 `json:"last_offset"`
	High      int64 `json:"high_watermark"`
}

// ReproPhase is the state at a phase end.
type ReproPhase struct {
	Phase      int                   `json:"phase"`
	ElapsedMs  float64               `json:"elapsed_ms"`
	Partitions []ReproPhasePartition `json:"partitions"`
}

// ReproPhasePartition is one partition at a phase end.
type ReproPhasePartition struct {
	Partition int32           `json:"partition"`
	Delivered int             `json:"delivered"`
	Committed int64           `json:"committed"`
	Frontier  int64           `json:"frontier"`
	High      int64           `json:"high_watermark"`
	Verdict   verdict.Verdict `json:"verdict"`
	Lost      int             `json:"lost"`
	Stranded  int             `json:"stranded"`
}

// ReproPartition is the verdict of one partition.
type ReproPartition struct {
	Partition        int32              `json:"partition"`
	Produced         int                `json:"produced"`
	Delivered        int                `json:"delivered"`
	Duplicates       int                `json:"duplicates"`
	CommittedByPhase []int64            `json:"committed_by_phase"`
	FrontierByPhase  []int64            `json:"frontier_by_phase"`
	VerdictByPhase   []verdict.Verdict  `json:"verdict_by_phase"`
	High             int64              `json:"high_watermark"`
	Lost             []traceevent.Range `json:"lost"`
	LostCount        int                `json:"lost_count"`
	Stranded         []traceevent.Range `json:"stranded"`
	StrandedCount    int                `json:"stranded_count"`
	SafeRewind       *int64             `json:"safe_rewind"`
	Verdict          verdict.Verdict    `json:"verdict"`
	// Judgement is the one judge's answer at the end of the run, the same document
	// inspect and trace parse give.
	Judgement *JudgementDoc `json:"judgement"`
}

// NewRepro builds the view of one or more runs.
func NewRepro(results []*repro.Result) Repro {
	v := Repro{Meta: render.NewMeta(ReproSchema, "repro"), Verdict: verdict.OK, Complete: true}
	for _, r := range results {
		run := ReproRun{
			RunID: r.RunID, Topic: r.Topic, Group: r.Group, Brokers: r.Brokers, Embedded: r.Embedded,
			Policy: string(r.Policy), Handler: string(r.Handler), Commit: string(r.Commit), Settings: r.Settings,
			Verdict: r.Verdict, Lost: r.Lost(), ElapsedMs: ms(r.Elapsed), Interrupted: r.Interrupted, Warnings: nonNil(r.Warnings), Restarts: r.Restarts,
			Complete: r.Complete, Error: Text(r.Error), everyPhase: r.EveryPhase,
			Phases: []ReproPhase{}, Partitions: []ReproPartition{}, Members: []ReproMember{}, FetchOrders: []ReproFetchOrder{},
		}
		for _, fo := range r.FetchOrders {
			rf := ReproFetchOrder{FirstPartition: fo.First, Order: append([]int32{}, fo.Order...), Phase2Order: append([]int32{}, fo.Phase2Order...), EveryOrder: fo.EveryOrder, Partitions: []ReproOrderPartition{}}
			for _, p := range fo.Partitions {
				rf.Partitions = append(rf.Partitions, ReproOrderPartition{Partition: p.Partition, Verdict: p.Verdict,
					Lost: nonNil(p.Lost), Stranded: nonNil(p.Stranded), Committed: p.Committed})
			}
			run.FetchOrders = append(run.FetchOrders, rf)
		}
		run.Simulated = r.Simulated
		run.Client = r.Client
		if run.Client == "" {
			run.Client = map[bool]string{true: "model (simulated)", false: "model (librdkafka live)"}[r.Simulated]
		}
		if run.Handler == "" {
			run.Handler = string(eachbatch.EachBatch)
		}
		run.Workload = ReproWorkload{Spread: r.Produced.Spec.String(), Transactions: r.Produced.Spec.Transactions,
			Records: r.Produced.Records(), Partitions: []ReproProduced{}}
		for _, pp := range r.Produced.Partitions {
			if n := len(pp.Offsets); n > 0 {
				run.Workload.Partitions = append(run.Workload.Partitions,
					ReproProduced{Partition: pp.Partition, Count: n, First: pp.First(), Last: pp.Last(), High: pp.High})
			}
		}
		if len(run.Workload.Partitions) > 0 {
			run.Produced = run.Workload.Partitions[0]
		}
		if r.LossAt > 0 {
			run.LossAtMs = ptr(ms(r.LossAt))
		}
		for _, m := range r.Members {
			rm := ReproMember{Name: m.Name, Delivered: m.Delivered, JoinedMs: ms(m.Joined), MaxPollLeaves: m.MaxPollLeaves}
			if m.Left > 0 {
				rm.LeftMs = ptr(ms(m.Left))
			}
			run.Members = append(run.Members, rm)
		}
		for _, ph := range r.Phases {
			p := ReproPhase{Phase: ph.N, ElapsedMs: ms(ph.Elapsed), Partitions: []ReproPhasePartition{}}
			for _, pp := range ph.Partitions {
				p.Partitions = append(p.Partitions, ReproPhasePartition(pp))
			}
			run.Phases = append(run.Phases, p)
		}
		for _, p := range r.Partitions {
			rp := ReproPartition{
				Partition: p.Partition, Produced: p.Produced, Delivered: p.Delivered, Duplicates: p.Duplicates,
				CommittedByPhase: nonNil(p.CommittedByPhase), FrontierByPhase: nonNil(p.FrontierByPhase), VerdictByPhase: nonNil(p.VerdictByPhase), High: p.High,
				Lost: nonNil(p.Lost), LostCount: p.LostCount(), Stranded: nonNil(p.Stranded), StrandedCount: p.StrandedCount(),
				Verdict: p.Verdict, Judgement: JudgeDoc(p.Judgement),
			}
			if len(p.Lost) > 0 {
				rp.SafeRewind = ptr(p.Lost[0].First)
			}
			run.Partitions = append(run.Partitions, rp)
		}
		v.Runs = append(v.Runs, run)
		v.Lost += run.Lost
		v.Complete = v.Complete && r.Complete
	}
	v.Verdict = repro.Outcome(results) // the domain's, as the exit's
	return v
}

// PrintRepro prints the view: JSON, or a verdict line and a table per run (one
// comparison table when several policies ran).
func PrintRepro(w io.Writer, v Repro, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	st := render.NewStyles(nw)
	if len(v.Runs) > 1 {
		for _, r := range v.Runs {
			fmt.Fprintln(nw, render.Wrap(verdictLine(st, r), render.Width(nw), "  "))
		}
		fmt.Fprintln(w)
		if err := render.WriteGrid(w, comparisonGrid(v, pretty), pretty); err != nil {
			return err
		}
		for _, r := range v.Runs {
			for _, wn := range r.Warnings {
				fmt.Fprintln(nw, st.Warn.Render("warning: ")+r.Policy+"/"+handlerName(r.Handler)+"/"+r.Commit+": "+render.Safe(wn))
			}
		}
		return nil
	}
	for _, r := range v.Runs {
		fmt.Fprintln(nw, render.Wrap(verdictLine(st, r), render.Width(nw), "  "))
		where := fmt.Sprintf("brokers %s%s", render.Safe(r.Brokers), map[bool]string{true: " (embedded)", false: ""}[r.Embedded])
		if r.Simulated {
			where = "simulated (no broker, virtual time)"
		}
		// on a terminal the subtitle wraps at word boundaries to the terminal's width
		subtitle := render.Wrap(fmt.Sprintf("client %s · topic %s · group %s · %s · commit %s · workload %s · %s",
			render.Safe(r.Client), render.Safe(r.Topic), render.Safe(r.Group), where, r.Commit, workloadLine(r.Workload), render.Safe(settingsLine(r.Settings, r.Policy, r.Handler))), render.Width(nw), "  ")
		for _, l := range strings.Split(subtitle, "\n") {
			fmt.Fprintln(nw, st.Dim.Render(l)) // a line at a time: a styled block pads its lines
		}
		if r.Restarts > 0 {
			fmt.Fprintln(nw, st.Dim.Render(fmt.Sprintf("phase 3: %d consumer restart(s) in the same group", r.Restarts)))
		}
		if err := render.WriteGrid(w, runGrid(r, pretty), pretty); err != nil {
			return err
		}
		if len(r.Members) > 0 {
			fmt.Fprintln(nw, st.Dim.Render(membersLine(r.Members)))
		}
		for _, wn := range r.Warnings {
			fmt.Fprintln(nw, st.Warn.Render("warning: ")+render.Safe(wn))
		}
	}
	return nil
}

// membersLine says what each member of the group delivered, and when it joined or left.
func membersLine(ms []ReproMember) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		p := fmt.Sprintf("%s delivered %d", m.Name, m.Delivered)
		if m.JoinedMs > 0 {
			p += ", joined at " + render.Millis(m.JoinedMs)
		}
		if m.LeftMs != nil {
			p += ", left at " + render.Millis(*m.LeftMs)
		}
		if m.MaxPollLeaves > 0 {
			p += fmt.Sprintf(", dropped %dx on max.poll.interval", m.MaxPollLeaves)
		}
		parts[i] = p
	}
	return "members: " + strings.Join(parts, " · ")
}

// runLabel names a run in its summary line: the policy, the handler when it is not
// eachBatch, and the commit mode when it is not the client's auto-commit (so each line
// of --policy all --commit all says which run it is).
func runLabel(r ReproRun) string {
	l := r.Policy
	if r.Client != "" && !strings.HasPrefix(r.Client, "model") {
		l = r.Client // the real client's release (repro --real-client)
	}
	if r.Handler != "" && r.Handler != string(eachbatch.EachBatch) {
		l += " " + handlerName(r.Handler)
	}
	if r.Commit != "" && r.Commit != "auto" {
		l += " (commit " + r.Commit + ")"
	}
	return l
}

// policyOrClient is a comparison row's first cell: the policy, or with clients (runs of
// different clients side by side) the client, the model's with the policy it ran.
func policyOrClient(r ReproRun, clients bool) string {
	if !clients {
		return r.Policy
	}
	if strings.HasPrefix(r.Client, "model") {
		return r.Policy + " " + r.Client
	}
	return r.Client
}

// handlerName is the JS name of a handler (eachBatch, eachMessage).
func handlerName(h string) string {
	switch eachbatch.Handler(h) {
	case eachbatch.EachMessage:
		return "eachMessage"
	case eachbatch.EachBatch, "":
		return "eachBatch"
	}
	return h
}

// stoppedIn says where an incomplete run stopped, and why.
func stoppedIn(r ReproRun) string {
	if r.everyPhase {
		return string(r.Error)
	}
	return fmt.Sprintf("stopped in phase %d: %s", len(r.Phases)+1, r.Error)
}

func verdictLine(st render.Styles, r ReproRun) string {
	prefix := ""
	switch {
	case r.Interrupted:
		prefix = st.Warn.Render("INTERRUPTED") + " (partial) "
	case !r.Complete:
		prefix = st.Warn.Render("INCOMPLETE") + fmt.Sprintf(" (%s) ", render.Safe(stoppedIn(r)))
	}
	lossAt := ""
	if r.LossAtMs != nil {
		lossAt = ", dropped from the cache at " + render.Millis(*r.LossAtMs)
	}
	if w := fetchOrderWarning(r); w != "" && (r.Verdict == verdict.Lost && r.Lost == 0 || r.Verdict == verdict.Stranded && strandedCount(r) == 0) {
		// the verdict is another fetch order's (repro.Simulate): say which
		return fmt.Sprintf("%s%s %s: nothing lost with the partitions served in the order shown, but %s", prefix, st.Verdict(r.Verdict), runLabel(r),
			strings.TrimPrefix(w, repro.FetchOrderWarning))
	}
	switch r.Verdict {
	case verdict.Lost:
		var parts []string
		for _, p := range r.Partitions {
			if p.LostCount > 0 {
				parts = append(parts, fmt.Sprintf("%d on %s/%d (%s, safe rewind %d)", p.LostCount, r.Topic, p.Partition, kpart.Join(p.Lost), *p.SafeRewind))
			}
		}
		if len(parts) > 3 {
			parts = append(parts[:3], fmt.Sprintf("%d more partitions", len(parts)-3))
		}
		return fmt.Sprintf("%s%s %s: %d records lost on %d of %d partitions: %s%s", prefix, st.Verdict(verdict.Lost), runLabel(r), r.Lost,
			lostPartitions(r), len(r.Partitions), strings.Join(parts, "; "), lossAt)
	case verdict.Stranded:
		return fmt.Sprintf("%s%s %s: %d records not delivered, not committed past (yet)", prefix, st.Verdict(verdict.Stranded), runLabel(r), strandedCount(r))
	case verdict.Incomplete:
		d, n := 0, 0
		for _, p := range r.Partitions {
			d += p.Delivered
			n += p.StrandedCount
		}
		if r.Interrupted {
			prefix = st.Warn.Render("INTERRUPTED") + " "
		} else {
			prefix = render.Safe(stoppedIn(r)) + ": "
		}
		return fmt.Sprintf("%s %s: %sno verdict: %d records delivered, %d not delivered so far", st.Verdict(verdict.Incomplete), runLabel(r), prefix, d, n)
	}
	d := 0
	for _, p := range r.Partitions {
		d += p.Delivered
	}
	return fmt.Sprintf("%s%s %s: every record delivered (%d), nothing lost", prefix, st.Verdict(verdict.OK), runLabel(r), d)
}

// fetchOrderWarning is the first warning of a simulation whose outcome depends on which
// partition is served first ("" for none).
func fetchOrderWarning(r ReproRun) string {
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, repro.FetchOrderWarning) {
			return w
		}
	}
	return ""
}

func strandedCount(r ReproRun) int {
	n := 0
	for _, p := range r.Partitions {
		n += p.StrandedCount
	}
	return n
}

func lostPartitions(r ReproRun) int {
	n := 0
	for _, p := range r.Partitions {
		if p.LostCount > 0 {
			n++
		}
	}
	return n
}

func workloadLine(w ReproWorkload) string {
	if w.Spread == "" {
		return "-"
	}
	txn := "not transactional"
	if w.Transactions > 0 {
		txn = fmt.Sprintf("%d transaction(s)", w.Transactions)
	}
	return fmt.Sprintf("%s (%d records, %s)", w.Spread, w.Records, txn)
}

// runGrid is one run's table. On a terminal a phase's committed offset and the ledger's
// frontier share a cell ("82 (82)") and a count its ranges ("118 (82-199)"), and a
// narrow terminal may hide the optional columns; on a pipe every value has its own
// column, so scripts can cut them.
func runGrid(r ReproRun, pretty bool) render.Grid {
	g := render.Grid{
		Header: []string{"PARTITION", "PRODUCED", "DELIVERED", "DUPLICATES"},
		Align:  []render.Align{render.Right, render.Right, render.Right, render.Right},
	}
	phases := 0
	for _, p := range r.Partitions {
		phases = max(phases, len(p.CommittedByPhase))
	}
	col := func(h string, a render.Align, optional bool) {
		if optional {
			g.Optional = append(g.Optional, len(g.Header))
		}
		g.Header, g.Align = append(g.Header, h), append(g.Align, a)
	}
	g.Optional = []int{3, 1} // DUPLICATES, PRODUCED
	for i := 1; i <= phases; i++ {
		if pretty {
			col(fmt.Sprintf("P%d COMMITTED (FRONTIER)", i), render.Right, false)
		} else {
			col(fmt.Sprintf("P%d COMMITTED", i), render.Right, false)
			col(fmt.Sprintf("P%d FRONTIER", i), render.Right, false)
		}
	}
	col("HIGH WATERMARK", render.Right, true)
	if pretty {
		col("LOST", render.Left, false)
		col("STRANDED", render.Left, false)
	} else {
		col("LOST", render.Right, false)
		col("LOST RANGES", render.Left, false)
		col("STRANDED", render.Right, false)
		col("STRANDED RANGES", render.Left, false)
	}
	col("VERDICT BY PHASE", render.Left, true)
	col("VERDICT", render.Left, false)
	for _, p := range r.Partitions {
		row := []string{fmt.Sprint(p.Partition), fmt.Sprint(p.Produced), fmt.Sprint(p.Delivered), fmt.Sprint(p.Duplicates)}
		for i := 0; i < phases; i++ {
			if pretty {
				row = append(row, phaseCell(p, i))
			} else {
				row = append(row, phaseOffset(p.CommittedByPhase, i), phaseOffset(p.FrontierByPhase, i))
			}
		}
		row = append(row, fmt.Sprint(p.High))
		if pretty {
			row = append(row, countRanges(p.LostCount, p.Lost), countRanges(p.StrandedCount, p.Stranded))
		} else {
			row = append(row, fmt.Sprint(p.LostCount), kpart.Join(p.Lost), fmt.Sprint(p.StrandedCount), kpart.Join(p.Stranded))
		}
		row = append(row, joinVerdicts(p.VerdictByPhase), string(p.Verdict))
		g.Rows = append(g.Rows, row)
	}
	return g
}

// phaseOffset is the offset of phase i, or "-" where the phase did not run or has none.
func phaseOffset(offs []int64, i int) string {
	if i >= len(offs) {
		return "-"
	}
	return kpart.OffsetText(offs[i])
}

// comparisonGrid is the table of several runs (--policy all, --commit all), a row per
// run and partition; on a pipe one value per cell, as runGrid.
func comparisonGrid(v Repro, pretty bool) render.Grid {
	g := render.Grid{
		Header: []string{"POLICY", "HANDLER", "COMMIT", "PARTITION", "DELIVERED", "PRODUCED", "DUPLICATES"},
		Align:  []render.Align{render.Left, render.Left, render.Left, render.Right, render.Right, render.Right, render.Right},
	}
	if pretty {
		g.Header = []string{"POLICY", "HANDLER", "COMMIT", "PARTITION", "DELIVERED", "DUPLICATES"}
		g.Align = g.Align[:6]
	}
	// a narrow terminal hides, in this order: duplicates, phase 3, restarts, the
	// verdict by phase, then phase 1 (phase 2's commit is where the loss shows)
	g.Optional = []int{len(g.Header) - 1} // DUPLICATES
	p1 := -1
	for i := 1; i <= 3; i++ {
		if pretty {
			g.Header, g.Align = append(g.Header, fmt.Sprintf("P%d COMMITTED (FRONTIER)", i)), append(g.Align, render.Right)
			switch i {
			case 1:
				p1 = len(g.Header) - 1
			case 3:
				g.Optional = append(g.Optional, len(g.Header)-1)
			}
		} else {
			g.Header = append(g.Header, fmt.Sprintf("P%d COMMITTED", i), fmt.Sprintf("P%d FRONTIER", i))
			g.Align = append(g.Align, render.Right, render.Right)
		}
	}
	g.Optional = append(g.Optional, len(g.Header)) // RESTARTS
	g.Header, g.Align = append(g.Header, "RESTARTS"), append(g.Align, render.Right)
	if pretty {
		g.Header, g.Align = append(g.Header, "LOST"), append(g.Align, render.Left)
	} else {
		g.Header, g.Align = append(g.Header, "LOST", "LOST RANGES"), append(g.Align, render.Right, render.Left)
	}
	g.Optional = append(g.Optional, len(g.Header)) // VERDICT BY PHASE
	if p1 >= 0 {
		g.Optional = append(g.Optional, p1)
	}
	g.Header, g.Align = append(g.Header, "VERDICT BY PHASE", "VERDICT"), append(g.Align, render.Left, render.Left)
	// runs of different clients (repro --real-client --compare-model): the first column
	// says which client ran, the policy beside the model's
	clients := false
	for _, r := range v.Runs {
		clients = clients || r.Client != v.Runs[0].Client
	}
	if clients {
		g.Header[0] = "CLIENT"
	}
	for _, r := range v.Runs {
		for _, p := range r.Partitions {
			var row []string
			if pretty {
				row = []string{policyOrClient(r, clients), handlerName(r.Handler), r.Commit, fmt.Sprint(p.Partition), fmt.Sprintf("%d/%d", p.Delivered, p.Produced), fmt.Sprint(p.Duplicates),
					phaseCell(p, 0), phaseCell(p, 1), phaseCell(p, 2), fmt.Sprint(r.Restarts), countRanges(p.LostCount, p.Lost)}
			} else {
				row = []string{policyOrClient(r, clients), handlerName(r.Handler), r.Commit, fmt.Sprint(p.Partition), fmt.Sprint(p.Delivered), fmt.Sprint(p.Produced), fmt.Sprint(p.Duplicates)}
				for i := 0; i < 3; i++ {
					row = append(row, phaseOffset(p.CommittedByPhase, i), phaseOffset(p.FrontierByPhase, i))
				}
				row = append(row, fmt.Sprint(r.Restarts), fmt.Sprint(p.LostCount), kpart.Join(p.Lost))
			}
			g.Rows = append(g.Rows, append(row, joinVerdicts(p.VerdictByPhase), string(p.Verdict)))
		}
	}
	return g
}

// phaseCell shows the committed offset at a phase end with the ledger's frontier (the
// safe commit) beside it.
func phaseCell(p ReproPartition, i int) string {
	if i >= len(p.CommittedByPhase) {
		return "-"
	}
	c := kpart.OffsetText(p.CommittedByPhase[i])
	if i < len(p.FrontierByPhase) && p.FrontierByPhase[i] >= 0 {
		return fmt.Sprintf("%s (%d)", c, p.FrontierByPhase[i])
	}
	return c
}

// settingsLine is the run's settings as the consumer used them: the batch the handler got
// (a release without js.consumer.max.batch.size batches 32 whatever --batch-size asked;
// eachMessage gets one record at a time, no batch), not only what was asked.
func settingsLine(s map[string]string, policy, handler string) string {
	parallel := s["handler_parallel"] + " at a time"
	batch := "batch " + s["batch_size"]
	if handler == string(eachbatch.EachMessage) {
		parallel = "one at a time (eachMessage)" // --handler-parallel is eachBatch's
		batch = "eachMessage"
		if s["batch_size"] == "-1" && eachbatch.Policy(policy).FixedBatchSize(eachbatch.EachBatch) == 0 {
			batch += " (max.batch.size -1: cache unbounded)"
		}
	} else if fixed := eachbatch.Policy(policy).FixedBatchSize(eachbatch.Handler(handler)); fixed > 0 && fmt.Sprint(fixed) != s["batch_size"] {
		batch = fmt.Sprintf("batch %d (%s's fixed size; --batch-size %s not applied)", fixed, policy, s["batch_size"])
	}
	return fmt.Sprintf("scale %s · %s × concurrency %s · %s per record, %s · max.poll.interval %s",
		s["time_scale"], batch, s["concurrency"], s["handler_delay"], parallel, s["max_poll_interval"])
}

// ProgressLine renders a live status line for terminals, headed by label (RunOf), fitted
// to width columns (0: no limit): redrawn in place, a line that wrapped would leave its
// second half on the screen at every redraw. The least telling parts go first (records in
// flight, records cached, the elapsed time, the cache's expiry); what is still too wide is
// cut with "…".
func ProgressLine(label string, p repro.Progress, width int) string {
	exp := "-"
	if p.UntilClear > 0 {
		exp = p.UntilClear.Round(100 * time.Millisecond).String()
	}
	head := fmt.Sprintf("%s phase %d", label, p.Phase)
	parts := []struct {
		text string
		keep int // the parts with the lowest keep are dropped first
	}{
		{fmt.Sprintf("delivered %d", p.Delivered), 4},
		{fmt.Sprintf("cached %d", p.Cached), 1},
		{fmt.Sprintf("in flight %d", p.InFlight), 0},
		{"cache expires in " + exp, 3},
		{p.Elapsed.Round(100 * time.Millisecond).String(), 2},
	}
	line := func(drop int) string {
		out := head
		for _, pt := range parts {
			if pt.keep >= drop {
				out += " · " + pt.text
			}
		}
		return out
	}
	for drop := 0; drop <= 5; drop++ {
		if l := line(drop); width <= 0 || lipgloss.Width(l) <= width {
			return l
		}
	}
	return xansi.Truncate(head, width, "…")
}

// RunOf heads the progress line of run i of n (from 1): "run 3 of 6 (v1.10.1/eachBatch/
// auto, about 1m20s left)". The time left is the mean of the runs finished so far times
// the runs still to go, including this one; before the first run finishes it is unknown.
func RunOf(i, n int, label string, elapsed time.Duration) string {
	if n <= 1 {
		return label
	}
	left := ""
	if done := i - 1; done > 0 {
		left = ", about " + (elapsed / time.Duration(done) * time.Duration(n-done)).Round(time.Second).String() + " left"
	}
	return fmt.Sprintf("run %d of %d (%s%s)", i, n, label, left)
}

func countRanges(n int, rs []traceevent.Range) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", n, kpart.Join(rs))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ptr[T any](v T) *T { return &v }

// nonNil returns s, or an empty slice for nil, so JSON says [] rather than null.
func nonNil[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

func joinVerdicts(vs []verdict.Verdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, " > ")
}

// Consume is the JSON document of `kstranded repro consume`.
type Consume struct {
	render.Meta
	Topic  string `json:"topic"`
	Group  string `json:"group"`
	Policy string `json:"policy"`
	Commit string `json:"commit"`
	// ExistingGroup: the group had committed offsets before the run
	// (--use-existing-group); each partition's committed_at_start says where.
	ExistingGroup bool               `json:"existing_group"`
	Quiescent     bool               `json:"quiescent"`
	Interrupted   bool               `json:"interrupted"`
	ElapsedMs     float64            `json:"elapsed_ms"`
	Partitions    []ConsumePartition `json:"partitions"`
	Verdict       verdict.Verdict    `json:"verdict"`
	Warnings      []string           `json:"warnings"`
}

// ConsumePartition is one partition's deliveries.
type ConsumePartition struct {
	Partition  int32              `json:"partition"`
	Delivered  int                `json:"delivered"`
	Duplicates int                `json:"duplicates"`
	Ranges     []traceevent.Range `json:"delivered_ranges"`
	Committed  int64              `json:"committed"`
	// CommittedAtStart is the group's committed offset when the run was assigned the
	// partition (-1: none): where it started.
	CommittedAtStart int64           `json:"committed_at_start"`
	High             int64           `json:"high_watermark"`
	Lost             kpart.RangeSet  `json:"lost"`
	Stranded         kpart.RangeSet  `json:"stranded"`
	Verdict          verdict.Verdict `json:"verdict"`
	// Judgement is the one judge's answer, the document every command gives.
	Judgement *JudgementDoc `json:"judgement"`
}

// NewConsume builds the view of a consume run.
func NewConsume(r *repro.ConsumeResult) Consume {
	v := Consume{Meta: render.NewMeta("kstranded.consume/v1", "repro consume"), Topic: r.Topic, Group: r.Group,
		Policy: string(r.Policy), Commit: string(r.Commit), ExistingGroup: r.ExistingGroup, Quiescent: r.Quiescent, Interrupted: r.Interrupted, ElapsedMs: ms(r.Elapsed), Partitions: []ConsumePartition{}, Verdict: r.Verdict, Warnings: nonNil(r.Warnings)}
	for _, p := range r.Partitions {
		v.Partitions = append(v.Partitions, ConsumePartition{Partition: p.Partition, Delivered: p.Delivered, Duplicates: p.Duplicates,
			Ranges: nonNil(p.Ranges), Committed: p.Committed, CommittedAtStart: p.StartCommitted, High: p.High, Lost: nonNil(p.Lost), Stranded: nonNil(p.Stranded), Verdict: p.Verdict,
			Judgement: JudgeDoc(p.Judgement)})
	}
	return v
}

// PrintConsume prints a consume run.
func PrintConsume(w io.Writer, v Consume, f render.Format, pretty bool) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	nw := render.NotesOf(w) // prose: with the table on a terminal, to stderr on a pipe
	state := "stopped"
	if v.Quiescent {
		state = "quiescent"
	}
	if v.Interrupted {
		state = "interrupted"
	}
	fmt.Fprintf(nw, "consumed %s in group %s with policy %s: %s after %s\n", render.Safe(v.Topic), render.Safe(v.Group), v.Policy, state, render.Millis(v.ElapsedMs))
	if v.ExistingGroup {
		var from []string
		for _, p := range v.Partitions {
			if p.CommittedAtStart >= 0 {
				from = append(from, fmt.Sprintf("%d: %d -> %s", p.Partition, p.CommittedAtStart, kpart.OffsetText(p.Committed)))
			}
		}
		fmt.Fprintf(nw, "the group had committed offsets before this run; committed by partition, at start -> now: %s\n", strings.Join(from, ", "))
	}
	g := render.Grid{Header: []string{"PARTITION", "DELIVERED", "DUPLICATES", "DELIVERED OFFSETS", "COMMITTED", "HIGH WATERMARK", "LOST", "STRANDED", "VERDICT"},
		Align: []render.Align{render.Right, render.Right, render.Right, render.Left, render.Right, render.Right, render.Left, render.Left, render.Left},
		// a narrow terminal keeps partition, committed, lost, stranded and the verdict
		Optional: []int{2, 3, 5, 1}}
	st := render.NewStyles(nw)
	for _, p := range v.Partitions {
		g.Rows = append(g.Rows, []string{fmt.Sprint(p.Partition), fmt.Sprint(p.Delivered), fmt.Sprint(p.Duplicates),
			kpart.Join(p.Ranges), kpart.OffsetText(p.Committed), fmt.Sprint(p.High), p.Lost.String(), p.Stranded.String(), st.Verdict(p.Verdict)})
	}
	if err := render.WriteGrid(w, g, pretty); err != nil {
		return err
	}
	for _, wn := range v.Warnings {
		fmt.Fprintln(render.Prose(w), st.Warn.Render("warning: ")+render.Safe(wn))
	}
	return nil
}

// Produced is the JSON document of `kstranded repro produce`. The top-level partition,
// count and offsets are the first workload partition's, as before --spread; the
// workload lists every partition.
type Produced struct {
	render.Meta
	Topic string `json:"topic"`
	ReproProduced
	Workload ReproWorkload `json:"workload"`
}

// NewProduced builds the view of a produce.
func NewProduced(r repro.ProduceResult) Produced {
	v := Produced{Meta: render.NewMeta("kstranded.produce/v1", "repro produce"), Topic: r.Topic,
		Workload: ReproWorkload{Spread: r.Spec.String(), Transactions: r.Spec.Transactions, Records: r.Records(), Partitions: []ReproProduced{}}}
	for _, pp := range r.Partitions {
		v.Workload.Partitions = append(v.Workload.Partitions, ReproProduced{Partition: pp.Partition, Count: len(pp.Offsets),
			First: pp.First(), Last: pp.Last(), High: pp.High})
	}
	if len(v.Workload.Partitions) > 0 {
		v.ReproProduced = v.Workload.Partitions[0]
	}
	return v
}

// PrintProduced prints a produce: one line per partition.
func PrintProduced(w io.Writer, v Produced, f render.Format) error {
	if f == render.JSON {
		return render.WriteJSON(w, v)
	}
	how := "not transactional"
	switch n := v.Workload.Transactions; {
	case n == 1:
		how = "in one transaction"
	case n > 1:
		how = fmt.Sprintf("in %d transactions", n)
	}
	for _, p := range v.Workload.Partitions {
		fmt.Fprintf(w, "produced %d records to %s/%d %s: offsets %d-%d, high watermark %d\n",
			p.Count, render.Safe(v.Topic), p.Partition, how, p.First, p.Last, p.High)
	}
	return nil
}
