package eachbatch

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/releases.md's table from Releases")

func TestEveryReleaseInTheTableParses(t *testing.T) {
	for _, r := range Releases {
		for _, name := range []string{r.Name, "v" + r.Name, strings.ToUpper(r.Name)} {
			if r.Patch && strings.HasPrefix(name, "v") {
				continue
			}
			got, err := LookupClient(name)
			if err != nil || got.Name != r.Name {
				t.Fatalf("LookupClient(%q) = %q, %v", name, got.Name, err)
			}
			p, err := ParsePolicy(name)
			switch {
			case r.Group.Policy == "" && (err == nil || !strings.Contains(err.Error(), "not modelled") || !strings.Contains(err.Error(), r.Group.NotModelled)):
				t.Errorf("ParsePolicy(%q) = %q, %v: want a not-modelled error saying why", name, p, err)
			case r.Group.Policy != "" && (err != nil || p != r.Group.Policy):
				t.Errorf("ParsePolicy(%q) = %q, %v, want %q", name, p, err, r.Group.Policy)
			}
		}
		if r.Source.Clear == "" || r.Source.EachBatch == "" || r.Source.EachMessage == "" || r.Source.Pause == "" {
			t.Errorf("%s: a rule without its source lines: %+v", r.Name, r.Source)
		}
	}
	for _, p := range Policies {
		if got, err := ParsePolicy(string(p)); err != nil || got != p {
			t.Errorf("the policy's own name %q parses to %q, %v", p, got, err)
		}
	}
}

// The finding: 1.8.2, 1.9.0 and 1.9.1 have 1.10.0's _consumer.js rules.
func TestReleasesBefore1100HaveItsPolicy(t *testing.T) {
	for _, v := range []string{"1.8.0", "1.8.2", "1.9.0", "1.9.1", "v1.9.1", "1.10.0"} {
		if p, err := ParsePolicy(v); err != nil || p != V1_10_0 {
			t.Errorf("%s: %q, %v, want v1.10.0", v, p, err)
		}
	}
	if p, _ := ParsePolicy("1.10.1"); p != V1_10_1 {
		t.Errorf("1.10.1: %q", p)
	}
	if p, _ := ParsePolicy("head"); p != Head {
		t.Errorf("head: %q", p)
	}
	if r, _ := LookupClient("head"); !r.Patch {
		t.Error("head is a patch, not a release")
	}
	if p, err := ParsePolicy("pr518"); err != nil || p != PR518 {
		t.Errorf("pr518: %q, %v, want pr518", p, err)
	}
	for _, v := range []string{"1.3.1", "1.3.2", "1.4.0", "1.4.1", "1.5.0", "1.6.0"} {
		if p, err := ParsePolicy(v); err != nil || p != V1_6_0 {
			t.Errorf("%s: %q, %v, want v1.6.0 (the doubling fetch size, batches of 32, #discardMessages)", v, p, err)
		}
	}
	for _, v := range []string{"1.2.0", "1.3.0", "v1.3.0"} {
		if p, err := ParsePolicy(v); err != nil || p != V1_3_0 {
			t.Errorf("%s: %q, %v, want v1.3.0 (1.6.0's rules and fetch size, 1.3.0's wait for records)", v, p, err)
		}
	}
	if p, err := ParsePolicy("1.0.0"); err != nil || p != V1_0_0 {
		t.Errorf("1.0.0: %q, %v, want v1.0.0 (v1.3.0 with 1.0.0's MessageCache.nextN)", p, err)
	}
	for _, v := range []string{"0.2.0", "0.2.1", "v0.2.1", "0.3.0"} {
		if p, err := ParsePolicy(v); err != nil || p != V0_2_0 {
			t.Errorf("%s: %q, %v, want v0.2.0 (1.0.0's cache with 0.x's waiting consume call)", v, p, err)
		}
	}
	if p, err := ParsePolicy("1.7.0"); err != nil || p != V1_7_0 {
		t.Errorf("1.7.0: %q, %v, want v1.7.0 (1.10.0's rules, Math.round's fetch size)", p, err)
	}
}

func TestAnUnknownVersionNamesTheKnownOnesAndTheNearest(t *testing.T) {
	for in, nearest := range map[string]string{
		"1.9.2": "1.9.1", "v1.11.0": "1.10.1", "1.10.2": "1.10.1", "1.1.0": "1.2.0", "2.0.0": "1.10.1",
		"1.8.1": "1.8.2", "0.1.17-devel": "0.2.0", "1.10.1-rc1": "1.10.1", "1.6": "1.6.0",
	} {
		_, err := ParsePolicy(in)
		if err == nil {
			t.Fatalf("%s parsed", in)
		}
		msg := err.Error()
		if !strings.Contains(msg, "nearest known release: "+nearest+")") {
			t.Errorf("%s: want nearest %s: %s", in, nearest, msg)
		}
		for _, k := range []string{"1.8.2", "1.9.0", "1.9.1", "1.10.0", "1.10.1", "head", "pr518"} {
			if !strings.Contains(msg, k) {
				t.Errorf("%s: the error does not list %s: %s", in, k, msg)
			}
		}
	}
	if _, err := ParsePolicy("latest"); err == nil || strings.Contains(err.Error(), "nearest") || !strings.Contains(err.Error(), "1.10.1") {
		t.Errorf("a name that is no version: %v", err)
	}
}

const (
	tableBegin = "<!-- releases table: generated from eachbatch.Releases (go test ./eachbatch -run TestReleasesDoc -update) -->\n"
	tableEnd   = "<!-- end of releases table -->\n"
)

func TestReleasesDocMatchesTheTable(t *testing.T) {
	const path = "../docs/releases.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the table markers %q and %q", path, tableBegin, tableEnd)
	}
	want := doc[:i+len(tableBegin)] + "\n" + ReleaseTable() + "\n" + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's table is not eachbatch.Releases: run go test ./eachbatch -run TestReleasesDoc -update", path)
}

// NearestRelease keeps the later release on a tie by relying on the table's order.
func TestReleasesAreInVersionOrder(t *testing.T) {
	var prev [3]int
	for i, r := range Releases {
		if r.Patch {
			continue
		}
		v, ok := semver(r.Name)
		if !ok || (i > 0 && (v[0] < prev[0] || v[0] == prev[0] && (v[1] < prev[1] || v[1] == prev[1] && v[2] <= prev[2]))) {
			t.Fatalf("%s is out of order after %v", r.Name, prev)
		}
		prev = v
	}
}
