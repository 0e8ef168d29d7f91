// Package trace turns what a consumer wrote (kstranded's own kstranded.trace/v1 lines, an
// instrumented confluent-kafka-javascript trace, librdkafka debug logs, or an application's
// delivery log read through a regular expression) into one timeline per topic-partition
// and into findings that name, with the evidence lines, where records were lost and why.
//
// The pipeline is: a parser per format turns lines into normalized Events (parse*.go,
// with rdkafka_*.go for librdkafka's lines and jslog_*.go for the JS client's, tokenized by
// trace/jstok); the Analyzer folds them, in file order, into per-partition state (fold.go,
// deliver.go; its state and limits in analyze.go) and a bounded timeline (timeline.go);
// Finish evaluates the rules, one file each (rule_*.go), and returns a Report
// (findings.go). Parsing is streaming: memory depends on the number of partitions,
// distinct offset ranges and the timeline cap, never on the size of a file. librdkafka
// debug logs, which reach gigabytes, are scanned in chunks by several goroutines and
// folded in file order (parse_chunks.go).
//
// The package does not print or draw: trace/view builds the table, JSON and SVG views.
package trace
