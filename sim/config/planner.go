package config

import (
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
)

// Planner targets (planner.target) and load predictors (planner.load_predictor).
const (
	PlannerTargetSLA = "sla"

	PredictorConstant = "constant"
	PredictorARIMA    = "arima"
	PredictorKalman   = "kalman"
	PredictorProphet  = "prophet"
)

// PlannerSettings is planner with every omitted key at its default (dynosim-spec.md §3.4), as
// the simulation applies it.
type PlannerSettings struct {
	// Enabled is policy enabled.
	Enabled bool
	// ThroughputScaling and LoadScaling are the enable_* flags; both default from the target:
	// throughput scaling for target sla, load scaling for every other target.
	ThroughputScaling, LoadScaling bool
	// ThroughputIntervalS (default 180) and LoadIntervalS (default 5) are the adjustment
	// intervals in virtual seconds.
	ThroughputIntervalS, LoadIntervalS float64
	// DownSensitivityPct (default 80) is the percentage of the SLA every worker must stay below
	// for load-based scaling to remove a worker.
	DownSensitivityPct float64
	// MinObservations (default 5) is the number of load ticks observed before load-based scaling
	// decides.
	MinObservations int
	// Predictor (default arima) and Log1p (default false) forecast the next throughput interval.
	Predictor string
	Log1p     bool
	// KalmanQLevel (1.0), KalmanQTrend (0.1), KalmanR (10.0) and KalmanMinPoints (5) are the
	// kalman predictor's parameters.
	KalmanQLevel, KalmanQTrend, KalmanR float64
	KalmanMinPoints                     int
	// MaxGPUs (default 8) caps the GPUs of all pools together, -1 unlimited; MinGPUs (default
	// -1, unset) is their floor.
	MaxGPUs, MinGPUs int
	// MinWorkers (default 1) is every pool's floor; PrefillMinWorkers and DecodeMinWorkers
	// replace it for those pools when set (0 when unset).
	MinWorkers, PrefillMinWorkers, DecodeMinWorkers int
}

// setGiven stores *src in *dst when the YAML gave src (non-nil), keeping dst's default otherwise.
func setGiven[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// Settings returns p with the defaults of dynosim-spec.md §3.4 filled in.
func (p *Planner) Settings() PlannerSettings {
	s := PlannerSettings{
		Enabled: p.Policy == plannerEnabled, ThroughputIntervalS: 180, LoadIntervalS: 5, DownSensitivityPct: 80,
		MinObservations: 5, Predictor: PredictorARIMA, KalmanQLevel: 1.0, KalmanQTrend: 0.1, KalmanR: 10.0,
		KalmanMinPoints: 5, MaxGPUs: 8, MinGPUs: -1, MinWorkers: 1,
	}
	s.ThroughputScaling = p.Target == PlannerTargetSLA
	s.LoadScaling = !s.ThroughputScaling
	setGiven(&s.ThroughputScaling, p.EnableThroughputScaling)
	setGiven(&s.LoadScaling, p.EnableLoadScaling)
	setGiven(&s.ThroughputIntervalS, p.ThroughputAdjustmentIntervalSeconds)
	setGiven(&s.LoadIntervalS, p.LoadAdjustmentIntervalSeconds)
	setGiven(&s.DownSensitivityPct, p.LoadScalingDownSensitivity)
	setGiven(&s.MinObservations, p.LoadMinObservations)
	if p.LoadPredictor != "" {
		s.Predictor = p.LoadPredictor
	}
	setGiven(&s.Log1p, p.LoadPredictorLog1p)
	setGiven(&s.KalmanQLevel, p.KalmanQLevel)
	setGiven(&s.KalmanQTrend, p.KalmanQTrend)
	setGiven(&s.KalmanR, p.KalmanR)
	setGiven(&s.KalmanMinPoints, p.KalmanMinPoints)
	setGiven(&s.MaxGPUs, p.MaxNumGPUs)
	setGiven(&s.MinGPUs, p.MinNumGPUs)
	setGiven(&s.MinWorkers, p.MinWorkers)
	setGiven(&s.PrefillMinWorkers, p.PrefillMinWorkers)
	setGiven(&s.DecodeMinWorkers, p.DecodeMinWorkers)
	return s
}

// GPUDemand is what a GPU budget judges of a deployment of gpus GPUs under planner p
// (optimization.GPUBudgetExclusion): its GPUs and, with the planner enabled, the ceiling
// max_num_gpus (default 8, -1: no bound) the planner may grow it to. The sweep's filter and the
// report's candidates both take a point's demand from here.
func (p *Planner) GPUDemand(gpus int) optimization.GPUDemand {
	d := optimization.GPUDemand{GPUs: gpus}
	if s := p.Settings(); s.Enabled {
		d.Autoscaled, d.PlannerMaxGPUs = true, s.MaxGPUs
	}
	return d
}

// RoleMinWorkers is the floor of role r's pool: prefill_min_workers or decode_min_workers when
// set, else min_workers, and at least 1 (a pool of no workers could not take the requests the
// router places on it).
func (s PlannerSettings) RoleMinWorkers(r Role) int {
	n := s.MinWorkers
	switch {
	case r == RolePrefill && s.PrefillMinWorkers > 0:
		n = s.PrefillMinWorkers
	case r == RoleDecode && s.DecodeMinWorkers > 0:
		n = s.DecodeMinWorkers
	}
	return max(n, 1)
}

// plannerRules checks the cross-field rules of an enabled planner: load-based scaling needs an
// SLA TTFT or ITL bound (the latencies it scales to), throughput-based scaling both; with both
// on, the load interval is shorter than the throughput interval; the deployment's initial GPUs
// are within [min_num_gpus, max_num_gpus].
func (v *validator) plannerRules(c *Config) {
	p := &c.Planner
	if p.Policy != plannerEnabled {
		return
	}
	for _, e := range v.errs {
		if strings.HasPrefix(e.Path, "planner.") || v.bad("planner") {
			return // a bad planner value is reported on its own
		}
	}
	s := p.Settings()
	sla := c.Evaluation.SLA
	ttft, itl := sla != nil && sla.TTFTMs != nil, sla != nil && sla.ITLMs != nil
	if s.LoadScaling && !ttft && !itl {
		v.errorf("planner.enable_load_scaling", "load-based scaling needs evaluation.sla.ttft_ms or itl_ms (the latencies it scales to); "+
			"set one, or enable_load_scaling: false")
	}
	if s.ThroughputScaling && (!ttft || !itl) {
		v.errorf("planner.enable_throughput_scaling", "throughput-based scaling needs evaluation.sla.ttft_ms and itl_ms; "+
			"set both, or enable_throughput_scaling: false")
	}
	if s.LoadScaling && s.ThroughputScaling && s.LoadIntervalS >= s.ThroughputIntervalS {
		v.errorf("planner.load_adjustment_interval_seconds", "must be < throughput_adjustment_interval_seconds (%s) when both scalings are on, got %s",
			fmtFloat(s.ThroughputIntervalS), fmtFloat(s.LoadIntervalS))
	}
	gpus := 0
	for _, r := range c.Engine.Mode.Roles() {
		if w := c.Engine.Workers.Role(r); w != nil {
			gpus += w.Parallelism.GPUs()
		}
	}
	if s.MaxGPUs > 0 && gpus > s.MaxGPUs {
		v.errorf("planner.max_num_gpus", "the deployment starts with %d GPUs; max_num_gpus must be >= %d (or -1), got %d", gpus, gpus, s.MaxGPUs)
	}
	if s.MinGPUs > 0 && s.MaxGPUs > 0 && s.MinGPUs > s.MaxGPUs {
		v.errorf("planner.min_num_gpus", "must be <= max_num_gpus (%d), got %d", s.MaxGPUs, s.MinGPUs)
	}
	// The planner moves a pool one worker at a time within its floor and the GPU bounds: a
	// deployment that starts outside them could never take its first step.
	if s.MinGPUs > 0 && gpus < s.MinGPUs {
		v.errorf("planner.min_num_gpus", "the deployment starts with %d GPUs; min_num_gpus must be <= %d, got %d (start with more replicas)", gpus, gpus, s.MinGPUs)
	}
	for _, r := range c.Engine.Mode.Roles() {
		w := c.Engine.Workers.Role(r)
		if w == nil {
			continue
		}
		if m := s.RoleMinWorkers(r); m > w.Parallelism.Replicas {
			key := "planner.min_workers"
			switch {
			case r == RolePrefill && s.PrefillMinWorkers > 0:
				key = "planner.prefill_min_workers"
			case r == RoleDecode && s.DecodeMinWorkers > 0:
				key = "planner.decode_min_workers"
			}
			v.errorf(key, "the %s pool starts with %d workers (engine.workers.%s.parallelism.replicas); its floor must be <= %d, got %d (start with more replicas)",
				r, w.Parallelism.Replicas, r, w.Parallelism.Replicas, m)
		}
	}
}
