// Package verdict is the one set of words kstranded uses to judge a partition, a run or
// a group, in every command and every output format. A state has one word: records
// committed past but never delivered are LOST (never "LOSS"), records not delivered and
// not yet committed past are STRANDED (never "PENDING").
//
// It is a leaf: it says nothing about exit codes (internal/exitcode maps verdicts to
// codes) nor about colours (internal/render styles them).
package verdict

// Verdict is the outcome for a partition (or, as the worst of its partitions, a run).
type Verdict string

// The verdicts, from best to worst as Worse orders them.
const (
	OK         Verdict = "OK"          // every record the evidence covers was delivered
	NoEvidence Verdict = "NO EVIDENCE" // the evidence does not speak about this partition
	// NoCommitEvidence: deliveries are known but not the committed offset, so nothing
	// says whether what was not delivered is lost, stranded or still to come.
	NoCommitEvidence Verdict = "NO COMMIT EVIDENCE"
	// NoRecordEvidence: the committed offset passed undelivered offsets whose contents
	// nothing gives (no read of the partition, no fetch line): records or markers, lost
	// or not, is unknown. Never OK.
	NoRecordEvidence Verdict = "NO RECORD EVIDENCE"
	Incomplete       Verdict = "INCOMPLETE" // the judgement stopped before it could cover the partition
	Error            Verdict = "ERROR"      // the partition could not be read
	Stranded         Verdict = "STRANDED"   // records never delivered, not yet committed past
	Lost             Verdict = "LOST"       // records below the committed offset never delivered
)

var rank = map[Verdict]int{OK: 0, NoEvidence: 1, NoCommitEvidence: 2, NoRecordEvidence: 3, Incomplete: 4, Error: 5, Stranded: 6, Lost: 7}

// Worse returns the worse of a and b: LOST over STRANDED over the verdicts that judge
// nothing over OK. An unknown word ranks with ERROR.
func Worse(a, b Verdict) Verdict {
	ra, ok := rank[a]
	if !ok {
		ra = rank[Error]
	}
	rb, ok := rank[b]
	if !ok {
		rb = rank[Error]
	}
	if rb > ra {
		return b
	}
	return a
}

// Judged reports whether v is a judgement of records (OK, STRANDED or LOST) rather than
// a statement that no judgement could be made.
func (v Verdict) Judged() bool { return v == OK || v == Stranded || v == Lost }

func (v Verdict) String() string { return string(v) }
