package kafkaconf

import (
	"strings"
	"testing"
)

func TestGroupProtocolComesFromTheFlagOrTheProperties(t *testing.T) {
	cases := []struct {
		name    string
		props   map[string]string
		flag    string
		want    string
		wantErr string
	}{
		{name: "nothing given is classic, librdkafka's default", want: GroupProtocolClassic},
		{name: "the flag alone decides", flag: "consumer", want: GroupProtocolConsumer},
		{name: "the property alone decides", props: map[string]string{"group.protocol": "CONSUMER"}, want: GroupProtocolConsumer},
		{name: "flag and property agreeing is fine", props: map[string]string{"group.protocol": "consumer"}, flag: "consumer", want: GroupProtocolConsumer},
		{name: "flag and property disagreeing is an error naming both", props: map[string]string{"group.protocol": "consumer"}, flag: "classic", wantErr: "--group-protocol classic contradicts group.protocol=consumer"},
		{name: "an unknown flag value names the flag", flag: "eager", wantErr: "--group-protocol"},
		{name: "an unknown property value names the property", props: map[string]string{"group.protocol": "x"}, wantErr: "group.protocol (-X or --config)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Config{Props: c.props}.GroupProtocol(c.flag)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestTheConsumerProtocolLeavesTheClassicSettingsToTheBroker(t *testing.T) {
	props := map[string]string{"group.id": "g", "session.timeout.ms": "6000", "heartbeat.interval.ms": "1500", "partition.assignment.strategy": "range"}
	got := ForGroupProtocol(GroupProtocolConsumer, props)
	for _, k := range ClassicOnly {
		if _, ok := got[k]; ok {
			t.Errorf("%s kept under group.protocol=consumer", k)
		}
	}
	if got["group.protocol"] != "consumer" || got["group.id"] != "g" {
		t.Errorf("got %v, want group.protocol=consumer and group.id kept", got)
	}
	if props["session.timeout.ms"] != "6000" {
		t.Error("the input map was changed")
	}
	if c := ForGroupProtocol(GroupProtocolClassic, props); len(c) != len(props) || c["session.timeout.ms"] != "6000" {
		t.Errorf("classic changed the properties: %v", c)
	}
}
