package sim

import (
	"math"
	"reflect"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
)

func ptr[T any](v T) *T { return &v }

// plannerConfig is an aggregated deployment of 1-GPU workers that each serve one request at a
// time in one 100 ms pass (fixed timing: prefill 90 + decode 10, one output token), so a
// request's TTFT is its queueing time + 100 ms, with load-based scaling every second against a
// 300 ms TTFT bound.
func plannerConfig(requests, replicas, minObs int, startupS float64, profile []config.LoadPhase) *config.Config {
	cfg := testConfig(16, 1, requests, 1, 1000)
	role := cfg.Engine.Workers.Aggregated
	role.Parallelism.Replicas = replicas
	role.Scheduler.MaxSequences = 1
	role.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
	role.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(90), DecodeMs: f64(10)}
	role.StartupSeconds = startupS
	cfg.Traffic.Load = config.Load{Type: config.LoadConstantRate, Profile: profile}
	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(300)}
	cfg.Planner = config.Planner{Policy: "enabled", Target: "load", EnableLoadScaling: ptr(true),
		LoadAdjustmentIntervalSeconds: f64(1), LoadMinObservations: ptr(minObs), MaxNumGPUs: ptr(4)}
	return cfg
}

func mustValid(t *testing.T, cfg *config.Config) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestPlannerLoadStepScalesUp: 2 req/s until 3 s, then 20 req/s (56 requests: 0, 500, ...,
// 2500 ms, then every 50 ms from 3000 to 5450 ms). One worker serves 10 req/s, so from 3 s
// its queue grows: request k of the second phase has its first token at 3100 + 100k ms, a TTFT
// of 100 + 50k ms. The window of the tick at 4000 ms (first tokens at 3100 ... 4000 ms, k = 0
// ... 9) has a mean TTFT of 325 ms > 300, but it is only the 4th observation of the 5
// load_min_observations; the tick at 5000 ms (k = 10 ... 19, mean 825 ms) is the 5th and adds a
// worker, ready at 5500 ms (startup 0.5 s). No request arrives after 5450 ms, so worker 0
// serves all 56; the last completes at 3100 + 100 × 49 = 8000 ms. Provisioned workers: 1 over
// [0, 5000) and 2 over [5000, 8000]: 5 + 6 = 11 worker-seconds, 11/3600 GPU-hours, 1.375 on
// average, 2 at peak.
func TestPlannerLoadStepScalesUp(t *testing.T) {
	cfg := plannerConfig(56, 1, 5, 0.5, []config.LoadPhase{{UntilSeconds: 3, RequestsPerSecond: 2}, {UntilSeconds: 100, RequestsPerSecond: 20}})
	mustValid(t, cfg)
	res := mustRun(t, cfg)
	s := res.Summary
	if s.CompletedRequests != 56 || !near(s.DurationMs, 8000) {
		t.Fatalf("completed %d in %v ms, want 56 in 8000", s.CompletedRequests, s.DurationMs)
	}
	want := []metrics.ScalingEvent{{TimeMs: 5000, Pool: "aggregated", From: 1, To: 2, Reason: "load_scale_up"}}
	if p := s.Planner; p == nil || !reflect.DeepEqual(p.ScalingEvents, want) {
		t.Fatalf("scaling events %+v, want %+v", s.Planner, want)
	}
	if !near(s.DecodeWorkerSeconds, 11) || !near(s.GPUHours, 11.0/3600) {
		t.Errorf("worker-seconds %v, GPU-hours %v; want 11 and 11/3600", s.DecodeWorkerSeconds, s.GPUHours)
	}
	if p := s.Planner; !near(p.AvgWorkers["aggregated"], 1.375) || p.PeakWorkers["aggregated"] != 2 || p.PeakGPUs != 2 {
		t.Errorf("avg %v peak %v peak GPUs %d; want 1.375, 2, 2", p.AvgWorkers, p.PeakWorkers, p.PeakGPUs)
	}
	for i := range res.Requests {
		if res.Requests[i].Worker != 0 {
			t.Errorf("request %d ran on worker %d; the added worker was ready after the last arrival", i, res.Requests[i].Worker)
		}
	}
	m := s.Map()
	if _, ok := m["scaling_events"]; !ok {
		t.Error("prediction.json lacks scaling_events")
	}
}

// TestPlannerLoadScalesDown: two workers at 2 req/s (arrivals every 500 ms, alternating), each
// request served at once (TTFT 100 ms < 0.8 × 300). With load_min_observations 2, the tick at
// 2000 ms removes worker 1, idle since 1600 ms, so it is off at once; min_workers 1 keeps the
// last. 20 requests, the last arriving at 9500 ms and completing at 9600 ms: 2 × 2 + 1 × 7.6 =
// 11.6 worker-seconds. Every request from 2000 ms runs on worker 0.
func TestPlannerLoadScalesDown(t *testing.T) {
	cfg := plannerConfig(20, 2, 2, 0, []config.LoadPhase{{UntilSeconds: 100, RequestsPerSecond: 2}})
	mustValid(t, cfg)
	res := mustRun(t, cfg)
	s := res.Summary
	want := []metrics.ScalingEvent{{TimeMs: 2000, Pool: "aggregated", From: 2, To: 1, Reason: "load_scale_down"}}
	if !reflect.DeepEqual(s.Planner.ScalingEvents, want) {
		t.Fatalf("scaling events %+v, want %+v", s.Planner.ScalingEvents, want)
	}
	if !near(s.DurationMs, 9600) || !near(s.DecodeWorkerSeconds, 11.6) || !near(s.GPUHours, 11.6/3600) {
		t.Errorf("duration %v, worker-seconds %v, GPU-hours %v; want 9600, 11.6, 11.6/3600", s.DurationMs, s.DecodeWorkerSeconds, s.GPUHours)
	}
	for i := 4; i < len(res.Requests); i++ {
		if res.Requests[i].Worker != 0 {
			t.Errorf("request %d (arrival %v ms) ran on worker %d, want 0", i, res.Requests[i].ArrivalMs, res.Requests[i].Worker)
		}
	}
}

// TestPlannerDrainsRunningRequests: a removed worker finishes what it holds. Two workers, each
// request 10 s long (one token after a 10,000 ms prefill), arrivals at 0 and 500 ms (2 req/s,
// 2 requests). The TTFT bound is 30 s, so both workers are below 0.8 × 30 s. At the tick at 1000
// ms (load_min_observations 1) worker 1 still runs the request it got at 500 ms: it drains, the
// request completes there at 10,500 ms, and the worker is off then. Worker-seconds: 2 × 10.5.
func TestPlannerDrainsRunningRequests(t *testing.T) {
	cfg := plannerConfig(2, 2, 1, 0, []config.LoadPhase{{UntilSeconds: 100, RequestsPerSecond: 2}})
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(9990), DecodeMs: f64(10)}
	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(30000)}
	mustValid(t, cfg)
	res := mustRun(t, cfg)
	s := res.Summary
	want := []metrics.ScalingEvent{{TimeMs: 1000, Pool: "aggregated", From: 2, To: 1, Reason: "load_scale_down"}}
	if !reflect.DeepEqual(s.Planner.ScalingEvents, want) {
		t.Fatalf("scaling events %+v, want %+v", s.Planner.ScalingEvents, want)
	}
	if r := res.Requests[1]; r.Worker != 1 || !near(r.TerminalMs, 10500) {
		t.Errorf("request 1 on worker %d ended at %v ms, want worker 1 at 10500", r.Worker, r.TerminalMs)
	}
	if !near(s.DecodeWorkerSeconds, 21) {
		t.Errorf("worker-seconds %v, want 21", s.DecodeWorkerSeconds)
	}
}

// TestPlannerDisabledKeepsOutputs: with the planner disabled the summary has no planner keys.
func TestPlannerDisabledKeepsOutputs(t *testing.T) {
	res := mustRun(t, testConfig(100, 4, 4, 2, 100))
	m := res.Summary.Map()
	for _, k := range []string{"scaling_events", "avg_workers", "peak_workers"} {
		if _, ok := m[k]; ok {
			t.Errorf("planner disabled: prediction.json has %s", k)
		}
	}
}

// TestPoolTimelineIntegral: ∫ of the steps 2 on [0, 1000), 3 on [1000, 4000), 1 after, up to
// 5000 ms is 2 + 9 + 1 = 12 worker-seconds; the peak is 3; up to 500 ms, 1 worker-second.
func TestPoolTimelineIntegral(t *testing.T) {
	p := metrics.PoolTimeline{Steps: []metrics.WorkerStep{{TimeMs: 0, Workers: 2}, {TimeMs: 1000, Workers: 3}, {TimeMs: 4000, Workers: 1}}}
	if ms, peak := p.Integral(5000); math.Abs(ms-12000) > 1e-9 || peak != 3 {
		t.Errorf("Integral(5000) = %v, %d; want 12000, 3", ms, peak)
	}
	if ms, peak := p.Integral(500); math.Abs(ms-1000) > 1e-9 || peak != 2 {
		t.Errorf("Integral(500) = %v, %d; want 1000, 2", ms, peak)
	}
}
