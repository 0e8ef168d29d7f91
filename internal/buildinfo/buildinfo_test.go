package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestStampedValuesWinOverTheToolchainRecord(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.9.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-01T00:00:00Z"}}}, true
	}
	i := resolve("v1.2.3", "abc", "2026-12-03", read)
	if i.Version != "v1.2.3" || i.Commit != "abc" || i.Date != "2026-12-03" || i.Go != "go1.26.8" {
		t.Fatalf("%+v", i)
	}
}

func TestAnUnstampedBuildTakesTheToolchainRecord(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	i := resolve("", "", "", read)
	if i.Version != "devel+0123456789ab" || i.Commit != "0123456789abcdef" || i.Date != "2026-12-01T00:00:00Z" || !i.Dirty {
		t.Fatalf("%+v", i)
	}
}

func TestNothingKnownIsSaidAsUnknownNeverEmpty(t *testing.T) {
	i := resolve("", "", "", func() (*debug.BuildInfo, bool) { return nil, false })
	if i.Version != "devel" || i.Commit != "unknown" || i.Date != "unknown" {
		t.Fatalf("%+v", i)
	}
}
