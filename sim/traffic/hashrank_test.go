package traffic

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomHashRows returns n rows of up to 20 hash ids each, drawn from spread distinct values
// starting at base (spread 1 << 63 gives sparse 64-bit ids).
func randomHashRows(rng *rand.Rand, n int, base, spread uint64) []TraceRow {
	rows := make([]TraceRow, n)
	for i := range rows {
		ids := make([]uint64, rng.IntN(21))
		for k := range ids {
			ids[k] = base + rng.Uint64N(spread)
		}
		rows[i] = TraceRow{Line: i + 1, HashIDs: ids}
	}
	return rows
}

// A hash id's token is its index among the distinct ids in sorted order, in the bitmap form
// (ids in a narrow range, also near 2^64) and in the sorted form (sparse ids) alike.
func TestHashRanksAreSortedIndices(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name         string
		base, spread uint64
		bitmap       bool
	}{
		{"dense from 0", 0, 300, true},
		{"dense, high base", 1<<40 + 17, 500, true},
		{"dense near 2^64", 1<<64 - 1000, 1000, true},
		{"one id", 42, 1, true},
		{"sparse", 0, 1 << 63, false},
		{"sparse, wide range", 5, 1 << 20, false},
	} {
		for trial := range 20 {
			rows := randomHashRows(rng, 1+rng.IntN(200), c.base, c.spread)
			var all []uint64
			for _, r := range rows {
				all = append(all, r.HashIDs...)
			}
			slices.Sort(all)
			uniq := slices.Compact(all)
			r := newHashRanks(rows)
			if len(uniq) > 0 && (r.bits != nil) != c.bitmap {
				t.Fatalf("%s: bitmap form %v, want %v", c.name, r.bits != nil, c.bitmap)
			}
			if r.distinct != len(uniq) {
				t.Fatalf("%s trial %d: %d distinct, want %d", c.name, trial, r.distinct, len(uniq))
			}
			for i, h := range uniq {
				if got := r.token(h); got != uint32(i) {
					t.Fatalf("%s trial %d: id %d has token %d, want %d", c.name, trial, h, got, i)
				}
			}
		}
	}
	if r := newHashRanks([]TraceRow{{Line: 1}}); r.distinct != 0 {
		t.Errorf("no ids: %d distinct", r.distinct)
	}
}
