package router

import (
	"math"

	"github.com/servesweep/servesweep/sim/blockmap"
)

// liveCounts counts, for one slot, how many requests routed there hold each prompt block key
// live (the kv_router's active blocks with assume_reuse). Keys below its dense bound count in a
// slice of 16-bit counters; a counter that would pass math.MaxUint16 keeps the excess in extra,
// as do the counts of keys past the bound, so counts are exact at any size. The zero value holds
// nothing and hashes every key.
type liveCounts struct {
	dense []uint16
	// extra holds the counts of keys >= len(dense), and for a dense key the part of its count
	// above math.MaxUint16 (present only while its counter is saturated).
	extra blockmap.Map[int32]
}

// reset empties the counts and makes keys below n dense.
func (l *liveCounts) reset(n int) {
	if cap(l.dense) >= n {
		l.dense = l.dense[:n]
		clear(l.dense)
	} else {
		l.dense = make([]uint16, n)
	}
	l.extra.Clear()
}

// live reports whether some request holds k live.
func (l *liveCounts) live(k uint64) bool {
	if k < uint64(len(l.dense)) {
		return l.dense[k] != 0
	}
	v, ok := l.extra.Get(k)
	return ok && v != 0
}

// inc counts one more holder of k and reports whether k just became live (it had none).
func (l *liveCounts) inc(k uint64) bool {
	if k < uint64(len(l.dense)) {
		c := &l.dense[k]
		if *c < math.MaxUint16 {
			*c++
			return *c == 1
		}
		v, _ := l.extra.Upsert(k)
		*v++
		return false
	}
	v, _ := l.extra.Upsert(k)
	*v++
	return *v == 1
}

// dec counts one holder of k fewer (k must be held) and reports whether k stopped being live.
func (l *liveCounts) dec(k uint64) bool {
	if k < uint64(len(l.dense)) {
		c := &l.dense[k]
		if *c == math.MaxUint16 {
			// A saturated counter: the excess, if any, goes first.
			if v, h := l.extra.Find(k); v != nil {
				if *v--; *v == 0 {
					l.extra.DeleteFound(h)
				}
				return false
			}
		}
		*c--
		return *c == 0
	}
	v, h := l.extra.Find(k)
	if *v--; *v == 0 {
		l.extra.DeleteFound(h)
		return true
	}
	return false
}
