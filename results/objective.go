package results

import (
	"fmt"
	"github.com/servesweep/servesweep/sim/optimization"
	"math"
	"slices"
	"strings"
)

// CheckMetric returns an error unless name is a numeric column of results.parquet that describes
// a deployment (not a host-time column, not point_index).
func CheckMetric(name string) error {
	if slices.Contains(HostTimeColumns(), name) {
		return fmt.Errorf("metric %q measures the host that ran the simulation, not the deployment: it differs from run to run "+
			"and machine to machine, so it cannot rank deployments; use a simulated column such as output_throughput_tok_s", name)
	}
	if name == "point_index" {
		return fmt.Errorf("column %q numbers the grid's points in expansion order: it says nothing of a deployment, so it cannot rank "+
			"deployments; use a simulated column such as output_throughput_tok_s", name)
	}
	if slices.Contains(NumericColumns(), name) {
		return nil
	}
	if i := slices.IndexFunc(Columns(), func(c Column) bool { return c.Name == name }); i >= 0 {
		return fmt.Errorf("column %q holds %s values, not numbers, so it cannot rank deployments; use a numeric column such as "+
			"output_throughput_per_gpu_tok_s or p99_ttft_ms (servesweep list metrics prints them all)", name, Columns()[i].Type)
	}
	return fmt.Errorf("unknown metric %q; use a numeric column of results.parquet such as "+
		"output_throughput_per_gpu_tok_s, output_throughput_tok_s, p99_ttft_ms, p99_itl_ms, "+
		"mean_tpot_ms, p99_e2e_latency_ms, goodput_output_throughput_tok_s or gpus (servesweep list metrics prints them all)", name)
}

// ParseObjective parses "max:METRIC" or "min:METRIC" (also "maximize:" and "minimize:"), the
// form of the report command's --objective flag.
func ParseObjective(s string) (optimization.Objective, error) {
	dir, metric, ok := strings.Cut(s, ":")
	if !ok {
		return optimization.Objective{}, fmt.Errorf("objective %q: write max:METRIC or min:METRIC, e.g. min:p99_ttft_ms", s)
	}
	d, err := optimization.ParseDirection(dir)
	if err != nil {
		if _, errBack := optimization.ParseDirection(metric); errBack == nil {
			// METRIC:DIRECTION, the other order.
			return optimization.Objective{}, fmt.Errorf("objective %q: the direction comes first: write %s:%s", s, metric, dir)
		}
		return optimization.Objective{}, fmt.Errorf("objective %q: write max:METRIC or min:METRIC, e.g. min:p99_ttft_ms (%v)", s, err)
	}
	if err := CheckMetric(metric); err != nil {
		return optimization.Objective{}, fmt.Errorf("objective %q: %v", s, err)
	}
	return optimization.Objective{Metric: metric, Direction: d}, nil
}

// HasSLA reports whether r carries an evaluation.sla bound, per-request or percentile.
func HasSLA(r *Row) bool {
	return r.SLATTFTMs != nil || r.SLAITLMs != nil || r.SLAE2EMs != nil || len(r.PercentileBounds()) > 0
}

// TargetValue is the column a scalar target ranks by and its value for row r (as the ranking
// reads it: score), or ok false for the pareto target.
func TargetValue(r *Row, target string) (metric string, value float64, ok bool) {
	o, scalar := optimization.TargetObjective(target)
	if !scalar {
		return "", 0, false
	}
	return o.Metric, score(r, o), true
}

// score is the value of objective o for row r: a missing value reads 0 for a maximized
// objective and +Inf for a minimized one, so it ranks worst (dynosim-spec.md §5.5).
func score(r *Row, o optimization.Objective) float64 {
	x, ok, _ := numericValue(r, o.Metric)
	if !ok || math.IsNaN(x) {
		if o.Direction == optimization.Maximize {
			return 0
		}
		return math.Inf(1)
	}
	return x
}
