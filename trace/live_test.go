package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/verdict"
)

func TestLiveCommitsSettleAPartitionTheLogsNeverSawCommitted(t *testing.T) {
	cases := []struct {
		name    string
		commits []LiveCommit
		want    verdict.Verdict
		lost    string
	}{
		{"without a commit the seed trace judges nothing", nil, verdict.NoCommitEvidence, "-"},
		{"the group committed past the discarded records: they are lost", []LiveCommit{{"stranded", 0, 202}}, verdict.Lost, "82-199"},
		{"the group still at 82: the discarded records are stranded", []LiveCommit{{"stranded", 0, 82}}, verdict.Stranded, "-"},
		{"a commit on a partition the logs never name completes nothing", []LiveCommit{{"stranded", 5, 202}}, verdict.NoCommitEvidence, "-"},
		{"topicless partitions take no commit when the group has several topics", []LiveCommit{{"stranded", 0, 202}, {"other", 0, 5}}, verdict.NoCommitEvidence, "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAnalyzer(Options{})
			fh, err := os.Open(filepath.Join("testdata", "kafkajs-seed.trace"))
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			if _, err := a.Parse("kafkajs-seed.trace", fh, FormatAuto); err != nil {
				t.Fatal(err)
			}
			a.AddLiveCommits(tc.commits, "group g, read live")
			r := a.Finish()
			if len(r.Partitions) != 1 {
				t.Fatalf("partitions %+v", r.Partitions)
			}
			p := r.Partitions[0]
			if p.Verdict != tc.want || r.Verdict != tc.want || kpart.RangeSet(p.Lost).String() != tc.lost {
				t.Fatalf("partition verdict %s, report %s, lost %s; want %s, lost %s", p.Verdict, r.Verdict, p.Lost, tc.want, tc.lost)
			}
			if tc.want != verdict.NoCommitEvidence {
				found := false
				for _, e := range r.Timeline {
					if e.Ref.File == "group g, read live" && strings.Contains(e.Detail, "read live") {
						found = true
					}
				}
				if !found {
					t.Error("the live commit is not marked in the timeline")
				}
			}
		})
	}
}
