// Command mangen writes kstranded's man pages, one per command, generated from the cobra
// command tree (cobra's doc package), so they say what --help says. `make man` runs it.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra/doc"

	"github.com/kstranded/kstranded/cmd"
	"github.com/kstranded/kstranded/internal/buildinfo"
)

func main() {
	dir := "docs/man"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
	root := cmd.NewRoot(&cmd.Globals{})
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Title: strings.ToUpper(root.Name()), Section: "1", Source: "kstranded " + buildinfo.Version(), Manual: "kstranded manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
	fmt.Println("man pages written to", dir)
}
