package rewind

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type countClients struct{ n int }

func (c *countClients) OnNewClient(*kgo.Client) { c.n++ }

// TestNewKafkaOpensOneClient: the analysis and the commit share inspect's client (one
// set of connections, metadata and options), rather than opening a second one.
func TestNewKafkaOpensOneClient(t *testing.T) {
	hook := &countClients{}
	k, err := NewKafka([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1"), kgo.WithHooks(hook)}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if hook.n != 1 {
		t.Fatalf("NewKafka opened %d clients, want 1", hook.n)
	}
}
