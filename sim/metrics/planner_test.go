package metrics

import (
	"maps"
	"slices"
	"testing"
)

// A pool the planner scales from 4 workers to 1 at 25, 55 and 85 s, beside a prefill pool of 2
// GPUs per worker that grows from 1 to 2 at 85 s, over a 200 s run: its changes are at 25, 55
// and 85 s, its whole-run worker-seconds 4 × 25 + 3 × 30 + 2 × 30 + 1 × 115 = 365 and
// 85 + 2 × 115 = 315, and over the steady window (50, 200] s 3 × 5 + 2 × 30 + 1 × 115 = 190 and
// 35 + 2 × 115 = 265 (GPU-seconds 190 + 530 = 720: 4.8 GPUs on average in the window, where the
// whole run averages (365 + 630) / 200 = 4.975).
func TestPlannerWindowProvisioning(t *testing.T) {
	pools := []PoolTimeline{
		{Pool: "decode", GPUsPerWorker: 1, Steps: []WorkerStep{{0, 4}, {25000, 3}, {55000, 2}, {85000, 1}}},
		{Pool: "prefill", GPUsPerWorker: 2, Steps: []WorkerStep{{0, 1}, {85000, 2}}},
	}
	s := &Summary{DurationMs: 200000}
	r := buildPlanner(s, pools, nil)
	if s.DecodeWorkerSeconds != 365 || s.PrefillWorkerSeconds != 315 {
		t.Errorf("whole-run worker-seconds %g decode, %g prefill; want 365 and 315", s.DecodeWorkerSeconds, s.PrefillWorkerSeconds)
	}
	// GPUs over both pools: 4 + 2 = 6 at the start, 5 at 25 s, 4 at 55 s, 1 + 4 = 5 at 85 s.
	if want := []GPUChange{{25000, 5}, {55000, 4}, {85000, 5}}; r.StartGPUs != 6 || !slices.Equal(r.Changes, want) || r.PeakGPUs != 6 {
		t.Errorf("start %d GPUs, changes %v, peak %d GPUs; want 6, %v and 6", r.StartGPUs, r.Changes, r.PeakGPUs, want)
	}
	if r.WindowMs != 0 || r.WindowWorkerSeconds != nil {
		t.Errorf("a window before one was measured: %g ms, %v", r.WindowMs, r.WindowWorkerSeconds)
	}
	r.setWindow(pools, 50000, 200000)
	if want := map[string]float64{"decode": 190, "prefill": 265}; r.WindowMs != 150000 || !maps.Equal(r.WindowWorkerSeconds, want) {
		t.Errorf("window %g ms, worker-seconds %v; want 150000 and %v", r.WindowMs, r.WindowWorkerSeconds, want)
	}
}
