package blockmap

// Table maps uint64 keys to values of type V, the zero value meaning "absent": keys below its
// dense bound live in a slice indexed by the key (one load or store, no hashing), the others in
// a Map. A workload names the KV blocks its requests share by dense ids [0, n)
// (traffic.BlockSet), so a Table with dense bound n serves the prefix cache and the router
// without hashing while accepting any other key (a request's unique blocks, tests' names).
// The zero Table has no dense part; a Table is not safe for concurrent mutation.
//
// Instead of a dense part, a Table can have a ring (ResetRing): a direct-mapped array where a key
// k below 2^32 - 1 lives in slot k mod the ring's size while that slot is free, the others in the
// Map. Dense ids in request order put the keys a run holds at once near each other, so a ring
// far smaller than the ids' range serves nearly all of them with one probe and a few cache lines
// per request, where hashing would scatter them.
type Table[V comparable] struct {
	dense []V
	ring  []ringSlot[V]
	m     Map[V]
}

// ringSlot is one slot of a Table's ring: key is the key + 1 (0: free).
type ringSlot[V comparable] struct {
	key uint32
	val V
}

// Reset empties t and sets its dense bound to n keys (n × sizeof(V) bytes, reusing the slice
// when it is large enough), with no ring.
func (t *Table[V]) Reset(n int) {
	if cap(t.dense) >= n {
		t.dense = t.dense[:n]
		clear(t.dense)
	} else {
		t.dense = make([]V, n)
	}
	t.ring = nil
	t.m.Clear()
}

// ResetRing empties t and gives it a ring of slots slots (rounded up to a power of 2; slots ×
// (4 + sizeof(V)) bytes, padded) and no dense part.
func (t *Table[V]) ResetRing(slots int) {
	n := 1
	for n < slots {
		n *= 2
	}
	if cap(t.ring) >= n {
		t.ring = t.ring[:n]
		clear(t.ring)
	} else {
		t.ring = make([]ringSlot[V], n)
	}
	t.dense = t.dense[:0]
	t.m.Clear()
}

// RingSlots is the size of t's ring, 0 without one: for tests and checks.
func (t *Table[V]) RingSlots() int { return len(t.ring) }

// slot returns k's ring slot, nil when t has no ring or k cannot live in it.
func (t *Table[V]) slot(k uint64) *ringSlot[V] {
	if len(t.ring) == 0 || k >= 1<<32-1 {
		return nil
	}
	return &t.ring[k&uint64(len(t.ring)-1)]
}

// Get returns the value of k, zero when absent.
func (t *Table[V]) Get(k uint64) V {
	if k < uint64(len(t.dense)) {
		return t.dense[k]
	}
	var zero V
	if s := t.slot(k); s != nil {
		if s.key == uint32(k)+1 {
			return s.val
		}
		if t.m.Len() == 0 {
			return zero
		}
	}
	if p := t.m.Ptr(k); p != nil {
		return *p
	}
	return zero
}

// Ptr returns a pointer to the value of k, adding k with the zero value when absent. A caller
// that leaves the value zero must call Delete (or Clean) to keep the map part small. The pointer
// is valid until the next Ptr, Delete or Reset.
func (t *Table[V]) Ptr(k uint64) *V {
	if k < uint64(len(t.dense)) {
		return &t.dense[k]
	}
	if s := t.slot(k); s != nil {
		if s.key == uint32(k)+1 {
			return &s.val
		}
		// k may be in the map, added while its slot was taken.
		if t.m.Len() > 0 {
			if p := t.m.Ptr(k); p != nil {
				return p
			}
		}
		if s.key == 0 {
			s.key = uint32(k) + 1
			var zero V
			s.val = zero
			return &s.val
		}
	}
	p, _ := t.m.Upsert(k)
	return p
}

// Delete removes k (sets it to zero).
func (t *Table[V]) Delete(k uint64) {
	if k < uint64(len(t.dense)) {
		var zero V
		t.dense[k] = zero
		return
	}
	if s := t.slot(k); s != nil && s.key == uint32(k)+1 {
		var zero V
		s.key, s.val = 0, zero
		return
	}
	t.m.Delete(k)
}

// Clean removes k when its value is zero: the step after updating a value through Ptr.
func (t *Table[V]) Clean(k uint64) {
	if k < uint64(len(t.dense)) {
		return
	}
	var zero V
	if s := t.slot(k); s != nil && s.key == uint32(k)+1 {
		if s.val == zero {
			s.key = 0
		}
		return
	}
	if v, at := t.m.Find(k); v != nil && *v == zero {
		t.m.DeleteFound(at)
	}
}

// Len counts the keys with a non-zero value. It scans the dense part and the ring: for tests
// and checks.
func (t *Table[V]) Len() int {
	var zero V
	n := t.m.Len()
	for _, v := range t.dense {
		if v != zero {
			n++
		}
	}
	for _, s := range t.ring {
		if s.key != 0 && s.val != zero {
			n++
		}
	}
	return n
}

// All calls yield with every key of non-zero value and its value: the dense part in key order,
// then the ring's and the map's in no particular order. t must not change during the iteration.
func (t *Table[V]) All(yield func(uint64, V) bool) {
	var zero V
	for k, v := range t.dense {
		if v != zero && !yield(uint64(k), v) {
			return
		}
	}
	for _, s := range t.ring {
		if s.key != 0 && s.val != zero && !yield(uint64(s.key-1), s.val) {
			return
		}
	}
	for k, v := range t.m.All() {
		if v != zero && !yield(k, v) {
			return
		}
	}
}
