package engine

import (
	"fmt"
	"math/bits"

	"github.com/servesweep/servesweep/sim/timing"
)

// Style is a scheduler style: which serving engine's batching a rank follows.
type Style uint8

// Scheduler styles (engine-internals.md §1.2–1.3).
const (
	// StyleVLLM serves the running set first (decode steps and continuing prefill chunks) within
	// the token budget, then admits FCFS from the waiting queue with head-of-line blocking, and
	// preempts the latest admitted request (recompute) when KV runs out.
	StyleVLLM Style = iota
	// StyleTRTLLM is TensorRT-LLM's in-flight batching: vLLM's order, prefill chunks cut at
	// whole KV blocks (a context chunk is a multiple of tokens_per_block unless it ends the
	// prompt), and Config.NoEvict for guaranteed_no_evict.
	StyleTRTLLM
	// StyleSGLang is SGLang's prefill-first scheduler: a pass is either a prefill batch admitted
	// under a conservative estimate of future decode KV, or a decode step of every running
	// request, retracting the request with the fewest output tokens when KV runs out (see
	// sglang.go).
	StyleSGLang
)

// String is the style's backend name: vllm, trtllm or sglang.
func (s Style) String() string {
	switch s {
	case StyleTRTLLM:
		return "trtllm"
	case StyleSGLang:
		return "sglang"
	}
	return "vllm"
}

// Config is the shape of one attention-DP rank scheduler.
type Config struct {
	// Style is the scheduler style; the zero value is StyleVLLM.
	Style Style
	// NoEvict (StyleTRTLLM, capacity policy guaranteed_no_evict) admits a request only when the
	// KV blocks of its whole prompt and output, ceil((prompt + max output) / BlockSize) less the
	// blocks it finds held by running requests, fit in the pool after every running request's
	// remaining reservation; running requests are then never preempted (engine-internals.md §1.2,
	// TRT-LLM mode).
	NoEvict bool
	// SGLang holds the StyleSGLang parameters; other styles ignore it.
	SGLang SGLangConfig
	// MaxBatchedTokens is the token budget of one pass (> 0); StyleSGLang uses
	// SGLang.ChunkedPrefillSize instead.
	MaxBatchedTokens int
	// MaxSequences caps the running set (> 0).
	MaxSequences int
	// BlockSize is tokens per KV block (> 0) and CapacityBlocks the pool size in blocks (> 0).
	BlockSize      int
	CapacityBlocks int
	// PrefixCaching enables prefix reuse at admission and registration of full blocks.
	PrefixCaching bool
	// DenseKeys is the number of distinct shared block ids of the workload
	// (traffic.BlockSet.Distinct): the prefix cache indexes keys below it (up to MaxDenseKeys)
	// by a slice instead of hashing. 0 hashes every key; outputs do not depend on it.
	DenseKeys int
	// RingKeys, with DenseKeys 0, indexes the prefix cache's keys by a ring instead
	// (BlockPool.IndexByRing).
	RingKeys bool
	// Timing prices each pass.
	Timing timing.Model
	// HoldOnComplete keeps a completed request's KV blocks until Release (the prefill side of a
	// disaggregated hand-off holds the KV until the transfer ends).
	HoldOnComplete bool
	// PrefillOnly prices passes without a decode part: a prefill worker of disaggregated serving
	// produces only the first token, inside the prefill forward (engine-internals.md §1.2 step 4).
	PrefillOnly bool
	// Unchunked (engine.enable_chunked_prefill: false; StyleVLLM and StyleTRTLLM) computes a
	// prompt's prefill whole in one pass: a request is admitted only when all its uncomputed
	// tokens fit what is left of the token budget, so the budget limits how many prompts start
	// together, not how a prompt is cut (vLLM's scheduler without chunked prefill). The caller
	// rejects prompts longer than MaxBatchedTokens (RejectedPrefillBudget). A recompute after a
	// preemption (prompt plus the output so far) longer than MaxBatchedTokens is still cut at
	// the budget, so it cannot stall: vLLM avoids that case by requiring max_model_len <=
	// max_num_batched_tokens when chunked prefill is off.
	Unchunked bool
	// Speculation enables speculative decoding (nil: off); see Speculation.
	Speculation *Speculation
	// KeepRoundTokens, under Speculation, keeps each speculative round that continues a pass
	// run as a byte on its request (Request.RoundTokens) instead of counting it in the engine's
	// round tally (TakeRounds). The tally cannot tell requests apart afterwards, so a run that
	// can end with requests unfinished (a virtual-time cap), whose rounds the statistics leave
	// out, keeps the bytes.
	KeepRoundTokens bool
	// RoundTallyFromMs is the virtual time (ms) before which a request's arrival keeps its
	// rounds out of the round tally: the run's warm-up (traffic.load.warmup_seconds × 1000),
	// whose requests the statistics leave out. 0 tallies every request's rounds.
	RoundTallyFromMs float64
	// RoundTallyUntilMs, when non-nil, points at the virtual time (ms) after which a request's
	// arrival keeps its rounds out of the round tally: the run's last session start under
	// traffic.load.cooldown, whose later requests the statistics leave out. The run sets it when
	// it schedules its last session (a closed loop when it starts it, an open loop before the
	// run; +Inf until then); no request arrives after it before.
	RoundTallyUntilMs *float64
	// BatchWait (StyleTRTLLM; other styles ignore it) holds new requests' context back while the
	// rank is decoding, so prompts gather into larger context batches (TensorRT-LLM's
	// batch_wait_timeout_iters and batch_wait_max_tokens_ratio). The zero value never waits.
	BatchWait BatchWait
	// Worker and Rank identify the engine; requests placed on it carry the same pair.
	Worker, Rank int32
	// GeneralPasses forms every pass on the general path, without steady decode runs (steady.go):
	// the reference their outputs must match, for tests.
	GeneralPasses bool
}

// BatchWait is TensorRT-LLM's batch waiting (its PyTorch executor, TP-only ranks). A pass that
// has decode steps and would admit waiting requests admits none of them, and counts one waited
// pass, unless TimeoutIters passes have waited since the last admission (so TimeoutIters 0 never
// waits, as in TensorRT-LLM) or the pass's tokens
// (its decode steps plus the waiting prompts' tokens, up to the token budget) reach
// MaxTokensRatio × MaxBatchedTokens; admitting resets the count. A pass without decode steps
// never waits (nothing else would run). Simplification: a prompt's continuing prefill chunks are
// not held back, only the admission of new requests (with a 16,384-token budget, 1k–8k-token
// prompts are admitted whole).
type BatchWait struct {
	// TimeoutIters is batch_wait_timeout_iters: the most passes in a row that hold admissions
	// back.
	TimeoutIters int
	// MaxTokensRatio is batch_wait_max_tokens_ratio in [0, 1] (0: no threshold from it).
	MaxTokensRatio float64
}

// enabled says whether the engine ever waits: TensorRT-LLM waits when either knob is positive.
func (b BatchWait) enabled() bool { return b.TimeoutIters > 0 || b.MaxTokensRatio > 0 }

// Engine is one vLLM-style rank scheduler with its KV block pool (engine-internals.md §1.2).
// Requests live in a shared dense slice and are referred to by index.
//
// A pass is two calls: Schedule at the pass start forms the batch, allocates KV and advances
// computed tokens, and returns the pass duration; Complete at the pass end emits one token per
// request whose known tokens are all computed, finishes requests that reached their output, and
// releases their KV. Between the two, only Submit and Sync may be called.
//
// While a steady decode run lasts (steady.go), the running requests' NumComputed, Generated,
// LastTokenMs and pass-run fields lag behind the passes formed: Sync brings them up to date.
// Call it before reading them; the simulation does so before every general pass and once after
// its event loop, before statistics and records are built.
type Engine struct {
	cfg  Config
	reqs []Request
	pool *BlockPool
	bs   int32
	// bsShift is log2(bs) when bs is a power of two (a division by it is then a shift), else -1.
	bsShift int8

	waiting []int32 // FIFO; waiting[wHead:] are queued, preempted requests go to the front
	wHead   int
	// heldWaiting counts queued requests whose prompt KV is already in place (the decode side
	// of a disaggregated hand-off); the rest of the queue needs KV to be admitted.
	heldWaiting int
	running     []int32 // admission order
	// reserved is runningReserve's sum, kept up to date under NoEvict as requests join and leave
	// the running set and as running requests' leases grow.
	reserved int
	// spareLeases[k] holds emptied leases of capacity 2^k from requests that completed, for
	// presize to hand out again: a run allocates leases for the requests in flight, not for
	// every request.
	spareLeases [32][][]int32
	// The pass being formed: scheduledN requests scheduled, the batch's counts so far (schedule
	// adds each request's share as it is scheduled), the requests whose known tokens are all
	// computed (they emit a token at Complete) and the KV tokens they attend to.
	scheduledN  int
	batch       timing.Batch
	ready       []int32
	readyKV     int
	preemptions int64
	// livelocked says a request was preempted MaxPreemptionsPerRequest times.
	livelocked bool
	// steadyOK says that the engine's passes may be formed in steady decode runs (steady.go): not
	// with speculative decoding, nor GeneralPasses.
	steadyOK bool
	// specSteadyOK says that the engine's passes may be formed in speculative steady runs
	// (specsteady.go): with speculative decoding under the vLLM or TensorRT-LLM scheduler, its
	// rounds tallied (not KeepRoundTokens), without GeneralPasses.
	specSteadyOK bool
	// specEnts are the running requests of the speculative run (specsteady.go), reused.
	specEnts []specEntry
	// acceptBelow[j] is draft j's acceptance threshold (acceptBelow of Speculation.Acceptance[j]).
	acceptBelow [MaxRoundTokens]uint64
	// steadyPasses counts the passes formed by steady decode runs (SteadyPasses).
	steadyPasses int64
	sg           sglangState
	spec         SpeculationStats
	// rounds counts, since the last TakeRounds, the speculative rounds that continued a pass
	// run, by tokens − 1 (1 + accepted drafts), of the requests the round tally takes
	// (Config.KeepRoundTokens, Config.RoundTallyFromMs); anyRounds says whether any is nonzero.
	rounds    [MaxRoundTokens]int32
	anyRounds bool
	steady    steadyRun
	// waitedPasses counts the passes in a row whose admissions BatchWait held back.
	waitedPasses int
}

// New returns an idle engine over the request slice reqs (shared with the caller).
func New(cfg Config, reqs []Request) (*Engine, error) {
	if cfg.MaxBatchedTokens <= 0 || cfg.MaxSequences <= 0 || cfg.BlockSize <= 0 || cfg.CapacityBlocks <= 0 || cfg.Timing == nil {
		return nil, fmt.Errorf("engine: invalid config %+v", cfg)
	}
	if s := cfg.Speculation; s != nil && (s.Drafts < 1 || s.Drafts >= MaxRoundTokens || int(s.Drafts) > len(s.Acceptance)) {
		return nil, fmt.Errorf("engine: speculation with %d drafts and %d acceptance rates: want 1 to %d drafts, a rate each", s.Drafts, len(s.Acceptance), MaxRoundTokens-1)
	}
	e := &Engine{cfg: cfg, reqs: reqs, pool: NewBlockPool(cfg.CapacityBlocks, cfg.DenseKeys), bs: int32(cfg.BlockSize), bsShift: -1}
	if bs := cfg.BlockSize; bs > 0 && bs&(bs-1) == 0 {
		e.bsShift = int8(bits.TrailingZeros(uint(bs)))
	}
	e.steadyOK = !cfg.GeneralPasses && cfg.Speculation == nil
	if s := cfg.Speculation; s != nil {
		for j := range s.Drafts {
			e.acceptBelow[j] = acceptBelow(s.Acceptance[j])
		}
	}
	e.specSteadyOK = !cfg.GeneralPasses && cfg.Speculation != nil && cfg.Style != StyleSGLang && !cfg.KeepRoundTokens
	if cfg.RingKeys && cfg.DenseKeys == 0 {
		e.pool.IndexByRing()
	}
	if cfg.Style == StyleSGLang {
		if err := e.initSGLang(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Pool is the engine's KV block pool.
func (e *Engine) Pool() *BlockPool { return e.pool }

// CapacityTokens is the pool size in tokens.
func (e *Engine) CapacityTokens() int { return e.cfg.CapacityBlocks * e.cfg.BlockSize }

// Preemptions counts preemptions so far.
func (e *Engine) Preemptions() int64 { return e.preemptions }

// MaxPreemptionsPerRequest is how many times one request may lose its KV before the run is
// judged a livelock: no real schedule recomputes a request that often, while a scheduler that
// preempts a request into the blocks it frees, pass after pass, reaches it within a second.
const MaxPreemptionsPerRequest = 100_000

// Livelocked reports whether a request was preempted MaxPreemptionsPerRequest times, which the
// run loop turns into an error rather than simulating it for ever.
func (e *Engine) Livelocked() bool { return e.livelocked }

// HasWork reports whether a pass would have requests to consider.
func (e *Engine) HasWork() bool {
	return len(e.running) > 0 || len(e.waiting) > e.wHead || len(e.sg.inbox) > 0
}

// Queued counts the requests waiting for admission (not running), taken in or not
// (SGLangConfig.RecvInterval).
func (e *Engine) Queued() int { return len(e.waiting) - e.wHead + len(e.sg.inbox) }

// Submit queues request i at the back of the waiting queue (under an SGLang RecvInterval, of
// the inbox the next poll takes in, while the rank is busy). The caller guarantees that its
// prompt fits the pool and its MaxOutput keeps prompt plus output within it.
func (e *Engine) Submit(i int32) {
	r := &e.reqs[i]
	r.Status = Waiting
	if e.holdsArrivals() {
		e.sg.inbox = append(e.sg.inbox, i)
		return
	}
	e.enqueue(i)
}

// enqueue appends request i to the back of the waiting queue, counting it in heldWaiting when
// its prompt KV is already in place (a hand-off).
func (e *Engine) enqueue(i int32) {
	e.waiting = append(e.waiting, i)
	if len(e.reqs[i].Blocks) > 0 {
		e.heldWaiting++
	}
}

// Fits reports whether a sequence of tokens tokens fits in the pool on its own.
func (e *Engine) Fits(tokens int) bool {
	return ceilDiv(int32(tokens), e.bs) <= int32(e.cfg.CapacityBlocks)
}

func ceilDiv(a, b int32) int32 { return (a + b - 1) / b }

// Schedule forms one pass at virtual time nowMs: the running set first (decode steps and
// continuing prefill chunks, LIFO preemption with recompute when KV runs out), then, if nothing
// was preempted, FCFS admission from the waiting queue with head-of-line blocking, each capped by
// the token budget and MaxSequences. It returns the pass duration in ms and whether any token was
// scheduled.
//
// StyleSGLang forms its passes differently (scheduleSGLang).
func (e *Engine) Schedule(nowMs float64) (durMs float64, any bool) {
	if e.cfg.Style == StyleSGLang {
		return e.scheduleSGLang(nowMs)
	}
	if e.steady.left > 0 && e.steady.spec {
		if dur, ok := e.scheduleSpecSteady(nowMs); ok {
			return dur, true
		}
	} else if e.steady.left > 0 && (len(e.waiting) == e.wHead || e.admissionsClosed()) {
		return e.scheduleSteady()
	}
	e.Sync()
	budget := int32(e.cfg.MaxBatchedTokens)
	e.newPass()
	preempted := false
	spare := e.draftSpare()

	plain := e.cfg.Speculation == nil
	for i := 0; i < len(e.running) && budget > 0; i++ {
		ri := e.running[i]
		r := &e.reqs[ri]
		known := r.known()
		if plain && e.plainDecode(ri, r, known) {
			budget--
			continue
		}
		n := e.chunk(known-r.NumComputed, budget)
		if n == 0 {
			continue // a TensorRT-LLM context chunk needs a whole block of budget
		}
		d := e.drafts(r, n, budget, spare)
		// Blocks needed beyond the lease; most steps fit the lease, so compare before dividing.
		need := int32(0)
		if held := int32(len(r.Blocks)); r.NumComputed+n+d > held*e.bs {
			need = ceilDiv(r.NumComputed+n+d, e.bs) - held
		}
		for need > 0 && int(need) > e.pool.Available() {
			if len(e.running) == 1 && e.evictWaitingHolder() {
				// r runs alone: preempting it would free blocks it takes back as it
				// recomputes, short of the ones queued hand-offs hold, pass after pass.
				continue
			}
			victim := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.reserved -= e.reserveOf(&e.reqs[victim])
			e.preempt(victim)
			preempted = true
			if victim == ri {
				break
			}
		}
		if r.Status != Running {
			break // r itself was preempted; everything after it already was too
		}
		held := len(r.Blocks)
		if need > 0 {
			before := e.reserveOf(r)
			r.Blocks = e.pool.allocate(need, r.Blocks)
			e.reserved += e.reserveOf(r) - before
		}
		if d > 0 {
			e.useSpare(r, held, &spare)
		}
		e.schedule(ri, n, d)
		budget -= n + d
	}

	if !preempted && !e.holdAdmissions(budget) {
		budget = e.admitWaiting(nowMs, budget)
		for e.scheduledN == 0 && len(e.running) == 0 && e.evictWaitingHolder() {
			budget = e.admitWaiting(nowMs, budget)
		}
	}

	return e.price(!e.cfg.PrefillOnly)
}

// admissionsClosed reports whether a pass formed now would admit no waiting request and leave
// the waiting queue as it is, whatever waits: the running set is full (MaxSequences) and no
// BatchWait counts the passes that hold admissions back (under StyleSGLang, neither a prefill
// batch nor a request whose KV arrived is admitted to a full running set). Queued requests then
// do not stop a steady decode run.
func (e *Engine) admissionsClosed() bool {
	return len(e.running) >= e.cfg.MaxSequences && (e.cfg.Style != StyleTRTLLM || !e.cfg.BatchWait.enabled())
}

// holdAdmissions applies BatchWait to the pass being formed, with budget tokens left: it reports
// whether the pass admits no waiting request, counting the waited pass.
func (e *Engine) holdAdmissions(budget int32) bool {
	bw := e.cfg.BatchWait
	if e.cfg.Style != StyleTRTLLM || !bw.enabled() || e.batch.DecodeSteps == 0 || len(e.waiting) == e.wHead {
		return false
	}
	if e.waitedPasses >= bw.TimeoutIters {
		e.waitedPasses = 0
		return false
	}
	if bw.MaxTokensRatio > 0 {
		ctx := int64(0)
		for _, ri := range e.waiting[e.wHead:] {
			r := &e.reqs[ri]
			if ctx += int64(r.known() - r.NumComputed); ctx >= int64(budget) {
				ctx = int64(budget)
				break
			}
		}
		if float64(ctx)+float64(e.batch.DecodeSteps) >= bw.MaxTokensRatio*float64(e.cfg.MaxBatchedTokens) {
			e.waitedPasses = 0
			return false
		}
	}
	e.waitedPasses++
	return true
}

// plainDecode schedules request ri (r) for a decode step, one token after every known one was
// computed, when that is its next step and its KV fits its lease, and reports whether it did: the
// common step of a running request, as schedule(ri, 1, 0) would do it without its general
// classification. The caller has checked that no speculation is configured.
func (e *Engine) plainDecode(ri int32, r *Request, known int32) bool {
	if r.Generated == 0 || known-r.NumComputed != 1 || known > int32(len(r.Blocks))*e.bs {
		return false
	}
	r.NumComputed = known
	e.scheduledN++
	e.batch.DecodeSteps++
	e.batch.DecodeStepKVTokens += int(known)
	e.batch.SampledTokens++
	e.readyKV += int(known)
	e.ready = append(e.ready, ri)
	e.registerFull(r)
	return true
}

// chunk is how many of remaining uncomputed tokens a request computes with budget tokens left:
// all that fit; under StyleTRTLLM a chunk that does not end the prompt is cut to whole KV blocks
// (TensorRT-LLM's context chunks are multiples of tokens_per_block), possibly 0 when another
// request took part of the budget. A budget below one block is used whole, so a token budget
// smaller than the block size still makes progress.
//
// Unchunked, a remaining count of at most MaxBatchedTokens is all or nothing: remaining when it
// fits budget, else 0 (the request waits for a pass with room for it whole).
func (e *Engine) chunk(remaining, budget int32) int32 {
	if e.cfg.Unchunked && remaining <= int32(e.cfg.MaxBatchedTokens) {
		if remaining > budget {
			return 0
		}
		return remaining
	}
	n := min(remaining, budget)
	if e.cfg.Style != StyleTRTLLM || n == remaining {
		return n
	}
	if cut := n - n%e.bs; cut > 0 || budget < int32(e.cfg.MaxBatchedTokens) {
		return cut
	}
	return n // the whole token budget is below one block: use it whole
}

// newPass starts forming a pass: nothing scheduled, an empty batch.
func (e *Engine) newPass() {
	e.scheduledN = 0
	e.batch = timing.Batch{KVCapacityTokens: e.CapacityTokens()}
	e.ready = e.ready[:0]
	e.readyKV = 0
}

// price completes the timing batch of the tokens scheduled this pass and returns the pass time.
// firstTokenCosts says whether a request that finishes its prefill in this pass counts in the
// decode part of the pass (vLLM's core: it does) or its first token comes with the prefill
// (a prefill-only worker, an SGLang prefill pass): every ready request does (schedule).
func (e *Engine) price(firstTokenCosts bool) (durMs float64, any bool) {
	if e.scheduledN == 0 {
		return 0, false
	}
	if firstTokenCosts {
		e.batch.DecodeRequests = len(e.ready)
		e.batch.DecodeKVTokens = e.readyKV
	}
	return e.cfg.Timing.PassMs(&e.batch), true
}

// admitWaiting admits requests FCFS from the waiting queue with head-of-line blocking while the
// token budget, MaxSequences and KV room allow, schedules their first chunk, and returns the
// budget left. Under NoEvict, KV room is what the pool has left after the remaining reservation
// of every running request, and a request needs its whole footprint (footprint).
func (e *Engine) admitWaiting(nowMs float64, budget int32) int32 {
	room := 0 // NoEvict: blocks neither used nor reserved by running requests
	if e.cfg.NoEvict {
		room = e.pool.Available() - e.reserved
	}
	for len(e.running) < e.cfg.MaxSequences && budget > 0 && len(e.waiting) > e.wHead {
		ri := e.waiting[e.wHead]
		r := &e.reqs[ri]
		known := r.known()
		if len(r.Blocks) > 0 {
			// KV already in place (a disaggregated hand-off reserved and filled it).
			n := e.chunk(known-r.NumComputed, budget)
			d := int32(0)
			if n > 0 && !e.cfg.NoEvict {
				d = e.drafts(r, n, budget, e.draftSpare())
			} else if n > 0 {
				// Under NoEvict the request's footprint, reserved at admission, holds its drafts.
				d = e.drafts(r, n, budget, int(e.footprint(r))-max(len(r.Blocks), int(ceilDiv(known, e.bs))))
			}
			need := ceilDiv(r.NumComputed+n+d, e.bs) - int32(len(r.Blocks))
			if e.cfg.NoEvict {
				claim := int(e.footprint(r)) - len(r.Blocks)
				if n == 0 || claim > room {
					break
				}
				room -= claim
			} else if n == 0 || int(need) > e.pool.Available() {
				break
			}
			e.popWaiting()
			e.heldWaiting--
			r.Blocks = e.pool.allocate(max(need, 0), r.Blocks)
			e.admit(ri, nowMs, Admission{ReusedTokens: r.ownLo})
			e.schedule(ri, n, d)
			budget -= n + d
			continue
		}
		var hits, inactiveHits int32
		if e.cfg.PrefixCaching {
			// A request that still needs logits reuses at most floor((known-1)/bs) blocks
			// (engine-internals.md §1.2 step 3).
			hits, inactiveHits = e.pool.lookup(r, (known-1)/e.bs)
		}
		reused := hits * e.bs // whole hit: prefix reuse plus recovered own KV
		n := e.chunk(known-reused, budget)
		need := ceilDiv(reused+n, e.bs) - hits
		if e.cfg.NoEvict {
			// Only blocks running requests hold come free: inactive hits leave the room when
			// pinned (engine-internals.md §1.2, TRT-LLM mode).
			claim := int(e.footprint(r) - (hits - inactiveHits))
			if n == 0 || claim > room {
				break
			}
			room -= claim
		} else if n == 0 || int(need+inactiveHits) > e.pool.Available() {
			break // head-of-line blocking: wait for KV
		}
		e.admitHead(nowMs, hits, need, n)
		budget -= n
	}
	return budget
}

// admitHead admits the waiting queue's head after a prefix lookup that found hits cached
// blocks: it pins them, allocates need fresh blocks, logs the admission and schedules the first
// n uncomputed tokens. The caller has checked that the KV fits.
func (e *Engine) admitHead(nowMs float64, hits, need, n int32) {
	ri := e.waiting[e.wHead]
	r := &e.reqs[ri]
	e.popWaiting()
	e.presize(r)
	r.Blocks = e.pool.pin(r, hits, r.Blocks)
	r.Blocks = e.pool.allocate(need, r.Blocks)
	r.numRegistered, r.uniqueTail = hits, false
	r.NumComputed = hits * e.bs
	var a Admission
	a.ReusedTokens, a.RecoveredTokens = r.splitHit(r.NumComputed)
	e.admit(ri, nowMs, a)
	e.schedule(ri, n, 0)
}

// footprint is the KV blocks request r holds when it completes under NoEvict's reservation:
// ceil((prompt + max output) / BlockSize).
func (e *Engine) footprint(r *Request) int32 { return ceilDiv(r.PromptLen+r.MaxOutput, e.bs) }

// runningReserve is Σ over running requests of the blocks their footprint still needs beyond
// what they hold (NoEvict): what reserved holds, recomputed.
func (e *Engine) runningReserve() int {
	n := 0
	for _, ri := range e.running {
		n += e.reserveOf(&e.reqs[ri])
	}
	return n
}

// reserveOf is the blocks running request r's footprint still needs beyond what it holds under
// NoEvict, and 0 under other policies (reserved is kept only under NoEvict).
func (e *Engine) reserveOf(r *Request) int {
	if !e.cfg.NoEvict {
		return 0
	}
	return max(0, int(e.footprint(r))-len(r.Blocks))
}

// evictWaitingHolder releases the KV of the waiting request nearest the back of the queue that
// holds blocks (a decode-side request whose transferred prompt KV waits for admission), counting a
// preemption: it will recompute what the prefix cache no longer holds. Called only where such
// held KV would otherwise wait forever: nothing runs and the queue head cannot be admitted, or
// the one running request needs a block and would preempt itself (it would recompute into the
// blocks it freed and fall short again). It reports whether a request was evicted.
func (e *Engine) evictWaitingHolder() bool {
	for k := len(e.waiting) - 1; k >= e.wHead; k-- {
		r := &e.reqs[e.waiting[k]]
		if len(r.Blocks) == 0 {
			continue
		}
		e.heldWaiting--
		e.dropKV(r)
		return true
	}
	return false
}

// presize gives a request's empty lease room for its whole sequence (prompt plus output), so
// the lease is allocated once per request rather than grown block by block.
func (e *Engine) presize(r *Request) {
	if cap(r.Blocks) == 0 {
		// A power-of-two capacity at least the footprint, reused from a completed request when
		// one is spare.
		k := bits.Len32(uint32(max(ceilDiv(r.PromptLen+r.MaxOutput, e.bs), 1) - 1))
		if n := len(e.spareLeases[k]); n > 0 {
			r.Blocks = e.spareLeases[k][n-1]
			e.spareLeases[k] = e.spareLeases[k][:n-1]
		} else {
			r.Blocks = make([]int32, 0, 1<<k)
		}
	}
}

func (e *Engine) popWaiting() {
	e.wHead++
	if e.wHead == len(e.waiting) {
		e.waiting, e.wHead = e.waiting[:0], 0
	}
}

// admit moves request ri into the running set and logs admission a (its time is set here). The
// request's KV from a.ReusedTokens + a.RecoveredTokens on is its own from now on.
func (e *Engine) admit(ri int32, nowMs float64, a Admission) {
	r := &e.reqs[ri]
	r.Status = Running
	a.AtMs = nowMs
	if len(r.History) == 0 {
		r.FirstAdmitMs = nowMs
		if !r.kvTransferred {
			r.FirstReusedTokens = a.ReusedTokens
		}
	}
	if !r.kvTransferred {
		r.ReusedTokens = max(r.ReusedTokens, a.ReusedTokens)
	}
	r.RecoveredTokens += a.RecoveredTokens
	if r.Generated > 0 && r.FirstTokenMs < 0 {
		r.FirstTokenMs, r.LastTokenMs = nowMs, nowMs // a received first token (ReceiveFirstToken)
	}
	r.History = append(r.History, a)
	e.reserved += e.reserveOf(r)
	if hit := a.ReusedTokens + a.RecoveredTokens; r.ownHi == 0 {
		r.ownLo = hit
	} else if hit <= r.ownHi {
		r.ownLo = min(r.ownLo, hit)
	}
	e.running = append(e.running, ri)
}

// schedule computes n more tokens of request ri in the pass being formed and verifies d draft
// tokens after them (their KV is allocated): it adds the request's share to the pass's batch (a
// decode step when n is the one token after all known ones were computed, else a prefill chunk),
// marks the request ready when all its known tokens are computed, and registers the blocks the n
// tokens complete with the prefix cache, so later requests in the same pass can hit them. A
// request scheduled in a pass is neither preempted nor retracted later in the same pass, so its
// share is final.
func (e *Engine) schedule(ri int32, n, d int32) {
	r := &e.reqs[ri]
	before := r.NumComputed
	r.NumComputed += n
	e.scheduledN++
	b := &e.batch
	known := r.known()
	if n == 1 && r.Generated > 0 && before == known-1 {
		b.DecodeSteps++
		b.DecodeStepKVTokens += int(r.NumComputed)
		if d > 0 {
			// Draft j (1-based) attends to the KV up to and including itself.
			dd := int(d)
			b.DraftTokens += dd
			b.DraftKVTokens += dd*int(r.NumComputed) + dd*(dd+1)/2
			r.drafts = d
		}
	} else {
		n64 := int64(n)
		b.PrefillRequests++
		b.PrefillTokens += int(n)
		b.PrefillContextTokens += int(before)
		b.PrefillAttentionPairs += n64*int64(before) + n64*(n64+1)/2
	}
	if r.NumComputed == known {
		b.SampledTokens++
		e.readyKV += int(r.NumComputed)
		e.ready = append(e.ready, ri)
		if e.cfg.Speculation != nil && r.MaxOutput-r.Generated > 1 {
			// Its next round's drafts are proposed after this pass (timing.MTP prices them).
			b.DraftProposals++
			b.DraftProposalKVTokens += int(r.NumComputed)
		}
	}
	e.registerFull(r)
}

// registerFull offers the request's full blocks of computed tokens not offered yet to the prefix
// cache (with prefix caching on).
func (e *Engine) registerFull(r *Request) {
	if !e.cfg.PrefixCaching {
		return
	}
	// Most decode steps complete no block: compare before dividing (an integer division costs
	// tens of cycles, and this runs for every request in every pass).
	if r.numRegistered >= r.FullBlocks || r.NumComputed < (r.numRegistered+1)*e.bs {
		return
	}
	full := r.NumComputed
	if e.bsShift >= 0 {
		full >>= e.bsShift
	} else {
		full /= e.bs
	}
	full = min(full, r.FullBlocks)
	switch {
	case full <= r.numRegistered:
	case r.uniqueTail:
		r.numRegistered = full // what registerBlocks does with them
	default:
		e.registerBlocks(r, full)
	}
}

// registerBlocks registers r's full blocks [numRegistered, full) with the prefix cache. Blocks
// only r holds in the whole workload (from SharedBlocks on) stay out of the key index while r has
// never dropped its KV (Request.unindexed): no other request can match them, so registering them
// takes no more than counting them in numRegistered; dropKV indexes them before r could look them
// up again, and a completed r leaves them cached as unmatchable entries (releaseKV).
func (e *Engine) registerBlocks(r *Request, full int32) {
	j := r.numRegistered
	if r.Preemptions == 0 {
		for ; j < full && j < r.SharedBlocks; j++ {
			e.pool.register(r.Blocks[j], r.keyAt(j))
		}
		j = max(j, full)
	}
	for ; j < full; j++ {
		e.pool.register(r.Blocks[j], r.keyAt(j))
	}
	r.numRegistered = max(r.numRegistered, full)
	r.uniqueTail = r.Preemptions == 0 && r.numRegistered >= r.SharedBlocks
}

// indexUnique enters r's unindexed blocks (Request.unindexed) into the prefix cache's key index
// under their UniqueBlockKey, in lease order, as registerBlocks would have had r been preempted
// before.
func (e *Engine) indexUnique(r *Request) {
	lo, hi := r.unindexed()
	for j := lo; j < hi; j++ {
		e.pool.register(r.Blocks[j], UniqueBlockKey(r.Index, j))
	}
}

// releaseKV releases r's lease for good (r completed): its unindexed blocks stay cached as
// unmatchable entries (BlockPool.release).
func (e *Engine) releaseKV(r *Request) {
	lo, hi := r.unindexed()
	r.Blocks = e.pool.release(r.Blocks, lo, hi)
}

// preempt releases all KV of running request ri and puts it at the front of the waiting queue;
// it will recompute every known token (minus prefix hits) when readmitted.
func (e *Engine) preempt(ri int32) {
	r := &e.reqs[ri]
	e.dropKV(r)
	r.Status = Waiting
	if e.wHead > 0 {
		e.wHead--
		e.waiting[e.wHead] = ri
	} else {
		e.waiting = append(e.waiting, 0)
		copy(e.waiting[1:], e.waiting)
		e.waiting[0] = ri
	}
}

// dropKV releases all KV of r, counting a preemption: r will recompute whatever the prefix cache
// no longer holds, and the tokens it had computed become its own range for recovered_tokens.
func (e *Engine) dropKV(r *Request) {
	e.indexUnique(r) // r may look its own blocks up from now on
	r.Blocks = e.pool.release(r.Blocks, 0, 0)
	r.ownHi = max(r.ownHi, r.NumComputed)
	r.NumComputed, r.numRegistered, r.uniqueTail = 0, 0, false
	r.Preemptions++
	e.preemptions++
	if r.Preemptions >= MaxPreemptionsPerRequest {
		e.livelocked = true
	}
}

// Complete ends the pass started by the last Schedule at endMs: every ready request emits a token
// (pass is the worker's pass index, for ITL bookkeeping; first is called when a request emits its
// first token), and requests that reached MaxOutput complete and release their KV (unless
// HoldOnComplete). done receives each completed request index, in running order. It returns
// the number of tokens that continued a pass run (Request.EachRun): the requests whose ITL sample
// in this pass is the pass's gap.
func (e *Engine) Complete(endMs float64, pass int32, first, done func(int32)) (continued int32) {
	if e.steady.inPass() {
		if e.steady.spec {
			return e.completeSpecSteady(endMs, pass, first, done)
		}
		return e.completeSteady(endMs, pass)
	}
	finished := 0
	for _, ri := range e.ready {
		r := &e.reqs[ri]
		// Fast path: a plain decode step continuing its pass run, not the last token (what emit
		// does for it, without the call).
		if r.lastPass == pass-1 && r.drafts == 0 && r.Generated >= 2 && r.Generated+1 < r.MaxOutput && e.cfg.Speculation == nil {
			if r.runFirst < 0 {
				r.runFirst = pass
			}
			r.lastPass = pass
			r.LastTokenMs = endMs
			r.Generated++
			continued++
			continue
		}
		c, f := e.completeOne(ri, r, endMs, pass, first)
		if c {
			continued++
		}
		if f {
			finished++
		}
	}
	if finished == 0 {
		if e.steadyOK && len(e.ready) == len(e.running) && (len(e.waiting) == e.wHead || e.admissionsClosed()) &&
			(e.cfg.Style != StyleSGLang || e.sg.chunked < 0) {
			e.startSteady(endMs, pass)
		} else if e.specSteadyOK && (len(e.waiting) == e.wHead || e.admissionsClosed()) {
			e.startSpecSteady(endMs, pass)
		}
		return continued
	}
	kept := e.running[:0]
	for _, ri := range e.running {
		if e.reqs[ri].Status == Completed {
			done(ri)
			continue
		}
		kept = append(kept, ri)
	}
	e.running = kept
	if e.specSteadyOK && (len(e.waiting) == e.wHead || e.admissionsClosed()) {
		// The requests left may run on steadily at once: a completion changes nothing of theirs.
		e.startSpecSteady(endMs, pass)
	}
	return continued
}

// completeOne ends the pass for the ready request ri (r) at endMs on the general path: it emits
// its token and accepted drafts (pass is the worker's pass index; first is called with its first
// token) and completes it if it reached MaxOutput. It reports whether the token continued a pass
// run and whether the request completed.
func (e *Engine) completeOne(ri int32, r *Request, endMs float64, pass int32, first func(int32)) (continued, finished bool) {
	if r.Generated < r.MaxOutput {
		accepted := int32(0)
		if d := r.drafts; d > 0 {
			r.drafts = 0
			accepted = e.accept(ri, r, d)
			e.spec.Rounds++
			e.spec.Drafts += int64(d)
			e.spec.Accepted += int64(accepted)
		}
		round := e.cfg.Speculation != nil && r.Generated > 0
		gap := endMs - r.LastTokenMs
		if r.emit(endMs, r.Worker, pass) {
			continued = true
			if round {
				e.keepRound(r, accepted)
			}
		} else if round {
			m := r.more()
			m.roundGaps = append(m.roundGaps, gap/float64(1+accepted))
		}
		if r.Generated == 1 && first != nil {
			first(ri)
		}
		if accepted > 0 {
			// The accepted drafts' KV was computed by this pass: it is the request's now.
			r.emitWith(endMs, accepted)
			r.NumComputed += accepted
			e.registerFull(r)
		}
	}
	if r.Generated >= r.MaxOutput {
		r.closeRun(r.Worker)
		e.reserved -= e.reserveOf(r)
		if !e.cfg.HoldOnComplete {
			e.releaseKV(r)
			e.retireLease(r)
		}
		r.Status = Completed
		r.TerminalMs = endMs
		finished = true
	}
	return continued, finished
}

// keepRound records a speculative round of request r that continued a pass run and accepted
// accepted drafts: in the engine's round tally (TakeRounds), or as a byte on r under
// KeepRoundTokens; a warm-up request's round goes nowhere (Config.RoundTallyFromMs).
func (e *Engine) keepRound(r *Request, accepted int32) {
	switch {
	case e.cfg.KeepRoundTokens:
		m := r.more()
		m.roundTokens = append(m.roundTokens, uint8(1+accepted))
	case e.untallied(r):
	default:
		e.rounds[accepted]++
		e.anyRounds = true
	}
}

// untallied reports whether request r's rounds stay out of the round tally: it arrived in the
// warm-up (Config.RoundTallyFromMs) or the cool-down (Config.RoundTallyUntilMs).
func (e *Engine) untallied(r *Request) bool {
	return e.cfg.RoundTallyFromMs > 0 && r.ArrivalMs < e.cfg.RoundTallyFromMs ||
		e.cfg.RoundTallyUntilMs != nil && r.ArrivalMs > *e.cfg.RoundTallyUntilMs
}

// TakeRounds adds to counts[t−1] the speculative rounds of t tokens that continued a pass run
// (t = 1 + accepted drafts) in the passes completed since the last call, of requests that
// arrived at or after Config.RoundTallyFromMs (none under Config.KeepRoundTokens), and clears
// them. It reports whether it added any. Called after each Complete, it gives the pass's rounds
// per size: the samples of the per-user output rate that the pass's gap divided by t gives
// (metrics.PassLog.AppendRounds).
func (e *Engine) TakeRounds(counts *[MaxRoundTokens]int32) bool {
	if !e.anyRounds {
		return false
	}
	for t, c := range e.rounds {
		counts[t] += c
	}
	e.rounds, e.anyRounds = [MaxRoundTokens]int32{}, false
	return true
}

// Release frees the KV blocks a completed request still holds (HoldOnComplete).
func (e *Engine) Release(ri int32) {
	r := &e.reqs[ri]
	e.releaseKV(r)
	e.retireLease(r)
}

// retireLease hands the emptied lease of a request that will hold no more KV to spareLeases and
// leaves the request without one.
func (e *Engine) retireLease(r *Request) {
	if c := cap(r.Blocks); c > 0 && c&(c-1) == 0 {
		k := bits.Len32(uint32(c - 1))
		e.spareLeases[k] = append(e.spareLeases[k], r.Blocks[:0])
	}
	r.Blocks = nil
}

// Reserve claims KV for the prompt of request ri arriving from another worker (the decode side of
// a disaggregated hand-off): it pins the leading prompt blocks this pool already caches and
// allocates the rest (under NoEvict, the rest of the whole prompt-plus-output footprint). It returns the prompt tokens already cached (whole blocks) and false, with
// nothing claimed, when the pool lacks room or when a queued request needs KV to be admitted (a
// preempted or retracted one): a hand-off takes blocks in queue order behind it, as vLLM
// allocates a received request's blocks at admission from its FCFS waiting queue, so freed
// blocks go to the preempted request first and decoding never stalls behind reservations. The
// request stays outside the queues until Activate.
func (e *Engine) Reserve(ri int32) (cachedTokens int, ok bool) {
	if len(e.waiting)-e.wHead > e.heldWaiting {
		return 0, false
	}
	r := &e.reqs[ri]
	var hits, inactiveHits int32
	if e.cfg.PrefixCaching {
		hits, inactiveHits = e.pool.lookup(r, r.PromptLen/e.bs)
	}
	need := ceilDiv(r.PromptLen, e.bs) - hits
	room := e.pool.Available()
	if e.cfg.NoEvict {
		// TensorRT-LLM's destination reserves the whole to-completion footprint
		// (engine-internals.md §5), so an admitted hand-off never claims more and a reserved
		// one never starves admission; never take blocks a running request is guaranteed.
		need = e.footprint(r) - hits
		room -= e.reserved
	}
	if int(need+inactiveHits) > room {
		return 0, false
	}
	e.presize(r)
	r.Blocks = e.pool.pin(r, hits, r.Blocks)
	r.Blocks = e.pool.allocate(need, r.Blocks)
	r.numRegistered, r.uniqueTail = hits, false
	r.kvTransferred = true
	r.ownLo = hits * e.bs // cached here before the transfer: reuse, not this request's own KV
	return int(hits * e.bs), true
}

// Activate makes a reserved request runnable once its prompt KV has arrived: its prompt counts as
// computed (its full blocks join the prefix cache) and it queues for decode.
func (e *Engine) Activate(ri int32) {
	r := &e.reqs[ri]
	r.NumComputed = r.PromptLen
	r.ownHi = r.PromptLen
	if e.cfg.PrefixCaching {
		e.registerBlocks(r, min(r.NumComputed/e.bs, r.FullBlocks))
	}
	e.Submit(ri)
}

// CheckInvariants verifies the engine's KV bookkeeping: its pool's (BlockPool.CheckInvariants,
// against the leases of the requests placed on this engine), under NoEvict the blocks the
// running requests' footprints still need (kept as requests come and go, recounted here), and
// that every running request holds the KV of every token it computed. It returns a description
// of the first violation, or "". O(requests + blocks handed out + the key index's dense part
// or ring), not O(capacity): for tests (a memory-sized pool's capacity can be a million blocks,
// of which a short run touches a few thousand).
func (e *Engine) CheckInvariants() string {
	holders := make([]int32, e.pool.HandedOut())
	if !e.Holders(holders) {
		return "a lease holds a block never handed out"
	}
	if msg := e.pool.CheckInvariants(holders); msg != "" {
		return msg
	}
	if n := e.runningReserve(); e.reserved != n {
		return fmt.Sprintf("the running requests' footprints need %d more blocks, %d counted", n, e.reserved)
	}
	held := 0
	for _, ri := range e.waiting[e.wHead:] {
		if len(e.reqs[ri].Blocks) > 0 {
			held++
		}
	}
	if held != e.heldWaiting {
		return fmt.Sprintf("%d queued requests hold their prompt's KV, %d counted", held, e.heldWaiting)
	}
	for _, ri := range e.running {
		if r := &e.reqs[ri]; int(ceilDiv(r.NumComputed, e.bs)) > len(r.Blocks) {
			return fmt.Sprintf("running request %d computed %d tokens but holds %d blocks of %d", ri, r.NumComputed, len(r.Blocks), e.bs)
		}
	}
	return ""
}

// Holders adds, for every block b < len(holders), the number of leases of requests placed on
// this engine (Request.Worker and Rank equal to the engine's) holding it, into holders[b]. It
// reports false when a lease holds a block at or beyond len(holders) (counting the others).
// Used by invariant checks; O(requests).
func (e *Engine) Holders(holders []int32) bool {
	ok := true
	for i := range e.reqs {
		r := &e.reqs[i]
		if r.Worker != e.cfg.Worker || r.Rank != e.cfg.Rank {
			continue
		}
		for _, b := range r.Blocks {
			if int(b) >= len(holders) {
				ok = false
				continue
			}
			holders[b]++
		}
	}
	return ok
}
