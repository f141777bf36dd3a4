package engine

import "github.com/servesweep/servesweep/sim/timing"

// Speculative steady decode runs. Under speculative decoding a pass's batch depends on how many
// drafts each request verifies and accepts, so it cannot be formed in O(1) as a plain steady run
// is (steady.go). But while every running request is decoding, the token budget holds every
// request's step and drafts, each request's lease holds its drafts, no block a request fills
// joins the prefix cache's index, nothing can be admitted and no request emits its last token,
// a pass is each running request's decode step with min(Drafts, MaxOutput − Generated − 1)
// drafts, and its end only draws each request's accepted drafts (the same hash of seed, request
// and output position as Engine.accept) and advances its output. A speculative run keeps, per
// running request, its output count and the pass in flight's drafts and acceptance, in a dense
// array, and forms and ends each pass with one loop over it; Sync brings the requests up to
// date. A request that emits its last token in a pass (its acceptance is known when the pass is
// formed) is brought up to date and ends that pass on the general path, and the run goes on
// without it; a pass in which a request needs a new block is formed on the general path
// instead, and ends the run. A TensorRT-LLM decode rank under guaranteed_no_evict holds each
// request's whole footprint, so its runs last until a request it could admit arrives.

// specEntry is one running request of a speculative run, in running order.
type specEntry struct {
	ri    int32 // request index
	gen   int32 // output tokens emitted after the last pass completed (Request.Generated)
	lease int32 // the request's lease in tokens: len(Blocks) × BlockSize
	known int32 // prompt plus gen: the tokens whose KV the next decode step completes
	// maxOutput is the request's MaxOutput, kept here so that a pass touches only the entries.
	maxOutput int32
	// first is the pass index of the request's first pass in the run and joined the run's count
	// of completed passes when it joined (a request admitted during the run joins after its
	// admission pass).
	first, joined int32
	// drafts and accepted are the pass in flight's drafts verified and accepted.
	drafts, accepted int32
	// last marks a request that emits its last token in the pass in flight; finished marks one
	// whose request completed in the pass just ended (completeSpecSteady reads it instead of the
	// request's status, so that the running set is compacted without touching the requests).
	last, finished bool
}

// specPass is the next pass of a speculative run, drawn when the pass before it ended: the sums
// its batch is priced from (scheduleSpecSteady).
type specPass struct {
	// kv is the running requests' known tokens (each decode step's KV); drafts and draftKV the
	// drafts verified and the KV they attend to; proposals and proposalKV the requests that
	// propose their next round's drafts after the pass and their KV.
	kv, drafts, draftKV, proposals, proposalKV int
	// blocked says that a request needs a block for its drafts: the pass is formed on the
	// general path, which allocates it.
	blocked bool
}

// draw draws entry en's next round: its drafts (min(Drafts, MaxOutput − Generated − 1)), how many
// are accepted (Engine.acceptAt) and whether it emits its last token, adding its share to p.
func (e *Engine) draw(en *specEntry, p *specPass) {
	d := min(e.cfg.Speculation.Drafts, en.maxOutput-en.gen-1)
	a := e.acceptAt(en.ri, en.gen, d)
	en.drafts, en.accepted, en.last = d, a, en.gen+1+a >= en.maxOutput
	p.blocked = p.blocked || en.known+d > en.lease
	p.kv += int(en.known)
	p.drafts += int(d)
	p.draftKV += int(d)*int(en.known) + int(d)*int(d+1)/2
	if en.maxOutput-en.gen > 1 {
		p.proposals++
		p.proposalKV += int(en.known)
	}
}

// startSpecSteady starts a speculative run after the pass with index pass ended at endMs, when
// every running request emitted a token in it and is decoding with at least 2 tokens out, the
// token budget holds every request's decode step with all its drafts, and no request would
// register a block in the prefix cache's key index (Request.unindexed) or is left out of the
// round tally (Config.RoundTallyFromMs, RoundTallyUntilMs). Called by Complete with none queued that could be
// admitted; it lists the running set as the ready requests, which a general Complete that ends
// a speculative pass after a mid-pass Sync reads, and draws the run's first pass.
func (e *Engine) startSpecSteady(endMs float64, pass int32) {
	n := len(e.running)
	s := e.cfg.Speculation
	if n == 0 || int64(n)*int64(1+s.Drafts) > int64(e.cfg.MaxBatchedTokens) {
		return
	}
	ents := e.specEnts[:0]
	for _, ri := range e.running {
		r := &e.reqs[ri]
		if !e.canJoin(r, pass) {
			return
		}
		ents = append(ents, specEntry{ri: ri, gen: r.Generated, lease: int32(len(r.Blocks)) * e.bs, known: r.known(), maxOutput: r.MaxOutput,
			first: pass + 1})
	}
	e.specEnts = ents
	e.ready = append(e.ready[:0], e.running...)
	e.steady = steadyRun{left: 1, n: int32(n), first: pass + 1, lastPass: pass, lastEndMs: endMs, spec: true}
	for i := range ents {
		e.draw(&ents[i], &e.steady.next)
	}
}

// scheduleSpecSteady forms the speculative run's next pass at nowMs, drawn when the one before it
// ended, and reports false, forming nothing, when it cannot be formed steadily: a request needs a
// block for its drafts, or requests wait that the pass could admit and the rank is not under
// NoEvict. Under NoEvict the pass admits what the general path would after the run's decode
// steps (holdAdmissions, admitWaiting: they read no running request's state but its lease,
// which a run never changes).
func (e *Engine) scheduleSpecSteady(nowMs float64) (durMs float64, ok bool) {
	st := &e.steady
	p := &st.next
	admitting := len(e.waiting) > e.wHead && !e.admissionsClosed()
	if p.blocked || admitting && !e.cfg.NoEvict {
		return 0, false
	}
	st.left--
	st.scheduled++
	e.steadyPasses++
	n := int(st.n)
	// The batch schedule and price form: every request a decode step at its known tokens with its
	// drafts, sampled, and proposing its next round's drafts unless it is at its last token.
	e.batch = timing.Batch{KVCapacityTokens: e.CapacityTokens(), DecodeSteps: n, DecodeStepKVTokens: p.kv,
		DraftTokens: p.drafts, DraftKVTokens: p.draftKV, SampledTokens: n, DraftProposals: p.proposals, DraftProposalKVTokens: p.proposalKV}
	if admitting {
		// The general path's admission after the running requests' steps, with the budget they
		// leave; schedule adds each admitted request's share to the batch and the ready list.
		e.scheduledN, e.readyKV = n, p.kv
		e.ready = e.ready[:n]
		if budget := int32(e.cfg.MaxBatchedTokens - n - p.drafts); !e.holdAdmissions(budget) {
			e.admitWaiting(nowMs, budget)
		}
		return e.price(!e.cfg.PrefillOnly)
	}
	if !e.cfg.PrefillOnly {
		e.batch.DecodeRequests, e.batch.DecodeKVTokens = n, p.kv
	}
	return e.cfg.Timing.PassMs(&e.batch), true
}

// completeSpecSteady ends a speculative pass: every running request continues its pass run with
// a round of 1 + its accepted drafts, counted in the round tally and the speculation statistics,
// and its next round is drawn. A request that emits its last token is brought up to date and
// ends the pass on the general path (completeOne), in running order; the completed requests then
// leave the running set and the run, done is called with each, and the run goes on with the
// others.
func (e *Engine) completeSpecSteady(endMs float64, pass int32, first, done func(int32)) (continued int32) {
	st := &e.steady
	var rounds, drafts, accepted int64
	var next specPass
	finished := 0
	for i := range e.specEnts {
		en := &e.specEnts[i]
		if en.last {
			e.syncEntry(en, true)
			r := &e.reqs[en.ri]
			if c, f := e.completeOne(en.ri, r, endMs, pass, first); !c || !f {
				panic("engine: a speculative steady pass's last token did not continue its run or complete its request")
			}
			en.finished = true
			finished++
			continue
		}
		e.rounds[en.accepted]++
		if en.drafts > 0 {
			rounds++
		}
		drafts += int64(en.drafts)
		accepted += int64(en.accepted)
		en.gen += 1 + en.accepted
		en.known += 1 + en.accepted
		e.draw(en, &next)
	}
	e.anyRounds = true
	e.spec.Rounds += rounds
	e.spec.Drafts += drafts
	e.spec.Accepted += accepted
	continued = st.n
	// The requests the pass admitted (scheduleSpecSteady) end it on the general path.
	nEnts := len(e.specEnts)
	for _, ri := range e.ready[nEnts:] {
		c, f := e.completeOne(ri, &e.reqs[ri], endMs, pass, first)
		if c {
			continued++
		}
		if f {
			finished++
		}
	}
	st.completed++
	st.lastPass, st.lastEndMs = pass, endMs
	st.left = 1
	if finished == 0 && len(e.running) == nEnts {
		st.next = next
		return continued
	}
	// Completed requests leave the running set and the run (done is called with each, in
	// running order); the admitted ones that can run on steadily join it, drawn for the next
	// pass, else the run ends here.
	joins := true
	kept, ents := e.running[:0], e.specEnts[:0]
	for i, ri := range e.running {
		if i < nEnts {
			// The entries are the running set's first nEnts requests, in order; an entry's
			// request completed exactly when it is marked finished above. Entries before the
			// first completion stay where they are.
			if e.specEnts[i].finished {
				done(ri)
				continue
			}
			kept = append(kept, ri)
			if len(ents) == i {
				ents = ents[:i+1]
			} else {
				ents = append(ents, e.specEnts[i])
			}
			continue
		}
		r := &e.reqs[ri]
		if r.Status == Completed {
			done(ri)
			continue
		}
		kept = append(kept, ri)
		if joins = joins && e.canJoin(r, pass); joins {
			ents = append(ents, specEntry{ri: ri, gen: r.Generated, lease: int32(len(r.Blocks)) * e.bs, known: r.known(), maxOutput: r.MaxOutput,
				first: pass + 1, joined: st.completed})
			e.draw(&ents[len(ents)-1], &next)
		}
	}
	e.running, e.specEnts = kept, ents
	e.ready = append(e.ready[:0], e.running...)
	st.n = int32(len(e.specEnts))
	st.next = next
	if int64(st.n)*int64(1+e.cfg.Speculation.Drafts) > int64(e.cfg.MaxBatchedTokens) {
		joins = false // the token budget may cut a request's drafts
	}
	if !joins {
		e.Sync() // the entries' requests up to date; the next pass is the general path's
	} else if st.n == 0 {
		*st = steadyRun{}
	}
	return continued
}

// canJoin reports whether running request r, which emitted a token in the pass with index pass,
// can run on in a speculative run (startSpecSteady's conditions for one request).
func (e *Engine) canJoin(r *Request, pass int32) bool {
	return r.lastPass == pass && r.Generated >= 2 && r.NumComputed == r.known()-1 && r.drafts == 0 &&
		!(e.cfg.PrefixCaching && r.numRegistered < r.FullBlocks && (r.Preemptions > 0 || r.numRegistered < r.SharedBlocks)) &&
		!e.untallied(r)
}

// syncSpec brings the running requests up to date with a speculative run (Sync), with the pass
// in flight, if any, formed (syncEntry).
func (e *Engine) syncSpec() {
	st := &e.steady
	inFlight := st.scheduled > st.completed
	for i := range e.specEnts {
		e.syncEntry(&e.specEnts[i], inFlight)
	}
}

// syncEntry brings the request of entry en up to date with the run's passes completed: its
// output, the tokens that arrived with the one before them, its pass run, its computed tokens
// and unindexed blocks; with inFlight, also with the pass formed and not completed (its decode
// step computed, its drafts to verify), which the general path (completeOne) ends.
func (e *Engine) syncEntry(en *specEntry, inFlight bool) {
	st := &e.steady
	r := &e.reqs[en.ri]
	if passes := st.completed - en.joined; passes > 0 {
		r.WithPrevious += en.gen - r.Generated - passes
		r.Generated = en.gen
		if r.runFirst < 0 {
			r.runFirst = en.first
		}
		r.lastPass, r.LastTokenMs = st.lastPass, st.lastEndMs
	}
	r.NumComputed = r.known() - 1
	if inFlight {
		r.NumComputed++
		r.drafts = en.drafts
	}
	e.registerFull(r)
}
