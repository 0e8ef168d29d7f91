// Command tracegen writes the synthetic logs of bench/trace-parse.sh and
// bench/trace-parse-shapes.sh: -shape rdkafka (a librdkafka debug log, mostly idle long
// polls), busy (every partition fetching, enqueueing, storing and committing), jsclient and
// jsclient-json (confluent-kafka-javascript's log output with delivery lines), and
// many-partitions (a kstranded trace naming -partitions partitions: hostile input).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kstranded/kstranded/trace/tracegen"
)

func main() {
	size := flag.Int64("size", 1<<30, "bytes to write (about)")
	parts := flag.Int("partitions", 6, "partitions")
	out := flag.String("o", "", "output file")
	shape := flag.String("shape", "rdkafka", "rdkafka, busy, jsclient, jsclient-json, many-partitions or many-ranges[-reverse] (kstranded traces, -size ignored)")
	ranges := flag.Int("ranges", 10000, "many-ranges: distinct delivered ranges on one partition")
	flag.Parse()
	fh, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	switch *shape {
	case "rdkafka":
		err = tracegen.WriteRdkafkaLog(fh, *size, *parts)
	case "busy":
		err = tracegen.WriteBusyRdkafkaLog(fh, *size, *parts)
	case "jsclient", "jsclient-json":
		err = tracegen.WriteJSClientLog(fh, *size, *parts, *shape == "jsclient-json")
	case "many-partitions":
		err = tracegen.WriteManyPartitionsTrace(fh, *parts)
	case "many-ranges", "many-ranges-reverse":
		err = tracegen.WriteManyRangesTrace(fh, *ranges, *shape == "many-ranges-reverse")
	default:
		err = fmt.Errorf("unknown -shape %q", *shape)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := fh.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
