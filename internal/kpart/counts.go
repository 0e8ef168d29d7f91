package kpart

import "slices"

// Counts counts occurrences of offsets (how many times each record of a partition
// reached a handler) in blocks of countsBlock consecutive offsets: 4 bytes an offset
// of a dense run where a map held about 40, and an increment is an index, not a hash
// (issue 25). Sparse offsets cost one block each. The zero value is empty.
type Counts struct {
	blocks map[int64]*[countsBlock]int32
	last   *[countsBlock]int32 // the block of lastKey: runs of offsets stay in one block
	lastK  int64
	n      int // offsets counted at least once
}

const countsBlock = 1024

func (c *Counts) block(offset int64) *[countsBlock]int32 {
	k := offset >> 10 // an arithmetic shift: negative offsets get blocks of their own
	if c.last != nil && c.lastK == k {
		return c.last
	}
	b := c.blocks[k]
	if b == nil {
		if c.blocks == nil {
			c.blocks = map[int64]*[countsBlock]int32{}
		}
		b = new([countsBlock]int32)
		c.blocks[k] = b
	}
	c.last, c.lastK = b, k
	return b
}

// Inc counts offset once more.
func (c *Counts) Inc(offset int64) {
	b := c.block(offset)
	i := offset & (countsBlock - 1)
	if b[i] == 0 {
		c.n++
	}
	b[i]++
}

// Get returns how many times offset was counted; a nil Counts is empty.
func (c *Counts) Get(offset int64) int {
	if c == nil {
		return 0
	}
	b := c.last
	if b == nil || c.lastK != offset>>10 {
		b = c.blocks[offset>>10]
	}
	if b == nil {
		return 0
	}
	return int(b[offset&(countsBlock-1)])
}

// Len returns how many distinct offsets were counted.
func (c *Counts) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

// Map returns the counts as a map of every offset counted at least once.
func (c *Counts) Map() map[int64]int {
	if c == nil {
		return map[int64]int{}
	}
	m := make(map[int64]int, c.n)
	for k, b := range c.blocks {
		for i, n := range b {
			if n > 0 {
				m[k<<10|int64(i)] = int(n)
			}
		}
	}
	return m
}

// Merge adds o's counts to c (o is not changed; a nil o adds nothing).
func (c *Counts) Merge(o *Counts) {
	if o == nil {
		return
	}
	for k, ob := range o.blocks {
		b := c.blocks[k]
		if b == nil {
			if c.blocks == nil {
				c.blocks = map[int64]*[countsBlock]int32{}
			}
			b = new([countsBlock]int32)
			c.blocks[k] = b
		}
		for i, n := range ob {
			if n == 0 {
				continue
			}
			if b[i] == 0 {
				c.n++
			}
			b[i] += n
		}
	}
}

// Clone returns a copy of c that shares nothing with it.
func (c *Counts) Clone() *Counts {
	out := &Counts{}
	out.Merge(c)
	return out
}

// Ranges returns the offsets counted at least once as numeric runs (any gap splits a
// range), with the counts beyond the first of each offset (duplicates): Runs and a
// sum over Map's values, without a map or a list of every offset.
func (c *Counts) Ranges() (rs RangeSet, duplicates int64) {
	if c == nil {
		return nil, 0
	}
	keys := make([]int64, 0, len(c.blocks))
	for k := range c.blocks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b := c.blocks[k]
		for i := 0; i < countsBlock; i++ {
			n := b[i]
			if n == 0 {
				continue
			}
			duplicates += int64(n - 1)
			o := k<<10 | int64(i)
			if l := len(rs); l > 0 && rs[l-1].Last+1 == o {
				rs[l-1].Last = o
				continue
			}
			rs = append(rs, Range{First: o, Last: o})
		}
	}
	return rs, duplicates
}
