// Package blockmap holds the tables the simulator keys by KV block name: the prefix cache's
// name → block index of every KV pool, and the KV-aware router's overlap index and live block
// counts. Lookups sit on the hot path of every admission, routing decision and KV event. Map is
// an open-addressing hash table for any uint64 key; Table puts a workload's dense shared-block
// ids in a slice and the other keys in a Map.
package blockmap

import "iter"

// fibonacci is 2^64 / φ rounded to odd: multiplying a key by it and keeping the top bits spreads
// any key set, even consecutive integers, over the table (Knuth, The Art of Computer
// Programming vol. 3, §6.4, multiplicative hashing).
const fibonacci = 0x9E3779B97F4A7C15

// minSlots is the smallest table, in slots.
const minSlots = 16

type entry[V any] struct {
	key uint64
	val V
}

// Map maps uint64 keys to values of type V: open addressing with linear probing, at most half
// full, deletion by backward shifting (no tombstones), so probe sequences stay short under the
// constant insert/delete churn of a KV cache. Key 0 marks an empty slot and is stored apart.
// The zero Map is empty and ready to use; a Map is not safe for concurrent mutation.
type Map[V any] struct {
	slots   []entry[V]
	shift   uint // 64 − log2(len(slots))
	n       int  // keys in slots (key 0 not included)
	hasZero bool
	zeroVal V
}

// New returns a Map sized for about hint keys without growing.
func New[V any](hint int) *Map[V] {
	m := &Map[V]{}
	m.init(hint)
	return m
}

func (m *Map[V]) init(hint int) {
	size, shift := minSlots, uint(60)
	for size < 2*hint {
		size *= 2
		shift--
	}
	m.slots = make([]entry[V], size)
	m.shift = shift
	m.n = 0
}

func (m *Map[V]) home(k uint64) int { return int(k * fibonacci >> m.shift) }

// Len is the number of keys.
func (m *Map[V]) Len() int {
	if m.hasZero {
		return m.n + 1
	}
	return m.n
}

// Get returns the value of k and whether k is present.
func (m *Map[V]) Get(k uint64) (V, bool) {
	if p := m.Ptr(k); p != nil {
		return *p, true
	}
	var zero V
	return zero, false
}

// Ptr returns a pointer to the value of k, or nil when k is absent. The pointer is valid until
// the next Set, Upsert, Delete or Clear.
func (m *Map[V]) Ptr(k uint64) *V {
	v, _ := m.Find(k)
	return v
}

// Upsert returns a pointer to the value of k, inserting k with the zero value when absent, and
// whether k was inserted. The pointer is valid until the next Set, Upsert, Delete or Clear.
func (m *Map[V]) Upsert(k uint64) (v *V, inserted bool) {
	if k == 0 {
		inserted = !m.hasZero
		m.hasZero = true
		return &m.zeroVal, inserted
	}
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		e := &m.slots[i]
		if e.key == k {
			return &e.val, false
		}
		if e.key == 0 {
			e.key = k
			m.n++
			return &e.val, true
		}
	}
}

// Set maps k to v.
func (m *Map[V]) Set(k uint64, v V) {
	p, _ := m.Upsert(k)
	*p = v
}

// Find returns a pointer to the value of k and a handle for DeleteFound, or nil when k is absent.
// The pointer and the handle are valid until the next Set, Upsert, Delete, DeleteFound or Clear:
// a caller that updates a value and deletes its key when the value becomes zero probes once.
func (m *Map[V]) Find(k uint64) (v *V, handle int) {
	if k == 0 {
		if m.hasZero {
			return &m.zeroVal, -1
		}
		return nil, 0
	}
	if m.slots == nil {
		return nil, 0
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		e := &m.slots[i]
		if e.key == k {
			return &e.val, i
		}
		if e.key == 0 {
			return nil, 0
		}
	}
}

// DeleteFound removes the key that Find returned handle for (same as Delete of that key).
func (m *Map[V]) DeleteFound(handle int) {
	if handle < 0 {
		var zero V
		m.zeroVal, m.hasZero = zero, false
		return
	}
	m.deleteAt(handle)
}

// Delete removes k, if present.
func (m *Map[V]) Delete(k uint64) {
	var zero V
	if k == 0 {
		m.zeroVal, m.hasZero = zero, false
		return
	}
	if m.slots == nil {
		return
	}
	mask := len(m.slots) - 1
	i := m.home(k)
	for ; m.slots[i].key != k; i = (i + 1) & mask {
		if m.slots[i].key == 0 {
			return
		}
	}
	m.deleteAt(i)
}

// deleteAt empties slot i, which holds a key.
func (m *Map[V]) deleteAt(i int) {
	mask := len(m.slots) - 1
	// Backward shift: move later entries of the probe run into the hole when the hole lies
	// between their home slot and their slot, so every key stays reachable from its home.
	for j := (i + 1) & mask; m.slots[j].key != 0; j = (j + 1) & mask {
		h := m.home(m.slots[j].key)
		if (i-h)&mask < (j-h)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = entry[V]{}
	m.n--
}

// Reset removes every key and sizes the table for about hint keys without growing: the same
// table, cleared, when it is large enough but not more than four times too large; a new one
// otherwise.
func (m *Map[V]) Reset(hint int) {
	if n := len(m.slots); n >= 2*hint && n >= minSlots && n <= 8*max(hint, minSlots/2) {
		m.Clear()
		return
	}
	m.init(hint)
	var zero V
	m.zeroVal, m.hasZero = zero, false
}

// Clear removes every key, keeping the table's size.
func (m *Map[V]) Clear() {
	clear(m.slots)
	m.n = 0
	var zero V
	m.zeroVal, m.hasZero = zero, false
}

// All iterates over the keys and values in no particular order. The Map must not change during
// the iteration.
func (m *Map[V]) All() iter.Seq2[uint64, V] {
	return func(yield func(uint64, V) bool) {
		if m.hasZero && !yield(0, m.zeroVal) {
			return
		}
		for _, e := range m.slots {
			if e.key != 0 && !yield(e.key, e.val) {
				return
			}
		}
	}
}

func (m *Map[V]) grow() {
	old := m.slots
	m.init(max(minSlots/2, len(old)))
	mask := len(m.slots) - 1
	for _, e := range old {
		if e.key == 0 {
			continue
		}
		i := m.home(e.key)
		for m.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		m.slots[i] = e
		m.n++
	}
}
