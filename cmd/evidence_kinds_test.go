package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// pinoDeliveries is the application log for the stranded broker (stranded/0
// delivered 0-81 and 201): pino lines with partition and offset, a "processing" line
// when the handler starts (unless processing is false) and a "processed" line when it is
// done, except for the offsets in crashed; then heartbeat lines that mention an offset.
func pinoDeliveries(processing bool, crashed func(int64) bool, heartbeats ...int64) string {
	var b strings.Builder
	line := func(msg string, o int64) {
		fmt.Fprintf(&b, `{"level":30,"time":1767225600000,"pid":7,"hostname":"h","msg":%q,"topic":"stranded","partition":0,"offset":"%d"}`+"\n", msg, o)
	}
	b.WriteString(`{"level":30,"time":1767225600000,"msg":"consumer connected"}` + "\n")
	for o := int64(0); o <= 201; o++ {
		if o > 81 && o < 201 {
			continue
		}
		if processing {
			line("processing", o)
		}
		if crashed == nil || !crashed(o) {
			line("processed", o)
		}
	}
	for _, o := range heartbeats {
		line("heartbeat ok, lag check", o)
	}
	return b.String()
}

func TestEvidenceWithProcessingAndProcessedLinesIsRefusedUntilDeliveredWhenPicksOne(t *testing.T) {
	b := strandedBroker(t)
	both := writeFile(t, "app.log", pinoDeliveries(true, nil))
	for _, command := range []string{"inspect", "rewind"} {
		t.Run(command, func(t *testing.T) {
			code, out, _ := runCmd(t, "", command, "--brokers", b.Addr(), "--group", "g", "--delivered", both)
			if code != exitcode.NoEvidence {
				t.Fatalf("exit %d, want %d (NO EVIDENCE)\n%s", code, exitcode.NoEvidence, out)
			}
			for _, want := range []string{
				"2 kinds of line carry a partition and an offset",
				"msg=processing (83 lines, offsets 0-201), msg=processed (83 lines, offsets 0-201)",
				"--delivered-when msg=processed",
				"counted msg=processing: 83 lines, offsets 0-201",
				"ignored other log lines: 1 line (no partition and offset)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestACrashBetweenProcessingAndProcessedIsLostWithDeliveredWhen(t *testing.T) {
	b := strandedBroker(t)
	crashed := writeFile(t, "app.log", pinoDeliveries(true, func(o int64) bool { return o >= 70 && o <= 81 }))
	code, out, _ := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", crashed, "--delivered-when", "msg=processed")
	if code != exitcode.Lost {
		t.Fatalf("exit %d, want %d\n%s", code, exitcode.Lost, out)
	}
	for _, want := range []string{
		"71 deliveries, 84 lines ignored",
		"counted msg=processed: 71 lines, offsets 0-201",
		"ignored msg=processing: 83 lines, offsets 0-201 (not --delivered-when msg=processed)",
		"stranded/0: LOST 70-199 (130 records); safe rewind offset 70",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// rewind plans from the same reading: back to 70, not 82
	code, out, _ = runCmd(t, "", "rewind", "--brokers", b.Addr(), "--group", "g", "--delivered", crashed, "--delivered-when", "msg=processed", "-o", "json")
	if code != exitcode.OK {
		t.Fatalf("rewind exit %d\n%s", code, out)
	}
	var plan struct {
		Evidence struct {
			Sources []struct {
				Kinds []struct {
					Name    string `json:"name"`
					Counted bool   `json:"counted"`
					Lines   int    `json:"lines"`
					First   *int64 `json:"first_offset"`
				} `json:"kinds"`
			} `json:"sources"`
		} `json:"evidence"`
		Moves []struct {
			Target int64 `json:"target"`
		} `json:"moves"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(plan.Moves) != 1 || plan.Moves[0].Target != 70 {
		t.Fatalf("moves %+v, want one to 70", plan.Moves)
	}
	ks := plan.Evidence.Sources[0].Kinds
	if len(ks) != 3 || ks[0].Name != "msg=processed" || !ks[0].Counted || ks[0].Lines != 71 || ks[1].Counted || ks[2].Name != "msg=processing" || ks[2].Lines != 83 {
		t.Fatalf("kinds %+v", ks)
	}
}

func TestHeartbeatsThatMentionAnOffsetAreIgnoredWithDeliveredWhen(t *testing.T) {
	b := strandedBroker(t)
	log := writeFile(t, "app.log", pinoDeliveries(false, nil, 82, 83, 84))
	code, out, _ := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", log)
	if code != exitcode.NoEvidence || !strings.Contains(out, `msg="heartbeat ok, lag check" (3 lines, offsets 82-84)`) {
		t.Fatalf("exit %d, want %d naming the heartbeats\n%s", code, exitcode.NoEvidence, out)
	}
	code, out, _ = runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", log, "--delivered-when", "msg=processed")
	if code != exitcode.Lost {
		t.Fatalf("exit %d, want %d\n%s", code, exitcode.Lost, out)
	}
	for _, want := range []string{
		`ignored msg="heartbeat ok, lag check": 3 lines, offsets 82-84 (not --delivered-when msg=processed)`,
		"stranded/0: LOST 82-199 (118 records); safe rewind offset 82",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestOneKindOfLogLineIsNamedAsCounted(t *testing.T) {
	b := strandedBroker(t)
	log := writeFile(t, "app.log", pinoDeliveries(false, nil))
	code, out, _ := runCmd(t, "", "inspect", "--brokers", b.Addr(), "--group", "g", "--delivered", log)
	if code != exitcode.Lost || !strings.Contains(out, "counted msg=processed: 83 lines, offsets 0-201") || !strings.Contains(out, "LOST 82-199 (118 records)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestDeliveredWhenIsValidated(t *testing.T) {
	ev := writeFile(t, "app.log", pinoDeliveries(true, nil))
	for _, command := range []string{"inspect", "rewind"} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--delivered", ev, "--delivered-when", "processed"}, "--delivered-when \"processed\": want FIELD=VALUE, FIELD~REGEXP or ~REGEXP"},
			{[]string{"--delivered", ev, "--delivered-when", "msg~("}, "--delivered-when \"msg~(\": error parsing regexp"},
			{[]string{"--delivered", ev, "--delivered-when", "=x"}, "FIELD=VALUE needs a field"},
			{[]string{"--to", "stranded/0=1", "--delivered-when", "msg=processed"}, "--delivered-when picks lines of --delivered FILE"},
		} {
			if command == "inspect" && tc.args[0] == "--to" {
				tc.args = tc.args[2:]
			}
			t.Run(command+" "+strings.Join(tc.args, " "), func(t *testing.T) {
				code, _, errOut := runCmd(t, "", append([]string{command, "--brokers", "127.0.0.1:1", "--group", "g"}, tc.args...)...)
				if code != exitcode.Usage || !strings.Contains(errOut, tc.want) {
					t.Fatalf("exit %d, stderr %q; want exit 2 saying %q", code, errOut, tc.want)
				}
			})
		}
	}
}
