package cmd

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/jsclient"
)

func TestRealClientShapeComesFromTheFlagsGiven(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    jsclient.Shape
		refused string
	}{
		{name: "no shape flag is the seed", args: nil, want: jsclient.Seed},
		{name: "durations are the scenario's at 1/100",
			args: []string{"--max-poll-interval", "5m", "--handler-delay", "40s"},
			want: jsclient.Shape{MaxPoll: 3 * time.Second, Delay: 400 * time.Millisecond}},
		{name: "a multi-partition shape one record at a time",
			args: []string{"--spread", "8x5", "--concurrency", "2", "--handler-parallel", "1", "--handler", "each-message"},
			want: jsclient.Shape{Spread: "8x5", Concurrency: 2, Parallel: 1, Handler: "eachMessage"}},
		{name: "the client's manual commit", args: []string{"--commit", "manual"}, want: jsclient.Shape{Commit: "manual"}},
		{name: "a pause from the payload at 1/100",
			args: []string{"--commit", "manual", "--pause-at", "3m20s", "--resume-after", "50s"},
			want: jsclient.Shape{Commit: "manual", PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond}},
		{name: "a pause from outside the handler and the handler's commitOffsets([...])",
			args: []string{"--commit", "explicit", "--pause-at", "3m20s", "--resume-after", "50s", "--pause-from", "outside"},
			want: jsclient.Shape{Commit: "explicit", PauseAt: 2 * time.Second, ResumeAfter: 500 * time.Millisecond, PauseFrom: "outside"}},
		{name: "kstranded's ledger commit is the model's, refused", args: []string{"--commit", "ledger"}, refused: "auto, manual or explicit"},
		{name: "an unknown pause caller is refused", args: []string{"--pause-at", "1s", "--pause-from", "timer"}, refused: "--pause-from"},
		{name: "a seek from the handler at 1/100, heartbeat and the isStale() idiom",
			args: []string{"--seek-at", "3m50s", "--seek-to", "100", "--heartbeat", "--auto-resolve=false"},
			want: jsclient.Shape{SeekAt: 2300 * time.Millisecond, SeekTo: 100, Heartbeat: true, ResolveEachRound: true}},
		{name: "members and their steps at 1/100, under the consumer protocol",
			args: []string{"--members", "2", "--rebalance-at", "5m:join", "--rebalance-at", "15m:leave=1", "--group-protocol", "consumer"},
			want: jsclient.Shape{Members: 2, Rebalance: []jsclient.Step{{At: 3 * time.Second, Join: true}, {At: 9 * time.Second, Member: 1}}, GroupProtocol: "consumer"}},
		{name: "the classic protocol named is the default", args: []string{"--group-protocol", "classic"}, want: jsclient.Seed},
		{name: "a step between scenario.js's milliseconds is refused", args: []string{"--rebalance-at", "5m50ms:join"}, refused: "--rebalance-at 5m50ms:join"},
		{name: "a leave of a member not in the group is refused before any client runs",
			args: []string{"--rebalance-at", "5m:leave=2"}, refused: "m2 is not in the group"},
		{name: "a group protocol neither has is refused", args: []string{"--group-protocol", "share"}, refused: "--group-protocol"},
		{name: "a flag scenario.js has not is refused by name", args: []string{"--heartbeat-interval", "1s", "--session-timeout", "10s"}, refused: "--heartbeat-interval, --session-timeout"},
		{name: "a pause of named partitions and several seeks at 1/100",
			args: []string{"--pause-at", "5m", "--resume-after", "50s", "--pause-from", "outside", "--pause-partitions", "1,3", "--seek", "1:5@5m", "--seek", "60@8m20s"},
			want: jsclient.Shape{PauseAt: 3 * time.Second, ResumeAfter: 500 * time.Millisecond, PauseFrom: "outside", PausePartitions: "1,3", Seeks: "1:5@3s,60@5s"}},
		{name: "a seek the real client cannot time to the millisecond is refused", args: []string{"--seek", "1:5@150001ms"}, refused: "to the millisecond"},
		{name: "another time scale is refused", args: []string{"--time-scale", "1"}, refused: "--time-scale"},
		{name: "eachMessage with the eachBatch idiom of manual commit is refused, as by the model",
			args: []string{"--handler", "each-message", "--commit", "manual"}, refused: "--commit manual is the eachBatch idiom"},
		{name: "eachMessage with heartbeat() after each round is refused, as by the model",
			args: []string{"--handler", "each-message", "--heartbeat"}, refused: "--heartbeat applies to --handler each-batch only"},
		{name: "eachMessage with the isStale() idiom is refused, as by the model",
			args: []string{"--handler", "each-message", "--auto-resolve=false"}, refused: "--auto-resolve=false applies to --handler each-batch only"},
		{name: "a topic of no partitions is refused before any client starts", args: []string{"--partitions", "0"}, refused: "--partitions must be between 1 and"},
		{name: "the isStale() idiom with the handler's own commit is refused, as scenario.js does",
			args: []string{"--commit", "explicit", "--auto-resolve=false"}, refused: "--commit explicit has its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *reproOptions
			c := newReproCmd(&Globals{}, func(_ context.Context, o *reproOptions) error { got = o; return nil })
			if err := execWith(t, c, append([]string{"--real-client"}, tc.args...)...); err != nil {
				t.Fatal(err)
			}
			s, err := realClientShape(c, got)
			if tc.refused != "" {
				if exitcode.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("shape %+v, err %v; want a usage error naming %q", s, err, tc.refused)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(s, tc.want) {
				t.Fatalf("shape %+v, err %v; want %+v", s, err, tc.want)
			}
		})
	}
}

// The model of --compare-model runs on a topic of the real run's partitions (--partitions):
// they decide each member's workers and the assignor's split. A workload on a partition
// the topic has not is refused by simulate, as it would be on the real run's topic.
func TestCompareModelSimulatesTheRealRunsTopic(t *testing.T) {
	shape := jsclient.Shape{Spread: "0:5,3:5"}
	g := &Globals{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Timeout: time.Minute}
	if _, err := modelOfShape(context.Background(), g, "1.10.1", shape, 2); err == nil || !strings.Contains(err.Error(), "the topic needs at least 4 partitions") {
		t.Fatalf("a topic of 2 partitions and records on partition 3: %v, want simulate's refusal naming --partitions 2", err)
	}
	res, err := modelOfShape(context.Background(), g, "1.10.1", shape, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Partitions) != 2 || res.Partitions[1].Partition != 3 {
		t.Fatalf("partitions judged: %+v", res.Partitions)
	}
}
