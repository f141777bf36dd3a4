package engine

import (
	"slices"

	"github.com/servesweep/servesweep/sim/blockmap"
)

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
//
// A block only its own request could ever match (a unique block of a request that completed,
// see release) is cached all the same, but no lookup can reach it: it is an unmatchable entry of
// the LRU list, which evicting has no effect but to free it. Such entries are counted, not
// listed: each listed (matchable) block records how many unmatchable entries precede it, and
// their blocks join the free blocks' stack. Allocation therefore takes and evicts exactly as it
// would with every entry listed (free blocks first, then the LRU head, unmatchable or not), while
// the block ids it hands out are the most recently released ones, so a pool touches about as
// many blocks as it holds at once, not its whole capacity.
type BlockPool struct {
	capacity int32
	// Per-block state, grown lazily: blocks [0, len(meta)) have been handed out at least once;
	// blocks [len(meta), capacity) are fresh. Blocks are recycled through idle before fresh ones
	// are taken, so a huge pool costs memory only for the blocks a run holds at once.
	meta []blockMeta
	// What only a registered block b needs: key[b], the name it is registered under, and
	// links[b], its links in the LRU list. Both grow to the highest block id registered so far,
	// so a pool whose blocks are all unmatchable or private never allocates them.
	key   []uint64
	links []lruLinks
	// Intrusive doubly linked LRU list of the inactive registered (matchable) blocks; -1
	// terminates.
	lruHead, lruTail int32
	numListed        int32
	// idle holds the released blocks that are free or unmatchable cached entries, in no
	// particular order (reused last in, first out); fresh blocks are implicit.
	// len(idle) + fresh blocks = free + unlisted.
	idle []int32
	// free counts the free blocks (fresh, or released unregistered); unlisted counts the
	// unmatchable inactive entries, of which tailUnlisted follow the last listed block.
	free, unlisted, tailUnlisted int32
	// byKey maps the key of every registered block to the block + 1 (0: absent); keys below its
	// dense bound (the workload's shared block ids) index a slice.
	byKey blockmap.Table[int32]
	// OnStored and OnRemoved, when set, observe prefix-cache membership: a key becomes
	// matchable (stored) or stops being matchable (its block was evicted). Used by KV-aware routing.
	OnStored, OnRemoved func(key uint64)
}

// blockMeta is what release and allocation read of every block, in one 4-byte word: the
// number of requests holding the block (refs) shifted left by one, and in bit 0 whether the
// block is registered (it holds a full block under the name key[b], in the key index). Half the
// size of a struct of the two, so that a big pool's per-block records take half the cache.
type blockMeta uint32

// metaHeld is one holder's share of a blockMeta word; metaRegistered its registered bit.
const (
	metaHeld       blockMeta = 2
	metaRegistered blockMeta = 1
)

// refs is the number of requests holding the block.
func (m blockMeta) refs() int32 { return int32(m >> 1) }

// registered reports whether the block is registered in the key index.
func (m blockMeta) registered() bool { return m&metaRegistered != 0 }

// MaxDenseKeys bounds the dense part of a pool's key index (blockmap.Table): a workload with more
// distinct shared blocks indexes the ids beyond it by hashing, unless the pool indexes by a ring
// instead (IndexByRing). 2^22 ids are 16 MB of int32 per pool.
const MaxDenseKeys = 1 << 22

// NewBlockPool returns a pool of capacity blocks, all free, whose key index is dense for keys
// below min(denseKeys, MaxDenseKeys) (traffic.BlockSet.Distinct; 0: every key hashed).
// capacity must be > 0.
func NewBlockPool(capacity, denseKeys int) *BlockPool {
	p := &BlockPool{capacity: int32(capacity), lruHead: -1, lruTail: -1, free: int32(capacity)}
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

// lruLinks are an inactive registered block's neighbours in the LRU list (-1: none) and the
// number of unmatchable entries between it and its predecessor (the list head: all before it),
// in one record: an unlink touches one cache line per neighbour.
type lruLinks struct{ prev, next, unlistedBefore int32 }

// HandedOut counts the blocks handed out at least once: block ids [0, HandedOut()) are the only
// ones a request may hold (the pool takes fresh ids in order).
func (p *BlockPool) HandedOut() int { return len(p.meta) }

// Capacity is the pool size in blocks.
func (p *BlockPool) Capacity() int { return int(p.capacity) }

// Available counts blocks that can be handed to a request now: free plus inactive-cached.
func (p *BlockPool) Available() int { return int(p.free) + int(p.unlisted) + int(p.numListed) }

// Active counts blocks held by at least one request.
func (p *BlockPool) Active() int { return int(p.capacity) - p.Available() }

// Inactive counts registered blocks with no holder (the prefix cache), unmatchable ones
// included.
func (p *BlockPool) Inactive() int { return int(p.unlisted) + int(p.numListed) }

// Contains reports whether a block with key k is resident (active or inactive) and matchable:
// in the key index. A request's unique blocks are in it only once the request dropped its KV
// (Engine.dropKV); they cannot be matched before.
func (p *BlockPool) Contains(k uint64) bool { return p.byKey.Get(k) != 0 }

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
		if p.meta[b] < metaHeld {
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
		if p.meta[b] < metaHeld {
			p.lruRemove(b)
		}
		p.meta[b] += metaHeld
		lease = append(lease, b)
	}
	return lease
}

// allocate appends n private blocks to lease: free ones first, then the LRU head's, evicting it.
// The caller has checked Available() >= n.
//
// Every block it takes is unheld and unregistered once taken (an idle or fresh block always
// is, an evicted one is unregistered here), so its record becomes metaHeld: written, not read
// first, since a read of a record not in cache would stall the loop where a write does not.
func (p *BlockPool) allocate(n int32, lease []int32) []int32 {
	if p.lruHead < 0 && n <= p.free+p.unlisted {
		return p.takeIdleRun(n, lease)
	}
	return p.allocateEach(n, lease)
}

// allocateEach is allocate one block at a time: it takes a free block while any is left, then
// evicts the LRU head, a listed block or an unmatchable entry.
func (p *BlockPool) allocateEach(n int32, lease []int32) []int32 {
	for ; n > 0; n-- {
		var b int32
		switch {
		case p.free > 0:
			p.free--
			b = p.takeIdle()
		case p.lruHead >= 0 && p.links[p.lruHead].unlistedBefore == 0:
			b = p.lruHead
			p.lruRemove(b)
			p.unregister(b)
		default:
			// The LRU head is an unmatchable entry: evicting it only frees its block.
			if p.lruHead >= 0 {
				p.links[p.lruHead].unlistedBefore--
			} else {
				p.tailUnlisted--
			}
			p.unlisted--
			b = p.takeIdle()
		}
		p.meta[b] = metaHeld
		lease = append(lease, b)
	}
	return lease
}

// takeIdleRun is allocate when no registered block is inactive (the LRU list lists none) and
// the free blocks and unmatchable entries number at least n: allocate would take every block from
// the idle stack, then fresh ones, counting the free blocks out first and then the unmatchable
// entries it evicts, as here in one run.
func (p *BlockPool) takeIdleRun(n int32, lease []int32) []int32 {
	fromFree := min(n, p.free)
	p.free -= fromFree
	p.unlisted -= n - fromFree
	p.tailUnlisted -= n - fromFree
	lease = slices.Grow(lease, int(n))
	k := min(int(n), len(p.idle))
	for j := len(p.idle) - 1; j >= len(p.idle)-k; j-- {
		b := p.idle[j]
		p.meta[b] = metaHeld
		lease = append(lease, b)
	}
	p.idle = p.idle[:len(p.idle)-k]
	for range int(n) - k {
		lease = append(lease, int32(len(p.meta)))
		p.meta = append(p.meta, metaHeld)
	}
	return lease
}

// takeIdle returns the most recently released idle block, or a fresh one when none is idle. The
// caller has counted it out of free or unlisted.
func (p *BlockPool) takeIdle() int32 {
	if k := len(p.idle); k > 0 {
		b := p.idle[k-1]
		p.idle = p.idle[:k-1]
		return b
	}
	b := int32(len(p.meta))
	p.meta = append(p.meta, 0)
	return b
}

// register offers the full block b under key k to the prefix cache. If another block already
// holds k, b stays private (a duplicate copy) and is freed, not cached, on release.
func (p *BlockPool) register(b int32, k uint64) {
	if p.meta[b].registered() {
		return
	}
	v := p.byKey.Ptr(k)
	if *v != 0 {
		return
	}
	*v = b + 1
	for int(b) >= len(p.key) {
		p.key = append(p.key, 0)
		p.links = append(p.links, lruLinks{})
	}
	p.key[b] = k
	p.meta[b] |= metaRegistered
	if p.OnStored != nil {
		p.OnStored(k)
	}
}

func (p *BlockPool) unregister(b int32) {
	p.meta[b] &^= metaRegistered
	k := p.key[b]
	p.byKey.Delete(k)
	if p.OnRemoved != nil {
		p.OnRemoved(k)
	}
}

// release drops one reference on every block of lease, last block first, and returns lease[:0].
// A block whose last reference goes joins the LRU list when registered. The blocks at positions
// [unmatchableLo, unmatchableHi) of lease are full blocks only their request could ever match and
// that it never will (Request.unindexed): they become unmatchable entries of the LRU list, cached
// and evicted in the same order as registered ones. Any other block is freed.
//
// A block of the unmatchable range has one holder, the request, and is not registered (nothing
// could have found it to pin or register it), so its record is written, not read: a record out
// of cache would stall a read-modify-write, where a plain write does not.
func (p *BlockPool) release(lease []int32, unmatchableLo, unmatchableHi int32) []int32 {
	n := int32(len(lease))
	lo, hi := min(max(unmatchableLo, 0), n), min(max(unmatchableHi, 0), n)
	if hi < lo {
		lo, hi = 0, 0
	}
	p.releaseRange(lease, hi, n)
	for i := hi - 1; i >= lo; i-- {
		b := lease[i]
		p.meta[b] = 0
		p.idle = append(p.idle, b)
	}
	p.unlisted += hi - lo
	p.tailUnlisted += hi - lo
	p.releaseRange(lease, 0, lo)
	return lease[:0]
}

// releaseRange drops one reference on the blocks at positions [from, to) of lease, last first,
// none of them in the lease's unmatchable range: a block whose last reference goes joins the LRU
// list when registered and is freed otherwise.
func (p *BlockPool) releaseRange(lease []int32, from, to int32) {
	for i := to - 1; i >= from; i-- {
		b := lease[i]
		m := p.meta[b] - metaHeld
		p.meta[b] = m
		if m >= metaHeld {
			continue
		}
		if m.registered() {
			p.lruPush(b)
			continue
		}
		p.idle = append(p.idle, b)
		p.free++
	}
}

func (p *BlockPool) lruPush(b int32) {
	p.links[b] = lruLinks{prev: p.lruTail, next: -1, unlistedBefore: p.tailUnlisted}
	p.tailUnlisted = 0
	if p.lruTail >= 0 {
		p.links[p.lruTail].next = b
	} else {
		p.lruHead = b
	}
	p.lruTail = b
	p.numListed++
}

// lruRemove unlinks the listed block b; the unmatchable entries before it now precede its
// successor.
func (p *BlockPool) lruRemove(b int32) {
	l := p.links[b]
	if l.prev >= 0 {
		p.links[l.prev].next = l.next
	} else {
		p.lruHead = l.next
	}
	if l.next >= 0 {
		p.links[l.next].prev = l.prev
		p.links[l.next].unlistedBefore += l.unlistedBefore
	} else {
		p.lruTail = l.prev
		p.tailUnlisted += l.unlistedBefore
	}
	p.numListed--
}

// CheckInvariants verifies the pool's bookkeeping: every block is exactly one of free, active or
// inactive; refs are non-negative; the key index points at registered blocks. holders[b] must
// give the number of leases holding block b, for every block handed out so far (HandedOut) at
// least; a longer holders (up to the capacity) must hold 0 beyond them. It returns a description
// of the first violation.
func (p *BlockPool) CheckInvariants(holders []int32) string {
	if len(holders) < len(p.meta) {
		return "fewer holder counts than blocks handed out"
	}
	state := make([]byte, len(p.meta))
	for _, b := range p.idle {
		if b < 0 || b >= int32(len(p.meta)) || state[b] != 0 {
			return "block on the idle stack twice or out of range"
		}
		state[b] = 'f'
	}
	n, unlisted := int32(0), p.tailUnlisted
	for b := p.lruHead; b >= 0; b = p.links[b].next {
		if state[b] != 0 {
			return "inactive block also idle or listed twice"
		}
		state[b] = 'i'
		n++
		unlisted += p.links[b].unlistedBefore
		if p.links[b].unlistedBefore < 0 {
			return "negative count of unmatchable entries"
		}
	}
	if n != p.numListed {
		return "listed count differs from the LRU list"
	}
	if unlisted != p.unlisted || p.tailUnlisted < 0 || p.free < 0 {
		return "unmatchable entries counted differently in the LRU list and in total"
	}
	if fresh := p.capacity - int32(len(p.meta)); int32(len(p.idle))+fresh != p.free+p.unlisted {
		return "idle and fresh blocks differ from the free blocks and unmatchable entries"
	}
	for b := len(p.meta); b < len(holders); b++ {
		if holders[b] != 0 {
			return "a lease holds a block never handed out"
		}
	}
	registered := 0
	for b := int32(0); b < int32(len(p.meta)); b++ {
		m := p.meta[b]
		if m.refs() != holders[b] {
			return "block refcount differs from the number of leases holding it"
		}
		switch {
		case m.refs() > 0 && state[b] != 0:
			return "held block is also idle or inactive"
		case m.refs() == 0 && state[b] == 0:
			return "unheld block is neither idle nor inactive (leaked)"
		case state[b] == 'i' && !m.registered():
			return "listed inactive block is not registered"
		case state[b] == 'f' && m.registered():
			return "idle block is registered"
		}
		if m.registered() {
			registered++
		}
	}
	for k, b1 := range p.byKey.All {
		b := b1 - 1
		if b < 0 || b >= int32(len(p.meta)) || !p.meta[b].registered() || p.key[b] != k {
			return "key index points at a block that does not hold that key"
		}
		registered--
	}
	if registered != 0 {
		return "a block marked registered is not in the key index"
	}
	return ""
}
