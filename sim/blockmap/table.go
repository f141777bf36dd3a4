package blockmap

// Table maps uint64 keys to values of type V, the zero value meaning "absent": keys below its
// dense bound live in a slice indexed by the key (one load or store, no hashing), the others in
// a Map. A workload names the KV blocks its requests share by dense ids [0, n)
// (traffic.BlockSet), so a Table with dense bound n serves the prefix cache and the router
// without hashing while accepting any other key (a request's unique blocks, tests' names).
// The zero Table has no dense part; a Table is not safe for concurrent mutation.
type Table[V comparable] struct {
	dense []V
	m     Map[V]
}

// Reset empties t and sets its dense bound to n keys (n × sizeof(V) bytes, reusing the slice
// when it is large enough).
func (t *Table[V]) Reset(n int) {
	if cap(t.dense) >= n {
		t.dense = t.dense[:n]
		clear(t.dense)
	} else {
		t.dense = make([]V, n)
	}
	t.m.Clear()
}

// Get returns the value of k, zero when absent.
func (t *Table[V]) Get(k uint64) V {
	if k < uint64(len(t.dense)) {
		return t.dense[k]
	}
	var zero V
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
	t.m.Delete(k)
}

// Clean removes k when its value is zero: the step after updating a value through Ptr.
func (t *Table[V]) Clean(k uint64) {
	if k < uint64(len(t.dense)) {
		return
	}
	var zero V
	if v, at := t.m.Find(k); v != nil && *v == zero {
		t.m.DeleteFound(at)
	}
}

// Len counts the keys with a non-zero value. It scans the dense part: for tests and checks.
func (t *Table[V]) Len() int {
	var zero V
	n := t.m.Len()
	for _, v := range t.dense {
		if v != zero {
			n++
		}
	}
	return n
}

// All calls yield with every key of non-zero value and its value: the dense part in key order,
// then the map part in no particular order. t must not change during the iteration.
func (t *Table[V]) All(yield func(uint64, V) bool) {
	var zero V
	for k, v := range t.dense {
		if v != zero && !yield(uint64(k), v) {
			return
		}
	}
	for k, v := range t.m.All() {
		if v != zero && !yield(k, v) {
			return
		}
	}
}
