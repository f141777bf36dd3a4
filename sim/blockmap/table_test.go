package blockmap

import (
	"math/rand/v2"
	"testing"
)

// Property: a Table holds exactly what a Go map holds (zero values dropped) after any sequence of
// pointer updates, deletes, cleans and resets, whatever its dense bound: keys below the bound,
// above it, and far above it (the map part) all behave alike.
func TestTableMatchesGoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 40; trial++ {
		var tb Table[int32]
		bound := rng.IntN(64)
		tb.Reset(bound)
		ref := map[uint64]int32{}
		for op := 0; op < 4000; op++ {
			k := rng.Uint64N(128)
			if rng.IntN(8) == 0 {
				k |= 1 << 63
			}
			if rng.IntN(1500) == 0 {
				bound = rng.IntN(64)
				tb.Reset(bound)
				clear(ref)
			}
			switch rng.IntN(4) {
			case 0, 1:
				d := int32(rng.IntN(3)) - 1
				*tb.Ptr(k) += d
				tb.Clean(k)
				if ref[k] += d; ref[k] == 0 {
					delete(ref, k)
				}
			case 2:
				tb.Delete(k)
				delete(ref, k)
			default:
				if got := tb.Get(k); got != ref[k] {
					t.Fatalf("trial %d op %d: Get(%#x) = %d, want %d", trial, op, k, got, ref[k])
				}
			}
		}
		if tb.Len() != len(ref) {
			t.Fatalf("trial %d: Len %d, want %d", trial, tb.Len(), len(ref))
		}
		n := 0
		for k, v := range tb.All {
			if ref[k] != v {
				t.Fatalf("trial %d: All yields %#x=%d, want %d", trial, k, v, ref[k])
			}
			n++
		}
		if n != len(ref) {
			t.Fatalf("trial %d: All yields %d keys, want %d", trial, n, len(ref))
		}
		if bound > 0 && tb.m.Len() > 0 {
			for k := range tb.m.All() {
				if k < uint64(bound) {
					t.Fatalf("trial %d: key %d below the dense bound %d is in the map part", trial, k, bound)
				}
			}
		}
	}
}
