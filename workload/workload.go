// Package workload is the records a reproduction writes: how many on which partitions
// (the spread) and in how many transactions. `repro`, `repro produce` and `simulate`
// share it, so a live run and a simulation of the same spec write the same offsets.
//
// Notation (the --spread flag): "12x10" is 10 records on each of partitions 0-11;
// "0:200,3:50" is 200 records on partition 0 and 50 on partition 3. Transactions split
// every partition's records into N consecutive chunks of near-equal size; transaction i
// writes chunk i of every partition, so each partition holds its chunks in order, each
// followed by the transaction's commit marker (which takes an offset and is not a
// record). Zero transactions write plain records, without markers.
//
// It only describes and lays out records; writing them is the caller's business.
package workload

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Part is one partition's share of the workload.
type Part struct {
	Partition int32
	Records   int
}

// Spec is a workload.
type Spec struct {
	Parts        []Part // sorted by partition, each with Records > 0
	Transactions int    // 0: not transactional
}

// MaxRecords bounds a spec's records, so a typo cannot ask for billions.
const MaxRecords = 10_000_000

// Seed is the bug report's workload: 200 records on partition 0 in one transaction.
func Seed() Spec { return Spec{Parts: []Part{{0, 200}}, Transactions: 1} }

// ParseSpread parses the --spread notation.
func ParseSpread(s string) ([]Part, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty spread (want PARTITIONSxRECORDS like 12x10, or P:N,... like 0:200,3:50)")
	}
	if a, b, ok := strings.Cut(s, "x"); ok && !strings.Contains(s, ":") {
		parts, err := positive(a, "partitions")
		if err != nil {
			return nil, err
		}
		n, err := positive(b, "records per partition")
		if err != nil {
			return nil, err
		}
		if parts > 100_000 {
			return nil, fmt.Errorf("%d partitions: at most 100000", parts)
		}
		if parts*n > MaxRecords {
			return nil, fmt.Errorf("%dx%d is %d records: at most %d", parts, n, parts*n, MaxRecords)
		}
		out := make([]Part, parts)
		for i := range out {
			out[i] = Part{Partition: int32(i), Records: n}
		}
		return out, nil
	}
	seen := map[int32]bool{}
	var out []Part
	total := 0
	for _, item := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			return nil, fmt.Errorf("%q: want PARTITION:RECORDS", item)
		}
		p, err := strconv.ParseInt(strings.TrimSpace(a), 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("%q: partition must be an integer >= 0", item)
		}
		n, err := positive(b, "records")
		if err != nil {
			return nil, fmt.Errorf("%q: %w", item, err)
		}
		if seen[int32(p)] {
			return nil, fmt.Errorf("partition %d given twice", p)
		}
		seen[int32(p)] = true
		total += n
		if total > MaxRecords {
			return nil, fmt.Errorf("more than %d records", MaxRecords)
		}
		out = append(out, Part{Partition: int32(p), Records: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out, nil
}

func positive(s, what string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s %q: want an integer > 0", what, strings.TrimSpace(s))
	}
	if n > MaxRecords {
		return 0, fmt.Errorf("%s %d: at most %d", what, n, MaxRecords)
	}
	return n, nil
}

// Flags are the workload flags as given on a command line; the Set fields say which
// the user gave (defaults are the seed's).
type Flags struct {
	Spread          string
	Records         int
	Partition       int32
	Transactions    int
	SpreadSet       bool
	RecordsSet      bool
	PartitionSet    bool
	TransactionsSet bool
}

// UsageError is a contradictory or malformed workload; its message names the flags.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Resolve turns the flags into a spec: --spread, or the one-partition shorthand
// --records/--partition; never both.
func (f Flags) Resolve() (Spec, error) {
	s := Spec{Transactions: 1}
	if f.TransactionsSet {
		if f.Transactions < 0 {
			return Spec{}, usagef("--transactions must be >= 0 (0: not transactional)")
		}
		s.Transactions = f.Transactions
	}
	switch {
	case f.SpreadSet && f.RecordsSet:
		return Spec{}, usagef("--spread and --records contradict each other: --spread gives the records per partition (use one)")
	case f.SpreadSet && f.PartitionSet:
		return Spec{}, usagef("--spread and --partition contradict each other: --spread names the partitions (use one)")
	case f.SpreadSet:
		parts, err := ParseSpread(f.Spread)
		if err != nil {
			return Spec{}, usagef("--spread: %v", err)
		}
		s.Parts = parts
	default:
		if f.Records <= 0 {
			return Spec{}, usagef("--records must be > 0")
		}
		if f.Records > MaxRecords {
			return Spec{}, usagef("--records must be at most %d", MaxRecords)
		}
		if f.Partition < 0 {
			return Spec{}, usagef("--partition must be >= 0")
		}
		s.Parts = []Part{{f.Partition, f.Records}}
	}
	for _, p := range s.Parts {
		if s.Transactions > p.Records {
			return Spec{}, usagef("--transactions %d is more than the %d records of partition %d (each transaction writes at least one record to every partition)",
				s.Transactions, p.Records, p.Partition)
		}
	}
	return s, nil
}

// Validate checks the spec against the topic's partition count.
func (s Spec) Validate(partitions int32) error {
	if len(s.Parts) == 0 {
		return usagef("--spread: no partition holds records")
	}
	if s.Transactions < 0 {
		return usagef("--transactions must be >= 0")
	}
	for _, p := range s.Parts {
		if p.Partition >= partitions {
			return usagef("--partitions %d: the workload writes to partition %d (the topic needs at least %d partitions)", partitions, p.Partition, p.Partition+1)
		}
		if s.Transactions > p.Records {
			return usagef("--transactions %d is more than the %d records of partition %d", s.Transactions, p.Records, p.Partition)
		}
	}
	return nil
}

// Total is the number of records.
func (s Spec) Total() int {
	n := 0
	for _, p := range s.Parts {
		n += p.Records
	}
	return n
}

// String is the spec in the --spread notation: "12x10" when every partition from 0
// holds the same count, else "P:N,...".
func (s Spec) String() string {
	uniform := len(s.Parts) > 1
	for i, p := range s.Parts {
		if p.Partition != int32(i) || p.Records != s.Parts[0].Records {
			uniform = false
		}
	}
	if uniform {
		return fmt.Sprintf("%dx%d", len(s.Parts), s.Parts[0].Records)
	}
	items := make([]string, len(s.Parts))
	for i, p := range s.Parts {
		items[i] = fmt.Sprintf("%d:%d", p.Partition, p.Records)
	}
	return strings.Join(items, ",")
}

// Chunks splits n records into the transactions' chunks: near-equal, the larger first.
// Zero transactions is one chunk without a marker.
func Chunks(n, transactions int) []int {
	if transactions <= 0 {
		return []int{n}
	}
	out := make([]int, transactions)
	for i := range out {
		out[i] = n / transactions
		if i < n%transactions {
			out[i]++
		}
	}
	return out
}

// Transaction is what one transaction writes: records per partition, in partition order.
type Transaction []Part

// Layout lays the spec out as the transactions a producer runs, in order. With
// Transactions == 0 it is one group of plain records.
func (s Spec) Layout() []Transaction {
	n := max(s.Transactions, 1)
	out := make([]Transaction, n)
	for _, p := range s.Parts {
		for i, c := range Chunks(p.Records, s.Transactions) {
			if c > 0 {
				out[i] = append(out[i], Part{p.Partition, c})
			}
		}
	}
	return out
}
