package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

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
}

// Result is a finished run.
type Result struct {
	Summary *metrics.Summary
	// Requests holds every request's final state, indexed like Workload.Requests.
	Requests []engine.Request
	// Workload is the workload that was run.
	Workload *traffic.Workload
	// LeakedBlocks counts KV blocks still held by a request at the end of a run that completed
	// every request (always 0 unless there is a bug).
	LeakedBlocks int
}

// BuildWorkload builds the sessions and requests cfg.Traffic describes. Trace files are read here;
// a bad trace line is a *traffic.TraceError naming the file and line.
func BuildWorkload(cfg *Config) (*traffic.Workload, error) {
	src, load, stop := &cfg.Traffic.Source, &cfg.Traffic.Load, &cfg.Traffic.Stop
	switch src.Type {
	case SourceSynthetic:
		return traffic.Synthetic(countFor(stop.Requests, stop.RequestsPerLoadUnit, load), src.InputTokens, src.OutputTokens), nil
	case SourceSyntheticSession:
		sh := src.Session
		return traffic.SyntheticSessions(countFor(stop.Sessions, stop.SessionsPerLoadUnit, load), traffic.SessionShape{
			Turns: sh.Turns, NewInput: src.NewInputTokensPerTurn, Output: src.OutputTokensPerTurn,
			SharedPrefixRatio: sh.SharedPrefixRatio, PrefixGroups: sh.PrefixGroups, InterTurnDelayMs: sh.InterTurnDelayMs,
		}), nil
	case SourceTrace:
		rows, err := traffic.LoadMooncake(src.Paths[0], src.BlockSize)
		if err != nil {
			return nil, err
		}
		speedup := 1.0
		if load.Type == LoadTraceTimestamps && load.Speedup > 0 {
			speedup = load.Speedup
		}
		return traffic.FromTrace(rows, src.BlockSize, speedup), nil
	}
	return nil, fmt.Errorf("traffic.source.type %q is not supported", src.Type)
}

// countFor resolves a stop count: the explicit count, or max(1, round(x × load unit)) where the
// load unit is the concurrency or the open-loop rate (dynosim-spec.md §3.1.3).
func countFor(n int, perLoadUnit float64, load *Load) int {
	if n > 0 {
		return n
	}
	unit := float64(load.Concurrency)
	if load.Type != LoadConcurrency {
		unit = load.RequestsPerSecond + load.SessionsPerSecond
	}
	return max(1, int(math.Round(perLoadUnit*unit)))
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

// event is a pass completion (worker >= 0) or an arrival (req >= 0) at timeMs; seq orders ties.
type event struct {
	timeMs float64
	seq    int64
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

// Run simulates cfg and returns its report. It is deterministic: the same cfg gives the same
// result (wall time aside). The virtual clock is in ms. At one timestamp, pass completions are
// applied first (in worker order), then arrivals (in the order they were scheduled), then every
// idle worker with work starts a pass (engine-internals.md §8.1). Errors: ctx cancellation, a
// configuration the simulator cannot run (exit 2 class: *ConfigError), or an internal failure.
func Run(ctx context.Context, cfg *Config, opt Options) (*Result, error) {
	start := time.Now()
	role := cfg.Engine.Workers.Aggregated
	if cfg.Engine.Mode != ModeAggregated || role == nil {
		return nil, &ConfigError{File: cfg.File, Path: "engine.mode", Msg: fmt.Sprintf("%q is not supported yet", cfg.Engine.Mode)}
	}
	wl := opt.Workload
	if wl == nil {
		var err error
		if wl, err = BuildWorkload(cfg); err != nil {
			return nil, err
		}
	}
	model, err := roleTiming(cfg, role, "engine.workers.aggregated.timing")
	if err != nil {
		return nil, err
	}
	ctxLimit := cfg.Engine.ContextLength
	if ctxLimit == 0 {
		m, err := timing.LookupModel(cfg.Engine.Model)
		if err != nil {
			return nil, &ConfigError{File: cfg.File, Path: "engine.context_length",
				Msg: fmt.Sprintf("\"max\" needs the model's maximum context: %v; or set a number of tokens", err)}
		}
		ctxLimit = m.MaxContext
	}
	kv := role.KVCache
	if kv.Capacity.Type != CapacityFixed || kv.Capacity.Blocks <= 0 {
		return nil, &ConfigError{File: cfg.File, Path: "engine.workers.aggregated.kv_cache.capacity.type",
			Msg: fmt.Sprintf("%q is not supported yet; use {type: fixed, blocks: N}", kv.Capacity.Type)}
	}

	par := role.Parallelism
	hashes := wl.BlockHashes(kv.BlockSize)
	reqs := make([]engine.Request, len(wl.Requests))
	poolTokens := kv.Capacity.Blocks * kv.BlockSize
	for i := range wl.Requests {
		q := &wl.Requests[i]
		maxOut := min(int(q.OutputLen), ctxLimit-int(q.PromptLen), poolTokens-int(q.PromptLen))
		reqs[i].Reset(q.PromptLen, q.OutputLen, int32(max(maxOut, 0)), hashes[i])
	}

	workers := make([]*worker, par.Replicas)
	for w := range workers {
		workers[w] = &worker{ranks: make([]*engine.Engine, par.AttentionData)}
		for k := range workers[w].ranks {
			e, err := engine.New(engine.Config{
				MaxBatchedTokens: role.Scheduler.MaxBatchedTokens, MaxSequences: role.Scheduler.MaxSequences,
				BlockSize: kv.BlockSize, CapacityBlocks: kv.Capacity.Blocks, PrefixCaching: kv.PrefixCaching, Timing: model,
			}, reqs)
			if err != nil {
				return nil, err
			}
			workers[w].ranks[k] = e
		}
	}
	var rt router.Router = router.NewRoundRobin(par.Replicas, par.AttentionData)

	s := &runState{
		cfg: cfg, wl: wl, reqs: reqs, workers: workers, router: rt,
		ctxLimit: ctxLimit, poolTokens: poolTokens, checkInvariants: opt.CheckInvariants,
	}
	if err := s.scheduleArrivals(); err != nil {
		return nil, err
	}
	if err := s.loop(ctx); err != nil {
		return nil, err
	}

	in := &metrics.Input{
		Requests:            reqs,
		PassGapMs:           make([][]float64, len(workers)),
		DecodeWorkerSeconds: float64(par.Replicas) * s.durationMs() / 1000,
		DecodeGPUsPerWorker: par.GPUsPerWorker(),
		WallTimeMs:          float64(time.Since(start).Microseconds()) / 1000,
	}
	for w, wk := range workers {
		in.PassGapMs[w] = wk.passGapMs
		for _, e := range wk.ranks {
			in.Preemptions += e.Preemptions()
		}
	}
	if sla := cfg.Evaluation.SLA; sla != nil {
		in.SLA = &metrics.SLA{TTFTMs: deref(sla.TTFTMs), ITLMs: deref(sla.ITLMs), E2EMs: deref(sla.E2EMs)}
	}
	res := &Result{Summary: metrics.Build(in), Requests: reqs, Workload: wl}
	res.LeakedBlocks = s.leakedBlocks()
	return res, nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// roleTiming builds the timing model of a role.
func roleTiming(cfg *Config, role *WorkerRole, path string) (timing.Model, error) {
	switch role.Timing.Type {
	case TimingFixed:
		return timing.Fixed{PrefillMs: deref(role.Timing.PrefillMs), DecodeMs: deref(role.Timing.DecodeMs)}, nil
	case TimingPolynomial:
		return timing.Polynomial{}, nil
	}
	return nil, &ConfigError{File: cfg.File, Path: path + ".type", Msg: fmt.Sprintf("%q is not supported yet; use fixed or polynomial", role.Timing.Type)}
}

// runState is the mutable state of one run's event loop.
type runState struct {
	cfg             *Config
	wl              *traffic.Workload
	reqs            []engine.Request
	workers         []*worker
	router          router.Router
	ctxLimit        int
	poolTokens      int
	checkInvariants bool

	events      eventHeap
	seq         int64
	nowMs       float64
	closedLoop  bool
	nextSession int // next session to start under a concurrency load
	dirty       []bool
}

// scheduleArrivals queues the first turn of the sessions that start on their own: all of them
// under open-loop and trace loads, the first `concurrency` under a concurrency load.
func (s *runState) scheduleArrivals() error {
	load := &s.cfg.Traffic.Load
	n := len(s.wl.Sessions)
	s.dirty = make([]bool, len(s.workers))
	switch load.Type {
	case LoadConcurrency:
		s.closedLoop = true
		for s.nextSession < min(load.Concurrency, n) {
			s.startSession(s.nextSession, 0)
			s.nextSession++
		}
	case LoadConstantRate, LoadPoisson:
		rate := load.RequestsPerSecond + load.SessionsPerSecond
		gap := 1000 / rate
		rng := rand.New(rand.NewPCG(load.Seed, 0x5e55))
		t := 0.0
		for i := 0; i < n; i++ {
			s.startSession(i, t)
			if load.Type == LoadPoisson {
				t += rng.ExpFloat64() * gap
			} else {
				t = float64(i+1) * gap
			}
		}
	case LoadTraceTimestamps:
		for i := range s.wl.Sessions {
			s.startSession(i, s.wl.Sessions[i].StartMs)
		}
	default:
		return &ConfigError{File: s.cfg.File, Path: "traffic.load.type", Msg: fmt.Sprintf("%q is not supported yet", load.Type)}
	}
	return nil
}

func (s *runState) startSession(i int, atMs float64) {
	s.push(event{timeMs: atMs, worker: -1, req: s.wl.Sessions[i].First})
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
	for len(s.events) > 0 {
		t := s.events[0].timeMs
		if capMs > 0 && t > capMs {
			break
		}
		if iter++; iter&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		s.nowMs = t
		// Completions before arrivals at the same time: completions are pushed with their
		// worker's pass start, arrivals interleave by seq, so collect this timestamp's events
		// and apply completions first.
		var arrivals []int32
		for len(s.events) > 0 && s.events[0].timeMs == t {
			e := s.events.pop()
			if e.worker >= 0 {
				s.completePass(int(e.worker))
			} else {
				arrivals = append(arrivals, e.req)
			}
		}
		for len(arrivals) > 0 {
			// Arrivals created by completions at this same time (zero think time, closed-loop
			// backfill) join this batch.
			for _, r := range arrivals {
				s.dispatch(r)
			}
			arrivals = arrivals[:0]
			for len(s.events) > 0 && s.events[0].timeMs == t && s.events[0].worker < 0 {
				arrivals = append(arrivals, s.events.pop().req)
			}
		}
		for w, d := range s.dirty {
			if d && !s.workers[w].busy {
				s.dirty[w] = false
				if err := s.startPass(w); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dispatch is request r's arrival: reject it if its prompt cannot fit the context limit or the
// KV pool, else route it to a rank.
func (s *runState) dispatch(ri int32) {
	r := &s.reqs[ri]
	r.ArrivalMs = s.nowMs
	if int(r.PromptLen) >= s.ctxLimit || int(r.PromptLen) >= s.poolTokens {
		r.Status = engine.Rejected
		r.TerminalMs = s.nowMs
		s.finished(ri)
		return
	}
	w, k := s.router.Route(ri)
	r.Worker, r.Rank = int32(w), int32(k)
	s.workers[w].ranks[k].Submit(ri)
	s.dirty[w] = true
}

// finished reacts to a terminal request: the session's next turn arrives after the think time;
// a finished session frees its concurrency slot for the next session.
func (s *runState) finished(ri int32) {
	q := &s.wl.Requests[ri]
	sess := &s.wl.Sessions[q.Session]
	if q.Turn+1 < sess.Turns {
		next := ri + 1
		s.push(event{timeMs: s.nowMs + s.wl.Requests[next].DelayMs, worker: -1, req: next})
		return
	}
	if s.closedLoop && s.nextSession < len(s.wl.Sessions) {
		s.startSession(s.nextSession, s.nowMs)
		s.nextSession++
	}
}

func (s *runState) startPass(w int) error {
	wk := s.workers[w]
	for attempt := 0; attempt < 2; attempt++ {
		dur, scheduled := 0.0, false
		for _, e := range wk.ranks {
			d, ok := e.Schedule(s.nowMs)
			dur = math.Max(dur, d)
			scheduled = scheduled || ok
		}
		if s.checkInvariants {
			if err := s.checkWorker(w); err != nil {
				return err
			}
		}
		if scheduled {
			wk.busy = true
			wk.passStart = s.nowMs
			s.push(event{timeMs: s.nowMs + dur, worker: int32(w), req: -1})
			return nil
		}
		if !wk.hasWork() {
			return nil
		}
		// Nothing scheduled although work is queued: a pass that only preempted. The next
		// attempt admits from the waiting queue.
	}
	return errStuck
}

func (s *runState) completePass(w int) {
	wk := s.workers[w]
	wk.busy = false
	pass := int32(len(wk.passGapMs))
	wk.passGapMs = append(wk.passGapMs, s.nowMs-wk.passStart)
	for _, e := range wk.ranks {
		e.Complete(s.nowMs, pass, s.finished)
	}
	s.dirty[w] = true
}

func (s *runState) durationMs() float64 {
	d := 0.0
	for i := range s.reqs {
		if s.reqs[i].Status == engine.Completed {
			d = math.Max(d, s.reqs[i].TerminalMs)
		}
	}
	return d
}

func (s *runState) checkWorker(w int) error {
	for k, e := range s.workers[w].ranks {
		holders := make([]int32, e.Pool().Capacity())
		e.Holders(holders)
		if msg := e.Pool().CheckInvariants(holders); msg != "" {
			return fmt.Errorf("worker %d rank %d at %.3f ms: KV pool invariant broken: %s", w, k, s.nowMs, msg)
		}
	}
	return nil
}

// leakedBlocks counts blocks still held when no request is live.
func (s *runState) leakedBlocks() int {
	n := 0
	for _, wk := range s.workers {
		for _, e := range wk.ranks {
			if !e.HasWork() {
				n += e.Pool().Active()
			}
		}
	}
	return n
}
