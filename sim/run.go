package sim

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/planner"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/timing/opdb"
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
	// Systems is the performance database of `default` timing's op_level forward model and of
	// the aic prefill-load model (nil: none; a setting that needs one is then a *config.Error
	// wrapping ErrNoSystems). Its tables load once per DB, so runs that share it share them.
	Systems *opdb.DB

	// passBudget, when > 0, replaces metrics.PassMemoryBudget as the run's in-memory budget of
	// pass logs, in passes (tests force spilling with a small one).
	passBudget int
	// reference switches mechanisms to the reference paths their fast forms must match (tests).
	reference referencePaths
}

// referencePaths switches a run's fast mechanisms to their reference forms, which give the same
// outputs; the zero value is the fast forms. Tests set them through Options.reference.
type referencePaths struct {
	// heapPasses keeps every pass end in the event heap: the reference the listed pass ends must
	// match.
	heapPasses bool
	// generalPasses forms every pass on the engines' general path (engine.Config.GeneralPasses):
	// the reference steady decode runs must match.
	generalPasses bool
	// hashAllKeys keeps every key index of the run hashed (no dense part): the reference the
	// dense indexes must match.
	hashAllKeys bool
	// ringAllKeys indexes every key of the run by rings (the pools' and the routers', these of 8
	// slots): the same outputs as dense or hashed indexes.
	ringAllKeys bool
	// allBlocksShared treats every block as shared: every registration goes through the hash
	// index, the reference the skipped index updates of unique blocks must match.
	allBlocksShared bool
	// keepRoundTokens keeps every speculative round that continues a pass run on its request
	// (engine.Config.KeepRoundTokens), as a run with a virtual-time cap does: the reference the
	// engines' round tallies must match.
	keepRoundTokens bool
	// autoForwardModel, when set, is what forward_model auto uses instead of
	// timing.AutoForwardModel (tests of op_level under auto).
	autoForwardModel string
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
	// LeakedBlocks counts KV blocks still held on any KV pool once no request is live
	// (always 0 unless there is a bug).
	LeakedBlocks int
	// RouteOverlapTokens holds, per request, the prompt tokens the router found cached on the
	// chosen rank (whole blocks; 0 for overlap-blind policies).
	RouteOverlapTokens []int32
	// FrontendOverheadMs is the front-end time every request waited before reaching the workers
	// (FrontendOverheadMs of the config; 0 without a front end).
	FrontendOverheadMs float64
	// TimingProvider names the timing model that priced the passes: "fixed", "polynomial",
	// "roofline", or the op_level tables used (e.g. "op_level vllm gemm 0.24.0, attention
	// 0.24.0, nccl 2.29.2 on h200_sxm"), followed by ", overlap scheduling" when the host time
	// of the passes overlaps their GPU time (config.Engine.HostOverlap); in disaggregated mode
	// "prefill: X; decode: Y" when the roles differ.
	TimingProvider string
	// TimingNotes say why a role with forward_model auto was priced by the roofline although a
	// performance database is configured (what the database lacks), which fixed KV pool is
	// larger than its GPU could hold beside the weights (under default or roofline timing), and
	// which role the roofline prices with FP4 weights on a GPU without FP4 tensor cores; empty
	// otherwise.
	TimingNotes []string

	prefillRequests []engine.Request // the prefill role's requests, for Release
	// passChunksSpilled counts the pass-log chunks the run wrote to its spill file (for tests).
	passChunksSpilled int
	// steadyPasses counts the passes formed in steady decode runs, over all roles (for tests).
	steadyPasses int64
}

// spareRequests holds request arrays of released Results (*[]engine.Request) for later runs: a
// sweep worker running point after point reuses one array instead of allocating, zeroing and
// faulting in a fresh one per point.
var spareRequests sync.Pool

// takeRequests returns an array of n requests for a run: a released one when large enough (every
// element is overwritten by initRequests), else a new one.
func takeRequests(n int) []engine.Request {
	if p, ok := spareRequests.Get().(*[]engine.Request); ok {
		if cap(*p) >= n {
			return (*p)[:n]
		}
	}
	return make([]engine.Request, n)
}

// Release hands the Result's request arrays to later runs; call it once nothing reads Requests
// (or anything derived from them but the Summary) any more: Requests is nil afterwards. A Result
// that is never released is simply collected.
func (r *Result) Release() {
	for _, reqs := range [][]engine.Request{r.Requests, r.prefillRequests} {
		if cap(reqs) > 0 {
			reqs = reqs[:0]
			spareRequests.Put(&reqs)
		}
	}
	r.Requests, r.prefillRequests = nil, nil
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
	// DestinationActivatedMs is when the transfer ended (its fixed KVTransferLatencyMs, then its
	// bytes) and the request became decodable; the prefill side released its KV at the same time.
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

// Run simulates cfg and returns its report. It is deterministic: the same cfg gives the same
// result (wall time aside). The virtual clock is in ms. At one timestamp, pass completions are
// applied first, then KV-transfer completions, then arrivals (each in the order they were
// scheduled), then every idle worker with work starts a pass (engine-internals.md §8.1).
// Errors: ctx cancellation, a configuration the simulator cannot run (*config.Error), a failure
// to write or read back the temporary file the ITL pass logs spill to beyond their memory budget
// (metrics.PassMemoryBudget; the error names the file and says to set TMPDIR to a directory
// with free space), or an internal failure.
func Run(ctx context.Context, cfg *config.Config, opt Options) (*Result, error) {
	start := time.Now()
	wl := opt.Workload
	if wl == nil {
		var err error
		if wl, err = Interruptible(ctx, func() (*traffic.Workload, error) { return BuildWorkload(cfg) }); err != nil {
			return nil, err
		}
	}
	s, err := newRunState(cfg, opt, wl)
	if err != nil {
		return nil, err
	}
	defer s.passStore.Close() // on the error paths; closed and checked below once the summary is built
	if err := s.dep.checkShapes(); err != nil {
		return nil, err
	}
	if err := s.buildRoles(); err != nil {
		return nil, err
	}
	pl := s.newPlanner()
	s.initRequests()
	workers := len(s.decoding.workers)
	if s.prefill != nil {
		workers += len(s.prefill.workers)
	}
	s.listPasses, s.minPass = workers <= maxListedWorkers && !s.ref.heapPasses, -1
	if err := s.scheduleArrivals(); err != nil {
		return nil, err
	}
	if pl != nil {
		pl.Start()
	}
	if err := s.loop(ctx); err != nil {
		return nil, err
	}
	for p := range s.roles() {
		p.syncEngines()
	}
	in := s.metricsInput(pl)
	in.WallTimeMs = float64(time.Since(start).Microseconds()) / 1000
	sum, err := metrics.Build(in)
	if err != nil {
		return nil, err
	}
	if err := s.passStore.Close(); err != nil {
		return nil, err
	}
	for p := range s.roles() {
		for _, wk := range p.workers {
			wk.passes.Release() // the summary is built: later runs reuse the chunks
		}
	}
	res := &Result{Summary: sum, Requests: s.reqs, Handoffs: s.handoffs, Workload: wl, RouteOverlapTokens: s.overlap,
		FrontendOverheadMs: s.frontendMs, TimingProvider: s.dep.providerName(), TimingNotes: s.dep.notes, prefillRequests: s.reqsP,
		passChunksSpilled: s.passStore.SpilledChunks()}
	for p := range s.roles() {
		res.steadyPasses += p.steadyPasses()
		res.LeakedBlocks += p.leakedBlocks()
	}
	return res, nil
}

// newRunState returns the state of a run of cfg over workload wl: its deployment (timing
// factors and performance database from opt), context limit and pass-log store. Errors: a
// "max" context length of an unknown model.
func newRunState(cfg *config.Config, opt Options, wl *traffic.Workload) (*runState, error) {
	dep := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency(), db: opt.Systems, autoForwardModel: opt.reference.autoForwardModel}
	if opt.Efficiency != nil {
		dep.eff, dep.effGiven = *opt.Efficiency, true
	}
	ctxLimit := cfg.Engine.ContextLength
	if ctxLimit == 0 && cfg.Engine.Backend != config.BackendVLLM {
		// "max" on SGLang and TensorRT-LLM runs without a limit (dynosim-spec.md §3.2.6).
		ctxLimit = math.MaxInt32
	}
	if ctxLimit == 0 {
		m, err := dep.modelFor(`engine.context_length "max" (or set a number of tokens)`)
		if err != nil {
			return nil, err
		}
		ctxLimit = m.MaxContext
	}
	budget := metrics.PassMemoryBudget
	if opt.passBudget > 0 {
		budget = opt.passBudget
	}
	return &runState{cfg: cfg, dep: dep, wl: wl, cooldownFromMs: math.Inf(1), ctxLimit: ctxLimit, checkInvariants: opt.CheckInvariants, ref: opt.reference,
		frontendMs: FrontendOverheadMs(cfg), passStore: metrics.NewPassStore(budget)}, nil
}

// buildRoles builds the run's worker roles (aggregated, or prefill and decode with the KV
// transfer between them) over fresh request arrays.
func (s *runState) buildRoles() error {
	cfg := s.cfg
	n := len(s.wl.Requests)
	s.reqs = takeRequests(n)
	s.overlap = make([]int32, n)
	w := &cfg.Engine.Workers
	var err error
	switch cfg.Engine.Mode {
	case config.ModeAggregated:
		if s.decoding, err = s.newRole(config.RoleAggregated, w.Aggregated, s.reqs, false); err != nil {
			return err
		}
	case config.ModeDisaggregated:
		s.disagg = true
		s.reqsP = takeRequests(n)
		s.handoffs = make([]Handoff, n)
		if s.prefill, err = s.newRole(config.RolePrefill, w.Prefill, s.reqsP, true); err != nil {
			return err
		}
		if s.decoding, err = s.newRole(config.RoleDecode, w.Decode, s.reqs, false); err != nil {
			return err
		}
		if err := s.setupTransfer(); err != nil {
			return err
		}
	default:
		return &config.Error{File: cfg.File, Path: "engine.mode", Msg: fmt.Sprintf("%q is not supported yet", cfg.Engine.Mode)}
	}
	return nil
}

// metricsInput gathers what the run's summary is built from: the requests, the pass logs, the
// workers, the SLA and warm-up, the planner's timelines (pl, nil without one) and the
// speculation statistics.
func (s *runState) metricsInput(pl *planner.Planner) *metrics.Input {
	cfg, wl := s.cfg, s.wl
	in := &metrics.Input{
		Requests:            s.reqs,
		PassLogs:            s.decoding.passLogs(),
		DecodeWorkers:       len(s.decoding.workers),
		DecodeGPUsPerWorker: s.decoding.gpusPerWorker,
	}
	for p := range s.roles() {
		in.Preemptions += p.preemptions()
	}
	if s.prefill != nil {
		in.PrefillWorkers = len(s.prefill.workers)
		in.PrefillGPUsPerWorker = s.prefill.gpusPerWorker
	}
	if g := wl.Graph; g != nil {
		in.Trajectory, in.Trajectories = g.Trajectory, g.Trajectories
	}
	in.SLA = SLA(cfg)
	in.WarmupMs = cfg.Traffic.Load.Warmup() * 1000
	in.StopMs = cfg.Traffic.Stop.MaxVirtualTimeSeconds * 1000
	if cfg.Traffic.Load.HasCooldown() && len(wl.Sessions) > 0 {
		// Sessions start in order (a closed loop's as slots free, an open loop's at increasing
		// times): the last one's first turn is the last session start, unless the run stopped
		// before it (then the load never fell and nothing is cool-down).
		if r := &s.reqs[wl.Sessions[len(wl.Sessions)-1].First]; r.Status != engine.Pending {
			in.Cooldown, in.CooldownFromMs = true, r.ArrivalMs
		}
	}
	if pl != nil {
		pl.Report(in)
	}
	in.UnchunkedPrefill = s.decoding.unchunkedBudget > 0
	if cfg.Engine.Speculation != nil {
		in.Speculation = new(engine.SpeculationStats)
		for p := range s.roles() {
			for e := range p.engines() {
				in.Speculation.Add(e.SpeculationStats())
			}
		}
	}
	return in
}

// Cause is a constant error: the cause (errors.Is) a *config.Error wraps when a caller may
// want to act on it, for example a command that adds how to fix it with its flags.
type Cause string

// Error returns the cause's text.
func (c Cause) Error() string { return string(c) }

// ErrNoSystems is the cause of the *config.Error of a setting that needs a performance
// database (forward_model op_level, router.prefill_load_model aic) when none is configured
// (Options.Systems, or the systems argument of Check and CheckNotes, is nil).
const ErrNoSystems Cause = "no performance database is configured"

// Check reports, without building a workload or simulating, whether Run can build cfg's
// deployment: the model and GPU that default timing, default KV capacity, a "max" context length
// and an auto KV-transfer size need, and a KV pool that holds the model's weights. Its errors are
// the *config.Error Run would return, naming the field. A sweep filters the points it refuses as
// invalid configs instead of simulating them. systems is the performance database Run would be
// given (Options.Systems; nil: none).
func Check(cfg *config.Config, systems *opdb.DB) error {
	_, err := CheckNotes(cfg, systems)
	return err
}

// CheckNotes is Check that also returns Result.TimingNotes the run would have: why a role with
// forward_model auto would be priced by the roofline although a performance database is
// configured, which fixed KV pool its GPU could not hold, and which role runs FP4 weights on a
// GPU without FP4 tensor cores.
func CheckNotes(cfg *config.Config, systems *opdb.DB) ([]string, error) {
	dep := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency(), db: systems}
	err := dep.check()
	return dep.notes, err
}

func (dep *deployment) check() error {
	cfg := dep.cfg
	if err := dep.checkShapes(); err != nil {
		return err
	}
	if cfg.Engine.ContextLength == 0 && cfg.Engine.Backend == config.BackendVLLM {
		if _, err := dep.modelFor(`engine.context_length "max" (or set a number of tokens)`); err != nil {
			return err
		}
	}
	for _, name := range cfg.Engine.Mode.Roles() {
		role := cfg.Engine.Workers.Role(name)
		if role == nil {
			return &config.Error{File: cfg.File, Path: "engine.workers." + string(name), Msg: "is required"}
		}
		if err := dep.checkMoE(name, role); err != nil {
			return err
		}
		if _, err := dep.timing(name, role); err != nil {
			return err
		}
		if _, _, err := dep.rankBlocks(name, role); err != nil {
			return err
		}
		if _, err := dep.prefillLoadMs(name, role); err != nil {
			return err
		}
	}
	if kt := cfg.Engine.KVTransfer; cfg.Engine.Mode == config.ModeDisaggregated && kt != nil && kt.BandwidthGBps != nil && kt.BytesPerToken <= 0 {
		if _, err := dep.transferBytesPerToken(cfg.Engine.Workers.Prefill); err != nil {
			return err
		}
	}
	return nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// SLA is cfg's evaluation.sla as the metrics apply it (per-request bounds in ms, 0 when unset;
// its percentile bounds as metrics.PercentileTerm in config.SLA.PercentileBounds order), or nil
// without an SLA.
func SLA(cfg *config.Config) *metrics.SLA {
	sla := cfg.Evaluation.SLA
	if sla == nil {
		return nil
	}
	out := &metrics.SLA{TTFTMs: deref(sla.TTFTMs), ITLMs: deref(sla.ITLMs), E2EMs: deref(sla.E2EMs)}
	for _, b := range sla.PercentileBounds() {
		out.Percentiles = append(out.Percentiles, metrics.PercentileTerm{Percentile: b.Percentile, Latency: b.Latency, BoundMs: b.Ms})
	}
	return out
}

// Interruptible runs build (a workload build, which reads no context) and returns its result,
// or ctx's error as soon as ctx is done: Ctrl-C while a large trace is read takes effect at
// once. An abandoned build finishes in the background and its result is dropped.
func Interruptible(ctx context.Context, build func() (*traffic.Workload, error)) (*traffic.Workload, error) {
	if ctx.Done() == nil {
		return build()
	}
	type result struct {
		wl  *traffic.Workload
		err error
	}
	done := make(chan result, 1)
	go func() {
		wl, err := build()
		done <- result{wl, err}
	}()
	select {
	case r := <-done:
		return r.wl, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
