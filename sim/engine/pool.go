package engine

import "github.com/servesweep/servesweep/sim/blockmap"

// BlockPool is one attention-DP rank's KV cache: a fixed number of KV blocks, each either free,
// active (held by one or more requests, counted in refs) or inactive-cached (no holder, kept for
// prefix reuse, evictable in LRU order). Blocks are identified by int32 ids in [0, capacity).
//
// A block that a request has filled completely is registered under its key, a name for its
// chained sequence hash (engine-internals.md §2.1; Request.Keys), so a block matches only when
// the whole prefix before it matches.
// When the last holder releases a registered block it goes to the tail of the inactive LRU list;
// allocation takes free blocks first and then evicts from the LRU head. Requests release their
// blocks last-to-first, so leaf blocks of a prefix become older LRU candidates than the shared
// blocks before them (engine-internals.md §2.2).
type BlockPool struct {
	capacity int32
	// Per-block state, grown lazily: blocks [0, len(refs)) have been handed out at least once;
	// blocks [len(refs), capacity) are fresh and free. A huge pool therefore costs memory only
	// for the blocks a run actually touches.
	refs       []int32
	key        []uint64
	registered []bool // registered[b]: b holds a full block under the name key[b]
	// mapped marks registered blocks the key index holds (and the OnStored observer saw). A
	// block registered unmapped (registerUnique) caches like any other but is found by no lookup
	// until mapUnique maps it.
	mapped []bool
	// Intrusive doubly linked LRU list of inactive registered blocks; -1 terminates. A block's
	// two links share a cache line.
	links            []lruLinks
	lruHead, lruTail int32
	numInactive      int32
	free             []int32 // released unregistered blocks (fresh ones are implicit)
	// byKey maps the key of every mapped block to the block + 1 (0: absent); keys below its
	// dense bound (the workload's shared block ids) index a slice.
	byKey blockmap.Table[int32]
	// OnStored and OnRemoved, when set, observe prefix-cache membership: a key becomes
	// matchable (stored) or stops being matchable (its block was evicted). Used by KV-aware routing.
	OnStored, OnRemoved func(key uint64)
}

// MaxDenseKeys bounds the dense part of a pool's key index (blockmap.Table): a workload with more
// distinct shared blocks indexes the ids beyond it by hashing, unless the pool indexes by a ring
// instead (IndexByRing). 2^22 ids are 16 MB of int32 per pool.
const MaxDenseKeys = 1 << 22

// NewBlockPool returns a pool of capacity blocks, all free, whose key index is dense for keys
// below min(denseKeys, MaxDenseKeys) (traffic.BlockSet.Distinct; 0: every key hashed).
// capacity must be > 0.
func NewBlockPool(capacity, denseKeys int) *BlockPool {
	p := &BlockPool{capacity: int32(capacity), lruHead: -1, lruTail: -1}
	p.byKey.Reset(min(max(denseKeys, 0), MaxDenseKeys))
	return p
}

// RingSlotsPerBlock sizes the ring of a pool indexed by ring (IndexByRing): this many slots per
// block of capacity, rounded up to a power of 2 (16: a pool of 30,000 blocks has 2^19 slots,
// 4 MB), so that the keys cached at once, ids of recent requests in request order, rarely share
// a slot.
const RingSlotsPerBlock = 16

// IndexByRing makes the empty pool's key index a direct-mapped ring (blockmap.Table.ResetRing)
// of RingSlotsPerBlock slots per block instead of a dense slice: for workloads with more shared
// block ids than a dense index may hold. Outputs do not depend on it.
func (p *BlockPool) IndexByRing() { p.byKey.ResetRing(RingSlotsPerBlock * int(p.capacity)) }

// lruLinks are a block's neighbours in the inactive LRU list (-1: none).
type lruLinks struct{ prev, next int32 }

// fresh counts blocks never handed out.
func (p *BlockPool) fresh() int { return int(p.capacity) - len(p.refs) }

// Capacity is the pool size in blocks.
func (p *BlockPool) Capacity() int { return int(p.capacity) }

// Available counts blocks that can be handed to a request now: free plus inactive-cached.
func (p *BlockPool) Available() int { return p.fresh() + len(p.free) + int(p.numInactive) }

// Active counts blocks held by at least one request.
func (p *BlockPool) Active() int { return int(p.capacity) - p.Available() }

// Inactive counts registered blocks with no holder (the reusable prefix cache).
func (p *BlockPool) Inactive() int { return int(p.numInactive) }

// Contains reports whether a registered block with key k is resident (active or inactive),
// including the blocks registered outside the key index (registerUnique), which cost a scan of
// the pool: for tests and checks, not the hot path.
func (p *BlockPool) Contains(k uint64) bool {
	if p.byKey.Get(k) != 0 {
		return true
	}
	for b, x := range p.key {
		if p.registered[b] && x == k {
			return true
		}
	}
	return false
}

// lookup counts how many of r's first n full blocks are resident in the pool, in order up to the
// first that is not (Request.lookupKey), and how many of those are inactive.
func (p *BlockPool) lookup(r *Request, n int32) (hits, inactiveHits int32) {
	for ; hits < n; hits++ {
		k, ok := r.lookupKey(hits)
		if !ok {
			break
		}
		b := p.byKey.Get(k) - 1
		if b < 0 {
			break
		}
		if p.refs[b] == 0 {
			inactiveHits++
		}
	}
	return hits, inactiveHits
}

// pin takes a reference on r's first n full blocks, which lookup found resident, and appends
// them to lease.
func (p *BlockPool) pin(r *Request, n int32, lease []int32) []int32 {
	for j := int32(0); j < n; j++ {
		k, _ := r.lookupKey(j)
		b := p.byKey.Get(k) - 1
		if p.refs[b] == 0 {
			p.lruRemove(b)
		}
		p.refs[b]++
		lease = append(lease, b)
	}
	return lease
}

// allocate appends n fresh private blocks to lease. The caller has checked Available() >= n.
func (p *BlockPool) allocate(n int32, lease []int32) []int32 {
	for ; n > 0; n-- {
		var b int32
		if k := len(p.free); k > 0 {
			b = p.free[k-1]
			p.free = p.free[:k-1]
		} else if p.fresh() > 0 {
			b = int32(len(p.refs))
			p.refs = append(p.refs, 0)
			p.key = append(p.key, 0)
			p.registered = append(p.registered, false)
			p.mapped = append(p.mapped, false)
			p.links = append(p.links, lruLinks{-1, -1})
		} else {
			b = p.lruHead
			p.lruRemove(b)
			p.unregister(b)
		}
		p.refs[b] = 1
		lease = append(lease, b)
	}
	return lease
}

// register offers the full block b under key k to the prefix cache. If another block already
// holds k, b stays private (a duplicate copy) and is freed, not cached, on release.
func (p *BlockPool) register(b int32, k uint64) {
	if p.registered[b] {
		return
	}
	v := p.byKey.Ptr(k)
	if *v != 0 {
		return
	}
	*v = b + 1
	p.key[b] = k
	p.registered[b], p.mapped[b] = true, true
	if p.OnStored != nil {
		p.OnStored(k)
	}
}

// registerUnique registers the full block b under a key k that no other request of the workload
// holds (UniqueBlockKey) and that the pool does not hold yet: b caches like any registered block
// (inactive and evictable in LRU order when released) but enters neither the key index nor the
// observers, since no lookup other than its own request's can ask for k. Its request maps it
// (mapUnique) before it could ask: when its KV is dropped for a later recompute. Same pool state
// as register, without two index updates per block.
func (p *BlockPool) registerUnique(b int32, k uint64) {
	if p.registered[b] {
		return
	}
	p.key[b] = k
	p.registered[b] = true
}

// mapUnique enters the unmapped registered blocks of lease into the key index and the
// observers, as register would have.
func (p *BlockPool) mapUnique(lease []int32) {
	for _, b := range lease {
		if !p.registered[b] || p.mapped[b] {
			continue
		}
		v := p.byKey.Ptr(p.key[b])
		if *v != 0 {
			// Not reachable for a key unique to one request: its first registration in this
			// pool is the only one. Kept consistent anyway: b becomes a private copy.
			p.registered[b] = false
			continue
		}
		*v = b + 1
		p.mapped[b] = true
		if p.OnStored != nil {
			p.OnStored(p.key[b])
		}
	}
}

func (p *BlockPool) unregister(b int32) {
	p.registered[b] = false
	if !p.mapped[b] {
		return
	}
	p.mapped[b] = false
	k := p.key[b]
	p.byKey.Delete(k)
	if p.OnRemoved != nil {
		p.OnRemoved(k)
	}
}

// release drops one reference on every block of lease, last block first, and returns lease[:0].
func (p *BlockPool) release(lease []int32) []int32 {
	for i := len(lease) - 1; i >= 0; i-- {
		b := lease[i]
		p.refs[b]--
		if p.refs[b] > 0 {
			continue
		}
		if p.registered[b] {
			p.lruPush(b)
		} else {
			p.free = append(p.free, b)
		}
	}
	return lease[:0]
}

func (p *BlockPool) lruPush(b int32) {
	p.links[b] = lruLinks{prev: p.lruTail, next: -1}
	if p.lruTail >= 0 {
		p.links[p.lruTail].next = b
	} else {
		p.lruHead = b
	}
	p.lruTail = b
	p.numInactive++
}

func (p *BlockPool) lruRemove(b int32) {
	l := p.links[b]
	if l.prev >= 0 {
		p.links[l.prev].next = l.next
	} else {
		p.lruHead = l.next
	}
	if l.next >= 0 {
		p.links[l.next].prev = l.prev
	} else {
		p.lruTail = l.prev
	}
	p.numInactive--
}

// CheckInvariants verifies the pool's bookkeeping: every block is exactly one of free, active or
// inactive; refs are non-negative; the key index points at registered blocks. holders[b] must
// give the number of leases holding block b. It returns a description of the first violation.
func (p *BlockPool) CheckInvariants(holders []int32) string {
	state := make([]byte, len(p.refs))
	for _, b := range p.free {
		if state[b] != 0 {
			return "block on the free list twice"
		}
		state[b] = 'f'
	}
	n := int32(0)
	for b := p.lruHead; b >= 0; b = p.links[b].next {
		if state[b] != 0 {
			return "inactive block also free or listed twice"
		}
		state[b] = 'i'
		n++
	}
	if n != p.numInactive {
		return "inactive count differs from the LRU list"
	}
	for b := int32(len(p.refs)); b < p.capacity; b++ {
		if holders[b] != 0 {
			return "a lease holds a block never handed out"
		}
	}
	for b := int32(0); b < int32(len(p.refs)); b++ {
		if p.refs[b] != holders[b] {
			return "block refcount differs from the number of leases holding it"
		}
		switch {
		case p.refs[b] > 0 && state[b] != 0:
			return "held block is also free or inactive"
		case p.refs[b] == 0 && state[b] == 0:
			return "unheld block is neither free nor inactive (leaked)"
		case state[b] == 'i' && !p.registered[b]:
			return "inactive block is not registered"
		}
	}
	mapped := 0
	bad := false
	for k, b1 := range p.byKey.All {
		b := b1 - 1
		if b < 0 || b >= int32(len(p.refs)) || !p.registered[b] || !p.mapped[b] || p.key[b] != k {
			bad = true
			break
		}
		mapped++
	}
	if bad {
		return "key index points at a block that does not hold that key"
	}
	for b := range p.mapped {
		if p.mapped[b] {
			mapped--
		}
	}
	if mapped != 0 {
		return "a block marked mapped is not in the key index"
	}
	return ""
}
