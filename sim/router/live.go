package router

import (
	"math"

	"github.com/servesweep/servesweep/sim/blockmap"
)

// liveCounts counts, for one slot, how many requests routed there hold each prompt block key
// live (the kv_router's active blocks with assume_reuse), in 8-bit counters: a slice for the
// keys below its dense bound, hashed beyond (blockmap.Table). A counter that would pass
// math.MaxUint8 keeps the excess in extra, so counts are exact at any size. The zero value holds
// nothing and hashes every key.
type liveCounts struct {
	counts blockmap.Table[uint8]
	// extra holds, for a key whose counter is saturated, the part of its count above
	// math.MaxUint8 (present only while it is positive).
	extra blockmap.Map[int32]
}

// reset empties the counts and makes keys below n dense (1 byte each).
func (l *liveCounts) reset(n int) {
	l.counts.Reset(n)
	l.extra.Clear()
}

// resetRing empties the counts and gives them a ring of slots slots instead of a dense part
// (blockmap.Table.ResetRing).
func (l *liveCounts) resetRing(slots int) {
	l.counts.ResetRing(slots)
	l.extra.Clear()
}

// live reports whether some request holds k live.
func (l *liveCounts) live(k uint64) bool { return l.counts.Get(k) != 0 }

// inc counts one more holder of k and reports whether k just became live (it had none).
func (l *liveCounts) inc(k uint64) bool {
	c := l.counts.Ptr(k)
	if *c < math.MaxUint8 {
		*c++
		return *c == 1
	}
	v, _ := l.extra.Upsert(k)
	*v++
	return false
}

// dec counts one holder of k fewer (k must be held) and reports whether k stopped being live.
func (l *liveCounts) dec(k uint64) bool {
	c := l.counts.Ptr(k)
	if *c == math.MaxUint8 {
		// A saturated counter: the excess, if any, goes first.
		if v, h := l.extra.Find(k); v != nil {
			if *v--; *v == 0 {
				l.extra.DeleteFound(h)
			}
			return false
		}
	}
	if *c--; *c != 0 {
		return false
	}
	l.counts.Clean(k)
	return true
}
