package results

import (
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/optimization"
)

// A row's GPU budget is the sweep's (optimization.GPUBudgetExclusion): its starting GPUs and,
// when its config_yaml enables the planner, the planner's ceiling (max_num_gpus, default 8, -1
// none), which a maximum bounds too. A disabled planner or none leaves the starting GPUs alone.
func TestGPUBudgetExclusionOfARow(t *testing.T) {
	const engine = "engine:\n  workers:\n    aggregated:\n      parallelism: {replicas: 2, tensor: 1}\n"
	for _, tc := range []struct {
		planner  string
		min, max int
		want     string
	}{
		{"", 0, 2, ""},
		{"planner: {policy: disabled}\n", 0, 2, ""},
		{"planner: {policy: enabled, max_num_gpus: 2}\n", 0, 2, ""},
		{"planner: {policy: enabled, max_num_gpus: 8}\n", 0, 2, "the planner may grow it to 8 GPUs (planner.max_num_gpus), over the budget's 2"},
		{"planner: {policy: enabled}\n", 0, 4, "the planner may grow it to 8 GPUs (planner.max_num_gpus), over the budget's 4"},
		{"planner:\n  policy: enabled\n  max_num_gpus: -1\n", 0, 32, "the planner may grow it to no bound (-1) (planner.max_num_gpus), over the budget's 32"},
		{"planner: {policy: enabled, max_num_gpus: -1}\n", 1, 0, ""},
		{"planner: {policy: enabled, max_num_gpus: 8}\n", 3, 8, "2 GPUs, outside the budget [3, 8]"},
		{"", 0, 1, "2 GPUs, outside the budget [1, 1]"},
	} {
		r := &Row{PointID: "p", GPUs: 2, ConfigYAML: engine + tc.planner}
		if strings.Contains(tc.planner, "enabled") {
			r.PeakGPUs = i64(3) // an autoscaled run's
		}
		s := optimization.Settings{MinGPUs: tc.min, MaxGPUs: tc.max}
		if got := GPUBudgetExclusion(r, s); got != tc.want {
			t.Errorf("%q within [%d, %d]: %q, want %q", tc.planner, tc.min, tc.max, got, tc.want)
		}
	}
	// A row without a run's peak_gpus (a point that failed before its summary) is judged by its
	// starting GPUs: its config is not decoded.
	r := &Row{PointID: "p", GPUs: 2, ConfigYAML: engine + "planner: {policy: enabled, max_num_gpus: 8}\n"}
	if got := GPUBudgetExclusion(r, optimization.Settings{MaxGPUs: 2}); got != "" {
		t.Errorf("no peak_gpus: %q, want within", got)
	}
}
