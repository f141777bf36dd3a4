package sim

import (
	"iter"
	"math/bits"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/planner"
	"github.com/servesweep/servesweep/sim/router"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/traffic"
)

// worker is one logical worker: attention-DP rank engines that run passes in lock step.
type worker struct {
	ranks     []*engine.Engine
	busy      bool
	passStart float64
	passes    metrics.PassLog
}

func (w *worker) hasWork() bool {
	for _, e := range w.ranks {
		if e.HasWork() {
			return true
		}
	}
	return false
}

// markDirty notes that worker w may have work to schedule. A busy worker is not marked: the end
// of its pass marks it (completePass), and nothing else ends a pass.
func (p *role) markDirty(w int32) {
	if !p.workers[w].busy {
		p.dirty[w/64] |= 1 << (w % 64)
	}
}

// maxDensePoolKeys bounds the dense key indexes of one role's KV pools together, in keys (2^24:
// 64 MB of int32; engine.Config.DenseKeys); beyond it the pools index keys by rings
// (engine.Config.RingKeys). A sweep runs several points at once, each with its roles.
const maxDensePoolKeys = 1 << 24

// kvEvent is a prefix-cache change on one rank, applied to the router's overlap index at the end
// of the pass that caused it (engine-internals.md §4.2: KV events are visible at pass end).
type kvEvent struct {
	key    uint64
	stored bool
}

// role is the workers of one worker role (aggregated, prefill or decode) with their router.
type role struct {
	name      config.Role
	reqs      []engine.Request
	workers   []*worker
	ranks     int
	router    *router.Router
	pending   [][]kvEvent // per slot, until the pass ends
	blockSize int
	// blocks is the workload's prefix-cache view at this role's block size (shared, read-only).
	blocks        *traffic.BlockSet
	kvTokens      int
	gpusPerWorker int
	// dirty has a bit per idle worker that may have work to schedule (markDirty): the loop starts
	// a pass on each, in worker order.
	dirty []uint64
	// unchunkedBudget is, with engine.enable_chunked_prefill false, the token budget a prompt's
	// whole prefill must fit in one pass of this role (scheduler.max_batched_tokens); 0 when
	// prefill is chunked.
	unchunkedBudget int
	// waitingReserve lists, per slot, hand-offs waiting for KV room on a decode rank (FIFO).
	waitingReserve [][]int32
	// onFirstToken and onDone are the role's reactions to a request's first token and to its
	// completion, bound once so passes do not allocate closures.
	onFirstToken, onDone func(int32)
	// spec and model are the role's config and timing model; build creates worker w's engines
	// (the planner's workers not started yet have none).
	spec  *config.WorkerRole
	model timing.Model
	build func(w int) error
	// pool is the role's pool number in the planner (planner.Planner.AddPool), when it runs.
	pool int
}

// newRole builds the workers of role name from its spec, over the request slice reqs; hold makes
// them the prefill side of disaggregated serving (a finished prefill keeps its KV and is handed
// to the decoding role).
func (s *runState) newRole(name config.Role, spec *config.WorkerRole, reqs []engine.Request, hold bool) (*role, error) {
	if spec == nil {
		return nil, &config.Error{File: s.cfg.File, Path: "engine.workers." + string(name), Msg: "is required"}
	}
	if err := s.dep.checkMoE(name, spec); err != nil {
		return nil, err
	}
	model, err := s.dep.timing(name, spec)
	if err != nil {
		return nil, err
	}
	blocks, bs, err := s.dep.rankBlocks(name, spec)
	if err != nil {
		return nil, err
	}
	kv := spec.KVCache
	par := spec.Parallelism
	// Under the planner the role has a slot for every worker it may run; the first replicas
	// start active.
	workers := par.Replicas
	if planner.Enabled(s.cfg) {
		workers = planner.Slots(s.cfg, name, spec)
	}
	p := &role{
		name: name, reqs: reqs, ranks: par.AttentionData, blockSize: bs, blocks: s.wl.Blocks(bs, s.ctxLimit),
		kvTokens: blocks * bs, gpusPerWorker: par.GPUsPerWorker(),
		workers: make([]*worker, workers), dirty: make([]uint64, (workers+63)/64),
	}
	slots := workers * par.AttentionData
	p.pending = make([][]kvEvent, slots)
	p.waitingReserve = make([][]int32, slots)
	opt, err := s.newRouter(p, name, spec, workers, blocks)
	if err != nil {
		return nil, err
	}
	style, noEvict, sg := schedulerStyle(s.cfg.Engine.Backend, spec)
	var speculation *engine.Speculation
	if sp := s.cfg.Engine.Speculation; sp != nil {
		speculation = &engine.Speculation{Drafts: int32(sp.NumSpeculativeTokens), Acceptance: sp.AcceptanceRates, Seed: sp.Seed}
	}
	unchunked := s.cfg.Engine.EnableChunkedPrefill != nil && !*s.cfg.Engine.EnableChunkedPrefill && style != engine.StyleSGLang
	if unchunked {
		p.unchunkedBudget = spec.Scheduler.MaxBatchedTokens
	}
	// Speculative rounds that continue a pass run are tallied per pass by the engines, leaving
	// out the warm-up's requests; a run that a virtual-time cap can end with requests unfinished
	// keeps them per request instead, since the statistics leave unfinished requests out too.
	keepRounds := s.cfg.Traffic.Stop.MaxVirtualTimeSeconds > 0 || s.ref.keepRoundTokens
	tallyFromMs := s.cfg.Traffic.Load.Warmup() * 1000
	var tallyUntilMs *float64
	if s.cfg.Traffic.Load.HasCooldown() {
		tallyUntilMs = &s.cooldownFromMs
	}
	// Without prefix caching no key is ever looked up; with it, a role's pools index the shared
	// block ids densely while all of them together stay within maxDensePoolKeys, else by rings.
	denseKeys, ringKeys := 0, false
	if kv.PrefixCaching && !s.ref.hashAllKeys {
		if slots*p.blocks.Distinct <= maxDensePoolKeys && !s.ref.ringAllKeys {
			denseKeys = p.blocks.Distinct
		} else {
			ringKeys = true
		}
	}
	// build creates worker w's rank engines.
	build := func(w int) error {
		p.workers[w].ranks = make([]*engine.Engine, par.AttentionData)
		for k := range p.workers[w].ranks {
			e, err := engine.New(engine.Config{
				Style: style, NoEvict: noEvict, SGLang: sg,
				MaxBatchedTokens: spec.Scheduler.MaxBatchedTokens, MaxSequences: spec.Scheduler.MaxSequences,
				BlockSize: bs, CapacityBlocks: blocks, PrefixCaching: kv.PrefixCaching, DenseKeys: denseKeys, RingKeys: ringKeys,
				Timing: model, HoldOnComplete: hold, PrefillOnly: hold, Unchunked: unchunked, Speculation: speculation, Worker: int32(w), Rank: int32(k),
				KeepRoundTokens: keepRounds, RoundTallyFromMs: tallyFromMs, RoundTallyUntilMs: tallyUntilMs,
				BatchWait:     engine.BatchWait{TimeoutIters: spec.Scheduler.BatchWaitTimeoutIters, MaxTokensRatio: spec.Scheduler.BatchWaitMaxTokensRatio},
				GeneralPasses: s.ref.generalPasses,
			}, reqs)
			if err != nil {
				return err
			}
			if opt.UseOverlap {
				slot := w*par.AttentionData + k
				e.Pool().OnStored = func(h uint64) { p.pending[slot] = append(p.pending[slot], kvEvent{h, true}) }
				e.Pool().OnRemoved = func(h uint64) { p.pending[slot] = append(p.pending[slot], kvEvent{h, false}) }
			}
			p.workers[w].ranks[k] = e
		}
		return nil
	}
	// Workers the planner has not started yet have no engines.
	for w := range p.workers {
		p.workers[w] = &worker{}
		p.workers[w].passes.UseStore(s.passStore)
		if w < par.Replicas {
			if err := build(w); err != nil {
				return nil, err
			}
		}
	}
	if hold {
		// The prefill role hands a finished prefill to the decode role.
		p.onDone = s.handoff
	} else {
		p.onFirstToken = p.router.PrefillDone
		p.onDone = func(ri int32) {
			p.router.Free(ri)
			s.finished(ri)
		}
	}
	p.spec, p.model, p.build = spec, model, build
	return p, nil
}

// newRouter builds role p's router (p.router) over its workers (KV pools of blocks blocks): the policy, its knobs
// and what it tracks for a role of that name (overlap, prefill load, decode blocks), and the
// aic prefill-load predictor. It returns the router's options.
func (s *runState) newRouter(p *role, name config.Role, spec *config.WorkerRole, workers, blocks int) (router.Options, error) {
	par := spec.Parallelism
	var err error
	knobs := s.cfg.Router.Knobs()
	opt := router.Options{
		Policy: s.cfg.Router.Policy, Workers: workers, Ranks: par.AttentionData, BlockSize: p.blockSize,
		OverlapScoreCredit: knobs.OverlapScoreCredit, PrefillLoadScale: knobs.PrefillLoadScale,
		Temperature: knobs.Temperature, Seed: s.cfg.Router.RandomSeed(), Requests: len(p.reqs), DenseKeys: p.blocks.Distinct,
		RingSlots: engine.RingSlotsPerBlock * blocks,
	}
	if s.ref.hashAllKeys {
		opt.DenseKeys = 0
	}
	if s.ref.ringAllKeys {
		opt.DenseKeys, opt.RingSlots = router.MaxDenseKeys+1, 8
	}
	if opt.Policy == "" {
		opt.Policy = config.PolicyRoundRobin
	}
	// Only load-aware policies track load; round_robin and random place blindly.
	loadAware := opt.Policy == config.PolicyKVRouter || opt.Policy == config.PolicyLeastLoaded
	switch name {
	case config.RoleAggregated:
		opt.UseOverlap = opt.Policy == config.PolicyKVRouter
		opt.TrackPrefill, opt.TrackDecode, opt.AssumeReuse = loadAware, loadAware, true
	case config.RolePrefill:
		// The prefill router tracks prompt load and overlap but not decode blocks.
		opt.UseOverlap, opt.TrackPrefill = opt.Policy == config.PolicyKVRouter, loadAware
	case config.RoleDecode:
		// The decode router is overlap-blind and counts every request's blocks (no reuse assumed).
		opt.TrackDecode = loadAware
	}
	if opt.Policy == config.PolicyKVRouter && opt.TrackPrefill {
		if opt.PrefillMs, err = s.dep.prefillLoadMs(name, spec); err != nil {
			return opt, err
		}
		if opt.PrefillMs != nil {
			opt.Now = func() float64 { return s.nowMs }
		}
	}
	if p.router, err = router.New(opt); err != nil {
		return opt, &config.Error{File: s.cfg.File, Path: "router.policy", Msg: err.Error()}
	}
	return opt, nil
}

func (p *role) passLogs() []*metrics.PassLog {
	out := make([]*metrics.PassLog, len(p.workers))
	for w, wk := range p.workers {
		out[w] = &wk.passes
	}
	return out
}

// engines yields the engine of every rank of the role's workers, worker by worker, ranks in
// order.
func (p *role) engines() iter.Seq[*engine.Engine] {
	return func(yield func(*engine.Engine) bool) {
		for _, w := range p.workers {
			for _, e := range w.ranks {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// preemptions is the number of preemptions the role's engines made.
func (p *role) preemptions() int64 {
	var n int64
	for e := range p.engines() {
		n += e.Preemptions()
	}
	return n
}

// leakedBlocks counts blocks still held on ranks with no live request.
func (p *role) leakedBlocks() int {
	n := 0
	for e := range p.engines() {
		if !e.HasWork() {
			n += e.Pool().Active()
		}
	}
	return n
}

// syncEngines brings every worker's running requests up to date (engine.Engine.Sync): for
// reading them once the loop has stopped.
func (p *role) syncEngines() {
	for e := range p.engines() {
		e.Sync()
	}
}

// steadyPasses is the number of passes the role's engines formed in steady decode runs.
func (p *role) steadyPasses() int64 {
	var n int64
	for e := range p.engines() {
		n += e.SteadyPasses()
	}
	return n
}

// roles yields the run's roles: the prefill role (disaggregated mode only), then the decoding
// one (aggregated or decode workers).
func (s *runState) roles() iter.Seq[*role] {
	return func(yield func(*role) bool) {
		if s.prefill != nil && !yield(s.prefill) {
			return
		}
		yield(s.decoding)
	}
}

func (p *role) engine(slot int) *engine.Engine { return p.workers[slot/p.ranks].ranks[slot%p.ranks] }

// initRequests sizes every request: the output is clipped so that prompt + output stays within the
// context limit and within the decoding role's KV pool (a prefill worker holds only the prompt).
func (s *runState) initRequests() {
	roles := []*role{s.decoding}
	if s.prefill != nil {
		roles = append(roles, s.prefill)
	}
	for _, p := range roles {
		blocks := p.blocks
		history := make([]engine.Admission, len(s.wl.Requests))
		for i := range s.wl.Requests {
			q := &s.wl.Requests[i]
			maxOut := min(int(q.OutputLen), s.ctxLimit-int(q.PromptLen), s.decoding.kvTokens-int(q.PromptLen))
			maxOut = max(maxOut, 0)
			if p == s.prefill {
				// The prefill side produces only the first token (engine-internals.md §5).
				maxOut = min(maxOut, 1)
			}
			// A compact BlockSet gives a request its keys when it is dispatched (withKeys).
			var keys []uint32
			if !blocks.Compact() {
				keys = blocks.SharedKeys(i)
			}
			sh := blocks.SharedLen(i)
			if s.ref.allBlocksShared {
				sh = blocks.Full[i]
			}
			p.reqs[i].Reset(int32(i), q.PromptLen, q.OutputLen, int32(maxOut), keys, blocks.Full[i], sh, history[i:i:i+1])
		}
	}
}

// withKeys gives request ri, about to be routed, its shared block keys in every role whose
// BlockSet is compact (traffic.Workload.MaterializedKeysLimit), and on = false takes them back once the
// request is terminal (its routers have freed it), so memory for keys follows the requests in
// flight. Roles of one block size share one BlockSet (traffic.Workload.Blocks) and so one key
// slice. Key slices are recycled through keyFree, by capacity class, so a long run does not leave
// its garbage to the collector.
func (s *runState) withKeys(ri int32, on bool) {
	var done *traffic.BlockSet // the BlockSet whose keys ri was given, or taken back from, already
	var keys []uint32
	for _, p := range [2]*role{s.decoding, s.prefill} {
		if p == nil || !p.blocks.Compact() {
			continue
		}
		r := &p.reqs[ri]
		if p.blocks == done {
			if on {
				r.Keys = keys
			} else {
				r.Keys = nil
			}
			continue
		}
		done = p.blocks
		if on {
			n := p.blocks.SharedLen(int(ri))
			if n == 0 {
				keys = nil
				continue
			}
			c := bits.Len32(uint32(n - 1)) // capacity class: 1 << c >= n
			var buf []uint32
			if k := len(s.keyFree[c]); k > 0 {
				buf = s.keyFree[c][k-1]
				s.keyFree[c] = s.keyFree[c][:k-1]
			} else {
				buf = make([]uint32, 0, 1<<c)
			}
			keys = p.blocks.FillSharedKeys(buf, int(ri))
			r.Keys = keys
		} else if r.Keys != nil {
			c := bits.Len32(uint32(cap(r.Keys) - 1))
			s.keyFree[c] = append(s.keyFree[c], r.Keys[:0])
			r.Keys = nil
		}
	}
}

// schedulerStyle is the engine scheduler style of backend for a role: vLLM's; TensorRT-LLM's
// with guaranteed_no_evict unless scheduler.capacity_policy is max_utilization; SGLang's with its
// defaults, the role's page size, chunked_prefill_size, prefill_decode_interval and
// recv_interval.
func schedulerStyle(backend string, spec *config.WorkerRole) (engine.Style, bool, engine.SGLangConfig) {
	switch backend {
	case config.BackendTRTLLM:
		return engine.StyleTRTLLM, spec.Scheduler.CapacityPolicy != config.CapacityMaxUtilization, engine.SGLangConfig{}
	case config.BackendSGLang:
		sg := engine.DefaultSGLang(spec.KVCache.BlockSize, spec.Parallelism.AttentionData,
			spec.Scheduler.ChunkedPrefillSize, spec.Scheduler.PrefillDecodeInterval)
		sg.RecvInterval = spec.Scheduler.RecvInterval
		return engine.StyleSGLang, false, sg
	}
	return engine.StyleVLLM, false, engine.SGLangConfig{}
}
