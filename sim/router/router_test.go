package router

import (
	"math/rand/v2"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

func newTestRouter(t *testing.T, policy config.Policy, slots int, temp float64, seed uint64) *Router {
	t.Helper()
	p, err := New(Options{Policy: policy, Workers: slots, Ranks: 1, BlockSize: 16, OverlapScoreCredit: 1,
		PrefillLoadScale: 1, Temperature: temp, UseOverlap: true, TrackPrefill: true, TrackDecode: true,
		AssumeReuse: true, Seed: seed, Requests: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Overlap against load, by hand. Request: 64 tokens = 4 blocks, hashes 1..4, all cached on slot 0.
// Idle: slot 0 costs max(0, 64/16 − 4) + 0 + 4 = 4, slot 1 costs 4 + 0 + 4 = 8 → slot 0.
// With 160 prefill tokens queued on slot 0: slot 0 costs (160+64)/16 − 4 + 4 = 14 > 8 → slot 1.
func TestKVRouterOverlapVersusLoad(t *testing.T) {
	p := newTestRouter(t, config.PolicyKVRouter, 2, 0, 1)
	hashes := []uint32{1, 2, 3, 4}
	for _, h := range hashes {
		p.Stored(0, uint64(h))
	}
	slot, overlap := p.Route(0, 64, hashes)
	if slot != 0 || overlap != 4 || p.cost[0] != 4 || p.cost[1] != 8 {
		t.Fatalf("idle: slot %d overlap %d costs %v", slot, overlap, p.cost)
	}
	// Fully cached: no prefill tokens charged; 4 live blocks on slot 0.
	if p.ActivePrefillTokens(0) != 0 || p.ActiveDecodeBlocks(0) != 4 {
		t.Fatalf("charges: prefill %d blocks %d", p.ActivePrefillTokens(0), p.ActiveDecodeBlocks(0))
	}
	p.Free(0)
	p.prefill[0] = 160
	slot, _ = p.Route(1, 64, hashes)
	if slot != 1 || p.cost[0] != 14 || p.cost[1] != 8 {
		t.Fatalf("loaded: slot %d costs %v", slot, p.cost)
	}
	// Slot 1 was charged 64 uncached prompt tokens until the first token, and its blocks until free.
	if p.ActivePrefillTokens(1) != 64 || p.ActiveDecodeBlocks(1) != 4 {
		t.Fatalf("slot 1 charges %d/%d", p.ActivePrefillTokens(1), p.ActiveDecodeBlocks(1))
	}
	p.PrefillDone(1)
	p.Free(1)
	if p.ActivePrefillTokens(1) != 0 || p.ActiveDecodeBlocks(1) != 0 {
		t.Fatal("charges not released")
	}
}

// Overlap counts only leading blocks: a hole at block 1 stops the match; removal updates it.
func TestKVRouterLeadingOverlap(t *testing.T) {
	p := newTestRouter(t, config.PolicyKVRouter, 3, 0, 1)
	p.Stored(0, 1)
	p.Stored(0, 3)
	p.Stored(1, 1)
	p.Stored(1, 2)
	p.computeOverlap([]uint32{1, 2, 3})
	if got := p.overlap; got[0] != 1 || got[1] != 2 || got[2] != 0 {
		t.Fatalf("overlap %v, want [1 2 0]", got)
	}
	p.Removed(1, 1)
	p.computeOverlap([]uint32{1, 2, 3})
	if got := p.overlap; got[0] != 1 || got[1] != 0 {
		t.Fatalf("after removal overlap %v", got)
	}
}

// Equal costs are broken at random, reproducibly by seed, and every tied slot gets picked.
func TestKVRouterTiesBySeed(t *testing.T) {
	seq := func(seed uint64) []int {
		p := newTestRouter(t, config.PolicyKVRouter, 4, 0, seed)
		var out []int
		for i := int32(0); i < 40; i++ {
			s, _ := p.Route(i, 16, nil)
			out = append(out, s)
			p.Free(i)
		}
		return out
	}
	a, b, c := seq(7), seq(7), seq(8)
	seen := map[int]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different choices")
		}
		seen[a[i]] = true
	}
	if len(seen) != 4 {
		t.Fatalf("ties reached only slots %v", seen)
	}
	if equal(a, c) {
		t.Fatal("different seeds gave identical tie-breaks")
	}
}

// With temperature > 0 the choice is sampled (not always the argmin), reproducibly by seed.
func TestKVRouterTemperature(t *testing.T) {
	run := func(seed uint64) []int {
		p := newTestRouter(t, config.PolicyKVRouter, 2, 1.0, seed)
		for _, h := range []uint64{1, 2, 3, 4} {
			p.Stored(0, h)
		}
		var out []int
		for i := int32(0); i < 200; i++ {
			s, _ := p.Route(i, 64, []uint32{1, 2, 3, 4}) // slot 0 costs 4, slot 1 costs 8
			out = append(out, s)
			p.Free(i)
		}
		return out
	}
	a := run(3)
	if !equal(a, run(3)) {
		t.Fatal("temperature sampling not reproducible by seed")
	}
	ones := 0
	for _, s := range a {
		ones += s
	}
	// p(slot 1) = e^-1 / (1 + e^-1) ≈ 0.269 → about 54 of 200.
	if ones < 30 || ones > 80 {
		t.Fatalf("slot 1 chosen %d/200 times, want about 54", ones)
	}
}

func TestRoundRobinCyclesWorkersThenRanks(t *testing.T) {
	p, err := New(Options{Policy: config.PolicyRoundRobin, Workers: 2, Ranks: 2, BlockSize: 16, Requests: 8})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i := int32(0); i < 5; i++ {
		s, _ := p.Route(i, 10, nil)
		got = append(got, s)
	}
	// Slots are worker×2+rank: w0r0, w1r0, w0r1, w1r1, then again.
	if !equal(got, []int{0, 2, 1, 3, 0}) {
		t.Fatalf("order %v", got)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Property: with chained block hashes (prompts that branch off a shared tree of prefixes), the
// early-stopping count of prompt blocks not live on a slot equals a count over every block, as
// requests are routed and freed in random order.
func TestAdditionalBlocksStopsAtTheFirstMiss(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const requests = 400
	p, err := New(Options{Policy: config.PolicyKVRouter, Workers: 3, Ranks: 1, BlockSize: 16, OverlapScoreCredit: 1,
		PrefillLoadScale: 1, TrackPrefill: true, TrackDecode: true, AssumeReuse: true, Seed: 1, Requests: requests})
	if err != nil {
		t.Fatal(err)
	}
	// Each prompt follows an earlier prompt for a random number of blocks, then branches.
	var prompts [][]uint32
	next := uint32(1)
	for i := 0; i < requests; i++ {
		var h []uint32
		if i > 0 {
			parent := prompts[rng.IntN(len(prompts))]
			h = append(h, parent[:rng.IntN(len(parent)+1)]...)
		}
		for n := 1 + rng.IntN(12); n > 0; n-- {
			h = append(h, next*0x9E3779B1)
			next++
		}
		prompts = append(prompts, h)
	}
	var routed []int32
	for i := int32(0); i < requests; i++ {
		if len(routed) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(routed))
			p.Free(routed[k])
			routed = append(routed[:k], routed[k+1:]...)
		}
		h := prompts[i]
		blocks := len(h) + rng.IntN(2) // sometimes a partial last block
		for w := 0; w < 3; w++ {
			want := blocks
			for _, x := range h {
				if p.live[w].live(uint64(x)) {
					want--
				}
			}
			if got := p.additionalBlocks(w, blocks, h); got != want {
				t.Fatalf("request %d slot %d: %d additional blocks, full count %d", i, w, got, want)
			}
		}
		p.Route(i, blocks*16, h)
		routed = append(routed, i)
	}
}

// Property: giving Route only the leading prompt blocks other requests also hold (the rest are
// unique to the request) changes nothing: over prompts that branch off a shared tree and end in
// blocks of their own, a router given the shared hashes routes every request to the same slot
// and keeps the same live block totals as one tracking every block by hash, as requests are
// routed and freed in random order.
func TestUniqueTailsNeedNoTracking(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const requests = 600
	opt := Options{Policy: config.PolicyKVRouter, Workers: 4, Ranks: 1, BlockSize: 16, OverlapScoreCredit: 1,
		PrefillLoadScale: 1, TrackPrefill: true, TrackDecode: true, AssumeReuse: true, Seed: 3, Requests: requests}
	all, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	told, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	// Shared trunks, then a unique tail per request: shared[i] is the length of the trunk part.
	var trunks [][]uint32
	next := uint32(1)
	fresh := func() uint32 { next++; return next * 0x9E3779B1 }
	for range 40 {
		var h []uint32
		if len(trunks) > 0 && rng.IntN(2) == 0 {
			parent := trunks[rng.IntN(len(trunks))]
			h = append(h, parent[:rng.IntN(len(parent)+1)]...)
		}
		for n := 1 + rng.IntN(6); n > 0; n-- {
			h = append(h, fresh())
		}
		trunks = append(trunks, h)
	}
	var routed []int32
	uniqueTotal := 0
	for i := int32(0); i < requests; i++ {
		if len(routed) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(routed))
			all.Free(routed[k])
			told.Free(routed[k])
			routed = append(routed[:k], routed[k+1:]...)
		}
		trunk := trunks[rng.IntN(len(trunks))]
		h := append([]uint32(nil), trunk[:rng.IntN(len(trunk)+1)]...)
		shared := len(h)
		tail := rng.IntN(8)
		for range tail {
			h = append(h, fresh())
		}
		uniqueTotal += tail
		blocks := len(h) + rng.IntN(2)
		a, _ := all.Route(i, blocks*16, h)
		b, _ := told.Route(i, blocks*16, h[:shared])
		if a != b {
			t.Fatalf("request %d: slot %d tracking every block, %d told %d shared of %d", i, a, b, shared, len(h))
		}
		for w := 0; w < opt.Workers; w++ {
			if x, y := all.ActiveDecodeBlocks(w), told.ActiveDecodeBlocks(w); x != y {
				t.Fatalf("request %d slot %d: %d live blocks tracking every block, %d told the shared count", i, w, x, y)
			}
		}
		routed = append(routed, i)
	}
	if uniqueTotal < requests {
		t.Fatalf("only %d unique blocks: the property was not exercised", uniqueTotal)
	}
}

// Property: the dense part of the overlap index and the live counts changes nothing, nor do
// rings in their place: a router whose keys below DenseKeys index slices (or rings) places every request on the same slot with the same
// overlap and keeps the same live totals as one that hashes every key, under random KV events,
// routing and frees (keys on both sides of the bound).
func TestDenseKeysRouteAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const requests = 500
	opt := Options{Policy: config.PolicyKVRouter, Workers: 3, Ranks: 2, BlockSize: 16, OverlapScoreCredit: 1,
		PrefillLoadScale: 1, TrackPrefill: true, TrackDecode: true, AssumeReuse: true, UseOverlap: true, Seed: 5,
		Requests: requests}
	hashed, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.DenseKeys = 40
	dense, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	// Past the dense bounds, with rings of 8 and 2 slots: most keys share a slot.
	opt.DenseKeys, opt.RingSlots = MaxDenseKeys+1, 8
	ring, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	// Hashed with 64-bit slot masks instead of 8-bit ones.
	opt.DenseKeys, opt.RingSlots = 0, 0
	opt.wideMasks = true
	wide, err := New(opt)
	opt.wideMasks = false
	if err != nil {
		t.Fatal(err)
	}
	if wide.index.wide == nil || hashed.index.narrow == nil {
		t.Fatal("the reference router has no 64-bit masks, or the others no 8-bit ones")
	}
	if ring.index.ringSlots() != 8 || ring.live[0].counts.RingSlots() != 2 {
		t.Fatalf("ring sizes %d and %d, want 8 and 2", ring.index.ringSlots(), ring.live[0].counts.RingSlots())
	}
	// Prompts walk a binary tree of 80 keys (key k's children are 2k+1 and 2k+2), so prefixes
	// are shared and keys fall on both sides of the dense bound.
	path := func() []uint32 {
		var h []uint32
		for k := uint32(0); k < 80 && rng.IntN(6) != 0; k = 2*k + 1 + uint32(rng.IntN(2)) {
			h = append(h, k)
		}
		return h
	}
	var routed []int32
	for i := int32(0); i < requests; i++ {
		for range rng.IntN(4) {
			slot, k := rng.IntN(6), uint64(rng.IntN(80))
			if rng.IntN(2) == 0 {
				hashed.Stored(slot, k)
				dense.Stored(slot, k)
				ring.Stored(slot, k)
				wide.Stored(slot, k)
			} else {
				hashed.Removed(slot, k)
				dense.Removed(slot, k)
				ring.Removed(slot, k)
				wide.Removed(slot, k)
			}
		}
		if len(routed) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(routed))
			hashed.Free(routed[k])
			dense.Free(routed[k])
			ring.Free(routed[k])
			wide.Free(routed[k])
			routed = append(routed[:k], routed[k+1:]...)
		}
		h := path()
		isl := 16*len(h) + rng.IntN(16)
		a, oa := hashed.Route(i, isl, h)
		b, ob := dense.Route(i, isl, h)
		c, oc := ring.Route(i, isl, h)
		d, od := wide.Route(i, isl, h)
		if a != b || oa != ob || a != c || oa != oc || a != d || oa != od {
			t.Fatalf("request %d: slot %d overlap %d hashed, slot %d overlap %d dense, slot %d overlap %d ring, slot %d overlap %d wide",
				i, a, oa, b, ob, c, oc, d, od)
		}
		for w := 0; w < 6; w++ {
			x, y, z, u := hashed.ActiveDecodeBlocks(w), dense.ActiveDecodeBlocks(w), ring.ActiveDecodeBlocks(w), wide.ActiveDecodeBlocks(w)
			if x != y || x != z || x != u {
				t.Fatalf("request %d slot %d: %d live blocks hashed, %d dense, %d ring, %d wide", i, w, x, y, z, u)
			}
		}
		routed = append(routed, i)
	}
	if hashed.index.len() != dense.index.len() || hashed.index.len() != ring.index.len() || hashed.index.len() != wide.index.len() || hashed.index.len() == 0 {
		t.Fatalf("overlap index holds %d keys hashed, %d dense, %d ring, %d wide", hashed.index.len(), dense.index.len(), ring.index.len(), wide.index.len())
	}
}
