package repro

import (
	"strings"
	"testing"
	"time"
)

func TestSetPropertySetsTheModelsSettingFromTheClientsConfig(t *testing.T) {
	cases := []struct {
		key, value string
		want       func(o Options) bool
	}{
		{"max.poll.interval.ms", "2700000", func(o Options) bool { return o.MaxPollInterval == 45*time.Minute }},
		{"auto.commit.interval.ms", "1000", func(o Options) bool { return o.AutoCommitInterval == time.Second }},
		{"enable.auto.commit", "false", func(o Options) bool { return !o.AutoCommit }},
		{"js.consumer.max.batch.size", "5", func(o Options) bool { return o.BatchSize == 5 }},
		{"js.consumer.max.batch.size", "-1", func(o Options) bool { return o.BatchSize == -1 }},
		{"fetch.message.max.bytes", "1048576", func(o Options) bool { return o.MaxBytes == 1048576 }},
		{"max.partition.fetch.bytes", "4096", func(o Options) bool { return o.MaxBytes == 4096 }},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			o := DefaultOptions()
			changed, err := o.SetProperty(c.key, c.value)
			if err != nil || !changed || !c.want(o) {
				t.Fatalf("changed %v, err %v, options %+v", changed, err, o)
			}
		})
	}
}

func TestSetPropertyRefusesWhatTheModelDoesNotRead(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"fetch.wait.max.ms", "500", "not a property the consumer model reads"},
		{"session.timeout.ms", "45000", "not a property the consumer model reads"},
		{"max.poll.interval.ms", "15m", "want milliseconds"},
		{"max.poll.interval.ms", "-1", "want milliseconds"},
		{"enable.auto.commit", "maybe", "want true or false"},
		{"js.consumer.max.batch.size", "lots", "want an integer"},
	} {
		o := DefaultOptions()
		if _, err := o.SetProperty(c.key, c.value); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s=%s: error %v, want one naming the property and %q", c.key, c.value, err, c.want)
		}
	}
}

func TestSetPropertyOfTheDefaultValueChangesNothing(t *testing.T) {
	o := DefaultOptions()
	if changed, err := o.SetProperty("max.poll.interval.ms", "900000"); err != nil || changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
}
