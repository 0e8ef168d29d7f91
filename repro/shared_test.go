package repro

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/testenv"
)

func TestStrangerIsAMemberThatIsNotOneOfTheRunsConsumers(t *testing.T) {
	m := func(client string) inspect.Member {
		return inspect.Member{ID: client + "-id", ClientID: client, Host: "/127.0.0.1", Assigned: inspect.Assignment{}}
	}
	for _, tc := range []struct {
		name    string
		members []inspect.Member
		started int
		want    string
	}{
		{"the run alone", []inspect.Member{m("kstranded-ab12")}, 1, ""},
		{"the run's members after a restart", []inspect.Member{m("kstranded-ab12"), m("kstranded-ab12")}, 3, ""},
		{"an application", []inspect.Member{m("kstranded-ab12"), m("billing")}, 1, "client billing"},
		{"a second run", []inspect.Member{m("kstranded-cd34"), m("kstranded-ab12")}, 1, "client kstranded-cd34"},
		{"the same client.id, more members than the run started", []inspect.Member{m("app"), m("app")}, 1, "2 members with the run's client.id app, where the run started 1"},
	} {
		id := "kstranded-ab12"
		if strings.HasPrefix(tc.name, "the same") {
			id = "app"
		}
		got := stranger(inspect.Group{ID: "g", Members: tc.members}, id, tc.started)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestLiveAMemberThatJoinsTheGroupMidRunMakesTheRunIncomplete: issue 27 §4. Two runs
// started together in one --group both pass the check at start; each then shares the
// group's partitions and rebalances with the other and reported a complete LOST of part
// of the loss. A member that joins while the run goes on (here an application's franz-go
// consumer, a second after the run's consumer) is seen by the run's watch of its group:
// the run is INCOMPLETE, saying who and when.
func TestLiveAMemberThatJoinsTheGroupMidRunMakesTheRunIncomplete(t *testing.T) {
	testenv.MustLive(t) // a live consumer at scaled time for ~30 s
	b, err := embedded.Start(embedded.Options{Topic: "stranded", Partitions: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg, err := kafkaconf.Load(b.Addr(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Kafka, o.Group = cfg, "shared-mid-run"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup("shared-mid-run"), kgo.ConsumeTopics("stranded"), kgo.ClientID("billing-app"), kgo.Balancers(kgo.RangeBalancer()))
		if err != nil {
			return
		}
		defer cl.Close()
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	res, err := Run(ctx, o)
	cancel()
	if !errors.Is(err, ErrSharedGroup) {
		t.Fatalf("err = %v, want ErrSharedGroup", err)
	}
	if res == nil || res.Complete || !strings.Contains(res.Error, "client billing-app") || !strings.Contains(res.Error, "shared-mid-run") {
		t.Fatalf("result: complete %v, error %q", res != nil && res.Complete, res.Error)
	}
}
