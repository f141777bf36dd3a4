package blockmap

import (
	"math/rand/v2"
	"testing"
)

// Property: a Table holds exactly what a Go map holds (zero values dropped) after any sequence of
// pointer updates, deletes, cleans and resets, whatever its dense bound or ring size: keys below
// the bound, above it, and far above it (the map part), keys sharing a ring slot, all behave
// alike.
func TestTableMatchesGoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 80; trial++ {
		var tb Table[int32]
		bound := rng.IntN(64)
		ring := trial%2 == 1 // odd trials: a ring of 1 to 32 slots instead of a dense part
		reset := func() {
			if ring {
				tb.ResetRing(1 + rng.IntN(32))
				bound = 0
			} else {
				tb.Reset(bound)
			}
		}
		reset()
		ref := map[uint64]int32{}
		for op := 0; op < 4000; op++ {
			k := rng.Uint64N(128)
			switch rng.IntN(16) {
			case 0, 1:
				k |= 1 << 63
			case 2:
				k = 1<<32 - 1 - k%2 // the largest keys a ring slot can and cannot hold
			}
			if rng.IntN(1500) == 0 {
				bound = rng.IntN(64)
				reset()
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
