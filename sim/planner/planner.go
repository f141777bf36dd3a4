package planner

import (
	"math"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/router"
	"github.com/servesweep/servesweep/sim/timing"
)

// MaxAutoscaledWorkers is the most workers the planner provisions in one pool when max_num_gpus
// is −1 (unlimited); kv_router pools are also limited to router.MaxSlots rank schedulers.
const MaxAutoscaledWorkers = 64

// EventKind says what a planner event is (Event.Kind).
type EventKind int8

// Planner event kinds.
const (
	// TickLoad: load-based scaling is due (Planner.Tick).
	TickLoad EventKind = iota
	// TickThroughput: throughput-based scaling is due (Planner.Tick).
	TickThroughput
	// WorkerReady: a started worker is ready (Planner.Ready).
	WorkerReady
)

// Event is what the planner asks the run to hand back at AtMs (virtual time, ms): a tick, to
// Planner.Tick, or a worker's readiness, to Planner.Ready.
type Event struct {
	AtMs float64
	Kind EventKind
	// Pool and Worker name the worker of a WorkerReady event; Gen is the generation of its
	// start (a cancelled start's ready event is then ignored).
	Pool, Worker int
	Gen          int32
}

// Host is what the planner needs of the run it scales. Pools and workers are numbered as
// AddPool numbered them.
type Host interface {
	// Schedule queues ev for ev.AtMs.
	Schedule(ev Event)
	// SetAccepting opens worker w of pool to new requests from the router, or closes it.
	SetAccepting(pool, w int, open bool)
	// Build creates the engines of worker w of pool; the planner calls it once per worker, the
	// first time it starts one that did not start the run.
	Build(pool, w int) error
	// Drained reports whether worker w of pool holds nothing: no pass, no request, no KV, no
	// hand-off waiting for room on it.
	Drained(pool, w int) bool
	// Queued reports whether a request waits on a rank of worker w of pool.
	Queued(pool, w int) bool
	// EventsLeft reports whether the run has an event other than a planner tick queued, or an
	// arrival not yet due.
	EventsLeft() bool
}

// Pool describes a pool of workers to the planner (AddPool).
type Pool struct {
	// Name is the pool's worker role: aggregated, prefill or decode.
	Name config.Role
	// Slots is the workers the pool may ever run (Slots); Replicas of them, the first, are
	// built and active when the run starts.
	Slots, Replicas int
	// GPUsPerWorker, Ranks (attention-DP ranks per worker) and KVTokens (a rank's KV pool in
	// tokens) size a worker.
	GPUsPerWorker, Ranks, KVTokens int
	// Spec is the role's config and Model its timing model: they price a worker's capacity.
	Spec  *config.WorkerRole
	Model timing.Model
}

// Planner reason codes (metrics.ScalingEvent.Reason).
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

// pool is the planner's state of one pool.
type pool struct {
	Pool
	state []workerState
	gen   []int32 // per worker: bumped when a start is cancelled, so a stale ready event is ignored
	win   []window
	// startupMs is the role's startup_seconds in ms.
	startupMs float64
	built     []bool

	active, starting, draining int
	minWorkers, maxWorkers     int
	// obs counts load intervals observed since the last action settled at settledMs; floor is
	// the last throughput-based count (0 before one).
	obs       int
	settledMs float64
	floor     int
	steps     []metrics.WorkerStep
}

func (sc *pool) target() int      { return sc.active + sc.starting }
func (sc *pool) provisioned() int { return sc.active + sc.starting + sc.draining }

// Planner is a run's autoscaler. It is not safe for concurrent use: a run drives it from its
// event loop.
type Planner struct {
	host           Host
	set            config.PlannerSettings
	ttftMs, itlMs  float64 // SLA bounds, 0 when unset
	loadMs, thrMs  float64 // intervals
	nowMs          float64 // the virtual time of the call being handled
	events         []metrics.ScalingEvent
	due            []EventKind // ticks handled at this timestamp, to schedule again
	lastLoadMs     float64
	arrivals       int64
	islSum, oslSum float64
	count          forecaster
	isl, osl       forecaster
	pools          []*pool
}

// Enabled reports whether cfg runs the planner (planner.policy enabled).
func Enabled(cfg *config.Config) bool { return cfg.Planner.Settings().Enabled }

// New returns the planner of cfg acting through host, or nil when planner.policy is disabled.
// Add its pools (AddPool), then Start it.
func New(cfg *config.Config, host Host) *Planner {
	set := cfg.Planner.Settings()
	if !set.Enabled {
		return nil
	}
	pl := &Planner{host: host, set: set, loadMs: set.LoadIntervalS * 1000, thrMs: set.ThroughputIntervalS * 1000,
		count: newForecaster(set), isl: newForecaster(set), osl: newForecaster(set)}
	if sla := cfg.Evaluation.SLA; sla != nil {
		pl.ttftMs, pl.itlMs = deref(sla.TTFTMs), deref(sla.ITLMs)
	}
	return pl
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// Slots returns the number of worker slots to allocate for role name of cfg under the planner:
// max(replicas, what max_num_gpus leaves after the other pool's floor), at most
// MaxAutoscaledWorkers, and for kv_router at most router.MaxSlots / attention_data.
func Slots(cfg *config.Config, name config.Role, spec *config.WorkerRole) int {
	set := cfg.Planner.Settings()
	par := spec.Parallelism
	limit := MaxAutoscaledWorkers
	if cfg.Router.Policy == config.PolicyKVRouter {
		limit = min(limit, router.MaxSlots/par.AttentionData)
	}
	if set.MaxGPUs > 0 {
		budget := set.MaxGPUs
		for _, other := range cfg.Engine.Mode.Roles() {
			if other != name {
				budget -= set.RoleMinWorkers(other) * cfg.Engine.Workers.Role(other).Parallelism.GPUsPerWorker()
			}
		}
		limit = min(limit, budget/par.GPUsPerWorker())
	}
	return max(par.Replicas, limit)
}

// AddPool sets up a pool's autoscaling, its first p.Replicas workers active and the others off
// (closed to the router), and returns its number.
func (pl *Planner) AddPool(p Pool) int {
	n := p.Slots
	sc := &pool{Pool: p, state: make([]workerState, n), gen: make([]int32, n), win: make([]window, n), built: make([]bool, n),
		startupMs: p.Spec.StartupSeconds * 1000, active: p.Replicas, minWorkers: pl.set.RoleMinWorkers(p.Name), maxWorkers: n}
	if p.Name == config.RoleAggregated && pl.set.MinGPUs > 0 {
		sc.minWorkers = max(sc.minWorkers, (pl.set.MinGPUs+p.GPUsPerWorker-1)/p.GPUsPerWorker)
	}
	id := len(pl.pools)
	for w := range n {
		if w < p.Replicas {
			sc.state[w], sc.built[w] = workerActive, true
		} else {
			pl.host.SetAccepting(id, w, false)
		}
	}
	sc.steps = []metrics.WorkerStep{{TimeMs: 0, Workers: p.Replicas}}
	pl.pools = append(pl.pools, sc)
	return id
}

// Start schedules the first ticks.
func (pl *Planner) Start() {
	if pl.set.LoadScaling {
		pl.host.Schedule(Event{AtMs: pl.loadMs, Kind: TickLoad})
	}
	if pl.set.ThroughputScaling {
		pl.host.Schedule(Event{AtMs: pl.thrMs, Kind: TickThroughput})
	}
}

// ObserveArrival counts an arrival of a request of promptLen prompt and outputLen output tokens
// for throughput-based scaling.
func (pl *Planner) ObserveArrival(promptLen, outputLen int32) {
	pl.arrivals++
	pl.islSum += float64(promptLen)
	pl.oslSum += float64(outputLen)
}

// ObserveFirstToken records a first token worker w of pool produced ttftMs after its request
// arrived: the TTFT of load-based scaling.
func (pl *Planner) ObserveFirstToken(p, w int, ttftMs float64) {
	win := &pl.pools[p].win[w]
	win.ttftSum += ttftMs
	win.ttftN++
}

// ObservePass records a pass of worker w of pool that took passMs and continued tokens
// requests: the ITL of load-based scaling, the pass time for each token it continued.
func (pl *Planner) ObservePass(p, w int, passMs float64, tokens int) {
	win := &pl.pools[p].win[w]
	win.itlSum += passMs * float64(tokens)
	win.itlN += int64(tokens)
}

// Tick runs the ticks due at nowMs (after the timestamp's pass completions, transfers and
// arrivals, as the reference orders them) and remembers them to schedule again (EndStep).
// Errors: a worker's engines that cannot be built.
func (pl *Planner) Tick(nowMs float64, kinds []EventKind) error {
	pl.nowMs = nowMs
	for _, k := range kinds {
		if k == TickThroughput {
			if err := pl.throughputTick(); err != nil {
				return err
			}
		} else {
			for p := range pl.pools {
				if err := pl.loadTick(p); err != nil {
					return err
				}
			}
			for _, sc := range pl.pools {
				clear(sc.win)
			}
			pl.lastLoadMs = nowMs
		}
		pl.due = append(pl.due, k)
	}
	return nil
}

// Ready is the ready event of worker w of pool p at nowMs, started with generation gen: the
// worker becomes active unless its start was cancelled since.
func (pl *Planner) Ready(nowMs float64, p, w int, gen int32) {
	pl.nowMs = nowMs
	sc := pl.pools[p]
	if sc.state[w] != workerStarting || sc.gen[w] != gen {
		return
	}
	sc.state[w] = workerActive
	sc.starting--
	sc.active++
	pl.host.SetAccepting(p, w, true)
	pl.settle(sc)
}

// EndStep ends the timestamp nowMs: draining workers with nothing left are removed, and the
// ticks handled at it are scheduled again while the run has anything else to do.
func (pl *Planner) EndStep(nowMs float64) {
	pl.nowMs = nowMs
	for p, sc := range pl.pools {
		if sc.draining == 0 {
			continue
		}
		for w, st := range sc.state {
			if st == workerDraining && pl.host.Drained(p, w) {
				sc.state[w] = workerOff
				sc.draining--
				pl.settle(sc)
				pl.step(sc)
			}
		}
	}
	if len(pl.due) == 0 {
		return
	}
	// Ticks are scheduled again only while events drive the run (a request left with no event
	// would never move, and ticks alone would run forever).
	if pl.host.EventsLeft() {
		for _, k := range pl.due {
			interval := pl.loadMs
			if k == TickThroughput {
				interval = pl.thrMs
			}
			pl.host.Schedule(Event{AtMs: nowMs + interval, Kind: k})
		}
	}
	pl.due = pl.due[:0]
}

// Report adds the pools' timelines and the scaling events to the metrics input.
func (pl *Planner) Report(in *metrics.Input) {
	for _, sc := range pl.pools {
		in.Pools = append(in.Pools, metrics.PoolTimeline{Pool: string(sc.Name), GPUsPerWorker: sc.GPUsPerWorker, Steps: sc.steps})
	}
	in.ScalingEvents = pl.events
}

// settle records that sc has no action pending any more, when that is so.
func (pl *Planner) settle(sc *pool) {
	if sc.starting == 0 && sc.draining == 0 {
		sc.settledMs, sc.obs = pl.nowMs, 0
	}
}

// step records sc's provisioned workers from now on.
func (pl *Planner) step(sc *pool) {
	n := sc.provisioned()
	if last := &sc.steps[len(sc.steps)-1]; last.TimeMs == pl.nowMs {
		last.Workers = n
		return
	} else if last.Workers == n {
		return
	}
	sc.steps = append(sc.steps, metrics.WorkerStep{TimeMs: pl.nowMs, Workers: n})
}

// scaleTo moves pool p's target to n workers: new workers start in the lowest off slots;
// removal cancels starting workers first, then drains active ones from the highest slot, keeping
// one active.
func (pl *Planner) scaleTo(p, n int, reason string) error {
	sc := pl.pools[p]
	from := sc.target()
	if n == from {
		return nil
	}
	for w := 0; w < len(sc.state) && sc.target() < n; w++ {
		if sc.state[w] != workerOff {
			continue
		}
		if !sc.built[w] {
			if err := pl.host.Build(p, w); err != nil {
				return err
			}
			sc.built[w] = true
		}
		if sc.startupMs <= 0 {
			sc.state[w] = workerActive
			sc.active++
			pl.host.SetAccepting(p, w, true)
			continue
		}
		sc.state[w] = workerStarting
		sc.starting++
		pl.host.Schedule(Event{AtMs: pl.nowMs + sc.startupMs, Kind: WorkerReady, Pool: p, Worker: w, Gen: sc.gen[w]})
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
			pl.host.SetAccepting(p, w, false)
		}
	}
	if to := sc.target(); to != from {
		pl.events = append(pl.events, metrics.ScalingEvent{TimeMs: pl.nowMs, Pool: string(sc.Name), From: from, To: to, Reason: reason})
	}
	pl.settle(sc)
	pl.step(sc)
	return nil
}

// gpus is the GPUs of every pool's target, with pool p at n workers.
func (pl *Planner) gpus(p, n int) int {
	g := 0
	for q, sc := range pl.pools {
		k := sc.target()
		if q == p {
			k = n
		}
		g += k * sc.GPUsPerWorker
	}
	return g
}

// allowed reports whether pool p may run n workers: within its slots and floor, max_num_gpus
// and min_num_gpus.
func (pl *Planner) allowed(p, n int) bool {
	sc := pl.pools[p]
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
func (pl *Planner) loadTick(p int) error {
	sc := pl.pools[p]
	useTTFT := pl.ttftMs > 0 && sc.Name != config.RoleDecode
	useITL := pl.itlMs > 0 && sc.Name != config.RolePrefill
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
				under = under && !pl.host.Queued(p, w)
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
		return pl.scaleTo(p, n+1, reasonLoadUp)
	case allUnder && n-1 >= sc.floor && pl.allowed(p, n-1):
		return pl.scaleTo(p, n-1, reasonLoadDown)
	}
	return nil
}

// throughputTick is throughput-based scaling of every pool at a throughput tick.
func (pl *Planner) throughputTick() error {
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
	for i, sc := range pl.pools {
		pre, dec := 0.0, 0.0
		if sc.Name != config.RoleDecode {
			pre = rate * isl / sc.prefillCapacity(int(math.Round(isl)))
		}
		if sc.Name != config.RolePrefill {
			dec = rate * osl / sc.decodeCapacity(int(math.Round(isl)), int(math.Round(osl)), pl.itlMs)
		}
		n := int(math.Ceil(pre + dec - 1e-9))
		need[i] = max(n, sc.minWorkers, 1)
		need[i] = min(need[i], sc.maxWorkers)
	}
	// Over the GPU budget: take a worker from the largest pool until the targets fit.
	for pl.set.MaxGPUs > 0 {
		g, big := 0, -1
		for i, sc := range pl.pools {
			g += need[i] * sc.GPUsPerWorker
			if need[i] > sc.minWorkers && (big < 0 || need[i] > need[big]) {
				big = i
			}
		}
		if g <= pl.set.MaxGPUs || big < 0 {
			break
		}
		need[big]--
	}
	for i, sc := range pl.pools {
		if pl.set.LoadScaling {
			sc.floor = need[i]
			if sc.target() >= need[i] {
				continue
			}
		}
		if err := pl.scaleTo(i, need[i], reasonThroughput); err != nil {
			return err
		}
	}
	return nil
}

// prefillCapacity is one worker's prompt tokens per second at prompts of isl tokens.
func (sc *pool) prefillCapacity(isl int) float64 {
	isl = max(isl, 1)
	mbt := sc.Spec.Scheduler.MaxBatchedTokens
	var ms float64
	tokens := isl
	if isl <= mbt {
		k := max(1, min(mbt/isl, sc.Spec.Scheduler.MaxSequences))
		tokens = k * isl
		// An aggregated worker's first token counts in the pass's decode part; a prefill-only
		// worker's comes with the prefill (engine.Engine's pricing).
		first := k
		if sc.Name == config.RolePrefill {
			first = 0
		}
		ms = sc.Model.PassMs(&timing.Batch{PrefillRequests: k, PrefillTokens: k * isl, DecodeRequests: first, DecodeKVTokens: first * isl,
			PrefillAttentionPairs: int64(k) * int64(isl) * int64(isl+1) / 2, SampledTokens: k, KVCapacityTokens: sc.KVTokens})
	} else {
		c := (isl + mbt - 1) / mbt
		chunk := (isl + c - 1) / c
		ms = float64(c) * sc.Model.PassMs(&timing.Batch{PrefillRequests: 1, PrefillTokens: chunk,
			PrefillAttentionPairs: int64(chunk) * int64(chunk+1) / 2, KVCapacityTokens: sc.KVTokens})
	}
	if ms <= 0 {
		return math.Inf(1)
	}
	return float64(sc.Ranks*tokens) * 1000 / ms
}

// decodeCapacity is one worker's output tokens per second: decode passes at the largest batch
// within max_sequences and the KV pool (context isl + osl/2) whose pass time is within itlMs,
// the SLA's ITL (one request when it is 0).
func (sc *pool) decodeCapacity(isl, osl int, itlMs float64) float64 {
	ctx := max(isl+osl/2, 1)
	hi := max(1, min(sc.Spec.Scheduler.MaxSequences, sc.KVTokens/ctx))
	pass := func(b int) float64 {
		return sc.Model.PassMs(&timing.Batch{DecodeRequests: b, DecodeKVTokens: b * ctx, DecodeSteps: b,
			DecodeStepKVTokens: b * ctx, SampledTokens: b, KVCapacityTokens: sc.KVTokens})
	}
	b := hi
	if itlMs > 0 && pass(hi) > itlMs {
		lo := 1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if pass(mid) <= itlMs {
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
	return float64(sc.Ranks*b) * 1000 / ms
}
