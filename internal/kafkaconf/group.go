package kafkaconf

import (
	"fmt"
	"strings"
)

// The consumer group protocols librdkafka speaks (group.protocol, librdkafka 2.4+):
// classic is the JoinGroup/SyncGroup protocol with client-side assignors; consumer is
// KIP-848's, where the broker assigns partitions incrementally through
// ConsumerGroupHeartbeat (generally available in Apache Kafka 4.0).
const (
	GroupProtocolClassic  = "classic"
	GroupProtocolConsumer = "consumer"
)

// ClassicOnly are the consumer properties that belong to the classic protocol: with
// group.protocol=consumer the broker owns the session timeout, the heartbeat interval
// and the assignor (group.consumer.* broker settings, group.remote.assignor on the
// client), and librdkafka refuses to create the consumer when any of them is set
// ("`session.timeout.ms` is not supported for `group.protocol=consumer`",
// rdkafka_conf.c, rd_kafka_conf_finalize; CONFIGURATION.md marks them "Only applies
// with group.protocol=classic").
var ClassicOnly = []string{"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy", "group.protocol.type"}

// ParseGroupProtocol checks a group protocol name; empty means classic, librdkafka's
// default.
func ParseGroupProtocol(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", GroupProtocolClassic:
		return GroupProtocolClassic, nil
	case GroupProtocolConsumer:
		return GroupProtocolConsumer, nil
	}
	return "", fmt.Errorf("group protocol %q: want classic or consumer", s)
}

// GroupProtocol returns the group protocol a consumer gets from the user's properties
// and the command's choice (--group-protocol; empty: none). The two must agree when
// both are given; errors name the flag or property (callers report them as usage
// errors).
func (c Config) GroupProtocol(flag string) (string, error) {
	fromProps, err := ParseGroupProtocol(c.Props["group.protocol"])
	if err != nil {
		return "", fmt.Errorf("group.protocol (-X or --config): %w", err)
	}
	if flag == "" {
		return fromProps, nil
	}
	fromFlag, err := ParseGroupProtocol(flag)
	if err != nil {
		return "", fmt.Errorf("--group-protocol: %w", err)
	}
	if _, set := c.Props["group.protocol"]; set && fromFlag != fromProps {
		return "", fmt.Errorf("--group-protocol %s contradicts group.protocol=%s from -X or --config", fromFlag, fromProps)
	}
	return fromFlag, nil
}

// ForGroupProtocol returns consumer properties for protocol: with consumer, the
// classic-only settings are left out (they are the broker's) and group.protocol is
// set; with classic, props unchanged.
func ForGroupProtocol(protocol string, props map[string]string) map[string]string {
	if protocol != GroupProtocolConsumer {
		return props
	}
	out := make(map[string]string, len(props)+1)
	for k, v := range props {
		out[k] = v
	}
	for _, k := range ClassicOnly {
		delete(out, k)
	}
	out["group.protocol"] = GroupProtocolConsumer
	return out
}
