package repro

import (
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kstranded/kstranded/internal/kafkaconf"
	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

// offlineSource is a live source whose brokers never answer: enough to call the client's
// pause and resume, which act on local state only.
func offlineSource(t *testing.T) *rdSource {
	t.Helper()
	cfg, err := kafkaconf.Load("127.0.0.1:1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newRDSource(cfg, map[string]string{"group.id": "g", "log_level": "0"}, "t", func(traceevent.Event) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.c.Close() })
	return s
}

func TestTheClientReportsNoPerPartitionPauseError(t *testing.T) {
	// The fact the source's own check rests on: librdkafka's per-partition result of
	// pause/resume (unknown partition) is not copied back into the Go slice.
	s := offlineSource(t)
	topic := "not-a-topic"
	ps := []kafka.TopicPartition{{Topic: &topic, Partition: 7}}
	if err := s.c.Pause(ps); err != nil {
		t.Fatalf("Pause of an unknown partition returned %v; the source's check assumes nil", err)
	}
	if ps[0].Error != nil {
		t.Fatalf("Pause filled the slice's error (%v): the client now reports per-partition errors itself", ps[0].Error)
	}
}

func TestPauseAndResumeOfAPartitionNotAssignedFail(t *testing.T) {
	s := offlineSource(t)
	tp := kpart.TopicPartition{Topic: "t", Partition: 3}
	for name, f := range map[string]func(kpart.TopicPartition) error{"pause": s.Pause, "resume": s.Resume} {
		err := f(tp)
		if err == nil || !strings.Contains(err.Error(), "not assigned") {
			t.Errorf("%s of an unassigned partition: %v, want an error saying it is not assigned", name, err)
		}
	}
	s.assignment = []kpart.TopicPartition{tp}
	if err := s.Pause(tp); err != nil {
		t.Errorf("pause of an assigned partition: %v", err)
	}
	if err := s.Resume(tp); err != nil {
		t.Errorf("resume of an assigned partition: %v", err)
	}
}

func TestAConsumerWithoutPartitionsPastTheBoundEndsThePhase(t *testing.T) {
	tp := kpart.TopicPartition{Topic: "t", Partition: 0}
	cases := []struct {
		name     string
		src      rdSource
		wantFail bool
	}{
		{"never unassigned", rdSource{}, false},
		{"unassigned for less than the bound", rdSource{unassignedSince: time.Now()}, false},
		{"unassigned past the bound (session lost under load)", rdSource{unassignedSince: time.Now().Add(-time.Minute)}, true},
		{"assigned again", rdSource{unassignedSince: time.Now().Add(-time.Minute), assignment: []kpart.TopicPartition{tp}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.src.orphaned(10 * time.Second); (err != nil) != c.wantFail {
				t.Fatalf("orphaned: %v, want failure %v", err, c.wantFail)
			}
		})
	}
}
