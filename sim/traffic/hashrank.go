package traffic

import (
	"math"
	"math/bits"
	"slices"
)

// hashRanks gives each hash id of a trace its token: its index among the trace's distinct hash
// ids in sorted order. Ids that span a range of at most about 4 ids per id held (the usual
// Mooncake numbering, 0, 1, 2, ... in order of first use) are marked in a bitmap over the range
// and ranked by counting the bits below them: about 3 bytes per id held, and no sort. Sparser ids
// (64-bit block hashes) are sorted, deduplicated and ranked by binary search.
type hashRanks struct {
	// lo is the smallest id; bit x of bits is set when id lo+x occurs, and below[w] counts the
	// bits set in bits[:w] (the bitmap form, bits != nil).
	lo    uint64
	bits  []uint64
	below []uint32
	// uniq is the distinct ids in increasing order (the sorted form, bits == nil).
	uniq []uint64
	// distinct is the number of distinct ids.
	distinct int
}

// denseWordsPerID bounds the bitmap form: at most one 64-bit word per 4 ids held, plus
// denseSlackWords, so the bitmap and its counts take at most 3 bytes per id (the sorted form
// copies 8).
const (
	denseWordsPerID = 4
	denseSlackWords = 1024
)

// newHashRanks ranks every hash id of rows (all of them, also those past a row's input length).
func newHashRanks(rows []TraceRow) *hashRanks {
	total := 0
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for i := range rows {
		ids := rows[i].HashIDs
		total += len(ids)
		for _, h := range ids {
			lo, hi = min(lo, h), max(hi, h)
		}
	}
	r := &hashRanks{lo: lo}
	if total == 0 {
		return r
	}
	if words := (hi-lo)/64 + 1; words <= uint64(total/denseWordsPerID+denseSlackWords) {
		r.bits = make([]uint64, words)
		for i := range rows {
			for _, h := range rows[i].HashIDs {
				x := h - lo
				r.bits[x>>6] |= 1 << (x & 63)
			}
		}
		r.below = make([]uint32, words)
		n := 0
		for w, b := range r.bits {
			r.below[w] = uint32(n)
			n += bits.OnesCount64(b)
		}
		r.distinct = n
		return r
	}
	ids := make([]uint64, 0, total)
	for i := range rows {
		ids = append(ids, rows[i].HashIDs...)
	}
	slices.Sort(ids)
	uniq := ids[:0]
	for i, v := range ids {
		if i == 0 || v != ids[i-1] {
			uniq = append(uniq, v)
		}
	}
	r.uniq, r.distinct = uniq, len(uniq)
	return r
}

// token returns the token of hash id h, one of the ids newHashRanks saw.
func (r *hashRanks) token(h uint64) uint32 {
	if r.bits != nil {
		x := h - r.lo
		w := x >> 6
		return r.below[w] + uint32(bits.OnesCount64(r.bits[w]&(1<<(x&63)-1)))
	}
	i, _ := slices.BinarySearch(r.uniq, h)
	return uint32(i)
}
