package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// groupFixture is a topic with the seed's records (repro produce: 200 in one
// transaction) and a group committed at 82 on partition 0, made without a consumer: for
// the tests that need a group to point commands at but not the loss a live run leaves
// (that is lossRun, in the live tier).
type groupFixture struct {
	topic, group string
	conn         []string // --brokers (the mTLS listener when there is one) and --config
}

func committedGroup(t *testing.T, name string) groupFixture {
	t.Helper()
	f := groupFixture{
		topic: fmt.Sprintf("kstranded-%s-%d", name, time.Now().UnixNano()),
		conn:  []string{"--brokers", env.Brokers},
	}
	f.group = f.topic
	if env.SSLBrokers != "" {
		f.conn = []string{"--brokers", env.SSLBrokers, "--config", env.SSLConfig}
	}
	keep(f.topic)
	keepGroup(f.group)
	if r := kstranded(t, time.Minute, append([]string{"repro", "produce", "--topic", f.topic, "--partitions", "1", "--timeout", "20s"}, f.conn...)...); r.Code != 0 {
		t.Fatalf("produce: %s", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: f.topic, Partition: 0, At: 82, LeaderEpoch: -1})
	resp, err := admin(t).CommitOffsets(ctx, f.group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("committing %s: %v", f.group, err)
	}
	return f
}
