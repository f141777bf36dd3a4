package grid

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"gopkg.in/yaml.v3"
)

// section reads the mapping n at path into key → value, reporting unknown and duplicate keys.
// ok is false when n is not a mapping (null counts as an empty mapping).
func (p *parser) section(n *yaml.Node, path string, known []string) (map[string]*yaml.Node, bool) {
	m := map[string]*yaml.Node{}
	if n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return m, true
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(path, "must be a mapping, got %s", describe(n))
		return m, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		kp := join(path, k)
		switch {
		case !slices.Contains(known, k):
			p.errorf(kp, "unknown field; valid fields: %s", strings.Join(known, ", "))
		case m[k] != nil:
			p.errorf(kp, "duplicate key")
		default:
			m[k] = n.Content[i+1]
		}
	}
	return m, true
}

// intField decodes an int >= lo.
func (p *parser) intField(n *yaml.Node, path string, lo int) (int, bool) {
	var x int
	if msg := config.LeadingZeroNumeral(n); msg != "" {
		p.errorf(path, "must be an int >= %d, got %s", lo, msg)
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&x) != nil {
		p.errorf(path, "must be an int >= %d, got %s", lo, describe(n))
		return 0, false
	}
	if x < lo {
		p.errorf(path, "must be an int >= %d, got %d", lo, x)
		return 0, false
	}
	return x, true
}

// posFloat decodes a finite number > 0.
func (p *parser) posFloat(n *yaml.Node, path string) (float64, bool) {
	x, ok := number(n)
	if !ok || x <= 0 {
		p.errorf(path, "must be a number > 0, got %s", describeNumber(n))
		return 0, false
	}
	return x, true
}

// str decodes a string scalar.
func (p *parser) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.errorf(path, "must be a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// optimization parses the optimization section (dynosim-spec.md §3.7); n may be nil.
func (p *parser) optimization(n *yaml.Node) Optimization {
	const path = "optimization"
	o := Optimization{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives(),
		MaxCandidateGPUs: DefaultMaxCandidateGPUs}
	m, ok := p.section(n, path, []string{"target", "objectives", "constraints", "strict_sla", "hardware",
		"capacity_search", "cost"})
	if !ok {
		return o
	}
	if v := m["hardware"]; v != nil {
		p.errorf(path+".hardware", "selects the hardware for engine.hardware: auto, which servesweep sweep does not support; remove it and set engine.hardware")
	}
	if v := m["target"]; v != nil {
		if s, ok := p.str(v, path+".target"); ok {
			if slices.Contains(optimization.Targets(), s) {
				o.Target = s
			} else {
				p.errorf(path+".target", "must be one of %s, got %q", strings.Join(optimization.Targets(), ", "), s)
			}
		}
	}
	if v := m["objectives"]; v != nil {
		o.Objectives = p.objectives(v, path+".objectives")
	}
	// null or false leaves a section off (so --set can turn one off); true turns the capacity
	// search on with its defaults, as {} does.
	if v := m["capacity_search"]; v != nil && !off(v) {
		if isTrue(v) {
			v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		if v.Kind == yaml.ScalarNode {
			p.errorf(path+".capacity_search", "must be true, false, null or a mapping of its settings ({} for the defaults; "+
				"attainment, min, max, relative_tolerance, max_probes), got %s", describeNumber(v))
		} else {
			o.CapacitySearch = p.capacitySearch(v, path+".capacity_search")
		}
	}
	if v := m["cost"]; v != nil && !off(v) {
		o.Cost = p.cost(v, path+".cost")
	}
	for i, obj := range o.Objectives {
		if costColumn(obj.Metric) && o.Cost == nil {
			p.errorf(fmt.Sprintf("%s.objectives[%d].metric", path, i), "%s needs optimization.cost.gpu_hour_usd "+
				"(USD per GPU-hour of each hardware in the grid)", obj.Metric)
		}
	}
	if v := m["strict_sla"]; v != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&o.StrictSLA) != nil {
			p.errorf(path+".strict_sla", "must be true or false, got %s", describe(v))
		}
	}
	if v := m["constraints"]; v != nil {
		cp := path + ".constraints"
		cm, _ := p.section(v, cp, []string{"min_candidate_gpus", "max_candidate_gpus", "min_goodput_rps", "max_rejected_ratio",
			"max_cost_usd_per_hour", "max_usd_per_million_output_tokens"})
		if x := cm["min_candidate_gpus"]; x != nil {
			o.MinCandidateGPUs, _ = p.intField(x, cp+".min_candidate_gpus", 1)
			if o.MinCandidateGPUs == 1 {
				// Every point has a GPU: 1 is no bound, and an explicit 1 must not read as a
				// change of the analysis settings beside a spec that leaves it unset.
				o.MinCandidateGPUs = 0
			}
		}
		if x := cm["max_candidate_gpus"]; x != nil {
			if g, ok := p.intField(x, cp+".max_candidate_gpus", 1); ok {
				o.MaxCandidateGPUs = g
			}
		}
		if o.MinCandidateGPUs > o.MaxCandidateGPUs {
			p.errorf(cp+".min_candidate_gpus", "must be <= max_candidate_gpus (%d), got %d", o.MaxCandidateGPUs, o.MinCandidateGPUs)
		}
		if x := cm["min_goodput_rps"]; x != nil {
			if o.Target != optimization.TargetMinGPUs {
				p.errorf(cp+".min_goodput_rps", "only valid with optimization.target: min_gpus, got target %s", o.Target)
			} else {
				o.MinGoodputRPS, _ = p.posFloat(x, cp+".min_goodput_rps")
			}
		}
		if x := cm["max_rejected_ratio"]; x != nil {
			if r, ok := number(x); ok && r >= 0 && r <= 1 {
				o.MaxRejectedRatio = r
			} else {
				p.errorf(cp+".max_rejected_ratio", "must be a number in [0, 1] (the largest share of offered requests "+
					"a point may reject or truncate and stay a candidate), got %s", describeNumber(x))
			}
		}
		for _, c := range []struct {
			key string
			dst *float64
		}{{"max_cost_usd_per_hour", &o.MaxCostUSDPerHour}, {"max_usd_per_million_output_tokens", &o.MaxUSDPerMillionOutputTokens}} {
			x := cm[c.key]
			if x == nil {
				continue
			}
			if o.Cost == nil {
				p.errorf(cp+"."+c.key, "needs optimization.cost.gpu_hour_usd (USD per GPU-hour of each hardware in the grid)")
			} else if v, ok := p.posFloat(x, cp+"."+c.key); ok {
				*c.dst = v
			}
		}
	}
	return o
}

// metricError is the error of checkMetric for name (nil without a checkMetric).
func (p *parser) metricError(name string) error {
	if p.checkMetric == nil {
		return nil
	}
	return p.checkMetric(name)
}

// objectives parses a list of {metric, direction} mappings.
func (p *parser) objectives(n *yaml.Node, path string) []optimization.Objective {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(path, "must be a non-empty list of {metric: NAME, direction: maximize|minimize}")
		return optimization.DefaultObjectives()
	}
	var out []optimization.Objective
	seen := map[string]bool{}
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		m, ok := p.section(item, ip, []string{"metric", "direction"})
		if !ok {
			continue
		}
		var o optimization.Objective
		if v := m["metric"]; v == nil {
			p.errorf(ip+".metric", "required: a numeric column of results.parquet, e.g. p99_ttft_ms")
			ok = false
		} else if s, good := p.str(v, ip+".metric"); good {
			if err := p.metricError(s); err != nil {
				p.errorf(ip+".metric", "%v", err)
				ok = false
			} else if seen[s] {
				p.errorf(ip+".metric", "%s is already an objective", s)
				ok = false
			}
			o.Metric = s
			seen[s] = true
		} else {
			ok = false
		}
		if v := m["direction"]; v == nil {
			p.errorf(ip+".direction", "required: maximize or minimize")
			ok = false
		} else if s, good := p.str(v, ip+".direction"); good {
			d, err := optimization.ParseDirection(s)
			if err != nil {
				p.errorf(ip+".direction", "%v", err)
				ok = false
			}
			o.Direction = d
		} else {
			ok = false
		}
		if ok {
			out = append(out, o)
		}
	}
	return out
}

// optimizer parses the optimizer section; n may be nil.
func (p *parser) optimizer(n *yaml.Node) Optimizer {
	const path = "optimizer"
	o := Optimizer{Algorithm: AlgorithmGrid, MaxTrials: DefaultMaxTrials, Seed: DefaultSeed,
		Parallelism: defaultParallelism(), CandidateTimeout: DefaultCandidateTimeout}
	m, ok := p.section(n, path, []string{"algorithm", "max_trials", "parallelism", "candidate_timeout_seconds", "seed"})
	if !ok {
		return o
	}
	if v := m["algorithm"]; v != nil {
		if s, ok := p.str(v, path+".algorithm"); ok {
			switch s {
			case AlgorithmGrid, AlgorithmRandom:
				o.Algorithm = s
			case "bayesian":
				p.errorf(path+".algorithm", "bayesian is not supported by servesweep; use grid (every valid point) or random (max_trials points)")
			default:
				p.errorf(path+".algorithm", "must be grid or random, got %q", s)
			}
		}
	}
	if v := m["max_trials"]; v != nil {
		if o.Algorithm != AlgorithmRandom {
			p.errorf(path+".max_trials", "only valid with algorithm: random (grid simulates every valid point)")
		} else if x, ok := p.intField(v, path+".max_trials", 1); ok {
			o.MaxTrials = x
		}
	}
	if v := m["parallelism"]; v != nil {
		if x, ok := p.intField(v, path+".parallelism", 1); ok {
			o.Parallelism = x
		}
	}
	if v := m["candidate_timeout_seconds"]; v != nil {
		if x, ok := p.posFloat(v, path+".candidate_timeout_seconds"); ok {
			o.CandidateTimeout = time.Duration(x * float64(time.Second))
		}
	}
	if v := m["seed"]; v != nil {
		var s uint64
		if o.Algorithm != AlgorithmRandom {
			// As max_trials: a seed grid would ignore is refused rather than seeming to matter.
			p.errorf(path+".seed", "only valid with algorithm: random (grid simulates every valid point; nothing is drawn)")
		} else if msg := config.LeadingZeroNumeral(v); msg != "" {
			p.errorf(path+".seed", "must be an int >= 0, got %s", msg)
		} else if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&s) != nil {
			p.errorf(path+".seed", "must be an int >= 0, got %s", describe(v))
		} else {
			o.Seed = s
		}
	}
	return o
}

// costColumn reports whether metric is one of the cost columns, which need optimization.cost.
func costColumn(metric string) bool {
	return metric == "cost_usd_per_hour" || metric == "usd_per_million_output_tokens"
}

// off reports whether n is null or false: a switchable section left off.
func off(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" && !isTrue(n))
}

// isTrue reports whether n is the boolean true.
func isTrue(n *yaml.Node) bool {
	var b bool
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" && n.Decode(&b) == nil && b
}
