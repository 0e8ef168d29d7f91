package trace

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/traceevent"
)

// Every event a kstranded trace can hold has a name in the timeline: none is "unknown
// event" (the rebalance member event was). The events are read from traceevent.go's
// constants themselves, so an event added there and not here, or not to
// traceevent.Events, fails this test.
func TestEveryEventOfTheFormatHasANameInTheTimeline(t *testing.T) {
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, "../traceevent/traceevent.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			for i, n := range v.Names {
				if n.Name == "Schema" || i >= len(v.Values) {
					continue
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					consts = append(consts, s)
				}
			}
		}
	}
	if len(consts) < 20 || !slices.Equal(consts, traceevent.Events) {
		t.Fatalf("traceevent.go's event constants %v, traceevent.Events %v: the list must name each, in order", consts, traceevent.Events)
	}
	var b strings.Builder
	for i, ev := range traceevent.Events {
		// each event with the fields its writers set (enough for the parser to accept it)
		fmt.Fprintf(&b, `{"ts":"2026-12-05T10:00:%02d.000Z","at_ms":%d,"ev":%q,"schema":"kstranded.trace/v1","topic":"stranded","partition":0,"offset":1,"member":"m2","reason":"join","offsets":[1],"ranges":[{"partition":0,"first":1,"last":1,"count":1}]}`+"\n", i, i*1000, ev)
	}
	a := NewAnalyzer(Options{})
	if _, err := a.Parse("t.jsonl", strings.NewReader(b.String()), FormatAuto); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range a.Finish().Timeline {
		if strings.Contains(e.Detail, "unknown event") {
			t.Errorf("timeline entry %q: the event has no name", e.Detail)
		}
		if e.Kind == KindNote && e.Detail != "" {
			seen[strings.Fields(e.Detail)[0]] = true
		}
		if strings.HasPrefix(e.Detail, "member ") && e.Detail != "member m2 join" {
			t.Errorf("the member event reads %q, want \"member m2 join\"", e.Detail)
		}
	}
	if !seen[traceevent.Member] {
		t.Error("the member event is not in the timeline")
	}
}
