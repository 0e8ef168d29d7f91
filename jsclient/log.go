package jsclient

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Log is what a run of scenario.js (default logger) said about its records: the
// delivery lines, the records it produced and the group's committed offsets it read
// back at the end of each phase. The client's own log lines are not read here (trace
// parse reads them).
type Log struct {
	// Client is the release that ran, from the scenario line (client=1.10.1; 0.x's
	// package.json spells it v0.2.1, read as 0.2.1).
	Client string
	// Delivered: partition -> offset -> times delivered.
	Delivered map[int32]map[int64]int
	// Produced: partition -> phase-1 records (one transaction, offsets 0..n-1 on the
	// run's fresh topic: the transaction's commit marker takes offset n).
	Produced map[int32]int
	// Committed: partition -> the group's committed offset at the end of each phase
	// (-1: none), as scenario.js's admin client fetched it.
	Committed map[int32][]int64
	// High: partition -> its high watermark at the last probe.
	High map[int32]int64
	// Phase2: partitions that got phase 2's record.
	Phase2 map[int32]bool
	// FirstServed: the partitions with a phase-1 record delivered, in the order of
	// their first delivery (before the first phase-2 produce line). The JS client's
	// cache hands partitions to its workers in the order their records arrived
	// (_consumer_cache.js of 1.10.0 and 1.10.1: #add, 136-142, puts a partition last
	// in #availablePartitions; #assignNewPartition, 108-109, takes the first), and the
	// records arrive in librdkafka's fetch-list order: this is that order, less the
	// partitions whose records were dropped before any was delivered.
	FirstServed []int32
	// ByMember: member (m1, m2, ...) -> the distinct records it delivered, from the
	// delivery lines that name one (a run of two members or more).
	ByMember map[string]int
	// Phase2Served: the partitions with their phase-2 record delivered, in the order of
	// its delivery. In phase 2 each partition's one record reaches the cache in the order
	// librdkafka's queue holds it (records produced one partition per ProduceRequest,
	// carried by the waiting consumer's fetches as they come: simkafka.Client.Append),
	// and the workers take the partitions in that order (#assignNewPartition): this is
	// that order, less the partitions whose record a second cache expiry dropped.
	Phase2Served []int32
}

var (
	deliveredRE = regexp.MustCompile(DeliveredPattern)
	fieldRE     = regexp.MustCompile(`(\w+)=(\S*)`)
	lineRE      = regexp.MustCompile(`^(scenario|produced|committed) `)
	memberRE    = regexp.MustCompile(` member=(\S+)$`)
)

// ParseLog reads scenario.js's default-logger output.
func ParseLog(r io.Reader) (*Log, error) {
	l := &Log{Delivered: map[int32]map[int64]int{}, Produced: map[int32]int{}, Committed: map[int32][]int64{},
		High: map[int32]int64{}, Phase2: map[int32]bool{}, ByMember: map[string]int{}}
	type delivery struct {
		member string
		p      int32
		o      int64
	}
	seen := map[delivery]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	phase2 := false // a phase-2 record was produced
	for sc.Scan() {
		n++
		line := sc.Text()
		if m := deliveredRE.FindStringSubmatch(line); m != nil {
			p, _ := strconv.ParseInt(m[2], 10, 32)
			o, _ := strconv.ParseInt(m[3], 10, 64)
			if l.Delivered[int32(p)] == nil {
				l.Delivered[int32(p)] = map[int64]int{}
				if !phase2 {
					l.FirstServed = append(l.FirstServed, int32(p))
				}
			}
			l.Delivered[int32(p)][o]++
			if mm := memberRE.FindStringSubmatch(line); mm != nil {
				d := delivery{mm[1], int32(p), o}
				if !seen[d] {
					seen[d] = true
					l.ByMember[d.member]++
				}
			}
			// a record past phase 1's transaction and its commit marker is phase 2's
			if n, ok := l.Produced[int32(p)]; ok && o > int64(n) && l.Delivered[int32(p)][o] == 1 &&
				!slices.Contains(l.Phase2Served, int32(p)) {
				l.Phase2Served = append(l.Phase2Served, int32(p))
			}
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := map[string]string{}
		for _, kv := range fieldRE.FindAllStringSubmatch(line, -1) {
			f[kv[1]] = kv[2]
		}
		num := func(k string) (int64, error) {
			v, err := strconv.ParseInt(f[k], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("scenario.js line %d: %s=%q: %v", n, k, f[k], err)
			}
			return v, nil
		}
		switch m[1] {
		case "scenario":
			l.Client = strings.TrimPrefix(f["client"], "v")
		case "produced":
			p, err := num("partition")
			if err != nil {
				return nil, err
			}
			if f["phase"] == "2" {
				phase2 = true
				l.Phase2[int32(p)] = true
				continue
			}
			c, err := num("count")
			if err != nil {
				return nil, err
			}
			l.Produced[int32(p)] += int(c)
		case "committed":
			p, err := num("partition")
			if err != nil {
				return nil, err
			}
			o, err := num("offset")
			if err != nil {
				return nil, err
			}
			h, err := num("high")
			if err != nil {
				return nil, err
			}
			l.Committed[int32(p)] = append(l.Committed[int32(p)], o)
			l.High[int32(p)] = h
		}
	}
	return l, sc.Err()
}

// Records are partition p's record offsets: phase 1's transaction (0..n-1; its commit
// marker is offset n) and, when phase 2 wrote one, the record just below the high
// watermark (n+1). scenario.js writes to a topic fresh for the run, so the offsets follow
// from what it produced; a marker is never counted as a record.
func (l *Log) Records(p int32) []int64 {
	n := l.Produced[p]
	rs := make([]int64, 0, n+1)
	for o := 0; o < n; o++ {
		rs = append(rs, int64(o))
	}
	if l.Phase2[p] && l.High[p] > int64(n)+1 {
		rs = append(rs, l.High[p]-1)
	}
	return rs
}
