// Command kstranded reproduces, proves, explains and repairs Kafka records that a
// consumer fetched but never delivered while its group's committed offset moved past them.
package main

import (
	"os"

	"github.com/kstranded/kstranded/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
