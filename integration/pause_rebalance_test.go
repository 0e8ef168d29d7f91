package integration

import (
	"bufio"
	"strings"
	"testing"
)

// The model keeps an application's pause on a partition through a rebalance that revokes
// and assigns it again (simkafka Client.unassign, TestAPauseOutlivesTheAssignment: read
// from librdkafka's source, which resets only its own pause on removal). These captures
// of the real client say the same (outside-pause-survives-rebalance in jsShapes): m1 and m2
// share the topic's 20 partitions, m1's application pauses partition 0 from outside 3 s
// after run(), m2 leaves at 5 s and m1 is assigned all 20 again (eager). From that
// assignment on, m1 delivers partition 1 (m2's before) and nothing of partition 0 until
// the application resumes it; never resumed (the -no-resume runs, whose resume timer is
// past the run's end), partition 0's rest is never delivered and its committed offset
// stays where the pause left it: STRANDED, not lost. A client that dropped the pause at
// the rebalance would deliver partition 0 right after the assignment (the model with the
// pause dropped in unassign does: 8 and 9 at 600 s of 1000).
func TestAPauseOutlivesARebalanceInTheRealClient(t *testing.T) {
	for _, c := range []struct {
		capture string
		resumed bool
	}{
		{"v1.10.0-outside-pause-survives-rebalance-1796630443.log.gz", true},
		{"v1.10.1-outside-pause-survives-rebalance-1796630357.log.gz", true},
		{"v1.10.0-outside-pause-survives-rebalance-no-resume-1796630502.log.gz", false},
		{"v1.10.1-outside-pause-survives-rebalance-no-resume-1796630412.log.gz", false},
		// 11:27-11:29, scenario.js running each member's own application: m2 pauses
		// partition 0 too (it does not hold it) and its lines name their member
		{"v1.10.0-outside-pause-survives-rebalance-1796642912.log.gz", true},
		{"v1.10.1-outside-pause-survives-rebalance-1796642842.log.gz", true},
		{"v1.10.0-outside-pause-survives-rebalance-no-resume-1796642971.log.gz", false},
	} {
		t.Run(c.capture, func(t *testing.T) {
			const (
				before = iota // until m2 has left
				left          // m2 left, m1 not yet assigned again
				again         // m1 assigned all 20 again, partition 0 not resumed
				resumed
			)
			state := before
			var paused, p0Again, p1Again, p0Resumed bool
			var summary string
			eachCaptureLine(t, "2026-12-07-pause-rebalance/"+c.capture, func(l string) {
				switch {
				case strings.HasPrefix(l, "pause topic=stranded from=outside ") && strings.Contains(l, " partitions=0 ") && byM1(l):
					paused = true
				case l == "member member=m2 event=left" || strings.HasPrefix(l, "member member=m2 event=left "):
					state = left
				case state == left && strings.Contains(l, "'Local: Assign partitions' and 20 partition(s)"):
					state = again
				case strings.HasPrefix(l, "resume topic=stranded from=outside ") && byM1(l):
					if state != again {
						t.Fatalf("resumed before m1 was assigned again: %s", l)
					}
					state = resumed
				case strings.HasPrefix(l, "delivered topic=stranded partition=0 ") && strings.HasSuffix(l, " member=m1"):
					p0Again = p0Again || state == again
					p0Resumed = p0Resumed || state == resumed
				case strings.HasPrefix(l, "delivered topic=stranded partition=1 ") && strings.HasSuffix(l, " member=m1"):
					p1Again = p1Again || state >= again
				case strings.HasPrefix(l, "summary "):
					summary = l
				}
			})
			if !paused || state < again {
				t.Fatalf("not the shape: paused %v, m1 assigned again after m2 left %v", paused, state >= again)
			}
			if !p1Again {
				t.Errorf("m1 delivered nothing of partition 1 once assigned again: the run does not show it consuming")
			}
			if p0Again {
				t.Errorf("partition 0 delivered between the assignment and the resume: the pause did not outlive the rebalance")
			}
			if c.resumed != (state == resumed) {
				t.Fatalf("resumed %v, want %v", state == resumed, c.resumed)
			}
			if c.resumed && (!p0Resumed || !strings.Contains(summary, " undelivered=- ")) {
				t.Errorf("resumed, partition 0 delivered after it %v; %s", p0Resumed, summary)
			}
			if !c.resumed && !strings.Contains(summary, " undelivered=0:") {
				t.Errorf("never resumed, yet partition 0's records were all delivered: %s", summary)
			}
		})
	}
}

// Each member of scenario.js is its own copy of the application, as each member of the
// model is (eachbatch Engine.Start schedules a member's pause from its own start): in
// outside-pause-every-member m1 and m2 each pause their own assignment from outside 4 s
// after their own run() and resume it 3 s later. These captures of the real client show
// both pauses, each of the member's own partitions, and neither member delivering
// anything between its pause and its resume but the record its handler had in hand (one
// at a time: eachMessage, concurrency 1); each goes on after its resume. A harness that
// paused m1 alone (as scenario.js did before 2026-12-07) fails here: m2 has no pause.
func TestEveryMemberPausesItsOwnAssignment(t *testing.T) {
	for _, capture := range []string{
		"v1.10.0-outside-pause-every-member-1796643002.log.gz",
		"v1.10.1-outside-pause-every-member-1796642873.log.gz",
	} {
		t.Run(capture, func(t *testing.T) {
			type member struct {
				assigned        map[string]bool // its partitions when it paused
				paused, resumed bool
				during, after   int // its deliveries between its pause and resume, and after
			}
			ms := map[string]*member{"m1": {}, "m2": {}}
			var summary string
			eachCaptureLine(t, "2026-12-07-every-member/"+capture, func(l string) {
				m := ms[lineField(l, "member")]
				switch {
				case m == nil:
					if strings.HasPrefix(l, "summary ") {
						summary = l
					}
				case strings.HasPrefix(l, "pause topic=stranded from=outside "):
					m.paused, m.assigned = true, map[string]bool{}
					for _, p := range strings.Split(lineField(l, "assigned"), ",") {
						m.assigned[p] = true
					}
				case strings.HasPrefix(l, "resume topic=stranded from=outside "):
					if !m.paused {
						t.Fatalf("resumed before it paused: %s", l)
					}
					m.resumed = true
				case strings.HasPrefix(l, "delivered topic=stranded "):
					if m.paused && !m.assigned[lineField(l, "partition")] {
						t.Errorf("delivered a partition it did not hold when it paused: %s", l)
					}
					switch {
					case m.resumed:
						m.after++
					case m.paused:
						m.during++
					}
				}
			})
			for name, m := range ms {
				if !m.paused || !m.resumed {
					t.Fatalf("%s: paused %v, resumed %v: every member pauses and resumes its own assignment", name, m.paused, m.resumed)
				}
				if m.assigned["-"] || len(m.assigned) == 20 {
					t.Errorf("%s paused %d partitions: not a member sharing the topic with another", name, len(m.assigned))
				}
				if m.during > 1 {
					t.Errorf("%s delivered %d records between its pause and its resume: its pause did not hold (at most the one in hand)", name, m.during)
				}
				if m.after == 0 {
					t.Errorf("%s delivered nothing after its resume", name)
				}
			}
			if !strings.Contains(summary, " undelivered=- ") {
				t.Errorf("records left undelivered: %s", summary)
			}
		})
	}
}

// The handler's pause, once for each member (handler-pause-member-leaves): m1 and m2 each
// pause their own partition from their handler 3 s after their own run() (before
// 2026-12-07 scenario.js made one such pause in the whole process, the first member's);
// m2 leaves at 5 s, before its resume is due, and scenario.js does not call the resume()
// of a member that has left (the client throws once disconnected). m1 delivers nothing of
// its paused partition until its resume but the record in hand, and m2's partition, now
// m1's, meanwhile.
func TestEveryMemberPausesFromItsOwnHandler(t *testing.T) {
	for _, capture := range []string{
		"v1.10.0-handler-pause-member-leaves-1796643448.log.gz",
		"v1.10.1-handler-pause-member-leaves-1796643386.log.gz",
	} {
		t.Run(capture, func(t *testing.T) {
			pauses, resumes := map[string]int{}, map[string]int{}
			var m1Paused string // the partition m1 paused, while paused
			var m1During, m2sAfterLeave int
			var m2Part string
			m2Left := false
			var summary string
			eachCaptureLine(t, "2026-12-07-every-member/"+capture, func(l string) {
				m := lineField(l, "member")
				switch {
				case strings.HasPrefix(l, "pause topic=stranded partition="):
					pauses[m]++
					if m == "m1" {
						m1Paused = lineField(l, "partition")
					} else {
						m2Part = lineField(l, "partition")
					}
				case strings.HasPrefix(l, "resume topic=stranded partition="):
					resumes[m]++
					if m == "m1" {
						m1Paused = ""
					}
				case strings.HasPrefix(l, "member member=m2 event=left"):
					m2Left = true
				case strings.HasPrefix(l, "delivered topic=stranded ") && m == "m1":
					p := lineField(l, "partition")
					if p == m1Paused {
						m1During++
					}
					if m2Left && p == m2Part {
						m2sAfterLeave++
					}
				case strings.HasPrefix(l, "summary "):
					summary = l
				}
			})
			if pauses["m1"] != 1 || pauses["m2"] != 1 {
				t.Fatalf("pauses by member %v: each member pauses from its own handler once", pauses)
			}
			if resumes["m1"] != 1 || resumes["m2"] != 0 {
				t.Errorf("resumes by member %v: m1's once, none of m2, which left before its resume was due", resumes)
			}
			if m1During > 1 {
				t.Errorf("m1 delivered %d records of its paused partition before its resume (at most the one in hand)", m1During)
			}
			if m2sAfterLeave == 0 {
				t.Errorf("m1 delivered nothing of m2's partition (%s) once m2 left", m2Part)
			}
			if !strings.Contains(summary, " undelivered=- ") {
				t.Errorf("records left undelivered: %s", summary)
			}
		})
	}
}

// lineField is the value of key k in one of scenario.js's key=value lines ("" when absent).
func lineField(l, k string) string {
	for _, f := range strings.Fields(l) {
		if v, ok := strings.CutPrefix(f, k+"="); ok {
			return v
		}
	}
	return ""
}

// byM1 reports whether an application line is m1's: its member named, or none (the
// captures before each member ran its own application name none: m1 alone paused).
func byM1(l string) bool { m := lineField(l, "member"); return m == "" || m == "m1" }

// eachCaptureLine calls fn with each line of the capture, in order.
func eachCaptureLine(t *testing.T, name string, fn func(l string)) {
	t.Helper()
	sc := bufio.NewScanner(openCapture(t, name))
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
