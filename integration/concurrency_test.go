package integration

// Concurrent use (issue 16 §5): a repro run in a group that has other members at start,
// and two rewinds of one group at once.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
