package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/router"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/traffic"
)

// Options tunes a run without changing what is simulated.
type Options struct {
	// Workload, when set, is used instead of building one from cfg.Traffic (sweeps build it once
	// and share it). It must be the workload BuildWorkload returns for an equal Traffic section.
	Workload *traffic.Workload
	// CheckInvariants verifies KV-pool bookkeeping after every pass (slow; for tests).
	CheckInvariants bool
	// Efficiency, when set, replaces timing.CalibratedEfficiency in `default` timing (used to
	// fit the factors; see package calibrate).
	Efficiency *timing.Efficiency
	// ConcurrencyRampMs, when > 0, spreads the first sessions of a concurrency load evenly over
	// that many virtual ms (session i of the first `concurrency` starts at i × ramp /
	// concurrency) instead of starting them all at 0. Requests of equal length otherwise move in
	// lock-step waves forever, which real benchmarks do not show; package calibrate uses it to
	// compare with measured steady-state latencies. The schema's behaviour is a ramp of 0.
	ConcurrencyRampMs float64
}

// Result is a finished run.
type Result struct {
	Summary *metrics.Summary
	// Requests holds every request's final state as the client sees it (in disaggregated mode,
	// the decode side with the first token at the end of the KV transfer), indexed like
	// Workload.Requests.
	Requests []engine.Request
	// Handoffs holds, in disaggregated mode, each request's prefill-side record (nil otherwise).
	Handoffs []Handoff
	// Workload is the workload that was run.
	Workload *traffic.Workload
	// LeakedBlocks counts KV blocks still held on any pool once no request is live
	// (always 0 unless there is a bug).
	LeakedBlocks int
	// RouteOverlapTokens holds, per request, the prompt tokens the router found cached on the
	// chosen rank (whole blocks; 0 for overlap-blind policies).
	RouteOverlapTokens []int32
}

// Handoff is the prefill-side record of one request in disaggregated serving. Times are virtual
// ms, -1 when the step did not happen.
type Handoff struct {
	PrefillWorker, DecodeWorker int32
	PrefillAdmitMs              float64
	// SourceHeldMs is when the prefill finished and its KV started being held for the transfer.
	SourceHeldMs float64
	// DestinationReservedMs is when the decode worker reserved the prompt's KV (transfer start).
	DestinationReservedMs float64
	// DestinationActivatedMs is when the transfer ended and the request became decodable; the
	// prefill side released its KV at the same time.
	DestinationActivatedMs float64
	// DecodeCachedTokens are prompt tokens the decode worker already cached at reservation.
	DecodeCachedTokens int32
	// TransferredTokens are prompt tokens whose KV was moved.
	TransferredTokens int32
	// PrefillOverlapTokens is the prefill router's overlap for the chosen worker, in tokens.
	PrefillOverlapTokens int32
	// PrefillHistory lists the request's admissions on the prefill worker (more than one after
	// a preemption there).
	PrefillHistory []engine.Admission
}

// RouterSeed seeds the router's random streams (kv_router tie-breaking and temperature sampling,
// the random policy). The schema has no router seed; 42 is the reference's default seed.
const RouterSeed = 42

// Run simulates cfg and returns its report. It is deterministic: the same cfg gives the same
// result (wall time aside). The virtual clock is in ms. At one timestamp, pass completions are
// applied first, then KV-transfer completions, then arrivals (each in the order they were
// scheduled), then every idle worker with work starts a pass (engine-internals.md §8.1).
// Errors: ctx cancellation, a configuration the simulator cannot run (*config.Error), or an
// internal failure.
func Run(ctx context.Context, cfg *config.Config, opt Options) (*Result, error) {
	start := time.Now()
	wl := opt.Workload
	if wl == nil {
		var err error
		if wl, err = BuildWorkload(cfg); err != nil {
			return nil, err
		}
	}
	dep := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency()}
	if opt.Efficiency != nil {
		dep.eff = *opt.Efficiency
	}
	ctxLimit := cfg.Engine.ContextLength
	if ctxLimit == 0 {
		m, err := dep.modelFor(`engine.context_length "max" (or set a number of tokens)`)
		if err != nil {
			return nil, err
		}
		ctxLimit = m.MaxContext
	}
	s := &runState{cfg: cfg, dep: dep, wl: wl, ctxLimit: ctxLimit, checkInvariants: opt.CheckInvariants,
		rampMs: max(opt.ConcurrencyRampMs, 0)}
	n := len(wl.Requests)
	s.reqs = make([]engine.Request, n)
	s.overlap = make([]int32, n)
	w := &cfg.Engine.Workers
	var err error
	switch cfg.Engine.Mode {
	case config.ModeAggregated:
		if s.decode, err = s.newPool("aggregated", w.Aggregated, s.reqs, false); err != nil {
			return nil, err
		}
	case config.ModeDisaggregated:
		s.disagg = true
		s.reqsP = make([]engine.Request, n)
		s.handoffs = make([]Handoff, n)
		if s.prefill, err = s.newPool("prefill", w.Prefill, s.reqsP, true); err != nil {
			return nil, err
		}
		if s.decode, err = s.newPool("decode", w.Decode, s.reqs, false); err != nil {
			return nil, err
		}
		if err := s.setupTransfer(); err != nil {
			return nil, err
		}
	default:
		return nil, &config.Error{File: cfg.File, Path: "engine.mode", Msg: fmt.Sprintf("%q is not supported yet", cfg.Engine.Mode)}
	}
	s.initRequests()
	if err := s.scheduleArrivals(); err != nil {
		return nil, err
	}
	if err := s.loop(ctx); err != nil {
		return nil, err
	}

	in := &metrics.Input{
		Requests:            s.reqs,
		PassGapMs:           s.decode.passGaps(),
		DecodeWorkers:       len(s.decode.workers),
		DecodeGPUsPerWorker: s.decode.gpusPerWorker,
	}
	in.Preemptions = s.decode.preemptions()
	if s.prefill != nil {
		in.PrefillWorkers = len(s.prefill.workers)
		in.PrefillGPUsPerWorker = s.prefill.gpusPerWorker
		in.Preemptions += s.prefill.preemptions()
	}
	if sla := cfg.Evaluation.SLA; sla != nil {
		in.SLA = &metrics.SLA{TTFTMs: deref(sla.TTFTMs), ITLMs: deref(sla.ITLMs), E2EMs: deref(sla.E2EMs)}
	}
	in.WallTimeMs = float64(time.Since(start).Microseconds()) / 1000
	res := &Result{Summary: metrics.Build(in), Requests: s.reqs, Handoffs: s.handoffs, Workload: wl, RouteOverlapTokens: s.overlap}
	res.LeakedBlocks = s.decode.leakedBlocks()
	if s.prefill != nil {
		res.LeakedBlocks += s.prefill.leakedBlocks()
	}
	return res, nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// worker is one logical worker: attention-DP rank engines that run passes in lock step.
type worker struct {
	ranks     []*engine.Engine
	busy      bool
	passStart float64
	passGapMs []float64
}

func (w *worker) hasWork() bool {
	for _, e := range w.ranks {
		if e.HasWork() {
			return true
		}
	}
	return false
}

// kvEvent is a prefix-cache change on one rank, applied to the router's overlap index at the end
// of the pass that caused it (engine-internals.md §4.2: KV events are visible at pass end).
type kvEvent struct {
	hash   uint64
	stored bool
}

// pool is one role's workers with their router.
type pool struct {
	name          string
	reqs          []engine.Request
	workers       []*worker
	ranks         int
	placer        *router.Placer
	pending       [][]kvEvent // per slot, until the pass ends
	blockSize     int
	poolTokens    int
	gpusPerWorker int
	dirty         []bool
	// waitingReserve lists, per slot, hand-offs waiting for KV room on a decode rank (FIFO).
	waitingReserve [][]int32
	// onFirstToken and onDone are the pool's reactions to a request's first token and to its
	// completion, bound once so passes do not allocate closures.
	onFirstToken, onDone func(int32)
}

func (s *runState) newPool(name string, role *config.WorkerRole, reqs []engine.Request, hold bool) (*pool, error) {
	path := "engine.workers." + name
	if role == nil {
		return nil, &config.Error{File: s.cfg.File, Path: path, Msg: "is required"}
	}
	model, err := s.dep.timing(name, role)
	if err != nil {
		return nil, err
	}
	blocks, err := s.dep.capacityBlocks(name, role)
	if err != nil {
		return nil, err
	}
	kv := role.KVCache
	par := role.Parallelism
	p := &pool{
		name: name, reqs: reqs, ranks: par.AttentionData, blockSize: kv.BlockSize,
		poolTokens: blocks * kv.BlockSize, gpusPerWorker: par.GPUsPerWorker(),
		workers: make([]*worker, par.Replicas), dirty: make([]bool, par.Replicas),
	}
	slots := par.Replicas * par.AttentionData
	p.pending = make([][]kvEvent, slots)
	p.waitingReserve = make([][]int32, slots)
	opt := router.Options{
		Policy: s.cfg.Router.Policy, Workers: par.Replicas, Ranks: par.AttentionData, BlockSize: kv.BlockSize,
		OverlapScoreCredit: derefOr(s.cfg.Router.OverlapScoreCredit, 1), PrefillLoadScale: derefOr(s.cfg.Router.PrefillLoadScale, 1),
		Temperature: deref(s.cfg.Router.Temperature), Seed: RouterSeed, Requests: len(reqs),
	}
	if opt.Policy == "" {
		opt.Policy = config.PolicyRoundRobin
	}
	// Only load-aware policies track load; round_robin and random place blindly.
	loadAware := opt.Policy == config.PolicyKVRouter || opt.Policy == config.PolicyLeastLoaded
	switch name {
	case "aggregated":
		opt.UseOverlap = opt.Policy == config.PolicyKVRouter
		opt.TrackPrefill, opt.TrackDecode, opt.AssumeReuse = loadAware, loadAware, true
	case "prefill":
		// The prefill router tracks prompt load and overlap but not decode blocks.
		opt.UseOverlap, opt.TrackPrefill = opt.Policy == config.PolicyKVRouter, loadAware
	case "decode":
		// The decode router is overlap-blind and counts every request's blocks (no reuse assumed).
		opt.TrackDecode = loadAware
	}
	if p.placer, err = router.NewPlacer(opt); err != nil {
		return nil, &config.Error{File: s.cfg.File, Path: "router.policy", Msg: err.Error()}
	}
	for w := range p.workers {
		p.workers[w] = &worker{ranks: make([]*engine.Engine, par.AttentionData)}
		for k := range p.workers[w].ranks {
			e, err := engine.New(engine.Config{
				MaxBatchedTokens: role.Scheduler.MaxBatchedTokens, MaxSequences: role.Scheduler.MaxSequences,
				BlockSize: kv.BlockSize, CapacityBlocks: blocks, PrefixCaching: kv.PrefixCaching,
				Timing: model, HoldOnComplete: hold, PrefillOnly: hold, Worker: int32(w), Rank: int32(k),
			}, reqs)
			if err != nil {
				return nil, err
			}
			if opt.UseOverlap {
				slot := w*par.AttentionData + k
				e.Pool().OnStored = func(h uint64) { p.pending[slot] = append(p.pending[slot], kvEvent{h, true}) }
				e.Pool().OnRemoved = func(h uint64) { p.pending[slot] = append(p.pending[slot], kvEvent{h, false}) }
			}
			p.workers[w].ranks[k] = e
		}
	}
	if hold {
		// The prefill pool hands a finished prefill to the decode pool.
		p.onDone = s.handoff
	} else {
		p.onFirstToken = p.placer.PrefillDone
		p.onDone = func(ri int32) {
			p.placer.Free(ri)
			s.finished(ri)
		}
	}
	return p, nil
}

func derefOr(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func (p *pool) passGaps() [][]float64 {
	out := make([][]float64, len(p.workers))
	for w, wk := range p.workers {
		out[w] = wk.passGapMs
	}
	return out
}

func (p *pool) preemptions() int64 {
	var n int64
	for _, wk := range p.workers {
		for _, e := range wk.ranks {
			n += e.Preemptions()
		}
	}
	return n
}

// leakedBlocks counts blocks still held on ranks with no live request.
func (p *pool) leakedBlocks() int {
	n := 0
	for _, wk := range p.workers {
		for _, e := range wk.ranks {
			if !e.HasWork() {
				n += e.Pool().Active()
			}
		}
	}
	return n
}

func (p *pool) engine(slot int) *engine.Engine { return p.workers[slot/p.ranks].ranks[slot%p.ranks] }

// initRequests sizes every request: the output is clipped so that prompt + output stays within the
// context limit and within every KV pool the request passes through.
func (s *runState) initRequests() {
	pools := []*pool{s.decode}
	if s.prefill != nil {
		pools = append(pools, s.prefill)
	}
	for _, p := range pools {
		hashes := s.wl.BlockHashes(p.blockSize, s.ctxLimit)
		history := make([]engine.Admission, len(s.wl.Requests))
		for i := range s.wl.Requests {
			q := &s.wl.Requests[i]
			maxOut := min(int(q.OutputLen), s.ctxLimit-int(q.PromptLen))
			for _, pp := range pools {
				maxOut = min(maxOut, pp.poolTokens-int(q.PromptLen))
			}
			maxOut = max(maxOut, 0)
			if p == s.prefill {
				// The prefill side produces only the first token (engine-internals.md §5).
				maxOut = min(maxOut, 1)
			}
			p.reqs[i].Reset(q.PromptLen, q.OutputLen, int32(maxOut), hashes[i], history[i:i:i+1])
		}
	}
}

// transfer describes the KV transfer of disaggregated serving.
type transfer struct {
	bytesPerToken float64
	gbps          float64 // 0: no delay
	fullPrompt    bool
}

func (s *runState) setupTransfer() error {
	kt := s.cfg.Engine.KVTransfer
	if kt == nil {
		return nil
	}
	s.xfer.fullPrompt = kt.TimingMode == "full_prompt"
	if kt.BandwidthGBps == nil {
		return nil
	}
	s.xfer.gbps = *kt.BandwidthGBps
	if kt.BytesPerToken > 0 {
		s.xfer.bytesPerToken = float64(kt.BytesPerToken)
		return nil
	}
	b, err := s.dep.transferBytesPerToken(s.cfg.Engine.Workers.Prefill)
	if err != nil {
		return err
	}
	s.xfer.bytesPerToken = b
	return nil
}

// transferMs is the KV transfer delay of tokens prompt tokens:
// tokens × bytes_per_token / (bandwidth_GB/s × 1e9) seconds (dynosim-spec.md §3.2.5).
func (s *runState) transferMs(tokens int) float64 {
	if s.xfer.gbps <= 0 || tokens <= 0 {
		return 0
	}
	return float64(tokens) * s.xfer.bytesPerToken / (s.xfer.gbps * 1e9) * 1000
}

// Event kinds, in the order they are applied at one timestamp.
const (
	evPass int8 = iota
	evTransfer
	evArrival
)

// event is something due at timeMs; seq orders ties within a kind.
type event struct {
	timeMs float64
	seq    int64
	kind   int8
	pool   int8 // evPass: 0 decode/aggregated, 1 prefill
	worker int32
	req    int32
}

// eventHeap is a min-heap by (timeMs, seq), typed to avoid interface calls in the hot loop.
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].less(s[l]) {
			m = r
		}
		if !s[m].less(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

func (a event) less(b event) bool {
	if a.timeMs != b.timeMs {
		return a.timeMs < b.timeMs
	}
	return a.seq < b.seq
}

// runState is the mutable state of one run's event loop.
type runState struct {
	cfg             *config.Config
	dep             *deployment
	wl              *traffic.Workload
	ctxLimit        int
	checkInvariants bool

	reqs     []engine.Request // client view; the decode (or aggregated) pool's requests
	reqsP    []engine.Request // prefill pool's requests (disaggregated)
	handoffs []Handoff
	overlap  []int32 // per request: router overlap in tokens at its first pool
	decode   *pool   // the aggregated pool in aggregated mode
	prefill  *pool   // nil in aggregated mode
	disagg   bool
	xfer     transfer

	events      eventHeap
	seq         int64
	nowMs       float64
	closedLoop  bool
	rampMs      float64 // Options.ConcurrencyRampMs
	nextSession int     // next session to start under a concurrency load
	// scheduled holds the arrivals known before the run, sorted by (time, seq); nextScheduled is
	// the first not yet due. started is set once they are all known.
	scheduled     []event
	nextScheduled int
	started       bool
}

// scheduleArrivals queues the first turn of the sessions that start on their own: all of them
// under open-loop and trace loads, the first `concurrency` under a concurrency load.
func (s *runState) scheduleArrivals() error {
	load := &s.cfg.Traffic.Load
	n := len(s.wl.Sessions)
	switch load.Type {
	case config.LoadConcurrency:
		s.closedLoop = true
		for s.nextSession < min(load.Concurrency, n) {
			s.startSession(s.nextSession, float64(s.nextSession)*s.rampMs/float64(load.Concurrency))
			s.nextSession++
		}
	case config.LoadConstantRate, config.LoadPoisson:
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
		for i := range s.wl.Sessions {
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

// startSession schedules session i's first turn at atMs. Arrivals known before the run starts go
// to the sorted s.scheduled list, which keeps the event heap small; later ones to the heap.
func (s *runState) startSession(i int, atMs float64) {
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

// errStuck reports a worker that has work but cannot schedule any token: a simulator bug.
var errStuck = errors.New("simulation stuck: a worker has queued requests but scheduled nothing")

func (s *runState) loop(ctx context.Context) error {
	capMs := s.cfg.Traffic.Stop.MaxVirtualTimeSeconds * 1000
	iter := 0
	var transfers, arrivals []int32
	for len(s.events) > 0 || s.nextScheduled < len(s.scheduled) {
		t := math.Inf(1)
		if len(s.events) > 0 {
			t = s.events[0].timeMs
		}
		if s.nextScheduled < len(s.scheduled) {
			t = math.Min(t, s.scheduled[s.nextScheduled].timeMs)
		}
		if capMs > 0 && t > capMs {
			break
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
		}
		s.nowMs = t
		// Apply this timestamp's pass completions first, then transfers, then arrivals; events
		// that these create at the same timestamp join their phase. Pre-scheduled arrivals were
		// sequenced before every dynamic event, so they come first among arrivals.
		for s.nextScheduled < len(s.scheduled) && s.scheduled[s.nextScheduled].timeMs == t {
			arrivals = append(arrivals, s.scheduled[s.nextScheduled].req)
			s.nextScheduled++
		}
		for len(s.events) > 0 && s.events[0].timeMs == t {
			e := s.events.pop()
			switch e.kind {
			case evPass:
				s.completePass(s.poolOf(e.pool), int(e.worker))
			case evTransfer:
				transfers = append(transfers, e.req)
			case evArrival:
				arrivals = append(arrivals, e.req)
			}
		}
		for len(transfers) > 0 || len(arrivals) > 0 {
			for _, r := range transfers {
				s.activate(r)
			}
			transfers = transfers[:0]
			for _, r := range arrivals {
				s.dispatch(r)
			}
			arrivals = arrivals[:0]
			for len(s.events) > 0 && s.events[0].timeMs == t && s.events[0].kind != evPass {
				e := s.events.pop()
				if e.kind == evTransfer {
					transfers = append(transfers, e.req)
				} else {
					arrivals = append(arrivals, e.req)
				}
			}
		}
		for _, p := range []*pool{s.prefill, s.decode} {
			if p == nil {
				continue
			}
			for w, d := range p.dirty {
				if d && !p.workers[w].busy {
					p.dirty[w] = false
					if err := s.startPass(p, w); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func (s *runState) poolOf(id int8) *pool {
	if id == 1 {
		return s.prefill
	}
	return s.decode
}

func (s *runState) poolID(p *pool) int8 {
	if p == s.prefill {
		return 1
	}
	return 0
}

// dispatch is request ri's arrival: reject it if its prompt cannot fit the context limit or a KV
// pool, else route it to a rank of the first pool it visits.
func (s *runState) dispatch(ri int32) {
	r := &s.reqs[ri]
	r.ArrivalMs = s.nowMs
	fits := int(r.PromptLen) < s.ctxLimit && int(r.PromptLen) < s.decode.poolTokens
	if s.prefill != nil {
		fits = fits && int(r.PromptLen) < s.prefill.poolTokens
	}
	if !fits {
		r.Status = engine.Rejected
		r.TerminalMs = s.nowMs
		s.finished(ri)
		return
	}
	p := s.decode
	if s.prefill != nil {
		p = s.prefill
		s.reqsP[ri].ArrivalMs = s.nowMs
		r.Status = engine.Waiting
	}
	q := &p.reqs[ri]
	promptHashes := q.Hashes[:min(int(q.PromptLen)/p.blockSize, len(q.Hashes))]
	slot, overlap := p.placer.Route(ri, int(q.PromptLen), promptHashes)
	q.Worker, q.Rank = int32(slot/p.ranks), int32(slot%p.ranks)
	s.overlap[ri] = int32(overlap * p.blockSize)
	if s.handoffs != nil {
		s.handoffs[ri] = Handoff{PrefillWorker: q.Worker, DecodeWorker: -1, PrefillAdmitMs: -1, SourceHeldMs: -1,
			DestinationReservedMs: -1, DestinationActivatedMs: -1, PrefillOverlapTokens: int32(overlap * p.blockSize)}
	}
	p.engine(slot).Submit(ri)
	p.dirty[q.Worker] = true
}

// finished reacts to a terminal request: the session's next turn arrives after the think time;
// a finished session frees its concurrency slot for the next session.
func (s *runState) finished(ri int32) {
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

func (s *runState) startPass(p *pool, w int) error {
	wk := p.workers[w]
	for attempt := 0; attempt < 2; attempt++ {
		dur, scheduled := 0.0, false
		for _, e := range wk.ranks {
			d, ok := e.Schedule(s.nowMs)
			dur = math.Max(dur, d)
			scheduled = scheduled || ok
		}
		if s.checkInvariants {
			if err := s.checkWorker(p, w); err != nil {
				return err
			}
		}
		if scheduled {
			wk.busy = true
			wk.passStart = s.nowMs
			s.push(event{timeMs: s.nowMs + dur, kind: evPass, pool: s.poolID(p), worker: int32(w)})
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

func (s *runState) completePass(p *pool, w int) {
	wk := p.workers[w]
	wk.busy = false
	pass := int32(len(wk.passGapMs))
	wk.passGapMs = append(wk.passGapMs, s.nowMs-wk.passStart)
	for k, e := range wk.ranks {
		slot := w*p.ranks + k
		for _, ev := range p.pending[slot] {
			if ev.stored {
				p.placer.Stored(slot, ev.hash)
			} else {
				p.placer.Removed(slot, ev.hash)
			}
		}
		p.pending[slot] = p.pending[slot][:0]
		e.Complete(s.nowMs, pass, p.onFirstToken, p.onDone)
		if p != s.prefill {
			s.retryReservations(p, slot)
		}
	}
	p.dirty[w] = true
}

// handoff runs when request ri's prefill finished (disaggregated mode, engine-internals.md §5):
// the prefill KV is held, the decode router picks a decode rank, the rank reserves the prompt's
// KV (reusing what it caches), and the transfer starts. A request with at most one output token
// completes on the prefill side with no transfer.
func (s *runState) handoff(ri int32) {
	pr, c, h := &s.reqsP[ri], &s.reqs[ri], &s.handoffs[ri]
	s.prefill.placer.Free(ri)
	h.PrefillAdmitMs, h.SourceHeldMs = pr.FirstAdmitMs, s.nowMs
	c.FirstAdmitMs, c.ReusedTokens, c.FirstReusedTokens = pr.FirstAdmitMs, pr.ReusedTokens, pr.FirstReusedTokens
	c.RecoveredTokens, c.Preemptions = pr.RecoveredTokens, pr.Preemptions
	h.PrefillHistory = pr.History
	if c.MaxOutput <= 1 {
		s.prefill.engine(int(pr.Worker)*s.prefill.ranks + int(pr.Rank)).Release(ri)
		s.prefill.dirty[pr.Worker] = true
		if c.MaxOutput == 1 {
			c.EmitFirstToken(s.nowMs)
		}
		c.Status, c.TerminalMs = engine.Completed, s.nowMs
		s.finished(ri)
		return
	}
	d := s.decode
	slot, _ := d.placer.Route(ri, int(c.PromptLen), nil)
	c.Worker, c.Rank = int32(slot/d.ranks), int32(slot%d.ranks)
	h.DecodeWorker = c.Worker
	if len(d.waitingReserve[slot]) > 0 || !s.reserve(ri, slot) {
		d.waitingReserve[slot] = append(d.waitingReserve[slot], ri)
	}
}

// reserve claims decode-side KV for ri on slot and starts its transfer; false when the rank
// lacks room.
func (s *runState) reserve(ri int32, slot int) bool {
	cached, ok := s.decode.engine(slot).Reserve(ri)
	if !ok {
		return false
	}
	c, h := &s.reqs[ri], &s.handoffs[ri]
	tokens := int(c.PromptLen)
	if !s.xfer.fullPrompt {
		tokens -= cached
	}
	h.DestinationReservedMs = s.nowMs
	h.DecodeCachedTokens, h.TransferredTokens = int32(cached), int32(tokens)
	s.push(event{timeMs: s.nowMs + s.transferMs(tokens), kind: evTransfer, req: ri})
	return true
}

// retryReservations starts waiting hand-offs on a decode slot, in order, while KV room allows.
func (s *runState) retryReservations(p *pool, slot int) {
	q := p.waitingReserve[slot]
	n := 0
	for n < len(q) && s.reserve(q[n], slot) {
		n++
	}
	if n > 0 {
		p.waitingReserve[slot] = append(q[:0], q[n:]...)
	}
}

// activate ends request ri's KV transfer: the prefill side releases its KV, the first token
// becomes visible to the client, and the request queues for decode.
func (s *runState) activate(ri int32) {
	pr, c := &s.reqsP[ri], &s.reqs[ri]
	s.prefill.engine(int(pr.Worker)*s.prefill.ranks + int(pr.Rank)).Release(ri)
	s.prefill.dirty[pr.Worker] = true
	s.handoffs[ri].DestinationActivatedMs = s.nowMs
	c.EmitFirstToken(s.nowMs)
	s.decode.engine(int(c.Worker)*s.decode.ranks + int(c.Rank)).Activate(ri)
	s.decode.dirty[c.Worker] = true
}

func (s *runState) checkWorker(p *pool, w int) error {
	for k, e := range p.workers[w].ranks {
		holders := make([]int32, e.Pool().Capacity())
		e.Holders(holders)
		if msg := e.Pool().CheckInvariants(holders); msg != "" {
			return fmt.Errorf("%s worker %d rank %d at %.3f ms: KV pool invariant broken: %s", p.name, w, k, s.nowMs, msg)
		}
	}
	return nil
}

// BuildWorkload builds the sessions and requests cfg.Traffic describes. Trace files are read here;
// a bad trace line is a *traffic.TraceError naming the file and line.
func BuildWorkload(cfg *config.Config) (*traffic.Workload, error) {
	src, load, stop := &cfg.Traffic.Source, &cfg.Traffic.Load, &cfg.Traffic.Stop
	switch src.Type {
	case config.SourceSynthetic:
		return traffic.Synthetic(countFor(stop.Requests, stop.RequestsPerLoadUnit, load), src.InputTokens, src.OutputTokens), nil
	case config.SourceSyntheticSession:
		sh := src.Session
		return traffic.SyntheticSessions(countFor(stop.Sessions, stop.SessionsPerLoadUnit, load), traffic.SessionShape{
			Turns: sh.Turns, NewInput: src.NewInputTokensPerTurn, Output: src.OutputTokensPerTurn,
			SharedPrefixRatio: sh.SharedPrefixRatio, PrefixGroups: sh.PrefixGroups, InterTurnDelayMs: sh.InterTurnDelayMs,
		}), nil
	case config.SourceTrace:
		rows, err := traffic.LoadMooncake(src.Paths[0], src.BlockSize)
		return traceWorkload(cfg, rows, err)
	}
	return nil, fmt.Errorf("traffic.source.type %q is not supported", src.Type)
}

// traceWorkload builds the workload of a trace source from its parsed rows (or the parse error):
// a trace that cannot be read at all is a config.Error on traffic.source.paths, a bad line or a row
// checkTrace refuses a *traffic.TraceError; speedup applies only to trace_timestamps loads. A
// request whose authored arrival (its session's start plus its delays, after the speedup) lies
// beyond config.MaxMs virtual ms is a *traffic.TraceError naming its line: past it float64 ms no longer
// resolve 2 ns, and far past it a forward pass would vanish from the latencies.
func traceWorkload(cfg *config.Config, rows []traffic.TraceRow, err error) (*traffic.Workload, error) {
	src, load := &cfg.Traffic.Source, &cfg.Traffic.Load
	var te *traffic.TraceError
	if err != nil && !errors.As(err, &te) {
		return nil, &config.Error{File: cfg.File, Path: "traffic.source.paths", Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	if err := checkTrace(rows, src.Paths[0], load.Type); err != nil {
		return nil, err
	}
	speedup := 1.0
	if load.Type == config.LoadTraceTimestamps && load.Speedup > 0 {
		speedup = load.Speedup
	}
	w := traffic.FromTrace(rows, src.BlockSize, speedup)
	if at, line := traffic.LatestArrival(rows, w); at > config.MaxMs {
		msg := fmt.Sprintf("this request arrives at %g virtual ms (its session's start plus the delays of its turns), "+
			"beyond the %g ms simulated time may reach", at, float64(config.MaxMs))
		if speedup != 1 {
			msg += fmt.Sprintf(" (traffic.load.speedup %g divides every trace time; a larger speedup shortens them)", speedup)
		}
		return nil, &traffic.TraceError{File: src.Paths[0], Line: line, Msg: msg}
	}
	return w, nil
}

// countFor resolves a stop count: the explicit count, or max(1, round(x × load unit)) where the
// load unit is the concurrency or the open-loop rate (dynosim-spec.md §3.1.3).
func countFor(n int, perLoadUnit float64, load *config.Load) int {
	if n > 0 {
		return n
	}
	return max(1, int(math.Round(perLoadUnit*load.Unit())))
}
