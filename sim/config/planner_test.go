package config

import "testing"

// TestPlannerSettingsDefaults: the defaults of dynosim-spec.md §3.4, and the enable flags that
// follow the target.
func TestPlannerSettingsDefaults(t *testing.T) {
	s := (&Planner{Policy: "enabled"}).Settings()
	want := PlannerSettings{Enabled: true, LoadScaling: true, ThroughputIntervalS: 180, LoadIntervalS: 5, DownSensitivityPct: 80,
		MinObservations: 5, Predictor: "arima", KalmanQLevel: 1, KalmanQTrend: 0.1, KalmanR: 10, KalmanMinPoints: 5,
		MaxGPUs: 8, MinGPUs: -1, MinWorkers: 1}
	if s != want {
		t.Errorf("defaults %+v, want %+v", s, want)
	}
	if s := (&Planner{Policy: "enabled", Target: "sla"}).Settings(); !s.ThroughputScaling || s.LoadScaling {
		t.Errorf("target sla: %+v, want throughput scaling only", s)
	}
	if s := (&Planner{Policy: "enabled", DecodeMinWorkers: new(int)}).Settings(); s.RoleMinWorkers(RoleDecode) != 1 {
		t.Errorf("a pool keeps at least one worker")
	}
}

// TestDecodePlannerRules: the cross-field rules of an enabled planner are exit 2 naming the
// field; a valid planner decodes.
func TestDecodePlannerRules(t *testing.T) {
	mustDecode(t, seedSynthetic, "planner={policy: enabled, load_predictor: kalman}", "evaluation.sla={ttft_ms: 500}")
	mustDecode(t, seedSynthetic, "planner={policy: enabled, target: sla}", "evaluation.sla={ttft_ms: 500, itl_ms: 20}")
	cases := []struct {
		name string
		sets []string
		path string
		frag string
	}{
		{"load scaling without SLA", []string{"planner={policy: enabled}"}, "planner.enable_load_scaling", "needs evaluation.sla.ttft_ms or itl_ms"},
		{"throughput scaling without ITL", []string{"planner={policy: enabled, target: sla}", "evaluation.sla={ttft_ms: 500}"},
			"planner.enable_throughput_scaling", "needs evaluation.sla.ttft_ms and itl_ms"},
		{"intervals", []string{"planner={policy: enabled, enable_throughput_scaling: true, load_adjustment_interval_seconds: 200}",
			"evaluation.sla={ttft_ms: 500, itl_ms: 20}"}, "planner.load_adjustment_interval_seconds", "must be < throughput_adjustment_interval_seconds (180)"},
		{"initial GPUs over the budget", []string{"planner={policy: enabled, max_num_gpus: 1}", "evaluation.sla={ttft_ms: 500}"},
			"planner.max_num_gpus", "the deployment starts with 2 GPUs"},
		{"min over max", []string{"planner={policy: enabled, max_num_gpus: 4, min_num_gpus: 6}", "evaluation.sla={ttft_ms: 500}"},
			"planner.min_num_gpus", "must be <= max_num_gpus (4)"},
		// The seed starts with 2 replicas of 1 GPU: a floor above that could never be reached.
		{"min workers over replicas", []string{"planner={policy: enabled, min_workers: 3}", "evaluation.sla={ttft_ms: 500}"},
			"planner.min_workers", "the aggregated pool starts with 2 workers"},
		{"min GPUs over the start", []string{"planner={policy: enabled, min_num_gpus: 3}", "evaluation.sla={ttft_ms: 500}"},
			"planner.min_num_gpus", "the deployment starts with 2 GPUs; min_num_gpus must be <= 2"},
		{"tiny interval", []string{"planner={policy: enabled, load_adjustment_interval_seconds: 1e-9}", "evaluation.sla={ttft_ms: 500}"},
			"planner.load_adjustment_interval_seconds", "must be >= 0.01"},
	}
	for _, tc := range cases {
		errs := decodeErrs(t, seedSynthetic, tc.sets...)
		if findErr(errs, tc.path, tc.frag) == nil {
			t.Errorf("%s: want %s: %q, got:\n%v", tc.name, tc.path, tc.frag, errs)
		}
	}
}
