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
