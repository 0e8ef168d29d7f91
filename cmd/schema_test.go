package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kstranded/kstranded/internal/testenv"
)

// schemaDir holds a JSON Schema per document (docs/schemas/NAME.vN.schema.json for
// schema "kstranded.NAME/vN").
var schemaDir, _ = filepath.Abs(filepath.Join("..", "docs", "schemas"))

var schemaName = regexp.MustCompile(`^kstranded\.([a-z-]+)/v([0-9]+)$`)

// validateDoc checks a document against the schema its "schema" field names, with a
// maintained validator (santhosh-tekuri/jsonschema); a document whose schema file is
// missing fails.
func validateDoc(t *testing.T, doc []byte) string {
	t.Helper()
	name, err := checkDoc(doc)
	if err != nil {
		t.Fatalf("%v\n%.2000s", err, doc)
	}
	return name
}

func checkDoc(doc []byte) (string, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return "", fmt.Errorf("not JSON: %v", err)
	}
	m, ok := inst.(map[string]any)
	if !ok {
		return "", fmt.Errorf("not a JSON object")
	}
	name, _ := m["schema"].(string)
	parts := schemaName.FindStringSubmatch(name)
	if parts == nil {
		return "", fmt.Errorf("document without a kstranded schema name (%q)", name)
	}
	file := filepath.Join(schemaDir, parts[1]+".v"+parts[2]+".schema.json")
	if _, err := os.Stat(file); err != nil {
		return name, fmt.Errorf("no schema file for %s: %v", name, err)
	}
	sch, err := jsonschema.NewCompiler().Compile("file://" + filepath.ToSlash(file))
	if err != nil {
		return name, fmt.Errorf("schema %s: %v", file, err)
	}
	if err := sch.Validate(inst); err != nil {
		return name, fmt.Errorf("%s does not match %s: %#v", name, filepath.Base(file), err)
	}
	return name, nil
}

// TestTheSchemasRejectWhatScriptsMustNotSee: the schemas are not empty promises: a
// verdict word outside the set, a number sent as a string, a missing key and an unknown
// key each fail validation.
func TestTheSchemasRejectWhatScriptsMustNotSee(t *testing.T) {
	var out, errs bytes.Buffer
	run(context.Background(), []string{"trace", "parse", fixture("kstranded-v1.10.0.trace"), "-o", "json"}, IO{In: strings.NewReader(""), Out: &out, Err: &errs})
	good := out.String()
	if _, err := checkDoc([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"an unknown verdict word": strings.Replace(good, `"verdict": "LOST"`, `"verdict": "LOSS"`, 1),
		"a number as a string":    regexp.MustCompile(`"committed": (\d+)`).ReplaceAllString(good, `"committed": "$1"`),
		"a missing key":           strings.Replace(good, `"delivery_evidence"`, `"delivery_evidence_renamed"`, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the tampering did not change the document", name)
		}
		if _, err := checkDoc([]byte(bad)); err == nil {
			t.Errorf("%s passes the schema", name)
		}
	}
}

// jsonDocs splits concatenated JSON documents (inspect --watch prints several).
func jsonDocs(t *testing.T, out string) [][]byte {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var docs [][]byte
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		docs = append(docs, raw)
	}
	return docs
}

// TestEveryJSONDocumentMatchesItsSchema runs the commands and validates their real
// output against docs/schemas.
func TestEveryJSONDocumentMatchesItsSchema(t *testing.T) {
	b := strandedBroker(t)
	trace := writeFile(t, "t.jsonl", strandedTrace)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		args   []string
		stderr bool // the document is on stderr (an error after the command printed its own document; none here)
	}{
		{"version", context.Background(), []string{"version"}, false},
		{"broker", cancelled, []string{"broker", "--port", "0"}, false},
		{"broker without a topic", cancelled, []string{"broker", "--port", "0", "--topic", ""}, false},
		{"a usage error", context.Background(), []string{"inspect", "--bogus"}, false}, // an error is the one JSON document on stdout
		{"an operational error", context.Background(), []string{"inspect", "--group", "g", "--brokers", "127.0.0.1:1", "--timeout", "300ms"}, false},
		{"inspect with evidence", context.Background(), []string{"inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", trace}, false},
		{"inspect without evidence", context.Background(), []string{"inspect", "--brokers", b.Addr(), "--group", "g"}, false},
		{"inspect --list", context.Background(), []string{"inspect", "--brokers", b.Addr(), "--list"}, false},
		{"inspect --watch", context.Background(), []string{"inspect", "--brokers", b.Addr(), "--group", "g", "--watch", "10ms", "--count", "2"}, false},
		{"rewind dry run", context.Background(), []string{"rewind", "--brokers", b.Addr(), "--group", "g", "--delivered", trace}, false},
		{"trace parse", context.Background(), []string{"trace", "parse", fixture("kstranded-v1.10.0.trace")}, false},
		{"trace parse of a JS client log", context.Background(), []string{"trace", "parse", fixture("jsclient/v1.10.0-default-debug.log.gz"), "--pattern", `delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)`}, false},
		{"simulate", context.Background(), []string{"simulate"}, false},
		{"simulate --policy all --commit all", context.Background(), []string{"simulate", "--policy", "all", "--commit", "all"}, false},
		{"simulate --sweep", context.Background(), []string{"simulate", "--sweep", "max-poll-interval=10m,20m"}, false},
		{"simulate --advise", context.Background(), []string{"simulate", "--advise"}, false},
		{"simulate --members", context.Background(), []string{"simulate", "--members", "2", "--spread", "0:100,1:100", "--rebalance-at", "5m:join", "--rebalance-at", "8m:leave=1"}, false},
		{"repro on the embedded broker", context.Background(), []string{"repro", "--time-scale", "0.002"}, false},
		{"repro produce", context.Background(), []string{"repro", "produce", "--brokers", b.Addr(), "--topic", "schema-t", "--partitions", "2", "--records", "5"}, false},
		{"repro consume", context.Background(), []string{"repro", "consume", "--brokers", b.Addr(), "--topic", "schema-t", "--group", "schema-g", "--until-quiescent", "--time-scale", "0.001", "--fetch-wait-max", "10ms"}, false},
	}
	// The cases that run a live consumer, and the schema of their document: -short skips
	// them (make test-short runs no live consumer) and the schema's check with them.
	live := map[string]string{"repro on the embedded broker": "kstranded.repro/v2", "repro consume": "kstranded.consume/v1"}
	seen, skipped := map[string]bool{}, map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if schema, ok := live[tc.name]; ok {
				skipped[schema] = testing.Short()
				testenv.SkipShort(t, "runs a live consumer on the embedded broker")
			}
			var out, errs bytes.Buffer
			ctx, stop := context.WithTimeout(tc.ctx, 2*time.Minute)
			defer stop()
			run(ctx, append(tc.args, "-o", "json"), IO{In: strings.NewReader(""), Out: &out, Err: &errs})
			src := out.String()
			if tc.stderr {
				src = errs.String()
			}
			docs := jsonDocs(t, src)
			if len(docs) == 0 {
				t.Fatalf("no JSON document\nstdout:\n%s\nstderr:\n%s", out.String(), errs.String())
			}
			for _, d := range docs {
				seen[validateDoc(t, d)] = true
			}
		})
	}
	// the undo file rewind --execute writes
	t.Run("rewind undo file", func(t *testing.T) {
		undo := filepath.Join(t.TempDir(), "undo.json")
		code, out, errs := runSeen([]string{"rewind", "--brokers", b.Addr(), "--group", "g", "--to", "stranded/0=82", "--execute", "--undo-file", undo}, "")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		data, err := os.ReadFile(undo)
		if err != nil {
			t.Fatal(err)
		}
		seen[validateDoc(t, data)] = true
	})
	// every schema file is exercised by some real output
	files, _ := filepath.Glob(filepath.Join(schemaDir, "*.v*.schema.json"))
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".schema.json")
		i := strings.LastIndex(base, ".v")
		name := "kstranded." + base[:i] + "/" + base[i+1:]
		switch {
		case !seen[name] && skipped[name]:
			t.Logf("%s: only a live run checks it, skipped in -short mode (make test checks it)", name)
		case !seen[name]:
			t.Errorf("%s has a schema but no output checked against it here", name)
		}
	}
}
