package optimization

import (
	"fmt"
	"strconv"
)

// GPUDemand is what a GPU budget judges of a point: the GPUs it starts with and, when its
// planner is enabled, the most GPUs the planner may grow it to during the run.
type GPUDemand struct {
	// GPUs is the point's GPU count as deployed: replicas × tensor × pipeline × attention_data,
	// summed over the roles its mode uses.
	GPUs int
	// Autoscaled is true when the point's planner.policy is enabled; PlannerMaxGPUs is then its
	// planner.max_num_gpus with the default filled in (-1: no bound).
	Autoscaled     bool
	PlannerMaxGPUs int
}

// GPUBudgetExclusion returns why a point of demand d is outside the GPU budget [minGPUs,
// maxGPUs] (0 on either side: no bound there), or "" when it is within. It is the one rule the
// sweep's filter (optimization.constraints.min_candidate_gpus/max_candidate_gpus, before
// simulation) and the report's candidates (--min-gpus/--max-gpus, or the sweep's settings) both
// apply, so that they cannot disagree on a point:
//
//   - the GPUs a point starts with must be within both bounds;
//   - an autoscaled point's ceiling must be within the maximum too: its planner may grow it to
//     planner.max_num_gpus during the run, and -1 (no bound) is over any maximum. The minimum
//     judges the starting GPUs only.
//
// of names where the bounds come from ("optimization.constraints"); "" leaves it out of the
// reason.
func GPUBudgetExclusion(d GPUDemand, minGPUs, maxGPUs int, of string) string {
	if of != "" {
		of = " of " + of
	}
	if d.GPUs < minGPUs || maxGPUs > 0 && d.GPUs > maxGPUs {
		upper := "no bound"
		if maxGPUs > 0 {
			upper = strconv.Itoa(maxGPUs)
		}
		unit := "GPUs"
		if d.GPUs == 1 {
			unit = "GPU"
		}
		return fmt.Sprintf("%d %s, outside the budget [%d, %s]%s", d.GPUs, unit, max(minGPUs, 1), upper, of)
	}
	if d.Autoscaled && maxGPUs > 0 && (d.PlannerMaxGPUs < 0 || d.PlannerMaxGPUs > maxGPUs) {
		ceiling := "no bound (-1)"
		if d.PlannerMaxGPUs > 0 {
			ceiling = fmt.Sprintf("%d GPUs", d.PlannerMaxGPUs)
		}
		return fmt.Sprintf("the planner may grow it to %s (planner.max_num_gpus), over the budget's %d%s", ceiling, maxGPUs, of)
	}
	return ""
}
