package cmd

import (
	"context"
	"fmt"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/spf13/cobra"

	"github.com/kstranded/kstranded/internal/buildinfo"
	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/internal/render"
)

// versionInfo is what `kstranded version` prints: the build, and the librdkafka that
// the live paths (repro's consumer and producer) link.
type versionInfo struct {
	buildinfo.Info
	Librdkafka string `json:"librdkafka"`
}

func currentVersion() versionInfo {
	_, lib := kafka.LibraryVersion()
	return versionInfo{Info: buildinfo.Get(), Librdkafka: lib}
}

func (v versionInfo) String() string {
	dirty := ""
	if v.Dirty {
		dirty = " (modified work tree)"
	}
	return fmt.Sprintf("kstranded %s\ncommit %s%s\nbuilt %s with %s\nlibrdkafka %s\n", v.Version, v.Commit, dirty, v.Date, v.Go, v.Librdkafka)
}

// newVersionCmd builds `kstranded version`; runF, when not nil (tests), replaces the printing.
func newVersionCmd(g *Globals, runF func(context.Context, versionInfo) error) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kstranded's version, commit, build date and librdkafka version",
		Long: `Print the version, the commit and date kstranded was built from, the Go toolchain and
the librdkafka version linked in (bundled by confluent-kafka-go). -o json prints the same
as a document; every JSON document carries the same version as _version.

` + exitHelp(exitCodes{exitcode.OK, ""}),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v := currentVersion()
			if runF != nil {
				return runF(c.Context(), v)
			}
			if f, _ := g.Format(); f == render.JSON {
				return render.WriteJSON(g.IO.Out, struct {
					render.Meta
					versionInfo
				}{render.NewMeta("kstranded.version/v1", "version"), v})
			}
			_, err := fmt.Fprint(g.IO.Out, v.String())
			return err
		},
	}
}
