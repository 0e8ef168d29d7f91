package integration

// Concurrent use (issue 16 §5): a repro run in a group that has other members at start,
// and two rewinds of one group at once.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/testenv"
)

// joinGroup starts a franz-go consumer in group (client ID clientID, range assignor, so
// that librdkafka's consumers can join the same group) and waits until it is a member.
func joinGroup(t *testing.T, brokers, group, topic, clientID string) {
	t.Helper()
	adm := adminOn(t, brokers)
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if _, err := adm.CreateTopic(cctx, 1, -1, nil, topic); err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		t.Fatal(err)
	}
	opts, err := kafkaconf.Config{Brokers: brokers}.KgoOpts()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.ClientID(clientID), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.Balancers(kgo.RangeBalancer()))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // polls, so that it rejoins when a repro consumer joins
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
	until(t, 30*time.Second, "the franz-go consumer joined "+group, func() bool { return hasMember(adm, group) })
}

// TestAReproInAGroupWithOtherMembersIsRefusedUnlessAllowed: two repro runs with one
// --group used to share its partitions silently, each reporting part of a loss. A group
// with members at start is refused with exit 5 naming them, by repro and repro consume;
// --allow-shared-group runs and says so in the result.
func TestAReproInAGroupWithOtherMembersIsRefusedUnlessAllowed(t *testing.T) {
	b := startBroker(t)
	group := fmt.Sprintf("kstranded-shared-%d", time.Now().UnixNano())
	joinGroup(t, b.addr, group, "other-app-topic", "other-app")
	conn := []string{"--brokers", b.addr, "--group", group, "--timeout", "10s"}

	for _, args := range [][]string{
		{"repro"},
		{"repro", "consume", "--topic", "other-app-topic"},
	} {
		t.Run(strings.Join(args, " ")+" is refused", func(t *testing.T) {
			r := kstranded(t, time.Minute, append(args, conn...)...)
			if r.Code != 5 || !strings.Contains(r.Stderr, "1 other member(s) at start") || !strings.Contains(r.Stderr, "client other-app") || !strings.Contains(r.Stderr, "--allow-shared-group") {
				t.Fatalf("exit %d, want 5 naming the member (client other-app) and --allow-shared-group\n%s", r.Code, r)
			}
		})
	}

	t.Run("repro --allow-shared-group runs with a warning", func(t *testing.T) {
		testenv.MustLive(t) // runs the whole repro at scaled time
		r := kstranded(t, 3*time.Minute, append([]string{"repro", "--allow-shared-group", "-o", "json"}, conn...)...)
		if r.Code == 5 || r.Code == 2 {
			t.Fatalf("exit %d: --allow-shared-group must run\n%s", r.Code, r)
		}
		doc := decode[struct {
			Runs []struct {
				Warnings []string `json:"warnings"`
			} `json:"runs"`
		}](t, r)
		if len(doc.Runs) != 1 || len(doc.Runs[0].Warnings) == 0 || !strings.Contains(doc.Runs[0].Warnings[0], "1 other member(s) at start") || !strings.Contains(doc.Runs[0].Warnings[0], "client other-app") {
			t.Fatalf("runs %+v, want a warning naming the other member\n%s", doc.Runs, r)
		}
	})
}

// TestTwoRewindsAtOnceExactlyOneIsDone: issue 27 §1. Two `rewind --execute` of one group
// started together, 50 and 60 from 100: both used to print DONE with BEFORE 100, one
// operator told redelivery starts at 50 while the group restarts at 60. In each round
// exactly one is DONE, and the group holds that one's target; the other changed nothing
// (exit 5) and names the offset the group holds now.
func TestTwoRewindsAtOnceExactlyOneIsDone(t *testing.T) {
	topic := fmt.Sprintf("kstranded-two-rewinds-%d", time.Now().UnixNano())
	group := topic
	keep(topic)
	keepGroup(group)
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, topic); err != nil {
		t.Fatal(err)
	}
	opts, err := kafkaconf.Config{Brokers: env.Brokers}.KgoOpts()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	for i := range 120 {
		if err := pr.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	contended := 0
	defer func() {
		t.Logf("%d of 20 rounds had one DONE and one refused (the others ran one after the other)", contended)
	}()
	for round := range 20 {
		to := kadm.Offsets{}
		to.AddOffset(topic, 0, 100, -1)
		if err := adm.CommitAllOffsets(ctx, group, to); err != nil {
			t.Fatal(err)
		}
		var runs [2]func() result
		for i, target := range []int64{50, 60} {
			_, runs[i] = started(t, "rewind", "--brokers", env.Brokers, "--group", group, "--to", fmt.Sprintf("%s/0=%d", topic, target),
				"--execute", "--undo-file", filepath.Join(dir, fmt.Sprintf("undo-%d-%d.json", round, target)), "--timeout", "20s")
		}
		rs := [2]result{runs[0](), runs[1]()}
		targets := [2]int64{50, 60}
		var done []int
		for i, r := range rs {
			if strings.Contains(r.Stdout+r.Stderr, "DONE") {
				if r.Code != 0 {
					t.Fatalf("round %d: DONE with exit %d\n%s", round, r.Code, r)
				}
				done = append(done, i)
			}
		}
		var want int64
		switch len(done) {
		case 0:
			t.Fatalf("round %d: neither rewind reports DONE\n%s\n%s", round, rs[0], rs[1])
		case 2:
			// Only if one ran after the other: the second's BEFORE is the first's
			// target, and the group holds the second's. Two DONEs from 100 is the bug.
			b0, b1 := doneBefore(rs[0]), doneBefore(rs[1])
			switch {
			case b0 == 100 && b1 == targets[0]:
				want = targets[1]
			case b1 == 100 && b0 == targets[1]:
				want = targets[0]
			default:
				t.Fatalf("round %d: both rewinds report DONE, BEFORE %d and %d\n%s\n%s", round, b0, b1, rs[0], rs[1])
			}
		case 1:
			contended++
			want = targets[done[0]]
			loser := rs[1-done[0]]
			if loser.Code != 5 || !strings.Contains(loser.Stderr, fmt.Sprintf("now %d", want)) && !strings.Contains(loser.Stderr, fmt.Sprintf("from %d", want)) {
				t.Fatalf("round %d: the loser exits %d, want 5 naming the winner's offset %d\n%s", round, loser.Code, want, loser)
			}
		}
		if got := committedOffsets(t, adm, group, topic)[0]; got != want {
			t.Fatalf("round %d: the group is at %d, the DONE rewind's target is %d", round, got, want)
		}
	}
}

// doneBefore is the BEFORE column of a DONE rewind's read-back table (-1: none).
func doneBefore(r result) int64 {
	for _, l := range strings.Split(r.Stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 6 && f[5] == "yes" {
			var b int64
			if _, err := fmt.Sscan(f[2], &b); err == nil {
				return b
			}
		}
	}
	return -1
}
