package metrics

import (
	"math"
	"slices"
)

// WorkerStep is one step of a pool's provisioned worker count: Workers (active + starting +
// draining) from TimeMs (virtual ms) until the next step.
type WorkerStep struct {
	TimeMs  float64
	Workers int
}

// PoolTimeline is the provisioned worker count of one autoscaled pool over the run.
type PoolTimeline struct {
	// Pool is the worker role: aggregated, prefill or decode.
	Pool string
	// GPUsPerWorker is tensor × pipeline × attention_data of the role.
	GPUsPerWorker int
	// Steps start at 0 ms and are in time order.
	Steps []WorkerStep
}

// ScalingEvent is one planner decision that changed a pool's target worker count (the workers
// that are active or starting, dynosim engine-internals.md §6).
type ScalingEvent struct {
	// TimeMs is the virtual time of the decision.
	TimeMs float64
	// Pool is the worker role; From and To the target worker counts before and after.
	Pool     string
	From, To int
	// Reason is load_scale_up, load_scale_down (load-based scaling) or throughput
	// (throughput-based scaling).
	Reason string
}

// PlannerReport is what an autoscaled run adds to the summary (planner.policy enabled).
type PlannerReport struct {
	// ScalingEvents lists the decisions in time order.
	ScalingEvents []ScalingEvent
	// AvgWorkers is, per pool, the time-averaged provisioned workers over [0, duration_ms]
	// (worker-seconds / duration_s; the count at 0 ms when the duration is 0); PeakWorkers the
	// most provisioned at any time in that span.
	AvgWorkers  map[string]float64
	PeakWorkers map[string]int
	// PeakGPUs is the most GPUs provisioned at once over all pools in [0, duration_ms].
	PeakGPUs int
	// StartGPUs is the GPUs provisioned over all pools at 0 ms, and Changes the changes of that
	// count within [0, duration_ms], in time order: a scale-up's new worker counts from its
	// decision, a scale-down's removed one until it has drained.
	StartGPUs int
	Changes   []GPUChange
	// WindowMs and WindowWorkerSeconds are set when the run was measured over a steady window
	// after a warm-up (Summary.SteadyWindowMs): its length and, per pool, the worker-seconds
	// provisioned within it. A sweep prices an autoscaled deployment over that window, where its
	// throughput is measured, rather than over the whole run, whose start holds the workers it
	// was configured to start with (a user trial, 2026-12-07: four H200 workers the planner
	// scaled down to one over 85 s priced 2.23, 1.62, 1.01 and 0.86 USD per million output tokens
	// at 40, 160, 640 and 2,560 requests per load unit).
	WindowMs            float64
	WindowWorkerSeconds map[string]float64
}

// setWindow sets r's steady-window provisioning over (t0, t1] (virtual ms) from the pools'
// timelines.
func (r *PlannerReport) setWindow(pools []PoolTimeline, t0, t1 float64) {
	r.WindowMs, r.WindowWorkerSeconds = t1-t0, map[string]float64{}
	for i := range pools {
		p := &pools[i]
		to, _ := p.Integral(t1)
		from, _ := p.Integral(t0)
		r.WindowWorkerSeconds[p.Pool] += (to - from) / 1000
	}
}

// Integral returns ∫₀^endMs workers dt of the step function, in worker-ms, and the most
// workers provisioned in [0, endMs].
func (p *PoolTimeline) Integral(endMs float64) (workerMs float64, peak int) {
	for i, st := range p.Steps {
		if st.TimeMs > endMs && i > 0 {
			break
		}
		peak = max(peak, st.Workers)
		next := endMs
		if i+1 < len(p.Steps) {
			next = math.Min(next, p.Steps[i+1].TimeMs)
		}
		if next > st.TimeMs {
			workerMs += float64(st.Workers) * (next - st.TimeMs)
		}
	}
	return workerMs, peak
}

// at returns the provisioned workers at time t (the last step at or before t).
func (p *PoolTimeline) at(t float64) int {
	n := 0
	for _, st := range p.Steps {
		if st.TimeMs > t {
			break
		}
		n = st.Workers
	}
	return n
}

// buildPlanner sets the worker-seconds and GPU-hours of s from the pools' timelines over
// [0, duration_ms] and returns the planner report. Aggregated workers report as decode.
func buildPlanner(s *Summary, pools []PoolTimeline, events []ScalingEvent) *PlannerReport {
	r := &PlannerReport{ScalingEvents: events, AvgWorkers: map[string]float64{}, PeakWorkers: map[string]int{}}
	if r.ScalingEvents == nil {
		r.ScalingEvents = []ScalingEvent{}
	}
	end := s.DurationMs
	s.PrefillWorkerSeconds, s.DecodeWorkerSeconds = 0, 0
	var times []float64
	for i := range pools {
		p := &pools[i]
		ms, peak := p.Integral(end)
		if p.Pool == "prefill" {
			s.PrefillWorkerSeconds = ms / 1000
		} else {
			s.DecodeWorkerSeconds = ms / 1000
		}
		avg := float64(p.at(0))
		if end > 0 {
			avg = ms / end
		}
		r.AvgWorkers[p.Pool], r.PeakWorkers[p.Pool] = avg, peak
		for _, st := range p.Steps {
			if st.TimeMs <= end || st.TimeMs == 0 {
				times = append(times, st.TimeMs)
			}
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	prev := 0
	for k, t := range times {
		g := 0
		for i := range pools {
			g += pools[i].at(t) * pools[i].GPUsPerWorker
		}
		r.PeakGPUs = max(r.PeakGPUs, g)
		if k == 0 {
			r.StartGPUs = g
		} else if g != prev {
			r.Changes = append(r.Changes, GPUChange{TimeMs: t, GPUs: g})
		}
		prev = g
	}
	return r
}

// GPUChange is a change of the GPUs an autoscaled run provisions over all its pools: from TimeMs
// (virtual ms) on, GPUs.
type GPUChange struct {
	TimeMs float64
	GPUs   int
}

// scalingEventMaps is the scaling_events value of prediction.json.
func scalingEventMaps(events []ScalingEvent) []map[string]any {
	out := make([]map[string]any, len(events))
	for i, e := range events {
		out[i] = map[string]any{"time_ms": e.TimeMs, "pool": e.Pool, "from": e.From, "to": e.To, "reason": e.Reason}
	}
	return out
}
