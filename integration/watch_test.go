package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// background starts a process that the test stops at its end.
func background(t *testing.T, name string, args ...string) *syncBuffer {
	t.Helper()
	var out syncBuffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), out.String())
		}
	})
	return &out
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func commitAt(t *testing.T, adm *kadm.Client, group, topic string, offset int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := kadm.Offsets{}
	o.AddOffset(topic, 0, offset, -1)
	if resp, err := adm.CommitOffsets(ctx, group, o); err != nil || resp.Error() != nil {
		t.Fatalf("CommitOffsets: %v %v", err, resp.Error())
	}
}

type alertsDoc struct {
	Data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	} `json:"data"`
}

// TestPrometheusFiresTheShippedLossAlertFromWatch: issue 24 §3. A real Prometheus
// (Debian's package) scrapes `kstranded watch` and evaluates the shipped rule file. The
// group starts STRANDED (commit 82, 0-81 delivered: no alert); its commit then jumps to
// 202 past the undelivered 82-199 and the application delivers 201, as in the seed: the
// loss alert fires for that group, read back through Prometheus' HTTP API; a clean group
// watched beside it stays silent.
func TestPrometheusFiresTheShippedLossAlertFromWatch(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus not installed (.ci/run installs Debian's prometheus package)")
		}
		t.Skip("prometheus not installed: apt-get install prometheus (CI installs it)")
	}
	adm := admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stamp := time.Now().UnixNano()
	lossTopic, cleanTopic := fmt.Sprintf("watch-loss-%d", stamp), fmt.Sprintf("watch-clean-%d", stamp)
	lossGroup, cleanGroup := lossTopic+"-group", cleanTopic+"-group"
	for _, tp := range []string{lossTopic, cleanTopic} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, tp); err != nil {
			t.Fatal(err)
		}
		keep(tp)
	}
	keepGroup(lossGroup)
	keepGroup(cleanGroup)
	writePartition(t, lossTopic, []batch{{n: 200, txn: true}})
	writePartition(t, cleanTopic, []batch{{n: 10, txn: true}})
	commitAt(t, adm, lossGroup, lossTopic, 82)
	commitAt(t, adm, cleanGroup, cleanTopic, 11)
	dir := t.TempDir()
	app := filepath.Join(dir, "app.log")
	var b strings.Builder
	for o := 0; o <= 81; o++ {
		fmt.Fprintf(&b, `{"level":30,"msg":"processed","topic":%q,"partition":0,"offset":"%d"}`+"\n", lossTopic, o)
	}
	for o := 0; o <= 9; o++ {
		fmt.Fprintf(&b, `{"level":30,"msg":"processed","topic":%q,"partition":0,"offset":"%d"}`+"\n", cleanTopic, o)
	}
	if err := os.WriteFile(app, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	wport, pport := freePort(t), freePort(t)
	background(t, bin, "watch", "--brokers", env.Brokers, "--group", lossGroup, "--group", cleanGroup, "--delivered", app,
		"--interval", "1s", "--listen", fmt.Sprintf("127.0.0.1:%d", wport), "--timeout", "10s")
	rules, err := filepath.Abs(filepath.Join("..", "docs", "alerts", "kstranded.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: kstranded
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, rules, wport)), 0o644); err != nil {
		t.Fatal(err)
	}
	background(t, prom, "--config.file", cfg, "--storage.tsdb.path", filepath.Join(dir, "tsdb"),
		"--web.listen-address", fmt.Sprintf("127.0.0.1:%d", pport))
	api := fmt.Sprintf("http://127.0.0.1:%d/api/v1", pport)

	firing := func(group string) (bool, error) {
		var d alertsDoc
		if err := getJSON(api+"/alerts", &d); err != nil {
			return false, err
		}
		for _, a := range d.Data.Alerts {
			if a.Labels["alertname"] == "KstrandedRecordsLost" && a.Labels["group"] == group && a.State == "firing" {
				return true, nil
			}
		}
		return false, nil
	}
	// the stranded phase: Prometheus has scraped the judged partitions, no alert
	var q struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	until(t, 60*time.Second, "Prometheus to scrape both groups' verdicts", func() bool {
		if err := getJSON(api+`/query?query=kstranded_partition_verdict`, &q); err != nil {
			return false
		}
		seen := map[string]string{}
		for _, r := range q.Data.Result {
			seen[r.Metric["group"]] = r.Metric["verdict"]
		}
		return seen[lossGroup] == "STRANDED" && seen[cleanGroup] == "OK"
	})
	if f, err := firing(lossGroup); err != nil || f {
		t.Fatalf("the loss alert fires while the records are only stranded (err %v)", err)
	}
	// the loss: one more record, delivered, and the commit jumps past 82-199
	writePartition(t, lossTopic, []batch{{n: 1}})
	fh, err := os.OpenFile(app, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(fh, `{"level":30,"msg":"processed","topic":%q,"partition":0,"offset":"201"}`+"\n", lossTopic)
	fh.Close()
	commitAt(t, adm, lossGroup, lossTopic, 202)
	until(t, 60*time.Second, "the KstrandedRecordsLost alert to fire for the group that lost 82-199", func() bool {
		f, err := firing(lossGroup)
		return err == nil && f
	})
	var lost struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := getJSON(api+`/query?query=kstranded_records_lost`, &lost); err != nil {
		t.Fatal(err)
	}
	for _, r := range lost.Data.Result {
		want := "0"
		if r.Metric["group"] == lossGroup {
			want = "118"
		}
		if len(r.Value) != 2 || r.Value[1] != want {
			t.Errorf("kstranded_records_lost%v = %v, want %s", r.Metric, r.Value, want)
		}
	}
	if f, _ := firing(cleanGroup); f {
		t.Errorf("the loss alert fires for the clean group")
	}
}
