// Package embedded runs kstranded's default broker: franz-go's kfake, in process, on
// loopback. It lets `kstranded repro` run with no cluster and gives users a broker to
// point their own consumers at (`kstranded broker`).
//
// kfake is not Apache Kafka: it implements the protocol (transactions, control records,
// groups, read_committed) faithfully enough for the scenarios here, and the test suite
// also runs against a real broker (testenv/kafka). It never listens on anything but
// 127.0.0.1.
package embedded

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// ClusterID identifies the embedded broker, so clients pointed at `kstranded broker`
// can apply the settings kfake needs (a short fetch.wait.max.ms on consumers).
const ClusterID = "kstranded-embedded"

// Options configures the embedded broker.
type Options struct {
	Port       int    // 0: a free port
	Topic      string // seeded topic; empty: none
	Partitions int32  // partitions of the seeded topic (and of auto-created topics)
}

// Broker is a running embedded broker.
type Broker struct {
	c    *kfake.Cluster
	addr string
}

// Start starts the broker and returns once it listens.
func Start(o Options) (*Broker, error) {
	if o.Partitions <= 0 {
		o.Partitions = 1
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(o.Port),
		kfake.DefaultNumPartitions(int(o.Partitions)),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			// Loopback only, whatever address kfake proposes.
			_, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			return net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
		}),
		kfake.ClusterID(ClusterID),
	}
	if o.Topic != "" {
		opts = append(opts, kfake.SeedTopics(o.Partitions, o.Topic))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		if o.Port != 0 {
			return nil, fmt.Errorf("embedded broker on 127.0.0.1:%s: %w", strconv.Itoa(o.Port), err)
		}
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) == 0 {
		c.Close()
		return nil, fmt.Errorf("embedded broker: no listen address")
	}
	return &Broker{c: c, addr: addrs[0]}, nil
}

// Addr is the bootstrap address (127.0.0.1:port).
func (b *Broker) Addr() string { return b.addr }

// Cluster exposes kfake for tests that need to inject faults.
func (b *Broker) Cluster() *kfake.Cluster { return b.c }

// Close stops the broker.
func (b *Broker) Close() { b.c.Close() }
