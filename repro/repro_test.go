package repro

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kstranded/kstranded/eachbatch"
	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/testenv"
	"github.com/kstranded/kstranded/internal/verdict"
)

// testKafka returns the brokers of a real cluster when KSTRANDED_TEST_BROKERS is set
// (testenv/kafka starts one), else the embedded broker.
func testKafka(t *testing.T) kafkaconf.Config {
	t.Helper()
	// The policy verdicts themselves are asserted once, black-box, by integration/.
	c, err := kafkaconf.Load(os.Getenv("KSTRANDED_TEST_BROKERS"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLiveLedgerCommitStrandsInsteadOfLosingAndARestartDelivers(t *testing.T) {
	testenv.MustLive(t) // a live consumer at scaled time for ~30 s
	o := DefaultOptions()
	o.Kafka = testKafka(t)
	o.Policy, o.Commit = eachbatch.V1_10_0, CommitLedger
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Partitions[0]
	if got := p.CommittedByPhase; len(got) != 3 || got[0] != 82 || got[1] != 82 || got[2] != 202 {
		t.Errorf("committed by phase %v, want [82 82 202]", got)
	}
	if got := p.VerdictByPhase; len(got) != 3 || got[0] != verdict.Stranded || got[1] != verdict.Stranded || got[2] != verdict.OK {
		t.Errorf("verdict by phase %v, want STRANDED, STRANDED, OK", got)
	}
	if res.Lost() != 0 || p.Delivered != 201 || p.Duplicates < 1 {
		t.Errorf("lost %d delivered %d duplicates %d, want 0, 201 and at least 1 (record 201 again after the restart)", res.Lost(), p.Delivered, p.Duplicates)
	}
	if res.Restarts < 1 {
		t.Errorf("restarts %d", res.Restarts)
	}
}

func TestConsumerPropsUnderTheConsumerProtocolLeaveTheClassicSettingsOut(t *testing.T) {
	for _, c := range []struct {
		name  string
		flag  string
		props map[string]string
	}{
		{name: "--group-protocol consumer", flag: "consumer"},
		{name: "-X group.protocol=consumer", props: map[string]string{"group.protocol": "consumer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.GroupProtocol, o.Kafka.Props = c.flag, c.props
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			m := consumerProps(o, "g", false)
			for _, k := range kafkaconf.ClassicOnly {
				if v, ok := m[k]; ok {
					t.Errorf("%s=%s is set; librdkafka refuses it with group.protocol=consumer", k, v)
				}
			}
			// Twice the scaled max.poll.interval (18 s), not raised to a session timeout the
			// consumer does not have.
			if m["group.protocol"] != "consumer" || m["max.poll.interval.ms"] != "18000" {
				t.Errorf("group.protocol %q max.poll.interval.ms %q, want consumer and 18000", m["group.protocol"], m["max.poll.interval.ms"])
			}
			if _, ok := o.settingsMap()["session_timeout"]; ok {
				t.Error("the run's settings report a session timeout the consumer does not send")
			}
		})
	}
	o := DefaultOptions()
	if m := consumerProps(o, "g", false); m["session.timeout.ms"] != "6000" || m["heartbeat.interval.ms"] != "1500" {
		t.Errorf("classic: session.timeout.ms %q heartbeat.interval.ms %q, want the seed's 6000 and 1500", m["session.timeout.ms"], m["heartbeat.interval.ms"])
	}
}
