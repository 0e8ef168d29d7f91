package kafkaconf

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// clientEnv makes the test binary, run again, be the clients of
// TestLibrdkafkaLogLinesReachStderrOnlyWithDebug: librdkafka writes its log lines to file
// descriptor 2 itself, so only another process's stderr shows them.
const clientEnv = "KSTRANDED_TEST_LIBRDKAFKA_CLIENTS"

// TestLibrdkafkaLogLinesReachStderrOnlyWithDebug runs a producer and a consumer against
// 127.0.0.1:1, where nothing listens, in a process of their own: librdkafka logs each
// refused connection at level 3 ("%3|...|FAIL|..."). Without -X debug those lines must
// not reach stderr (kstranded reports the broker error itself); with debug they are
// librdkafka's, on stderr as `trace parse` reads them. Closing both clients must not
// block on their log channels.
func TestLibrdkafkaLogLinesReachStderrOnlyWithDebug(t *testing.T) {
	if debug, ok := os.LookupEnv(clientEnv); ok {
		os.Exit(runClients(debug))
	}
	if testing.Short() {
		t.Skip("runs librdkafka clients for a few seconds")
	}
	for _, c := range []struct {
		name, debug string
		want        bool
	}{
		{"without debug no librdkafka line reaches stderr", "", false},
		{"with -X debug=broker librdkafka's lines are on stderr", "broker", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLibrdkafkaLogLinesReachStderrOnlyWithDebug$")
			cmd.Env = append(os.Environ(), clientEnv+"="+c.debug)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil || err != nil {
				t.Fatalf("clients: %v (context: %v)\nstdout:\n%s\nstderr:\n%s", err, ctx.Err(), stdout.String(), tail(stderr.String()))
			}
			if !strings.Contains(stdout.String(), "closed") {
				t.Fatalf("the clients did not run:\n%s", stdout.String())
			}
			got := strings.Contains(stderr.String(), "%3|")
			if got != c.want {
				t.Fatalf("a level-3 librdkafka line on stderr: %v, want %v\nstderr:\n%s", got, c.want, tail(stderr.String()))
			}
			if !c.want && stderr.Len() > 0 {
				t.Fatalf("stderr is not empty:\n%s", tail(stderr.String()))
			}
		})
	}
}

// runClients is the child's work: both kinds of client against a closed port for long
// enough to be refused, then closed, each close bounded.
func runClients(debug string) int {
	props := map[string]string{"bootstrap.servers": "127.0.0.1:1", "client.id": "kstranded-test"}
	if debug != "" {
		props["debug"] = debug
	}
	p, err := NewProducer(props)
	if err != nil {
		fmt.Println("producer:", err)
		return 1
	}
	cprops := map[string]string{"group.id": "kstranded-test"}
	for k, v := range props {
		cprops[k] = v
	}
	c, err := NewConsumer(cprops)
	if err != nil {
		fmt.Println("consumer:", err)
		return 1
	}
	if err := c.Subscribe("kstranded-test", nil); err != nil {
		fmt.Println("subscribe:", err)
		return 1
	}
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
		c.Poll(100)
	}
	done := make(chan struct{})
	go func() {
		p.Close()
		_ = c.Close()
		close(done)
	}()
	select {
	case <-done:
		fmt.Println("closed")
		return 0
	case <-time.After(20 * time.Second):
		fmt.Println("close did not return within 20s")
		return 1
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}
