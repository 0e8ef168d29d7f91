// Package buildinfo says which kstranded this is: its version, the commit it was built
// from and when. `make build` stamps them with -ldflags -X (see the Makefile); a plain
// `go build` or `go install` falls back to what the Go toolchain recorded in the binary
// (debug.ReadBuildInfo: the module version and the vcs.revision / vcs.time settings).
// Every JSON document's _version and `kstranded version` read them here, so the two
// never disagree.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Stamped at build time with -ldflags "-X github.com/kstranded/kstranded/internal/buildinfo.version=..."
// (and .commit, .date). Empty when not stamped.
var (
	version string
	commit  string
	date    string
)

// Info is what a binary knows of its own build.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"build_date"`
	Dirty   bool   `json:"dirty"` // built from a work tree with uncommitted changes
	Go      string `json:"go"`
}

var (
	once sync.Once
	info Info
)

// Get returns the build information: the stamped values, else the toolchain's record,
// else "unknown" (never empty, so a script can always tell).
func Get() Info {
	once.Do(func() { info = resolve(version, commit, date, readBuildInfo) })
	return info
}

// Version is Get().Version.
func Version() string { return Get().Version }

func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

func resolve(v, c, d string, read func() (*debug.BuildInfo, bool)) Info {
	i := Info{Version: v, Commit: c, Date: d}
	if bi, ok := read(); ok {
		i.Go = bi.GoVersion
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Commit == "" {
					i.Commit = s.Value
				}
			case "vcs.time":
				if i.Date == "" {
					i.Date = s.Value
				}
			case "vcs.modified":
				i.Dirty = s.Value == "true"
			}
		}
	}
	if i.Version == "" {
		i.Version = "devel"
		if len(i.Commit) >= 12 {
			i.Version += "+" + i.Commit[:12]
		}
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	if i.Date == "" {
		i.Date = "unknown"
	}
	return i
}
