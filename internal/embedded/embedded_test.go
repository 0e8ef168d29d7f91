package embedded

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestBrokerServesSeededTopicOnLoopback(t *testing.T) {
	b, err := Start(Options{Topic: "stranded", Partitions: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !strings.HasPrefix(b.Addr(), "127.0.0.1:") {
		t.Fatalf("addr %q is not loopback", b.Addr())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, "stranded")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["stranded"].Partitions); n != 20 {
		t.Fatalf("partitions = %d, want 20", n)
	}
}
