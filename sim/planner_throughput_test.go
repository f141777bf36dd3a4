package sim

import (
	"math"
	"reflect"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
)

// throughputConfig runs 20 req/s for 10 s, then 5 req/s (300 requests: every 50 ms until 10 s,
// then every 200 ms until 29.8 s) with throughput-based scaling every 10 s and the constant
// predictor, against TTFT 300 ms and ITL 50 ms.
func throughputConfig(cfg *config.Config) *config.Config {
	cfg.Traffic.Load = config.Load{Type: config.LoadConstantRate, Profile: []config.LoadPhase{
		{UntilSeconds: 10, RequestsPerSecond: 20}, {UntilSeconds: 100, RequestsPerSecond: 5},
	}}
	cfg.Traffic.Stop.Requests = 300
	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(300), ITLMs: f64(50)}
	cfg.Planner = config.Planner{Policy: "enabled", Target: "sla", ThroughputAdjustmentIntervalSeconds: f64(10),
		LoadPredictor: "constant", MaxNumGPUs: ptr(4)}
	for _, r := range config.Roles() {
		if w := cfg.Engine.Workers.Role(r); w != nil {
			w.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
			w.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(90), DecodeMs: f64(10)}
		}
	}
	return cfg
}

// TestPlannerThroughputAggregated: an aggregated worker (max_sequences 1, ISL 16, OSL 1)
// prefills 16 tokens per 100 ms pass (prefill 90 + decode 10 for the first token): 160 tokens/s;
// it decodes 1 token per 10 ms pass: 100 tokens/s. Workers needed at rate r: ⌈16r/160 + r/100⌉
// = ⌈0.11 r⌉. The tick at 10 s saw 201 arrivals (0 ... 10,000 ms; arrivals precede a tick at
// the same time): r = 20.1, 3 workers. The tick at 20 s saw 50 (10,200 ... 20,000 ms): r = 5, 1
// worker. The tick at 30 s saw 49: still 1.
func TestPlannerThroughputAggregated(t *testing.T) {
	cfg := testConfig(16, 1, 300, 1, 1000)
	cfg.Engine.Workers.Aggregated.Scheduler.MaxSequences = 1
	cfg = throughputConfig(cfg)
	mustValid(t, cfg)
	res := mustRun(t, cfg)
	want := []metrics.ScalingEvent{
		{TimeMs: 10000, Pool: "aggregated", From: 1, To: 3, Reason: "throughput"},
		{TimeMs: 20000, Pool: "aggregated", From: 3, To: 1, Reason: "throughput"},
	}
	if got := res.Summary.Planner.ScalingEvents; !reflect.DeepEqual(got, want) {
		t.Errorf("scaling events %+v, want %+v", got, want)
	}
	if p := res.Summary.Planner; p.PeakWorkers["aggregated"] != 3 || p.PeakGPUs != 3 {
		t.Errorf("peak workers %v, peak GPUs %d; want 3", p.PeakWorkers, p.PeakGPUs)
	}
}

// TestPlannerThroughputDisaggregated scales the prefill and the decode pool separately. A
// prefill worker (max_sequences 1) prefills 16 tokens per 90 ms pass (its first token comes with
// the prefill): 177.8 tokens/s. A decode worker (max_sequences 4, OSL 20) decodes 4 tokens per
// 10 ms pass (within ITL 50 ms): 400 tokens/s. At r = 20.1: prefill ⌈20.1 × 16 / 177.8⌉ =
// ⌈1.81⌉ = 2, decode ⌈20.1 × 20 / 400⌉ = ⌈1.005⌉ = 2; at r = 5 both 1. With max_num_gpus 3
// the 4 GPUs do not fit, and the first of the largest pools (prefill) gives one up.
func TestPlannerThroughputDisaggregated(t *testing.T) {
	build := func() *config.Config {
		cfg := disaggConfig(16, 20, 300, 1, 1, 1, 1000, 1000)
		cfg.Engine.Workers.Prefill.Scheduler.MaxSequences = 1
		cfg.Engine.Workers.Decode.Scheduler.MaxSequences = 4
		return throughputConfig(cfg)
	}
	cfg := build()
	mustValid(t, cfg)
	res := mustRun(t, cfg)
	want := []metrics.ScalingEvent{
		{TimeMs: 10000, Pool: "prefill", From: 1, To: 2, Reason: "throughput"},
		{TimeMs: 10000, Pool: "decode", From: 1, To: 2, Reason: "throughput"},
		{TimeMs: 20000, Pool: "prefill", From: 2, To: 1, Reason: "throughput"},
		{TimeMs: 20000, Pool: "decode", From: 2, To: 1, Reason: "throughput"},
	}
	if got := res.Summary.Planner.ScalingEvents; !reflect.DeepEqual(got, want) {
		t.Errorf("scaling events %+v, want %+v", got, want)
	}
	s := res.Summary
	if g := (s.PrefillWorkerSeconds + s.DecodeWorkerSeconds) / 3600; math.Abs(g-s.GPUHours) > 1e-12 {
		t.Errorf("GPU-hours %v, want the pools' worker-seconds / 3600 = %v", s.GPUHours, g)
	}

	cfg = build()
	cfg.Planner.MaxNumGPUs = ptr(3)
	mustValid(t, cfg)
	res = mustRun(t, cfg)
	want = []metrics.ScalingEvent{
		{TimeMs: 10000, Pool: "decode", From: 1, To: 2, Reason: "throughput"},
		{TimeMs: 20000, Pool: "decode", From: 2, To: 1, Reason: "throughput"},
	}
	if got := res.Summary.Planner.ScalingEvents; !reflect.DeepEqual(got, want) {
		t.Errorf("max_num_gpus 3: scaling events %+v, want %+v", got, want)
	}
}

// A planner tick due after the run's last request has finished does not run: 300 requests at
// concurrency 4 on two workers (fixed timing, prefill 90 ms + one 10 ms decode) finish at 7.5 s,
// before the first throughput tick at 10 s, which would otherwise scale the pool from 2 to 1 on
// what is left of the run: nothing.
func TestPlannerStopsWithTheWork(t *testing.T) {
	cfg := testConfig(16, 1, 300, 4, 1000)
	cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 2
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(90), DecodeMs: f64(10)}
	cfg.Engine.Workers.Aggregated.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(1), ITLMs: f64(1)}
	cfg.Planner = config.Planner{Policy: "enabled", Target: "sla", ThroughputAdjustmentIntervalSeconds: f64(10),
		LoadPredictor: "constant", MaxNumGPUs: ptr(4)}
	mustValid(t, cfg)
	res := mustRun(t, cfg)
	if s := res.Summary; s.DurationMs != 7500 || len(s.Planner.ScalingEvents) != 0 || s.CompletedRequests != 300 {
		t.Errorf("duration %v ms, %d completed, scaling events %+v; want 7500 ms and no event",
			s.DurationMs, s.CompletedRequests, s.Planner.ScalingEvents)
	}
}
