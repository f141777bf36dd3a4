package grid

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
	"gopkg.in/yaml.v3"
)

// Defaults of optimization.capacity_search.
const (
	DefaultCapacityAttainment = 0.99
	DefaultCapacityMin        = 1
	DefaultCapacityMax        = 4096
	DefaultCapacityTolerance  = 0.05
	DefaultCapacityMaxProbes  = 16
)

// CapacitySearch is optimization.capacity_search: for each deployment, find the largest load
// intensity (traffic.load's concurrency, requests_per_second, sessions_per_second or speedup,
// whichever the load type uses; Unit names it) at which SLA attainment, goodput_completed_requests
// / offered_requests under evaluation.sla, is at least Attainment. Min and Max bound the search
// and RelativeTolerance is the width, relative to the capacity found, below which the search
// stops; MaxProbes bounds the simulations per deployment. sweep.SearchCapacity runs it.
type CapacitySearch struct {
	Attainment, Min, Max, RelativeTolerance float64
	MaxProbes                               int
}

// Cost is optimization.cost: GPUHourUSD maps a hardware id (as timing.ResolveHardwareID
// resolves it, so h100 and h100_sxm are one key) to its price in USD per GPU-hour. servesweep
// has no built-in prices.
type Cost struct {
	GPUHourUSD map[string]float64
}

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
				"evaluation.sla), got %s", describe(v))
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
	if cs.Min > cs.Max {
		p.errorf(path+".min", "must be <= max (%g), got %g", cs.Max, cs.Min)
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
	c := &Cost{GPUHourUSD: map[string]float64{}}
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
		if _, dup := c.GPUHourUSD[id]; dup {
			p.errorf(kp, "a second price for hardware %s", id)
			continue
		}
		if x, ok := p.posFloat(v.Content[i+1], kp); ok {
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
				Msg: fmt.Sprintf("the deployment's config is invalid at load %g (%s): %s", b.x, LoadUnit(p.Config), msg)})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkCost sets each point's GPUHourUSD from the cost section; a hardware without a price is an
// error naming it and the points that use it.
func (s *Spec) checkCost(points []Point) error {
	c := s.Optimization.Cost
	if c == nil {
		return nil
	}
	missing := map[string]int{}
	for i := range points {
		id, _ := timing.ResolveHardwareID(points[i].Config.Engine.Hardware)
		price, ok := c.GPUHourUSD[id]
		if !ok {
			missing[id]++
			continue
		}
		points[i].GPUHourUSD = price
	}
	if len(missing) == 0 {
		return nil
	}
	var errs config.Errors
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		errs = append(errs, &config.Error{File: s.File, Path: "optimization.cost.gpu_hour_usd",
			Msg: fmt.Sprintf("no price for hardware %s (used by %d points); add %s: <USD per GPU-hour>", id, missing[id], id)})
	}
	return errs
}

// LoadUnit names the field that sets cfg's load intensity (what a capacity search varies):
// concurrency, requests_per_second, sessions_per_second or speedup.
func LoadUnit(cfg *config.Config) string {
	l := &cfg.Traffic.Load
	switch {
	case l.Type == config.LoadConcurrency:
		return "concurrency"
	case l.Type == config.LoadTraceTimestamps:
		return "speedup"
	case l.SessionsPerSecond > 0:
		return "sessions_per_second"
	default:
		return "requests_per_second"
	}
}

// AtLoad returns the point's config and YAML with the load intensity (the field LoadUnit names)
// set to x, decoded and validated as any point is: an error is the config error a spec with
// that value would get (a stop that scales with the load beyond config.MaxRequests, say).
func (p *Point) AtLoad(x float64) (*config.Config, []byte, error) {
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
	field := LoadUnit(p.Config)
	val := &yaml.Node{Kind: yaml.ScalarNode, Value: formatLoad(x, field == "concurrency")}
	if v := child(load, field); v != nil {
		*v = *val
	} else {
		load.Content = append(load.Content, scalar("!!str", field), val)
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

// formatLoad writes a load value as YAML: a whole number for a concurrency, else the shortest
// decimal that reads back as x.
func formatLoad(x float64, whole bool) string {
	if whole {
		return strconv.FormatInt(int64(math.Round(x)), 10)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// capacityWarnings warns about a capacity search over a concurrency with a fixed request or
// session count: at a concurrency above the count every request is in flight from the start, so
// the probes measure one burst rather than a sustained load.
func (s *Spec) capacityWarnings(cfg *config.Config) []string {
	cs := s.Optimization.CapacitySearch
	if cs == nil || cfg.Traffic.Load.Type != config.LoadConcurrency {
		return nil
	}
	st := &cfg.Traffic.Stop
	n, what := st.Requests, "requests"
	if st.Sessions > 0 {
		n, what = st.Sessions, "sessions"
	}
	if n == 0 || float64(n) >= cs.Max {
		return nil
	}
	return []string{fmt.Sprintf("%s: traffic.stop.%s is a fixed %d while optimization.capacity_search goes up to concurrency "+
		"%g: above %d every %s is in flight from the start, so those probes measure one burst; "+
		"use traffic.stop.%s_per_load_unit to scale the run with the load", s.File, what, n, cs.Max, n, strings.TrimSuffix(what, "s"), what)}
}
