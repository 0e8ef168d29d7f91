package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/view"
)

// strandedBroker builds the bug report's end state on the embedded broker: 200 records
// in one transaction on stranded/0 (commit marker at 200), one more record at 201, and
// group "g" committed at 202.
func strandedBroker(t *testing.T) *embedded.Broker {
	t.Helper()
	b, err := embedded.Start(embedded.Options{Topic: "stranded", Partitions: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx := context.Background()
	newCl := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("stranded"), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	tx := newCl(kgo.TransactionalID("repro"))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, 200)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: 0, Value: []byte("r")}
	}
	if err := tx.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	plain := newCl()
	if err := plain.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("wake")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "stranded", Partition: 0, At: 202, LeaderEpoch: -1})
	if _, err := kadm.NewClient(plain).CommitOffsets(ctx, "g", os); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCmd(t *testing.T, stdin string, args ...string) (code int, out, errOut string) {
	t.Helper()
	return runSeen(args, stdin)
}

const strandedTrace = `{"ts":"2026-01-01T00:00:00Z","at_ms":0,"ev":"run","schema":"kstranded.trace/v1","topic":"stranded","group":"g","policy":"v1.10.0"}
{"ts":"2026-01-01T00:00:00Z","at_ms":1,"ev":"serve","partition":0,"offsets":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]}
{"ts":"2026-01-01T00:00:00Z","at_ms":2,"ev":"serve","partition":0,"offsets":[20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39]}
{"ts":"2026-01-01T00:00:00Z","at_ms":3,"ev":"serve","partition":0,"offsets":[40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59]}
{"ts":"2026-01-01T00:00:00Z","at_ms":4,"ev":"serve","partition":0,"offsets":[60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81]}
{"ts":"2026-01-01T00:00:00Z","at_ms":5,"ev":"serve","partition":0,"offsets":[201]}
`

func TestInspectReportsTheStrandedRecordsAsLostWithExitCode3(t *testing.T) {
	b := strandedBroker(t)
	trace := writeFile(t, "t.jsonl", strandedTrace)
	code, out, errOut := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", trace)
	if code != exitcode.Lost {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Lost, out, errOut)
	}
	for _, want := range []string{
		"kstranded.trace/v1, topic stranded, group g, 83 deliveries",
		"stranded/0: LOST 82-199 (118 records); safe rewind offset 82",
		"stranded/0: 200: control marker (commit), not lost",
		"LOST: 118 records on 1 of 1 partitions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// on a pipe stderr holds the prose around the table, and nothing else
	if strings.Contains(errOut, "kstranded:") || strings.Contains(errOut, "\t") {
		t.Errorf("stderr holds an error or table rows: %s", errOut)
	}
}

func TestInspectJSONCarriesTheSchemaAndTheVerdict(t *testing.T) {
	b := strandedBroker(t)
	code, out, _ := runCmd(t, "stranded/0:0-81\nstranded/0:201\n", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", "-", "-o", "json")
	if code != exitcode.Lost {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var v struct {
		Schema     string `json:"schema"`
		Command    string `json:"_command"`
		Complete   bool   `json:"complete"`
		Partitions []struct {
			Partition int32  `json:"partition"`
			Committed int64  `json:"committed"`
			Lag       *int64 `json:"lag"`
			Judgement struct {
				Lost []struct {
					First, Last, Count int64
				} `json:"lost"`
				LostCount  int64  `json:"lost_count"`
				SafeRewind *int64 `json:"safe_rewind_offset"`
				Verdict    string `json:"verdict"`
				NotDeliv   []struct {
					First int64  `json:"first"`
					What  string `json:"what"`
				} `json:"not_deliverable"`
			} `json:"judgement"`
		} `json:"partitions"`
		Evidence struct {
			Sources []struct{ Format string } `json:"sources"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.Schema != view.InspectSchema || v.Command != "inspect" || !v.Complete {
		t.Fatalf("meta = %+v", v)
	}
	j := v.Partitions[0].Judgement
	if j.Verdict != "LOST" || j.LostCount != 118 || *j.SafeRewind != 82 || j.Lost[0].First != 82 || j.Lost[0].Last != 199 {
		t.Fatalf("judgement = %+v", j)
	}
	if len(j.NotDeliv) != 1 || j.NotDeliv[0].First != 200 || !strings.Contains(j.NotDeliv[0].What, "control marker") {
		t.Fatalf("not deliverable = %+v", j.NotDeliv)
	}
	if *v.Partitions[0].Lag != 0 || v.Evidence.Sources[0].Format != "text (ranges)" {
		t.Fatalf("partition = %+v, evidence = %+v", v.Partitions[0], v.Evidence)
	}
}

func TestInspectFindsNothingLostWhenEveryRecordWasDelivered(t *testing.T) {
	b := strandedBroker(t)
	ev := writeFile(t, "delivered.txt", "stranded/0:0-199\nstranded 0 201\n")
	code, out, errOut := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", ev)
	if code != exitcode.OK || !strings.Contains(out, "OK: no records lost on 1 partitions") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestInspectWithoutEvidenceShowsOffsetsAndSaysLossCannotBeJudged(t *testing.T) {
	b := strandedBroker(t)
	code, out, _ := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, view.NoEvidenceNote) || strings.Contains(out, "VERDICT") {
		t.Fatalf("output:\n%s", out)
	}
	if !strings.Contains(out, "stranded\t0\t202\t-\t0\t202\t202\t0\t-") {
		t.Fatalf("row missing:\n%s", out)
	}
}

func TestInspectReportsInvalidAndMalformedEvidence(t *testing.T) {
	b := strandedBroker(t)
	ev := writeFile(t, "e.txt", "stranded/0:0-81\nstranded/0:200-201\nstranded/0:500\nstranded/7:3\nnot a line\n")
	code, out, _ := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", ev)
	if code != exitcode.Lost {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"1 malformed lines",
		`e.txt:5: want TOPIC PARTITION OFFSET`,
		"invalid evidence 200: delivered, but the partition holds a control marker (commit) there",
		"invalid evidence 500: delivered offsets at or beyond the high watermark 202",
		"invalid evidence: stranded/7: 1 delivered offsets, but the group has no committed offset",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectFaultsEndWithAClearMessageAndExitCode(t *testing.T) {
	b := strandedBroker(t)
	trace := writeFile(t, "t.jsonl", strandedTrace)
	tests := []struct {
		name    string
		args    []string
		prepare func()
		code    int
		want    string
	}{
		{"an unknown group is an error", []string{"--group", "nobody"}, nil, exitcode.Error, `group not found: "nobody" has no members and no committed offsets`},
		{"--describe without --group is a usage error", []string{"--describe"}, nil, exitcode.Usage, "--group"},
		{"an unknown --topic is an error", []string{"--group", "g", "--topic", "nope"}, nil, exitcode.Error, `unknown topic: topic "nope" does not exist`},
		{"topicless evidence with two topics in scope is a usage error", []string{"--group", "g2", "--delivered", "-"}, func() {
			cl, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
			defer cl.Close()
			var os kadm.Offsets
			os.Add(kadm.Offset{Topic: "stranded", Partition: 0, At: 1, LeaderEpoch: -1})
			os.Add(kadm.Offset{Topic: "other", Partition: 0, At: 0, LeaderEpoch: -1})
			_, _ = kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, "other")
			_, _ = kadm.NewClient(cl).CommitOffsets(context.Background(), "g2", os)
		}, exitcode.Usage, "pass exactly one --topic"},
		{"a topic deleted since the commit leaves a group without offsets", []string{"--group", "g3"}, func() {
			cl, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
			defer cl.Close()
			adm := kadm.NewClient(cl)
			_, _ = adm.CreateTopic(context.Background(), 1, 1, nil, "gone")
			var os kadm.Offsets
			os.Add(kadm.Offset{Topic: "gone", Partition: 0, At: 0, LeaderEpoch: -1})
			_, _ = adm.CommitOffsets(context.Background(), "g3", os)
			_, _ = adm.DeleteTopics(context.Background(), "gone")
		}, exitcode.Error, `group has no committed offsets: "g3" exists (state Empty, 0 members) but has committed no offsets (a broker drops the offsets of deleted topics)`},
		{"a deleted topic named with --topic is an unknown topic", []string{"--group", "g3", "--topic", "gone"}, nil, exitcode.Error, `topic "gone" does not exist (if it was deleted`},
		{"a broker that stops answering fetches ends within the timeout", []string{"--group", "g", "--delivered", trace, "--timeout", "700ms"}, func() {
			b.Cluster().ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
				b.Cluster().KeepControl()
				return nil, nil, true // never answer
			})
		}, exitcode.Error, "no answer within 700ms (--timeout)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prepare != nil {
				tc.prepare()
			}
			start := time.Now()
			code, out, errOut := runCmd(t, "0:1\n", append([]string{"inspect", "--brokers", b.Addr()}, tc.args...)...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, out, errOut)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

// TestInspectWatchPrintsWhatChanged commits a new offset after the first report was
// printed and before the next poll (afterPoll runs in the loop, so the order is fixed,
// however loaded the machine), and the second poll reports the change.
func TestInspectWatchPrintsWhatChanged(t *testing.T) {
	b := strandedBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out, errOut bytes.Buffer
	g := &Globals{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errOut}, Brokers: b.Addr(), Output: "table", Timeout: 10 * time.Second}
	o := &inspectOptions{Group: "g", MaxScan: 10_000_000, Watch: 50 * time.Millisecond, Count: 2}
	polls := 0
	o.afterPoll = func(i int) {
		polls++
		if i != 0 {
			return
		}
		if !strings.Contains(out.String(), "stranded\t0\t202\t") {
			t.Fatalf("the first report is not printed before the commit:\n%s", out.String())
		}
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: "stranded", Partition: 0, At: 100, LeaderEpoch: -1})
		if _, err := kadm.NewClient(cl).CommitOffsets(context.Background(), "g", os); err != nil {
			t.Fatal(err)
		}
	}
	err = runInspect(context.Background(), g, o)
	if err != nil || polls != 2 || !strings.Contains(out.String(), "stranded/0 committed 202 -> 100") || !strings.Contains(out.String(), "stranded/0 lag 0 -> 102") {
		t.Fatalf("err %v after %d polls\n%s\n%s", err, polls, out.String(), errOut.String())
	}
}

// interruptingCluster serves the stranded partition and is interrupted (Ctrl-C) while
// the partition is scanned.
type interruptingCluster struct{ cancel context.CancelFunc }

func (c interruptingCluster) Snapshot(ctx context.Context, group string, topics []string) (*inspect.Snapshot, error) {
	return &inspect.Snapshot{
		Group:      inspect.Group{ID: group, State: "Empty", Members: []inspect.Member{}},
		Partitions: []inspect.Offsets{{Topic: "stranded", Partition: 0, Committed: 202, CommittedEpoch: 0, LogStart: 0, LastStable: 202, HighWatermark: 202}},
	}, nil
}

func (c interruptingCluster) Scan(ctx context.Context, topic string, partition int32, from, to int64) (*inspect.Scan, error) {
	c.cancel()
	return nil, ctx.Err()
}

func TestAnInterruptedInspectPrintsThePartialReportAndExits130(t *testing.T) {
	ev := writeFile(t, "ev.txt", "stranded/0:0-81\n")
	for _, c := range []struct {
		name, format string
		want         []string
	}{
		{"the table is marked interrupted and partial", "table", []string{
			"stranded\t0\t202\t0\t0\t202\t202\t0\t-\t82\t0\t0\t0\t-\tERROR",
			"stranded/0: scan of offsets 82-201 failed: context canceled",
			"INTERRUPTED (partial", "INCOMPLETE: 1 partitions not fully judged.",
		}},
		{"the JSON says interrupted and not complete", "json", []string{`"interrupted": true`, `"complete": false`, `"verdict": "ERROR"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out bytes.Buffer // stdout and the notes, as a person at a pipe sees them
			g := &Globals{IO: IO{Out: &out, Err: &out}, Output: c.format, Timeout: time.Second}
			err := inspectLoop(ctx, g, &inspectOptions{Group: "g", evidenceFlags: evidenceFlags{Delivered: []string{ev}}, MaxScan: 1000}, interruptingCluster{cancel})
			if code := exitcode.Code(err); code != exitcode.Interrupted {
				t.Fatalf("exit %d (%v), want %d", code, err, exitcode.Interrupted)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the partial report lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestInspectFlagsAreValidated(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"max-scan must be positive", []string{"--group", "g", "--max-scan", "0"}, "--max-scan must be > 0"},
		{"count needs watch", []string{"--group", "g", "--count", "3"}, "--count needs --watch"},
		{"stdin only once", []string{"--group", "g", "--delivered", "-", "--delivered", "-"}, "stdin) can be given once"},
		{"brokers are required", []string{"--group", "g"}, "--brokers is required"},
		{"--list and --describe contradict", []string{"--list", "--describe", "--group", "g"}, "give one"},
		{"--list with --group says to drop --list", []string{"--list", "--group", "g"}, "drop --list"},
		{"--describe without --group says how to list", []string{"--describe"}, "--describe needs --group GROUP"},
		{"--delivered without --group asks for one", []string{"--delivered", "x.txt"}, "--delivered is about one group: give --group GROUP"},
		{"--watch with --list asks for a group", []string{"--list", "--watch", "1s"}, "--watch is about one group"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, "", append([]string{"inspect"}, tc.args...)...)
			if code != exitcode.Usage || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		})
	}
}

// A delivery log of every record with a UTF-8 byte-order mark on line 1 is read as
// without it: OK, exit 0; not "LOST 0, safe rewind offset 0" (issue 27, item 3).
func TestADeliveryLogWithAByteOrderMarkIsReadWhole(t *testing.T) {
	b := strandedBroker(t)
	var log strings.Builder
	for o := 0; o <= 201; o++ {
		if o != 200 { // the transaction marker
			fmt.Fprintf(&log, `{"msg":"delivered","topic":"stranded","partition":0,"offset":%d}`+"\n", o)
		}
	}
	for _, bom := range []string{"", "\uFEFF"} {
		f := writeFile(t, "d.jsonl", bom+log.String())
		code, out, errs := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", f)
		if code != exitcode.OK || strings.Contains(out+errs, "safe rewind") || !strings.Contains(out+errs, "201 deliveries, 0 malformed lines") {
			t.Errorf("BOM %q: exit %d\n%s%s", bom, code, out, errs)
		}
	}
}

// inspect without --group, and --list, list the cluster's groups (kafka-consumer-groups.sh
// --list, with --state and --type); --describe --group G is inspect --group G.
func TestInspectWithoutAGroupListsTheGroupsAndDescribeIsInspect(t *testing.T) {
	b := strandedBroker(t)
	for _, args := range [][]string{{"inspect"}, {"inspect", "--list"}} {
		code, out, errOut := runCmd(t, "", append(args, "--brokers", b.Addr())...)
		if code != 0 || !strings.Contains(out, "GROUP\tSTATE\tPROTOCOL\tPROTOCOL-TYPE\ng\tEmpty\tclassic\t-\n") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if !strings.Contains(errOut, "1 group; kstranded inspect --group GROUP") {
			t.Errorf("%v: stderr lacks the count: %s", args, errOut)
		}
	}
	code, out, _ := runCmd(t, "", "inspect", "--list", "--brokers", b.Addr(), "-o", "json")
	var doc struct {
		Schema string `json:"schema"`
		Groups []struct {
			Group, State, Protocol string
			ProtocolType           *string `json:"protocol_type"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if doc.Schema != view.GroupsSchema || len(doc.Groups) != 1 || doc.Groups[0].Group != "g" || doc.Groups[0].State != "Empty" ||
		doc.Groups[0].Protocol != "classic" || doc.Groups[0].ProtocolType != nil {
		t.Fatalf("%+v\n%s", doc, out)
	}
	validateDoc(t, []byte(out))

	_, want, _ := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g")
	code, got, errOut := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--describe", "--group", "g")
	if code != 0 || got != want || !strings.Contains(got, "stranded\t0\t202") {
		t.Fatalf("--describe --group g (exit %d) differs from --group g:\n%s\n%s\n%s", code, got, want, errOut)
	}
}
