package blockmap

import (
	"math/rand/v2"
	"testing"
)

// Property: after any sequence of sets, upserts, deletes, finds with deletes through their handle
// and resets (keys from a small space, so probe runs collide and wrap; key 0 included;
// consecutive integers; random 64-bit keys), the Map holds exactly what a Go map holds.
func TestMatchesGoMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 60; trial++ {
		var m Map[int32]
		if trial%2 == 1 {
			m = *New[int32](rng.IntN(100))
		}
		ref := map[uint64]int32{}
		space := uint64(1 + rng.IntN(300))
		for op := 0; op < 5000; op++ {
			var k uint64
			switch trial % 3 {
			case 0:
				k = rng.Uint64N(space)
			case 1:
				k = rng.Uint64N(space) << 40 // keys differing only in high bits
			default:
				k = rng.Uint64()
				if rng.IntN(4) == 0 {
					for kk := range ref {
						k = kk
						break
					}
				}
			}
			if rng.IntN(1000) == 0 {
				m.Reset(rng.IntN(400))
				clear(ref)
			}
			switch rng.IntN(6) {
			case 5:
				// Find, decrement, and delete through the handle when the value reaches 0.
				p, at := m.Find(k)
				if _, in := ref[k]; (p != nil) != in {
					t.Fatalf("trial %d op %d: Find(%d) = %v with the key present %v", trial, op, k, p, in)
				}
				if p != nil {
					if *p--; *p <= 0 {
						m.DeleteFound(at)
						delete(ref, k)
					} else {
						ref[k] = *p
					}
				}
			case 0, 1:
				v := rng.Int32()
				m.Set(k, v)
				ref[k] = v
			case 2:
				p, inserted := m.Upsert(k)
				if _, in := ref[k]; inserted == in {
					t.Fatalf("trial %d op %d: Upsert(%d) inserted %v with the key present %v", trial, op, k, inserted, in)
				}
				*p += 3
				ref[k] += 3
			case 3:
				p := m.Ptr(k)
				if _, in := ref[k]; (p != nil) != in {
					t.Fatalf("trial %d op %d: Ptr(%d) = %v with the key present %v", trial, op, k, p, in)
				}
				if p != nil {
					*p--
					ref[k]--
				}
			default:
				m.Delete(k)
				delete(ref, k)
			}
			g, ok := m.Get(k)
			if rv, in := ref[k]; ok != in || g != rv {
				t.Fatalf("trial %d op %d: Get(%d) = %d, %v; want %d, %v", trial, op, k, g, ok, rv, in)
			}
		}
		if m.Len() != len(ref) {
			t.Fatalf("trial %d: Len %d, want %d", trial, m.Len(), len(ref))
		}
		seen := 0
		for k, v := range m.All() {
			if rv, ok := ref[k]; !ok || rv != v {
				t.Fatalf("trial %d: All yields %d → %d, want %d (present %v)", trial, k, v, rv, ok)
			}
			seen++
		}
		if seen != len(ref) {
			t.Fatalf("trial %d: All yields %d keys, want %d", trial, seen, len(ref))
		}
		for k, v := range ref {
			if g, ok := m.Get(k); !ok || g != v {
				t.Fatalf("trial %d: Get(%d) = %d, %v; want %d", trial, k, g, ok, v)
			}
		}
		m.Clear()
		if m.Len() != 0 {
			t.Fatalf("trial %d: Len after Clear %d", trial, m.Len())
		}
		for k := range ref {
			if _, ok := m.Get(k); ok {
				t.Fatalf("trial %d: key %d survives Clear", trial, k)
			}
		}
	}
}

// Reset(n) sizes the table so that n inserts do not grow it (pointers from Upsert stay valid),
// reusing the table when it is at most four times too large.
func TestResetHoldsHintWithoutGrowing(t *testing.T) {
	var m Map[int32]
	for _, n := range []int{1000, 10, 0, 300, 5000, 4000, 7} {
		before := len(m.slots)
		m.Reset(n)
		size := len(m.slots)
		if m.Len() != 0 || size < 2*n {
			t.Fatalf("Reset(%d): Len %d, %d slots", n, m.Len(), size)
		}
		if reuse := before >= 2*n && before <= 8*max(n, minSlots/2); reuse != (size == before) {
			t.Fatalf("Reset(%d) of %d slots: %d slots, reuse expected %v", n, before, size, reuse)
		}
		for i := range n {
			if _, inserted := m.Upsert(uint64(i)*0x9E3779B97F4A7C15 + 1); !inserted {
				t.Fatalf("Reset(%d): key %d present after Reset", n, i)
			}
		}
		if len(m.slots) != size {
			t.Fatalf("Reset(%d): the table grew from %d to %d slots on %d inserts", n, size, len(m.slots), n)
		}
	}
}

// BenchmarkChurn is a KV cache's pattern: a table of 16k keys with one insert and one delete per
// lookup round of 8 lookups.
func BenchmarkChurn(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	keys := make([]uint64, 16384)
	m := New[int32](len(keys))
	for i := range keys {
		keys[i] = rng.Uint64()
		m.Set(keys[i], int32(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i & (len(keys) - 1)
		for k := 0; k < 8; k++ {
			if _, ok := m.Get(keys[(j+k*977)&(len(keys)-1)]); !ok {
				b.Fatal("missing key")
			}
		}
		m.Delete(keys[j])
		keys[j] = rng.Uint64()
		m.Set(keys[j], int32(j))
	}
}
