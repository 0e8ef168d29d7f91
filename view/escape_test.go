package view

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/evidence"
	"github.com/kstranded/kstranded/inspect"
	"github.com/kstranded/kstranded/internal/render"
	"github.com/kstranded/kstranded/trace"
)

// What a consumer (its client.id), a topic's creator or a log's writer chose is printed
// escaped: no terminal control sequence of theirs reaches the terminal, in tables and in
// prose, and the SVG stays XML (issue 27, item 11).
const (
	evilClient = "evil\x1b]0;pwned\x07"         // OSC: retitles the terminal
	evilTopic  = "t\x1b[2J\x1b]8;;http://x\x07" // clears the screen, a hyperlink
	evilFile   = "app\x1b[31m.log\u009b2J"      // CSI in C1 form too
)

// rawControl reports the first control byte in out that Safe would have escaped.
func rawControl(out string) (string, bool) {
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			lo := max(0, i-30)
			return out[lo:min(len(out), i+10)], true
		}
	}
	return "", false
}

func evilInspect() *inspect.Report {
	r := lossReport()
	r.Group.ID = "g\x1b]0;group\x07"
	r.Group.Members = []inspect.Member{{ID: evilClient + "-5f1c", ClientID: evilClient, Host: "/10.0.0.7\x1b[2K", InstanceID: "i\x07", Partitions: 1,
		Assigned: inspect.Assignment{{Topic: evilTopic, Partitions: []int32{1}}}}}
	for i := range r.Partitions {
		r.Partitions[i].Topic = evilTopic
	}
	r.Partitions[1].Owner = evilClient + "-5f1c"
	r.Partitions[1].Metadata = "meta\x1b]52;c;cGFzdGU=\x07" // OSC 52: writes the clipboard
	r.Partitions[2].Err = "fetching " + evilTopic + "/2: broker said \x1b[8mhidden"
	r.Evidence.Sources[0].Name = evilFile
	r.Evidence.Sources[0].Topic = evilTopic
	r.Evidence.Malformed = []evidence.Malformed{{Source: evilFile, Line: 1, Text: "{\"partition\":\"\x1b]0;x\x07\"}", Reason: "partition: want a number, got \"\x1b]0;x\x07\""}}
	r.DeletedTopics = []string{evilTopic}
	return r
}

func evilTrace(t *testing.T) *trace.Report {
	t.Helper()
	data, err := os.ReadFile("../trace/testdata/kstranded-v1.10.0.trace")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(data), `"topic":"stranded"`, `"topic":"str\u001b]0;pwned\u0007anded"`)
	s += `{"ts":"2026-03-02T14:03:40Z","at_ms":9,"ev":"serve","partition":"\u001b]0;x\u0007","offsets":[1]}` + "\n"
	a := trace.NewAnalyzer(trace.Options{})
	if _, err := a.Parse(evilFile, strings.NewReader(s), trace.FormatAuto); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

func TestOutsideStringsReachNoTerminalRaw(t *testing.T) {
	tr := evilTrace(t)
	if !strings.Contains(tr.Partitions[0].Topic, "\x1b") {
		t.Fatalf("the fixture lost its escape: topic %q", tr.Partitions[0].Topic)
	}
	for _, tc := range []struct {
		name  string
		print func(w io.Writer, pretty bool) error
		want  []string // what stays visible
	}{
		{"inspect", func(w io.Writer, pretty bool) error {
			return PrintInspect(w, NewInspect(evilInspect()), render.Table, pretty)
		},
			[]string{`client evil\x1b]0;pwned\x07`, `t\x1b[2J\x1b]8;;http://x\x07`, `evidence app\x1b[31m.log\x9b2J`, `meta\x1b]52;c;cGFzdGU=\x07`}},
		{"member text", func(w io.Writer, _ bool) error {
			_, err := io.WriteString(w, MemberText(evilInspect().Group.Members[0]))
			return err
		}, []string{`evil\x1b]0;pwned\x07-5f1c (client evil\x1b]0;pwned\x07, host /10.0.0.7\x1b[2K, instance i\x07)`}},
		{"rewind refusal", func(w io.Writer, pretty bool) error {
			p := refusedPlan()
			p.Group.Members[0].ClientID = evilClient
			for i := range p.Moves {
				p.Moves[i].Topic = evilTopic
			}
			p.Moves[3].Refused = "moving " + evilTopic + " forward"
			p.Notes = []string{evilTopic + "/4: not planned"}
			return PrintRewind(w, NewRewindPlan(p), render.Table, pretty)
		}, []string{`client evil\x1b]0;pwned\x07`, `REFUSED:`}},
		{"trace parse", func(w io.Writer, pretty bool) error {
			return PrintTrace(w, NewTrace(tr, "trace parse", false), render.Table, pretty, false)
		},
			[]string{`str\x1b]0;pwned\x07anded/0`, `app\x1b[31m.log\x9b2J`}},
		{"trace parse --timeline", func(w io.Writer, pretty bool) error {
			return PrintTrace(w, NewTrace(tr, "trace parse", true), render.Table, pretty, true)
		},
			[]string{`str\x1b]0;pwned\x07anded`}},
	} {
		for _, pretty := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				var b bytes.Buffer
				if err := tc.print(&b, pretty); err != nil {
					t.Fatal(err)
				}
				out := b.String()
				if at, bad := rawControl(out); bad {
					t.Errorf("pretty %v: a raw control character reaches the terminal: %q", pretty, at)
				}
				for _, w := range tc.want {
					if !strings.Contains(out, w) {
						t.Errorf("pretty %v: output lacks %q:\n%s", pretty, w, out)
					}
				}
			})
		}
	}
}

func TestAPictureOfATopicWithControlCharactersIsXML(t *testing.T) {
	svg := svgOf(t, evilTrace(t), nil)
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
	}
	if !bytes.Contains(svg, []byte(`str\x1b]0;pwned\x07anded`)) {
		t.Error("the picture does not name the topic, escaped")
	}
}
