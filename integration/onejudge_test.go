package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/testenv"
)

// batch is one step of writing a partition: n plain records, or n records in a
// transaction that commits or aborts (its marker takes one offset more).
type batch struct {
	n     int
	txn   bool
	abort bool
}

// writePartition writes the batches to partition 0 of topic in order; extra options go
// to the producers (kafkajs reads no snappy, franz-go's default: kgo.NoCompression()).
func writePartition(t *testing.T, topic string, batches []batch, extra ...kgo.Opt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts, err := kafkaconf.Config{Brokers: env.Brokers}.KgoOpts()
	if err != nil {
		t.Fatal(err)
	}
	base := append(append(opts, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner())), extra...)
	plain, err := kgo.NewClient(base...)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	txn, err := kgo.NewClient(append(base, kgo.TransactionalID("onejudge-"+topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	for _, b := range batches {
		recs := make([]*kgo.Record, b.n)
		for i := range recs {
			recs[i] = &kgo.Record{Partition: 0, Value: []byte("v")}
		}
		if !b.txn {
			if err := plain.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		end := kgo.TryCommit
		if b.abort {
			end = kgo.TryAbort
		}
		if err := txn.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
}

// evidenceFiles writes the deliveries in every form the commands read: an application
// log read with --pattern, pino JSON lines (offsets as strings, as kafkajs-style
// clients give them), text TOPIC PARTITION OFFSET lines, and a kstranded trace.
func evidenceFiles(t *testing.T, dir, topic, group string, delivered []int64) map[string][]string {
	t.Helper()
	var pat, pino, text, tr strings.Builder
	pino.WriteString(`{"level":30,"time":1767225600000,"msg":"consumer connected"}` + "\n")
	fmt.Fprintf(&tr, `{"ts":"2026-12-03T00:00:00Z","at_ms":0,"ev":"run","schema":"kstranded.trace/v1","topic":%q,"group":%q}`+"\n", topic, group)
	for i, o := range delivered {
		fmt.Fprintf(&pat, "2026-12-03T00:00:%02dZ info: processed message topic=%s partition=0 offset=%d\n", i%60, topic, o)
		fmt.Fprintf(&pino, `{"level":30,"time":%d,"msg":"processed","topic":%q,"partition":0,"offset":"%d"}`+"\n", 1767225600000+i, topic, o)
		fmt.Fprintf(&text, "%s 0 %d\n", topic, o)
		fmt.Fprintf(&tr, `{"ts":"2026-12-03T00:00:01Z","at_ms":%d,"ev":"serve","partition":0,"offsets":[%d]}`+"\n", 1000+i, o)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return map[string][]string{
		"pattern log": {write("app.log", pat.String()), "--pattern", `processed message topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)`},
		"pino":        {write("pino.log", pino.String())},
		"text":        {write("deliveries.txt", text.String())},
		"trace":       {write("deliveries.trace.jsonl", tr.String())},
	}
}

// readCommitted returns the offsets of partition 0's records as a read_committed
// consumer receives them, from the log start.
func readCommitted(t *testing.T, topic string) []int64 {
	t.Helper()
	opts, err := kafkaconf.Config{Brokers: env.Brokers}.KgoOpts()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(200*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var offs []int64
	for polls := 0; polls < 30; polls++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { offs = append(offs, r.Offset); n++ })
		if n == 0 && len(offs) > 0 {
			break // nothing more within 2 s on loopback: the rest are markers, if anything
		}
	}
	return offs
}

// expectFromRecords is the answer the rule gives on records: a record below the commit
// never delivered is lost; runs go on across offsets that hold no record.
func expectFromRecords(records, delivered []int64, committed int64) answer {
	del := map[int64]bool{}
	for _, o := range delivered {
		del[o] = true
	}
	var lost []int64
	stranded := false
	for _, o := range records {
		switch {
		case del[o]:
		case o < committed:
			lost = append(lost, o)
		default:
			stranded = true
		}
	}
	a := answer{Verdict: "OK"}
	if stranded {
		a.Verdict = "STRANDED"
	}
	if len(lost) > 0 {
		a.Verdict = "LOST"
		for _, r := range kpart.RunsIn(lost, records) {
			a.Lost = append(a.Lost, rangeJSON{r.First, r.Last, r.Count})
		}
		first := lost[0]
		a.SafeRewind = &first
	}
	return a
}

// answer is what a command says of partition 0.
type answer struct {
	Verdict    string
	Lost       []rangeJSON
	SafeRewind *int64
}

func (a answer) String() string {
	r := "-"
	if a.SafeRewind != nil {
		r = fmt.Sprint(*a.SafeRewind)
	}
	return fmt.Sprintf("%s lost %v rewind %s", a.Verdict, a.Lost, r)
}

type judgementJSON struct {
	Verdict    string      `json:"verdict"`
	Lost       []rangeJSON `json:"lost"`
	SafeRewind *int64      `json:"safe_rewind_offset"`
}

// TestEveryCommandGivesTheSameVerdictOnTheSameEvidence: issue 21 §1. One partition per
// case, written with transaction markers, aborted transactions and deleted records; the
// group's commit set by the admin API; the deliveries in four forms. inspect, rewind's
// plan and trace parse --group must say the same of every case in every form: verdict,
// lost ranges, safe rewind offset (rewind's target is it, its lost ranges the same).
func TestEveryCommandGivesTheSameVerdictOnTheSameEvidence(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	seq := func(a, b int64) []int64 {
		var out []int64
		for o := a; o <= b; o++ {
			out = append(out, o)
		}
		return out
	}
	cases := []struct {
		name        string
		batches     []batch
		deleteBelow int64
		committed   int64
		delivered   []int64
		want        answer
	}{
		{"the seed: 200 in a transaction, one more, 82-199 committed past", []batch{{n: 200, txn: true}, {n: 1}}, 0, 202,
			append(seq(0, 81), 201), answer{"LOST", []rangeJSON{{82, 199, 118}}, i64(82)}},
		{"an aborted transaction inside a loss is neither lost nor splits it", []batch{{n: 5}, {n: 5, txn: true, abort: true}, {n: 5}}, 0, 16,
			[]int64{0, 1, 2, 13, 14, 15}, answer{"LOST", []rangeJSON{{3, 12, 4}}, i64(3)}},
		{"records not delivered and not committed past are stranded", []batch{{n: 30}}, 0, 10,
			seq(0, 9), answer{"STRANDED", nil, nil}},
		{"records deleted below the log start are lost and cannot be restored", []batch{{n: 60}}, 40, 50,
			seq(0, 20), answer{"LOST", []rangeJSON{{40, 49, 10}}, i64(40)}},
		{"everything delivered but the commit marker is OK", []batch{{n: 10, txn: true}}, 0, 11,
			seq(0, 9), answer{"OK", nil, nil}},
	}
	adm := admin(t)
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := fmt.Sprintf("onejudge-%d-%d", ci, time.Now().UnixNano())
			group := topic + "-group"
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
			keep(topic)
			keepGroup(group)
			writePartition(t, topic, c.batches)
			if c.deleteBelow > 0 {
				to := kadm.Offsets{}
				to.AddOffset(topic, 0, c.deleteBelow, -1)
				if del, err := adm.DeleteRecords(ctx, to); err != nil || del.Error() != nil {
					t.Fatalf("DeleteRecords: %v %v", err, del.Error())
				}
			}
			commit := kadm.Offsets{}
			commit.AddOffset(topic, 0, c.committed, -1)
			if resp, err := adm.CommitOffsets(ctx, group, commit); err != nil || resp.Error() != nil {
				t.Fatalf("CommitOffsets: %v %v", err, resp.Error())
			}
			// what the partition holds, as franz-go's read_committed consumer reads it: the
			// expected answer follows from it (the layout of markers differs between kfake
			// and Kafka); on kfake it must also be the case's written expectation
			want := expectFromRecords(readCommitted(t, topic), c.delivered, c.committed)
			if !env.Real && !reflect.DeepEqual(want, c.want) {
				t.Fatalf("the partition read back gives %s, the case says %s", want, c.want)
			}
			c.want = want
			files := evidenceFiles(t, t.TempDir(), topic, group, c.delivered)
			conn := []string{"--brokers", env.Brokers, "--group", group, "--timeout", "20s", "-o", "json"}
			for form, ev := range files {
				got := map[string]answer{}
				in := kstranded(t, time.Minute, append(append([]string{"inspect", "--delivered", ev[0]}, ev[1:]...), conn...)...)
				id := decode[struct {
					Partitions []struct {
						Judgement *judgementJSON `json:"judgement"`
					} `json:"partitions"`
				}](t, in)
				if len(id.Partitions) != 1 || id.Partitions[0].Judgement == nil {
					t.Fatalf("%s: inspect partitions %+v\n%s", form, id.Partitions, in)
				}
				j := id.Partitions[0].Judgement
				got["inspect"] = answer{j.Verdict, j.Lost, j.SafeRewind}

				tp := kstranded(t, time.Minute, append(append([]string{"trace", "parse", ev[0]}, ev[1:]...), conn...)...)
				td := decode[struct {
					Partitions []struct {
						Partition int32          `json:"partition"`
						Judgement *judgementJSON `json:"judgement"`
					} `json:"partitions"`
				}](t, tp)
				if len(td.Partitions) != 1 || td.Partitions[0].Judgement == nil {
					t.Fatalf("%s: trace parse partitions %+v\n%s", form, td.Partitions, tp)
				}
				j = td.Partitions[0].Judgement
				got["trace parse --group"] = answer{j.Verdict, j.Lost, j.SafeRewind}
				if in.Code != tp.Code {
					t.Errorf("%s: inspect exit %d, trace parse exit %d", form, in.Code, tp.Code)
				}

				rw := kstranded(t, time.Minute, append(append([]string{"rewind", "--delivered", ev[0]}, ev[1:]...), conn...)...)
				rd := decode[struct {
					Moves []struct {
						Target     int64       `json:"target"`
						LostRanges []rangeJSON `json:"lost_ranges"`
					} `json:"moves"`
				}](t, rw)
				switch {
				case c.want.SafeRewind == nil && len(rd.Moves) != 0:
					t.Errorf("%s: rewind plans %+v where nothing is lost\n%s", form, rd.Moves, rw)
				case c.want.SafeRewind != nil && (len(rd.Moves) != 1 || rd.Moves[0].Target != *c.want.SafeRewind || !reflect.DeepEqual(rd.Moves[0].LostRanges, c.want.Lost)):
					t.Errorf("%s: rewind plans %+v, want a move to %d restoring %v\n%s", form, rd.Moves, *c.want.SafeRewind, c.want.Lost, rw)
				}
				for cmd, a := range got {
					if len(a.Lost) == 0 {
						a.Lost = nil
					}
					if !reflect.DeepEqual(a, c.want) {
						t.Errorf("%s: %s says %s, want %s", form, cmd, a, c.want)
					}
				}
			}
		})
	}
}

// TestTheReprosVerdictIsEveryCommandsOnItsTrace: issue 21 §1 on the repro trace. What
// repro judged of its own run (the producer's acknowledgements, its deliveries, the
// commit read back) is what inspect and trace parse --group judge from the trace it wrote
// and the group it left, and what trace parse judges from the trace alone.
func TestTheReprosVerdictIsEveryCommandsOnItsTrace(t *testing.T) {
	testenv.MustLive(t) // the shared v1.10.0 repro run
	f := lossRun(t)
	r82 := int64(82)
	want := answer{"LOST", []rangeJSON{{82, 199, 118}}, &r82}
	conn := []string{"--brokers", env.Brokers, "--group", f.run.Group, "--timeout", "20s", "-o", "json"}
	got := map[string]answer{}
	in := kstranded(t, time.Minute, append([]string{"inspect", "--delivered", f.trace}, conn...)...)
	id := decode[struct {
		Partitions []struct {
			Judgement *judgementJSON `json:"judgement"`
		} `json:"partitions"`
	}](t, in)
	if len(id.Partitions) != 1 || id.Partitions[0].Judgement == nil {
		t.Fatalf("inspect: %s", in)
	}
	j := id.Partitions[0].Judgement
	got["inspect"] = answer{j.Verdict, j.Lost, j.SafeRewind}
	type traceDoc struct {
		Partitions []struct {
			Judgement *judgementJSON `json:"judgement"`
		} `json:"partitions"`
	}
	for name, args := range map[string][]string{
		"trace parse --group": append([]string{"trace", "parse", f.trace}, conn...),
		"trace parse":         {"trace", "parse", f.trace, "-o", "json"},
	} {
		r := kstranded(t, time.Minute, args...)
		d := decode[traceDoc](t, r)
		if len(d.Partitions) != 1 || d.Partitions[0].Judgement == nil {
			t.Fatalf("%s: %s", name, r)
		}
		j := d.Partitions[0].Judgement
		got[name] = answer{j.Verdict, j.Lost, j.SafeRewind}
		if r.Code != in.Code {
			t.Errorf("%s exit %d, inspect %d", name, r.Code, in.Code)
		}
	}
	for cmd, a := range got {
		if !reflect.DeepEqual(a, want) {
			t.Errorf("%s says %s, repro says %s", cmd, a, want)
		}
	}
	if p := f.run.Partitions; len(p) != 1 || len(p[0].Lost) != 1 || p[0].Lost[0].First != 82 || p[0].Lost[0].Last != 199 {
		t.Errorf("repro's own partitions %+v, want LOST 82-199", p)
	}
}
