package engine

import "github.com/servesweep/servesweep/sim/timing"

// Steady decode runs. Most passes of a long replay are decode steps of the same running set:
// every running request computes one token, none fills a KV block, none finishes and nothing
// waits for admission. Such a pass costs the same whatever the requests: its batch is n decode
// steps attending to the running set's known tokens, which grow by n a pass. Complete starts a
// run when the pass it ends leaves the engine in that state and computes how many passes the
// state lasts (startSteady); Schedule and Complete then form and end those passes in O(1)
// (scheduleSteady, completeSteady) and bring the requests up to date once, when the run ends or
// the engine's state is read (Sync). The passes, their batches, times and ITL bookkeeping are
// exactly those the general path forms: the run stops before the first pass in which a request
// would fill a block that joins the prefix cache's index, need a new one, emit its last token or
// meet a queued request it could admit.

// steadyRun is the engine's steady decode run, if any (left or scheduled > 0).
type steadyRun struct {
	left      int32   // passes the run may still form
	n         int32   // running requests, each a decode step in every pass of the run
	kv        int     // Σ known tokens of the running requests at the last pass formed
	scheduled int32   // passes formed since the requests were last brought up to date
	completed int32   // passes completed since then
	first     int32   // pass index of the run's first pass
	lastPass  int32   // pass index of the last pass completed
	lastEndMs float64 // end of the last pass completed
	// spec marks a speculative run (specsteady.go): its passes are formed and ended over
	// Engine.specEnts, and left is 1 while the next pass may be tried.
	spec bool
	// next is a speculative run's next pass, drawn when the one before it ended.
	next specPass
}

// inPass reports that the pass in flight is a steady one (formed, not yet completed).
func (st *steadyRun) inPass() bool { return st.scheduled > st.completed }

// startSteady starts a run after the pass with index pass ended at endMs, when every running
// request emitted a token in it and the following passes can be formed steadily: each request is
// decoding (its known tokens all but the new one computed) with at least 2 tokens out, and the
// run lasts while each keeps its KV within its lease (no allocation), fills no block that joins
// the prefix cache's index and stays short of its last token. Called by Complete when steadyOK,
// with no request finished, none queued that could be admitted (admissionsClosed) and every
// running request ready (so the token budget held a decode step for each, and e.ready lists the
// running set in its order: a general Complete that ends a steady pass after a mid-pass Sync
// finds them there).
func (e *Engine) startSteady(endMs float64, pass int32) {
	n := len(e.running)
	if n == 0 {
		return
	}
	left := int32(1 << 30)
	kv := 0
	for _, ri := range e.running {
		r := &e.reqs[ri]
		known := r.known()
		if r.lastPass != pass || r.Generated < 2 || r.NumComputed != known-1 {
			return
		}
		// The run's j-th pass (j >= 1) computes token known+j-1 of r: it must fit the lease,
		left = min(left, int32(len(r.Blocks))*e.bs-known+1)
		// fill no block that joins the key index (registerFull registers nothing below
		// numRegistered+1 blocks; a block only r holds, while r has never dropped its KV, is
		// registered by counting it, which Sync does: Request.unindexed),
		if e.cfg.PrefixCaching && r.numRegistered < r.FullBlocks && (r.Preemptions > 0 || r.numRegistered < r.SharedBlocks) {
			left = min(left, (r.numRegistered+1)*e.bs-known)
		}
		// and not be r's last token (Complete's fast path: Generated+1 < MaxOutput).
		left = min(left, r.MaxOutput-r.Generated-1)
		if left < 1 {
			return
		}
		kv += int(known)
	}
	e.steady = steadyRun{left: left, n: int32(n), kv: kv - n, first: pass + 1, lastPass: pass, lastEndMs: endMs}
}

// scheduleSteady forms the run's next pass: the batch plainDecode would form for every running
// request, priced directly (Schedule's general path and price are not taken).
func (e *Engine) scheduleSteady() (durMs float64, any bool) {
	st := &e.steady
	st.left--
	st.scheduled++
	e.steadyPasses++
	st.kv += int(st.n)
	n := int(st.n)
	e.batch = timing.Batch{KVCapacityTokens: e.CapacityTokens(), DecodeSteps: n, DecodeStepKVTokens: st.kv,
		SampledTokens: n}
	if !e.cfg.PrefillOnly {
		e.batch.DecodeRequests, e.batch.DecodeKVTokens = n, st.kv
	}
	return e.cfg.Timing.PassMs(&e.batch), true
}

// completeSteady ends a steady pass: every running request continues its pass run.
func (e *Engine) completeSteady(endMs float64, pass int32) (continued int32) {
	st := &e.steady
	st.completed++
	st.lastPass, st.lastEndMs = pass, endMs
	return st.n
}

// Sync brings the running requests up to date with the steady passes formed and completed
// since they last were (a pass formed but not completed has computed its tokens, not emitted
// them; the general Complete ends it), and ends the run. The engine calls it before any general
// pass; the caller calls it before reading the requests of an engine stopped mid-run.
func (e *Engine) Sync() {
	st := &e.steady
	if st.scheduled == 0 {
		*st = steadyRun{}
		return
	}
	if st.spec {
		e.syncSpec()
		*st = steadyRun{}
		return
	}
	for _, ri := range e.running {
		r := &e.reqs[ri]
		r.NumComputed += st.scheduled
		e.registerFull(r) // the unindexed blocks the run filled
		if st.completed == 0 {
			continue
		}
		r.Generated += st.completed
		if r.runFirst < 0 {
			r.runFirst = st.first
		}
		r.lastPass, r.LastTokenMs = st.lastPass, st.lastEndMs
	}
	*st = steadyRun{}
}

// SteadyPasses counts the passes this engine formed in steady decode runs, for diagnostics and
// tests (the rest went through the general path).
func (e *Engine) SteadyPasses() int64 { return e.steadyPasses }
