package grid

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/timing"
	"gopkg.in/yaml.v3"
)

// Defaults of optimization.capacity_search.
const (
	DefaultCapacityAttainment = optimization.DefaultAttainment
	DefaultCapacityMin        = 1
	DefaultCapacityMax        = 4096
	DefaultCapacityTolerance  = 0.05
	DefaultCapacityMaxProbes  = 16
)

// CapacitySearch is optimization.capacity_search (optimization.CapacitySearch, which documents it);
// sweep.Run runs it.
type CapacitySearch = optimization.CapacitySearch

// Cost is optimization.cost: GPUHourUSD maps a hardware id (as timing.ResolveHardwareID
// resolves it, so h100 and h100_sxm are one key) to its price in USD per GPU-hour. servesweep
// has no built-in prices. Keys maps each of those ids to the key the spec wrote for it (b200 for
// b200_sxm), so that a message about a price names what the user wrote.
type Cost struct {
	GPUHourUSD map[string]float64
	Keys       map[string]string
}

// maxGPUHourUSD bounds a price per GPU-hour: far above any real one, and small enough that
// no cost column overflows.
const maxGPUHourUSD = 1e6

// intensityPaths are the load fields a capacity search sets.
var intensityPaths = []string{"traffic.load.concurrency", "traffic.load.requests_per_second",
	"traffic.load.sessions_per_second", "traffic.load.speedup"}

// capacitySearch parses optimization.capacity_search (n non-nil).
func (p *parser) capacitySearch(n *yaml.Node, path string) *CapacitySearch {
	cs := &CapacitySearch{Attainment: DefaultCapacityAttainment, Min: DefaultCapacityMin, Max: DefaultCapacityMax,
		RelativeTolerance: DefaultCapacityTolerance, MaxProbes: DefaultCapacityMaxProbes}
	m, ok := p.section(n, path, []string{"attainment", "min", "max", "relative_tolerance", "max_probes"})
	if !ok {
		return cs
	}
	if v := m["attainment"]; v != nil {
		if x, ok := number(v); ok && x > 0 && x <= 1 {
			cs.Attainment = x
		} else {
			p.errorf(path+".attainment", "must be a number in (0, 1] (the least share of offered requests that meet "+
				"evaluation.sla), got %s", describeNumber(v))
		}
	}
	for _, f := range []struct {
		key string
		dst *float64
	}{{"min", &cs.Min}, {"max", &cs.Max}, {"relative_tolerance", &cs.RelativeTolerance}} {
		if v := m[f.key]; v != nil {
			if x, ok := p.posFloat(v, path+"."+f.key); ok {
				*f.dst = x
			}
		}
	}
	for _, b := range []struct {
		key string
		x   *float64
	}{{"min", &cs.Min}, {"max", &cs.Max}} {
		if *b.x < config.MinRate || *b.x > config.MaxRate {
			p.errorf(path+"."+b.key, "must be from %g to %g (the bounds of every load intensity), got %g", config.MinRate, config.MaxRate, *b.x)
			*b.x = 1
		}
	}
	if cs.Min > cs.Max {
		p.errorf(path+".min", "must be <= max (%g), got %g", cs.Max, cs.Min)
	}
	// A ratio: 5 meant as 5 % would let a bracket span six times its capacity and close at once.
	if cs.RelativeTolerance >= 1 {
		p.errorf(path+".relative_tolerance", "must be below 1 (a ratio of the capacity: 0.05 for 5 %%), got %g", cs.RelativeTolerance)
	}
	if v := m["max_probes"]; v != nil {
		if x, ok := p.intField(v, path+".max_probes", 2); ok {
			cs.MaxProbes = x
		}
	}
	return cs
}

// cost parses optimization.cost (n non-nil).
func (p *parser) cost(n *yaml.Node, path string) *Cost {
	c := &Cost{GPUHourUSD: map[string]float64{}, Keys: map[string]string{}}
	m, ok := p.section(n, path, []string{"gpu_hour_usd"})
	if !ok {
		return c
	}
	pp := path + ".gpu_hour_usd"
	v := m["gpu_hour_usd"]
	if v == nil || v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		p.errorf(pp, "required: a mapping of hardware id to USD per GPU-hour, e.g. {h100_sxm: 2.5, h200_sxm: 3.5}")
		return c
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		key := v.Content[i].Value
		id, _ := timing.ResolveHardwareID(key)
		kp := pp + "." + key
		if first, dup := c.Keys[id]; dup {
			p.errorf(kp, "a second price for hardware %s (%s priced it first); keep one of the two keys", id, pp+"."+first)
			continue
		}
		c.Keys[id] = key
		if x, ok := p.posFloat(v.Content[i+1], kp); ok {
			if x > maxGPUHourUSD {
				p.errorf(kp, "must be at most %g USD per GPU-hour, got %g", float64(maxGPUHourUSD), x)
				continue
			}
			c.GPUHourUSD[id] = x
		}
	}
	return c
}

// checkCapacityDomains reports a domain on the load's intensity when capacity search is on: the
// search sets that field itself.
func (p *parser) checkCapacityDomains(domains []Domain) {
	for _, d := range domains {
		if slices.Contains(intensityPaths, d.Path) {
			p.errorf(d.Path, "cannot be searched together with optimization.capacity_search, which finds the largest "+
				"load within the SLA itself; remove the domain (set the search's min and max instead)")
		}
	}
}

// checkCapacity reports what makes a capacity search impossible on cfg (the first valid point):
// the whole-number loads of a concurrency search, and a max or min load the config's bounds
// refuse (a limit tag of the intensity field, or a stop that scales with the load).
func (s *Spec) checkCapacity(p *Point) error {
	cs := s.Optimization.CapacitySearch
	if cs == nil {
		return nil
	}
	const path = "optimization.capacity_search"
	var errs config.Errors
	if len(p.Config.Traffic.Load.Profile) > 0 {
		// The search sets the load's one rate; a profile sets a rate per phase, which no single
		// load scales.
		return config.Errors{&config.Error{File: s.File, Path: path,
			Msg: "cannot search a load whose traffic.load.profile sets the rate of each phase: the search varies one " +
				"rate (traffic.load.requests_per_second or sessions_per_second); remove the profile, or the capacity search " +
				"and sweep the profile as configured"}}
	}
	if e := s.unmeasuredRates(p.Config); e != nil {
		return config.Errors{e}
	}
	if limit, n, what := FixedCountLimit(p.Config); n > 0 && cs.Min > float64(limit) {
		return config.Errors{&config.Error{File: s.File, Path: path + ".min", Msg: fmt.Sprintf("%g: traffic.stop.%s is a fixed %d, and %s; "+
			"use traffic.stop.%s_per_load_unit to scale the run with the load, or a min of at most %d", cs.Min, what, n,
			FixedCountWhy(limit, n, what), what, limit)}}
	}
	if p.Config.Traffic.Load.Type == config.LoadConcurrency {
		for _, b := range []struct {
			key string
			x   float64
		}{{"min", cs.Min}, {"max", cs.Max}} {
			if b.x != math.Trunc(b.x) {
				errs = append(errs, &config.Error{File: s.File, Path: path + "." + b.key,
					Msg: fmt.Sprintf("must be a whole number under traffic.load.type concurrency (requests in flight), got %g", b.x)})
			}
		}
		if cs.Max > config.MaxRequests {
			errs = append(errs, &config.Error{File: s.File, Path: path + ".max",
				Msg: fmt.Sprintf("must be at most %d under traffic.load.type concurrency (config.MaxRequests), got %g", config.MaxRequests, cs.Max)})
		}
		if len(errs) > 0 {
			return errs
		}
	}
	for _, b := range []struct {
		key string
		x   float64
	}{{"min", cs.Min}, {"max", cs.Max}} {
		if _, _, err := p.AtLoad(b.x); err != nil {
			msg := err.Error()
			if first, _, more := strings.Cut(msg, "\n"); more {
				msg = first
			}
			errs = append(errs, &config.Error{File: s.File, Path: path + "." + b.key,
				Msg: fmt.Sprintf("the deployment's config is invalid at load %g (%s): %s", b.x, p.Config.Traffic.Load.IntensityField(), msg)})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// unmeasuredRates is the error for a capacity search over an open loop (constant_rate or
// poisson) whose run is a fixed count of N requests (traffic.stop.requests; or N sessions of T
// turns, traffic.stop.sessions) after an explicit warm-up of W seconds
// (traffic.load.warmup_seconds), when the search's max exceeds the rate at which the arrivals
// after the warm-up still bring unmeasuredMargin × MinMeasuredRequests(attainment) = 1.1 m
// requests on average: (N − 1.1 m) / W requests/s ((N − 1.1 m / T) / W sessions/s; the margin
// because a poisson run brings fewer than its mean about half the time, and a session run's
// cool-down leaves out the turns after its last start). Above it the N arrivals come almost all before the
// warm-up ends, so a probe measures a handful of requests or none, and the run's length, not
// the deployment, would set the capacity (a probe that measures none fails its point). nil when
// the search stays below it, the stop scales with the load, or the search chooses each probe's
// warm-up. The error names the three ways out.
func (s *Spec) unmeasuredRates(cfg *config.Config) *config.Error {
	cs, l, st := s.Optimization.CapacitySearch, &cfg.Traffic.Load, &cfg.Traffic.Stop
	if l.Type != config.LoadConstantRate && l.Type != config.LoadPoisson || l.WarmupSeconds == nil || *l.WarmupSeconds <= 0 {
		return nil
	}
	m := float64(MinMeasuredRequests(cs.Attainment))
	n, what, field := float64(st.Requests), "requests", "requests"
	if st.Sessions > 0 {
		src := &cfg.Traffic.Source
		if src.Session == nil || src.Type == config.SourceTrace {
			return nil // a trace's sessions bring a number of turns each that the spec does not say
		}
		n, what, field = float64(st.Sessions), "sessions", "sessions"
		m /= float64(src.Session.Turns)
	}
	if n <= 0 {
		return nil
	}
	w := *l.WarmupSeconds
	bound := math.Max(0, (n-unmeasuredMargin*m)/w)
	if cs.Max <= bound {
		return nil
	}
	lower := ""
	if at := math.Floor(bound*100) / 100; at >= cs.Min {
		lower = fmt.Sprintf("set max to at most %g, or ", at)
	}
	return &config.Error{File: s.File, Path: "optimization.capacity_search.max",
		Msg: fmt.Sprintf("is %g %s/s, above the %.4g at which traffic.stop.%s (a fixed %g) still brings 1.1 × %d requests "+
			"after traffic.load.warmup_seconds (%g s), %d being the fewest an attainment of %g is measured on: faster probes would "+
			"measure a handful of requests or none, and the run's length would set the capacity; %suse "+
			"traffic.stop.%s_per_load_unit (the run then scales with the load), or remove warmup_seconds (the search then "+
			"chooses each probe's warm-up)", cs.Max, what, bound, field, n, MinMeasuredRequests(cs.Attainment),
			w, MinMeasuredRequests(cs.Attainment), cs.Attainment, lower, field)}
}

// unmeasuredMargin is the share beyond MinMeasuredRequests that unmeasuredRates asks the
// arrivals after a spec's warm-up to bring on average, as the run lengthening's 1.1 (rateSteady).
const unmeasuredMargin = 1.1

// roleHardware returns each role cfg's mode uses with its resolved hardware id and its GPU
// count: a role's own hardware (prefill and decode may set one) or engine.hardware.
func roleHardware(cfg *config.Config) (roles []config.Role, ids []string, gpus []int) {
	for _, r := range cfg.Engine.Mode.Roles() {
		role := cfg.Engine.Workers.Role(r)
		if role == nil {
			continue
		}
		hw := cfg.Engine.Hardware
		if role.Hardware != "" {
			hw = role.Hardware
		}
		id, _ := timing.ResolveHardwareID(hw)
		roles = append(roles, r)
		ids = append(ids, id)
		gpus = append(gpus, role.Parallelism.GPUs())
	}
	return roles, ids, gpus
}

// checkCost sets each point's CostUSDPerHour from the cost section: Σ over its roles of the
// role's GPUs × its hardware's price (a role may run on its own hardware). A hardware without a
// price is an error naming it and the points that use it; a price for a hardware no point uses
// is a warning (a typo, or a price list shared between specs). used is the hardware the points
// run on (nil without a cost section).
func (s *Spec) checkCost(points []Point) (warnings []string, used map[string]bool, err error) {
	c := s.Optimization.Cost
	if c == nil {
		return nil, nil, nil
	}
	missing := map[string]int{}
	used = map[string]bool{}
	for i := range points {
		var roles []config.Role
		var ids []string
		var gpus []int
		if h := points[i].hardware; h != nil {
			roles, ids, gpus = h.roles, h.ids, h.gpus
		} else {
			roles, ids, gpus = roleHardware(points[i].Config)
		}
		cost, priced := 0.0, true
		var prefill, decode float64
		for k, id := range ids {
			used[id] = true
			price, ok := c.GPUHourUSD[id]
			if !ok {
				missing[id]++
				priced = false
				continue
			}
			cost += float64(gpus[k]) * price
			if roles[k] == config.RolePrefill {
				prefill = price
			} else {
				decode = price
			}
		}
		if priced {
			points[i].CostUSDPerHour = cost
			points[i].PrefillGPUHourUSD, points[i].DecodeGPUHourUSD = prefill, decode
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.GPUHourUSD)) {
		if used[id] {
			continue
		}
		uses := strings.Join(slices.Sorted(maps.Keys(used)), ", ")
		// The path and the GPU named as the spec wrote them (b200), the catalog id beside it.
		written, resolved := id, ""
		if k, ok := c.Keys[id]; ok && k != id {
			written, resolved = k, id+"; "
		}
		if _, err := timing.LookupHardware(id); err == nil {
			// A GPU of the catalog the spec's hardware domain leaves out (e.g. narrowed by
			// --set): its price is unused, not misspelt.
			warnings = append(warnings, fmt.Sprintf("%s: optimization.cost.gpu_hour_usd.%s: unused, no point runs on %s (%sthe grid uses %s)",
				s.File, written, written, resolved, uses))
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s: optimization.cost.gpu_hour_usd.%s: no point runs on this hardware "+
			"(a typo? the grid uses %s)", s.File, written, uses))
	}
	if len(missing) == 0 {
		return warnings, used, nil
	}
	var errs config.Errors
	for _, id := range slices.Sorted(maps.Keys(missing)) {
		errs = append(errs, &config.Error{File: s.File, Path: "optimization.cost.gpu_hour_usd",
			Msg: fmt.Sprintf("no price for hardware %s (used by %d points); add %s: <USD per GPU-hour>", id, missing[id], id)})
	}
	return nil, nil, errs
}

// AtLoad returns the point's config and YAML with the load intensity (the field config.Load.IntensityField names)
// set to x, decoded and validated as any point is: an error is the config error a spec with
// that value would get (a stop that scales with the load beyond config.MaxRequests, say). Under
// a trace_timestamps load its stop is the search's trace segment (AtProbeRun).
func (p *Point) AtLoad(x float64) (*config.Config, []byte, error) {
	return p.AtProbe(x, nil, nil)
}

// AtProbe is AtLoad that also writes traffic.load.ramp_seconds and traffic.load.warmup_seconds
// (in seconds) into the config, each when non-nil: the start a capacity-search probe ran under
// (sweep's searchCapacity), so that the config reproduces the probe's metrics. A ramp under a
// load type other than concurrency is the config error the schema gives it.
func (p *Point) AtProbe(x float64, rampSeconds, warmupSeconds *float64) (*config.Config, []byte, error) {
	return p.AtProbeRun(x, ProbeRun{RampSeconds: rampSeconds, WarmupSeconds: warmupSeconds})
}

// ProbeRun is how a capacity-search probe ran beyond its load, as AtProbeRun writes it into the
// point's config; a nil field leaves the config's own value.
type ProbeRun struct {
	// RampSeconds and WarmupSeconds are traffic.load.ramp_seconds and warmup_seconds.
	RampSeconds, WarmupSeconds *float64
	// PerLoadUnit replaces the value of the config's per-load-unit stop
	// (traffic.stop.requests_per_load_unit or sessions_per_load_unit): a run the search
	// lengthened to reach a steady state (sweep's searchCapacity).
	PerLoadUnit *float64
	// Cooldown sets traffic.load.cooldown: the probe's closed loop is measured until it starts
	// its last session, not through its drain.
	Cooldown bool
}

// AtProbeRun is AtLoad that also writes r into the config, so that it reproduces the probe's
// metrics. Under a trace_timestamps load (x a speedup) the config's stop becomes the trace
// segment every probe of the search replays, run to its end (traffic.stop.max_trace_seconds:
// ProbeTraceSeconds, max_virtual_time_seconds removed; segmentStop). A ramp under a load type
// other than concurrency is the config error the schema gives it; PerLoadUnit on a config
// without a per-load-unit stop is an error.
func (p *Point) AtProbeRun(x float64, r ProbeRun) (*config.Config, []byte, error) {
	rampSeconds, warmupSeconds := r.RampSeconds, r.WarmupSeconds
	var doc yaml.Node
	if err := yaml.Unmarshal(p.YAML, &doc); err != nil || len(doc.Content) == 0 {
		return nil, nil, fmt.Errorf("point %s: cannot re-read its config: %v", p.ID, err)
	}
	root := doc.Content[0]
	traffic := child(root, "traffic")
	load := child(traffic, "load")
	if load == nil || load.Kind != yaml.MappingNode {
		// Every concrete point has traffic.load after marshal; a point built by hand may not.
		if traffic == nil {
			traffic = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			root.Content = append(root.Content, scalar("!!str", "traffic"), traffic)
		}
		load = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		traffic.Content = append(traffic.Content, scalar("!!str", "load"), load)
	}
	set := func(key, value string) {
		val := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
		if v := child(load, key); v != nil {
			*v = *val
		} else {
			load.Content = append(load.Content, scalar("!!str", key), val)
		}
	}
	field := p.Config.Traffic.Load.IntensityField()
	set(field, formatLoad(x, field == "concurrency"))
	for _, f := range []struct {
		key string
		x   *float64
	}{{"ramp_seconds", rampSeconds}, {"warmup_seconds", warmupSeconds}} {
		if f.x != nil {
			set(f.key, formatLoad(*f.x, false))
		}
	}
	if r.Cooldown {
		set("cooldown", "true")
	}
	if field == "speedup" {
		segmentStop(child(traffic, "stop"), &p.Config.Traffic)
	}
	if r.PerLoadUnit != nil {
		stop := child(traffic, "stop")
		var v *yaml.Node
		for _, key := range []string{"requests_per_load_unit", "sessions_per_load_unit"} {
			if v == nil && stop != nil {
				v = child(stop, key)
			}
		}
		if v == nil {
			return nil, nil, fmt.Errorf("point %s: a probe's run cannot be lengthened: traffic.stop has no requests_per_load_unit or sessions_per_load_unit", p.ID)
		}
		*v = yaml.Node{Kind: yaml.ScalarNode, Value: formatLoad(*r.PerLoadUnit, false)}
	}
	data, err := marshal(root)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Decode(data, "point "+p.ID, nil, config.WithMarker(ConcreteMarker))
	if err != nil {
		return nil, nil, err
	}
	return cfg, data, nil
}

// ProbeTraceSeconds is the segment of the trace, in seconds of trace time, that every probe of
// a capacity search over t's trace_timestamps load replays (traffic.stop.max_trace_seconds, which
// AtProbeRun writes into the probe's config in place of max_virtual_time_seconds): the stop's
// own max_trace_seconds when set, else speedup × max_virtual_time_seconds, what the spec's own
// run at its own speedup replays; 0 when the stop bounds neither (the whole trace, the same at
// every speedup). Replaying one segment, every probe offers the same requests and only their
// rate changes, so the capacity is the deployment's and not the window's (a virtual-time stop
// at a probe's speedup replayed speedup × T seconds of the trace: at T = 1200 s, 927 requests at
// speedup 0.25 and 12,031 at 4; user trial, 2026-12-07).
func ProbeTraceSeconds(t *config.Traffic) float64 {
	if t.Load.Type != config.LoadTraceTimestamps {
		return 0
	}
	if w := t.Stop.MaxTraceSeconds; w > 0 {
		return w
	}
	speedup := t.Load.Speedup
	if speedup <= 0 {
		speedup = 1
	}
	return speedup * t.Stop.MaxVirtualTimeSeconds
}

// segmentStop rewrites stop, the traffic.stop mapping of a probe's config under a trace_timestamps
// load (t the point's own traffic section), to replay ProbeTraceSeconds(t) of the trace to the
// end: max_trace_seconds set to it and max_virtual_time_seconds removed, so that a probe at a
// high speedup is not cut with its last requests in flight (they finish, late when the
// deployment falls behind, and count against attainment by their latency) and one at a low
// speedup does not replay more of the trace. It leaves a stop that bounds neither, or a nil
// one, as it is.
func segmentStop(stop *yaml.Node, t *config.Traffic) {
	w := ProbeTraceSeconds(t)
	if w == 0 || stop == nil || stop.Kind != yaml.MappingNode {
		return
	}
	removeKeys(stop, "max_virtual_time_seconds", "max_trace_seconds")
	stop.Content = append(stop.Content, scalar("!!str", "max_trace_seconds"), &yaml.Node{Kind: yaml.ScalarNode, Value: formatLoad(w, false)})
}

// formatLoad writes a load value as YAML: a whole number for a concurrency, else the shortest
// decimal that reads back as x.
func formatLoad(x float64, whole bool) string {
	if whole {
		return strconv.FormatInt(int64(math.Round(x)), 10)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// SteadyCyclesPerSlot is the fewest slot cycles per slot (requests, or sessions of a session
// source, per unit of concurrency) of a fixed count (traffic.stop.requests or sessions) for which
// sweep measures a point without a capacity search in steady state: two cycles of ramp and
// warm-up, one of cool-down and three measured between them (sweep's pilotWarmupLifetimes + 1 +
// minMeasuredCycles). A fixed count gives fewer at some concurrency: those points run as
// configured, first wave at once, and the spec is warned (shortFixedRunWarning).
const SteadyCyclesPerSlot = 6

// SteadyWarmupCycles is how many slot cycles per slot sweep spends spreading a closed loop's
// first wave and warming it up before it measures (sweep's pilotWarmupLifetimes); the last
// cycle, the drain, is not measured either.
const SteadyWarmupCycles = 2

// MinMeasuredRequests is the fewest requests sweep measures in steady state for an SLA attainment
// target (a fraction in (0, 1)): ⌈2 / (1 − attainment)⌉, at most 1,000 (200 for attainment 0.99),
// so that the target allows at least two misses and does not turn into "every request" on a
// short run (with 50 measured requests, 0.99 allows none, and one long prompt decides the
// capacity). A capacity probe's run is lengthened to it; a fixed count that gives fewer is warned
// (shortFixedRunWarning).
func MinMeasuredRequests(attainment float64) int {
	if attainment >= 0.998 {
		return 1000
	}
	return int(math.Ceil(2 / (1 - attainment)))
}

// FixedRateMeasured is the fewest requests an open-loop point without a capacity search measures
// after its warm-up (sweep's rateSteady): such points are ranked by their served rate, which a
// window of n requests reads to about 1 / √n of itself (7 % at 200, 3 % at 1,000), against
// points a few percent apart near capacity (a user trial, 2026-12-07: one H200 over 12–22
// poisson requests/s, about 18.2 served at most, had 16, 17 or 19 as its best point at 50
// requests per load unit over three seeds, and 18 at every seed at 100 and 300). A fixed count
// below it is measured whole, its fill included, and warned (shortFixedRunWarnings).
const FixedRateMeasured = 1000

// PercentileFloorAttainment is the attainment whose measured-request floor (MinMeasuredRequests)
// a sweep point without a capacity search is run to: DefaultCapacityAttainment, or, for each
// percentile term P of cfg's evaluation.sla, 1 − (1 − P/100)/k, whose floor leaves 2k requests'
// worth of samples past the percentile: k = 5 for a bound over inter-token gaps (about a hundred
// per request), k = 25 for one over requests (TTFT, TPOT, E2E: one sample each). p99 ITL and any
// p95 or p99 of requests reach MinMeasuredRequests' cap, 1,000 measured requests; p95 ITL 200.
// Such a point is ranked, and ruled out, by one run's tail: user trials, 2026-12-07, measured p99
// ITL 97.9 and 119.6 ms against a 100 ms bound for one deployment at concurrency 64 over 640
// requests under two seeds (95.3 and 99.1 over 1,080), and p95 TTFT 191-249 ms over 500 requests
// under five seeds (213-217 ms over long runs); each time the answer moved to concurrency 16 at
// half the throughput per GPU.
func PercentileFloorAttainment(cfg *config.Config) float64 {
	a := DefaultCapacityAttainment
	if sla := cfg.Evaluation.SLA; sla != nil {
		for _, b := range sla.PercentileBounds() {
			k := 25.0
			if b.Latency == "itl" {
				k = 5
			}
			a = max(a, 1-(1-float64(b.Percentile)/100)/k)
		}
	}
	return a
}

// MinSteadyRequestsPerSlot is the fewest requests per slot of a concurrency load (a request or
// a session's turn occupies its slot for about one request lifetime) for which a capacity probe
// is desynchronized (sweep's probeStart: first wave ramped over one lifetime, two lifetimes of
// warm-up); the steady window needs some more. Shorter runs keep the synchronized start, and
// the spec is warned (capacityWarnings).
const MinSteadyRequestsPerSlot = 4

// fixedStop is stop st's fixed count, sessions when it gives them, else requests, and its
// field's name; 0 without one.
func fixedStop(st *config.Stop) (int, string) {
	if st.Sessions > 0 {
		return st.Sessions, "sessions"
	}
	return st.Requests, "requests"
}

// FixedCountLimit returns the largest concurrency a capacity probe of config cfg can measure
// under its fixed traffic.stop count n (requests, or sessions when it gives them; what names
// the field), and n: with the ramp left to the search (traffic.load.ramp_seconds omitted), a
// probe needs MinSteadyRequestsPerSlot requests or sessions per slot to ramp its first wave and
// measure past its warm-up, so n / MinSteadyRequestsPerSlot; with an explicit ramp, n (above it
// the loop never holds its load). Fewer, the probe would read the run's one burst as the load's
// SLA attainment, an answer set by the run's length. n is 0 (and the limit meaningless) for a
// stop without a fixed count or a load other than concurrency.
func FixedCountLimit(cfg *config.Config) (limit, n int, what string) {
	if n, what = fixedStop(&cfg.Traffic.Stop); n == 0 || cfg.Traffic.Load.Type != config.LoadConcurrency {
		return 0, 0, ""
	}
	if cfg.Traffic.Load.RampSeconds != nil {
		return n, n, what
	}
	return n / MinSteadyRequestsPerSlot, n, what
}

// capacityWarnings warns about a capacity search whose probes are cut by a virtual-time stop (the
// requests in flight then past a bound count as misses, the others are censored, and a short
// window measures few), one over a trace_timestamps load whose time stop its probes drop beside
// max_trace_seconds (droppedTimeStop), and one over a concurrency with a fixed
// request or session count: at a concurrency above the count every request is in flight from
// the start, so the probes measure one burst rather than a sustained load.
func (s *Spec) capacityWarnings(cfg *config.Config) []string {
	cs := s.Optimization.CapacitySearch
	if cs == nil {
		return nil
	}
	st := &cfg.Traffic.Stop
	var out []string
	if st.MaxVirtualTimeSeconds > 0 && cfg.Traffic.Load.Type != config.LoadTraceTimestamps {
		// A trace_timestamps probe replays its segment to the end instead (segmentStop).
		out = append(out, fmt.Sprintf("%s: traffic.stop.max_virtual_time_seconds (%g s) ends each probe: requests still in "+
			"flight then count as misses when already past an SLA bound and are left out of SLA attainment otherwise "+
			"(censored_requests), so the window must be long against request latency for each probe to measure enough requests "+
			"(with attainment %g, at most %g %% of the measured requests may miss the SLA)",
			s.File, st.MaxVirtualTimeSeconds, cs.Attainment, math.Round(1e9*100*(1-cs.Attainment))/1e9))
	}
	if w := s.droppedTimeStop(cfg); w != "" {
		out = append(out, w)
	}
	if cfg.Traffic.Load.Type != config.LoadConcurrency {
		return out
	}
	if w := shortSteadyRun(cfg); w != "" {
		out = append(out, s.File+": "+w)
	}
	if w := fixedLengths(cfg); w != "" && !s.searchesLengthDistribution() {
		out = append(out, s.File+": "+w)
	}
	if w := s.fixedThinkTime(cfg); w != "" {
		out = append(out, s.File+": "+w)
	}
	if n, what := fixedStop(st); n > 0 && cfg.Traffic.Load.Warmup() > 0 {
		w := cfg.Traffic.Load.Warmup()
		out = append(out, fmt.Sprintf("%s: traffic.stop.%s is a fixed %d with traffic.load.warmup_seconds %g s: the faster a "+
			"deployment serves them, the sooner its run ends, and a probe whose run ends within the warm-up measures no "+
			"request and fails its point, where a slower deployment at the same concurrency is measured; use "+
			"traffic.stop.%s_per_load_unit (its runs are lengthened past the warm-up)", s.File, what, n, w, what))
	}
	limit, n, what := FixedCountLimit(cfg)
	if n == 0 || float64(limit) >= cs.Max {
		return out
	}
	return append(out, fmt.Sprintf("%s: traffic.stop.%s is a fixed %d while optimization.capacity_search goes up to concurrency "+
		"%g: %s, so a probe above it fails its point; use traffic.stop.%s_per_load_unit to scale the run with the load, "+
		"or a capacity_search.max of at most %d", s.File, what, n, cs.Max, FixedCountWhy(limit, n, what), what, limit))
}

// FixedCountWhy says why concurrency limit is the most a fixed traffic.stop count n of what
// ("requests" or "sessions") can measure (FixedCountLimit), as a clause of a message.
func FixedCountWhy(limit, n int, what string) string {
	if limit == n {
		return fmt.Sprintf("above concurrency %d the loop never holds its load, every %s starting at once", n, strings.TrimSuffix(what, "s"))
	}
	return fmt.Sprintf("above concurrency %d a probe has fewer than %d %s per slot, too few to ramp its first wave and "+
		"measure past its warm-up", limit, MinSteadyRequestsPerSlot, what)
}

// droppedTimeStop is the warning for a capacity search over a trace_timestamps load whose stop
// gives max_virtual_time_seconds beside max_trace_seconds; "" otherwise. Every probe replays the
// max_trace_seconds segment to its end (segmentStop) and drops the time stop, which predict of the
// same config honours (it ends at whichever stop comes first): a field the search makes
// irrelevant, warned as the grid warns of the fields dropped from every point, not refused.
func (s *Spec) droppedTimeStop(cfg *config.Config) string {
	st := &cfg.Traffic.Stop
	if cfg.Traffic.Load.Type != config.LoadTraceTimestamps || st.MaxTraceSeconds <= 0 || st.MaxVirtualTimeSeconds <= 0 {
		return ""
	}
	var sets []string
	for _, p := range []string{"traffic.stop.max_trace_seconds", "traffic.stop.max_virtual_time_seconds"} {
		if set := config.SetFor(p, s.sets); set != "" && !slices.Contains(sets, "--set "+set) {
			sets = append(sets, "--set "+set)
		}
	}
	at := s.File
	if len(sets) > 0 {
		at += " (" + strings.Join(sets, ", ") + ")"
	}
	return fmt.Sprintf("%s: traffic.stop.max_virtual_time_seconds (%g s) beside traffic.stop.max_trace_seconds (%g s) is dropped from "+
		"every probe of the capacity search: each probe replays the first %g s of the trace to its end, whatever its speedup, and "+
		"ignores the time stop (predict of the same config ends at whichever stop comes first); the rows' config_yaml and the "+
		"recommendations carry max_trace_seconds alone; remove max_virtual_time_seconds", at, st.MaxVirtualTimeSeconds,
		st.MaxTraceSeconds, st.MaxTraceSeconds)
}

// fixedLengths is the warning for a capacity search over a concurrency load whose synthetic
// requests (or session turns) all have the same prompt and output length, unless the spec keeps
// the synchronized start (ramp_seconds: 0) on purpose; "" otherwise. Such a closed loop falls
// into step on its own, even with a ramp: requests batched together finish together and come
// back together, so the probes measure those waves and the capacity moves with the run's length
// (the built-in workload with fixed 512/64-token turns: p99 TTFT 280-350 ms for 90 s, then
// 620-680 ms, at 128 sessions on one disaggregated H100 deployment; 309-331 ms throughout with
// lengths drawn ±20 %).
func fixedLengths(cfg *config.Config) string {
	in, out := fixedLengthFields(cfg)
	if in == "" {
		return ""
	}
	return fmt.Sprintf("traffic.source.%s and %s are fixed: under a concurrency load requests of one length fall into "+
		"step (batched together, they finish together and come back together), so the capacity search measures those "+
		"waves and its answer moves with the run's length; draw them from a distribution, e.g. %s: {distribution: "+
		"uniform, min: ..., max: ...}", in, out, out)
}

// fixedLengthFields names the prompt and output length fields of cfg's synthetic source when
// every request has one length of each (oneLengthFields), and "" and "" when the spec keeps the
// synchronized start on purpose (ramp_seconds: 0).
func fixedLengthFields(cfg *config.Config) (in, out string) {
	if l := &cfg.Traffic.Load; l.RampSeconds != nil && *l.RampSeconds == 0 {
		return "", ""
	}
	return oneLengthFields(cfg)
}

// oneLengthFields names the prompt and output length fields of cfg's synthetic source when both
// give every request one length: input_tokens and output_tokens, or a session source's
// new_input_tokens_per_turn and output_tokens_per_turn, each a count or a distribution of one
// value (singleValue); "" and "" when either is drawn, and for any other source (a trace, a
// mixture).
func oneLengthFields(cfg *config.Config) (in, out string) {
	switch src := &cfg.Traffic.Source; {
	case src.Type == config.SourceSynthetic && singleValue(src.InputTokensDist) && singleValue(src.OutputTokensDist):
		return "input_tokens", "output_tokens"
	case src.Type == config.SourceSyntheticSession && singleValue(src.NewInputTokensPerTurnDist) && singleValue(src.OutputTokensPerTurnDist):
		return "new_input_tokens_per_turn", "output_tokens_per_turn"
	}
	return "", ""
}

// singleValue reports whether a token-count distribution draws one value only: none given (a
// fixed count), a uniform, normal or lognormal one clipped to min = max, a normal or lognormal one
// of standard deviation 0, or an empirical one whose values are all equal.
func singleValue(d *config.Distribution) bool {
	switch {
	case d == nil:
		return true
	case d.Distribution == config.DistEmpirical:
		return len(d.Values) > 0 && !slices.ContainsFunc(d.Values, func(v int) bool { return v != d.Values[0] })
	case d.Max > 0 && d.Min == d.Max:
		return true
	}
	return (d.Distribution == config.DistNormal || d.Distribution == config.DistLognormal) && d.Stddev == 0
}

// fixedThinkTime is the warning for a capacity search over a concurrency load of synthetic
// sessions (the source, or a component of a mixture) with a constant, positive think time,
// where kv_router chooses between rank slots (routesOverRanks) (inter_turn_delay_ms without
// inter_turn_delay_stddev_ms) routed by kv_router (router.policy, or one of its domain's values),
// unless the spec keeps the synchronized start (ramp_seconds: 0) on purpose; "" otherwise.
// kv_router sends a session's turns back to the replica that holds its KV, and sessions whose
// turns end in one pass come back in one instant: a replica's arrivals then fall into step over
// a long run. Measured 2026-12-04 on the built-in workload, H200 FP8, 8 replicas of TP1, 200
// sessions in flight, 3-minute runs: with a constant 100 ms, each replica's arrivals per 50 ms
// went from 1.4 to 4 times as dispersed as a Poisson stream's within 45 s and p99 ITL was 83 ms;
// with a standard deviation of 50 ms they stayed near 1 and p99 ITL was 39 ms. The capacity found
// was 302 sessions with 6 sessions per slot and 127 with 32.
func (s *Spec) fixedThinkTime(cfg *config.Config) string {
	l, src := &cfg.Traffic.Load, &cfg.Traffic.Source
	if l.RampSeconds != nil && *l.RampSeconds == 0 {
		return ""
	}
	sh := constantThinkTime(src)
	if sh == nil {
		return ""
	}
	kv := cfg.Router.Policy == config.PolicyKVRouter
	if d := findDomain(s.Domains, "router.policy"); d != nil {
		for _, v := range d.Values {
			kv = kv || v.Value == string(config.PolicyKVRouter)
		}
	}
	if !kv || !s.routesOverRanks(cfg) {
		return ""
	}
	return fmt.Sprintf("traffic.source.session.inter_turn_delay_ms is a constant %g ms under kv_router: a session's turns "+
		"return to the replica that holds its KV, sessions whose turns end together come back together, and over a long "+
		"run each replica's arrivals fall into step, so the capacity moves with the run's length; draw the think times "+
		"with traffic.source.session.inter_turn_delay_stddev_ms (AIPerf's --conversation-turn-delay-stddev), e.g. half "+
		"the mean", sh.InterTurnDelayMs)
}

// constantThinkTime is the session shape of src (the source, or the first component of a
// mixture that has one) whose think time is constant and positive (inter_turn_delay_ms without
// inter_turn_delay_stddev_ms), nil when none is.
func constantThinkTime(src *config.Source) *config.SessionShape {
	shapes := []*config.Source{src}
	if src.Type == config.SourceMixture {
		shapes = shapes[:0]
		for i := range src.Components {
			if c := src.Components[i].Source; c != nil {
				shapes = append(shapes, c)
			}
		}
	}
	for _, c := range shapes {
		if c.Type == config.SourceSyntheticSession && c.Session != nil && c.Session.Turns > 1 && c.Session.InterTurnDelayMs > 0 &&
			c.Session.InterTurnDelayStddevMs == 0 {
			return c.Session
		}
	}
	return nil
}

// routesOverRanks reports whether a router of some point of the spec chooses between rank
// slots: a worker role of cfg (a valid point's config) with replicas × attention_data > 1, a
// domain over a role's replicas or attention_data with a value above 1, or a domain over
// engine.mode (cfg then shows one mode's roles only). With one slot per role the policy places
// every request alike.
func (s *Spec) routesOverRanks(cfg *config.Config) bool {
	if findDomain(s.Domains, "engine.mode") != nil {
		return true
	}
	for _, w := range []*config.WorkerRole{cfg.Engine.Workers.Aggregated, cfg.Engine.Workers.Prefill, cfg.Engine.Workers.Decode} {
		if w != nil && w.Parallelism.Replicas*max(w.Parallelism.AttentionData, 1) > 1 {
			return true
		}
	}
	for _, d := range s.Domains {
		if !strings.HasSuffix(d.Path, ".parallelism.replicas") && !strings.HasSuffix(d.Path, ".parallelism.attention_data") {
			continue
		}
		for _, v := range d.Values {
			if n, err := strconv.Atoi(v.Value); err == nil && n > 1 {
				return true
			}
		}
	}
	return false
}

// Prices returns the cost section's prices by hardware id (nil without a cost section).
func (o Optimization) Prices() map[string]float64 {
	if o.Cost == nil {
		return nil
	}
	return maps.Clone(o.Cost.GPUHourUSD)
}

// shortSteadyRun is the warning for a concurrency load whose per-load-unit stop gives each slot
// fewer than MinSteadyRequestsPerSlot requests while the capacity search chooses the ramp
// (traffic.load.ramp_seconds omitted): the search lengthens its probes' runs to that many
// (sweep's slotLengthening), so that they reach a steady state, and says so here. "" otherwise.
func shortSteadyRun(cfg *config.Config) string {
	l, st, src := &cfg.Traffic.Load, &cfg.Traffic.Stop, &cfg.Traffic.Source
	if l.RampSeconds != nil || src.Type == config.SourceTrace {
		return ""
	}
	perSlot, key := st.RequestsPerLoadUnit, "requests_per_load_unit"
	if st.SessionsPerLoadUnit > 0 {
		if src.Session == nil {
			return "" // a mixture's sessions: their turns vary by component
		}
		perSlot, key = st.SessionsPerLoadUnit*float64(src.Session.Turns), "sessions_per_load_unit"
	}
	if perSlot <= 0 || perSlot >= MinSteadyRequestsPerSlot {
		return ""
	}
	return fmt.Sprintf("traffic.stop.%s (%g) gives each concurrency slot %g requests, fewer than the %d a capacity "+
		"probe needs to ramp its first wave and leave a warm-up out: the probes run %d per slot (stop_per_load_unit in "+
		"probes.parquet, and in each recommendation); set traffic.load.ramp_seconds to run the stop as given",
		key, st.RequestsPerLoadUnit+st.SessionsPerLoadUnit, perSlot, MinSteadyRequestsPerSlot, MinSteadyRequestsPerSlot)
}

// searchesLengthDistribution reports whether a domain searches a parameter of a length
// distribution (traffic.source.input_tokens.max, ...): the first point's lengths are then not
// every point's, and the fixed-length warnings, which judge from it, do not apply.
func (s *Spec) searchesLengthDistribution() bool {
	return slices.ContainsFunc(s.Domains, func(d Domain) bool {
		return strings.HasPrefix(d.Path, "traffic.source.") && strings.Count(d.Path, ".") > 2
	})
}
