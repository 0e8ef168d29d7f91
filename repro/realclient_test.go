package repro

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
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

// A real-client run on --brokers makes a topic of its own and, as repro does, deletes it
// afterwards unless --keep. node is a stand-in here that prints a finished scenario's
// log: what is tested is the topic's life, not the client.
func TestARealClientRunOnBrokersDeletesItsTopicUnlessKept(t *testing.T) {
	b, err := embedded.Start(embedded.Options{Topic: "unused", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bin := t.TempDir()
	node := "#!/bin/sh\ncat <<'LOG'\n" + `scenario client=1.10.0 group=g topic=stranded records=2
produced phase=1 topic=stranded partition=0 count=2 transactional=true
delivered topic=stranded partition=0 offset=0
delivered topic=stranded partition=0 offset=1
committed phase=1 topic=stranded partition=0 offset=3 low=0 high=3
` + "LOG\n"
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte(node), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfg, err := kafkaconf.Load(b.Addr(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, keep := range []bool{false, true} {
		res, err := RunRealClient(context.Background(), RealClientOptions{Version: "1.10.0", Dir: t.TempDir(),
			Kafka: cfg, Partitions: 1, Timeout: 10 * time.Second, Keep: keep})
		if err != nil {
			t.Fatalf("keep=%v: %v", keep, err)
		}
		if !strings.HasPrefix(res.Topic, jsclient.Topic+"-") {
			t.Fatalf("keep=%v: topic %q, want one of the run's own", keep, res.Topic)
		}
		// by name: kgo answers a request for every topic from its cached metadata
		topics, err := adm.ListTopics(context.Background(), res.Topic)
		if err != nil {
			t.Fatal(err)
		}
		td, ok := topics[res.Topic]
		if there := ok && td.Err == nil; there != keep {
			t.Errorf("keep=%v: topic %s on the cluster after the run: %v (warnings %q)", keep, res.Topic, there, res.Warnings)
		}
		if keep && !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "kept on the cluster") }) {
			t.Errorf("keep: warnings %q do not say the topic is kept", res.Warnings)
		}
	}
}
