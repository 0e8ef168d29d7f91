// Package repro runs kstranded's reproduction of the eachBatch cache-expiration loss:
// the seed's workload (200 records in one transaction on one partition of a 20-partition
// topic), the modeled eachBatch consumer (package eachbatch) over a real librdkafka
// consumer (confluent-kafka-go) against the embedded broker or the user's cluster, two
// phases (drain, then one more record), and a verdict per partition from the
// producer's own delivery reports.
//
// It returns results; printing them is the caller's business.
//
// Where things are: options.go (the options and their validation), driver.go (the one
// scenario driver: produce, consumer instances, phases, restarts, finishing) over a
// cluster, run.go (the live cluster: librdkafka clients on a broker) or simulate.go (the
// simulated one: simkafka on virtual time), judge.go (verdicts per partition and
// per phase), frontier.go (the application ledger beside the client), source.go (the
// live record source over librdkafka), produce.go (producers and admin), consume.go
// (`repro consume`).
package repro
