package results

import (
	"github.com/servesweep/servesweep/sim/optimization"
	"math"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// Cost columns, hand-computed: 4 GPUs at 2.5 USD per GPU-hour cost 10 USD an hour (the point's
// CostUSDPerHour); at 1000
// output tokens/s an hour makes 3.6 M tokens, so a million costs 10 / 3.6 USD.
func TestNewRowCost(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 10, "offered_requests": 10, "completed_requests": 10, "goodput_completed_requests": 8,
		"duration_ms": 1000, "output_throughput_tok_s": 1000, "num_ttft_samples": 10,
	}}
	r := NewRow(PointInfo{ID: "p", GPUs: 4, CostUSDPerHour: 10}, rec)
	if r.CostUSDPerHour == nil || *r.CostUSDPerHour != 10 {
		t.Fatalf("cost_usd_per_hour %v, want 10", r.CostUSDPerHour)
	}
	if r.USDPerMillionOutputTokens == nil || math.Abs(*r.USDPerMillionOutputTokens-10/3.6) > 1e-12 {
		t.Errorf("usd_per_million_output_tokens %v, want %v", r.USDPerMillionOutputTokens, 10/3.6)
	}
	if r.SLAAttainment == nil || *r.SLAAttainment != 0.8 {
		t.Errorf("sla_attainment %v, want 0.8", r.SLAAttainment)
	}
	if free := NewRow(PointInfo{ID: "p", GPUs: 4}, rec); free.CostUSDPerHour != nil || free.USDPerMillionOutputTokens != nil {
		t.Error("cost columns without a price")
	}
	// No output throughput (nothing completed): no cost per token.
	rec.Summary["completed_requests"], rec.Summary["output_throughput_tok_s"] = 0, 0
	if r := NewRow(PointInfo{ID: "p", GPUs: 4, CostUSDPerHour: 10}, rec); r.USDPerMillionOutputTokens != nil || *r.CostUSDPerHour != 10 {
		t.Errorf("no samples: usd_per_million_output_tokens %v", r.USDPerMillionOutputTokens)
	}
}

// An infeasible row is never a candidate; a cost constraint keeps the rows above it off.
func TestAnalyzeInfeasibleAndCost(t *testing.T) {
	cheap, dear, sla, rej := row("cheap", 1, 100, 50, 10), row("dear", 1, 300, 20, 5), row("sla", 1, 500, 1, 1), row("rej", 1, 500, 1, 1)
	cheap.CostUSDPerHour, dear.CostUSDPerHour = ptr(2), ptr(8)
	sla.Status, sla.Reason = StatusInfeasible, "sla_constraint: SLA attainment 0.5 < 0.99 at the minimum load 1 concurrency"
	rej.Status, rej.Reason = StatusInfeasible, "rejected_requests: 10 of 10 offered requests rejected at the minimum load 1 concurrency"
	rows := []Row{cheap, dear, sla, rej}
	a, err := Analyze(rows, optimization.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) != 1 || rows[a.Front[0]].PointID != "dear" || a.Excluded[ExcludedSLA] != 1 || a.Excluded[ExcludedRejected] != 1 {
		t.Errorf("front %v excluded %v; want [dear], one sla_constraint and one rejected_requests", a.Front, a.Excluded)
	}
	a, _ = Analyze(rows, optimization.Settings{MaxCostUSDPerHour: 5})
	if len(a.Front) != 1 || rows[a.Front[0]].PointID != "cheap" || a.Excluded[ExcludedCost] != 1 {
		t.Errorf("max cost 5: front %v excluded %v; want [cheap] and one cost", a.Front, a.Excluded)
	}
	if n := CountStatuses(rows); n.OK != 2 || n.Infeasible != 2 || n.Failed != 0 {
		t.Errorf("counts %+v", n)
	}
}

// NewRow derives infeasible from the record's capacity, and carries the search's columns and
// probes.
func TestNewRowCapacity(t *testing.T) {
	c := &Capacity{Feasible: true, Load: 20, Unit: "concurrency", Target: 0.99, Attainment: 1, Probes: []Probe{
		{Load: 1, Attainment: 1, Meets: true, Headroom: 0.4, Summary: map[string]float64{"p99_ttft_ms": 10, "offered_requests": 50}},
		{Load: 21, Attainment: 0.9, Meets: false, Headroom: -1},
		{Load: 20, Attainment: 1, Meets: true, Headroom: 0.8},
	}}
	rec := Record{PointID: "p", Status: StatusOK, Capacity: c, Summary: map[string]float64{
		"num_requests": 1000, "offered_requests": 1000, "completed_requests": 1000, "goodput_completed_requests": 1000, "duration_ms": 500}}
	r := NewRow(PointInfo{ID: "p"}, rec)
	if r.Status != StatusOK || *r.CapacityLoad != 20 || *r.CapacityLoadUnit != "concurrency" || *r.CapacityProbes != 3 || *r.CapacityBounded {
		t.Fatalf("status %s capacity %v %v probes %v bounded %v", r.Status, *r.CapacityLoad, *r.CapacityLoadUnit, *r.CapacityProbes, *r.CapacityBounded)
	}
	if len(r.Probes) != 3 || *r.Probes[0].P99TTFTMs != 10 || *r.Probes[0].OfferedRequests != 50 || *r.Probes[0].SLAHeadroom != 0.4 ||
		r.Probes[1].SLAHeadroom != nil || r.Probes[1].MeetsSLA || r.Probes[2].ProbeIndex != 2 || r.Probes[2].PointID != "p" {
		t.Errorf("probes %+v", r.Probes)
	}
	c.Feasible, c.Load, c.Attainment = false, 1, 0.25
	rec.Summary["goodput_completed_requests"] = 250
	r = NewRow(PointInfo{ID: "p"}, rec)
	if r.Status != StatusInfeasible || r.CapacityLoad != nil || !strings.HasPrefix(r.Reason, "sla_constraint: SLA attainment 0.25 < 0.99") {
		t.Errorf("infeasible: status %s capacity %v reason %q", r.Status, r.CapacityLoad, r.Reason)
	}
	// Every request within the warm-up: the reason says so rather than "attainment 0".
	c.Attainment = 0
	rec.Summary = map[string]float64{"num_requests": 0, "offered_requests": 0, "completed_requests": 0,
		"goodput_completed_requests": 0, "duration_ms": 500, "warmup_seconds": 15, "warmup_requests": 8, "steady_window_ms": 0}
	r = NewRow(PointInfo{ID: "p"}, rec)
	const want = "sla_constraint: every one of the 8 requests at the minimum load 1 concurrency arrived within the probe's 15 s " +
		"warm-up (traffic.load.warmup_seconds, or, when that is unset, the search's warm-up over traffic.load.ramp_seconds), so none " +
		"was measured and the deployment's capacity is unknown, not missed: shorten the warm-up or ramp, or lengthen the run (traffic.stop)"
	if r.Status != StatusInfeasible || r.Reason != want {
		t.Errorf("all warm-up: status %s reason %q, want %q", r.Status, r.Reason, want)
	}
	// The "no feasible point" error counts such points apart and quotes one.
	a := &Analysis{Excluded: map[string]int{}}
	if h := NoFeasibleHint([]Row{r}, a, "out"); h != "; 1 point measured no request at all, every one within the warm-up (unknown, not missed), e.g. p: "+want {
		t.Errorf("no-feasible hint %q", h)
	}
}

// A disaggregated role on its own GPU is a column, and the label names both GPUs.
func TestRoleHardwareColumns(t *testing.T) {
	r := simulatedRow(t, "x", 0)
	if r.AggHardware == nil || *r.AggHardware != r.Hardware || r.PrefillHardware != nil {
		t.Errorf("aggregated: agg_hardware %v, prefill_hardware %v (hardware %s)", r.AggHardware, r.PrefillHardware, r.Hardware)
	}
	r.PrefillHardware, r.DecodeHardware = ptrS("b200_sxm"), ptrS(r.Hardware)
	if got := Hardware(&r); !strings.HasPrefix(got, "P b200_sxm + D "+r.Hardware) {
		t.Errorf("label %q", got)
	}
}

func ptrS(s string) *string { return &s }

// The scheduler keys a backend's style uses are recorded, and null where the style ignores them.
func TestSchedulerStyleColumns(t *testing.T) {
	vllm := simulatedRow(t, "v", 0)
	sg := simulatedRow(t, "s", 1, "engine.backend=sglang", "engine.workers.aggregated.scheduler.prefill_decode_interval=3")
	trt := simulatedRow(t, "t", 2, "engine.backend=trtllm", "engine.workers.aggregated.scheduler.capacity_policy=max_utilization")
	if v := simulatedRow(t, "b", 3, "engine.backend_version=0.24.0"); v.BackendVersion == nil || *v.BackendVersion != "0.24.0" || vllm.BackendVersion != nil {
		t.Errorf("backend_version %v (unset: %v)", v.BackendVersion, vllm.BackendVersion)
	}
	if vllm.AggPrefillDecodeInterval != nil || vllm.AggCapacityPolicy != nil {
		t.Errorf("vllm: interval %v, policy %v; want null", vllm.AggPrefillDecodeInterval, vllm.AggCapacityPolicy)
	}
	if sg.AggPrefillDecodeInterval == nil || *sg.AggPrefillDecodeInterval != 3 || sg.AggCapacityPolicy != nil || sg.Backend != "sglang" {
		t.Errorf("sglang: interval %v, policy %v", sg.AggPrefillDecodeInterval, sg.AggCapacityPolicy)
	}
	if trt.AggCapacityPolicy == nil || *trt.AggCapacityPolicy != "max_utilization" || trt.AggPrefillDecodeInterval != nil {
		t.Errorf("trtllm: interval %v, policy %v", trt.AggPrefillDecodeInterval, trt.AggCapacityPolicy)
	}
}

// The hand-off and front-end times a point applied are columns, defaults resolved: smallConfig
// (polynomial timing) applies neither; default timing applies the calibrated front end, and a
// disaggregated point with default timing the calibrated hand-off latency; explicit values win.
func TestAppliedOverheadColumns(t *testing.T) {
	row := func(sets ...string) Row {
		t.Helper()
		cfg, err := config.Decode([]byte(smallConfig), "small.yaml", sets)
		if err != nil {
			t.Fatal(err)
		}
		return NewRow(PointInfo{ID: "p", Config: cfg, YAML: []byte(smallConfig), GPUs: 4}, Record{PointID: "p", Status: StatusOK})
	}
	if r := row(); r.FrontendOverheadMs != 0 || r.KVTransferLatencyMs != nil {
		t.Errorf("polynomial aggregated: front end %v, latency %v; want 0 and null", r.FrontendOverheadMs, r.KVTransferLatencyMs)
	}
	if r := row("engine.workers.aggregated.timing={type: default}"); r.FrontendOverheadMs != timing.CalibratedFrontendOverheadMs {
		t.Errorf("default timing: front end %v, want %v", r.FrontendOverheadMs, timing.CalibratedFrontendOverheadMs)
	}
	disagg := []string{"engine.mode=disaggregated", "engine.workers={prefill: {timing: {type: default}}, decode: {timing: {type: default}}}"}
	if r := row(disagg...); r.KVTransferLatencyMs == nil || *r.KVTransferLatencyMs != timing.CalibratedKVTransferLatencyMs {
		t.Errorf("disaggregated, default timing: latency %v, want %v", r.KVTransferLatencyMs, timing.CalibratedKVTransferLatencyMs)
	}
	if r := row(append(disagg, "engine.kv_transfer={latency_ms: 45}", "engine.frontend={overhead_ms: 7}")...); r.KVTransferLatencyMs == nil || *r.KVTransferLatencyMs != 45 || r.FrontendOverheadMs != 7 {
		t.Errorf("explicit: latency %v, front end %v; want 45 and 7", r.KVTransferLatencyMs, r.FrontendOverheadMs)
	}
}

// percentileConfig is a decoded config whose evaluation.sla is sla.
func percentileConfig(t *testing.T, sla string) *config.Config {
	t.Helper()
	cfg, err := config.Decode([]byte(smallConfig), "small.yaml", []string{"evaluation.sla=" + sla})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Percentile bounds, hand-computed: p99 TTFT 1200 ms against 1000 misses, p99 ITL 40 ms against
// 40 holds (inclusive). The row is infeasible (sla_constraint), lists the missed bound, and is
// never a candidate; with p99_ttft_ms 1200 it holds and the row is ok. Goodput is the per-request
// rule's: sla_attainment stays 9 / 10.
func TestNewRowPercentileTerms(t *testing.T) {
	summary := func() map[string]float64 {
		return map[string]float64{"num_requests": 10, "offered_requests": 10, "completed_requests": 10,
			"goodput_completed_requests": 9, "duration_ms": 1000, "output_throughput_tok_s": 1000,
			"num_ttft_samples": 10, "p99_ttft_ms": 1200, "num_itl_samples": 630, "p99_itl_ms": 40,
			"num_e2e_latency_samples": 10, "num_tpot_samples": 10}
	}
	cfg := percentileConfig(t, "{ttft_ms: 2000, p99_ttft_ms: 1000, p99_itl_ms: 40}")
	r := NewRow(PointInfo{ID: "p", Config: cfg, GPUs: 1}, Record{PointID: "p", Status: StatusOK, Summary: summary()})
	if r.Status != StatusInfeasible || r.Reason != "sla_constraint: percentile bound missed: p99_ttft_ms 1200 > 1000" {
		t.Errorf("status %s reason %q", r.Status, r.Reason)
	}
	if r.SLAPercentileTermsMet == nil || *r.SLAPercentileTermsMet || r.SLAPercentileTermsFailed == nil || *r.SLAPercentileTermsFailed != "p99_ttft_ms" {
		t.Errorf("met %v failed %v", r.SLAPercentileTermsMet, r.SLAPercentileTermsFailed)
	}
	if *r.SLAP99TTFTMs != 1000 || *r.SLAP99ITLMs != 40 || r.SLAP50TTFTMs != nil || *r.SLATTFTMs != 2000 || *r.SLAAttainment != 0.9 {
		t.Errorf("bounds %v %v %v %v, attainment %v", r.SLAP99TTFTMs, r.SLAP99ITLMs, r.SLAP50TTFTMs, r.SLATTFTMs, *r.SLAAttainment)
	}
	ok := NewRow(PointInfo{ID: "q", Index: 1, Config: percentileConfig(t, "{p99_ttft_ms: 1200, p99_itl_ms: 40}"), GPUs: 1},
		Record{PointID: "q", Status: StatusOK, Summary: summary()})
	if ok.Status != StatusOK || ok.SLAPercentileTermsMet == nil || !*ok.SLAPercentileTermsMet || ok.SLAPercentileTermsFailed != nil {
		t.Errorf("bounds held: status %s met %v failed %v", ok.Status, ok.SLAPercentileTermsMet, ok.SLAPercentileTermsFailed)
	}
	if !HasSLA(&ok) {
		t.Error("HasSLA false with percentile bounds only")
	}
	a, err := Analyze([]Row{r, ok}, optimization.Settings{StrictSLA: true, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) != 1 || a.Front[0] != 1 || a.Excluded[ExcludedSLA] != 1 {
		t.Errorf("front %v excluded %v; want [1] and one sla_constraint", a.Front, a.Excluded)
	}

	// A degraded row that misses a bound is infeasible, not degraded: max_rejected_ratio cannot
	// admit it.
	s := summary()
	s["rejected_requests"] = 1
	d := NewRow(PointInfo{ID: "d", Config: cfg, GPUs: 1}, Record{PointID: "d", Status: StatusOK, Summary: s})
	if d.Status != StatusInfeasible || !strings.HasPrefix(d.Reason, "sla_constraint: percentile bound missed: p99_ttft_ms 1200 > 1000 (also rejected_requests: 1 of 10") {
		t.Errorf("degraded: status %s reason %q", d.Status, d.Reason)
	}

	// Under a capacity search infeasible at min, the reason names the bound beside the attainment.
	c := &Capacity{Feasible: false, Load: 1, Unit: "concurrency", Target: 0.99, Attainment: 0.9}
	r = NewRow(PointInfo{ID: "p", Config: cfg, GPUs: 1}, Record{PointID: "p", Status: StatusOK, Summary: summary(), Capacity: c})
	if want := "sla_constraint: SLA attainment 0.9 < 0.99 and percentile bound missed at the minimum load 1 concurrency: p99_ttft_ms 1200 > 1000"; r.Reason != want {
		t.Errorf("reason %q, want %q", r.Reason, want)
	}
	c.Attainment = 1
	r = NewRow(PointInfo{ID: "p", Config: cfg, GPUs: 1}, Record{PointID: "p", Status: StatusOK, Summary: summary(), Capacity: c})
	if want := "sla_constraint: percentile bound missed at the minimum load 1 concurrency: p99_ttft_ms 1200 > 1000 (SLA attainment 1 >= 0.99)"; r.Reason != want {
		t.Errorf("reason %q, want %q", r.Reason, want)
	}
}

// An autoscaled row's shape says what the planner provisioned.
func TestShapeOfAnAutoscaledRow(t *testing.T) {
	rep, tp, peak, avg := int64(2), int64(4), int64(8), 5.76
	r := Row{Mode: "aggregated", AggReplicas: &rep, AggTensor: &tp}
	if got := Shape(&r); got != "2× TP4" {
		t.Errorf("fixed: %q", got)
	}
	r.PeakGPUs, r.AvgGPUs = &peak, &avg
	if got := Shape(&r); got != "2× TP4 autoscaled (avg 5.76 GPUs, peak 8)" {
		t.Errorf("autoscaled: %q", got)
	}
}

// Under a capacity search, a point whose search did not finish (timed out) was measured at no
// load: its load columns are null, not the spec's starting concurrency; the same record outside
// a search keeps the config's load, a finished search keeps the load it was measured at, and
// one that stopped keeps its probes.
func TestTimedOutSearchHasNoLoad(t *testing.T) {
	cfg, err := config.Decode([]byte(smallConfig), "small.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	info := PointInfo{ID: "p", Config: cfg, GPUs: 4, LoadSearched: true}
	rec := Record{PointID: "p", Status: StatusTimedOut, Reason: "exceeded the per-point timeout of 1s (--timeout)"}
	if r := NewRow(info, rec); r.LoadConcurrency != nil || r.LoadType != config.LoadConcurrency || r.CapacityLoad != nil {
		t.Errorf("timed-out search: load_concurrency %v, load_type %q, capacity_load %v; want null, concurrency, null", r.LoadConcurrency, r.LoadType, r.CapacityLoad)
	}
	info.LoadSearched = false
	if r := NewRow(info, rec); r.LoadConcurrency == nil || *r.LoadConcurrency != 4 {
		t.Errorf("timed out without a search: load_concurrency %v, want the config's 4", r.LoadConcurrency)
	}
	info.LoadSearched = true
	rec.Capacity = &Capacity{Feasible: true, Load: 4, Unit: "concurrency", Target: 0.99, Attainment: 1, Probes: []Probe{{Load: 4, Attainment: 1, Meets: true}}}
	if r := NewRow(info, rec); r.LoadConcurrency == nil || *r.LoadConcurrency != 4 {
		t.Errorf("finished search: load_concurrency %v, want 4", r.LoadConcurrency)
	}
	// A search that stopped keeps the probes it ran, and no capacity or load.
	rec.Capacity = &Capacity{Unit: "concurrency", Stopped: true, Probes: []Probe{{Load: 2, Attainment: 1, Meets: true}}}
	if r := NewRow(info, rec); r.LoadConcurrency != nil || r.CapacityLoad != nil || r.CapacityBounded != nil || deref(r.CapacityProbes) != 1 ||
		r.CapacityLoadUnit == nil || *r.CapacityLoadUnit != "concurrency" || len(r.Probes) != 1 || r.Probes[0].Load != 2 || !r.Probes[0].MeetsSLA {
		t.Errorf("stopped search: load %v, capacity %v, bounded %v, capacity_probes %v, probes %+v; want no load or capacity, its probe",
			r.LoadConcurrency, r.CapacityLoad, r.CapacityBounded, r.CapacityProbes, r.Probes)
	}
}

// withoutTruncatedGoodput by hand: 50 good requests, 10 of them cut short, at 5 good
// requests/s and 600 good tokens/s of which the journal says 1 request/s and 100 tokens/s are
// theirs: 40 good at 4 requests/s and 500 tokens/s. A journal without those shares scales the
// rates by 40 / 50: 4 requests/s and 480 tokens/s. The input is not modified; with none cut
// short it comes back as it is.
func TestWithoutTruncatedGoodput(t *testing.T) {
	m := map[string]float64{"goodput_completed_requests": 50, "goodput_request_throughput_rps": 5, "goodput_output_throughput_tok_s": 600,
		goodputTruncatedKey: 10, goodputTruncatedRPSKey: 1, goodputTruncatedTokSKey: 100}
	got := withoutTruncatedGoodput(m)
	if got["goodput_completed_requests"] != 40 || got["goodput_request_throughput_rps"] != 4 || got["goodput_output_throughput_tok_s"] != 500 ||
		m["goodput_completed_requests"] != 50 {
		t.Errorf("with shares: %v (input %v)", got, m)
	}
	delete(m, goodputTruncatedRPSKey)
	delete(m, goodputTruncatedTokSKey)
	got = withoutTruncatedGoodput(m)
	if got["goodput_completed_requests"] != 40 || got["goodput_request_throughput_rps"] != 4 || got["goodput_output_throughput_tok_s"] != 480 {
		t.Errorf("an older journal: %v", got)
	}
	m[goodputTruncatedKey] = 0
	if got = withoutTruncatedGoodput(m); got["goodput_completed_requests"] != 50 {
		t.Errorf("none cut short: %v", got)
	}
}
