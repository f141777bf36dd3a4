package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// listPool is the reference the pool's unmatchable entries must agree with: every cached block,
// matchable or not, listed by block id in one LRU list (the pool's representation before
// unmatchable entries were counted instead of listed). Blocks registered outside the key index
// are flagged unmapped; a request maps its own before it could look them up.
type listPool struct {
	capacity           int
	refs               []int32
	key                []uint64
	registered, mapped []bool
	lru                []int32 // inactive registered blocks, least recently released first
	free               []int32
	byKey              map[uint64]int32
	stored, removed    []uint64
}

func newListPool(capacity int) *listPool {
	return &listPool{capacity: capacity, byKey: map[uint64]int32{}}
}

func (p *listPool) available() int { return p.capacity - len(p.refs) + len(p.free) + len(p.lru) }

func (p *listPool) allocate(n int32, lease []int32) []int32 {
	for ; n > 0; n-- {
		var b int32
		switch {
		case len(p.free) > 0:
			b = p.free[len(p.free)-1]
			p.free = p.free[:len(p.free)-1]
		case len(p.refs) < p.capacity:
			b = int32(len(p.refs))
			p.refs = append(p.refs, 0)
			p.key = append(p.key, 0)
			p.registered = append(p.registered, false)
			p.mapped = append(p.mapped, false)
		default:
			b = p.lru[0]
			p.lru = p.lru[1:]
			p.registered[b] = false
			if p.mapped[b] {
				p.mapped[b] = false
				delete(p.byKey, p.key[b])
				p.removed = append(p.removed, p.key[b])
			}
		}
		p.refs[b] = 1
		lease = append(lease, b)
	}
	return lease
}

func (p *listPool) register(b int32, k uint64, mapped bool) {
	if p.registered[b] {
		return
	}
	if mapped {
		if _, ok := p.byKey[k]; ok {
			return
		}
		p.byKey[k] = b
		p.stored = append(p.stored, k)
	}
	p.key[b], p.registered[b], p.mapped[b] = k, true, mapped
}

// mapUnique indexes the unmapped registered blocks of lease, in order.
func (p *listPool) mapUnique(lease []int32) {
	for _, b := range lease {
		if !p.registered[b] || p.mapped[b] {
			continue
		}
		if _, ok := p.byKey[p.key[b]]; ok {
			p.registered[b] = false
			continue
		}
		p.byKey[p.key[b]] = b
		p.mapped[b] = true
		p.stored = append(p.stored, p.key[b])
	}
}

func (p *listPool) release(lease []int32) []int32 {
	for i := len(lease) - 1; i >= 0; i-- {
		b := lease[i]
		if p.refs[b]--; p.refs[b] > 0 {
			continue
		}
		if p.registered[b] {
			p.lru = append(p.lru, b)
		} else {
			p.free = append(p.free, b)
		}
	}
	return lease[:0]
}

func (p *listPool) lookup(r *Request, n int32) (hits, inactive int32) {
	for ; hits < n; hits++ {
		k, ok := r.lookupKey(hits)
		if !ok {
			break
		}
		b, ok := p.byKey[k]
		if !ok {
			break
		}
		if p.refs[b] == 0 {
			inactive++
		}
	}
	return hits, inactive
}

func (p *listPool) pin(r *Request, n int32, lease []int32) []int32 {
	for j := int32(0); j < n; j++ {
		k, _ := r.lookupKey(j)
		b := p.byKey[k]
		if p.refs[b] == 0 {
			p.lru = slices.Delete(p.lru, slices.Index(p.lru, b), slices.Index(p.lru, b)+1)
		}
		p.refs[b]++
		lease = append(lease, b)
	}
	return lease
}

// A pool that counts unmatchable entries instead of listing them behaves as one that lists every
// cached block: random admissions (prefix lookups and pins), block registrations, completions and
// preemptions of requests with shared and unique blocks give the same lookups, the same counts of
// available and inactive blocks, the same matchable keys and the same stored and evicted keys in
// the same order; and no block is leaked (CheckInvariants against the leases) after every step.
func TestUnmatchableEntriesMatchAListedLRU(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkUnmatchableAgainstList(t, seed) })
	}
}

func checkUnmatchableAgainstList(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	capacity := 4 + rng.IntN(24)
	p, ref := NewBlockPool(capacity, 1+rng.IntN(40)), newListPool(capacity)
	var stored, removed []uint64
	p.OnStored = func(k uint64) { stored = append(stored, k) }
	p.OnRemoved = func(k uint64) { removed = append(removed, k) }

	// Requests: a shared prefix of keys from a small tree (so prefixes of different requests
	// match), then unique blocks; each block of the lease is a full block, plus one partial.
	const nReqs = 24
	reqs := make([]Request, nReqs)
	refLeases := make([][]int32, nReqs)
	state := make([]byte, nReqs) // 0 waiting, 'r' running, 'd' done
	for i := range reqs {
		shared := rng.IntN(4)
		keys := make([]uint32, shared)
		for j := range keys {
			keys[j] = uint32(1 + 2*j + rng.IntN(2))
		}
		full := int32(shared + rng.IntN(4))
		reqs[i].Reset(int32(i), 0, 0, 0, keys, full, int32(shared), nil)
	}
	holders := func() []int32 {
		h := make([]int32, capacity)
		for i := range reqs {
			for _, b := range reqs[i].Blocks {
				h[b]++
			}
		}
		return h
	}
	for step := range 400 {
		i := rng.IntN(nReqs)
		r := &reqs[i]
		var what string
		switch state[i] {
		case 0: // admit: pin the cached prefix, allocate the rest and a partial block
			what = "admit"
			hits, inactive := p.lookup(r, r.FullBlocks)
			rh, ri := ref.lookup(r, r.FullBlocks)
			if hits != rh || inactive != ri {
				t.Fatalf("step %d: request %d looks up %d hits (%d inactive), the listed pool %d (%d)", step, i, hits, inactive, rh, ri)
			}
			need := r.FullBlocks + 1 - hits
			if int(need+inactive) > p.Available() {
				continue
			}
			r.Blocks = p.allocate(need, p.pin(r, hits, r.Blocks))
			refLeases[i] = ref.allocate(need, ref.pin(r, hits, refLeases[i]))
			r.numRegistered = hits
			state[i] = 'r'
		case 'r':
			switch k := rng.IntN(4); {
			case r.numRegistered < r.FullBlocks && k < 2: // fill the next block
				what = "register"
				j := r.numRegistered
				unique := r.Preemptions == 0 && j >= r.SharedBlocks
				if !unique {
					p.register(r.Blocks[j], r.keyAt(j))
				}
				ref.register(refLeases[i][j], r.keyAt(j), !unique)
				r.numRegistered++
			case k == 2: // preempt: index the unique blocks, release, wait to be readmitted
				what = "preempt"
				lo, hi := r.unindexed()
				for j := lo; j < hi; j++ {
					p.register(r.Blocks[j], UniqueBlockKey(r.Index, j))
				}
				r.Blocks = p.release(r.Blocks, 0, 0)
				ref.mapUnique(refLeases[i])
				refLeases[i] = ref.release(refLeases[i])
				r.Preemptions++
				r.numRegistered = 0
				state[i] = 0
			default: // complete
				what = "complete"
				lo, hi := r.unindexed()
				r.Blocks = p.release(r.Blocks, lo, hi)
				refLeases[i] = ref.release(refLeases[i])
				state[i] = 'd'
			}
		default:
			continue
		}
		if p.Available() != ref.available() || p.Inactive() != len(ref.lru) {
			t.Fatalf("step %d (%s %d): available %d, inactive %d; the listed pool %d, %d", step, what, i,
				p.Available(), p.Inactive(), ref.available(), len(ref.lru))
		}
		if !slices.Equal(stored, ref.stored) || !slices.Equal(removed, ref.removed) {
			t.Fatalf("step %d (%s %d): stored %v removed %v; the listed pool %v, %v", step, what, i, stored, removed, ref.stored, ref.removed)
		}
		for k := range ref.byKey {
			if !p.Contains(k) {
				t.Fatalf("step %d: key %#x matchable in the listed pool only", step, k)
			}
		}
		if n := p.byKey.Len(); n != len(ref.byKey) {
			t.Fatalf("step %d: %d matchable keys, the listed pool %d", step, n, len(ref.byKey))
		}
		if msg := p.CheckInvariants(holders()); msg != "" {
			t.Fatalf("step %d (%s %d): %s", step, what, i, msg)
		}
	}
}
