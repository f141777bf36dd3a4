package engine

// Status is a request's lifecycle state.
type Status uint8

// Request states. Pending → (Waiting ⇄ Running) → Completed; Rejected at dispatch for a prompt
// that cannot fit the context limit. A request still Waiting or Running when a virtual-time cap
// ends the run is incomplete and has no terminal status.
const (
	Pending Status = iota
	Waiting
	Running
	Completed
	Rejected
)

// RejectReason says why a request was rejected at dispatch.
type RejectReason uint8

// Rejection reasons (requests.jsonl rejection_reason, prediction.json
// rejected_requests_by_reason).
const (
	// NotRejected: the request was not rejected.
	NotRejected RejectReason = iota
	// RejectedContextLength: the prompt has engine.context_length tokens or more
	// (dynosim-spec.md §3.2.6).
	RejectedContextLength
	// RejectedKVCapacity: the prompt needs more KV than a worker's whole KV pool holds.
	RejectedKVCapacity
	// RejectedPrefillBudget: with engine.enable_chunked_prefill false, the prompt has more tokens
	// than the token budget of one pass (scheduler.max_batched_tokens of the role that runs the
	// prefill), so its prefill could never run whole in one pass; vLLM refuses such a prompt
	// (its prompt-length check against max_num_batched_tokens when chunked prefill is off).
	RejectedPrefillBudget
)

// String is the reason's name: "context_length", "kv_capacity", "max_batched_tokens", or ""
// when not rejected.
func (r RejectReason) String() string {
	switch r {
	case RejectedPrefillBudget:
		return "max_batched_tokens"
	case RejectedContextLength:
		return "context_length"
	case RejectedKVCapacity:
		return "kv_capacity"
	}
	return ""
}

// Terminal reports whether s is a terminal status.
func (s Status) Terminal() bool { return s == Completed || s == Rejected }

// String is the status name used in requests.jsonl (`terminal_status`).
func (s Status) String() string {
	switch s {
	case Pending:
		return "pending"
	case Waiting:
		return "waiting"
	case Running:
		return "running"
	case Completed:
		return "completed"
	case Rejected:
		return "rejected"
	}
	return "unknown"
}

// PassRun is a stretch of consecutive passes [First, Last] (pass indices of one worker) in each
// of which a request emitted one token whose gap equals that pass's gap (engine-internals.md §7:
// ITL is every adjacent token gap). Storing runs instead of per-token gaps keeps ITL exact while
// memory grows with passes, not tokens.
type PassRun struct {
	Worker      int32
	First, Last int32
}

// Request is the whole state of one request in one run: its static shape, its scheduler state
// and the timestamps the report is built from. Times are virtual ms; -1 means "not yet".
// Runs keep requests in one dense slice and refer to them by index.
type Request struct {
	// The fields every pass reads or writes come first, the lease's address and length
	// included, within one 64-byte cache line (a Request is 256 bytes, and a run's request
	// array is page-aligned); then what admissions, completions and the report use.

	// PromptLen is the prompt length in tokens (ISL).
	PromptLen int32
	// MaxOutput is the number of output tokens the request will emit: the requested OSL,
	// clipped so that prompt + output stays within the context limit (dynosim-spec.md §3.2.6).
	MaxOutput int32
	// Generated counts output tokens emitted so far; NumComputed counts tokens whose KV is
	// computed (prompt and output). Both lag during a steady decode run until Engine.Sync.
	Generated   int32
	NumComputed int32
	// numRegistered counts leading Blocks already offered to the prefix cache.
	numRegistered int32
	// FullBlocks is how many full blocks of the engine's block size the request's token
	// sequence (prompt then output) has, up to the context limit (traffic.BlockSet.Full).
	FullBlocks int32
	// ITL bookkeeping: lastPass is the worker pass index of the latest token (noPass none), runFirst
	// the first pass of the open run (-1 none); closed runs go to firstRun and rare.moreRuns, gaps that are not a
	// single pass (the request skipped a pass) to rare.gaps (Gaps).
	lastPass, runFirst int32
	// drafts is the draft tokens the request's decode step in the pass being run verifies.
	drafts int32
	// Status is the lifecycle state; Rejection says why a Rejected request was rejected.
	Status    Status
	Rejection RejectReason
	// uniqueTail records that the request was never preempted and has offered every block it
	// shares with another request of the workload (numRegistered >= SharedBlocks): the blocks
	// registerFull offers next are its own, counted, not registered (registerBlocks). It lets a
	// decode step that fills a block skip reading Preemptions and SharedBlocks, which lie outside
	// the cache line a pass touches. False is always safe (registerBlocks then decides).
	uniqueTail bool
	// LastTokenMs is when the latest output token was emitted (virtual ms; -1 none yet); it
	// lags during a steady decode run until Engine.Sync.
	LastTokenMs float64

	// Blocks is the KV lease: pool block ids in sequence order.
	Blocks []int32
	// Worker is the logical worker and Rank the attention-DP rank the request was placed on.
	Worker, Rank int32
	// Keys name the request's leading full blocks that another request of the workload may also
	// hold: equal keys exactly for equal chained KV-block hashes (traffic.BlockSet.Shared's dense
	// ids). Block j >= len(Keys) is unique to the request and named UniqueBlockKey(Index, j)
	// (keyAt). Shared, read-only.
	Keys []uint32
	// SharedBlocks is how many leading blocks another request of the workload also holds
	// (len(Keys)); the rest only this request can match.
	SharedBlocks int32
	// Index is the request's index in the run (its position in the workload): it names the
	// request's unique blocks (UniqueBlockKey).
	Index int32
	// RequestedOutput is the OSL the workload asked for.
	RequestedOutput int32
	// Preemptions counts how often the request was preempted (KV released, recompute).
	Preemptions int32

	// Report inputs: arrival, first admission, first and second token, and the terminal state
	// (completion or rejection), virtual ms, -1 when not (yet) reached.
	ArrivalMs, FirstAdmitMs, FirstTokenMs, SecondTokenMs, TerminalMs float64
	// History lists the request's admissions into a running set on this pool, in order: the
	// first, then one per re-admission after a preemption.
	History []Admission
	// ReusedTokens is the largest Admission.ReusedTokens over the request's admissions
	// (dynosim-spec.md §4.2: "max over a request's admissions"), in tokens, never more than
	// PromptLen; FirstReusedTokens is the value at its first admission. In disaggregated serving
	// both are the prefill side's (where prefix reuse saves compute): the decode side's hits are
	// logged in History only.
	ReusedTokens, FirstReusedTokens int32
	// RecoveredTokens sums Admission.RecoveredTokens over the request's admissions, in tokens.
	RecoveredTokens int32

	// ownLo and ownHi bound the tokens [ownLo, ownHi) whose KV this request computed itself on
	// its rank (or received by KV transfer) before its latest preemption; ownHi == 0: none.
	// Prefix-cache hits inside that range are recovered, not reused.
	ownLo, ownHi int32
	// kvTransferred marks a request whose prompt KV arrived by transfer (Reserve): its prefix
	// hits on this pool do not count as reuse of the request (ReusedTokens).
	kvTransferred bool
	// WithPrevious counts output tokens that arrived at the same time as the token before them
	// (speculative decoding: a round emits its accepted drafts and its sampled token together);
	// each has an ITL sample of 0 ms.
	WithPrevious int32

	// Closed pass runs of the ITL bookkeeping (see lastPass; EachRun): the first inline
	// (First -1: none), since most requests close one run, at completion, and a run-level
	// allocation per request would cost more than the run; the later ones in rare.moreRuns.
	firstRun PassRun
	// rare holds what few requests need (later pass runs, gaps that are not a pass's, speculative
	// rounds), allocated on first use: nil for most requests, 8 bytes instead of 72 per request.
	rare *rareState
	// Pads a Request to 256 bytes, 4 cache lines, so that in a page-aligned array every
	// request's first 64 bytes (the fields every pass touches) are one cache line.
	_ [24]byte
}

// rareState is the part of a Request's ITL bookkeeping that most requests never use.
type rareState struct {
	// moreRuns are the closed pass runs after firstRun.
	moreRuns []PassRun
	// gaps are the ITL samples that are not a single pass's gap (see lastPass), ms.
	gaps []float64
	// roundGaps: see Request.RoundGaps.
	roundGaps []float64
	// roundTokens: see Request.RoundTokens.
	roundTokens []uint8
}

// more returns r's rareState, allocating it on first use.
func (r *Request) more() *rareState {
	if r.rare == nil {
		r.rare = new(rareState)
	}
	return r.rare
}

// Gaps returns the request's ITL samples that are not a single pass's gap (the request skipped
// a pass, or its first token came from elsewhere), ms, in order. Shared: callers must not modify it.
func (r *Request) Gaps() []float64 {
	if r.rare == nil {
		return nil
	}
	return r.rare.gaps
}

// RoundGaps returns, under speculative decoding only, one entry per round that did not continue
// a pass run (its first token's gap is one of Gaps): that gap divided by the tokens the round
// emitted (ms per token), so 1000 / entry is the user's output rate over the gap
// (output_token_throughput_per_user's samples). The rounds that continued a pass run are in
// RoundTokens. Shared: callers must not modify it.
func (r *Request) RoundGaps() []float64 {
	if r.rare == nil {
		return nil
	}
	return r.rare.roundGaps
}

// MaxRoundTokens bounds the tokens one speculative round emits (1 + accepted drafts), so that a
// round's count fits RoundTokens' bytes and the round tallies' per-pass arrays
// (Engine.TakeRounds).
const MaxRoundTokens = 8

// RoundTokens returns, under speculative decoding with Config.KeepRoundTokens only, the tokens
// (1..MaxRoundTokens) of each round that continued a pass run, in order: one per pass of the
// request's runs (EachRun), whose gap, divided by it, is the round's sample of the user's output
// rate. Without KeepRoundTokens the engine counts those rounds per pass and size instead
// (Engine.TakeRounds), which costs nothing per request. Shared: callers must not modify it.
func (r *Request) RoundTokens() []uint8 {
	if r.rare == nil {
		return nil
	}
	return r.rare.roundTokens
}

// Admission is one admission of a request into a rank's running set. Token counts are whole
// KV blocks found in the prefix cache at that admission, split by who computed them.
type Admission struct {
	// AtMs is the virtual time of the admission, ms.
	AtMs float64
	// ReusedTokens are prompt tokens found cached whose KV other requests computed (prefix
	// reuse); at most the prompt length. For the first decode-side admission of a disaggregated
	// hand-off, the prompt tokens the decode worker already cached at reservation.
	ReusedTokens int32
	// RecoveredTokens are tokens found cached whose KV this request itself computed before a
	// preemption: its prompt past the prefix it reused, and its output. Always 0 at the first
	// admission. ReusedTokens + RecoveredTokens is the whole hit.
	RecoveredTokens int32
}

// Admissions counts the request's admissions (1 + re-admissions after preemption).
func (r *Request) Admissions() int32 { return int32(len(r.History)) }

// splitHit splits a prefix-cache hit of hit tokens at an admission into tokens other requests
// computed (reused, counting prompt tokens only) and tokens the request computed itself before a
// preemption (recovered). When the request was preempted more than once and others filled a gap
// in between, the gap counts as recovered: reuse is never overstated.
func (r *Request) splitHit(hit int32) (reused, recovered int32) {
	if r.ownHi == 0 {
		reused = min(hit, r.PromptLen)
	} else {
		reused = min(hit, r.ownLo) + max(0, min(hit, r.PromptLen)-r.ownHi)
	}
	return reused, hit - reused
}

// noPass marks "no token emitted by a pass of this request's current worker yet"; far enough
// below 0 that pass 0 never counts as following it.
const noPass = -2

// Reset prepares r for a run: shape from the arguments (index: Index, keys: Keys, fullBlocks:
// FullBlocks, sharedBlocks: SharedBlocks), every time
// at -1, no KV held. history
// is the (empty) slice admissions are appended to; a run hands each request a capacity-1 window
// of one shared array, so the first admission costs no allocation.
func (r *Request) Reset(index, promptLen, requestedOutput, maxOutput int32, keys []uint32, fullBlocks, sharedBlocks int32, history []Admission) {
	*r = Request{
		Index: index, PromptLen: promptLen, RequestedOutput: requestedOutput, MaxOutput: maxOutput,
		FullBlocks: fullBlocks, Keys: keys, SharedBlocks: sharedBlocks,
		History:   history[:0],
		ArrivalMs: -1, FirstAdmitMs: -1, FirstTokenMs: -1, SecondTokenMs: -1, LastTokenMs: -1, TerminalMs: -1,
		lastPass: noPass, runFirst: -1, firstRun: PassRun{First: -1},
	}
}

// UniqueBlockKey is the name of block j of request req when no other request of the workload
// holds that block (it lies past the request's shared leading blocks): the pair (req, j) itself,
// tagged by the top bit, so distinct blocks never share it and it never equals a shared block's
// dense id (traffic.BlockSet.Shared, below 2^32). Only the request itself ever looks it up.
// req and j must be >= 0.
func UniqueBlockKey(req, j int32) uint64 {
	return 1<<63 | uint64(uint32(req))<<32 | uint64(uint32(j))
}

// keyAt is the name of r's full block j in the prefix cache.
func (r *Request) keyAt(j int32) uint64 {
	if int(j) < len(r.Keys) {
		return uint64(r.Keys[j])
	}
	return UniqueBlockKey(r.Index, j)
}

// unindexed is the range [lo, hi) of r's lease positions whose full blocks are registered
// outside the prefix cache's key index (Engine.registerBlocks): its blocks from SharedBlocks on,
// which no other request can match, while r has never dropped its KV. Empty once it has.
func (r *Request) unindexed() (lo, hi int32) {
	if r.Preemptions > 0 {
		return 0, 0
	}
	return r.SharedBlocks, max(r.SharedBlocks, r.numRegistered)
}

// lookupKey is the key a prefix lookup asks for as r's full block j, and false when no lookup
// can find block j or any block after it: past FullBlocks, or past the shared blocks while r
// has never dropped its KV (its unique blocks are then in no index: Request.unindexed).
// Once dropped, its unique blocks are mapped and named by UniqueBlockKey.
func (r *Request) lookupKey(j int32) (uint64, bool) {
	switch {
	case j >= r.FullBlocks:
		return 0, false
	case int(j) < len(r.Keys):
		return uint64(r.Keys[j]), true
	case r.Preemptions > 0:
		return UniqueBlockKey(r.Index, j), true
	}
	return 0, false
}

// known is the number of tokens whose content exists: prompt plus emitted output.
func (r *Request) known() int32 { return r.PromptLen + r.Generated }

// emit records one output token at endMs, produced by pass index pass of worker. It reports
// whether the token continues a pass run (the request's previous token came from pass − 1 of
// the same worker), i.e. whether its ITL sample is that pass's gap.
func (r *Request) emit(endMs float64, worker, pass int32) (continued bool) {
	switch r.Generated {
	case 0:
		r.FirstTokenMs = endMs
	case 1:
		r.SecondTokenMs = endMs
	}
	if r.Generated > 0 {
		if r.lastPass == pass-1 {
			if r.runFirst < 0 {
				r.runFirst = pass
			}
			continued = true
		} else {
			r.closeRun(worker)
			m := r.more()
			m.gaps = append(m.gaps, endMs-r.LastTokenMs)
		}
	}
	r.lastPass = pass
	r.LastTokenMs = endMs
	r.Generated++
	return continued
}

// emitWith records n more output tokens at endMs, emitted by the same pass as the token just
// emitted (a speculative round's accepted drafts): each arrives with the one before it, so its
// gap is 0 and it does not change the pass run.
func (r *Request) emitWith(endMs float64, n int32) {
	r.LastTokenMs = endMs
	r.Generated += n
	r.WithPrevious += n
}

// EachRun calls fn with every pass run of the request: the closed ones in order, then the open
// one, if any (a request still decoding when the run stopped).
func (r *Request) EachRun(fn func(PassRun)) {
	if r.firstRun.First >= 0 {
		fn(r.firstRun)
	}
	if r.rare != nil {
		for _, run := range r.rare.moreRuns {
			fn(run)
		}
	}
	if r.runFirst >= 0 {
		fn(PassRun{Worker: r.Worker, First: r.runFirst, Last: r.lastPass})
	}
}

// closeRun closes the open pass run, if any.
func (r *Request) closeRun(worker int32) {
	if r.runFirst < 0 {
		return
	}
	run := PassRun{Worker: worker, First: r.runFirst, Last: r.lastPass}
	if r.firstRun.First < 0 {
		r.firstRun = run
	} else {
		m := r.more()
		m.moreRuns = append(m.moreRuns, run)
	}
	r.runFirst = -1
}

// ClosedRuns returns the request's closed pass runs in order (a new slice; for tests and
// checks).
func (r *Request) ClosedRuns() []PassRun {
	var out []PassRun
	if r.firstRun.First >= 0 {
		out = append(out, r.firstRun)
	}
	if r.rare != nil {
		out = append(out, r.rare.moreRuns...)
	}
	return out
}

// ReceiveFirstToken records a first token produced elsewhere (the prefill side of a
// disaggregated hand-off) that is not visible yet: it becomes visible, and the next token's gap
// starts, when a rank admits the request (the decode worker streams it when it takes the request
// into its batch).
func (r *Request) ReceiveFirstToken() {
	r.FirstTokenMs, r.LastTokenMs = -1, -1
	r.Generated = 1
	r.lastPass, r.runFirst = noPass, -1
}

// EmitFirstToken records a first token produced elsewhere (the prefill side of a disaggregated
// hand-off) becoming visible at tMs. The next token's gap is measured from tMs.
func (r *Request) EmitFirstToken(tMs float64) {
	r.FirstTokenMs, r.LastTokenMs = tMs, tMs
	r.Generated = 1
	r.lastPass, r.runFirst = noPass, -1
}
