package eachbatch

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
)

// The cache shares arrays: a partition that holds nothing takes its run of a fetch in
// place, batches are slices of the FIFO, contents lists the FIFOs themselves. On random
// fetches, takes, returns, stale marks and clears, every batch and every list still
// holds the records it was given, and each FIFO holds what a cache that copies would
// hold.
func TestSharedArraysKeepEveryBatchAndListAsGiven(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	tp := func(p int) kpart.TopicPartition { return kpart.TopicPartition{Topic: "t", Partition: int32(p)} }
	for round := 0; round < 300; round++ {
		c := newCache()
		want := map[kpart.TopicPartition][]Record{} // what a copying FIFO holds
		next := map[int]int64{}
		type held struct {
			recs, want []Record
		}
		var kept []held
		var workers [3]*ppc
		for step := 0; step < 60; step++ {
			switch op := rng.Intn(10); {
			case op < 4: // a fetch: runs of a few partitions
				var rs []Record
				for r := rng.Intn(4); r >= 0; r-- {
					p := rng.Intn(3)
					for n := 1 + rng.Intn(5); n > 0; n-- {
						rs = append(rs, Record{TopicPartition: tp(p), Offset: next[p]})
						next[p]++
					}
				}
				for _, r := range rs {
					want[r.TopicPartition] = append(want[r.TopicPartition], r)
				}
				c.addMessages(rs)
				kept = append(kept, held{rs, slices.Clone(rs)})
			case op < 7: // a worker takes a batch
				w := rng.Intn(len(workers))
				recs, p := c.nextN(workers[w], 1+rng.Intn(4))
				workers[w] = p
				if recs == nil {
					continue
				}
				q := recs[0].TopicPartition
				if !slices.Equal(recs, want[q][:len(recs)]) {
					t.Fatalf("round %d step %d: took %v, the FIFO held %v", round, step, recs, want[q])
				}
				want[q] = want[q][len(recs):]
				kept = append(kept, held{recs, slices.Clone(recs)})
				if rng.Intn(3) == 0 { // #returnMessages: back to the head
					c.returnMessages(recs)
					want[q] = append(slices.Clone(recs), want[q]...)
				}
			case op < 8: // contents, then a stale mark of one partition
				for q, recs := range c.contents() {
					kept = append(kept, held{recs, slices.Clone(recs)})
					if !slices.Equal(recs, want[q]) {
						t.Fatalf("round %d step %d: contents %v, want %v", round, step, recs, want[q])
					}
				}
				q := tp(rng.Intn(3))
				c.markStale([]kpart.TopicPartition{q})
				delete(want, q)
			case op < 9:
				c.clear()
				want = map[kpart.TopicPartition][]Record{}
			default: // a worker gives its partition back
				w := rng.Intn(len(workers))
				c.giveBack(workers[w])
				workers[w] = nil
			}
			for i, h := range kept {
				if !slices.Equal(h.recs, h.want) {
					t.Fatalf("round %d step %d: list %d changed: %v, was %v", round, step, i, h.recs, h.want)
				}
			}
			size := 0
			for _, recs := range want {
				size += len(recs)
			}
			if size != c.size {
				t.Fatalf("round %d step %d: size %d, want %d (%s)", round, step, c.size, size, fmt.Sprint(want))
			}
		}
	}
}
