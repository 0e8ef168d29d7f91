package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/watch"
)

type watchOptions struct {
	Groups     []string
	GroupRegex string
	evidenceFlags
	Listen     string
	Interval   time.Duration
	StallAfter time.Duration
	Checkpoint string
	MaxScan    int64
	Count      int
	// OTLP serves POST /v1/traces (evidenceFlags.OTLPComplete states every delivery is
	// exported).
	OTLP        bool
	OTLPCapture string
}

// newWatchCmd builds `kstranded watch`; runF, when not nil (tests), receives the
// validated options.
func newWatchCmd(g *Globals, runF func(context.Context, *watchOptions) error) *cobra.Command {
	o := &watchOptions{}
	c := &cobra.Command{
		Use:   "watch",
		Short: "Judge groups continuously from their commits and the application's evidence; serve Prometheus metrics",
		Long: `Follow consumer groups and the application's delivery evidence as it is written, and
judge every partition at each --interval with the rule inspect uses (the one judge): LOST,
STRANDED, OK, or not judged (NO EVIDENCE, NO COMMIT EVIDENCE, NO RECORD EVIDENCE). Lag says
nothing of what was delivered: a commit that jumped past stranded records shows lag 0, and
this is the alarm that fires then.

A partition is STALLED when records wait past its committed offset and neither a delivery
nor a commit came for --stall-after: a signal of its own, apart from loss.

Evidence: each --delivered FILE is followed like tail -F (rotation and truncation survived;
a FILE ending in .gz, a rotated log, is read once); - reads standard input. Every format
inspect --delivered reads is accepted (JSON lines, text lines, repro traces, --pattern).
Without --delivered nothing is judged, and commits and stalls are still watched.

OpenTelemetry: --otlp also serves POST /v1/traces on --listen, an OTLP/HTTP receiver
(protobuf or JSON bodies, gzip accepted) for an SDK's or a collector's otlphttp exporter.
Every consumer "process" span (kafkajs with @opentelemetry/instrumentation-kafkajs, and
the other clients' instrumentations: the semantic-convention attributes of every version)
is a delivery. A trace stream is usually sampled: a span proves a delivery, a missing span
proves nothing, so partitions whose only evidence is spans stay NO EVIDENCE unless
--otlp-complete states that every delivery is exported (no sampling, nothing dropped).
Spans always add to --delivered files. --otlp-capture FILE appends every request as a
JSON line of TracesData (what inspect --delivered reads).

Metrics on http://--listen/metrics (Prometheus text format): kstranded_records_lost,
kstranded_records_lost_total, kstranded_records_stranded, kstranded_partition_stalled,
kstranded_partition_stalled_seconds, kstranded_committed_offset, kstranded_delivered_offset,
kstranded_partition_judged (why not in the label "why"), kstranded_partition_verdict,
kstranded_evidence_age_seconds, kstranded_evidence_lines_total, kstranded_otlp_spans_total, kstranded_up,
kstranded_evaluation_duration_seconds, kstranded_evaluation_errors_total. Alert rules:
docs/alerts/kstranded.rules.yml. A verdict change prints one line (one JSON object with
-o json). --checkpoint FILE keeps the deliveries and verdicts across restarts (written
atomically after each evaluation and at SIGTERM; a corrupt one is reported and ignored).

` + exitHelp(exitCodes{exitcode.OK, "--count evaluations done with no loss"},
			exitCodes{exitcode.Error, "the listener could not be bound, an evidence file unreadable"},
			exitCodes{exitcode.Usage, ""},
			exitCodes{exitcode.Lost, "--count evaluations done and the last found records lost"},
			exitCodes{exitcode.Stranded, "--count evaluations done and the last found records stranded (none lost)"},
			exitCodes{exitcode.NoEvidence, "--count evaluations done and the last could not judge a partition for want of delivery evidence"},
			exitCodes{exitcode.Interrupted, "stopped by Ctrl-C or SIGTERM (the checkpoint is written)"}),
		Example: `  kstranded watch --brokers kafka:9092 --group billing --delivered /var/log/app/deliveries.log
  kstranded watch --brokers kafka:9092 --group-regex '^payments-' --delivered app.log \
      --pattern 'processed partition=(?P<partition>\d+) offset=(?P<offset>\d+)' --listen :9638`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if len(o.Groups) == 0 && o.GroupRegex == "" {
				return exitcode.Usagef("give --group (repeatable) or --group-regex")
			}
			if o.GroupRegex != "" {
				if _, err := regexp.Compile(o.GroupRegex); err != nil {
					return exitcode.Usagef("--group-regex: %v", err)
				}
			}
			if err := positiveDur("interval", o.Interval, false); err != nil {
				return err
			}
			if o.StallAfter < 0 {
				return exitcode.Usagef("--stall-after must be >= 0, got %s", o.StallAfter)
			}
			if o.Count < 0 {
				return exitcode.Usagef("--count must be >= 0, got %d", o.Count)
			}
			if err := o.evidenceFlags.check(); err != nil {
				return err
			}
			if (o.OTLPComplete || o.OTLPCapture != "") && !o.OTLP {
				return exitcode.Usagef("--otlp-complete and --otlp-capture go with --otlp")
			}
			if _, err := g.LiveKafka("watch reads a live cluster"); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), o)
			}
			return runWatch(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.StringArrayVarP(&o.Groups, "group", "g", nil, "consumer group to watch (repeatable)")
	f.StringVar(&o.GroupRegex, "group-regex", "", "also watch every group whose name matches (listed at each evaluation)")
	o.evidenceFlags.bind(f, "delivery evidence to follow (repeatable; - for stdin)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:9638", "HTTP address for /metrics")
	f.DurationVar(&o.Interval, "interval", 30*time.Second, "time between evaluations")
	f.DurationVar(&o.StallAfter, "stall-after", 5*time.Minute, "records waiting this long with no delivery and no commit make a partition STALLED (0: never)")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "file that keeps deliveries and verdicts across restarts")
	f.Int64Var(&o.MaxScan, "max-scan", 10_000_000, "most offsets to read per partition when classifying undelivered offsets")
	f.IntVar(&o.Count, "count", 0, "stop after this many evaluations (0: until interrupted)")
	f.BoolVar(&o.OTLP, "otlp", false, "also serve POST /v1/traces (OTLP/HTTP): consumer process spans are deliveries")
	f.StringVar(&o.OTLPCapture, "otlp-capture", "", "append every OTLP request to FILE as a JSON line of TracesData")
	return c
}

func runWatch(ctx context.Context, g *Globals, o *watchOptions) error {
	opts, err := g.KgoOpts()
	if err != nil {
		return err
	}
	k, err := inspect.NewKafka(opts, g.Timeout)
	if err != nil {
		return err
	}
	defer k.Close()
	out, err := g.Format()
	if err != nil {
		return err
	}
	wo := watch.Options{Groups: o.Groups, StallAfter: o.StallAfter, MaxScan: o.MaxScan, NoEvidence: len(o.Delivered) == 0 && !o.OTLP,
		SpansComplete: o.OTLPComplete}
	if o.OTLP {
		wo.Receivers = []string{otlpSource}
	}
	if o.GroupRegex != "" {
		wo.GroupRegex = regexp.MustCompile(o.GroupRegex)
	}
	var pat *evidence.Pattern
	var when *evidence.When
	if o.Pattern != "" {
		pat, _ = evidence.CompilePattern(o.Pattern)
	}
	if o.When != "" {
		when, _ = evidence.ParseWhen(o.When)
	}
	wo.Configure = func(s *evidence.Set) { s.Pattern, s.When = pat, when }
	var cp *watch.Checkpoint
	if o.Checkpoint != "" {
		if cp, err = watch.LoadCheckpoint(o.Checkpoint); err != nil {
			fmt.Fprintf(g.IO.Err, "kstranded: watch: %v; starting without it\n", err)
			cp = nil
		}
	}
	stdin := false
	for _, d := range o.Delivered {
		if d == "-" {
			stdin = true
			wo.Streams = append(wo.Streams, "stdin")
			continue
		}
		wo.Sources = append(wo.Sources, cp.Source(d))
	}
	w := watch.New(k, wo)
	cp.Restore(w)
	var mu sync.Mutex
	fed := make(chan struct{}) // closed once stdin gave its first lines, or ended
	if stdin {
		go feedStdin(ctx, g.IO.In, w, &mu, fed)
	} else {
		close(fed)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(watch.NewCollector(w, &mu))
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if o.OTLP {
		rcv := &otlpReceiver{w: w, mu: &mu}
		if o.OTLPCapture != "" {
			f, err := openCapture(o.OTLPCapture)
			if err != nil {
				return fmt.Errorf("--otlp-capture: %w", err)
			}
			defer f.Close()
			rcv.capture = f
		}
		mux.Handle("/v1/traces", rcv)
		fmt.Fprintf(g.IO.Err, "kstranded watch: OTLP/HTTP traces on http://%s/v1/traces\n", ln.Addr())
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(g.IO.Err, "kstranded watch: metrics on http://%s/metrics, every %s\n", ln.Addr(), o.Interval)
	save := func() {
		if o.Checkpoint == "" {
			return
		}
		mu.Lock()
		err := watch.SaveCheckpoint(o.Checkpoint, w)
		mu.Unlock()
		if err != nil {
			fmt.Fprintf(g.IO.Err, "kstranded: watch: checkpoint: %v\n", err)
		}
	}
	defer save()
	// the first evaluation waits for stdin's first lines (at most an interval): judged
	// before any delivery is read, every record would look undelivered
	select {
	case <-fed:
	case <-time.After(o.Interval):
	case <-ctx.Done():
		return exitcode.ErrInterrupted
	}
	// the last evaluation's verdict over the partitions it saw, mapped to the exit as
	// inspect maps its own (one verdict, one exit, everywhere); a failed evaluation is 1
	var last verdict.Verdict
	var lastErr error
	var groupErrs map[string]string // as the last evaluation said them: each is printed when it changes
	srcErrs := map[string]bool{}    // likewise the evidence sources' errors
	for n := 0; o.Count == 0 || n < o.Count; n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return exitcode.ErrInterrupted
			case <-time.After(o.Interval):
			}
		}
		mu.Lock()
		changes, err := w.Evaluate(ctx)
		ev := w.Last()
		last, lastErr = verdict.OK, err
		for _, p := range w.Partitions() {
			// without any evidence watch follows commits and stalls only, as inspect
			// without --delivered shows offsets: not judging is what was asked
			if p.Seen && !(wo.NoEvidence && p.Judgement.Verdict == verdict.NoEvidence) {
				last = verdict.Worse(last, p.Judgement.Verdict)
			}
		}
		mu.Unlock()
		if ctx.Err() != nil {
			return exitcode.ErrInterrupted
		}
		if err != nil {
			fmt.Fprintf(g.IO.Err, "kstranded: watch: evaluation: %v (kstranded_up 0; no verdicts until the cluster answers)\n", err)
		} else {
			for _, gr := range ev.Watched {
				if e := ev.GroupErrs[gr]; e != "" && e != groupErrs[gr] {
					fmt.Fprintf(g.IO.Err, "kstranded: watch: group %s: %s (kstranded_group_up 0; its partitions get no verdict)\n", render.Safe(gr), e)
				}
			}
			groupErrs = ev.GroupErrs
		}
		now := map[string]bool{}
		for _, e := range ev.SourceErrs {
			if now[e] = true; !srcErrs[e] {
				fmt.Fprintf(g.IO.Err, "kstranded: watch: --delivered %s\n", render.Safe(e))
			}
		}
		srcErrs = now
		for _, c := range changes {
			if out == render.JSON {
				writeChangeLine(g.IO.Out, c)
			} else {
				since := ""
				if c.StalledSince != nil {
					since = ", no progress since " + c.StalledSince.Format(time.RFC3339)
				}
				fmt.Fprintf(render.Prose(g.IO.Out), "%s %s %s/%d %s -> %s (lost %d, stranded %d, committed %d%s)%s\n", c.Time.UTC().Format(time.RFC3339),
					render.Safe(c.Group), render.Safe(c.Topic), c.Partition, orDash(string(c.From)), c.To, c.Lost, c.Stranded, c.Committed, since, reasonSuffix(c.Reason))
			}
		}
		save()
	}
	return watchOutcome(last, lastErr)
}

// watchOutcome is the exit of watch --count: the last evaluation's verdict as every
// command maps it (exitcode.ForVerdict), or 1 when that evaluation failed.
func watchOutcome(last verdict.Verdict, lastErr error) error {
	if lastErr != nil {
		return exitcode.Reported(fmt.Errorf("the last evaluation failed: %w", lastErr))
	}
	return verdictOutcome(last)
}

// WatchChangeSchema names the JSON line watch prints per verdict change.
const WatchChangeSchema = "kstranded.watch-change/v1"

// writeChangeLine prints one verdict change as one JSON object on one line, for systems
// that alert on logs. from is null at a partition's first judgement.
func writeChangeLine(w io.Writer, c watch.Change) {
	var from *string
	if c.From != "" {
		s := string(c.From)
		from = &s
	}
	b, _ := json.Marshal(struct {
		Schema string `json:"schema"`
		watch.Change
		From   *string `json:"from"`
		Reason *string `json:"reason"`
	}{WatchChangeSchema, c, from, nilIfEmpty(c.Reason)})
	fmt.Fprintf(w, "%s\n", b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// feedStdin hands complete lines of r to the watcher as they arrive; fed is closed at
// the first lines handed over, or at the end of r.
func feedStdin(ctx context.Context, r io.Reader, w *watch.Watcher, mu *sync.Mutex, fed chan struct{}) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	var once sync.Once
	done := func() { once.Do(func() { close(fed) }) }
	defer done()
	flush := func() {
		if len(buf) == 0 {
			return
		}
		mu.Lock()
		w.Feed("stdin", buf)
		mu.Unlock()
		buf = buf[:0]
		done()
	}
	for ctx.Err() == nil {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // over-long: dropped
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			buf = append(buf, line...)
			if br.Buffered() == 0 || len(buf) > 1<<20 {
				flush()
			}
		}
		if err != nil {
			flush()
			return
		}
	}
}
