package repro

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// modelProperty is a client property the consumer model reads: the flag that sets the
// same setting, and the setting (nil: read where it is, from Options.Kafka).
type modelProperty struct {
	flag  string
	field func(o *Options) any
}

// modelProperties are the client properties, as the JS client's configuration spells
// them, that set a setting the simulated consumer model reads. Durations are the
// milliseconds the configuration gives (max.poll.interval.ms is the JS client's own
// setting, which it doubles for librdkafka, as --max-poll-interval is).
// max.partition.fetch.bytes is librdkafka's alias of fetch.message.max.bytes.
var modelProperties = map[string]modelProperty{
	"max.poll.interval.ms":                     {"max-poll-interval", func(o *Options) any { return &o.MaxPollInterval }},
	"auto.commit.interval.ms":                  {"auto-commit-interval", func(o *Options) any { return &o.AutoCommitInterval }},
	"enable.auto.commit":                       {"auto-commit", func(o *Options) any { return &o.AutoCommit }},
	"js.consumer.max.batch.size":               {"batch-size", func(o *Options) any { return &o.BatchSize }},
	"js.consumer.max.cache.size.per.worker.ms": {"cache-size-per-worker", func(o *Options) any { return &o.CacheSizePerWorker }},
	"fetch.message.max.bytes":                  {"max-bytes", func(o *Options) any { return &o.MaxBytes }},
	"heartbeat.interval.ms":                    {"heartbeat-interval", func(o *Options) any { return &o.HeartbeatInterval }},
	"max.partition.fetch.bytes":                {"max-bytes", func(o *Options) any { return &o.MaxBytes }},
	"group.protocol":                           {"group-protocol", nil},
}

// ModelProperties lists the client properties the consumer model reads, sorted.
func ModelProperties() []string {
	out := make([]string, 0, len(modelProperties))
	for k := range modelProperties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ModelFlag returns the flag of the setting a client property sets in the model, and
// whether the model reads the property at all.
func ModelFlag(key string) (flag string, ok bool) {
	p, ok := modelProperties[key]
	return p.flag, ok
}

// SetProperty sets the model's setting from a client property (ModelFlag) as the
// client's configuration writes it: milliseconds for durations, integers, true or
// false. It reports whether the setting changed. Errors name the property.
func (o *Options) SetProperty(key, value string) (changed bool, err error) {
	p, ok := modelProperties[key]
	if !ok {
		return false, fmt.Errorf("%s: not a property the consumer model reads (it reads %s)", key, strings.Join(ModelProperties(), ", "))
	}
	if p.field == nil {
		return false, nil // read from o.Kafka where it is used
	}
	value = strings.TrimSpace(value)
	switch f := p.field(o).(type) {
	case *time.Duration:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || n > int64(24*time.Hour/time.Millisecond) {
			return false, fmt.Errorf("%s=%s: want milliseconds, 0 to 86400000", key, value)
		}
		d := time.Duration(n) * time.Millisecond
		changed, *f = *f != d, d
	case *int:
		n, err := strconv.Atoi(value)
		if err != nil {
			return false, fmt.Errorf("%s=%s: want an integer", key, value)
		}
		changed, *f = *f != n, n
	case *bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return false, fmt.Errorf("%s=%s: want true or false", key, value)
		}
		changed, *f = *f != b, b
	}
	return changed, nil
}
