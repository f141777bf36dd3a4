package engine

import (
	"slices"
	"testing"
)

func holdersOf(p *BlockPool, leases ...[]int32) []int32 {
	h := make([]int32, p.Capacity())
	for _, l := range leases {
		for _, b := range l {
			h[b]++
		}
	}
	return h
}

// Released registered blocks become inactive and are evicted least-recently-released first; a
// lease releases its last block first, so a prefix's leaf is evicted before its parent. The same
// with keys in the hashed part of the index, in the dense part, and across both.
func TestBlockPoolLRUAndReuse(t *testing.T) {
	for _, dense := range []int{0, 101, 1000} {
		testBlockPoolLRUAndReuse(t, NewBlockPool(4, dense))
	}
}

func testBlockPoolLRUAndReuse(t *testing.T, p *BlockPool) {
	a := p.allocate(3, nil)
	for i, b := range a {
		p.register(b, uint64(100+i))
	}
	p.release(a, 0, 0)
	if p.Available() != 4 || p.Inactive() != 3 {
		t.Fatalf("available %d inactive %d", p.Available(), p.Inactive())
	}
	// A prefix lookup walks the leading hashes: 100 and 101 hit, the miss at 999 stops it.
	r := &Request{Keys: []uint32{100, 101, 999, 102}, FullBlocks: 4}
	if hits, inactive := p.lookup(r, 4); hits != 2 || inactive != 2 {
		t.Fatalf("lookup hits %d inactive %d", hits, inactive)
	}
	// Allocating 2 blocks takes the free block, then evicts the oldest inactive block: the leaf
	// (hash 102) was released first.
	b := p.allocate(2, nil)
	if p.Contains(102) || !p.Contains(100) || !p.Contains(101) {
		t.Fatal("expected the leaf block (hash 102) to be evicted first")
	}
	// Pinning a cached block makes it active again.
	c := p.pin(r, 1, nil)
	if p.Active() != 3 {
		t.Fatalf("active %d, want 3", p.Active())
	}
	if msg := p.CheckInvariants(holdersOf(p, b, c)); msg != "" {
		t.Fatal(msg)
	}
	// A duplicate registration leaves the second copy private: freed, not cached, on release.
	p.register(b[0], 100)
	p.release(b, 0, 0)
	p.release(c, 0, 0)
	if p.Inactive() != 2 || p.Available() != 4 {
		t.Fatalf("inactive %d available %d", p.Inactive(), p.Available())
	}
	if msg := p.CheckInvariants(holdersOf(p)); msg != "" {
		t.Fatal(msg)
	}
}

// poolOps drives a pool through a random sequence of allocations (of one block, or of up to 40),
// registrations and releases (with and without an unmatchable range), seeded by seed; each
// allocation calls alloc, and the pool's invariants (CheckInvariants) must hold after each step.
// It returns the leases handed out, in order, and the pool.
func poolOps(t *testing.T, seed uint64, alloc func(p *BlockPool, n int32, lease []int32) []int32) ([][]int32, *BlockPool) {
	t.Helper()
	p := NewBlockPool(300, 64)
	rng := seed
	next := func(n uint64) uint64 { rng = splitmix64(rng); return rng % n }
	var held [][]int32
	var out [][]int32
	key := uint64(0)
	for range 400 {
		switch op := next(10); {
		case op < 5:
			n := int32(1)
			if next(2) == 0 {
				n = int32(next(40)) + 1
			}
			if p.Available() < int(n) {
				continue
			}
			var lease []int32
			if len(held) > 0 && next(2) == 0 {
				k := int(next(uint64(len(held))))
				lease = alloc(p, n, held[k])
				held[k] = lease
			} else {
				lease = alloc(p, n, nil)
				held = append(held, lease)
			}
			out = append(out, slices.Clone(lease))
		case op < 7 && len(held) > 0:
			l := held[next(uint64(len(held)))]
			if b := l[next(uint64(len(l)))]; !p.meta[b].registered() && p.meta[b].refs() == 1 {
				key++
				p.register(b, key)
			}
		case len(held) > 0:
			k := int(next(uint64(len(held))))
			l := held[k]
			// An unmatchable range: blocks only this lease holds, never registered, as
			// Request.unindexed gives them.
			lo := int32(next(uint64(len(l) + 1)))
			hi := lo
			for hi < int32(len(l)) && p.meta[l[hi]] == metaHeld {
				hi++
			}
			p.release(l, lo, hi)
			held = append(held[:k], held[k+1:]...)
		}
		if msg := p.CheckInvariants(holdersOf(p, held...)); msg != "" {
			t.Fatalf("seed %d: %s", seed, msg)
		}
	}
	return out, p
}

// allocate's shortcut (takeIdleRun) hands out exactly the blocks allocateEach, one block at a
// time, would, and leaves the pool in the same state, over random sequences of allocations (of
// one block, as a decode step at block size 1 takes, or of several), registrations and releases
// with unmatchable ranges; the pool's bookkeeping holds after every operation.
func TestAllocateShortcutsMatchAllocateEach(t *testing.T) {
	fast := func(p *BlockPool, n int32, lease []int32) []int32 { return p.allocate(n, lease) }
	each := func(p *BlockPool, n int32, lease []int32) []int32 { return p.allocateEach(n, lease) }
	for seed := range uint64(200) {
		got, gp := poolOps(t, seed, fast)
		want, wp := poolOps(t, seed, each)
		if !slices.EqualFunc(got, want, slices.Equal[[]int32]) {
			t.Fatalf("seed %d: leases differ", seed)
		}
		if gp.free != wp.free || gp.unlisted != wp.unlisted || gp.tailUnlisted != wp.tailUnlisted ||
			gp.numListed != wp.numListed || !slices.Equal(gp.idle, wp.idle) || !slices.Equal(gp.meta, wp.meta) {
			t.Fatalf("seed %d: pool state differs", seed)
		}
	}
}
