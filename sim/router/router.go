// Package router places arriving requests on the rank schedulers of a worker role: round robin,
// random, least loaded, or KV-aware (kv_router: prefix overlap against load). Start with Router.
package router

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/servesweep/servesweep/sim/config"
)

// MaxSlots is the most rank schedulers (workers × attention-DP ranks) one Router can route over:
// the overlap index keeps one bit per slot in a uint64.
const MaxSlots = 64

// Options configure a Router.
type Options struct {
	// Policy is the placement policy (config.Policies).
	Policy config.Policy
	// Workers and Ranks give the slots: slot = worker × Ranks + rank.
	Workers, Ranks int
	// BlockSize is the KV block size in tokens of the routed pool.
	BlockSize int
	// OverlapScoreCredit (>= 0, default 1), PrefillLoadScale (>= 0, default 1) and
	// Temperature (>= 0, default 0) are the kv_router knobs (dynosim-spec.md §3.3).
	OverlapScoreCredit, PrefillLoadScale, Temperature float64
	// UseOverlap credits cached blocks (kv_router; off for the decode pool of disaggregated serving).
	UseOverlap bool
	// TrackPrefill charges prompt tokens to a slot until the request's first token.
	TrackPrefill bool
	// TrackDecode charges the request's prompt blocks to a slot until it is freed.
	TrackDecode bool
	// AssumeReuse counts a block live on a slot once however many requests hold it; otherwise
	// every request's blocks count separately.
	AssumeReuse bool
	// Seed drives tie-breaking, temperature sampling and the random policy.
	Seed uint64
	// Requests is the number of requests of the run (per-request state is kept in flat slices).
	Requests int
	// DenseKeys is the number of distinct shared block ids of the workload
	// (traffic.BlockSet.Distinct): the overlap index and the live block counts index keys below
	// it by slices instead of hashing, within MaxDenseKeys and MaxDenseLive. 0 hashes every key;
	// routing does not depend on it.
	DenseKeys int
	// RingSlots, when > 0, sizes the rings (blockmap.Table.ResetRing) that replace the dense
	// overlap index beyond MaxDenseKeys and the dense live counts beyond MaxDenseLive: the index's
	// ring has RingSlots slots, each slot's live counts a quarter of that. 0: hash beyond the
	// bounds. Routing does not depend on it.
	RingSlots int
	// PrefillMs, when set, is router.prefill_load_model aic: the predicted time in ms of a
	// prefill of newTokens uncached prompt tokens after cachedTokens cached ones on a slot, and
	// Now the current virtual time in ms. The oldest active prefill of each slot then counts in
	// the prefill load with its tokens decayed linearly over that time (Router). nil: load
	// model none, a prefill counts whole until its first token.
	PrefillMs func(newTokens, cachedTokens int) float64
	Now       func() float64

	// wideMasks gives the overlap index 64-bit slot masks however few the slots: the reference
	// the 8-bit masks of up to narrowSlots slots must match (set by tests).
	wideMasks bool
}

// Router routes requests to rank slots and tracks what it placed: active prefill tokens (charged
// at routing, released at first token), live prompt blocks per slot (released when the request is
// freed) and, for kv_router, an overlap index of which slot caches which KV block, learned from the
// engines' stored/removed events (engine-internals.md §4).
//
// kv_router cost of slot w for a request of ISL tokens and prompt blocks B (lower wins):
//
//	prefill = (active_prefill_tokens(w) + ISL) / block_size
//	cost    = prefill_load_scale × max(0, prefill − overlap_score_credit × overlap_blocks(w))
//	        + active_decode_blocks(w) + blocks of the request not live on w
//
// With temperature 0 the lowest cost wins and ties are broken uniformly at random (seeded). With
// temperature t > 0, slot i is drawn with probability ∝ exp(−(c_i − c_min) / ((c_max − c_min)·t)),
// uniform when all costs are equal. random draws a slot uniformly; least_loaded takes the slot
// with the fewest active tokens (prefill tokens plus live blocks × block size), lowest slot first.
//
// With the aic prefill-load model (Options.PrefillMs) a routed request's charge, its uncached
// prompt tokens, decays in kv_router's active_prefill_tokens while it is the oldest active
// prefill of its slot: charge × max(0, 1 − elapsed / expected), where expected is PrefillMs of
// the request and elapsed runs from when it became the oldest (its routing, or the first token
// of the prefill before it); later prefills count whole until they become the oldest
// (engine-internals.md §3.5: 100 tokens, 10 s expected, 5 s elapsed → 50).
type Router struct {
	opt   Options
	slots int
	rng   *rand.Rand
	rr    int

	index      *slotMasks   // block key → bitmask of slots caching it
	prefill    []int64      // active prefill tokens per slot
	live       []liveCounts // per slot: prompt block key → requests holding it
	liveCount  []int64      // live decode blocks per slot
	cost       []float64
	overlap    []int32
	reqSlot    []int32
	reqPrefill []int64
	reqBlocks  []int32
	reqKeys    [][]uint32

	// aic prefill-load model: per slot the active prefills in routing order (queue[w][head[w]:],
	// finished ones skipped lazily) and when the oldest became the oldest; per request the
	// predicted prefill time in ms.
	queue     [][]int32
	head      []int
	oldestAt  []float64
	reqPrefMs []float64

	// off marks, per worker, the workers that take no new request (not started yet, starting,
	// draining or removed by the planner); nil when every worker takes requests. eligible
	// counts the slots of the workers that do.
	off      []bool
	eligible int
}

// New validates opt and returns a Router.
func New(opt Options) (*Router, error) {
	slots := opt.Workers * opt.Ranks
	switch {
	case slots <= 0:
		return nil, fmt.Errorf("router: no workers to route to")
	case opt.BlockSize <= 0:
		return nil, fmt.Errorf("router: block size must be > 0")
	case opt.Policy == config.PolicyKVRouter && slots > MaxSlots:
		return nil, fmt.Errorf("kv_router routes over at most %d workers × attention-DP ranks, got %d", MaxSlots, slots)
	}
	switch opt.Policy {
	case config.PolicyRoundRobin, config.PolicyKVRouter, config.PolicyRandom, config.PolicyLeastLoaded:
	default:
		return nil, fmt.Errorf("router: unknown policy %q", opt.Policy)
	}
	p := &Router{
		opt: opt, slots: slots, rng: rand.New(rand.NewPCG(opt.Seed, 0x726f75746572)),
		prefill: make([]int64, slots), liveCount: make([]int64, slots),
		cost: make([]float64, slots), overlap: make([]int32, slots),
		reqSlot: make([]int32, opt.Requests), reqPrefill: make([]int64, opt.Requests),
		reqBlocks: make([]int32, opt.Requests), reqKeys: make([][]uint32, opt.Requests),
	}
	dense := min(max(opt.DenseKeys, 0), MaxDenseKeys)
	if opt.UseOverlap {
		ring := 0
		if opt.DenseKeys > dense && opt.RingSlots > 0 {
			ring = opt.RingSlots
		}
		p.index = newSlotMasks(slots, dense, ring, opt.wideMasks)
	}
	if opt.TrackDecode && opt.AssumeReuse {
		p.live = make([]liveCounts, slots)
		for w := range p.live {
			switch {
			case slots*dense <= MaxDenseLive:
				p.live[w].reset(dense)
			case opt.RingSlots > 0:
				p.live[w].resetRing(max(opt.RingSlots/4, 1))
			}
		}
	}
	if opt.PrefillMs != nil {
		if opt.Now == nil {
			return nil, fmt.Errorf("router: the aic prefill-load model needs a clock")
		}
		p.queue, p.head, p.oldestAt = make([][]int32, slots), make([]int, slots), make([]float64, slots)
		p.reqPrefMs = make([]float64, opt.Requests)
	}
	return p, nil
}

// SetAccepting says whether worker takes new requests: an autoscaled pool routes only to its
// active workers, not to those starting up, draining or removed. Every worker accepts until
// this is called; at least one must accept whenever Route is called.
func (p *Router) SetAccepting(worker int, on bool) {
	if p.off == nil {
		if on {
			return
		}
		p.off = make([]bool, p.opt.Workers)
		p.eligible = p.slots
	}
	if p.off[worker] == !on {
		return
	}
	p.off[worker] = !on
	if on {
		p.eligible += p.opt.Ranks
	} else {
		p.eligible -= p.opt.Ranks
	}
}

// accepts reports whether slot's worker takes new requests.
func (p *Router) accepts(slot int) bool { return p.off == nil || !p.off[slot/p.opt.Ranks] }

// MaxDenseKeys bounds the dense part of the overlap index (2^22 keys: 4 MB of 8-bit slot masks
// for up to 8 slots, 32 MB of 64-bit ones beyond).
const MaxDenseKeys = 1 << 22

// MaxDenseLive bounds the dense parts of the per-slot live block counts together, in keys
// (slots × DenseKeys; 2^22: 4 MB of 8-bit counters, liveCounts, so that 8 slots of a workload
// with 500,000 shared blocks stay dense): beyond it they hash or use rings. Few keys
// are live on a slot at once, so for a large workload the hashed counts take far less memory for
// a little more time.
const MaxDenseLive = 1 << 22

// Stored records that slot now caches the block with key k (a KV event at pass end).
func (p *Router) Stored(slot int, k uint64) {
	if p.index != nil {
		p.index.set(k, slot)
	}
}

// Removed records that slot evicted the block with key k.
func (p *Router) Removed(slot int, k uint64) {
	if p.index == nil {
		return
	}
	p.index.unset(k, slot)
}

// Route places request req, whose prompt is isl tokens, and returns its slot and the number of
// leading prompt blocks that slot caches. promptKeys name the prompt's leading full blocks that
// another request of the workload may also hold (engine.Request.Keys, cut to the prompt); the
// prompt's later blocks are unique to req, so no other request can find them live on a slot and
// req cannot find them live before it is routed: they count in the live totals by number, not
// by key. The request's loads are charged until PrefillDone and Free.
func (p *Router) Route(req int32, isl int, promptKeys []uint32) (slot int, overlapBlocks int) {
	bs := p.opt.BlockSize
	blocks := (isl + bs - 1) / bs
	if p.index != nil {
		p.computeOverlap(promptKeys)
	}
	switch p.opt.Policy {
	case config.PolicyRoundRobin:
		// Cycle workers first, then each worker's ranks: worker k mod W, rank (k / W) mod R.
		// Workers that take no request are skipped in the cycle.
		for range p.slots {
			w, r := p.rr%p.opt.Workers, (p.rr/p.opt.Workers)%p.opt.Ranks
			slot = w*p.opt.Ranks + r
			p.rr = (p.rr + 1) % p.slots
			if p.accepts(slot) {
				break
			}
		}
	case config.PolicyRandom:
		if p.off == nil {
			slot = p.rng.IntN(p.slots)
			break
		}
		slot = p.nthAccepting(p.rng.IntN(p.eligible))
	case config.PolicyLeastLoaded:
		best := int64(math.MaxInt64)
		for w := 0; w < p.slots; w++ {
			if !p.accepts(w) {
				continue
			}
			if load := p.prefill[w] + p.liveCount[w]*int64(bs); load < best {
				best, slot = load, w
			}
		}
	case config.PolicyKVRouter:
		for w := 0; w < p.slots; w++ {
			c := 0.0
			if p.opt.TrackPrefill {
				pre := (p.activePrefill(w) + float64(isl)) / float64(bs)
				if p.index != nil {
					pre -= p.opt.OverlapScoreCredit * float64(p.overlap[w])
				}
				c += p.opt.PrefillLoadScale * max(0, pre)
			}
			if p.opt.TrackDecode {
				c += float64(p.liveCount[w]) + float64(p.additionalBlocks(w, blocks, promptKeys))
			}
			p.cost[w] = c
		}
		slot = p.pick()
	}
	if p.index != nil {
		overlapBlocks = int(p.overlap[slot])
	}
	p.reqSlot[req] = int32(slot)
	if p.opt.TrackPrefill {
		charge := int64(isl - overlapBlocks*bs)
		p.prefill[slot] += charge
		p.reqPrefill[req] = charge
		if p.queue != nil && charge > 0 {
			cached := overlapBlocks * bs
			p.reqPrefMs[req] = p.opt.PrefillMs(int(charge), cached)
			if p.head[slot] == len(p.queue[slot]) {
				p.queue[slot], p.head[slot] = p.queue[slot][:0], 0
				p.oldestAt[slot] = p.opt.Now()
			}
			p.queue[slot] = append(p.queue[slot], req)
		}
	}
	if p.opt.TrackDecode {
		p.reqBlocks[req] = int32(blocks)
		p.reqKeys[req] = promptKeys
		p.addLive(slot, blocks, promptKeys, +1)
	}
	return slot, overlapBlocks
}

// nthAccepting returns the n-th (0-based) slot whose worker takes requests.
func (p *Router) nthAccepting(n int) int {
	for w := 0; w < p.slots; w++ {
		if p.accepts(w) {
			if n == 0 {
				return w
			}
			n--
		}
	}
	return p.slots - 1
}

// computeOverlap fills p.overlap with, per slot, the count of leading keys it caches.
func (p *Router) computeOverlap(keys []uint32) {
	alive := uint64(math.MaxUint64)
	if p.slots < 64 {
		alive = 1<<uint(p.slots) - 1
	}
	for w := range p.overlap {
		p.overlap[w] = 0
	}
	depth := int32(0)
	for _, k := range keys {
		m := p.index.get(uint64(k)) & alive
		for dead := alive &^ m; dead != 0; dead &= dead - 1 {
			p.overlap[trailingZeros(dead)] = depth
		}
		alive = m
		depth++
		if alive == 0 {
			return
		}
	}
	for ; alive != 0; alive &= alive - 1 {
		p.overlap[trailingZeros(alive)] = depth
	}
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// additionalBlocks counts the request's prompt blocks not live on slot w: without AssumeReuse all
// of them; with it, the full blocks whose key is not live there, plus a partial last block.
// keys are the shared leading block keys Route was given; the blocks after them are unique to
// the request and not live anywhere before it is routed.
// Block keys name chained hashes (each names its whole prefix) and a routed request makes all
// its full prompt blocks live, so the blocks live on a slot are closed under prefixes: the live
// ones among the request's keys are a leading run, and counting stops at the first that is not
// live.
func (p *Router) additionalBlocks(w, blocks int, keys []uint32) int {
	if !p.opt.AssumeReuse {
		return blocks
	}
	live := &p.live[w]
	hits := 0
	for _, k := range keys {
		if !live.live(uint64(k)) {
			break
		}
		hits++
	}
	return blocks - hits
}

// addLive charges (sign +1) or releases (−1) a request's prompt blocks on slot w: the tracked
// leading keys by key, the rest (unique blocks and a partial last block) by count.
func (p *Router) addLive(w, blocks int, keys []uint32, sign int32) {
	if !p.opt.AssumeReuse {
		p.liveCount[w] += int64(sign) * int64(blocks)
		return
	}
	live := &p.live[w]
	if sign > 0 {
		for _, k := range keys {
			if live.inc(uint64(k)) {
				p.liveCount[w]++
			}
		}
	} else {
		for _, k := range keys {
			if live.dec(uint64(k)) {
				p.liveCount[w]--
			}
		}
	}
	// Unique blocks and a partial last block are never shared.
	p.liveCount[w] += int64(sign) * int64(blocks-len(keys))
}

// pick chooses a slot from p.cost: the argmin with seeded uniform tie-breaking, or a
// temperature-scaled softmin sample.
// Slots whose worker takes no request are left out.
func (p *Router) pick() int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for w, c := range p.cost {
		if p.accepts(w) {
			lo, hi = math.Min(lo, c), math.Max(hi, c)
		}
	}
	if p.opt.Temperature > 0 && hi > lo {
		total := 0.0
		for w, c := range p.cost {
			e := 0.0
			if p.accepts(w) {
				e = math.Exp(-(c - lo) / ((hi - lo) * p.opt.Temperature))
			}
			p.cost[w] = e
			total += e
		}
		x := p.rng.Float64() * total
		last := 0
		for w, e := range p.cost {
			if e > 0 {
				last = w
			}
			if x < e {
				return w
			}
			x -= e
		}
		if p.off == nil {
			return p.slots - 1
		}
		return last
	}
	if p.opt.Temperature > 0 {
		if p.off == nil {
			return p.rng.IntN(p.slots)
		}
		return p.nthAccepting(p.rng.IntN(p.eligible))
	}
	slot, ties := 0, 0
	for w, c := range p.cost {
		if c != lo || !p.accepts(w) {
			continue
		}
		ties++
		if ties == 1 || p.rng.IntN(ties) == 0 {
			slot = w
		}
	}
	return slot
}

// PrefillDone releases the prefill tokens charged for req (its first token was produced).
func (p *Router) PrefillDone(req int32) {
	if c := p.reqPrefill[req]; c != 0 {
		w := p.reqSlot[req]
		p.prefill[w] -= c
		p.reqPrefill[req] = 0
		if p.queue != nil {
			p.skipDone(int(w))
		}
	}
}

// skipDone drops finished prefills from the front of slot w's queue; when the oldest changes,
// the new oldest's decay starts now.
func (p *Router) skipDone(w int) {
	q, h := p.queue[w], p.head[w]
	moved := false
	for h < len(q) && p.reqPrefill[q[h]] == 0 {
		h++
		moved = true
	}
	p.head[w] = h
	if moved && h < len(q) {
		p.oldestAt[w] = p.opt.Now()
	}
}

// activePrefill is slot w's active prefill tokens as kv_router's cost counts them: every charge
// whole, except under the aic load model the oldest's, decayed over its predicted prefill time.
func (p *Router) activePrefill(w int) float64 {
	load := float64(p.prefill[w])
	if p.queue == nil || p.head[w] == len(p.queue[w]) {
		return load
	}
	oldest := p.queue[w][p.head[w]]
	c := float64(p.reqPrefill[oldest])
	left := 0.0
	if exp := p.reqPrefMs[oldest]; exp > 0 {
		left = c * max(0, 1-(p.opt.Now()-p.oldestAt[w])/exp)
	}
	return load - c + min(left, c)
}

// Free releases everything still charged for req (it finished or left the pool).
func (p *Router) Free(req int32) {
	p.PrefillDone(req)
	if b := p.reqBlocks[req]; b != 0 {
		p.addLive(int(p.reqSlot[req]), int(b), p.reqKeys[req], -1)
		p.reqBlocks[req] = 0
		p.reqKeys[req] = nil
	}
}

// ActivePrefillTokens returns the prefill tokens charged to slot (whole, without the aic decay).
func (p *Router) ActivePrefillTokens(slot int) int64 { return p.prefill[slot] }

// PrefillLoad returns slot's active prefill tokens as kv_router's cost counts them now: with the
// aic prefill-load model the oldest prefill decayed (Router), else ActivePrefillTokens.
func (p *Router) PrefillLoad(slot int) float64 { return p.activePrefill(slot) }

// ActiveDecodeBlocks returns the live prompt blocks charged to slot.
func (p *Router) ActiveDecodeBlocks(slot int) int64 { return p.liveCount[slot] }
