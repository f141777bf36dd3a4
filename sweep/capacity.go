package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/traffic"
)

// Bracketing growth bounds of the capacity search: each bracketing probe multiplies the load by
// at least minGrowth and at most maxGrowth; aimPast aims a guided step that much past the
// estimated capacity, so that the step that ends bracketing usually lands just above it.
const (
	minGrowth = 2.0
	maxGrowth = 8.0
	aimPast   = 1.25
)

// probeResult is one simulation of a search.
type probeResult struct {
	load   float64
	rec    results.Record // Status ok with Summary
	probe  results.Probe
	config *config.Config
	// unmeasured says why the probe's run measured no steady state (traceUnramped, or more
	// requests censored at its time stop than judged): it counts as a miss, and a capacity whose
	// bracket it closes is refused, unless exhausted: the trace's sessions are too few to hold the
	// load at all (traceUnramped), which bounds the capacity as the search's max does.
	unmeasured string
	exhausted  bool
}

// searchCapacity finds the capacity of point p under cs: the largest load at which SLA
// attainment ((goodput_completed_requests − the truncated good ones) / (offered_requests − the
// censored ones): measureProbe) reaches cs.Attainment and every
// percentile bound of evaluation.sla holds (a probe meets the SLA only when both do).
//
// The search assumes attainment falls as load rises. It probes cs.Min first (a miss there makes
// the point infeasible), then brackets the capacity by growing the load 2× to 8× per probe (the
// growth is guided by the SLA headroom, metrics.SLAHeadroom (percentile bounds included), of the probes so far: a log-log
// extrapolation of headroom to 1, aimed 25 % past it), up to cs.Max (the SLA holding there makes
// the capacity bounded). Inside the bracket [lo, hi] (lo meets, hi misses) it probes the load
// where the log-log interpolation of headroom between lo and hi reaches 1, kept at least
// tolerance × lo / 2 inside the bracket, and bisects instead when the last two probes did not
// halve the bracket. When the bracket closes (hi − lo <= relative_tolerance × lo, or hi − lo <= 1
// for a concurrency) or the SLA holds at cs.Max, it probes each gap between loads that met wider
// than 1.5× whose upper end is above half the capacity (gapLoad); a miss there becomes hi, and lo is always
// the largest load that met below the least load that missed (bracket), so the capacity is the
// edge of the SLA as load rises from the minimum, not a load that meets above a band that
// misses. It stops when no gap is left, when no representable load lies inside the bracket, or
// at cs.MaxProbes. Every probe runs one after another on the point's own
// deterministic simulation, so the search is deterministic.
//
// The returned record is the simulation at the capacity load (at min when infeasible) with
// Capacity set, and the config it ran. An error is the first probe that could not run (an
// invalid config at that load, a failed simulation, or ctx done), or a capacity an unmeasured
// probe would set; the record then holds, in a Stopped Capacity, the probes that ran before it
// (none: a nil Capacity), so that probes.parquet keeps what explains the failure.
func searchCapacity(ctx context.Context, p *grid.Point, cs *grid.CapacitySearch, cache *WorkloadCache,
	simulate SimulateFunc) (results.Record, error) {
	unit := p.Config.Traffic.Load.IntensityField()
	whole := unit == "concurrency"
	sla := sim.SLA(p.Config) // non-nil: the spec's expansion requires an SLA with capacity search
	if sla == nil {
		return results.Record{}, fmt.Errorf("capacity search needs evaluation.sla")
	}
	pb := &prober{p: p, cs: cs, cache: cache, simulate: simulate, sla: sla, unit: unit}

	unclosed := false
	x := cs.Min
	var widths []float64
	streak := 0
	for {
		if err := ctx.Err(); err != nil {
			return pb.ran(), err // canceled or timed out between probes
		}
		pr, err := pb.run(ctx, x)
		if err != nil {
			return pb.ran(), err
		}
		lo, hi := bracket(pb.probes)
		if lo < 0 {
			break // missed at min: infeasible
		}
		xl := pb.probes[lo].load
		if hi < 0 && xl < cs.Max {
			if len(pb.probes) >= cs.MaxProbes {
				unclosed = true
				break
			}
			x = grow(pb.probes, lo, cs.Max, whole)
			continue
		}
		if hi < 0 || closed(xl, pb.probes[hi].load, cs.RelativeTolerance, whole) {
			// Bounded or closed: the SLA must also hold across the loads below the capacity
			// that the growth steps jumped over (gapLoad); a miss there is the new upper end.
			g := gapLoad(pb.probes, lo, whole)
			if g == 0 {
				break
			}
			if len(pb.probes) >= cs.MaxProbes {
				break // the gaps are checked within max_probes only
			}
			x = g
			continue
		}
		if len(pb.probes) >= cs.MaxProbes {
			unclosed = true
			break
		}
		xh := pb.probes[hi].load
		widths = append(widths, xh-xl)
		stalled := len(widths) >= 4 && widths[len(widths)-1] > widths[len(widths)-4]/2
		// streak counts the last probes inside the bracket that fell on the same side: +n met,
		// −n missed, 0 before the first.
		switch {
		case len(widths) == 1:
		case pr.probe.Meets:
			streak = max(streak, 0) + 1
		default:
			streak = min(streak, 0) - 1
		}
		x = split(pb.probes[lo].probe, pb.probes[hi].probe, cs.RelativeTolerance, whole, stalled, streak)
		if !(x > xl && x < xh) {
			break // no load lies between the two any more (a tolerance below float64's resolution)
		}
	}

	lo, hi := bracket(pb.probes)
	traceBound := ""
	if hi >= 0 && pb.probes[hi].unmeasured != "" {
		if !pb.probes[hi].exhausted || lo < 0 {
			// The least load that missed is one the run could not measure: the capacity would
			// be the window's, not the deployment's (a user trial, 2026-12-07: requests of
			// about 40 s over a 100 s window, ramped up to concurrency 46 and started at once
			// above it, where the first wave failed: capacity 46 where a 1,000 s window found 104).
			return pb.ran(), fmt.Errorf("capacity search probe %d at %s %g: %s", hi, unit, pb.probes[hi].load,
				pb.probes[hi].unmeasured)
		}
		// The trace's sessions cannot hold that load at all, however long the run: the SLA held
		// at the largest load below it the search measured, which bounds the capacity as the
		// search's max would (a user trial, 2026-12-07: a 90-session trace failed every point
		// of its sweep at concurrency 31, leaving no answer). A search max_probes stopped keeps
		// its own account instead (the capacity between lo and hi).
		if !unclosed {
			traceBound = fmt.Sprintf("at %s %g the run %s", unit, pb.probes[hi].load, pb.probes[hi].unmeasured)
		}
	}
	best := 0
	if lo >= 0 {
		best = lo
	}
	c := &results.Capacity{Feasible: lo >= 0, Load: pb.probes[best].load, Unit: unit, Target: cs.Attainment,
		Attainment: pb.probes[best].probe.Attainment, Unclosed: unclosed}
	c.Bounded = lo >= 0 && (hi < 0 && pb.probes[lo].load >= cs.Max || traceBound != "")
	c.TraceBound = traceBound
	if unclosed && hi >= 0 {
		c.Upper = pb.probes[hi].load
	}
	for _, pr := range pb.probes {
		c.Probes = append(c.Probes, pr.probe)
	}
	rec := pb.probes[best].rec
	rec.Capacity = c
	return rec, nil
}

// ran is the record of a search that stopped with an error: a Stopped Capacity of the probes
// that ran (and their unit), or no Capacity when none ran.
func (pb *prober) ran() results.Record {
	if len(pb.probes) == 0 {
		return results.Record{}
	}
	c := &results.Capacity{Unit: pb.unit, Stopped: true}
	for _, pr := range pb.probes {
		c.Probes = append(c.Probes, pr.probe)
	}
	return results.Record{Capacity: c}
}

// bracket returns the indexes into probes of the least load that missed the SLA (hi, -1 when
// none did) and of the largest load below it that met (lo, -1 when none did): the capacity
// is below the first miss, so a load that meets above a miss (SLA tail bounds are not monotone
// in the load: a deployment's p99 ITL can miss at 100 sessions and meet at 200) is not a
// capacity the deployment holds as its load falls.
func bracket(probes []probeResult) (lo, hi int) {
	lo, hi = -1, -1
	for i := range probes {
		if !probes[i].probe.Meets && (hi < 0 || probes[i].load < probes[hi].load) {
			hi = i
		}
	}
	for i := range probes {
		if probes[i].probe.Meets && (hi < 0 || probes[i].load < probes[hi].load) && (lo < 0 || probes[i].load > probes[lo].load) {
			lo = i
		}
	}
	return lo, hi
}

// Unprobed gaps below a capacity: the search checks every gap between consecutive loads that
// met, wider than maxGapRatio, whose upper end lies above capacity / gapSpan (gapLoad). Down to
// capacity / 4 the built-in sweep took 2.3× as long as down to capacity / 2.
const (
	maxGapRatio = 1.5
	gapSpan     = 2.0
)

// gapLoad returns the load to probe in the highest gap below the capacity (probes[lo]'s load,
// C) that the bracketing growth jumped over unprobed: of the loads that met
// at or below C, two consecutive ones a < b with b / a > maxGapRatio and b > C / gapSpan, the
// highest such pair, probed at their geometric mean √(ab) (rounded for a concurrency; a gap
// with no whole load inside is skipped). 0 when there is none. A growth step of up to 8×
// can jump over a band of loads where a tail bound misses (one aggregated 8B deployment's p99
// ITL: 32, 51, 67, 68 and 48 ms at 60, 80, 100, 140 and 200 sessions); probing each gap wider
// than 2× down to C / 2 finds such a band just below the capacity unless it is narrower than a
// doubling.
func gapLoad(probes []probeResult, lo int, whole bool) float64 {
	c := probes[lo].load
	var met []float64
	for i := range probes {
		if probes[i].probe.Meets && probes[i].load <= c {
			met = append(met, probes[i].load)
		}
	}
	slices.Sort(met)
	for i := len(met) - 1; i > 0; i-- {
		a, b := met[i-1], met[i]
		if b <= c/gapSpan {
			break
		}
		if b/a <= maxGapRatio {
			continue
		}
		x := math.Sqrt(a * b)
		if whole {
			x = math.Round(x)
		}
		if x > a && x < b {
			return x
		}
	}
	return 0
}

// prober runs the probes of one point's capacity search (searchCapacity), in order, and keeps
// them.
type prober struct {
	p        *grid.Point
	cs       *grid.CapacitySearch
	cache    *WorkloadCache
	simulate SimulateFunc
	sla      *metrics.SLA
	unit     string // the load intensity's field, e.g. concurrency
	probes   []probeResult
}

// run simulates the point at load x (its ramp and warm-up chosen by a pilot run, its window
// lengthened for a rate's steady state, and rerun longer to settle a run that meets or one at
// the SLA's edge: settleSteps, edgeDoublings) and appends the probe: whether it met the SLA
// attainment, its headroom and summary. Errors name the probe and the load.
func (pb *prober) run(ctx context.Context, x float64) (*probeResult, error) {
	p, cs, cache, simulate, sla, unit := pb.p, pb.cs, pb.cache, pb.simulate, pb.sla, pb.unit
	start := time.Now()
	fail := func(err error) error {
		return fmt.Errorf("capacity search probe %d at %s %g: %w", len(pb.probes), unit, x, err)
	}
	if why := fixedCountBelowLoad(p.Config, x); why != "" {
		return nil, fail(errors.New(why))
	}
	cfg, res, setup, err := steadyRun(ctx, p, x, cs.Attainment, cache, simulate, false)
	if u := (unprefixed{}); errors.As(err, &u) {
		return nil, u.error
	}
	if err != nil {
		return nil, fail(err)
	}
	unmeasured, exhausted := "", false
	if x > cs.Min {
		unmeasured, exhausted = traceUnramped(cfg, res)
	} else if why, ex := traceUnramped(cfg, res); ex && cfg.Traffic.Load.Concurrency > 1 {
		// A trace that cannot hold the search's minimum measures nothing there: the point fails
		// naming the trace, rather than read its first wave's burst as the minimum's SLA (as a
		// fixed point does, steadyPoint; one session in flight has no burst).
		res.Release()
		return nil, fail(errors.New(why + ", or a lower optimization.capacity_search.min"))
	}
	m := measureProbe(res, cfg, sla, cs.Attainment)
	if why := censoredMajority(res.Summary, cfg); unmeasured == "" && why != "" {
		// At the search's minimum the point fails rather than read infeasible (a user trial,
		// 2026-12-07: every request of a 35 s window censored read "SLA attainment 0 < 0.99 at
		// the minimum load").
		if x <= cs.Min {
			res.Release()
			return nil, fail(errors.New(why))
		}
		unmeasured = why
	}
	if unmeasured != "" {
		// Started at once, its first wave would decide the probe: it counts as a miss whose
		// cause is unknown, and a capacity it would set is refused (searchCapacity).
		m.meets, m.h, m.binding = false, -1, ""
	} else if cfg, res, m, err = pb.settle(ctx, x, &setup, cfg, res, m); err != nil {
		return nil, fail(err)
	}
	if at := provisioningChange(cfg, res); at > 0 && stopPerLoadUnit(&cfg.Traffic.Stop) > 0 {
		// An autoscaled probe whose planner took GPUs away within its window is measured from
		// its last change, as a fixed point is (steadyPoint): before it the workers the config
		// starts with served the load, which the deployment does not keep, and the search would
		// credit them with a capacity the run's length sets. A fixed count stands.
		if cfg, res, m, err = pb.lengthen(ctx, x, &setup, res, stopPerLoadUnit(&cfg.Traffic.Stop), at); err != nil {
			return nil, fail(err)
		}
	}
	if lt := cfg.Traffic.Load.Type; res.Summary.NumRequests == 0 && (lt == config.LoadConstantRate || lt == config.LoadPoisson ||
		lt == config.LoadConcurrency && x > pb.cs.Min) {
		// Nothing measured is neither a miss nor a pass: an open loop, which rateSteady and
		// lengthen stretch past its warm-up, and a closed loop above the search's minimum
		// (closedSteady lengthens a per-load-unit stop past the warm-up; a fixed count, which no
		// sweep lengthens, can end within it), fail their point, named, rather than let the run's
		// length set its capacity. At the minimum a closed loop's row is infeasible, its
		// capacity unknown (results.Unmeasured).
		res.Release()
		fix := "lengthen traffic.stop, or shorten traffic.load.warmup_seconds"
		if _, n, what := grid.FixedCountLimit(cfg); n > 0 {
			// A shorter warm-up would measure the run's first burst: the count is what to change.
			fix = fmt.Sprintf("traffic.stop.%s is a fixed %d: use traffic.stop.%s_per_load_unit, whose runs are lengthened past "+
				"the warm-up", what, n, what)
		}
		return nil, fail(fmt.Errorf("measured no request: every arrival came before its warm-up of %.4g s ended (%s)",
			cfg.Traffic.Load.Warmup(), fix))
	}
	s, att, meets, termsMet, h := res.Summary, m.att, m.meets, m.termsMet, m.h
	all := results.SummaryValues(s)
	keys := append(results.ProbeSummaryKeys(), results.TruncatedGoodputKeys()...)
	keep := make(map[string]float64, len(keys))
	for _, k := range keys {
		if v, ok := all[k]; ok {
			keep[k] = v
		}
	}
	res.Release() // the probe keeps the summary values only
	pr := probeResult{load: x, config: cfg, unmeasured: unmeasured, exhausted: exhausted, rec: results.Record{PointID: p.ID, Status: results.StatusOK, Summary: all, TimingProvider: res.TimingProvider},
		probe: results.Probe{Load: x, Attainment: att, Meets: meets, Headroom: h, TermsMet: termsMet, Binding: m.binding, Unmeasured: unmeasured, Summary: keep,
			RampSeconds: cfg.Traffic.Load.RampSeconds, WarmupSeconds: cfg.Traffic.Load.WarmupSeconds, Cooldown: cfg.Traffic.Load.HasCooldown(),
			PerLoadUnit: setup.PerLoadUnit, WallTimeMs: float64(time.Since(start).Microseconds()) / 1000}}
	pb.probes = append(pb.probes, pr)
	return &pb.probes[len(pb.probes)-1], nil
}

// settle reruns the probe at load x (its first run res of config cfg, measured m; setup its
// run's settings, updated here) while it is to be settled or sits at the SLA's edge, and returns
// the last run's config, run and measure. Errors are the reruns' simulations'.
func (pb *prober) settle(ctx context.Context, x float64, setup *grid.ProbeRun, cfg *config.Config, res *sim.Result,
	m probeMeasure) (*config.Config, *sim.Result, probeMeasure, error) {
	// A probe that meets the SLA, when the search chose its ramp (the point's config gives none;
	// a warm-up it gives is where the first run is measured from, and the reruns measure later
	// still), is rerun twice as long, measured after the steady window of the run before
	// (settleSteps times at most, while its headroom still rises by more than settleRise), and
	// under prefix-affine routing first rerun long enough to be measured from
	// affineHorizonSeconds of simulated time on; a probe whose headroom is within edgeBand of the
	// bound is rerun with its run doubled (edgeDoublings times), its noise being a tail
	// percentile over gaps that stalls correlate. The last run decides, so a probe that meets
	// only after an edge rerun is settled too.
	l := &pb.p.Config.Traffic.Load
	settles := l.RampSeconds == nil && (l.WarmupSeconds != nil || setup.WarmupSeconds != nil)
	affine := settles && pb.p.Config.Router.Policy == config.PolicyKVRouter && !grid.SingleWorker(pb.p.Config)
	settled, edged, rose := 0, 0, true
	for per := stopPerLoadUnit(&cfg.Traffic.Stop); per > 0; per = stopPerLoadUnit(&cfg.Traffic.Stop) {
		w0, win := cfg.Traffic.Load.Warmup(), res.Summary.SteadyWindowMs/1000
		young := affine && m.meets && w0 < affineHorizonSeconds
		settle := settles && m.meets && (young || settled < settleSteps && rose)
		edge := !settle && edged < edgeDoublings && m.h > 0 && math.Abs(m.h-1) < edgeBand
		if !settle && !edge {
			break
		}
		before, from, longer := m.h, 0.0, 2*per
		if settle {
			from = w0 + win
		}
		if young {
			// The run grows with its sessions per slot: keep a window as long as this run's
			// after the horizon (a run that measured nothing, w0 + win = 0, is doubled).
			from = max(from, affineHorizonSeconds)
			if w0+win > 0 {
				longer = max(longer, math.Ceil(per*(from+win)/(w0+win)))
			}
		}
		var err error
		if cfg, res, m, err = pb.lengthen(ctx, x, setup, res, longer, from*1000); err != nil {
			return nil, nil, probeMeasure{}, err
		}
		if settle {
			settled++
			rose = m.h > before*(1+settleRise)
		} else {
			edged++
		}
	}
	return cfg, res, m, nil
}

// lengthen reruns the probe at load x (its run res, released here) with its per-load-unit stop
// set to longer and, when fromMs > 0, its warm-up moved to fromMs ms, and returns the new
// config, run and measure. An open loop whose starts (rateSteady, the warm-up kept) would end
// too soon after that warm-up is run again with its stop lengthened as rateSteady says, up to
// openLoopRelengthens times: a moved warm-up scales the span of the arrivals, not the load's
// rate (a user trial, 2026-12-07: four-turn sessions under kv_router, their warm-up moved to
// affineHorizonSeconds, measured no request past it, and each such probe counted as a miss).
func (pb *prober) lengthen(ctx context.Context, x float64, setup *grid.ProbeRun, res *sim.Result,
	longer, fromMs float64) (*config.Config, *sim.Result, probeMeasure, error) {
	setup.PerLoadUnit = &longer
	if fromMs > 0 {
		w := fromMs / 1000
		setup.WarmupSeconds = &w
	}
	for k := 0; ; k++ {
		next, _, err := pb.p.AtProbeRun(x, *setup)
		if err != nil {
			return nil, nil, probeMeasure{}, err
		}
		wl, err := pb.cache.Build(next)
		if err != nil {
			return nil, nil, probeMeasure{}, err
		}
		res.Release()
		if res, err = pb.simulate(ctx, next, sim.Options{Workload: wl}); err != nil {
			return nil, nil, probeMeasure{}, err
		}
		if res == nil || res.Summary == nil {
			return nil, nil, probeMeasure{}, fmt.Errorf("the simulation returned no report")
		}
		if k < openLoopRelengthens {
			if _, per := rateSteady(next, res.Workload, res.Requests, pb.cs.Attainment, minMeasured(pb.cs.Attainment)); per != nil && *per > *setup.PerLoadUnit {
				setup.PerLoadUnit = per
				continue
			}
		}
		return next, res, measureProbe(res, next, pb.sla, pb.cs.Attainment), nil
	}
}

// openLoopRelengthens is how many times lengthen runs an open-loop probe again when its arrivals
// still end too soon after its warm-up: rateSteady scales the stop by the span it lacks, which
// is proportional to the stop for a constant start rate, so one suffices; the second covers a
// run whose span was set by its few first starts.
const openLoopRelengthens = 2

// Settling probes: a probe that meets the SLA, whose ramp the search chose (probeStart,
// rateSteady: the config sets no ramp_seconds; a warmup_seconds it sets is where the first run is
// measured from), is rerun with its run
// doubled and its warm-up moved to where the previous run's steady window ended, up to
// settleSteps times while its headroom h rises by more than settleRise: a meeting probe,
// whatever its headroom, decides the capacity, and some deployments leave the ramp's even
// spread only slowly. Measured 2026-12-04 on the built-in workload, H200 FP8, 2 replicas of TP4
// under kv_router at 139 sessions (a session's turns return to the replica holding its KV, and
// they bunch in time), p99 ITL was 41.6 ms over 6 sessions per
// slot and 53.1, 57.8, 57.8 and 59.0 ms over 12, 24, 48 and 96; mean TTFT over the halves of a
// 24-per-slot window rose from 80 to 92 ms. The capacity found was 302 sessions at 6 per slot
// and 112 at 16: the short probes measured the spread start, not the deployment (one probe at 114
// sessions met with h = 0.48 over 6 per slot, where 118 missed with h = 1.16 over 12). With
// these reruns the capacity is 106 and 107 sessions at 4 and 16 per slot, and the built-in sweep
// takes 1.4 times as long (110 s against 77 s on 2 cores).
const (
	settleRise  = 0.05
	settleSteps = 2
)

// affineHorizonSeconds is how far into the run, in simulated seconds, a meeting probe of a
// deployment under prefix-affine routing (router.policy kv_router, some role with more than one
// replica or attention-DP rank: !grid.SingleWorker) is measured from at least, when the search
// chose its ramp: its first settling rerun moves the warm-up there (or past the run before's
// window, if later), with its per-load-unit stop at least doubled and lengthened so that the
// window past the warm-up is at least as long as the run before's, and counts as one of the
// settleSteps. Under kv_router a session's turns return to the replica holding its KV, and
// its tail latencies move for minutes of simulated time after the ramp's even start. Measured
// 2026-12-06, with each GPU's GEMM share but not yet its decode-attention share, on the
// built-in workload, H200 BF16, 2 replicas of TP4 under kv_router at 100
// sessions (docs/sweep.md, "Why those capacities moved"): p99 ITL 34.7 ms over a 22 s run, then
// 48.1, 55.8, 59.4 and 60.7 ms over 42, 82, 162 and 324 s, where round_robin held 34-38 ms; its
// capacity was 217 sessions at 4 sessions per slot and 85 at 16. Measured from 120 s the
// kv_router capacities of the built-in sweep's 108 deployments with more than one worker are
// within 2.4 % of the 16-per-slot ones on average (5.8 % without; 1 more than 20 % apart against
// 3), that one (H100 FP8 2× TP4) 115 sessions against 340, the long probes finding misses at 118
// to 145 sessions that 16 per slot measured as meeting from 45 s on. The built-in sweep then
// took 4.0 minutes on 2 cores against 2.1 (2026-12-06, before a faster shared-block search). Stopping at the horizon's run (no doubling after it)
// took 2.9 minutes but left one window of 10-25 s past the horizon deciding: FP8 2× TP2 met at
// 84 sessions with headroom 0.86 there, where a settled window of 133 s measured 1.00 at 86.
const affineHorizonSeconds = 120

// Edge probes: a probe whose SLA headroom h has |h − 1| < edgeBand is rerun with its run
// doubled, at most edgeDoublings times. Measured 2026-12-03 on Llama-3.1-8B, one H100 FP8 TP1
// worker, the built-in workload: p99 ITL 54.2 ms at 50 sessions over 3 measured cycles, 48.2 ms
// at 60 over 13, against 46.5 and 53.4 ms over about 100 cycles; stalls hit every request of a
// batch at once, so the gaps' tail rests on few independent events and a short run's p99 is
// ±10 % off; one doubling kept the built-in sweep's front within 5 % of the one at 16 sessions per
// slot with two (two took 1.9× as long).
const (
	edgeBand      = 0.1
	edgeDoublings = 1
)

// probeMeasure is what a capacity probe reads from its run: the SLA attainment, whether the
// SLA is met (attainment target and every percentile bound), whether the percentile bounds
// held (nil without one) and the headroom (metrics.SLAHeadroom over the measured requests but
// the censored ones; -1 when infinite, 0 when none was measured). With censored requests the
// headroom is approximate: scaled bounds would censor others, and it guides the search's next
// load only, not whether a probe meets.
type probeMeasure struct {
	att      float64
	meets    bool
	termsMet *bool
	h        float64
	// binding is the SLA term closest to breaking (metrics.SLABinding).
	binding string
}

// measureProbe measures res, the run of config cfg, against sla at attainment target attainment.
func measureProbe(res *sim.Result, cfg *config.Config, sla *metrics.SLA, attainment float64) probeMeasure {
	s := res.Summary
	// The requests a time stop left unfinished within every bound are neither good nor missed
	// (metrics.Censored): counting them as misses rated a deployment by its window.
	offered := int(s.NumRequests - s.CensoredRequests)
	// A request cut short of its output did not meet the SLA, whatever its latencies (a user
	// trial, 2026-12-07: a decode pool of 2,112 tokens cut 28 of 211 requests short, and the
	// search chose its load at attainment 1).
	good := int(s.GoodputCompletedRequests - s.GoodputTruncatedRequests)
	var m probeMeasure
	if offered > 0 {
		m.att = float64(good) / float64(offered)
	}
	m.meets = offered > 0 && good >= metrics.AttainmentCount(attainment, offered) && metrics.AllMet(s.SLATerms)
	if len(s.SLATerms) > 0 {
		met := metrics.AllMet(s.SLATerms)
		m.termsMet = &met
	}
	keep := steady(cfg.Traffic.Load.Warmup()*1000, s)
	if s.CensoredRequests > 0 {
		inWindow := keep
		keep = func(r *engine.Request) bool {
			return (inWindow == nil || inWindow(r)) && !metrics.Censored(r, sla, s.StopMs)
		}
	}
	m.h = metrics.SLAHeadroom(res.Requests, keep, s.SLATerms, sla, attainment)
	m.binding = metrics.SLABinding(res.Requests, keep, s.SLATerms, sla, attainment)
	if math.IsInf(m.h, 1) {
		m.h = -1
	}
	return m
}

// pilotWarmupLifetimes is the warm-up of a piloted probe in pilot lifetimes L: the ramp (one L)
// and the wave after it. A burst's mean lifetime exceeds the steady one (the burst queues every
// prefill at once), so the first wave's early finishers are replaced while the ramp still
// starts sessions, and arrivals run at up to twice the steady rate until about 1.3 L: with a
// warm-up of L those requests' TTFTs (up to 2 s against a 1 s SLA for Llama-3.1-70B, 2048/256
// tokens, on P 2× TP2 + D 1× TP2 at concurrency 57) are measured, and cut a run of 8 requests
// per load unit to 96.8 % attainment where 64 per load unit reach 99.6 %.
const pilotWarmupLifetimes = 2

// probeStart returns the traffic.load.ramp_seconds and warmup_seconds a probe of cfg (the
// point's config at the probe's load) runs under, to be written into its config; nil for a
// field the probe leaves as cfg has it. Under a concurrency load every first-wave request starts at once, and requests of equal
// length then complete, and are replaced, together for the whole run: each wave meets or misses
// the SLA as one, and the answer moves with the run's length. So, unless the config gives
// ramp_seconds:
//
//   - a pilot runs the first wave alone (sim.FirstWave: `concurrency` requests or sessions, all
//     at once), and the probe spreads its first wave over the pilot's mean request lifetime L
//     (ramp_seconds = L), as sim/calibrate's Validate does for measured rows, and leaves the
//     first pilotWarmupLifetimes × L seconds out of the statistics (warmup_seconds, unless the
//     config gives it); with no request completed in the pilot the ramp and warm-up are 0;
//   - an explicit ramp_seconds 0 keeps the synchronized start (nothing changes);
//   - an explicit ramp_seconds R > 0 is kept, with warmup_seconds = R unless given.
//
// Rate loads (constant_rate, poisson, trace_timestamps) arrive one by one by construction and
// keep their config; so do runs of fewer than grid.MinSteadyRequestsPerSlot requests per slot (requests is
// the run's request count): a warm-up of two lifetimes would leave them nothing to measure. A
// trace source under a concurrency load, whose stop cannot limit a pilot to one wave, is left
// to traceRamp, which takes its first run as the pilot. The error is the pilot's simulation's.
func probeStart(ctx context.Context, cfg *config.Config, requests int, cache *WorkloadCache, simulate SimulateFunc) (ramp, warmup *float64, err error) {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConcurrency {
		return nil, nil, nil
	}
	// withWarmup returns ramp r and warm-up w, or no warm-up when the config gives one.
	withWarmup := func(r, w float64) (*float64, *float64) {
		if l.WarmupSeconds != nil {
			return &r, nil
		}
		return &r, &w
	}
	switch {
	case l.RampSeconds != nil && *l.RampSeconds == 0:
		return nil, nil, nil
	case l.RampSeconds != nil:
		ramp, warmup = withWarmup(*l.RampSeconds, *l.RampSeconds)
		return ramp, warmup, nil
	case cfg.Traffic.Source.Type == config.SourceTrace, requests < grid.MinSteadyRequestsPerSlot*l.Concurrency:
		return nil, nil, nil
	}
	pilot := sim.FirstWave(cfg)
	wl, err := cache.Build(pilot)
	if err != nil {
		return nil, nil, err
	}
	res, err := simulate(ctx, pilot, sim.Options{Workload: wl})
	if err != nil {
		return nil, nil, err
	}
	if res == nil {
		return nil, nil, fmt.Errorf("the simulation returned no report")
	}
	lifeMs, _ := sim.MeanSlotCycleMs(wl, res.Requests)
	res.Release()
	ramp, warmup = withWarmup(lifeMs/1000, pilotWarmupLifetimes*lifeMs/1000)
	return ramp, warmup, nil
}

// censoredMajority returns why run summary s of cfg measured no steady state when its time stop
// censored more requests than it judged (metrics.Censored): the outcome of most of the load is
// unknown, and its attainment would rest on the few the window let finish; "" otherwise. A
// capacity probe above the search's minimum is then unmeasured, and a probe at it or a point
// without a search fails, naming the window to lengthen.
func censoredMajority(s *metrics.Summary, cfg *config.Config) string {
	if s.CensoredRequests == 0 || s.CensoredRequests <= s.NumRequests-s.CensoredRequests {
		return ""
	}
	return fmt.Sprintf("measured no steady state: %d of its %d offered requests were still in flight within every "+
		"SLA bound when the %g s window ended (censored), more than were judged: lengthen "+
		"traffic.stop.max_virtual_time_seconds", s.CensoredRequests, s.NumRequests, cfg.Traffic.Stop.MaxVirtualTimeSeconds)
}

// closedTraceLoop reports whether cfg is a closed loop over a trace (a concurrency load on a
// trace source) whose config gives no ramp_seconds: the runs traceRamp ramps from their first.
func closedTraceLoop(cfg *config.Config) bool {
	l := &cfg.Traffic.Load
	return l.Type == config.LoadConcurrency && cfg.Traffic.Source.Type == config.SourceTrace && l.RampSeconds == nil
}

// traceRamp returns the ramp_seconds and warmup_seconds a closed loop over a trace (cfg: a
// concurrency load on a trace source, whose config gives no ramp_seconds) is run again under,
// its first run res (every first-wave request at once) serving as probeStart's pilot: the first
// wave spread over the mean slot cycle L of that run (sim.MeanSlotCycleMs) and the first
// pilotWarmupLifetimes × L left out, or half the span S of res's session starts (sim.LastStartMs;
// the rerun is measured up to its last one, its cool-down) when that is shorter, so that a
// short window keeps half of it measured; the config's warmup_seconds, when it gives one, is kept
// (warmup nil). Started at once, a trace's first wave queues every prompt together, and the
// requests measured with it decide the attainment for a share set by the run's length (measured
// 2026-12-07, Llama-3.1-8B on one H100 with roofline timing, a closed loop over a trace of
// 500-1,500 prompt and 50-150 output tokens, TTFT 300 ms and ITL 20 ms at 99 %, the requests in
// flight at the stop censored: capacity 9, 11 and 27 at windows of 10, 30 and 100 s; ramped,
// 48, 45 and 46). Both nil, the first run standing, for any other load or source, an explicit
// ramp_seconds (0 keeps the synchronized start), no session completed in res, or S shorter than
// traceSpan (twice L, or twice the config's warm-up): traceUnramped says why, and a capacity
// probe above the search's minimum is then not measured (searchCapacity).
func traceRamp(cfg *config.Config, res *sim.Result) (ramp, warmup *float64) {
	l := &cfg.Traffic.Load
	if !closedTraceLoop(cfg) {
		return nil, nil
	}
	lifeMs, n := traceCycleMs(cfg, res)
	if n == 0 || lifeMs <= 0 {
		return nil, nil
	}
	starts := sim.LastStartMs(res.Requests, res.Workload) / 1000
	if starts < traceSpan(l, lifeMs) {
		return nil, nil
	}
	r := lifeMs / 1000
	if l.WarmupSeconds != nil {
		return &r, nil
	}
	w := min(pilotWarmupLifetimes*r, starts/2)
	return &r, &w
}

// traceCycleMs is the mean slot cycle, in ms, of the run res of cfg, a closed loop over a trace,
// and the sessions it completed: sim.MeanSlotCycleMs over those, or, when a time stop cut the
// run, Little's law over its slots if longer: concurrency × the stop / the sessions that started
// after the first wave. The completed sessions alone are the shorter ones when long sessions are
// still running at the stop (a reviewer, 2026-12-07), which would make the ramp and warm-up too
// short and pass a window too short to measure.
func traceCycleMs(cfg *config.Config, res *sim.Result) (float64, int) {
	lifeMs, n := sim.MeanSlotCycleMs(res.Workload, res.Requests)
	stopMs := cfg.Traffic.Stop.MaxVirtualTimeSeconds * 1000
	if n == 0 || stopMs <= 0 || res.Summary.UnfinishedRequests == 0 {
		return lifeMs, n
	}
	if later := sim.Starts(res.Requests, res.Workload) - cfg.Traffic.Load.Concurrency; later > 0 {
		lifeMs = max(lifeMs, float64(cfg.Traffic.Load.Concurrency)*stopMs/float64(later))
	}
	return lifeMs, n
}

// traceSpan is the least span of session starts, in seconds, over which traceRamp measures a
// closed loop over a trace of mean slot cycle lifeMs under load l: its ramp of one cycle and as
// long again measured after it, or twice the warm-up l gives.
func traceSpan(l *config.Load, lifeMs float64) float64 {
	if l.WarmupSeconds != nil {
		return 2 * *l.WarmupSeconds
	}
	return 2 * lifeMs / 1000
}

// traceUnramped returns why the run res of cfg, a closed loop over a trace, measures no steady
// state, and whether the trace itself is what cannot hold its load (exhausted: no run's length
// would measure it). Under any ramp, a trace of fewer sessions than the concurrency (exhausted);
// without a ramp in the config, which traceRamp left unramped: no session completed in the run,
// or its sessions started over less than traceSpan, because the window
// (traffic.stop.max_virtual_time_seconds) ends too soon or because every session of the trace
// started (exhausted). The message says what to change; "" for any other run: another load or
// source, a ramp the config or traceRamp set.
func traceUnramped(cfg *config.Config, res *sim.Result) (why string, exhausted bool) {
	l := &cfg.Traffic.Load
	if l.Type == config.LoadConcurrency && cfg.Traffic.Source.Type == config.SourceTrace && res.Workload != nil &&
		len(res.Workload.Sessions) < l.Concurrency {
		// Fewer sessions than slots, with a ramp or without: the loop never holds the load.
		return fmt.Sprintf("measured no steady state: the trace has %s, fewer than concurrency %d, so the loop cannot hold it: "+
			"give a trace of more sessions", results.Plural(len(res.Workload.Sessions), "session"), l.Concurrency), true
	}
	if !closedTraceLoop(cfg) {
		return "", false
	}
	stop := cfg.Traffic.Stop.MaxVirtualTimeSeconds
	lifeMs, n := traceCycleMs(cfg, res)
	if n == 0 && stop > 0 {
		return fmt.Sprintf("measured no steady state: no session of the trace completed within the %g s window "+
			"(lengthen traffic.stop.max_virtual_time_seconds)", stop), false
	}
	if n == 0 {
		return "measured no steady state: no session of the trace completed", false
	}
	need := traceSpan(l, lifeMs)
	span := fmt.Sprintf("its mean session cycle is %.3g s, and a closed loop over a trace is ramped over one and measured "+
		"over as long again", lifeMs/1000)
	if l.WarmupSeconds != nil {
		span = fmt.Sprintf("a closed loop over a trace is measured after its warm-up of %g s, over as long again", *l.WarmupSeconds)
	}
	startsS := sim.LastStartMs(res.Requests, res.Workload) / 1000
	if sessions := len(res.Workload.Sessions); sim.Starts(res.Requests, res.Workload) >= sessions {
		return fmt.Sprintf("measured no steady state: the trace's %s all started within %.3g s, less than the %.3g s "+
			"needed (%s), so the loop cannot hold concurrency %d: give a trace of more sessions", results.Plural(sessions, "session"),
			startsS, need, span, l.Concurrency), true
	}
	return fmt.Sprintf("measured no steady state: the %g s window started sessions over %.3g s, less than the %.3g s needed "+
		"(%s): lengthen traffic.stop.max_virtual_time_seconds to at least %.3g s", stop, startsS, need, span,
		math.Ceil(1.1*stop*need/max(startsS, 1e-3))), false
}

// rateSteady is how a capacity probe of an open loop (constant_rate or poisson; cfg is the
// probe's config, reqs the requests of its run of workload wl as configured) is measured in
// steady state: after a warm-up of two mean lifetimes L of that run (of a session, from its first
// arrival to its last turn's end, for a session source: sim.MeanSlotCycleMs; the sessions in
// flight build up over one) (pilotWarmupLifetimes, as for a
// concurrency probe), over arrivals that span at least grid.MinSteadyRequestsPerSlot lifetimes
// and bring minMeasured(attainment) requests after the warm-up, or least when more (a point
// without a capacity search: fixedRateMeasured). An open loop's arrivals are
// desynchronized, but its first lifetimes fill an empty deployment (latencies too short,
// completions too few), and its rates would count that fill for a time set by the run's length.
// perLoadUnit, when non-nil, is the lengthened per-load-unit stop of a run whose arrivals fall
// short (the run's count scaled to 1.1 × the span needed, rounded up; the span of the sessions'
// starts, for a session source: sim.LastStartMs). A warmup_seconds the config
// sets is kept in place of the two lifetimes: the run is lengthened the same way when its arrivals
// after that warm-up fall short (a user trial, 2026-12-06: warmup_seconds 15 in a 20 s run left an
// open loop's point ranked on 3 requests), and warmup is then that warm-up, unchanged, so that
// the probe reruns. A run too short with a fixed request or session count (which no sweep
// changes) gets the warm-up of two lifetimes alone when minMeasured(attainment) requests still
// arrive after it. Both are nil, keeping the run as it is, when no request completed, when a
// fixed count brings fewer after the warm-up (measured whole, its fill included, rather than on
// a few) or its config sets one, or when the config's warm-up leaves a run long enough. The probe reruns the simulation with them
// written into its config, so that the config (and the row's recommendation) reproduces the
// statistics.
func rateSteady(cfg *config.Config, wl *traffic.Workload, reqs []engine.Request, attainment float64, least int) (warmup, perLoadUnit *float64) {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConstantRate && l.Type != config.LoadPoisson {
		return nil, nil
	}
	lifeMs, n := sim.MeanE2EMs(reqs)
	if wl != nil {
		lifeMs, n = sim.MeanSlotCycleMs(wl, reqs)
	}
	if n == 0 || lifeMs <= 0 {
		return nil, nil
	}
	// The load's arrivals are the sessions' starts (every request's, single-turn): they span what
	// the per-load-unit stop scales, where a session's later turns follow the deployment (an
	// overloaded one delays them past the last start, a run lengthened by that span would
	// still end its starts before the warm-up: sim.LastStartMs).
	last := max(sim.LastStartMs(reqs, wl), 0)
	// The starts must span the warm-up and MinSteadyRequestsPerSlot − pilotWarmupLifetimes
	// lifetimes after it, and bring minMeasured requests after it; at the run's mean start rate,
	// each start bringing its session's requests, that is a span of
	warmMs := pilotWarmupLifetimes * lifeMs
	if l.WarmupSeconds != nil {
		warmMs = *l.WarmupSeconds * 1000
	}
	need := warmMs + (grid.MinSteadyRequestsPerSlot-pilotWarmupLifetimes)*lifeMs
	if starts := sim.Starts(reqs, wl); last > 0 && starts > 1 {
		// Mean ms between the starts' requests: those that arrived (a time stop leaves later
		// turns unsent).
		gap := last / float64(starts-1) * float64(starts) / float64(arrivalsFrom(reqs, 0))
		need = max(need, warmMs+float64(max(least, minMeasured(attainment)))*gap)
	}
	if last < need {
		per := stopPerLoadUnit(&cfg.Traffic.Stop)
		measured := arrivalsFrom(reqs, warmMs)
		if l.HasCooldown() {
			measured -= arrivalsFrom(reqs, math.Nextafter(last, math.Inf(1))) // the later turns are cool-down
		}
		if per <= 0 && l.WarmupSeconds == nil && measured >= minMeasured(attainment) {
			// A fixed count, which no sweep lengthens, that still brings the floor after the fill:
			// measured after it, rather than with the fill's short latencies.
			w := warmMs / 1000
			return &w, nil
		}
		if per <= 0 || last <= 0 {
			return nil, nil
		}
		longer := math.Ceil(per * 1.1 * need / last)
		perLoadUnit = &longer
	} else if l.WarmupSeconds != nil {
		return nil, nil // the config's warm-up leaves enough: the run stands
	}
	w := warmMs / 1000
	return &w, perLoadUnit
}

// slotLengthening is the per-load-unit stop that gives each slot of a concurrency probe enough
// cycles (requests_per_load_unit, or sessions_per_load_unit: a slot's cycle is one request or one
// session) for a steady state: pilotWarmupLifetimes of warm-up, one of cool-down (the drain
// traffic.load.cooldown leaves out), and between them minMeasuredCycles and at least what it
// takes for minMeasured(attainment) requests over all `concurrency` slots. It applies to a
// config whose stop gives fewer and whose ramp the search chooses (probeStart): such a run would
// stay in lock-step, or measure too few requests to resolve its attainment target, and its
// capacity would move with its length. nil otherwise (long enough, an explicit ramp_seconds, a
// fixed count, a trace or a mixture of sessions).
func slotLengthening(cfg *config.Config, attainment float64) *float64 {
	l, src := &cfg.Traffic.Load, &cfg.Traffic.Source
	if l.Type != config.LoadConcurrency || l.RampSeconds != nil || src.Type == config.SourceTrace || l.Concurrency <= 0 {
		return nil
	}
	// Slot cycles (a request, or a whole session) per slot: the ramp and warm-up take
	// pilotWarmupLifetimes of them, the cool-down (the last one) one, and the steady part the rest.
	per, steady, ok := slotCycles(cfg, attainment)
	if !ok {
		return nil
	}
	need := pilotWarmupLifetimes + 1 + steady
	if per >= need {
		return nil
	}
	return &need
}

// slotCycles returns the per-load-unit stop per of concurrency config cfg (slot cycles per slot:
// requests, or whole sessions) and the fewest cycles per slot its steady part must measure: at
// least minMeasuredCycles, and minMeasured(attainment) requests over all `concurrency` slots
// (a session's turns each a request). ok is false without a per-load-unit stop, or a session stop
// without a session shape.
func slotCycles(cfg *config.Config, attainment float64) (per, steady float64, ok bool) {
	l, st, src := &cfg.Traffic.Load, &cfg.Traffic.Stop, &cfg.Traffic.Source
	turns := 1.0
	per = st.RequestsPerLoadUnit
	if st.SessionsPerLoadUnit > 0 {
		if src.Session == nil {
			return 0, 0, false
		}
		per, turns = st.SessionsPerLoadUnit, float64(src.Session.Turns)
	}
	if per <= 0 {
		return 0, 0, false
	}
	return per, max(minMeasuredCycles, math.Ceil(float64(minMeasured(attainment))/(float64(l.Concurrency)*turns))), true
}

// closedSteady is the lengthened per-load-unit stop of a concurrency probe or point (cfg, its run's
// requests reqs of workload wl) whose warm-up the config sets, its warmup_seconds or its explicit
// ramp_seconds' (probeStart; steadyRun asks only then), which slotLengthening, counting the
// search's warm-up of pilotWarmupLifetimes slot cycles, cannot size: a warm-up of W seconds takes ⌈W / L⌉ cycles of
// the run's mean slot cycle L (sim.MeanSlotCycleMs: a request, or a whole session), the
// cool-down one, and the steady part slotCycles' count; a stop that gives fewer is lengthened to
// 1.1 × that, rounded up. Without it a run whose warm-up outlasts its cycles measures a handful
// of requests or none (measured 2026-12-07: warmup_seconds 60 on the built-in workload, whose
// sessions last about 2 s, left no request at concurrency 2 to 8 over 6 cycles per slot, and
// every deployment's capacity read 1 where it is 148 to 307). nil when the stop gives enough, is a
// fixed count (which no sweep lengthens), the load is not a concurrency or the source is a
// trace, or no request completed.
func closedSteady(cfg *config.Config, wl *traffic.Workload, reqs []engine.Request, attainment float64) *float64 {
	l, src := &cfg.Traffic.Load, &cfg.Traffic.Source
	if l.Type != config.LoadConcurrency || src.Type == config.SourceTrace || l.Concurrency <= 0 {
		return nil
	}
	per, steady, ok := slotCycles(cfg, attainment)
	if !ok {
		return nil
	}
	lifeMs, n := sim.MeanSlotCycleMs(wl, reqs)
	if n == 0 || lifeMs <= 0 {
		return nil
	}
	need := math.Ceil(l.Warmup()*1000/lifeMs) + 1 + steady
	if per >= need {
		return nil
	}
	longer := math.Ceil(1.1 * need)
	return &longer
}

// minMeasuredCycles is the fewest slot cycles a concurrency probe measures between its warm-up
// and its cool-down. One cycle is a biased sample: Llama-3.1-8B on one H200 TP8 worker, 100
// four-turn sessions in flight, measured 2026-12-03 with a two-cycle warm-up: p99 ITL 44.9 ms and
// p99 TTFT 149 ms over one cycle (4 sessions per slot), 54.3-54.7 ms and 227-241 ms over 5 to 60
// cycles (8 to 64 sessions per slot).
const minMeasuredCycles = 3

// fixedRateMeasured is the fewest requests an open-loop point without a capacity search measures
// after its warm-up (rateSteady's least; grid.FixedRateMeasured, which the spec's warning uses).
const fixedRateMeasured = grid.FixedRateMeasured

// minMeasured is the fewest requests a capacity probe measures after its warm-up
// (grid.MinMeasuredRequests, which the spec's warnings use).
func minMeasured(attainment float64) int { return grid.MinMeasuredRequests(attainment) }

// fixedCountBelowLoad says why a capacity probe at concurrency x of a point whose config is base
// cannot measure its load, before it runs: a closed loop whose stop is a fixed count of requests
// or sessions too small for x (grid.FixedCountLimit, judged on the point's own ramp setting, not
// the one a probe's pilot chooses) would read the run's one burst as the load's SLA attainment (a user
// trial, 2026-12-07: traffic.stop.sessions 8 with no warm-up met every probe up to the search's
// max, "capacity >= concurrency 4096" for one H100; 500 requests under a max of 500 rated one
// deployment at 139 where 8 requests per slot measured 512). "" otherwise. The spec is warned of
// such a count beforehand, and a search whose min is above the limit refused (grid).
func fixedCountBelowLoad(base *config.Config, x float64) string {
	limit, n, what := grid.FixedCountLimit(base)
	if n == 0 || x <= float64(limit) {
		return ""
	}
	return fmt.Sprintf("traffic.stop.%s is a fixed %d, too few for concurrency %g: %s; use traffic.stop.%s_per_load_unit, "+
		"which scales the run with the load, or an optimization.capacity_search.max of at most %d", what, n,
		x, grid.FixedCountWhy(limit, n, what), what, limit)
}

// stopPerLoadUnit is the value of st's per-load-unit stop, 0 when it has none.
func stopPerLoadUnit(st *config.Stop) float64 {
	return max(st.RequestsPerLoadUnit, st.SessionsPerLoadUnit)
}

// steady returns which requests a run's statistics count (metrics.Summarize with
// Input.WarmupMs and Input.CooldownFromMs): those that arrived at or after warmupMs and, when the
// run s summarises had a cool-down, not after its start (s.CooldownFromMs), and every rejected
// request whenever it arrived (as Summarize counts them: a rejection is the deployment's, and
// leaving a warm-up one out would make a deployment that rejects look better); nil (every
// request) when neither a warm-up nor a cool-down applies.
func steady(warmupMs float64, s *metrics.Summary) func(*engine.Request) bool {
	cool := s != nil && s.Cooldown
	if warmupMs <= 0 && !cool {
		return nil
	}
	return func(r *engine.Request) bool {
		return r.Status == engine.Rejected || r.ArrivalMs >= warmupMs && (!cool || r.ArrivalMs <= s.CooldownFromMs)
	}
}

// closed reports whether the bracket [lo, hi] is within the tolerance.
func closed(lo, hi, tol float64, whole bool) bool {
	if whole && hi-lo <= 1 {
		return true
	}
	return hi-lo <= tol*lo
}

// grow returns the next bracketing load above probes[lo] (the largest that met the SLA, no miss
// yet): lo's load times a growth in [minGrowth, maxGrowth] that aims aimPast beyond where the
// SLA headroom extrapolates to 1, capped at max.
func grow(probes []probeResult, lo int, maxLoad float64, whole bool) float64 {
	xl, hl := probes[lo].load, probes[lo].probe.Headroom
	g := minGrowth
	if hl > 0 && hl < 1 {
		// Headroom grows with load; extrapolate log h linearly in log x from the previous
		// meeting probe below lo (slope 1, h proportional to load, when there is none).
		slope := 1.0
		for j := lo - 1; j >= 0; j-- {
			q := probes[j].probe
			if q.Meets && q.Headroom > 0 && probes[j].load < xl {
				slope = math.Log(hl/q.Headroom) / math.Log(xl/probes[j].load)
				break
			}
		}
		est := math.Inf(1)
		if slope > 0 {
			est = xl * math.Pow(1/hl, 1/slope)
		}
		g = min(maxGrowth, max(minGrowth, aimPast*est/xl))
	}
	x := min(xl*g, maxLoad)
	if whole {
		x = math.Max(math.Round(x), xl+1)
		x = min(x, math.Floor(maxLoad))
	}
	return x
}

// split returns the next load inside the bracket (lo meets, hi misses): where the log-log
// interpolation of headroom between them reaches 1, kept tol × lo / 2 away from both ends; the
// midpoint when headroom cannot guide (unknown, or infinite at hi) or the search stalled. When
// the last n probes inside the bracket met the SLA (streak = +n), the estimate evidently sits
// low, so the probe goes at least 2^(n−1) × tol × lo above lo (after one, a miss there closes the
// bracket); when they missed (streak = −n), as far below hi. The push never passes the midpoint.
func split(lo, hi results.Probe, tol float64, whole, stalled bool, streak int) float64 {
	xl, xh := lo.Load, hi.Load
	mid := (xl + xh) / 2
	x := mid
	if !stalled && lo.Headroom > 0 && lo.Headroom <= 1 && hi.Headroom > 1 {
		t := math.Log(1/lo.Headroom) / math.Log(hi.Headroom/lo.Headroom)
		x = xl * math.Pow(xh/xl, t)
		m := min(tol*xl/2, (xh-xl)/2)
		x = min(max(x, xl+m), xh-m)
		switch push := tol * xl * math.Pow(2, float64(max(streak, -streak)-1)); {
		case streak > 0:
			x = max(x, min(xl+push, mid))
		case streak < 0:
			x = min(x, max(xh-push, mid))
		}
	}
	if whole {
		x = math.Round(x)
		x = min(max(x, xl+1), xh-1)
	}
	return x
}
