package sweep

import (
	"context"
	"errors"
	"fmt"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/traffic"
)

// unprefixed is an error steadyRun returns as it is, which a capacity probe does not prefix with
// its number and load: a workload's, the same at every probe.
type unprefixed struct{ error }

func (u unprefixed) Unwrap() error { return u.error }

// steadyRun simulates point p at load x (its load intensity, config.Load.IntensityField)
// measured in steady state, as a capacity probe and a point without a search are: a closed loop
// too short for a steady window is lengthened (slotLengthening), its first wave spread over a
// pilot-measured request lifetime with a warm-up of two and a cool-down (probeStart), and an
// open loop measured after a warm-up of two lifetimes over a run long enough to leave a steady
// window (rateSteady); attainment is the SLA attainment the run must resolve (minMeasured). It
// returns the config the run reproduces under (p's at x with setup written in, traffic.load's
// ramp_seconds, warmup_seconds and cooldown and the per-load-unit stop), the run, and setup.
// shared runs on the cache's workload of that traffic section (a fixed point's, which other
// deployments at the same load share: the ramp and warm-up do not change the requests) rather
// than one built for the run alone (a probe's, or a lengthened run's, used once). Errors: a pilot's prefixed "pilot: ",
// a workload's wrapped in unprefixed, and the simulation's.
func steadyRun(ctx context.Context, p *grid.Point, x, attainment float64, cache *WorkloadCache, simulate SimulateFunc,
	shared bool) (*config.Config, *sim.Result, grid.ProbeRun, error) {
	var setup grid.ProbeRun
	cfg, _, err := p.AtLoad(x)
	if err != nil {
		return nil, nil, setup, err
	}
	if setup.PerLoadUnit = slotLengthening(cfg, attainment); setup.PerLoadUnit != nil {
		if cfg, _, err = p.AtProbeRun(x, setup); err != nil {
			return nil, nil, setup, err
		}
	}
	build := func(c *config.Config) (*traffic.Workload, error) {
		if shared && setup.PerLoadUnit == nil {
			return cache.Workload(c)
		}
		return cache.Build(c) // a probe's, or a run this deployment lengthened: used once
	}
	// The workload does not depend on the ramp and warm-up probeStart chooses.
	wl, err := build(cfg)
	if err != nil {
		return nil, nil, setup, unprefixed{err}
	}
	setup.RampSeconds, setup.WarmupSeconds, err = probeStart(ctx, cfg, len(wl.Requests), cache, simulate)
	if err != nil {
		return nil, nil, setup, fmt.Errorf("pilot: %w", err)
	}
	// A ramped closed loop, and an open loop of multi-turn sessions, is measured up to its last
	// session start: the closed loop's drain runs at a falling concurrency, the open loop's
	// sessions already started go on without new ones joining them, each for a share of the run
	// set by the run's length. A cooldown the spec gives, true or false, is kept.
	setup.Cooldown = cfg.Traffic.Load.Cooldown == nil && (setup.RampSeconds != nil && *setup.RampSeconds > 0 || sessionOpenLoop(cfg, wl))
	if setup.RampSeconds != nil || setup.WarmupSeconds != nil || setup.Cooldown {
		// The first run too runs as its row's config will say (an open loop's cool-down alone
		// among them: probeStart gives it no ramp or warm-up).
		if cfg, _, err = p.AtProbeRun(x, setup); err != nil {
			return nil, nil, setup, err
		}
	}
	res, err := simulateOnce(ctx, cfg, wl, simulate)
	if err != nil {
		return nil, nil, setup, err
	}
	if ramp, warmup := traceRamp(cfg, res); ramp != nil {
		// A closed loop over a trace, its first run the pilot: run again, desynchronized.
		res.Release()
		setup.RampSeconds, setup.WarmupSeconds = ramp, warmup
		setup.Cooldown = cfg.Traffic.Load.Cooldown == nil
		if cfg, _, err = p.AtProbeRun(x, setup); err != nil {
			return nil, nil, setup, err
		}
		if res, err = simulateOnce(ctx, cfg, wl, simulate); err != nil {
			return nil, nil, setup, err
		}
	}
	if pl := &p.Config.Traffic.Load; pl.Warmup() > 0 || pl.Ramp() > 0 {
		if per := closedSteady(cfg, res.Workload, res.Requests, attainment); per != nil {
			// A closed loop whose warm-up the config sets (warmup_seconds, or an explicit ramp's,
			// probeStart) outlasts the cycles its stop gives each slot: measured on a handful of
			// requests, or none.
			res.Release()
			setup.PerLoadUnit = per
			if cfg, _, err = p.AtProbeRun(x, setup); err != nil {
				return nil, nil, setup, err
			}
			if wl, err = cache.Build(cfg); err != nil { // a lengthened run of this deployment alone: not kept
				return nil, nil, setup, unprefixed{err}
			}
			if res, err = simulateOnce(ctx, cfg, wl, simulate); err != nil {
				return nil, nil, setup, err
			}
		}
	}
	least := minMeasured(attainment)
	if shared {
		least = max(least, fixedRateMeasured) // a point without a capacity search, ranked by its rate
	}
	if w, per := rateSteady(cfg, res.Workload, res.Requests, attainment, least); w != nil {
		// An open loop's first lifetimes fill an empty deployment: measure after them, over
		// a run long enough to leave a steady window.
		res.Release()
		setup.WarmupSeconds = w
		if per != nil {
			setup.PerLoadUnit = per
		}
		if cfg, _, err = p.AtProbeRun(x, setup); err != nil {
			return nil, nil, setup, err
		}
		if per != nil {
			// A lengthened run of this deployment alone: not kept.
			if wl, err = cache.Build(cfg); err != nil {
				return nil, nil, setup, unprefixed{err}
			}
		}
		if res, err = simulateOnce(ctx, cfg, wl, simulate); err != nil {
			return nil, nil, setup, err
		}
	}
	return cfg, res, setup, nil
}

// sessionOpenLoop reports whether cfg's load is an open loop (constant_rate or poisson, without a
// rate profile, which runs as configured) of sessions some of which have later turns in
// workload wl.
func sessionOpenLoop(cfg *config.Config, wl *traffic.Workload) bool {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConstantRate && l.Type != config.LoadPoisson || len(l.Profile) > 0 {
		return false
	}
	return len(wl.Sessions) < len(wl.Requests)
}

// simulateOnce runs cfg on workload wl; a run without a report is an error.
func simulateOnce(ctx context.Context, cfg *config.Config, wl *traffic.Workload, simulate SimulateFunc) (*sim.Result, error) {
	res, err := simulate(ctx, cfg, sim.Options{Workload: wl})
	if err != nil {
		return nil, err
	}
	if res == nil || res.Summary == nil {
		return nil, fmt.Errorf("the simulation returned no report")
	}
	return res, nil
}

// fixedLoad is the load intensity of a point without a capacity search that steadyPoint
// measures in steady state: a concurrency, or a constant_rate or poisson rate without a profile;
// false for the loads that run as configured (trace_timestamps, a rate profile, whose phases
// set the rate over time).
func fixedLoad(l *config.Load) (float64, bool) {
	switch {
	case l.Type == config.LoadConcurrency && l.Concurrency > 0:
		return float64(l.Concurrency), true
	case (l.Type == config.LoadConstantRate || l.Type == config.LoadPoisson) && len(l.Profile) == 0 && l.Unit() > 0:
		return l.Unit(), true
	}
	return 0, false
}

// steadyCycles is the fewest slot cycles per slot (a request, or a session for a session
// source, per unit of concurrency) a closed loop of a fixed count (traffic.stop.requests or
// sessions, which no search lengthens) needs for steadyPoint to measure it in steady state: the
// ramp and warm-up's pilotWarmupLifetimes, the cool-down's one and minMeasuredCycles between
// them, as slotLengthening gives a per-load-unit stop (grid.SteadyCyclesPerSlot, which the
// spec's warning uses, is the same; tested).
const steadyCycles = grid.SteadyCyclesPerSlot

// tooFewCycles reports whether cfg is a closed loop whose fixed count gives fewer than
// steadyCycles per slot (a ramp and warm-up would leave next to nothing measured: such a point
// runs as configured, synchronized start included, and the spec is warned).
func tooFewCycles(cfg *config.Config) bool {
	l, st := &cfg.Traffic.Load, &cfg.Traffic.Stop
	if l.Type != config.LoadConcurrency || l.Concurrency <= 0 {
		return false
	}
	cycles := 0.0
	switch {
	case st.Sessions > 0:
		cycles = float64(st.Sessions)
	case st.Requests > 0:
		cycles = float64(st.Requests)
		if s := cfg.Traffic.Source.Session; s != nil && s.Turns > 0 {
			cycles /= float64(s.Turns)
		}
	default:
		return false
	}
	return cycles < steadyCycles*float64(l.Concurrency)
}

// steadyPoint simulates point p, which runs no capacity search, at its own load measured in
// steady state as a capacity probe is (steadyRun, at grid.DefaultCapacityAttainment): a sweep
// compares deployments, and a closed loop whose first wave starts at once, or an open loop
// measured while it fills an empty deployment, gives tail latencies set by that start and by
// the run's length rather than by the deployment (a user trial, 2026-12-06: p99 TTFT of 2× TP1 at
// concurrency 48 was 1,006, 809 and 272 ms at 10, 40 and 160 requests per load unit, and the
// best point moved from 8 GPUs to 2). The config's own ramp_seconds (0 keeps the synchronized
// start), warmup_seconds and cooldown are kept as probeStart and rateSteady keep them. start is
// what the run wrote into the config (nil when it ran as configured), which the point's row
// writes into its config so that it reproduces the run; backlog, under an open loop, how the
// requests in its system changed over its measured window (sim.RunBacklogAfterFill), which makes an
// overloaded point's row degraded.
func steadyPoint(ctx context.Context, p *grid.Point, cache *WorkloadCache, simulate SimulateFunc) (res *sim.Result, start *results.RunStart,
	backlog *sim.Backlog, err error) {
	x, ok := fixedLoad(&p.Config.Traffic.Load)
	if !ok || tooFewCycles(p.Config) {
		if res, err = simulatePoint(ctx, p, cache, simulate); err != nil {
			return nil, nil, nil, err
		}
		// A rate profile runs as configured, and its open loop is judged for overload all the
		// same: a deployment its phases outpace ends them with a queue that grew (a user trial,
		// 2026-12-07: one H200 offered 60 requests/s after 30 s at 5, serving 15.7, ranked first
		// by its throughput per GPU with a p99 TTFT of 87 s). Not for a drain: a profile that
		// steps its rate down sheds what was in flight (results.Row.Drained).
		if b, _, ok := sim.RunBacklogAfterFill(p.Config, res.Requests, res.Workload); ok {
			return res, nil, &b, nil
		}
		return res, nil, nil, nil
	}
	cfg, res, setup, err := steadyRun(ctx, p, x, grid.PercentileFloorAttainment(p.Config), cache, simulate, true)
	if u := (unprefixed{}); errors.As(err, &u) {
		err = u.error
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if why, exhausted := traceUnramped(cfg, res); why != "" && cfg.Traffic.Load.Concurrency > 1 {
		// A closed loop over a trace that its window or its sessions leave unramped is measured
		// on its first wave's burst, as a capacity probe would be (searchCapacity refuses such
		// a probe's capacity): its point fails, saying what to change.
		res.Release()
		if exhausted {
			why += ", or a lower traffic.load.concurrency"
		}
		return nil, nil, nil, errors.New(why)
	}
	if why := censoredMajority(res.Summary, cfg); why != "" {
		// Its sla_attainment would rest on the few requests the window let finish, as a probe's.
		res.Release()
		return nil, nil, nil, errors.New(why)
	}
	b, from, ok := sim.RunBacklogAfterFill(cfg, res.Requests, res.Workload)
	// A run whose window began too early, drained (below) or inside the planner's scale-down
	// (provisioningChange), is measured again from where that ended: the rerun stands, judged, or
	// lengthened until it can be (an unjudged one's row has no backlog columns, and an answer
	// point so is named: results.UnjudgedText); one that drained again is degraded
	// (results.Row.Drained). rerun is false when a fixed count leaves the first run standing.
	rerun := func(fromMs float64) (bool, error) {
		again, againSetup, err := rerunFrom(ctx, p, x, res, setup, fromMs, cache, simulate)
		if err != nil || again == nil {
			return false, err
		}
		res.Release()
		res, setup = again, againSetup
		res, setup, b, ok, err = judgeable(ctx, p, x, res, setup, cache, simulate)
		return true, err
	}
	drainStands := false // a drained run a fixed count leaves standing (degraded as drained)
	if ok && cfg.Planner.Settings().Enabled && b.Drained(sim.InFlight(res.Summary.RequestThroughputRPS, res.Summary.E2E.Mean)) {
		last := sim.LastStartMs(res.Requests, res.Workload)
		did, err := rerun(sim.DrainEndMs(res.Requests, from, last, b.AtEnd))
		if err != nil {
			return nil, nil, nil, err
		}
		drainStands = !did
	}
	if cfg, _, err = p.AtProbeRun(x, setup); err != nil { // the config of the run that stands
		return nil, nil, nil, err
	}
	if at := provisioningChange(cfg, res); at > 0 && !drainStands {
		if _, err := rerun(at); err != nil {
			return nil, nil, nil, err
		}
	}
	if ok && b.Ambiguous() {
		if res, setup, b, err = resolveBacklog(ctx, p, x, res, setup, b, cache, simulate); err != nil {
			return nil, nil, nil, err
		}
	}
	if setup != (grid.ProbeRun{}) {
		start = &results.RunStart{Load: x, RampSeconds: setup.RampSeconds, WarmupSeconds: setup.WarmupSeconds,
			PerLoadUnit: setup.PerLoadUnit, Cooldown: setup.Cooldown}
	}
	if ok {
		backlog = &b
	}
	return res, start, backlog, nil
}

// judgeable returns run res of point p at load x (under setup) with the Backlog of its window, or,
// when that window cannot be judged (sim.RunBacklogAfterFill: too short or too early), the run
// again with its per-load-unit stop doubled, up to resolveDoublings times, until it can; the last
// run and false when none can (a fixed count is not lengthened).
func judgeable(ctx context.Context, p *grid.Point, x float64, res *sim.Result, setup grid.ProbeRun, cache *WorkloadCache,
	simulate SimulateFunc) (*sim.Result, grid.ProbeRun, sim.Backlog, bool, error) {
	for k := 0; ; k++ {
		cfg, _, err := p.AtProbeRun(x, setup)
		if err != nil {
			return nil, setup, sim.Backlog{}, false, err
		}
		b, _, ok := sim.RunBacklogAfterFill(cfg, res.Requests, res.Workload)
		if ok || k == resolveDoublings {
			return res, setup, b, ok, nil
		}
		again, next, _, err := doubledRun(ctx, p, x, setup, cache, simulate)
		if err != nil || again == nil {
			return res, setup, b, false, err // a fixed count, which no sweep lengthens
		}
		res.Release()
		res, setup = again, next
	}
}

// doubledRun simulates point p at load x again with setup's per-load-unit stop (or the point's
// own) doubled, on a workload built for that run alone (not kept), and returns the run, its setup
// and config; a nil run when the point stops at a fixed count, which no sweep lengthens.
func doubledRun(ctx context.Context, p *grid.Point, x float64, setup grid.ProbeRun, cache *WorkloadCache,
	simulate SimulateFunc) (*sim.Result, grid.ProbeRun, *config.Config, error) {
	per := stopPerLoadUnit(&p.Config.Traffic.Stop)
	if setup.PerLoadUnit != nil {
		per = *setup.PerLoadUnit
	}
	if per <= 0 {
		return nil, setup, nil, nil
	}
	longer := 2 * per
	setup.PerLoadUnit = &longer
	cfg, _, err := p.AtProbeRun(x, setup)
	if err != nil {
		return nil, setup, nil, err
	}
	wl, err := cache.Build(cfg)
	if err != nil {
		return nil, setup, nil, err
	}
	res, err := simulateOnce(ctx, cfg, wl, simulate)
	return res, setup, cfg, err
}

// resolveDoublings is how many times resolveBacklog doubles a point's per-load-unit stop, 8 times
// the run at most: an overload of 3 % passes sim.Backlog.QueueOverloaded over 10,000 arrivals,
// which 8 times a common window of 1,000–2,000 reaches.
const resolveDoublings = 3

// resolveBacklog runs open-loop point p (at load x, run res under setup, whose window b is
// sim.Backlog.Ambiguous) again with its per-load-unit stop doubled, and again, up to
// resolveDoublings times, until its window is no longer ambiguous: an overload of a few percent
// shows over a longer window, and a deployment that keeps up stays level. The warm-up stays.
// Each rerun whose window can be judged replaces the run before it (released); one that cannot,
// or a fixed count (which no sweep lengthens), ends the search with the run before.
func resolveBacklog(ctx context.Context, p *grid.Point, x float64, res *sim.Result, setup grid.ProbeRun, b sim.Backlog,
	cache *WorkloadCache, simulate SimulateFunc) (*sim.Result, grid.ProbeRun, sim.Backlog, error) {
	for range resolveDoublings {
		if !b.Ambiguous() {
			break
		}
		again, next, cfg, err := doubledRun(ctx, p, x, setup, cache, simulate)
		if err != nil {
			return nil, setup, b, err
		}
		if again == nil {
			break // a fixed count
		}
		nb, _, ok := sim.RunBacklogAfterFill(cfg, again.Requests, again.Workload)
		if !ok {
			again.Release()
			break
		}
		res.Release()
		res, setup, b = again, next, nb
	}
	return res, setup, b, nil
}

// provisioningChange is the time (virtual ms) of the last change of the GPUs run res of cfg, an
// autoscaled open loop (planner.policy enabled; constant_rate or poisson), provisioned within its
// window (after the warm-up, before its last session start: sim.LastStartMs, a change after
// which is the load's end), when every change there took GPUs away: the planner's way down from
// the workers the config starts with to the ones its load keeps, held in the window for a share
// set by the run's length, so its GPUs and cost (results' windowProvisioning) would follow that
// length (a user trial, 2026-12-07: four H200 workers, scaled to one at 25, 55 and 85 s, priced
// 2.23 to 0.86 USD per million output tokens from 40 to 2,560 requests per load unit). 0 when
// there is none, or when one added GPUs: a start too small for its load is the drain rule's
// (Backlog.Drained), and changes both ways are the planner's swing about the load's level, which
// the window prices as the deployment's own (a review, 2026-12-07: a rerun from the last swing,
// a scale-up, measured the queue it left draining, drained, and one planner's point at 25
// requests/s of 20 served became the answer).
func provisioningChange(cfg *config.Config, res *sim.Result) float64 {
	l := &cfg.Traffic.Load
	pl := res.Summary.Planner
	if pl == nil || !cfg.Planner.Settings().Enabled || l.Type != config.LoadConstantRate && l.Type != config.LoadPoisson {
		return 0
	}
	from, last := l.Warmup()*1000, sim.LastStartMs(res.Requests, res.Workload)
	at, gpus := 0.0, pl.StartGPUs
	for _, c := range pl.Changes {
		if c.TimeMs >= last {
			break
		}
		if c.TimeMs > from {
			if c.GPUs > gpus {
				return 0
			}
			at = c.TimeMs
		}
		gpus = c.GPUs
	}
	return at
}

// rerunFrom simulates autoscaled point p again at load x with its warm-up moved to fromMs (virtual
// ms), run res having measured a window that began too early: one that drained its system
// (sim.Backlog.Drained: work queued before the window while it had too few workers, served within
// it once the planner added some, so its throughput counted work offered earlier; fromMs is when
// the system first held no more than at the window's end, sim.DrainEndMs), or one that held the
// planner's scale-down from the workers the config starts with (provisioningChange; fromMs is its
// last change). A per-load-unit stop is lengthened as rateSteady lengthens one whose arrivals
// after a warm-up are too few. It returns the new run and setup, which the caller judges again (a
// point still drained is degraded: results.Row.Drained), or a nil run when a fixed count
// (traffic.stop.requests or sessions, which no sweep lengthens) leaves fewer than
// minMeasured(grid.DefaultCapacityAttainment) arrivals after fromMs: the first run stands. res is
// not released.
func rerunFrom(ctx context.Context, p *grid.Point, x float64, res *sim.Result, setup grid.ProbeRun, fromMs float64,
	cache *WorkloadCache, simulate SimulateFunc) (*sim.Result, grid.ProbeRun, error) {
	w := fromMs / 1000
	setup.WarmupSeconds = &w
	cfg, _, err := p.AtProbeRun(x, setup)
	if err != nil {
		return nil, setup, err
	}
	wl := res.Workload
	if _, per := rateSteady(cfg, res.Workload, res.Requests, grid.DefaultCapacityAttainment, fixedRateMeasured); per != nil {
		setup.PerLoadUnit = per
		if cfg, _, err = p.AtProbeRun(x, setup); err != nil {
			return nil, setup, err
		}
		if wl, err = cache.Build(cfg); err != nil { // a lengthened run of this deployment alone: not kept
			return nil, setup, err
		}
	} else if after := arrivalsFrom(res.Requests, fromMs); stopPerLoadUnit(&cfg.Traffic.Stop) <= 0 && after < minMeasured(grid.DefaultCapacityAttainment) {
		return nil, setup, nil
	}
	settled, err := simulateOnce(ctx, cfg, wl, simulate)
	return settled, setup, err
}

// arrivalsFrom counts the requests of reqs that arrived at or after fromMs (virtual ms).
func arrivalsFrom(reqs []engine.Request, fromMs float64) int {
	n := 0
	for i := range reqs {
		if reqs[i].ArrivalMs >= fromMs {
			n++
		}
	}
	return n
}
