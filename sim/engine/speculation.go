package engine

import "math"

// Speculation is engine.speculation: n-gram speculative decoding (dynosim-spec.md §3.2,
// engine-internals.md §3.4). Each decode round of a request verifies up to Drafts draft tokens
// in the same forward pass as its decode step; the drafts are accepted in order while each
// passes its acceptance test, and the round emits the accepted drafts plus the token the
// verifying pass samples after them, 1 + accepted tokens at the pass's end. The expected tokens
// per round are 1 + Σ_i Π_{j<=i} p_j (p_j = Acceptance[j-1]).
type Speculation struct {
	// Drafts is num_speculative_tokens, the draft tokens proposed per decode round (1..5).
	Drafts int32
	// Acceptance holds, per draft position j (0-based), the probability p_{j+1} in [0, 1] that
	// draft j is accepted given that every draft before it was.
	Acceptance []float64
	// Seed drives the acceptance draws; a request's draws depend only on Seed, its index in the
	// run and its output position, never on batching, so equal seeds give equal runs.
	Seed uint64
}

// draftSpare is the KV blocks draft tokens may take at the start of a pass: the free blocks
// less what every running request needs for all its known tokens, so drafts never take a block
// a request's next tokens need (a draft never causes a preemption or a retraction). 0 without
// speculation.
func (e *Engine) draftSpare() int {
	if e.cfg.Speculation == nil {
		return 0
	}
	n := e.pool.Available()
	for _, ri := range e.running {
		r := &e.reqs[ri]
		n -= max(0, int(ceilDiv(r.known(), e.bs))-len(r.Blocks))
	}
	return max(n, 0)
}

// useSpare takes from *spare the blocks just allocated to request r, which held held blocks
// before, beyond those its known tokens need (its drafts' blocks).
func (e *Engine) useSpare(r *Request, held int, spare *int) {
	*spare = max(0, *spare-max(0, len(r.Blocks)-max(held, int(ceilDiv(r.known(), e.bs)))))
}

// drafts is how many draft tokens request r verifies alongside a pass that computes n of its
// tokens with budget tokens of the pass's budget left and freeBlocks KV blocks it may take
// beyond those its known tokens need (draftSpare): none
// unless speculation is on and the pass is a decode step (one token, the latest output, with
// everything before it in KV); else Drafts, cut so that prompt plus output never passes
// MaxOutput (1 + drafts <= MaxOutput − Generated), to the budget (1 + drafts <= budget: vLLM
// counts draft tokens in max_num_batched_tokens), and to the KV slots the request's lease
// and the free blocks hold (a draft never causes a preemption).
func (e *Engine) drafts(r *Request, n, budget int32, freeBlocks int) int32 {
	s := e.cfg.Speculation
	if s == nil || n != 1 || r.Generated == 0 || r.NumComputed != r.known()-1 {
		return 0
	}
	d := min(s.Drafts, budget-1, r.MaxOutput-r.Generated-1)
	blocks := max(int64(len(r.Blocks)), int64(ceilDiv(r.NumComputed+n, e.bs))) + int64(freeBlocks)
	slots := blocks*int64(e.bs) - int64(r.NumComputed+n)
	return int32(max(0, min(int64(d), slots)))
}

// accept draws how many of the d drafts request ri verified in the pass ending now are
// accepted: draft j (0-based) is accepted when u_j < Acceptance[j], where u_j in [0, 1) is a
// splitmix64 hash of (Seed, ri, Generated, j); drawing stops at the first rejection.
func (e *Engine) accept(ri int32, r *Request, d int32) int32 {
	return e.acceptAt(ri, r.Generated, d)
}

// acceptAt is accept for request ri having emitted gen output tokens. It compares the hash's
// top 53 bits k with acceptBelow (k·2^-53 < p exactly when k < acceptBelow(p)), which gives the
// same draws without a conversion to float. It draws all d drafts and counts the accepted
// ones before the first rejection without a branch on the draws: they are independent hashes
// the processor computes side by side, while a branch on each would be mispredicted about as
// often as a draft is rejected.
func (e *Engine) acceptAt(ri, gen, d int32) int32 {
	base := e.cfg.Speculation.Seed ^ splitmix64(uint64(ri)<<32|uint64(uint32(gen)))
	accepted, run := int32(0), uint64(1)
	for j := int32(0); j < d; j++ {
		h := splitmix64(base ^ uint64(j)*0x9e3779b97f4a7c15)
		// k < acceptBelow[j] exactly when k − acceptBelow[j] wraps below 0 (both are at most
		// 2^53): its top bit is then 1.
		run &= (h>>11 - e.acceptBelow[j]) >> 63
		accepted += int32(run)
	}
	return accepted
}

// acceptBelow is the integer threshold of acceptance rate p for a draw's top 53 bits k:
// k·2^-53 < p (the draw u = k·2^-53 accepts) exactly when k < acceptBelow(p). p·2^53 is exact
// (a power-of-two scaling), so the threshold is its ceiling, within [0, 2^53]; NaN accepts every
// draw, as the float comparison u >= NaN never rejects.
func acceptBelow(p float64) uint64 {
	switch {
	case math.IsNaN(p) || p >= 1:
		return 1 << 53
	case p <= 0:
		return 0
	}
	return uint64(math.Ceil(p * 0x1p53))
}

// splitmix64 is the SplitMix64 finalizer (Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", OOPSLA 2014): a bijective 64-bit mix whose outputs pass BigCrush.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// SpeculationStats are an engine's speculative-decoding counts so far: Rounds decode rounds
// verified at least one draft token, Drafts draft tokens were verified in them and Accepted of
// those were accepted.
type SpeculationStats struct {
	Rounds, Drafts, Accepted int64
}

// Add adds o to s.
func (s *SpeculationStats) Add(o SpeculationStats) {
	s.Rounds += o.Rounds
	s.Drafts += o.Drafts
	s.Accepted += o.Accepted
}

// MeanAcceptedLength is the mean tokens a round that verified drafts emitted,
// 1 + Accepted / Rounds (vLLM's spec-decode metric mean_acceptance_length,
// 1 + num_accepted_tokens / num_drafts); 1 when no round verified a draft.
func (s SpeculationStats) MeanAcceptedLength() float64 {
	if s.Rounds == 0 {
		return 1
	}
	return 1 + float64(s.Accepted)/float64(s.Rounds)
}

// ExpectedAcceptedLength is the expected tokens per decode round with all drafts proposed,
// 1 + Σ_i Π_{j<=i} p_j (dynosim-spec.md §3.2).
func (s *Speculation) ExpectedAcceptedLength() float64 {
	sum, prod := 1.0, 1.0
	for _, p := range s.Acceptance[:min(int(s.Drafts), len(s.Acceptance))] {
		prod *= p
		sum += prod
	}
	return sum
}

// SpeculationStats returns the engine's speculative-decoding counts so far.
func (e *Engine) SpeculationStats() SpeculationStats { return e.spec }
