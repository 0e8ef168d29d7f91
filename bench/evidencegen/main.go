// Command evidencegen writes the delivery log of bench/evidence.sh: JSON lines as a
// pino-style application logs them ({"msg":"processed","topic":"stranded","partition":P,
// "offset":O}), partitions taking turns, each partition's offsets in order, gzipped
// to stdout, about -size bytes before compression.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"strconv"
)

func main() {
	size := flag.Int64("size", 1<<30, "bytes of log to write before compression (about)")
	parts := flag.Int("partitions", 6, "partitions")
	flag.Parse()
	zw, _ := gzip.NewWriterLevel(os.Stdout, gzip.DefaultCompression)
	w := bufio.NewWriterSize(zw, 1<<20)
	var n int64
	var line []byte
	for i := int64(0); n < *size; i++ {
		line = append(line[:0], `{"msg":"processed","topic":"stranded","partition":`...)
		line = strconv.AppendInt(line, i%int64(*parts), 10)
		line = append(line, `,"offset":`...)
		line = strconv.AppendInt(line, i/int64(*parts), 10)
		line = append(line, "}\n"...)
		w.Write(line)
		n += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := zw.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
