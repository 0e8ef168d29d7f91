package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/kafkaconf"
)

// cluster is what the suite runs against.
type cluster struct {
	// Real is true with a real broker from the environment, false with kfake.
	Real bool
	// Brokers is the plaintext bootstrap address.
	Brokers string
	// SSLBrokers and SSLConfig are the mTLS listener and a librdkafka client.properties
	// for it; empty when there is none (kfake).
	SSLBrokers, SSLConfig string
}

func (c cluster) name() string {
	if c.Real {
		return "Apache Kafka at " + c.Brokers
	}
	return "kfake (in process) at " + c.Brokers
}

var (
	bin     string  // the kstranded binary TestMain built
	workDir string  // TestMain's temporary directory, for files tests share
	env     cluster // the brokers

	keptMu     sync.Mutex
	kept       []string // topics the tests kept or created; TestMain deletes them
	keptGroups []string // groups the tests created; TestMain deletes them
)

const skipNoSSL = "KSTRANDED_TEST_SSL_BROKERS is not set: no mTLS listener (kfake has none here); " +
	"run against testenv/kafka (make test-kafka) for the mTLS cases"

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		// make test-short promises unit tests only: this suite builds the binary and runs
		// live consumers against a broker.
		fmt.Fprintln(os.Stderr, "integration: skipped in -short mode (live broker runs)")
		return 0
	}
	dir, err := os.MkdirTemp("", "kstranded-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	workDir = dir
	bin = filepath.Join(dir, "kstranded")
	if err := build(bin); err != nil {
		fmt.Fprintln(os.Stderr, "integration: building kstranded:", err)
		return 1
	}
	if b := os.Getenv("KSTRANDED_TEST_BROKERS"); b != "" {
		env = cluster{Real: true, Brokers: b, SSLBrokers: os.Getenv("KSTRANDED_TEST_SSL_BROKERS"), SSLConfig: os.Getenv("KSTRANDED_TEST_SSL_CONFIG")}
		if (env.SSLBrokers == "") != (env.SSLConfig == "") {
			fmt.Fprintln(os.Stderr, "integration: set both KSTRANDED_TEST_SSL_BROKERS and KSTRANDED_TEST_SSL_CONFIG, or neither")
			return 1
		}
	} else {
		b, err := embedded.Start(embedded.Options{Partitions: 20})
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration: kfake:", err)
			return 1
		}
		defer b.Close()
		env = cluster{Brokers: b.Addr()}
	}
	fmt.Fprintf(os.Stderr, "integration: running against %s\n", env.name())
	code := m.Run()
	if env.Real {
		cleanUp(kept, keptGroups)
	}
	return code
}

// build compiles the module's main package into out.
func build(out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	cmd := exec.Command(goTool, "build", "-o", out, ".")
	cmd.Dir = ".." // the module root: this package is integration/
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return nil
}

// result is one run of the binary.
type result struct {
	Args    []string
	Code    int
	Stdout  string
	Stderr  string
	Elapsed time.Duration
}

// String shows the run for failure messages (the tail of stderr: librdkafka debug
// output can be long).
func (r result) String() string {
	errTail := r.Stderr
	if len(errTail) > 4000 {
		errTail = "..." + errTail[len(errTail)-4000:]
	}
	return hideSecrets(fmt.Sprintf("kstranded %s\nexit %d after %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.Code, r.Elapsed.Round(time.Millisecond), r.Stdout, errTail))
}

var (
	secretsMu sync.Mutex
	secrets   []string // key passwords the tests use; never shown in test logs
)

func addSecret(s string) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	secrets = append(secrets, s)
}

func hideSecrets(s string) string {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, x := range secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "<SECRET>")
		}
	}
	return s
}

// kstranded runs the binary with args; the test fails if it does not exit within limit.
func kstranded(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("still running after %s, killed:\n%s", limit, r)
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running kstranded: %v", err)
	}
	return r
}

// decode parses the JSON document the run printed on stdout.
func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatalf("stdout is not the JSON document: %v\n%s", err, r)
	}
	return v
}

// keep records a topic for deletion after the suite.
func keep(topic string) {
	keptMu.Lock()
	defer keptMu.Unlock()
	kept = append(kept, topic)
}

// keepGroup records a consumer group for deletion after the suite.
func keepGroup(group string) {
	keptMu.Lock()
	defer keptMu.Unlock()
	keptGroups = append(keptGroups, group)
}

// admin is a franz-go admin client on the plaintext listener, for the checks and the
// clean-up the tests do outside the binary.
func admin(t testing.TB) *kadm.Client {
	t.Helper()
	opts, err := kafkaconf.Config{Brokers: env.Brokers}.KgoOpts()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// topicGone waits until the topic is no longer listed: real Kafka applies a deletion to
// its metadata cache shortly after DeleteTopics returns.
func topicGone(t *testing.T, topic string) bool {
	t.Helper()
	adm := admin(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		td, err := adm.ListTopics(ctx)
		cancel()
		if err != nil {
			t.Fatalf("listing topics: %v", err)
		}
		if !td.Has(topic) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cleanUp deletes what the suite left on a real broker.
func cleanUp(topics, groups []string) {
	opts, err := kafkaconf.Config{Brokers: env.Brokers}.KgoOpts()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: clean-up:", err)
		return
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: clean-up:", err)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if len(groups) > 0 {
		if _, err := adm.DeleteGroups(ctx, groups...); err != nil {
			fmt.Fprintf(os.Stderr, "integration: could not delete groups %v: %v\n", groups, err)
		}
	}
	if len(topics) > 0 {
		if _, err := adm.DeleteTopics(ctx, topics...); err != nil {
			fmt.Fprintf(os.Stderr, "integration: could not delete topics %v: %v\n", topics, err)
		}
	}
}

// sslProps returns the librdkafka properties of the mTLS client config, or skips.
func sslProps(t *testing.T) map[string]string {
	t.Helper()
	if env.SSLBrokers == "" {
		t.Skip(skipNoSSL)
	}
	f, err := os.Open(env.SSLConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := kafkaconf.ReadProperties(f, env.SSLConfig)
	if err != nil {
		t.Fatal(err)
	}
	if p["ssl.key.password"] == "" {
		t.Fatalf("%s has no ssl.key.password: the secret checks need one", env.SSLConfig)
	}
	addSecret(p["ssl.key.password"])
	return p
}

// writeProps writes librdkafka properties to a file in dir.
func writeProps(t *testing.T, dir, name string, p map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range p {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// assertNoSecret fails if any secret appears in what the run printed.
func assertNoSecret(t *testing.T, r result, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for name, out := range map[string]string{"stdout": r.Stdout, "stderr": r.Stderr} {
			if i := strings.Index(out, s); i >= 0 {
				lo, hi := max(0, i-200), min(len(out), i+len(s)+50)
				// The excerpt shows where, never the secret itself.
				t.Errorf("a secret (ssl.key.password) appears in %s of kstranded %s:\n...%s...", name,
					strings.ReplaceAll(strings.Join(r.Args, " "), s, "<SECRET>"), strings.ReplaceAll(out[lo:hi], s, "<SECRET>"))
			}
		}
	}
}
