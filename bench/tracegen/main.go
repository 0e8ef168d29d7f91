// Command tracegen writes a synthetic librdkafka debug log for bench/trace-parse.sh.
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
	flag.Parse()
	fh, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := tracegen.WriteRdkafkaLog(fh, *size, *parts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := fh.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
