package optimization

import "testing"

// TestGPUBudgetExclusion holds the GPU budget's rule to its cases: the starting GPUs within both
// bounds, an autoscaled point's planner ceiling (-1: none) within the maximum, no maximum (0)
// admitting any ceiling, and the reasons as the sweep and the report give them.
func TestGPUBudgetExclusion(t *testing.T) {
	for _, tc := range []struct {
		d        GPUDemand
		min, max int
		of, want string
	}{
		{GPUDemand{GPUs: 2}, 0, 2, "optimization.constraints", ""},
		{GPUDemand{GPUs: 4}, 0, 2, "optimization.constraints", "4 GPUs, outside the budget [1, 2] of optimization.constraints"},
		{GPUDemand{GPUs: 1}, 2, 0, "", "1 GPU, outside the budget [2, no bound]"},
		{GPUDemand{GPUs: 2, Autoscaled: true, PlannerMaxGPUs: 2}, 0, 2, "", ""},
		{GPUDemand{GPUs: 2, Autoscaled: true, PlannerMaxGPUs: 8}, 0, 2, "optimization.constraints",
			"the planner may grow it to 8 GPUs (planner.max_num_gpus), over the budget's 2 of optimization.constraints"},
		{GPUDemand{GPUs: 1, Autoscaled: true, PlannerMaxGPUs: -1}, 0, 32, "",
			"the planner may grow it to no bound (-1) (planner.max_num_gpus), over the budget's 32"},
		{GPUDemand{GPUs: 1, Autoscaled: true, PlannerMaxGPUs: -1}, 1, 0, "", ""},
		{GPUDemand{GPUs: 4, Autoscaled: true, PlannerMaxGPUs: 8}, 0, 2, "", "4 GPUs, outside the budget [1, 2]"},
	} {
		if got := GPUBudgetExclusion(tc.d, tc.min, tc.max, tc.of); got != tc.want {
			t.Errorf("GPUBudgetExclusion(%+v, %d, %d, %q) = %q, want %q", tc.d, tc.min, tc.max, tc.of, got, tc.want)
		}
	}
}
