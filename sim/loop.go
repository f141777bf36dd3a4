package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/planner"
	"github.com/servesweep/servesweep/sim/traffic"
)

// runState is the mutable state of one run's event loop.
type runState struct {
	cfg             *config.Config
	dep             *deployment
	wl              *traffic.Workload
	ctxLimit        int
	checkInvariants bool
	// ref switches mechanisms to their reference forms (Options.reference).
	ref referencePaths

	reqs     []engine.Request // client view: the decoding role's requests
	reqsP    []engine.Request // the prefill role's requests (disaggregated)
	handoffs []Handoff
	overlap  []int32 // per request: router overlap in tokens at the first role it visits
	// decoding is the role whose workers emit the output tokens: the aggregated role, or the
	// decode role of disaggregated serving. prefill is nil in aggregated mode.
	decoding *role
	prefill  *role
	disagg   bool
	xfer     transfer

	events eventHeap
	// passEnds holds the pending pass ends (one per busy worker) apart from events when the
	// run has at most maxListedWorkers workers, minPass the index of the first by (time, seq)
	// (-1: none): a scan of a few workers costs less than heap operations on every pass.
	passEnds    passList
	minPass     int
	listPasses  bool
	seq         int64
	nowMs       float64
	closedLoop  bool
	frontendMs  float64 // FrontendOverheadMs(cfg): every request's front-end time
	nextSession int     // next session to start under a concurrency load
	// cooldownFromMs is the arrival of the last session's first turn once it is scheduled (by a
	// closed loop, when it starts it; by an open loop, before the run), +Inf before
	// (traffic.load.cooldown: the engines' round tallies leave later arrivals out,
	// engine.Config.RoundTallyUntilMs).
	cooldownFromMs float64
	// scheduled holds the arrivals known before the run, sorted by (time, seq); nextScheduled is
	// the first not yet due. started is set once they are all known.
	scheduled     []event
	nextScheduled int
	started       bool
	// waits[i] counts, for an agentic workload (wl.Graph), the dependencies of request i not
	// yet terminal; nil otherwise.
	waits []int32
	// plan is the autoscaling planner (planner.policy enabled); nil otherwise. ticksQueued
	// counts its ticks in the event heap.
	plan        autoscaler
	ticksQueued int
	// pools are the roles the planner scales, by its pool number.
	pools []*role
	// keyFree holds returned key slices of compact BlockSets by capacity class: keyFree[c] has
	// capacity 1 << c (withKeys).
	keyFree [33][][]uint32
	// passStore is the memory budget and spill file of every worker's pass log.
	passStore *metrics.PassStore
}

// scheduleArrivals queues the first turn of the sessions that start on their own: all of them
// under open-loop and trace loads, the first `concurrency` under a concurrency load.
func (s *runState) scheduleArrivals() error {
	load := &s.cfg.Traffic.Load
	n := len(s.wl.Sessions)
	if s.wl.Graph != nil && load.Type != config.LoadTraceTimestamps {
		return &config.Error{File: s.cfg.File, Path: "traffic.load.type", Msg: "agentic traces need trace_timestamps load, got " + load.Type}
	}
	// Every session is scheduled now but those of a concurrency load past its first wave: one
	// allocation of the right size (a million-request trace: 32 MB, no growth copies).
	upfront := n
	if load.Type == config.LoadConcurrency {
		upfront = min(n, max(load.Concurrency, 0))
	}
	s.scheduled = slices.Grow(s.scheduled[:0], upfront)
	switch load.Type {
	case config.LoadConcurrency:
		s.closedLoop = true
		rampMs := load.Ramp() * 1000
		for s.nextSession < min(load.Concurrency, n) {
			s.startSession(s.nextSession, float64(s.nextSession)*rampMs/float64(load.Concurrency))
			s.nextSession++
		}
	case config.LoadConstantRate, config.LoadPoisson:
		if len(load.Profile) > 0 {
			s.scheduleProfile(load, n)
			break
		}
		rate := load.Unit()
		gap := 1000 / rate
		rng := rand.New(rand.NewPCG(load.Seed, 0x5e55))
		t := 0.0
		for i := 0; i < n; i++ {
			s.startSession(i, t)
			if load.Type == config.LoadPoisson {
				t += rng.ExpFloat64() * gap
			} else {
				t = float64(i+1) * gap
			}
		}
	case config.LoadTraceTimestamps:
		if g := s.wl.Graph; g != nil {
			s.waits = append([]int32(nil), g.Waits...)
		}
		for i := range s.wl.Sessions {
			if s.waits != nil && s.waits[s.wl.Sessions[i].First] > 0 {
				continue // released by its dependencies (finished)
			}
			s.startSession(i, s.wl.Sessions[i].StartMs)
		}
		// Authored start times need not be in file order; ties keep file order.
		slices.SortStableFunc(s.scheduled, func(a, b event) int { return cmp.Compare(a.timeMs, b.timeMs) })
	default:
		return &config.Error{File: s.cfg.File, Path: "traffic.load.type", Msg: fmt.Sprintf("%q is not supported yet", load.Type)}
	}
	s.started = true
	return nil
}

// scheduleProfile schedules the n sessions of an open-loop load with a piecewise-constant rate
// profile by time rescaling: with Λ(t) the expected arrivals up to t (the integral of the rate),
// constant_rate puts arrival i at Λ⁻¹(i) and poisson draws the increments of Λ between arrivals
// as unit exponentials (the seeded stream of a plain poisson load). The first arrival is at 0.
func (s *runState) scheduleProfile(load *config.Load, n int) {
	rng := rand.New(rand.NewPCG(load.Seed, 0x5e55))
	t := 0.0
	for i := 0; i < n; i++ {
		s.startSession(i, t)
		units := 1.0
		if load.Type == config.LoadPoisson {
			units = rng.ExpFloat64()
		}
		t = advanceProfile(load.Profile, t, units)
	}
}

// advanceProfile returns the time in ms at which the expected arrivals since tMs reach units
// under the piecewise-constant rate profile (the last phase's rate holds after its end).
func advanceProfile(profile []config.LoadPhase, tMs, units float64) float64 {
	for i, ph := range profile {
		endMs := ph.UntilSeconds * 1000
		if i < len(profile)-1 && tMs >= endMs {
			continue
		}
		perMs := ph.Rate() / 1000
		if i == len(profile)-1 || units <= perMs*(endMs-tMs) {
			return tMs + units/perMs
		}
		units -= perMs * (endMs - tMs)
		tMs = endMs
	}
	return tMs
}

// startSession schedules session i's first turn at atMs. Arrivals known before the run starts go
// to the sorted s.scheduled list, which keeps the event heap small; later ones to the heap.
func (s *runState) startSession(i int, atMs float64) {
	if i == len(s.wl.Sessions)-1 {
		s.cooldownFromMs = atMs
	}
	e := event{timeMs: atMs, kind: evArrival, req: s.wl.Sessions[i].First}
	if s.started {
		s.push(e)
		return
	}
	e.seq = s.seq
	s.seq++
	s.scheduled = append(s.scheduled, e)
}

func (s *runState) push(e event) {
	e.seq = s.seq
	s.seq++
	s.events.push(e)
}

// maxListedWorkers is the most workers (all roles) whose pass ends are kept in a list rather
// than in the event heap (runState.passEnds).
const maxListedWorkers = 16

// passList is the listed pass ends, one entry per busy worker, in parallel slices so that the
// scan for the first reads only times: time, sequence number and the worker (role << 28 |
// worker index).
type passList struct {
	timeMs []float64
	seq    []int64
	who    []int32
}

func (l *passList) len() int { return len(l.timeMs) }

// before reports whether entry i comes before entry j by (time, seq).
func (l *passList) before(i, j int) bool {
	if l.timeMs[i] != l.timeMs[j] {
		return l.timeMs[i] < l.timeMs[j]
	}
	return l.seq[i] < l.seq[j]
}

// pushPass queues a pass end: in passEnds when listed, else in the event heap. The sequence
// number is taken the same way in both, so events are applied in the same order.
func (s *runState) pushPass(e event) {
	if !s.listPasses {
		s.push(e)
		return
	}
	l := &s.passEnds
	l.timeMs = append(l.timeMs, e.timeMs)
	l.seq = append(l.seq, s.seq)
	l.who = append(l.who, int32(e.role)<<28|e.worker)
	s.seq++
	if last := len(l.timeMs) - 1; s.minPass < 0 || l.before(last, s.minPass) {
		s.minPass = last
	}
}

// popPass removes the first listed pass end and returns its role and worker.
func (s *runState) popPass() (role int8, worker int32) {
	l := &s.passEnds
	i, last := s.minPass, len(l.timeMs)-1
	who := l.who[i]
	l.timeMs[i], l.seq[i], l.who[i] = l.timeMs[last], l.seq[last], l.who[last]
	l.timeMs, l.seq, l.who = l.timeMs[:last], l.seq[:last], l.who[:last]
	s.minPass = -1
	if last > 0 {
		m := 0
		for j := 1; j < last; j++ {
			if l.before(j, m) {
				m = j
			}
		}
		s.minPass = m
	}
	return int8(who >> 28), who & (1<<28 - 1)
}

// passFirst reports whether the first listed pass end is due at t and comes before every
// queued event.
func (s *runState) passFirst(t float64) bool {
	if s.minPass < 0 {
		return false
	}
	l := &s.passEnds
	i := s.minPass
	if l.timeMs[i] != t {
		return false
	}
	return len(s.events) == 0 || t < s.events[0].timeMs || l.seq[i] < s.events[0].seq
}

// errStuck reports a worker that has work but cannot schedule any token: a simulator bug.
var errStuck = errors.New("simulation stuck: a worker has queued requests but scheduled nothing")

func (s *runState) loop(ctx context.Context) error {
	capMs := s.cfg.Traffic.Stop.MaxVirtualTimeSeconds * 1000
	iter := 0
	var transfers, arrivals, dispatches []int32
	var ticks []planner.EventKind
	for len(s.events) > 0 || s.passEnds.len() > 0 || s.nextScheduled < len(s.scheduled) {
		t := math.Inf(1)
		if len(s.events) > 0 {
			t = s.events[0].timeMs
		}
		if s.minPass >= 0 {
			t = min(t, s.passEnds.timeMs[s.minPass])
		}
		if s.nextScheduled < len(s.scheduled) {
			t = min(t, s.scheduled[s.nextScheduled].timeMs)
		}
		if capMs > 0 && t > capMs {
			break
		}
		if s.plan != nil && !s.workLeft() {
			break // only planner ticks are left: the run's work is done, nothing is left to scale for
		}
		if s.checkInvariants && t < s.nowMs {
			return fmt.Errorf("the virtual clock went backwards: %v ms after %v ms", t, s.nowMs)
		}
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return fmt.Errorf("the virtual clock overflowed (next event at %v ms): a rate, speedup, bandwidth or pass time is too extreme", t)
		}
		if iter++; iter&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.passStore.Err(); err != nil {
				return err // a pass log could not spill: the run cannot report exact ITL statistics
			}
		}
		s.nowMs = t
		// Apply this timestamp's pass completions first, then transfers, then arrivals; events
		// that these create at the same timestamp join their phase. Pre-scheduled arrivals were
		// sequenced before every dynamic event, so they come first among arrivals.
		for s.nextScheduled < len(s.scheduled) && s.scheduled[s.nextScheduled].timeMs == t {
			arrivals = append(arrivals, s.scheduled[s.nextScheduled].req)
			s.nextScheduled++
		}
		for {
			if s.passFirst(t) {
				role, worker := s.popPass()
				s.completePass(s.roleOf(role), int(worker))
				continue
			}
			if len(s.events) == 0 || s.events[0].timeMs != t {
				break
			}
			e := s.events.pop()
			switch e.kind {
			case evPass:
				s.completePass(s.roleOf(e.role), int(e.worker))
			case evTransfer:
				transfers = append(transfers, e.req)
			case evArrival:
				arrivals = append(arrivals, e.req)
			case evDispatch:
				dispatches = append(dispatches, e.req)
			case evReady:
				s.plan.Ready(t, int(e.role), int(e.worker), e.req)
			case evScale:
				s.ticksQueued--
				ticks = append(ticks, planner.EventKind(e.worker))
			}
		}
		for len(transfers) > 0 || len(arrivals) > 0 || len(dispatches) > 0 {
			for _, r := range transfers {
				s.activate(r)
			}
			transfers = transfers[:0]
			for _, r := range dispatches {
				s.dispatch(r)
			}
			dispatches = dispatches[:0]
			for _, r := range arrivals {
				s.arrive(r)
			}
			arrivals = arrivals[:0]
			for len(s.events) > 0 && s.events[0].timeMs == t && s.events[0].kind != evPass {
				e := s.events.pop()
				switch e.kind {
				case evTransfer:
					transfers = append(transfers, e.req)
				case evDispatch:
					dispatches = append(dispatches, e.req)
				case evReady:
					s.plan.Ready(t, int(e.role), int(e.worker), e.req)
				case evScale:
					s.ticksQueued--
					ticks = append(ticks, planner.EventKind(e.worker))
				default:
					arrivals = append(arrivals, e.req)
				}
			}
		}
		if len(ticks) > 0 {
			if err := s.plan.Tick(t, ticks); err != nil {
				return err
			}
			ticks = ticks[:0]
		}
		if err := s.startPasses(); err != nil {
			return err
		}
		if s.plan != nil {
			s.plan.EndStep(t)
		}
	}
	return s.checkDrained()
}

// checkDrained reports a run whose every event ran out (no stop cut it short) while a request
// is still in flight: no event can finish it, a simulator bug, reported rather than left to
// read as unfinished work at a stop.
func (s *runState) checkDrained() error {
	if len(s.events) > 0 || s.passEnds.len() > 0 || s.nextScheduled < len(s.scheduled) {
		return nil
	}
	if n := s.inFlight(); n > 0 {
		return fmt.Errorf("simulation stuck: the run ran out of events with %d requests in flight, which no event can finish (a simulator bug)", n)
	}
	return nil
}

// inFlight counts the requests that arrived and are neither completed nor rejected.
func (s *runState) inFlight() int {
	n := 0
	for i := range s.reqs {
		if r := &s.reqs[i]; r.ArrivalMs >= 0 && r.Status != engine.Completed && r.Status != engine.Rejected {
			n++
		}
	}
	return n
}

// startPasses starts a pass on every idle worker that may have work (role.dirty), prefill
// role first, workers in order.
func (s *runState) startPasses() error {
	for _, p := range []*role{s.prefill, s.decoding} {
		if p == nil {
			continue
		}
		for i := range p.dirty {
			for p.dirty[i] != 0 {
				b := bits.TrailingZeros64(p.dirty[i])
				p.dirty[i] &^= 1 << b
				if err := s.startPass(p, i*64+b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eventsLeft reports whether an event other than a planner tick is queued or an arrival is not
// yet due.
func (s *runState) eventsLeft() bool {
	return len(s.events)+s.passEnds.len() > s.ticksQueued || s.nextScheduled < len(s.scheduled)
}

// workLeft reports whether the run has anything to do besides planner ticks: eventsLeft, or a
// request that arrived and is neither completed nor rejected (scanned only when no event is
// left).
func (s *runState) workLeft() bool {
	if s.eventsLeft() {
		return true
	}
	for i := range s.reqs {
		if r := &s.reqs[i]; r.ArrivalMs >= 0 && r.Status != engine.Completed && r.Status != engine.Rejected {
			return true
		}
	}
	return false
}

func (s *runState) roleOf(id int8) *role {
	if id == 1 {
		return s.prefill
	}
	return s.decoding
}

func (s *runState) roleID(p *role) int8 {
	if p == s.prefill {
		return 1
	}
	return 0
}

// arrive is request ri leaving its client: its arrival time (the start of its TTFT and E2E
// latency). It reaches the workers after its front-end time (engine.frontend), at once without
// one.
func (s *runState) arrive(ri int32) {
	// Offered from now on: a request still in the front end when the run stops is unfinished.
	s.reqs[ri].ArrivalMs, s.reqs[ri].Status = s.nowMs, engine.Waiting
	if s.plan != nil {
		q := &s.wl.Requests[ri]
		s.plan.ObserveArrival(q.PromptLen, q.OutputLen)
	}
	if s.prefill != nil {
		s.reqsP[ri].ArrivalMs = s.nowMs
	}
	if s.frontendMs > 0 {
		s.push(event{timeMs: s.nowMs + s.frontendMs, kind: evDispatch, req: ri})
		return
	}
	s.dispatch(ri)
}

// dispatch is request ri reaching the workers: reject it if its prompt cannot fit the context
// limit or a KV pool, or, with unchunked prefill, the token budget of one pass of the role that
// runs its prefill; else route it to a rank of the first role it visits.
func (s *runState) dispatch(ri int32) {
	r := &s.reqs[ri]
	entry := s.decoding
	if s.prefill != nil {
		entry = s.prefill
	}
	switch {
	case int(r.PromptLen) >= s.ctxLimit:
		r.Rejection = engine.RejectedContextLength
	case int(r.PromptLen) >= s.decoding.kvTokens || s.prefill != nil && int(r.PromptLen) >= s.prefill.kvTokens:
		r.Rejection = engine.RejectedKVCapacity
	case entry.unchunkedBudget > 0 && int(r.PromptLen) > entry.unchunkedBudget:
		r.Rejection = engine.RejectedPrefillBudget
	}
	if r.Rejection != engine.NotRejected {
		r.Status = engine.Rejected
		r.TerminalMs = s.nowMs
		s.finished(ri)
		return
	}
	p := s.decoding
	if s.prefill != nil {
		p = s.prefill
		r.Status = engine.Waiting
	}
	s.withKeys(ri, true)
	q := &p.reqs[ri]
	promptKeys := q.Keys[:min(int(q.PromptLen)/p.blockSize, len(q.Keys))]
	slot, overlap := p.router.Route(ri, int(q.PromptLen), promptKeys)
	q.Worker, q.Rank = int32(slot/p.ranks), int32(slot%p.ranks)
	s.overlap[ri] = int32(overlap * p.blockSize)
	if s.handoffs != nil {
		s.handoffs[ri] = Handoff{PrefillWorker: q.Worker, DecodeWorker: -1, PrefillAdmitMs: -1, SourceHeldMs: -1,
			DestinationReservedMs: -1, DestinationActivatedMs: -1, PrefillOverlapTokens: int32(overlap * p.blockSize)}
	}
	p.engine(slot).Submit(ri)
	p.markDirty(q.Worker)
}

// finished reacts to a terminal request: the session's next turn arrives after the think time;
// a finished session frees its concurrency slot for the next session. In an agentic workload a
// request whose last dependency this was arrives after its delay: terminal times only grow, so
// now is the latest of its dependencies' (engine-internals.md §8.3). A rejected dependency
// releases its dependents like a completed one, as a rejected turn releases the next turn.
func (s *runState) finished(ri int32) {
	s.withKeys(ri, false)
	if g := s.wl.Graph; g != nil && s.waits != nil {
		for _, c := range g.Next[g.NextStart[ri]:g.NextStart[ri+1]] {
			if s.waits[c]--; s.waits[c] == 0 {
				s.push(event{timeMs: s.nowMs + s.wl.Requests[c].DelayMs, kind: evArrival, req: c})
			}
		}
		return
	}
	q := &s.wl.Requests[ri]
	sess := &s.wl.Sessions[q.Session]
	if q.Turn+1 < sess.Turns {
		next := ri + 1
		s.push(event{timeMs: s.nowMs + s.wl.Requests[next].DelayMs, kind: evArrival, req: next})
		return
	}
	if s.closedLoop && s.nextSession < len(s.wl.Sessions) {
		s.startSession(s.nextSession, s.nowMs)
		s.nextSession++
	}
}

func (s *runState) startPass(p *role, w int) error {
	wk := p.workers[w]
	for attempt := 0; attempt < 2; attempt++ {
		dur, scheduled := 0.0, false
		for _, e := range wk.ranks {
			d, ok := e.Schedule(s.nowMs)
			dur = max(dur, d)
			scheduled = scheduled || ok
			if e.Livelocked() {
				return fmt.Errorf("simulation livelock: a request on %s worker %d lost its KV %d times, recomputing into the blocks it freed (a simulator bug)", p.name, w, engine.MaxPreemptionsPerRequest)
			}
		}
		if s.checkInvariants {
			if err := s.checkWorker(p, w); err != nil {
				return err
			}
		}
		if scheduled {
			wk.busy = true
			wk.passStart = s.nowMs
			s.pushPass(event{timeMs: s.nowMs + dur, kind: evPass, role: s.roleID(p), worker: int32(w)})
			return nil
		}
		if !wk.hasWork() {
			return nil
		}
		// Nothing scheduled although work is queued: a pass that only preempted. The next
		// attempt admits from the waiting queue.
	}
	for _, e := range wk.ranks {
		if e.Pool().Active() > 0 {
			// KV is held by requests outside the running set (a finished prefill whose transfer
			// has not ended, a reservation waiting for its transfer): the worker idles until a
			// release marks it dirty again.
			return nil
		}
	}
	return errStuck
}

func (s *runState) completePass(p *role, w int) {
	wk := p.workers[w]
	wk.busy = false
	pass := int32(wk.passes.Len())
	var continued int32
	var rounds [engine.MaxRoundTokens]int32
	anyRounds := false
	for k, e := range wk.ranks {
		slot := w*p.ranks + k
		for _, ev := range p.pending[slot] {
			if ev.stored {
				p.router.Stored(slot, ev.key)
			} else {
				p.router.Removed(slot, ev.key)
			}
		}
		p.pending[slot] = p.pending[slot][:0]
		continued += e.Complete(s.nowMs, pass, p.onFirstToken, p.onDone)
		if e.TakeRounds(&rounds) {
			anyRounds = true
		}
		if p != s.prefill {
			s.retryReservations(p, slot)
		}
	}
	wk.passes.Append(s.nowMs-wk.passStart, continued)
	if anyRounds {
		wk.passes.AppendRounds(&rounds)
	}
	p.markDirty(int32(w))
	if s.plan != nil {
		s.plan.ObservePass(p.pool, w, s.nowMs-wk.passStart, int(continued))
	}
}

func (s *runState) checkWorker(p *role, w int) error {
	for k, e := range p.workers[w].ranks {
		if msg := e.CheckInvariants(); msg != "" {
			return fmt.Errorf("%s worker %d rank %d at %.3f ms: KV pool invariant broken: %s", p.name, w, k, s.nowMs, msg)
		}
	}
	return nil
}
