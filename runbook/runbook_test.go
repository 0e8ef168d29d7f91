package runbook

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kstranded/kstranded/internal/embedded"
	"github.com/kstranded/kstranded/internal/testenv"
)

// bin is the kstranded binary the runbooks run, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	flag.Parse() // for testenv.Live (testing.Short)
	code := func() int {
		dir, err := os.MkdirTemp("", "kstranded-runbook-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "kstranded")
		if testenv.Live() { // only TestRunbooks, in the live tier, runs it
			out, err := exec.Command("go", "build", "-o", bin, "github.com/kstranded/kstranded").CombinedOutput()
			if err != nil {
				fmt.Fprintf(os.Stderr, "building kstranded: %v\n%s", err, out)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

func runbookFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../docs/runbooks/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no runbooks found in docs/runbooks (%v)", err)
	}
	return files
}

func TestEveryRunbookParsesAndHasSteps(t *testing.T) {
	for _, f := range runbookFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := Parse(filepath.Base(f), string(data))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "README.md" {
			continue
		}
		run := 0
		for _, s := range rb.Steps {
			if !s.Skip {
				run++
			}
		}
		if run == 0 {
			t.Errorf("%s has no tested ```sh step", f)
		}
		if _, ok := setups[rb.Setup]; !ok {
			t.Errorf("%s: unknown runbook-setup %q", f, rb.Setup)
		}
	}
}

// setups prepare the environment a runbook's steps start from, in dir, and return the
// variables to export.
var setups = map[string]func(t *testing.T, dir string) map[string]string{
	// broker: an empty embedded broker (the runbook creates what it needs).
	"broker": func(t *testing.T, dir string) map[string]string {
		return map[string]string{"BROKER": startBroker(t)}
	},
	// loss: the v1.10.0 loss of the bug report, made by `repro --policy v1.10.0 --keep`,
	// with the group and topic it used and its trace as the delivery evidence.
	"loss": func(t *testing.T, dir string) map[string]string {
		broker := startBroker(t)
		trace := filepath.Join(dir, "trace.jsonl")
		cmd := exec.Command(bin, "repro", "--brokers", broker, "--policy", "v1.10.0", "--keep",
			"--trace", trace, "--fetch-wait-max", "10ms", "--time-scale", "0.002", "-o", "json")
		cmd.Dir = dir
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 3 {
			t.Fatalf("repro --policy v1.10.0: exit %d (want 3: records lost): %v\n%s", code, err, out)
		}
		var r struct {
			Lost int `json:"lost"`
			Runs []struct {
				Topic string `json:"topic"`
				Group string `json:"group"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Runs) != 1 || r.Lost != 118 {
			t.Fatalf("repro output: %v, lost %d, want 118\n%s", err, r.Lost, out)
		}
		return map[string]string{"BROKER": broker, "GROUP": r.Runs[0].Group, "TOPIC": r.Runs[0].Topic, "TRACE": trace}
	},
	// stuck: records stranded, not lost: 200 records in one transaction, consumed by the
	// v1.10.0 model until quiescent: 82 delivered and committed, 118 stranded (exit 4, as
	// every command exits for stranded records).
	"stuck": func(t *testing.T, dir string) map[string]string {
		broker := startBroker(t)
		trace := filepath.Join(dir, "trace.jsonl")
		run(t, dir, 0, "repro", "produce", "--brokers", broker, "--topic", "orders", "--records", "200")
		out := run(t, dir, 4, "repro", "consume", "--brokers", broker, "--group", "billing", "--topic", "orders",
			"--policy", "v1.10.0", "--until-quiescent", "--time-scale", "0.002", "--fetch-wait-max", "10ms", "--trace", trace, "-o", "json")
		var r struct {
			Partitions []struct {
				Partition int32 `json:"partition"`
				Committed int64 `json:"committed"`
				Stranded  []struct {
					First, Last int64
				} `json:"stranded"`
			} `json:"partitions"`
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Partitions) == 0 || r.Partitions[0].Committed != 82 ||
			len(r.Partitions[0].Stranded) != 1 || r.Partitions[0].Stranded[0].First != 82 || r.Partitions[0].Stranded[0].Last != 199 {
			t.Fatalf("repro consume: %v; want partition 0 committed at 82, 82-199 stranded\n%s", err, out)
		}
		return map[string]string{"BROKER": broker, "GROUP": "billing", "TOPIC": "orders", "TRACE": trace}
	},
	// transactional: 200 records in one transaction (commit marker at 200, high
	// watermark 201), all consumed by the group's application, which the harness plays
	// with the fixed client's model (v1.10.1) in a new group: committed at 200, lag 1.
	"transactional": func(t *testing.T, dir string) map[string]string {
		broker := startBroker(t)
		trace := filepath.Join(dir, "trace.jsonl")
		run(t, dir, 0, "repro", "produce", "--brokers", broker, "--topic", "orders", "--records", "200")
		out := run(t, dir, 0, "repro", "consume", "--brokers", broker, "--group", "billing", "--topic", "orders",
			"--policy", "v1.10.1", "--until-quiescent", "--time-scale", "0.002", "--fetch-wait-max", "10ms", "--trace", trace, "-o", "json")
		var r struct {
			Partitions []struct {
				Partition int32 `json:"partition"`
				Committed int64 `json:"committed"`
			} `json:"partitions"`
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Partitions) == 0 || r.Partitions[0].Committed != 200 {
			t.Fatalf("repro consume: %v; want partition 0 committed at 200\n%s", err, out)
		}
		return map[string]string{"BROKER": broker, "GROUP": "billing", "TOPIC": "orders", "TRACE": trace}
	},
}

// playApplication is the operator's application where a runbook says it runs
// (<!-- runbook: application writes=FILE -->): the test harness, not a runbook step,
// runs it. It is kstranded's model of the fixed client (v1.10.1) in the incident's group,
// run until quiescent, and its delivery log is what an application's "processed" log
// cut down with grep/awk is: one "TOPIC PARTITION OFFSET" line per record handled, in
// dir/FILE, for the next step to read.
func playApplication(t *testing.T, dir string, env map[string]string, file string) {
	t.Helper()
	out := run(t, dir, 0, "repro", "consume", "--brokers", env["BROKER"], "--group", env["GROUP"], "--use-existing-group",
		"--topic", env["TOPIC"], "--policy", "v1.10.1", "--until-quiescent", "--time-scale", "0.002", "--fetch-wait-max", "10ms", "-o", "json")
	var r struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Ranges    []struct {
				First int64 `json:"first"`
				Last  int64 `json:"last"`
			} `json:"delivered_ranges"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("the application (repro consume): %v\n%s", err, out)
	}
	var b strings.Builder
	for _, p := range r.Partitions {
		for _, rg := range p.Ranges {
			for off := rg.First; off <= rg.Last; off++ {
				fmt.Fprintf(&b, "%s %d %d\n", r.Topic, p.Partition, off)
			}
		}
	}
	if b.Len() == 0 {
		t.Fatalf("the application delivered nothing\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// run runs the kstranded binary in dir and returns its standard output.
func run(t *testing.T, dir string, want int, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("kstranded %s: exit %d, want %d: %v\n%s", strings.Join(args, " "), code, want, err, out)
	}
	return out
}

func startBroker(t *testing.T) string {
	t.Helper()
	b, err := embedded.Start(embedded.Options{Partitions: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addr()
}

// TestRunbooks runs every runbook's steps in order against the embedded broker and checks
// each step's exit code and the lines the runbook says the operator will see.
func TestRunbooks(t *testing.T) {
	// The loss and stuck setups, and the runbooks' own steps, run live consumers at
	// scaled time (--time-scale 0.002) and check the exact offsets they leave.
	testenv.MustLive(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the runbooks are bash")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the runbooks use jq and CI must run them: install jq (.ci/run does)")
		}
		t.Skip("the runbooks use jq")
	}
	for _, f := range runbookFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := Parse(filepath.Base(f), string(data))
		if err != nil {
			t.Fatal(err)
		}
		if len(rb.Steps) == 0 {
			continue
		}
		t.Run(strings.TrimSuffix(rb.Name, ".md"), func(t *testing.T) {
			t.Parallel()
			runRunbook(t, rb)
		})
	}
}

func runRunbook(t *testing.T, rb *Runbook) {
	dir := t.TempDir()
	setup := setups[rb.Setup]
	if setup == nil {
		t.Fatalf("unknown runbook-setup %q", rb.Setup)
	}
	env := setup(t, dir)
	sh := startShell(t, dir, env)
	for i, s := range rb.Steps {
		if s.App {
			start := time.Now()
			playApplication(t, dir, env, s.AppLog)
			t.Logf("%s:%d (%.1fs) the application ran (played by the test), its deliveries in %s", rb.Name, s.Line, time.Since(start).Seconds(), s.AppLog)
			continue
		}
		if s.Skip {
			continue
		}
		start := time.Now()
		out, code := sh.run(t, i, s.Code, 90*time.Second)
		t.Logf("%s:%d (%.1fs) exit %d\n$ %s\n%s", rb.Name, s.Line, time.Since(start).Seconds(), code, s.Code, out)
		if code != s.Exit {
			t.Fatalf("%s:%d: exit %d, the runbook says %d\n$ %s\n%s", rb.Name, s.Line, code, s.Exit, s.Code, out)
		}
		if miss := Missing(s.Expect, out); len(miss) > 0 {
			t.Fatalf("%s:%d: the output lacks lines the runbook promises:\n  %s\n$ %s\n%s", rb.Name, s.Line, strings.Join(miss, "\n  "), s.Code, out)
		}
	}
}

// shell is one bash session fed step by step, as an operator's terminal.
type shell struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	dir string // where step outputs and exit codes are written
}

func startShell(t *testing.T, dir string, env map[string]string) *shell {
	t.Helper()
	state := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own process group, so that background jobs a runbook starts are stopped too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sh := &shell{cmd: cmd, in: in, dir: state}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		// Whatever the runbook left running in the background.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return sh
}

// run runs one step and returns its combined output and exit code.
func (s *shell) run(t *testing.T, i int, code string, timeout time.Duration) (string, int) {
	t.Helper()
	out := filepath.Join(s.dir, fmt.Sprintf("out.%d", i))
	rc := filepath.Join(s.dir, fmt.Sprintf("rc.%d", i))
	script := fmt.Sprintf("{\n%s\n} > %q 2>&1 < /dev/null\necho $? > %q.tmp && mv %q.tmp %q\n", code, out, rc, rc, rc)
	if _, err := io.WriteString(s.in, script); err != nil {
		t.Fatalf("the shell is gone: %v", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(rc); err == nil {
			o, _ := os.ReadFile(out)
			var c int
			fmt.Sscan(string(b), &c)
			return string(o), c
		}
		if time.Now().After(deadline) {
			o, _ := os.ReadFile(out)
			t.Fatalf("step did not finish within %s\n$ %s\n%s", timeout, code, o)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestParseReadsStepsExpectationsAndSkips(t *testing.T) {
	md := "<!-- runbook-setup: loss -->\n# T\n\n```sh\nkstranded inspect --group \"$GROUP\"\n```\n<!-- expect exit=3 -->\n\nYou will see:\n\n```text\nstranded-…/0: LOST 82-199\n\n```\n\n```text\nnot an expectation\n```\n\n<!-- runbook: skip (production only) -->\n```sh\nsystemctl stop billing\n```\n\n```js\nconst x = 1\n```\n"
	rb, err := Parse("t.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Setup != "loss" || len(rb.Steps) != 2 {
		t.Fatalf("setup %q, %d steps", rb.Setup, len(rb.Steps))
	}
	s := rb.Steps[0]
	if s.Exit != 3 || s.Skip || len(s.Expect) != 1 || s.Expect[0] != "stranded-…/0: LOST 82-199" || s.Code != `kstranded inspect --group "$GROUP"` {
		t.Fatalf("first step %+v", s)
	}
	if !rb.Steps[1].Skip || rb.Steps[1].Exit != 0 {
		t.Fatalf("second step %+v", rb.Steps[1])
	}
}

func TestParseRejectsBrokenMarkup(t *testing.T) {
	cases := []struct{ name, md string }{
		{"an unclosed block", "```sh\nls\n"},
		{"an expectation before any step", "<!-- expect exit=1 -->\n"},
		{"a misspelt expectation", "```sh\nls\n```\n<!-- expect exit 3 -->\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse("t.md", c.md); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestMissingMatchesWithEllipsisAndSpacing(t *testing.T) {
	out := "TOPIC\tPARTITION\tCOMMITTED\nstranded-1a2b\t0\t202\nstranded-1a2b/0: LOST 82-199 (118 records); safe rewind offset 82\n"
	cases := []struct {
		name   string
		expect string
		found  bool
	}{
		{"an exact line", "stranded-1a2b\t0\t202", true},
		{"tabs compare equal to spaces", "stranded-1a2b 0 202", true},
		{"an ellipsis stands for any text", "stranded-…/0: LOST 82-199 … safe rewind offset 82", true},
		{"fragments must come in order", "safe rewind … LOST", false},
		{"a line that is not there", "OK: no records lost", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			miss := Missing([]string{c.expect}, out)
			if (len(miss) == 0) != c.found {
				t.Fatalf("Missing(%q) = %v", c.expect, miss)
			}
		})
	}
}

// TestARunbookThatUsesJqSaysSo: a step that pipes into jq needs it; the page says so
// before its first step.
func TestARunbookThatUsesJqSaysSo(t *testing.T) {
	for _, f := range runbookFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := Parse(filepath.Base(f), string(data))
		if err != nil {
			t.Fatal(err)
		}
		uses := false
		for _, s := range rb.Steps {
			uses = uses || regexp.MustCompile(`\bjq\b`).MatchString(s.Code)
		}
		if !uses || len(rb.Steps) == 0 {
			continue
		}
		intro := strings.Join(strings.Split(string(data), "\n")[:rb.Steps[0].Line-1], "\n")
		if !strings.Contains(intro, "`jq`") {
			t.Errorf("%s uses jq but does not say so before its first step", rb.Name)
		}
	}
}

// TestNoRunbookStepStartsAConsumerInTheOperatorsGroup (issue 21 §3): tried as a new user
// would, lost-records.md's verification step ran `repro consume --group "$GROUP"` after
// the rewind: the model consumer received 82-199 itself, committed 202, the next step
// said OK, and the application still missed 118 records. No step a runbook runs (every
// step an operator pastes) may start a consumer in "$GROUP", in a variable made from
// it, or in a group variable the page did not assign; the application's restart is an
// <!-- runbook: application --> step, which the harness plays.
func TestNoRunbookStepStartsAConsumerInTheOperatorsGroup(t *testing.T) {
	for _, f := range runbookFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := Parse(filepath.Base(f), string(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range GroupConsumers(rb) {
			t.Error(v)
		}
	}
}

// TestGroupConsumersFindsEveryWayAStepJoinsTheGroup: the check above can fail. Its first
// cases are the steps the issue found (lost-records.md step 6 and the first step of
// transactional-lag.md, as they were, without their stand-in marker, which Parse now
// refuses).
func TestGroupConsumersFindsEveryWayAStepJoinsTheGroup(t *testing.T) {
	const oldLostRecords6 = `kstranded repro consume --brokers "$BROKER" --group "$GROUP" --topic "$TOPIC" --policy v1.10.1 --until-quiescent --time-scale 0.002 --fetch-wait-max 10ms --trace after.jsonl`
	cases := []struct {
		name  string
		steps []string // run steps, in order
		found int
	}{
		{"the old lost-records.md step 6", []string{oldLostRecords6}, 1},
		{"the old transactional-lag.md first step", []string{`kstranded repro consume --brokers "$BROKER" --group "$GROUP" --topic "$TOPIC" --policy v1.10.1 --until-quiescent --time-scale 0.002 --fetch-wait-max 10ms --trace after.jsonl`}, 1},
		{"--group=", []string{`kstranded repro consume --brokers "$BROKER" --group="$GROUP" --topic t`}, 1},
		{"${GROUP}", []string{`kstranded repro consume --group ${GROUP} --topic t`}, 1},
		{"in the background, after a pipe", []string{`kstranded inspect --group "$GROUP" | head -1; kstranded repro consume --group "$GROUP" > c.log 2>&1 &`}, 1},
		{"with a line continuation", []string{"kstranded repro consume --brokers \"$BROKER\" \\\n  --group \"$GROUP\""}, 1},
		{"in a command substitution", []string{`N=$(kstranded repro consume --group "$GROUP" -o json | jq .lost)`}, 1},
		{"in a quoted command substitution", []string{`echo "got $(kstranded repro consume --group "$GROUP" -o json)"`}, 1},
		{"repro with --group", []string{`kstranded repro --brokers "$BROKER" --group "$GROUP"`}, 1},
		{"under timeout and an env assignment", []string{`FOO=1 timeout 60 kstranded repro consume --group "$GROUP"`}, 1},
		{"kafka-console-consumer", []string{`kafka-console-consumer.sh --bootstrap-server "$BROKER" --topic "$TOPIC" --group "$GROUP" --from-beginning`}, 1},
		{"kafka-console-consumer with a group.id property", []string{`kafka-console-consumer --bootstrap-server "$BROKER" --topic "$TOPIC" --consumer-property group.id=$GROUP`}, 1},
		{"kafka-verifiable-consumer", []string{`kafka-verifiable-consumer.sh --bootstrap-server "$BROKER" --topic "$TOPIC" --group-id "$GROUP"`}, 1},
		{"kcat in balanced mode", []string{`kcat -b "$BROKER" -G "$GROUP" "$TOPIC"`}, 1},
		{"kcat with group.id", []string{`kcat -b "$BROKER" -C -X group.id="$GROUP" -t "$TOPIC"`}, 1},
		{"a variable made from $GROUP", []string{`export G="$GROUP"`, `kstranded repro consume --group "$G" --topic t`}, 1},
		{"$GROUP even when the page sets it", []string{`export GROUP=$(jq -r '.runs[0].group' repro.json)`, `kstranded repro consume --group "$GROUP"`}, 1},
		{"a group variable the page did not assign", []string{`kstranded repro consume --group "$APP_GROUP" --topic t`}, 1},
		// what may run
		{"a group the page made", []string{`export REHEARSAL_GROUP=$(jq -r '.runs[0].group' repro.json)`, `kstranded repro consume --group "$REHEARSAL_GROUP" --use-existing-group`}, 0},
		{"a literal group", []string{`kstranded repro consume --group my-test-group --topic t`}, 0},
		{"a group named with text of its own", []string{`kstranded repro consume --group "$GROUP-kstranded-test" --topic t`}, 0},
		{"repro without --group makes its own", []string{`kstranded repro --brokers "$BROKER" --policy v1.10.0 --keep -o json > repro.json`}, 0},
		{"the repair and the checks", []string{`kstranded rewind --brokers "$BROKER" --group "$GROUP" --delivered "$TRACE" --execute`, `kstranded inspect --brokers "$BROKER" --group "$GROUP" --delivered after.log`, `kafka-consumer-groups.sh --bootstrap-server "$BROKER" --describe --group "$GROUP"`}, 0},
		{"a quoted mention", []string{`echo 'kstranded repro consume --group "$GROUP"' # never run this`}, 0},
		{"kafka-console-consumer without a group", []string{`kafka-console-consumer --bootstrap-server "$BROKER" --topic "$TOPIC"`}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rb := &Runbook{Name: "t.md"}
			for i, code := range c.steps {
				rb.Steps = append(rb.Steps, Step{Line: i + 1, Code: code})
			}
			got := GroupConsumers(rb)
			if len(got) != c.found {
				t.Fatalf("found %d (%q), want %d", len(got), got, c.found)
			}
			// a skipped or application step is not run: never listed
			for i := range rb.Steps {
				rb.Steps[i].Skip = true
			}
			if got := GroupConsumers(rb); len(got) != 0 {
				t.Fatalf("skipped steps listed: %q", got)
			}
		})
	}
}

// TestParseRefusesStandInsAndReadsApplicationSteps: the stand-in marker ran a test
// consumer in "$GROUP" as a step; it is refused. An application step is shown, not run,
// and names the log the harness writes.
func TestParseRefusesStandInsAndReadsApplicationSteps(t *testing.T) {
	if _, err := Parse("t.md", "<!-- runbook: stand-in -->\n```sh\nkstranded repro consume --group \"$GROUP\"\n```\n"); err == nil || !strings.Contains(err.Error(), "stand-in") {
		t.Fatalf("a stand-in step: err %v, want a refusal", err)
	}
	if _, err := Parse("t.md", "<!-- runbook: application (no log named) -->\n```sh\nsystemctl start billing\n```\n"); err == nil {
		t.Fatal("an application step without writes=FILE: want an error")
	}
	rb, err := Parse("t.md", "<!-- runbook: application writes=after.log (restart your application) -->\n```sh\nsystemctl start billing\n```\n\n```sh\nkstranded inspect --delivered after.log\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Steps) != 2 || !rb.Steps[0].App || !rb.Steps[0].Skip || rb.Steps[0].AppLog != "after.log" || rb.Steps[1].App || rb.Steps[1].Skip {
		t.Fatalf("steps %+v", rb.Steps)
	}
}
