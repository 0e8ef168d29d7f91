package rewind

import (
	"strings"
	"testing"
	"time"
)

func TestDatetimesAndDurationsAreReadAsKafkaConsumerGroupsTakesThem(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	for _, c := range []struct{ in, want string }{
		{"2026-12-01T10:00:00.000", "2026-12-01T09:00:00Z"}, // local (here +01:00) without a zone
		{"2026-12-01T10:00:00", "2026-12-01T09:00:00Z"},
		{"2026-12-01T10:00:00.250Z", "2026-12-01T10:00:00.25Z"},
		{"2026-12-01T10:00:00.000+02:00", "2026-12-01T08:00:00Z"},
		{"2026-12-01T10:00:00.000-0130", "2026-12-01T11:30:00Z"},
	} {
		got, err := ParseDateTime(c.in, loc)
		if err != nil || got.UTC().Format(time.RFC3339Nano) != c.want {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %s", c.in, got.UTC(), err, c.want)
		}
	}
	for _, bad := range []string{"2026-12-01", "2026-12-01 10:00:00", "yesterday", "2026-13-01T10:00:00"} {
		if _, err := ParseDateTime(bad, loc); err == nil {
			t.Errorf("ParseDateTime(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		in   string
		want time.Duration
	}{{"PT1H", time.Hour}, {"P1DT2H30M", 26*time.Hour + 30*time.Minute}, {"PT0.5S", 500 * time.Millisecond}, {"pt15m", 15 * time.Minute}, {"P2D", 48 * time.Hour}} {
		got, err := ParseISODuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseISODuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"1h", "P", "PT", "-PT1H", "PT0S", "P1W"} {
		if _, err := ParseISODuration(bad); err == nil {
			t.Errorf("ParseISODuration(%q) accepted", bad)
		}
	}
}

func TestScopeAndCSVAreReadAsKafkaConsumerGroupsWritesThem(t *testing.T) {
	s, err := ParseScope([]string{"orders:0,2", "b.c_d-e"})
	if err != nil || len(s) != 2 || s[0].Topic != "orders" || len(s[0].Partitions) != 2 || s[0].Partitions[1] != 2 || s[1].Topic != "b.c_d-e" || s[1].Partitions != nil {
		t.Fatalf("%+v %v", s, err)
	}
	for in, says := range map[string]string{"t:x": `partition "x"`, "t:0,0": "named twice", ":0": "want TOPIC", "a/b": "want TOPIC"} {
		if _, err := ParseScope([]string{in}); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseScope(%q) = %v, want %q", in, err, says)
		}
	}
	if _, err := ParseScope([]string{"t", "t:1"}); err == nil || !strings.Contains(err.Error(), "already in scope") {
		t.Errorf("a topic twice: %v", err)
	}
	f, err := ReadCSV([]byte("orders,0,82\norders,1,5\n\n"), "r.csv")
	if err != nil || f.Group != "" || f.Kind != FromCSV || len(f.Targets) != 2 || f.Targets[1].Partition != 1 || f.Targets[1].Offset != 5 {
		t.Fatalf("%+v %v", f, err)
	}
	f, err = ReadCSV([]byte("g,orders,0,82\n"), "r.csv")
	if err != nil || f.Group != "g" || f.Targets[0].Offset != 82 {
		t.Fatalf("%+v %v", f, err)
	}
	for in, says := range map[string]string{
		"orders,0\n":         "want topic,partition,offset",
		"g,o,0,1\nh,o,1,1\n": "rewind one group at a time",
		"o,0,1\ng,o,1,1\n":   "4 columns after lines of 3",
		"o,0,-1\n":           `offset "-1"`,
		"o,0,1\no,0,2\n":     "appears twice",
		"stranded/0=82\n":    "want topic,partition,offset",
	} {
		if _, err := ReadCSV([]byte(in), "r.csv"); err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "r.csv") {
			t.Errorf("ReadCSV(%q) = %v, want %q", in, err, says)
		}
	}
}
