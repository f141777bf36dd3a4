package engine

import (
	"fmt"
	"math"
)

// SGLang scheduler constants (engine-internals.md §1.1 and §1.3, from SGLang's server arguments
// and scheduler: chunked_prefill_size, max_prefill_tokens, CLIP_MAX_NEW_TOKENS,
// init/min_new_token_ratio, new_token_ratio_decay, RETRACT_DECODE_STEPS).
const (
	// SGLangChunkedPrefillSize is the prefill token budget of one pass (chunked_prefill_size),
	// divided by attention_data under attention data parallelism.
	SGLangChunkedPrefillSize = 8192
	// SGLangMaxPrefillTokens caps the prompt tokens one prefill pass charges (max_prefill_tokens).
	SGLangMaxPrefillTokens = 16384
	// SGLangClipMaxNewTokens caps the output tokens one request's admission reserves
	// (CLIP_MAX_NEW_TOKENS).
	SGLangClipMaxNewTokens = 4096
	// SGLangInitNewTokenRatio is the initial share of each running request's remaining output that
	// admission keeps free, before × schedule_conservativeness.
	SGLangInitNewTokenRatio = 0.7
	// SGLangMinNewTokenRatioFactor sets the floor of that share: init × 0.14.
	SGLangMinNewTokenRatioFactor = 0.14
	// SGLangNewTokenRatioDecaySteps is how many decode passes the share takes to decay from init
	// to its floor.
	SGLangNewTokenRatioDecaySteps = 600
	// SGLangRetractDecodeSteps is the decode steps credited per surviving request when a
	// retraction re-estimates the share.
	SGLangRetractDecodeSteps = 20
	// SGLangAttentionDataConservativeness multiplies schedule_conservativeness under attention
	// data parallelism.
	SGLangAttentionDataConservativeness = 0.3
)

// SGLangConfig is the StyleSGLang scheduler's parameters.
type SGLangConfig struct {
	// PageSize is tokens per radix-cache page (kv_cache.block_size; SGLang's default is 1): a
	// prefill chunk that does not end a prompt is cut at a page multiple, and prefill budgets are
	// charged in whole pages. Config.BlockSize, the granularity at which this rank allocates KV
	// and matches prefixes, is a multiple of it.
	PageSize int
	// ChunkedPrefillSize is the prefill token budget of one pass, in tokens.
	ChunkedPrefillSize int
	// MaxPrefillTokens caps the page-rounded prompt tokens one prefill pass charges.
	MaxPrefillTokens int
	// ClipMaxNewTokens caps the output tokens a request's admission reserves.
	ClipMaxNewTokens int
	// Conservativeness is schedule_conservativeness (1.0): it scales the share of running
	// requests' remaining output that admission keeps free.
	Conservativeness float64
	// PrefillDecodeInterval is the least number of decode passes between two prefill passes
	// while requests are decoding (scheduler.prefill_decode_interval; 0 = prefill first).
	PrefillDecodeInterval int
	// RecvInterval is SGLang's --scheduler-recv-interval (scheduler.recv_interval; 0 and 1 poll
	// at every pass): a busy rank takes in newly arrived requests only at every RecvInterval-th
	// decode pass, and at once after a prefill pass or when it has nothing else to do (SGLang's
	// SchedulerRecvSkipper weighs a decode pass 1, a prefill pass past any threshold). On a
	// decode rank of disaggregated serving a hand-off (a request whose KV arrived by transfer)
	// is held until that poll too: SGLang's decode scheduler takes in a new request only at a
	// poll, to preallocate its KV before the prefill worker may send it; the simulation hands
	// off after the prefill, so the wait comes after the transfer instead of before the
	// prefill, the same time added to TTFT while the prefill worker is not the bottleneck.
	RecvInterval int
}

// DefaultSGLang is SGLang's configuration for one rank of a worker with attentionData
// attention-DP ranks and the given page size: the chunked-prefill budget (chunkedPrefillSize
// tokens, SGLang's --chunked-prefill-size; 0 = SGLangChunkedPrefillSize) divided by
// attentionData and the conservativeness × 0.3 when attentionData > 1 (dynosim-spec.md §6.2).
// The prompt tokens one prefill pass charges are capped at SGLangMaxPrefillTokens, or at the
// chunked-prefill size when that is larger (the scripts that raise one raise both).
func DefaultSGLang(pageSize, attentionData, chunkedPrefillSize, prefillDecodeInterval int) SGLangConfig {
	chunkedPrefillSize = SGLangChunk(chunkedPrefillSize)
	c := SGLangConfig{
		PageSize: pageSize, ChunkedPrefillSize: chunkedPrefillSize, MaxPrefillTokens: max(SGLangMaxPrefillTokens, chunkedPrefillSize),
		ClipMaxNewTokens: SGLangClipMaxNewTokens, Conservativeness: 1, PrefillDecodeInterval: prefillDecodeInterval,
	}
	if attentionData > 1 {
		c.ChunkedPrefillSize = max(1, c.ChunkedPrefillSize/attentionData)
		c.Conservativeness *= SGLangAttentionDataConservativeness
	}
	return c
}

// SGLangChunk is the chunked-prefill size, in tokens over a worker's attention-DP ranks, that
// scheduler.chunked_prefill_size n gives: n, or SGLangChunkedPrefillSize when n is 0 (unset).
func SGLangChunk(n int) int {
	if n <= 0 {
		return SGLangChunkedPrefillSize
	}
	return n
}

// sglangState is the StyleSGLang scheduler state of one rank.
type sglangState struct {
	// ratio is new_token_ratio: the share of each running request's remaining output (clipped)
	// that prefill admission keeps free; it decays by decay per decode pass down to minRatio and
	// is re-estimated on retraction.
	ratio, minRatio, decay float64
	// decodes counts decode passes since the last prefill pass.
	decodes int
	// chunked is the running request whose prompt is being prefilled in chunks (-1: none); its
	// next chunk leads the next prefill batch.
	chunked int32
	// inbox holds requests submitted while the rank was busy and not yet taken in (RecvInterval);
	// polls counts decode passes since the last poll; lastPrefill says the last pass formed was
	// a prefill pass.
	inbox       []int32
	polls       int
	lastPrefill bool
}

func (e *Engine) initSGLang() error {
	c := &e.cfg.SGLang
	if c.PageSize <= 0 || e.cfg.BlockSize%c.PageSize != 0 || c.ChunkedPrefillSize <= 0 || c.MaxPrefillTokens <= 0 ||
		c.ClipMaxNewTokens < 0 || !(c.Conservativeness > 0) || c.PrefillDecodeInterval < 0 || c.RecvInterval < 0 {
		return fmt.Errorf("engine: invalid SGLang config %+v with block size %d", *c, e.cfg.BlockSize)
	}
	e.sg = sglangState{ratio: SGLangInitNewTokenRatio * c.Conservativeness, chunked: -1}
	e.sg.minRatio = e.sg.ratio * SGLangMinNewTokenRatioFactor
	e.sg.decay = (e.sg.ratio - e.sg.minRatio) / SGLangNewTokenRatioDecaySteps
	return nil
}

// scheduleSGLang forms one SGLang pass (engine-internals.md §1.3): requests whose KV arrived by
// transfer join the running set; then, unless prefill_decode_interval decode passes are still
// owed, a prefill batch is formed (the continuing chunked prompt first, then FCFS from the
// waiting queue with head-of-line blocking); a pass with a prefill batch is prefill only, its
// requests' first tokens come with it. Otherwise every running request takes one decode step,
// after retracting requests while the next step's KV does not fit. A steady decode run's pass
// (steady.go) is such a decode pass, without retraction: new_token_ratio decays as in any.
//
// A rank that polls less often than every pass (SGLangConfig.RecvInterval) and finds nothing to
// run takes its held requests in at once and forms the pass again, as SGLang's idle loop,
// counting toward the poll on every iteration, reaches it at once. Without that, a decode rank
// whose held hand-offs keep the KV its retracted requests need would wait for an event that
// never comes.
func (e *Engine) scheduleSGLang(nowMs float64) (durMs float64, any bool) {
	e.pollInbox()
	durMs, any = e.sglangPass(nowMs)
	if !any && len(e.sg.inbox) > 0 {
		e.takeInbox()
		durMs, any = e.sglangPass(nowMs)
	}
	return durMs, any
}

// sglangPass forms one pass of scheduleSGLang from the queues as they stand.
func (e *Engine) sglangPass(nowMs float64) (durMs float64, any bool) {
	if e.steady.left > 0 && (len(e.waiting) == e.wHead || e.admissionsClosed()) {
		e.sg.ratio = max(e.sg.minRatio, e.sg.ratio-e.sg.decay)
		e.sg.decodes++
		return e.scheduleSteady()
	}
	e.Sync()
	e.newPass()
	if e.heldWaiting > 0 {
		e.admitPrebuilt(nowMs)
	}
	if e.sg.chunked >= 0 || len(e.waiting) > e.wHead {
		if e.sg.decodes >= e.cfg.SGLang.PrefillDecodeInterval || !e.anyDecoding() {
			e.prefillBatch(nowMs)
			for e.scheduledN == 0 && len(e.running) == 0 && e.evictWaitingHolder() {
				e.prefillBatch(nowMs)
			}
			if e.scheduledN > 0 {
				e.sg.decodes = 0
				e.sg.lastPrefill = true
				return e.price(false)
			}
		}
	}
	e.decodeStep()
	if e.scheduledN > 0 {
		e.sg.decodes++
	}
	return e.price(!e.cfg.PrefillOnly)
}

// holdsArrivals reports whether a request submitted now, a new one or a hand-off whose KV
// arrived, waits in the inbox: the rank polls less often than every pass (RecvInterval > 1) and
// is running requests (so its passes follow one another and it polls only when due; a rank with
// none polls at once, as SGLang's idle loop does).
func (e *Engine) holdsArrivals() bool {
	return e.cfg.Style == StyleSGLang && e.cfg.SGLang.RecvInterval > 1 && len(e.running) > 0
}

// pollInbox counts the pass that just ended toward the next poll (a decode pass 1, a prefill
// pass the whole interval) and, when the poll is due or the rank runs no request, moves the
// inbox to the back of the waiting queue in arrival order.
func (e *Engine) pollInbox() {
	n := e.cfg.SGLang.RecvInterval
	if n <= 1 {
		return
	}
	if e.sg.lastPrefill {
		e.sg.polls = n
	} else {
		e.sg.polls++
	}
	e.sg.lastPrefill = false
	if e.sg.polls < n && len(e.running) > 0 {
		return
	}
	e.takeInbox()
}

// takeInbox moves the held requests to the back of the waiting queue in arrival order and
// restarts the count toward the next poll.
func (e *Engine) takeInbox() {
	e.sg.polls = 0
	for _, ri := range e.sg.inbox {
		e.enqueue(ri)
	}
	e.sg.inbox = e.sg.inbox[:0]
}

// anyDecoding reports whether a running request is past its prefill.
func (e *Engine) anyDecoding() bool {
	n := len(e.running)
	if e.sg.chunked >= 0 {
		n--
	}
	return n > 0
}

// admitPrebuilt moves waiting requests whose prompt KV is in place into the running set, in
// queue order, while MaxSequences allows; the other waiting requests keep their order.
func (e *Engine) admitPrebuilt(nowMs float64) {
	w := e.wHead
	for k := e.wHead; k < len(e.waiting); k++ {
		ri := e.waiting[k]
		r := &e.reqs[ri]
		if len(r.Blocks) > 0 && r.NumComputed >= r.PromptLen && len(e.running) < e.cfg.MaxSequences {
			e.heldWaiting--
			e.admit(ri, nowMs, Admission{ReusedTokens: r.ownLo})
			continue
		}
		e.waiting[w] = ri
		w++
	}
	e.waiting = e.waiting[:w]
	if e.wHead == len(e.waiting) {
		e.waiting, e.wHead = e.waiting[:0], 0
	}
}

// prefillBudget is what one SGLang prefill batch may still take: total tokens of KV (free and
// evictable, less the reserve for running requests' future output), prompt tokens, and the
// chunked-prefill budget.
type prefillBudget struct {
	total         float64
	input, chunks int32
}

// prefillBatch forms the prefill batch of a pass (SGLang's PrefillAdder): the continuing chunked
// prompt first, then waiting requests in FCFS order, each after a radix-cache prefix match (capped
// at its known tokens − 1, so the last token's logits are computed), until a request does not fit
// (head-of-line blocking), MaxSequences is reached or the chunk budget is spent. A request longer
// than ChunkedPrefillSize takes what is left of the chunk budget, cut to whole pages, and
// continues as the chunked request.
func (e *Engine) prefillBatch(nowMs float64) {
	c := &e.cfg.SGLang
	b := prefillBudget{
		total: float64(e.pool.Available())*float64(e.bs) - e.decodeReserve(),
		input: int32(c.MaxPrefillTokens), chunks: int32(c.ChunkedPrefillSize),
	}
	if ci := e.sg.chunked; ci >= 0 {
		r := &e.reqs[ci]
		n, charged, cost, ok := e.fitPrefill(r, r.NumComputed, &b)
		need := ceilDiv(r.NumComputed+n, e.bs) - int32(len(r.Blocks))
		// Nothing else runs to free blocks: queued hand-offs' KV gives way (under MaxSequences
		// 1 they cannot be admitted while this request holds the slot).
		for ok && int(need) > e.pool.Available() && !e.anyDecoding() && e.evictWaitingHolder() {
		}
		if !ok || int(need) > e.pool.Available() {
			return
		}
		b.take(charged, cost)
		r.Blocks = e.pool.allocate(max(need, 0), r.Blocks)
		e.schedule(ci, n, 0)
		if r.NumComputed < r.known() {
			return
		}
		e.sg.chunked = -1
	}
	for len(e.running) < e.cfg.MaxSequences && b.chunks > 0 && len(e.waiting) > e.wHead {
		ri := e.waiting[e.wHead]
		r := &e.reqs[ri]
		known := r.known()
		var hits, inactiveHits int32
		if e.cfg.PrefixCaching {
			limit := known - 1
			if r.Generated >= r.MaxOutput {
				limit = known // no logits needed: the whole prompt may match
			}
			hits, inactiveHits = e.pool.lookup(r, max(limit, 0)/e.bs)
		}
		start := hits * e.bs
		n, charged, cost, ok := e.fitPrefill(r, start, &b)
		need := ceilDiv(start+n, e.bs) - hits
		if !ok || int(need+inactiveHits) > e.pool.Available() {
			break
		}
		b.take(charged, cost)
		e.admitHead(nowMs, hits, need, n)
		if r.NumComputed < known {
			e.sg.chunked = ri
			return
		}
	}
}

// fitPrefill is the chunk of request r, whose KV is computed up to start, that budget b admits:
// n tokens, charged page-rounded against the prompt and chunk budgets, and cost against b.total
// (charged plus, when the chunk ends the prompt, the request's clipped remaining output); ok is
// false when it does not fit. The KV budget is waived
// for the first request of a rank where no other request runs.
func (e *Engine) fitPrefill(r *Request, start int32, b *prefillBudget) (n, charged int32, cost float64, ok bool) {
	c := &e.cfg.SGLang
	page := int32(c.PageSize)
	extend := r.known() - start
	n = extend
	// SGLang's PrefillAdder compares the page-rounded input with the chunk budget and cuts the
	// chunk to whole pages: a rest of 961-1,000 tokens under a budget of 1,000 and pages of 64
	// is cut to 960, not charged 1,024 and refused at every pass.
	if ceilDiv(extend, page)*page > int32(c.ChunkedPrefillSize) {
		n = min(extend, b.chunks/page*page)
	}
	if n <= 0 {
		return 0, 0, 0, false
	}
	charged = ceilDiv(n, page) * page
	cost = float64(charged)
	if n == extend {
		cost += float64(min(r.MaxOutput-r.Generated, int32(c.ClipMaxNewTokens)))
	}
	// A rank where nothing else decodes or prefills needs only the physical fit the caller
	// checks (prompt plus output never exceeds the pool): a request whose prompt and output fill
	// the whole pool would otherwise wait forever.
	alone := !e.anyDecoding() && e.scheduledN == 0
	if cost >= b.total && !alone || charged > b.input || charged > b.chunks {
		return 0, 0, 0, false
	}
	return n, charged, cost, true
}

// take charges a chunk of charged page-rounded tokens costing cost to the budget.
func (b *prefillBudget) take(charged int32, cost float64) {
	b.total -= cost
	b.input -= charged
	b.chunks -= charged
}

// decodeReserve is the KV, in tokens, admission keeps free for running requests' future output:
// Σ over decoding requests of min(remaining output, ClipMaxNewTokens) × new_token_ratio.
func (e *Engine) decodeReserve() float64 {
	clip := int32(e.cfg.SGLang.ClipMaxNewTokens)
	n := 0.0
	for _, ri := range e.running {
		if ri == e.sg.chunked {
			continue
		}
		r := &e.reqs[ri]
		n += float64(min(max(r.MaxOutput-r.Generated, 0), clip))
	}
	return n * e.sg.ratio
}

// decodeStep schedules one decode token for every running request past its prefill. While the
// blocks that step needs exceed the pool's free and evictable blocks and more than one request
// runs, it retracts the running request with the fewest output tokens (the longest prompt among
// equals): its KV is released (its cached blocks stay in the prefix cache), it restarts from the
// back of the waiting queue, and new_token_ratio is re-estimated as min(1, (Σ output so far +
// 20 × survivors) / (Σ max output + 1)) over the survivors; a pass without retraction decays
// new_token_ratio toward its floor.
func (e *Engine) decodeStep() {
	// A running request's lease holds the KV of every token it computed, so its next decode step
	// needs at most one more block: with a block available per running request the sum need not
	// be taken (nothing is retracted either way).
	need := 0
	if len(e.running) > e.pool.Available() {
		for _, ri := range e.running {
			need += e.stepNeed(ri)
		}
	}
	retracted := false
	for need > e.pool.Available() && len(e.running) > 1 {
		k := e.retractVictim()
		ri := e.running[k]
		need -= e.stepNeed(ri)
		e.running = append(e.running[:k], e.running[k+1:]...)
		if ri == e.sg.chunked {
			e.sg.chunked = -1
		}
		r := &e.reqs[ri]
		e.dropKV(r)
		r.Status = Waiting
		e.waiting = append(e.waiting, ri)
		retracted = true
	}
	for need > e.pool.Available() && e.evictWaitingHolder() {
	}
	if retracted {
		var out, maxOut int64
		for _, ri := range e.running {
			out += int64(e.reqs[ri].Generated)
			maxOut += int64(e.reqs[ri].MaxOutput)
		}
		e.sg.ratio = min(1, float64(out+SGLangRetractDecodeSteps*int64(len(e.running)))/float64(maxOut+1))
	} else {
		e.sg.ratio = max(e.sg.minRatio, e.sg.ratio-e.sg.decay)
	}
	spare := e.draftSpare()
	plain := e.cfg.Speculation == nil
	for _, ri := range e.running {
		if ri == e.sg.chunked {
			continue
		}
		r := &e.reqs[ri]
		if plain {
			known := r.known()
			if e.plainDecode(ri, r, known) {
				continue
			}
			// A decode step whose token opens a new block (every step at block size 1): the one
			// block the general path below would allocate, taken here without its draft and
			// growth arithmetic, or the step waits as there.
			if r.Generated > 0 && known-r.NumComputed == 1 && known == int32(len(r.Blocks))*e.bs+1 {
				if e.pool.Available() > 0 {
					r.Blocks = e.pool.allocate(1, r.Blocks)
					e.plainDecode(ri, r, known)
				}
				continue
			}
		}
		n := r.known() - r.NumComputed
		d := e.drafts(r, n, math.MaxInt32, spare)
		grow := ceilDiv(r.NumComputed+n+d, e.bs) - int32(len(r.Blocks))
		if int(grow) > e.pool.Available() {
			continue
		}
		held := len(r.Blocks)
		if grow > 0 {
			r.Blocks = e.pool.allocate(grow, r.Blocks)
		}
		if d > 0 {
			e.useSpare(r, held, &spare)
		}
		e.schedule(ri, n, d)
	}
}

// stepNeed is the blocks running request ri needs for its next decode step (0 for the chunked
// request, which does not decode).
func (e *Engine) stepNeed(ri int32) int {
	if ri == e.sg.chunked {
		return 0
	}
	r := &e.reqs[ri]
	return max(0, int(ceilDiv(r.known(), e.bs))-len(r.Blocks))
}

// retractVictim is the index in the running set of the request to retract: the fewest output
// tokens, then the longest prompt, then the latest admitted.
func (e *Engine) retractVictim() int {
	best := len(e.running) - 1
	for k := len(e.running) - 2; k >= 0; k-- {
		r, b := &e.reqs[e.running[k]], &e.reqs[e.running[best]]
		if r.Generated < b.Generated || r.Generated == b.Generated && r.PromptLen > b.PromptLen {
			best = k
		}
	}
	return best
}
