package repro

import (
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/jsclient"
)

func TestARealClientRunIsJudgedByTheOneJudge(t *testing.T) {
	// the seed's outcome on 1.10.0 in miniature: 0-3 delivered, 4-5 never, committed
	// past them after phase 2
	in := `scenario client=1.10.0 group=g topic=stranded records=6
produced phase=1 topic=stranded partition=0 count=6 transactional=true
delivered topic=stranded partition=0 offset=0
delivered topic=stranded partition=0 offset=1
delivered topic=stranded partition=0 offset=2
delivered topic=stranded partition=0 offset=3
committed phase=1 topic=stranded partition=0 offset=7 low=0 high=7
produced phase=2 topic=stranded partition=0 count=1 transactional=false
delivered topic=stranded partition=0 offset=7
committed phase=2 topic=stranded partition=0 offset=8 low=0 high=8
`
	l, err := jsclient.ParseLog(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Topic: "stranded"}
	judgeRealClient(res, l)
	if res.Verdict != verdict.Lost || len(res.Partitions) != 1 {
		t.Fatalf("verdict %s, partitions %+v", res.Verdict, res.Partitions)
	}
	p := res.Partitions[0]
	if len(p.Lost) != 1 || p.Lost[0].First != 4 || p.Lost[0].Last != 5 || p.Delivered != 5 || p.Produced != 7 {
		t.Fatalf("partition 0: lost %v delivered %d of %d", p.Lost, p.Delivered, p.Produced)
	}
}
