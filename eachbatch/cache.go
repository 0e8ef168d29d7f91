package eachbatch

import "github.com/kstranded/kstranded/internal/kpart"

// cache mirrors MessageCache and PerPartitionMessageCache of confluent-kafka-javascript
// (lib/kafkajs/_consumer_cache.js): one FIFO of records per partition, partitions moving
// between an "available" list and an "assigned" list (held by a worker while it serves
// a batch from it). A partition whose FIFO runs dry while a worker asks for more is
// removed from the cache.
type cache struct {
	ppcs      map[kpart.TopicPartition]*ppc
	available []*ppc // FIFO of partitions a worker may take
	assigned  map[*ppc]struct{}
	size      int
	// releaseShort is 1.0.0's nextN: a batch shorter than asked removes its partition at
	// once (policies V1_0_0 and V0_2_0).
	releaseShort bool
}

type ppc struct {
	tp       kpart.TopicPartition
	recs     []Record
	assigned bool
	removed  bool
}

func newCache() *cache {
	c := &cache{}
	c.reinit()
	return c
}

func (c *cache) reinit() {
	c.ppcs = map[kpart.TopicPartition]*ppc{}
	c.available = nil
	c.assigned = map[*ppc]struct{}{}
	c.size = 0
}

// add appends (or prepends) one record; it reports whether a new partition became
// available, which is when the JS cache calls notifyAvailablePartitions.
func (c *cache) add(r Record, head bool) (newPartition bool) {
	p := c.ppcs[r.TopicPartition]
	if p == nil {
		p = &ppc{tp: r.TopicPartition}
		c.ppcs[r.TopicPartition] = p
		c.available = append(c.available, p)
		newPartition = true
	}
	if head {
		p.recs = append([]Record{r}, p.recs...)
	} else {
		p.recs = append(p.recs, r)
	}
	return newPartition
}

// addMessages is MessageCache.addMessages.
func (c *cache) addMessages(rs []Record) (newPartition bool) {
	// Record by record, as MessageCache.addMessages, but each run of one partition's
	// records is appended at once (one growth of its FIFO, not one a record), and a
	// partition that holds nothing takes the run in place: the fetch's own array,
	// capped, so that appending to the FIFO copies rather than overwrites the next
	// run (a copy of every fetched record was a quarter of the allocations of 10^6
	// records; issue 25). Records are never changed in place, so the array may be
	// shared by the FIFO, the batches served from it and the fetch.
	for i := 0; i < len(rs); {
		tp := rs[i].TopicPartition
		j := i + 1
		for j < len(rs) && rs[j].TopicPartition == tp {
			j++
		}
		p := c.ppcs[tp]
		if p == nil {
			p = &ppc{tp: tp}
			c.ppcs[tp] = p
			c.available = append(c.available, p)
			newPartition = true
		}
		if len(p.recs) == 0 {
			p.recs = rs[i:j:j]
		} else {
			p.recs = append(p.recs, rs[i:j]...)
		}
		i = j
	}
	c.size += len(rs)
	return newPartition
}

// returnMessages is MessageCache.returnMessages: records go back to the head, in order.
func (c *cache) returnMessages(rs []Record) (newPartition bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		if c.add(rs[i], true) {
			newPartition = true
		}
	}
	c.size += len(rs)
	return newPartition
}

func (c *cache) assignNew() *ppc {
	if len(c.available) == 0 {
		return nil
	}
	p := c.available[0]
	c.available = c.available[1:]
	p.assigned = true
	c.assigned[p] = struct{}{}
	return p
}

func (c *cache) removeEmpty(p *ppc) {
	delete(c.assigned, p)
	p.assigned = false
	p.removed = true
	if c.ppcs[p.tp] == p {
		delete(c.ppcs, p.tp)
	}
}

// nextN is MessageCache.nextN: up to n records (n < 0: all) from the worker's own
// partition if it still holds one, else from a newly assigned partition. nil when no
// partition is available.
func (c *cache) nextN(p *ppc, n int) ([]Record, *ppc) {
	for {
		if p == nil || !p.assigned {
			p = c.assignNew()
		}
		if p == nil {
			return nil, nil
		}
		k := len(p.recs)
		if n >= 0 && n < k {
			k = n
		}
		if k == 0 {
			c.removeEmpty(p)
			p = nil
			continue
		}
		// The batch shares the FIFO's array (capped: an append to it copies); the
		// FIFO only appends past its end, never writes before it.
		out := p.recs[:k:k]
		p.recs = p.recs[k:]
		c.size -= k
		if c.releaseShort && (n < 0 || k < n) {
			// 1.0.0: `if (size === -1 || nextN.length < size) this.#removeEmptyPartition(ppc)`
			c.removeEmpty(p)
		}
		return out, p
	}
}

// giveBack is MessageCache.return: a worker that stops hands its partition back.
func (c *cache) giveBack(p *ppc) (notify bool) {
	if p == nil || !p.assigned {
		return false
	}
	delete(c.assigned, p)
	p.assigned = false
	c.available = append(c.available, p)
	return true
}

// markStale is MessageCache.markStale: drop the partitions' cached records.
func (c *cache) markStale(tps []kpart.TopicPartition) {
	for _, tp := range tps {
		p := c.ppcs[tp]
		if p == nil {
			continue
		}
		c.size -= len(p.recs)
		if p.assigned {
			delete(c.assigned, p)
		} else {
			for i, a := range c.available {
				if a == p {
					c.available = append(c.available[:i:i], c.available[i+1:]...)
					break
				}
			}
		}
		delete(c.ppcs, tp)
		p.assigned = false
	}
}

// clear is MessageCache.clear: everything cached is dropped.
func (c *cache) clear() {
	for _, p := range c.ppcs {
		p.assigned = false
	}
	c.reinit()
}

func (c *cache) assignedSize() int { return len(c.assigned) }

// contents lists what each partition still holds (for the trace and the head policy).
// The lists share the FIFOs' arrays (capped), records being never changed in place:
// read them, do not append to them.
func (c *cache) contents() map[kpart.TopicPartition][]Record {
	out := map[kpart.TopicPartition][]Record{}
	for tp, p := range c.ppcs {
		if len(p.recs) > 0 {
			out[tp] = p.recs[:len(p.recs):len(p.recs)]
		}
	}
	return out
}
