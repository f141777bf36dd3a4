package router

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Property: liveCounts keeps exact counts, against a Go map, for dense and hashed keys, through
// counters that saturate their 8 bits and come back down, and reports exactly the transitions
// between held and not held.
func TestLiveCountsAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dense := range []int{0, 8, 64} {
		var l liveCounts
		l.reset(dense)
		want := map[uint64]int{}
		check := func(k uint64) {
			if got := l.live(k); got != (want[k] > 0) {
				t.Fatalf("dense %d key %d: live %v with %d holders", dense, k, got, want[k])
			}
		}
		// A key past the 8-bit counter: up over the saturation point and back to zero.
		for _, k := range []uint64{3, 40} {
			for n := 0; n < math.MaxUint8+10; n++ {
				if became := l.inc(k); became != (n == 0) {
					t.Fatalf("dense %d key %d inc %d: became live %v", dense, k, n, became)
				}
				want[k]++
			}
			for n := math.MaxUint8 + 10; n > 0; n-- {
				if gone := l.dec(k); gone != (n == 1) {
					t.Fatalf("dense %d key %d dec at %d holders: gone %v", dense, k, n, gone)
				}
				want[k]--
			}
			check(k)
		}
		for range 20000 {
			k := uint64(rng.IntN(100))
			if want[k] > 0 && rng.IntN(2) == 0 {
				gone := l.dec(k)
				want[k]--
				if gone != (want[k] == 0) {
					t.Fatalf("dense %d key %d: dec reported gone %v with %d left", dense, k, gone, want[k])
				}
			} else {
				became := l.inc(k)
				want[k]++
				if became != (want[k] == 1) {
					t.Fatalf("dense %d key %d: inc reported became %v at %d", dense, k, became, want[k])
				}
			}
			check(k)
		}
		for k := range uint64(100) {
			check(k)
		}
	}
}
