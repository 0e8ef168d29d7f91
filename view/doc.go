// Package view is kstranded's presentation layer: it turns domain results (repro,
// inspect, rewind, trace) into view models, structs with json tags that are the JSON
// documents, and prints them as tables, JSON or SVG through internal/render. Builders
// are pure; printers take an io.Writer. Nothing here talks to Kafka or decides a
// verdict. It stands above the domain packages and below cmd: no domain package
// imports it.
package view
