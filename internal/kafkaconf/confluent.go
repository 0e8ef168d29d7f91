package kafkaconf

import (
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// NewProducer builds a librdkafka producer (also the base of kstranded's admin clients)
// on merged properties; see configMap for where its log lines go.
func NewProducer(props map[string]string) (*kafka.Producer, error) {
	p, err := kafka.NewProducer(configMap(props))
	if err != nil {
		return nil, err
	}
	if p.Logs() != nil {
		go discard(p.Logs())
	}
	return p, nil
}

// NewConsumer builds a librdkafka consumer on merged properties; see configMap for where
// its log lines go.
func NewConsumer(props map[string]string) (*kafka.Consumer, error) {
	c, err := kafka.NewConsumer(configMap(props))
	if err != nil {
		return nil, err
	}
	if c.Logs() != nil {
		go discard(c.Logs())
	}
	return c, nil
}

// WantsClientLog reports whether the user asked for librdkafka's own log (-X debug=...).
func WantsClientLog(props map[string]string) bool {
	return strings.TrimSpace(props["debug"]) != ""
}

// configMap turns merged properties into a confluent-kafka-go ConfigMap.
//
// librdkafka's own logger writes each line straight to file descriptor 2
// ("%3|1796399996.011|FAIL|kstranded#producer-1| [thrd:...]: ... Connection refused"),
// ahead of kstranded's error, which already says why: repro's reachError carries the
// last broker error the client reported on its Events channel. So unless the user asked
// for librdkafka's debug output (-X debug=...), the lines go to the client's Logs()
// channel instead (go.logs.channel.enable), which NewProducer and NewConsumer empty and
// discard. The channel is confluent-kafka-go's own: Close stops its poller without
// waiting on a reader and then closes it (handle.go, pollLogEvents and cleanup), which
// ends the draining goroutine, so closing a client cannot block on it.
//
// With debug the lines stay librdkafka's, on stderr in the shape `trace parse` reads:
// confluent-kafka-go stops the Logs() poller before rd_kafka_consumer_close
// (consumer.go, Close), so through the channel a consumer's closing lines, its last
// OffsetCommit among them (about 120 lines in trace/testdata/repro-v1.10.0-rdkafka.log),
// would be lost.
func configMap(props map[string]string) *kafka.ConfigMap {
	cm := kafka.ConfigMap{}
	for k, v := range props {
		cm[k] = v
	}
	delete(cm, "go.logs.channel.enable")
	delete(cm, "go.logs.channel")
	if !WantsClientLog(props) {
		cm["go.logs.channel.enable"] = true
	}
	return &cm
}

// discard empties a client's log channel until Close closes it.
func discard(logs chan kafka.LogEvent) {
	for range logs {
	}
}
