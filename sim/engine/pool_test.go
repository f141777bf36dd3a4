package engine

import "testing"

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
