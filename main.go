// Command kstranded reproduces, proves, explains and repairs Kafka records that a
// consumer fetched but never delivered while its group's committed offset moved past them.
package main

import (
	"os"

	"github.com/kstranded/kstranded/cmd"
	"github.com/kstranded/kstranded/internal/needcgo"
)

// kstranded links librdkafka through cgo; needcgo fails a CGO_ENABLED=0 build with a
// message naming the cause.
var _ = needcgo.Required

func main() {
	os.Exit(cmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
