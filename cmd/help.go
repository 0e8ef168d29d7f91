package cmd

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/render"
)

// helpMaxWidth bounds help text on a wide terminal: prose much wider than 100 columns is
// hard to follow from one line to the next.
const helpMaxWidth = 100

// helpWidth is the width help is wrapped to on w: the terminal's (or $COLUMNS), at most
// helpMaxWidth, and 80 on a pipe or a file.
func helpWidth(w io.Writer) int {
	n := render.Width(w)
	if n <= 0 {
		return 80
	}
	return min(n, helpMaxWidth)
}

// helpText is cobra's help for c (the default help template: the long description, or
// the short one, then the usage with its flags), reflowed to width.
func helpText(c *cobra.Command, width int) string {
	var b strings.Builder
	if d := strings.TrimRight(c.Long, " \t\n"); d != "" {
		b.WriteString(d + "\n\n")
	} else if d := strings.TrimRight(c.Short, " \t\n"); d != "" {
		b.WriteString(d + "\n\n")
	}
	if c.Runnable() || c.HasSubCommands() {
		b.WriteString(c.UsageString())
	}
	return render.Reflow(b.String(), width)
}

// wrapHelp makes every command's help fit the terminal it is printed on: the help text
// is written pre-wrapped near 88 columns, and flag usages are single lines of up to 430.
func wrapHelp(root *cobra.Command) {
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		out := c.OutOrStdout()
		_, _ = io.WriteString(out, helpText(c, helpWidth(out)))
	})
}
