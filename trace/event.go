package trace

import (
	"fmt"
	"time"

	"github.com/kstranded/kstranded/internal/kpart"
)

// Kind is what a normalized event says happened.
type Kind uint8

// The event kinds every parser maps its lines to.
const (
	KindNone       Kind = iota
	KindFetch           // records fetched into the client (Ranges; Count when offsets are partly known)
	KindPosition        // the fetch position was observed (Offset)
	KindEmptyFetch      // a fetch returned no records (Count repetitions)
	KindEmptyRead       // a read of the client's cache returned nothing (Count repetitions)
	KindDeliver         // records handed to the handler (Ranges, or Count/Remaining when offsets are unknown)
	KindStore           // an offset was stored for commit (Offset)
	KindCommit          // a commit completed (Offset)
	KindCommitFail      // a commit failed (Offset, Reason)
	KindExpiry          // the client's cache expired (SinceFetch, SinceServe, Timeout when known)
	KindClear           // the cache was cleared (Ranges discarded when known, Keys = last-consumed keys)
	KindRewind          // a rewind after a clear was done (Offset when known)
	KindRewindSkip      // a rewind after a clear was skipped (Reason; Count partitions when aggregated)
	KindSeek            // the fetch position was moved (Offset, Reason)
	KindAssign          // the partition was assigned
	KindRevoke          // the partition was revoked or lost (Reason)
	KindPause           // fetching paused
	KindResume          // fetching resumed
	KindMaxPoll         // max.poll.interval.ms was exceeded (Timeout = the interval)
	KindSetting         // a configuration value (Name = key, Reason = value)
	KindCounter         // a summary count line (Name, Count)
	KindNote            // any other recognised event, kept for the timeline (Name, Reason)
)

var kindNames = [...]string{
	KindNone: "none", KindFetch: "fetch", KindPosition: "position", KindEmptyFetch: "empty-fetch",
	KindEmptyRead: "empty-read", KindDeliver: "deliver", KindStore: "store", KindCommit: "commit",
	KindCommitFail: "commit-failed", KindExpiry: "expiry", KindClear: "clear", KindRewind: "rewind",
	KindRewindSkip: "rewind-skipped", KindSeek: "seek", KindAssign: "assign", KindRevoke: "revoke",
	KindPause: "pause", KindResume: "resume", KindMaxPoll: "max-poll-exceeded", KindSetting: "setting",
	KindCounter: "counter", KindNote: "note",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// AllPartitions marks an event that concerns every partition (or an unknown one).
const AllPartitions int32 = -1

// Unknown marks an unknown offset, count or duration.
const Unknown = -1

// Ref points at the line that is the evidence for an event.
type Ref struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func (r Ref) String() string {
	if r.Line == 0 { // not a line of a file: a live read (AddLiveCommits)
		return r.File
	}
	return fmt.Sprintf("%s:%d", r.File, r.Line)
}

// Event is one normalized event. Only the fields that matter for its Kind are set;
// numeric fields not known are Unknown.
type Event struct {
	Time      time.Time
	Timed     bool // Time comes from the line itself (not inherited from an earlier line)
	Kind      Kind
	Topic     string
	Partition int32
	Ranges    []kpart.Range
	Offset    int64
	Count     int
	Remaining int
	Ctrl      int // control records (transaction markers) at the end of a fetched range
	// durations, Unknown when not carried by the line
	SinceFetch, SinceServe, Timeout time.Duration
	Name                            string // the source's own event name
	Reason                          string
	Keys                            []string
	KeysKnown                       bool
	Ref                             Ref
}

func newEvent(k Kind) Event {
	return Event{Kind: k, Partition: AllPartitions, Offset: Unknown, Count: Unknown, Remaining: Unknown,
		SinceFetch: Unknown, SinceServe: Unknown, Timeout: Unknown}
}
