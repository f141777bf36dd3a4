package sim

import (
	"github.com/servesweep/servesweep/sim/planner"
)

// autoscaler is the autoscaling planner as the run loop drives it (planner.Planner): it
// observes arrivals, first tokens and passes, runs its ticks when due, and scales at the end of
// each timestamp. It acts on the run only through planHost.
type autoscaler interface {
	ObserveArrival(promptLen, outputLen int32)
	ObserveFirstToken(pool, w int, ttftMs float64)
	ObservePass(pool, w int, passMs float64, tokens int)
	Ready(nowMs float64, pool, w int, gen int32)
	Tick(nowMs float64, kinds []planner.EventKind) error
	EndStep(nowMs float64)
}

// newPlanner sets up the planner of the run over its roles (the prefill pool first, as the
// roles were built) and makes it s.plan; nil when planner.policy is disabled. The caller starts
// it once the arrivals are scheduled, and has it report at the end.
func (s *runState) newPlanner() *planner.Planner {
	pl := planner.New(s.cfg, planHost{s})
	if pl == nil {
		return nil
	}
	for _, p := range []*role{s.prefill, s.decoding} {
		if p == nil {
			continue
		}
		s.pools = append(s.pools, p)
		p.pool = pl.AddPool(planner.Pool{Name: p.name, Slots: len(p.workers), Replicas: p.spec.Parallelism.Replicas,
			GPUsPerWorker: p.gpusPerWorker, Ranks: p.ranks, KVTokens: p.kvTokens, Spec: p.spec, Model: p.model})
		// Observe first tokens: the TTFT of load-based scaling.
		inner, id := p.onFirstToken, p.pool
		p.onFirstToken = func(ri int32) {
			r := &p.reqs[ri]
			pl.ObserveFirstToken(id, int(r.Worker), s.nowMs-r.ArrivalMs)
			if inner != nil {
				inner(ri)
			}
		}
	}
	s.plan = pl
	return pl
}

// planHost is the run as the planner sees it (planner.Host): pools are s.pools.
type planHost struct{ s *runState }

// Schedule queues a planner event: a tick as an evScale event, a worker's readiness as evReady.
func (h planHost) Schedule(ev planner.Event) {
	if ev.Kind == planner.WorkerReady {
		h.s.push(event{timeMs: ev.AtMs, kind: evReady, role: int8(ev.Pool), worker: int32(ev.Worker), req: ev.Gen})
		return
	}
	h.s.ticksQueued++
	h.s.push(event{timeMs: ev.AtMs, kind: evScale, worker: int32(ev.Kind)})
}

// SetAccepting opens worker w of pool to the router, or closes it.
func (h planHost) SetAccepting(pool, w int, open bool) { h.s.pools[pool].router.SetAccepting(w, open) }

// Build creates the engines of worker w of pool.
func (h planHost) Build(pool, w int) error { return h.s.pools[pool].build(w) }

// Drained reports whether worker w of pool holds nothing: no pass, no request, no KV (a
// finished prefill's KV until its transfer), no hand-off waiting for room on it.
func (h planHost) Drained(pool, w int) bool {
	p := h.s.pools[pool]
	wk := p.workers[w]
	if wk.busy || wk.hasWork() {
		return false
	}
	for k, e := range wk.ranks {
		if e.Pool().Active() > 0 || len(p.waitingReserve[w*p.ranks+k]) > 0 {
			return false
		}
	}
	return true
}

// Queued reports whether a request waits on a rank of worker w of pool.
func (h planHost) Queued(pool, w int) bool {
	for _, e := range h.s.pools[pool].workers[w].ranks {
		if e.Queued() != 0 {
			return true
		}
	}
	return false
}

// EventsLeft reports whether an event other than a planner tick is queued or an arrival is not
// yet due.
func (h planHost) EventsLeft() bool { return h.s.eventsLeft() }
