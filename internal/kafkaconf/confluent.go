package kafkaconf

import (
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ConfigMap turns merged properties into a confluent-kafka-go ConfigMap.
func ConfigMap(props map[string]string) *kafka.ConfigMap {
	cm := kafka.ConfigMap{}
	for k, v := range props {
		cm[k] = v
	}
	return &cm
}
