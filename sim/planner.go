package sim

import (
	"math"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/router"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/traffic"
)

// The planner in the loop (planner.policy enabled; dynosim-spec.md §3.4, engine-internals.md
// §6). Each pool (the aggregated workers, or the prefill and the decode workers) has a slot per
// worker it may ever run; a slot is off, starting (added, ready after the role's
// startup_seconds), active (routed to) or draining (removed: it finishes the requests it holds
// and takes no new ones, then is off). The provisioned workers are the starting, active and
// draining ones; worker-seconds and GPU-hours integrate them over the run. The target of a pool
// is its starting plus active workers; the planner moves it:
//
//   - Load-based scaling, every load_adjustment_interval_seconds: each active worker's
//     observation over the interval is its mean TTFT (first tokens it produced: now − arrival)
//     and its mean ITL (its pass times, weighted by the tokens each pass continued). An
//     aggregated pool is judged on the SLA's TTFT and ITL bounds, a prefill pool on TTFT, a
//     decode pool on ITL. A worker is above when an observed mean exceeds its bound, below when
//     every observed mean is under bound × load_scaling_down_sensitivity / 100 (a TTFT without
//     samples counts as below only when nothing is queued on the worker). Once the pool has
//     load_min_observations intervals observed since its last action settled, it adds one
//     worker when every active worker is above, and removes one when every one is below. One
//     action at a time: no decision while a worker of the pool is starting or draining.
//   - Throughput-based scaling, every throughput_adjustment_interval_seconds: the predictor
//     forecasts the next interval's request count and mean ISL and OSL from the series of
//     intervals observed (arrivals); with rate = count / interval, a prefill pool needs
//     ⌈rate × ISL / prefill capacity⌉ workers, a decode pool ⌈rate × OSL / decode capacity⌉ and
//     an aggregated pool ⌈rate × ISL / prefill capacity + rate × OSL / decode capacity⌉ (its
//     workers share their time between the two). A worker's prefill capacity is the prompt
//     tokens per second of back-to-back prefill passes of ISL-token prompts (as many as
//     max_batched_tokens and max_sequences admit, chunked when ISL exceeds max_batched_tokens);
//     its decode capacity the tokens per second of decode passes at the largest batch (within
//     max_sequences and the KV pool at a context of ISL + OSL/2) whose pass time is within the
//     SLA's ITL, both over its attention-DP ranks and priced by the role's timing model. With
//     load-based scaling also on, this count is the floor load-based scaling does not go below.
//
// Bounds: a pool keeps at least its min-worker key (min_workers, prefill_min_workers,
// decode_min_workers; at least 1) and, together with the other pool, at least min_num_gpus GPUs;
// the pools' targets together stay within max_num_gpus (−1: each pool up to
// MaxAutoscaledWorkers workers). A pool never runs fewer workers than it starts with unless the
// planner removes them, and never more than max(its initial replicas, what the budget allows).

// MaxAutoscaledWorkers is the most workers the planner provisions in one pool when max_num_gpus
// is −1 (unlimited); kv_router pools are also limited to router.MaxSlots rank schedulers.
const MaxAutoscaledWorkers = 64

// Planner event subkinds (event.worker of an evScale event).
const (
	tickLoad int32 = iota
	tickThroughput
)

// Planner decisions' reasons (metrics.ScalingEvent.Reason).
const (
	reasonLoadUp     = "load_scale_up"
	reasonLoadDown   = "load_scale_down"
	reasonThroughput = "throughput"
)

// workerState is an autoscaled worker slot's state.
type workerState int8

const (
	workerOff workerState = iota
	workerStarting
	workerActive
	workerDraining
)

// window sums one worker's latency observations since the last load tick.
type window struct {
	ttftSum, itlSum float64
	ttftN, itlN     int64
}

// poolScaler is the planner's state of one pool.
type poolScaler struct {
	state []workerState
	gen   []int32 // per worker: bumped when a start is cancelled, so a stale ready event is ignored
	win   []window
	// startupMs is the role's startup_seconds in ms.
	startupMs float64
	// build creates worker w's engines the first time it starts.
	build func(w int) error
	built []bool
	model timing.Model
	spec  *config.WorkerRole

	active, starting, draining int
	minWorkers, maxWorkers     int
	// obs counts load intervals observed since the last action settled at settledMs; floor is
	// the last throughput-based count (0 before one).
	obs       int
	settledMs float64
	floor     int
	steps     []metrics.WorkerStep
}

func (sc *poolScaler) target() int      { return sc.active + sc.starting }
func (sc *poolScaler) provisioned() int { return sc.active + sc.starting + sc.draining }

// planner is the run's autoscaler.
type planner struct {
	set            config.PlannerSettings
	ttftMs, itlMs  float64 // SLA bounds, 0 when unset
	loadMs, thrMs  float64 // intervals
	events         []metrics.ScalingEvent
	queued         int     // evScale events in the heap
	due            []int32 // ticks handled at this timestamp, to schedule again
	lastLoadMs     float64
	arrivals       int64
	islSum, oslSum float64
	count          predictor
	isl, osl       predictor
	pools          []*role
}

// newPlanner returns the run's planner, or nil when planner.policy is disabled.
func newPlanner(cfg *config.Config) *planner {
	set := cfg.Planner.Settings()
	if !set.Enabled {
		return nil
	}
	pl := &planner{set: set, loadMs: set.LoadIntervalS * 1000, thrMs: set.ThroughputIntervalS * 1000,
		count: newPredictor(set), isl: newPredictor(set), osl: newPredictor(set)}
	if sla := cfg.Evaluation.SLA; sla != nil {
		pl.ttftMs, pl.itlMs = deref(sla.TTFTMs), deref(sla.ITLMs)
	}
	return pl
}

// poolCapacity returns the number of worker slots to allocate for role name under the
// planner: max(replicas, what max_num_gpus leaves after the other pool's floor), at most
// MaxAutoscaledWorkers, and for kv_router at most router.MaxSlots / attention_data.
func (pl *planner) poolCapacity(cfg *config.Config, name config.Role, spec *config.WorkerRole) int {
	par := spec.Parallelism
	limit := MaxAutoscaledWorkers
	if cfg.Router.Policy == config.PolicyKVRouter {
		limit = min(limit, router.MaxSlots/par.AttentionData)
	}
	if pl.set.MaxGPUs > 0 {
		budget := pl.set.MaxGPUs
		for _, other := range cfg.Engine.Mode.Roles() {
			if other != name {
				budget -= pl.set.RoleMinWorkers(other) * cfg.Engine.Workers.Role(other).Parallelism.GPUsPerWorker()
			}
		}
		limit = min(limit, budget/par.GPUsPerWorker())
	}
	return max(par.Replicas, limit)
}

// attach sets up role p's autoscaling: its first replicas workers active, the others off.
func (pl *planner) attach(s *runState, p *role, spec *config.WorkerRole, model timing.Model, build func(int) error, built int) {
	n := len(p.workers)
	sc := &poolScaler{state: make([]workerState, n), gen: make([]int32, n), win: make([]window, n), built: make([]bool, n),
		startupMs: spec.StartupSeconds * 1000, build: build, model: model, spec: spec, active: built,
		minWorkers: pl.set.RoleMinWorkers(p.name), maxWorkers: n}
	if p.name == config.RoleAggregated && pl.set.MinGPUs > 0 {
		sc.minWorkers = max(sc.minWorkers, (pl.set.MinGPUs+p.gpusPerWorker-1)/p.gpusPerWorker)
	}
	for w := range n {
		if w < built {
			sc.state[w], sc.built[w] = workerActive, true
		} else {
			p.router.SetAccepting(w, false)
		}
	}
	sc.steps = []metrics.WorkerStep{{TimeMs: 0, Workers: built}}
	p.scale = sc
	// Observe first tokens: the TTFT of load-based scaling.
	inner := p.onFirstToken
	p.onFirstToken = func(ri int32) {
		r := &p.reqs[ri]
		win := &sc.win[r.Worker]
		win.ttftSum += s.nowMs - r.ArrivalMs
		win.ttftN++
		if inner != nil {
			inner(ri)
		}
	}
	pl.pools = append(pl.pools, p)
}

// start schedules the first ticks.
func (s *runState) startPlanner() {
	pl := s.plan
	if pl.set.LoadScaling {
		s.pushTick(pl.loadMs, tickLoad)
	}
	if pl.set.ThroughputScaling {
		s.pushTick(pl.thrMs, tickThroughput)
	}
}

func (s *runState) pushTick(atMs float64, kind int32) {
	s.plan.queued++
	s.push(event{timeMs: atMs, kind: evScale, worker: kind})
}

// observeArrival counts request ri's arrival for throughput-based scaling.
func (pl *planner) observeArrival(q *traffic.Request) {
	pl.arrivals++
	pl.islSum += float64(q.PromptLen)
	pl.oslSum += float64(q.OutputLen)
}

// planTicks runs this timestamp's planner ticks (after its pass completions, transfers and
// arrivals, as the reference orders them) and remembers them to schedule again.
func (s *runState) planTicks(ticks []int32) error {
	pl := s.plan
	for _, k := range ticks {
		if k == tickThroughput {
			if err := s.throughputTick(); err != nil {
				return err
			}
		} else {
			for _, p := range pl.pools {
				if err := s.loadTick(p); err != nil {
					return err
				}
			}
			for _, p := range pl.pools {
				clear(p.scale.win)
			}
			pl.lastLoadMs = s.nowMs
		}
		pl.due = append(pl.due, k)
	}
	return nil
}

// afterStep ends a timestamp: draining workers with nothing left are removed, and the ticks
// handled at it are scheduled again while the run has anything else to do.
func (s *runState) afterStep() {
	pl := s.plan
	for _, p := range pl.pools {
		sc := p.scale
		if sc.draining == 0 {
			continue
		}
		for w, st := range sc.state {
			if st == workerDraining && s.drained(p, w) {
				sc.state[w] = workerOff
				sc.draining--
				s.settle(p)
				s.step(p)
			}
		}
	}
	if len(pl.due) == 0 {
		return
	}
	// Ticks are scheduled again only while events drive the run (a request left with no event
	// would never move, and ticks alone would run forever).
	if s.eventsLeft() {
		for _, k := range pl.due {
			interval := pl.loadMs
			if k == tickThroughput {
				interval = pl.thrMs
			}
			s.pushTick(s.nowMs+interval, k)
		}
	}
	pl.due = pl.due[:0]
}

// drained reports whether draining worker w of p holds nothing: no pass, no request, no KV
// (a finished prefill's KV until its transfer), no hand-off waiting for room on it.
func (s *runState) drained(p *role, w int) bool {
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

// settle records that p has no action pending any more, when that is so.
func (s *runState) settle(p *role) {
	if sc := p.scale; sc.starting == 0 && sc.draining == 0 {
		sc.settledMs, sc.obs = s.nowMs, 0
	}
}

// step records p's provisioned workers from now on.
func (s *runState) step(p *role) {
	sc := p.scale
	n := sc.provisioned()
	if last := &sc.steps[len(sc.steps)-1]; last.TimeMs == s.nowMs {
		last.Workers = n
		return
	} else if last.Workers == n {
		return
	}
	sc.steps = append(sc.steps, metrics.WorkerStep{TimeMs: s.nowMs, Workers: n})
}

// workerReady is the ready event of worker w of p (started with generation gen).
func (s *runState) workerReady(p *role, w int, gen int32) {
	sc := p.scale
	if sc.state[w] != workerStarting || sc.gen[w] != gen {
		return
	}
	sc.state[w] = workerActive
	sc.starting--
	sc.active++
	p.router.SetAccepting(w, true)
	s.settle(p)
}

// scaleTo moves p's target to n workers: new workers start in the lowest off slots; removal
// cancels starting workers first, then drains active ones from the highest slot, keeping one
// active.
func (s *runState) scaleTo(p *role, n int, reason string) error {
	sc := p.scale
	from := sc.target()
	if n == from {
		return nil
	}
	for w := 0; w < len(sc.state) && sc.target() < n; w++ {
		if sc.state[w] != workerOff {
			continue
		}
		if !sc.built[w] {
			if err := sc.build(w); err != nil {
				return err
			}
			sc.built[w] = true
		}
		if sc.startupMs <= 0 {
			sc.state[w] = workerActive
			sc.active++
			p.router.SetAccepting(w, true)
			continue
		}
		sc.state[w] = workerStarting
		sc.starting++
		s.push(event{timeMs: s.nowMs + sc.startupMs, kind: evReady, role: s.roleID(p), worker: int32(w), req: sc.gen[w]})
	}
	for w := len(sc.state) - 1; w >= 0 && sc.target() > n; w-- {
		if sc.state[w] == workerStarting {
			sc.state[w] = workerOff
			sc.gen[w]++
			sc.starting--
		}
	}
	for w := len(sc.state) - 1; w >= 0 && sc.target() > n && sc.active > 1; w-- {
		if sc.state[w] == workerActive {
			sc.state[w] = workerDraining
			sc.active--
			sc.draining++
			p.router.SetAccepting(w, false)
		}
	}
	if to := sc.target(); to != from {
		s.plan.events = append(s.plan.events, metrics.ScalingEvent{TimeMs: s.nowMs, Pool: string(p.name), From: from, To: to, Reason: reason})
	}
	s.settle(p)
	s.step(p)
	return nil
}

// gpus is the GPUs of every pool's target, with pool p at n workers.
func (pl *planner) gpus(p *role, n int) int {
	g := 0
	for _, q := range pl.pools {
		k := q.scale.target()
		if q == p {
			k = n
		}
		g += k * q.gpusPerWorker
	}
	return g
}

// allowed reports whether pool p may run n workers: within its slots and floor, max_num_gpus
// and min_num_gpus.
func (pl *planner) allowed(p *role, n int) bool {
	sc := p.scale
	if n < sc.minWorkers || n > sc.maxWorkers {
		return false
	}
	g := pl.gpus(p, n)
	if pl.set.MaxGPUs > 0 && g > pl.set.MaxGPUs && n > sc.target() {
		return false
	}
	return pl.set.MinGPUs <= 0 || g >= pl.set.MinGPUs || n >= sc.target()
}

// loadTick is load-based scaling of pool p at a load tick.
func (s *runState) loadTick(p *role) error {
	pl, sc := s.plan, p.scale
	useTTFT := pl.ttftMs > 0 && p.name != config.RoleDecode
	useITL := pl.itlMs > 0 && p.name != config.RolePrefill
	if !useTTFT && !useITL {
		return nil
	}
	if sc.starting > 0 || sc.draining > 0 {
		sc.obs = 0
		return nil
	}
	if pl.lastLoadMs >= sc.settledMs {
		sc.obs++
	}
	if sc.obs < pl.set.MinObservations {
		return nil
	}
	down := pl.set.DownSensitivityPct / 100
	allOver, allUnder := true, true
	for w, st := range sc.state {
		if st != workerActive {
			continue
		}
		win := &sc.win[w]
		over, under := false, true
		if useTTFT {
			if win.ttftN > 0 {
				m := win.ttftSum / float64(win.ttftN)
				over = over || m > pl.ttftMs
				under = under && m < pl.ttftMs*down
			} else {
				for _, e := range p.workers[w].ranks {
					under = under && e.Queued() == 0
				}
			}
		}
		if useITL && win.itlN > 0 {
			m := win.itlSum / float64(win.itlN)
			over = over || m > pl.itlMs
			under = under && m < pl.itlMs*down
		}
		allOver, allUnder = allOver && over, allUnder && under
	}
	n := sc.target()
	switch {
	case allOver && pl.allowed(p, n+1):
		return s.scaleTo(p, n+1, reasonLoadUp)
	case allUnder && n-1 >= sc.floor && pl.allowed(p, n-1):
		return s.scaleTo(p, n-1, reasonLoadDown)
	}
	return nil
}

// throughputTick is throughput-based scaling of every pool at a throughput tick.
func (s *runState) throughputTick() error {
	pl := s.plan
	isl, osl := 0.0, 0.0
	if pl.arrivals > 0 {
		isl, osl = pl.islSum/float64(pl.arrivals), pl.oslSum/float64(pl.arrivals)
	}
	pl.count.add(float64(pl.arrivals))
	if pl.arrivals > 0 {
		pl.isl.add(isl)
		pl.osl.add(osl)
	}
	pl.arrivals, pl.islSum, pl.oslSum = 0, 0, 0
	rate := pl.count.next() / (pl.thrMs / 1000)
	isl, osl = pl.isl.next(), pl.osl.next()
	need := make([]int, len(pl.pools))
	for i, p := range pl.pools {
		pre, dec := 0.0, 0.0
		if p.name != config.RoleDecode {
			pre = rate * isl / s.prefillCapacity(p, int(math.Round(isl)))
		}
		if p.name != config.RolePrefill {
			dec = rate * osl / s.decodeCapacity(p, int(math.Round(isl)), int(math.Round(osl)))
		}
		n := int(math.Ceil(pre + dec - 1e-9))
		need[i] = max(n, p.scale.minWorkers, 1)
		need[i] = min(need[i], p.scale.maxWorkers)
	}
	// Over the GPU budget: take a worker from the largest pool until the targets fit.
	for pl.set.MaxGPUs > 0 {
		g, big := 0, -1
		for i, p := range pl.pools {
			g += need[i] * p.gpusPerWorker
			if need[i] > p.scale.minWorkers && (big < 0 || need[i] > need[big]) {
				big = i
			}
		}
		if g <= pl.set.MaxGPUs || big < 0 {
			break
		}
		need[big]--
	}
	for i, p := range pl.pools {
		if pl.set.LoadScaling {
			p.scale.floor = need[i]
			if p.scale.target() >= need[i] {
				continue
			}
		}
		if err := s.scaleTo(p, need[i], reasonThroughput); err != nil {
			return err
		}
	}
	return nil
}

// prefillCapacity is one worker of p's prompt tokens per second at prompts of isl tokens.
func (s *runState) prefillCapacity(p *role, isl int) float64 {
	sc := p.scale
	isl = max(isl, 1)
	mbt := sc.spec.Scheduler.MaxBatchedTokens
	var ms float64
	tokens := isl
	if isl <= mbt {
		k := max(1, min(mbt/isl, sc.spec.Scheduler.MaxSequences))
		tokens = k * isl
		// An aggregated worker's first token counts in the pass's decode part; a prefill-only
		// worker's comes with the prefill (engine.Engine's pricing).
		first := k
		if p.name == config.RolePrefill {
			first = 0
		}
		ms = sc.model.PassMs(&timing.Batch{PrefillRequests: k, PrefillTokens: k * isl, DecodeRequests: first, DecodeKVTokens: first * isl,
			PrefillAttentionPairs: int64(k) * int64(isl) * int64(isl+1) / 2, SampledTokens: k, KVCapacityTokens: p.kvTokens})
	} else {
		c := (isl + mbt - 1) / mbt
		chunk := (isl + c - 1) / c
		ms = float64(c) * sc.model.PassMs(&timing.Batch{PrefillRequests: 1, PrefillTokens: chunk,
			PrefillAttentionPairs: int64(chunk) * int64(chunk+1) / 2, KVCapacityTokens: p.kvTokens})
	}
	if ms <= 0 {
		return math.Inf(1)
	}
	return float64(p.ranks*tokens) * 1000 / ms
}

// decodeCapacity is one worker of p's output tokens per second: decode passes at the largest
// batch within max_sequences and the KV pool (context isl + osl/2) whose pass time is within the
// SLA's ITL (one request when none is).
func (s *runState) decodeCapacity(p *role, isl, osl int) float64 {
	sc := p.scale
	ctx := max(isl+osl/2, 1)
	hi := max(1, min(sc.spec.Scheduler.MaxSequences, p.kvTokens/ctx))
	pass := func(b int) float64 {
		return sc.model.PassMs(&timing.Batch{DecodeRequests: b, DecodeKVTokens: b * ctx, DecodeSteps: b,
			DecodeStepKVTokens: b * ctx, SampledTokens: b, KVCapacityTokens: p.kvTokens})
	}
	b := hi
	if itl := s.plan.itlMs; itl > 0 && pass(hi) > itl {
		lo := 1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if pass(mid) <= itl {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		b = lo
	}
	ms := pass(b)
	if ms <= 0 {
		return math.Inf(1)
	}
	return float64(p.ranks*b) * 1000 / ms
}

// plannerInput adds the pools' timelines and the scaling events to the metrics input.
func (s *runState) plannerInput(in *metrics.Input) {
	for _, p := range s.plan.pools {
		in.Pools = append(in.Pools, metrics.PoolTimeline{Pool: string(p.name), GPUsPerWorker: p.gpusPerWorker, Steps: p.scale.steps})
	}
	in.ScalingEvents = s.plan.events
}
