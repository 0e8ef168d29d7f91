package trace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/trace/tracegen"
)

// cancelAfter reads r and cancels its context once n bytes were read: an interrupt in the
// middle of a parse, at a point that does not depend on timing.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n -= n
	if c.n <= 0 {
		c.cancel()
	}
	return n, err
}

func generated(t *testing.T, write func(w io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Issue 16 §1: trace parse read an 84 MB trace to its end after SIGINT and said nothing of
// it. Every reader stops at a cancelled context and leaves what it read, marked partial.
func TestParseStopsMidInputWhenTheContextIsCancelledAndMarksTheResultInterrupted(t *testing.T) {
	cases := []struct {
		name    string
		format  Format
		pattern string
		data    []byte
	}{
		{"a librdkafka debug log (chunked reader)", FormatLibrdkafka, "",
			generated(t, func(w io.Writer) error { return tracegen.WriteBusyRdkafkaLog(w, 24<<20, 20) })},
		{"the JS client's DefaultLogger output (chunked reader)", FormatJSClient, jsPlainPattern,
			generated(t, func(w io.Writer) error { return tracegen.WriteJSClientLog(w, 24<<20, 20, false) })},
		{"the JS client's JSON logger output (chunked reader)", FormatJSClientJSON, jsJSONPattern,
			generated(t, func(w io.Writer) error { return tracegen.WriteJSClientLog(w, 24<<20, 20, true) })},
		{"a kstranded trace (line reader)", FormatKstranded, "",
			generated(t, func(w io.Writer) error { return tracegen.WriteManyPartitionsTrace(w, 60000) })},
		{"an auto-detected kstranded trace", FormatAuto, "",
			generated(t, func(w io.Writer) error { return tracegen.WriteManyPartitionsTrace(w, 60000) })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{}
			if c.pattern != "" {
				opt.Pattern = regexp.MustCompile(c.pattern)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := NewAnalyzer(opt)
			in := &cancelAfter{r: bytes.NewReader(c.data), n: len(c.data) / 4, cancel: cancel}
			st, err := a.ParseContext(ctx, "big.log", in, c.format)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			total := bytes.Count(c.data, []byte{'\n'})
			if !st.Stopped || st.Lines == 0 || st.Lines >= total*3/4 {
				t.Fatalf("stopped %v after %d of %d lines; want stopped after about a quarter", st.Stopped, st.Lines, total)
			}
			r := a.Finish()
			if !r.Interrupted || !r.Partial || r.Complete() || len(r.Incomplete) == 0 || !strings.Contains(r.Incomplete[0], "interrupted") {
				t.Fatalf("report interrupted=%v partial=%v complete=%v incomplete=%q", r.Interrupted, r.Partial, r.Complete(), r.Incomplete)
			}
			if len(r.Files) != 1 || r.Files[0].Lines != st.Lines {
				t.Fatalf("files %+v: the partial file's stats must be in the report", r.Files)
			}
			if len(r.Partitions) == 0 {
				t.Fatal("no partitions: what was read before the interrupt must be kept")
			}
			for _, p := range r.Partitions {
				if p.Verdict == verdict.OK || p.Verdict == verdict.NoEvidence {
					t.Fatalf("partition %d: verdict %s in a partial read; want INCOMPLETE (or what the evidence read proves)", p.Partition, p.Verdict)
				}
			}
		})
	}
}

// A pipe whose writer went quiet (stdin from a stalled producer) must not hold an
// interrupt: the read is abandoned.
func TestParseReturnsWhenCancelledWhileItsInputBlocks(t *testing.T) {
	for _, format := range []Format{FormatAuto, FormatKstranded, FormatLibrdkafka} {
		t.Run(string(format), func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := NewAnalyzer(Options{})
			done := make(chan error, 1)
			go func() {
				_, err := a.ParseContext(ctx, "<stdin>", pr, format)
				done <- err
			}()
			line := `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":0,"first":0,"last":9,"count":10}]}` + "\n"
			if format == FormatLibrdkafka {
				line = "%7|1796225597.721|CONSUME|c| [thrd:b]: b: Enqueue 10 message(s) (690 bytes, 10 ops) on stranded [0] fetch queue (qlen 0, v2, last_offset 9, 0 ctrl msgs, 0 aborted msgsets, uncompressed)\n"
			}
			// more than the readers buffer: once Write returns, the parse is reading
			if _, err := pw.Write([]byte(strings.Repeat(line, (600<<10)/len(line)))); err != nil {
				t.Fatal(err)
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second): // a hang, not a timing assertion
				t.Fatal("ParseContext did not return after cancel while its input blocked")
			}
			if r := a.Finish(); !r.Interrupted {
				t.Fatal("report not marked interrupted")
			}
		})
	}
}

// Issue 16 §7: a trace naming 10^6 partitions took 3.47 GB. Past MaxPartitions the events
// of further partitions are counted, not tracked, and the report says so.
func TestPartitionsPastTheLimitAreCountedNotTrackedAndTheReportSaysSo(t *testing.T) {
	data := generated(t, func(w io.Writer) error { return tracegen.WriteManyPartitionsTrace(w, 200) })
	a := NewAnalyzer(Options{MaxPartitions: 50})
	st, err := a.Parse("many.trace", bytes.NewReader(data), FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 601 || st.Stopped {
		t.Fatalf("lines %d stopped %v: the whole input is read", st.Lines, st.Stopped)
	}
	r := a.Finish()
	if got := len(r.Partitions) + r.IdlePartitions; got != 50 {
		t.Fatalf("%d partitions tracked, want 50", got)
	}
	if r.UntrackedEvents != 150*3 || r.Complete() || r.Partial {
		t.Fatalf("untracked %d complete %v partial %v; want 450 events untracked, incomplete, not partial", r.UntrackedEvents, r.Complete(), r.Partial)
	}
	want := "more than 50 partitions (the limit, --max-partitions): 450 events about the partitions named after the first 50 were not tracked (the first, stranded/50, at many.trace:152)"
	if len(r.Incomplete) != 1 || !strings.Contains(r.Incomplete[0], want) {
		t.Fatalf("incomplete = %q, want it to say %q", r.Incomplete, want)
	}
	// the tracked partitions are judged on their whole evidence
	for _, p := range r.Partitions {
		if p.Verdict != verdict.Lost || p.Lost.String() != "5-9" {
			t.Fatalf("partition %d: %s lost %s, want LOST 5-9", p.Partition, p.Verdict, p.Lost)
		}
	}
}

// Past the budget of offset ranges the analysis stops where it is, partial, with ErrLimit.
func TestTheAnalysisStopsAtTheRangeLimitWithANamedError(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, `{"ts":"2026-03-02T14:03:40Z","ev":"fetch","ranges":[{"partition":0,"first":%d,"last":%d,"count":1}]}`+"\n", 2*i, 2*i)
	}
	a := NewAnalyzer(Options{})
	a.rangeLimit = 100
	st, err := a.Parse("ranges.trace", strings.NewReader(b.String()), FormatKstranded)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "more than 100 distinct offset ranges") || !strings.Contains(err.Error(), "ranges.trace:101") {
		t.Fatalf("err = %v, want ErrLimit naming the limit and the line", err)
	}
	if !st.Stopped || st.Lines != 101 {
		t.Fatalf("stopped %v at line %d, want stopped at 101", st.Stopped, st.Lines)
	}
	r := a.Finish()
	if !r.Partial || r.Interrupted || r.Complete() || len(r.Incomplete) != 1 {
		t.Fatalf("partial %v interrupted %v incomplete %q", r.Partial, r.Interrupted, r.Incomplete)
	}
}

// What a line carries into the analysis is cut to fixed sizes: a timeline of 4,000
// entries each holding a 1 MiB reason or thousands of ranges would not fit in memory.
func TestLongReasonsAndManyRangesAreCutInTheTimeline(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	offsets := make([]string, 5000)
	for i := range offsets {
		offsets[i] = fmt.Sprint(3 * i)
	}
	in := `{"ts":"2026-03-02T14:03:40Z","ev":"seek","partition":0,"offset":5,"reason":"` + long + `"}` + "\n" +
		`{"ts":"2026-03-02T14:03:41Z","ev":"serve","partition":0,"offsets":[` + strings.Join(offsets, ",") + `]}` + "\n" +
		`{"ts":"2026-03-02T14:03:42Z","ev":"` + long + `"}` + "\n"
	a := NewAnalyzer(Options{})
	if _, err := a.Parse("hostile.trace", strings.NewReader(in), FormatKstranded); err != nil {
		t.Fatal(err)
	}
	r := a.Finish()
	if len(r.Timeline) != 3 {
		t.Fatalf("timeline has %d entries, want 3", len(r.Timeline))
	}
	for _, e := range r.Timeline {
		if len(e.Detail) > 2*maxText || len(e.Ranges) > maxEntryRanges {
			t.Fatalf("entry %s kept %d bytes of detail and %d ranges", e.Kind, len(e.Detail), len(e.Ranges))
		}
	}
	if d := r.Timeline[1].Detail; !strings.Contains(d, "5000 ranges, the first 16 kept") {
		t.Fatalf("detail %q does not say how many ranges there were", d)
	}
	if got := r.Partitions[0].Delivered.Count(); got != 5000 {
		t.Fatalf("delivered %d, want all 5000 (only the timeline entry is cut)", got)
	}
}

// With many partitions the timelines share their budget (at least the first and last entry
// each); before, every new partition past 625 re-shrank all of them (10^6 never finished).
func TestTimelinesOfManyPartitionsStayWithinTheBudget(t *testing.T) {
	data := generated(t, func(w io.Writer) error { return tracegen.WriteManyPartitionsTrace(w, 10000) })
	a := NewAnalyzer(Options{})
	if _, err := a.Parse("many.trace", bytes.NewReader(data), FormatKstranded); err != nil {
		t.Fatal(err)
	}
	r := a.Finish()
	if len(r.Partitions) != 10000 {
		t.Fatalf("%d partitions, want 10000", len(r.Partitions))
	}
	if len(r.Timeline) > timelineBudget+4000 {
		t.Fatalf("timeline holds %d entries, budget %d", len(r.Timeline), timelineBudget)
	}
}

// The same in a chunked format, the limit reached while folding the last (here: only)
// chunk: the result is partial, never complete.
func TestTheRangeLimitInTheLastChunkOfALogStopsTheAnalysis(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "%%7|1796225597.721|CONSUME|c| [thrd:b]: b: Enqueue 1 message(s) (1 bytes, 1 ops) on stranded [%d] fetch queue (qlen 0, v2, last_offset 0, 0 ctrl msgs, 0 aborted msgsets, uncompressed)\n", i)
	}
	a := NewAnalyzer(Options{})
	a.rangeLimit = 100
	st, err := a.Parse("ranges.log", strings.NewReader(b.String()), FormatLibrdkafka)
	if !errors.Is(err, ErrLimit) || !st.Stopped {
		t.Fatalf("err = %v, stopped %v; want ErrLimit and stopped", err, st.Stopped)
	}
	if r := a.Finish(); !r.Partial || r.Complete() {
		t.Fatalf("partial %v complete %v", r.Partial, r.Complete())
	}
}
