// Package needcgo stops a build without cgo with a message that says why: kstranded
// links librdkafka (bundled in confluent-kafka-go) through cgo, so CGO_ENABLED=0 cannot
// build it. Without this package such a build fails deep inside confluent-kafka-go
// ("undefined: kafka.ConfigMap"), which says nothing about the cause. main imports it.
package needcgo

// Required is referenced by main so the package is always compiled.
const Required = true
