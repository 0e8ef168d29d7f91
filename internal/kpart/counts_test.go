package kpart

import (
	"math/rand"
	"reflect"
	"testing"
)

// Counts agrees with a map of offsets on random dense, sparse and negative offsets.
func TestCountsAgreeWithAMap(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	for i := 0; i < 200; i++ {
		var c Counts
		want := map[int64]int{}
		base := []int64{0, -5000, 1 << 40, rng.Int63n(1 << 50)}[i%4]
		span := int64(1 + rng.Intn(20_000))
		for j := 0; j < rng.Intn(5000); j++ {
			o := base + rng.Int63n(span)
			c.Inc(o)
			want[o]++
		}
		if !reflect.DeepEqual(c.Map(), want) || c.Len() != len(want) {
			t.Fatalf("case %d: %d offsets counted, want %d", i, c.Len(), len(want))
		}
		for j := 0; j < 100; j++ {
			o := base + rng.Int63n(span+100) - 50
			if c.Get(o) != want[o] {
				t.Fatalf("case %d: Get(%d) = %d, want %d", i, o, c.Get(o), want[o])
			}
		}
	}
	var nilc *Counts
	if nilc.Get(3) != 0 || nilc.Len() != 0 || len(nilc.Map()) != 0 {
		t.Fatal("a nil Counts is not empty")
	}
}

// Merge, Clone and Ranges agree with the map-based results (a sum of maps, Runs of the
// map's offsets, the counts beyond the first) on random dense, sparse and negative
// offsets.
func TestCountsMergeAndRangesAgreeWithMaps(t *testing.T) {
	rng := rand.New(rand.NewSource(251))
	fill := func(c *Counts, m map[int64]int, base, span int64) {
		for j := 0; j < rng.Intn(4000); j++ {
			o := base + rng.Int63n(span)
			if rng.Intn(3) == 0 {
				o = base + rng.Int63n(span)/100 // repeats
			}
			c.Inc(o)
			m[o]++
		}
	}
	for i := 0; i < 200; i++ {
		base := []int64{0, -3000, 1 << 40, rng.Int63n(1 << 50)}[i%4]
		span := int64(1 + rng.Intn(10_000))
		var a, b Counts
		ma, mb := map[int64]int{}, map[int64]int{}
		fill(&a, ma, base, span)
		fill(&b, mb, base+rng.Int63n(span), span)
		before := b.Map()
		c := a.Clone()
		c.Merge(&b)
		want := map[int64]int{}
		for o, n := range ma {
			want[o] += n
		}
		for o, n := range mb {
			want[o] += n
		}
		if !reflect.DeepEqual(c.Map(), want) || c.Len() != len(want) {
			t.Fatalf("case %d: merge counted %d offsets, want %d", i, c.Len(), len(want))
		}
		if !reflect.DeepEqual(a.Map(), ma) || !reflect.DeepEqual(b.Map(), before) {
			t.Fatalf("case %d: Clone or Merge changed its operand", i)
		}
		offs := make([]int64, 0, len(want))
		var dup int64
		for o, n := range want {
			offs = append(offs, o)
			dup += int64(n - 1)
		}
		var runs RangeSet
		for _, r := range Runs(offs) {
			runs = append(runs, r.Range)
		}
		rs, d := c.Ranges()
		if !reflect.DeepEqual(rs, runs) || d != dup {
			t.Fatalf("case %d: Ranges = %s, %d duplicates; want %s, %d", i, rs, d, runs, dup)
		}
	}
	var nilc *Counts
	if rs, d := nilc.Ranges(); rs != nil || d != 0 || nilc.Clone().Len() != 0 {
		t.Fatal("a nil Counts has ranges")
	}
	var c Counts
	c.Merge(nil)
	if c.Len() != 0 {
		t.Fatal("merging nil counted offsets")
	}
}
