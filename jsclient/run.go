package jsclient

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// scenario is the application that drives the real client: it produces its own records
// (phase 1: the shape's records in one transaction; phase 2: one more), consumes them
// with the shape's settings and prints a delivery line per record (DeliveredPattern).
//
//go:embed scenario.js
var scenario []byte

// Scenario is scenario.js's text, as the binary carries it.
func Scenario() []byte { return scenario }

// DeliveredPattern is scenario.js's delivery line in its default logger variant, for the
// judge's --delivered/--pattern. With two members (Shape.Members, JoinAt) the line ends
// with the member that delivered the record (member=m2); every member's delivery counts.
const DeliveredPattern = `^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)(?: member=\S+)?$`

// Topic is the topic scenario.js writes and reads.
const Topic = "stranded"

// RunOptions is one run of scenario.js.
type RunOptions struct {
	// Dir is the install Ensure returned.
	Dir     string
	Brokers string
	Group   string
	// Topic: scenario.js's --topic ("" is Topic, as the embedded broker seeds it).
	Topic string
	Shape Shape
	// Debug: librdkafka's debug contexts ("" for none, the suite's and the command's).
	Debug string
	// Log receives everything the run prints (the client's and the application's lines).
	Log io.Writer
}

// Run runs scenario.js (from a temporary copy of the embedded text) with the install in
// o.Dir until it exits. Its output, the delivery lines among it, goes to o.Log.
func Run(ctx context.Context, o RunOptions) error {
	if _, err := exec.LookPath("node"); err != nil {
		return ErrNoNode
	}
	tmp, err := os.MkdirTemp("", "kstranded-scenario-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	script := filepath.Join(tmp, "scenario.js")
	if err := os.WriteFile(script, scenario, 0o644); err != nil {
		return err
	}
	args := append([]string{script, "--brokers", o.Brokers, "--group", o.Group, "--logger", "default", "--debug", o.Debug},
		o.Shape.ScenarioArgs()...)
	if o.Topic != "" {
		args = append(args, "--topic", o.Topic)
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(o.Dir, "node_modules"))
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("node scenario.js %v: %w", args[1:], err)
	}
	return nil
}
