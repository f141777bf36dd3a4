package blockmap

import (
	"math/rand/v2"
	"testing"
)

// Property: after any sequence of sets and deletes (keys from a small space, so probe runs
// collide and wrap; key 0 included; consecutive integers; random 64-bit keys), the Map holds
// exactly what a Go map holds.
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
			switch rng.IntN(5) {
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
