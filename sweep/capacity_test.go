package sweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/examples"
	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/optimization"
)

// fixedSpec is a deployment whose capacity is known by hand: every pass with a prefill takes
// 10 ms (decode passes 0 ms), a request is 100 prompt tokens and 1 output token, and a pass
// holds 1000 batched tokens, so it prefills 10 requests. Under a closed loop of c requests in
// flight, requests wait ⌈c/10⌉ passes: TTFT is 10 ms for c <= 10, 20 ms for c <= 20, and for
// c = 21 a tenth of the requests see 30 ms. With TTFT <= 25 ms for 99 % of requests, the
// capacity of one replica is 2 passes × 10 requests = 20 (and twice that for two replicas
// under round_robin). The explicit ramp_seconds: 0 keeps that synchronized start (no pilot, no
// warm-up; see probeStart), which the passes above count on.
const fixedSpec = `traffic:
  source: {type: synthetic, input_tokens: 100, output_tokens: 1}
  load: {type: concurrency, concurrency: 1, ramp_seconds: 0}
  stop: {requests_per_load_unit: 50}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h100_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: {choices: [1, 2]}, tensor: 1}
      scheduler: {max_batched_tokens: 1000, max_sequences: 256}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 100000}}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 0}
router: {policy: round_robin}
evaluation: {sla: {ttft_ms: 25}}
optimization: {capacity_search: {}}
`

// runRowConfig simulates row r's config_yaml as predict would, failing t on any error.
func runRowConfig(t *testing.T, r results.Row) *sim.Result {
	t.Helper()
	cfg, err := config.Decode([]byte(r.ConfigYAML), "row.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), cfg, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runCapacity runs spec's points with capacity search and returns the rows.
func runCapacity(t *testing.T, spec string, par int, dir string, sets ...string) []results.Row {
	t.Helper()
	s, err := grid.Parse([]byte(spec), "spec.yaml", sets, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	out, err := Run(context.Background(), x.Points, Options{OutputDir: dir, Parallelism: par,
		Capacity: s.Optimization.CapacitySearch})
	if err != nil {
		t.Fatal(err)
	}
	return out.Rows
}

func TestCapacityHandComputed(t *testing.T) {
	rows := runCapacity(t, fixedSpec, 2, "")
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, want := range []float64{20, 40} {
		r := rows[i]
		if r.Status != results.StatusOK || r.CapacityLoad == nil || *r.CapacityLoad != want {
			t.Errorf("replicas %d: status %s capacity %v, want %g (reason %q)", i+1, r.Status, r.CapacityLoad, want, r.Reason)
			continue
		}
		if *r.CapacityLoadUnit != "concurrency" || *r.CapacityBounded || *r.LoadConcurrency != int64(want) {
			t.Errorf("replicas %d: unit %s bounded %v load %d", i+1, *r.CapacityLoadUnit, *r.CapacityBounded, *r.LoadConcurrency)
		}
		// The row is measured at the capacity: 50 requests per unit of load, all within 20 ms.
		if *r.OfferedRequests != int64(50*want) || *r.SLAAttainment != 1 || *r.P99TTFTMs != 20 {
			t.Errorf("replicas %d: offered %d attainment %g p99 TTFT %g", i+1, *r.OfferedRequests, *r.SLAAttainment, *r.P99TTFTMs)
		}
		if !strings.Contains(r.ConfigYAML, "concurrency: "+strconv.FormatFloat(want, 'f', -1, 64)+", ramp_seconds: 0}") {
			t.Errorf("replicas %d: config_yaml does not run at the capacity:\n%s", i+1, r.ConfigYAML)
		}
		// The probes: the first at min, one per simulation, the capacity among those that met the
		// SLA and capacity + 1 among those that missed it.
		if int64(len(r.Probes)) != *r.CapacityProbes || r.Probes[0].Load != 1 {
			t.Fatalf("replicas %d: %d probes, capacity_probes %d", i+1, len(r.Probes), *r.CapacityProbes)
		}
		var met, missed bool
		for k, p := range r.Probes {
			if p.PointID != r.PointID || p.ProbeIndex != int64(k) || p.LoadUnit != "concurrency" {
				t.Errorf("probe %d: %+v", k, p)
			}
			met = met || (p.Load == want && p.MeetsSLA)
			missed = missed || (p.Load == want+1 && !p.MeetsSLA)
			if p.MeetsSLA != (p.Load <= want) {
				t.Errorf("replicas %d: probe at %g meets %v", i+1, p.Load, p.MeetsSLA)
			}
		}
		if !met || !missed {
			t.Errorf("replicas %d: the probes do not pin the capacity between %g and %g: %+v", i+1, want, want+1, r.Probes)
		}
	}
}

// A deployment that misses the SLA at the minimum load is infeasible, measured at min; one whose
// rejections alone make it miss says so; one that still meets it at max is bounded; a search
// cut short by max_probes says so.
func TestCapacityOutcomes(t *testing.T) {
	one := "engine.workers.aggregated.parallelism.replicas=1"
	r := runCapacity(t, fixedSpec, 1, "", one, "evaluation.sla.ttft_ms=5")[0]
	if r.Status != results.StatusInfeasible || !strings.HasPrefix(r.Reason, "sla_constraint: SLA attainment 0 < 0.99 at the minimum load 1 concurrency") ||
		r.CapacityLoad != nil || *r.CapacityProbes != 1 || *r.LoadConcurrency != 1 || *r.OfferedRequests != 50 {
		t.Errorf("TTFT SLA below one pass: status %s reason %q capacity %v probes %d", r.Status, r.Reason, r.CapacityLoad, *r.CapacityProbes)
	}
	r = runCapacity(t, fixedSpec, 1, "", one, "engine.context_length=64")[0]
	if r.Status != results.StatusInfeasible || !strings.HasPrefix(r.Reason, "rejected_requests: 50 of 50 offered requests rejected at the minimum load 1") {
		t.Errorf("every prompt too long: status %s reason %q", r.Status, r.Reason)
	}
	// 20 requests at t = 0, each 100 prompt tokens: a pass prefills 10 in 10 ms; and the same
	// with the second's prompt of 5,000 tokens, 1,000 a pass (its first token after 5 passes).
	dir := t.TempDir()
	trace, long := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "long.jsonl")
	var lines, longLines strings.Builder
	for i := range 20 {
		ids := fmt.Sprintf("%d, %d", 2*i, 2*i+1)
		fmt.Fprintf(&lines, `{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [%s]}`+"\n", ids)
		n := 100
		if i == 1 {
			n = 5000
			for b := range 77 {
				ids += fmt.Sprintf(", %d", 1000+b)
			}
		}
		fmt.Fprintf(&longLines, `{"timestamp": 0, "input_length": %d, "output_length": 1, "hash_ids": [%s]}`+"\n", n, ids)
	}
	if err := os.WriteFile(trace, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, []byte(longLines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	count := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	// A closed loop over the trace, one request at a time: the first finishes at 10 ms, and the
	// stop at 45 ms cuts the second 35 ms after it arrived, past the 25 ms TTFT bound: a miss.
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.source={type: trace, paths: ["+long+"], block_size: 64}",
		"traffic.load={type: concurrency, concurrency: 1}", "traffic.stop={max_virtual_time_seconds: 0.045}")[0]
	if r.Status != results.StatusInfeasible || !strings.Contains(r.Reason, "(1 of 2 offered requests unfinished when the run stopped, 0 rejected)") ||
		count(r.CensoredRequests) != 0 || r.SLAAttainment == nil || *r.SLAAttainment != 0.5 {
		t.Errorf("cut past its bound: status %s reason %q attainment %v censored %d", r.Status, r.Reason, deref(r.SLAAttainment),
			count(r.CensoredRequests))
	}
	// A stop at 30 ms cuts it 20 ms after it arrived, within the bound: censored, its outcome
	// unknown, neither good nor missed (attainment 1/1 at concurrency 1, where 1/2 would fail).
	// Above concurrency 1 the window ends before a steady state (traceUnramped): searched to 1.
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.source={type: trace, paths: ["+long+"], block_size: 64}",
		"traffic.load={type: concurrency, concurrency: 1}", "traffic.stop={max_virtual_time_seconds: 0.03}",
		"optimization.capacity_search={max: 1}")[0]
	if p := r.Probes[0]; p.Load != 1 || p.SLAAttainment != 1 || !p.MeetsSLA || count(p.UnfinishedRequests) != 1 ||
		count(p.CensoredRequests) != 1 || count(p.OfferedRequests) != 2 {
		t.Errorf("cut within its bound: first probe at %g: attainment %g meets %v, %d offered, %d unfinished, %d censored",
			p.Load, p.SLAAttainment, p.MeetsSLA, count(p.OfferedRequests), count(p.UnfinishedRequests), count(p.CensoredRequests))
	}
	// Under trace_timestamps the probes replay the segment the stop gives (the 20 requests at
	// t = 0) to its end instead: the second pass's 10 finish at 20 ms, within the bound.
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.source={type: trace, paths: ["+trace+"], block_size: 64}",
		"traffic.load={type: trace_timestamps, speedup: 1}", "traffic.stop={max_virtual_time_seconds: 0.015}")[0]
	if r.Status != results.StatusOK || *r.OfferedRequests != 20 || *r.UnfinishedRequests != 0 || *r.CapacityLoad != grid.DefaultCapacityMax {
		t.Errorf("a trace segment run to its end: status %s reason %q capacity %v", r.Status, r.Reason, r.CapacityLoad)
	}
	r = runCapacity(t, fixedSpec, 1, "", one, "optimization.capacity_search={max: 8}")[0]
	if r.Status != results.StatusOK || *r.CapacityLoad != 8 || !*r.CapacityBounded {
		t.Errorf("max 8 under a capacity of 20: status %s capacity %v bounded %v", r.Status, r.CapacityLoad, r.CapacityBounded)
	}
	r = runCapacity(t, fixedSpec, 1, "", one, "optimization.capacity_search={max_probes: 3}")[0]
	if r.Status != results.StatusOK || *r.CapacityProbes != 3 || *r.CapacityLoad >= 20 ||
		!strings.HasPrefix(r.Reason, "capacity_search: stopped at max_probes (3) with the capacity between") {
		t.Errorf("max_probes 3: status %s capacity %v probes %d reason %q", r.Status, *r.CapacityLoad, *r.CapacityProbes, r.Reason)
	}
	a, err := results.Analyze([]results.Row{r}, optimization.Settings{Objectives: []optimization.Objective{
		{Metric: "request_throughput_rps", Direction: optimization.Maximize}}})
	if err != nil || len(a.Candidates) != 1 {
		t.Errorf("an unclosed search is still a candidate at the capacity it proved: %v %v", a, err)
	}
}

// The search is deterministic: any worker count gives the same rows and probes, and a resumed
// run gives back the same rows and probes from the journal.
func TestCapacityDeterministicAndResumed(t *testing.T) {
	dir := t.TempDir()
	one := runCapacity(t, fixedSpec, 1, dir)
	four := runCapacity(t, fixedSpec, 4, "")
	if !reflect.DeepEqual(withoutProbeTimes(withoutHostTime(one)), withoutProbeTimes(withoutHostTime(four))) {
		t.Error("rows differ between 1 and 4 workers")
	}
	again := runCapacity(t, fixedSpec, 2, dir)
	if !reflect.DeepEqual(one, again) {
		t.Error("a resumed run's rows differ from the run that simulated them")
	}
	path := filepath.Join(dir, results.ProbesFile)
	if err := results.WriteProbes(path, again); err != nil {
		t.Fatal(err)
	}
	read, err := results.ReadProbes(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []results.ProbeRow
	for _, r := range one {
		all = append(all, r.Probes...)
	}
	if !reflect.DeepEqual(read, all) {
		t.Errorf("probes.parquet round trip: %d rows, want %d", len(read), len(all))
	}
}

func withoutProbeTimes(rows []results.Row) []results.Row {
	for i := range rows {
		probes := make([]results.ProbeRow, len(rows[i].Probes))
		for k, p := range rows[i].Probes {
			p.WallTimeMs = 0
			probes[k] = p
		}
		rows[i].Probes = probes
	}
	return rows
}

// aggregatedBudget pins the built-in sweep's aggregated token budget to the 8,192 tokens these
// tests' figures were measured at, so that the sets below pick one deployment.
const aggregatedBudget = "engine.workers.aggregated.scheduler.max_batched_tokens=8192"

// BenchmarkCapacityBuiltIn runs the built-in sweep (capacity search on every deployment) and
// reports probes per searched deployment (the search's cost; target <= 8), deployments per second
// and probes per second.
func BenchmarkCapacityBuiltIn(b *testing.B) {
	s, err := grid.Parse(examples.DefaultSweep(), examples.DefaultSweepName, nil, nil, results.CheckMetric)
	if err != nil {
		b.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		b.Fatal(err)
	}
	probes, searched := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		out, err := Run(context.Background(), x.Points, Options{OutputDir: dir, Parallelism: runtime.NumCPU(),
			Capacity: s.Optimization.CapacitySearch})
		if err != nil || out.Failed+out.TimedOut > 0 {
			b.Fatalf("%v %+v", err, out)
		}
		for _, r := range out.Rows {
			if r.EquivalentTo == "" {
				probes += len(r.Probes)
				searched++
			}
		}
	}
	b.ReportMetric(float64(probes)/float64(searched), "probes/point")
	b.ReportMetric(float64(len(x.Points)*b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(probes)/b.Elapsed().Seconds(), "probes/s")
}

// A tolerance below float64's resolution ends when no load lies inside the bracket, never
// probing one load twice; a search stopped before any miss says the capacity is a lower bound.
// One prompt a pass (100 batched tokens) puts the capacity near 100 req/s, so that the first
// search's 61 probes simulate 240-1,800 requests each (about 10 times fewer than at the 1,000
// req/s of 1,000 batched tokens; 2.9 s under -race against 31.7 s, 2026-12-06).
func TestCapacitySearchEnds(t *testing.T) {
	one := "engine.workers.aggregated.parallelism.replicas=1"
	r := runCapacity(t, fixedSpec, 1, "", one, "engine.workers.aggregated.scheduler.max_batched_tokens=100",
		"traffic.load={type: constant_rate, requests_per_second: 1}",
		"traffic.stop={requests_per_load_unit: 2}",
		"optimization.capacity_search={min: 10, max: 10000, relative_tolerance: 1e-300, max_probes: 200}")[0]
	seen := map[float64]bool{}
	for _, p := range r.Probes {
		if seen[p.Load] {
			t.Fatalf("load %v probed twice (%d probes)", p.Load, len(r.Probes))
		}
		seen[p.Load] = true
	}
	if r.Status != results.StatusOK || len(r.Probes) >= 200 || r.Reason != "" || *r.CapacityLoadUnit != "requests_per_second" {
		t.Errorf("tiny tolerance: status %s, %d probes, reason %q", r.Status, len(r.Probes), r.Reason)
	}
	r = runCapacity(t, fixedSpec, 1, "", one, "optimization.capacity_search={max_probes: 2}")[0]
	if want := "capacity_search: stopped at max_probes (2) before any load missed the SLA: the capacity is at least"; !strings.HasPrefix(r.Reason, want) {
		t.Errorf("max_probes 2: reason %q, want %q...", r.Reason, want)
	}
}

// rateSpec is a deployment whose rate capacity is known by hand: a lone request (16 prompt
// tokens, 5 output tokens) takes 35 ms (the prefill pass 10 + 5 ms gives the first token at 15 ms,
// then 4 decode passes of 5 ms), and a request arriving while another runs waits for it, so TTFT
// <= 15 ms holds for every request exactly when arrivals are at least 35 ms apart: the capacity
// is 1000/35 = 28.57 req/s. Arrival i is at i × 35 ms, whose rounding made the TTFT of such a
// request 15 ms plus a few ulps of its arrival time.
const rateSpec = `traffic:
  source: {type: synthetic, input_tokens: 16, output_tokens: 5}
  load: {type: constant_rate, requests_per_second: 1}
  stop: {requests: 200}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 5}
evaluation: {sla: {ttft_ms: 15}}
optimization: {capacity_search: {attainment: 0.99, min: 1, max: 1000, relative_tolerance: 0.05, max_probes: 30}}
`

// TestRateCapacityMeetsBoundsExactly: the search's capacity lies in the tolerance band below the
// exact 1000/35 req/s, [1000/35 / 1.05, 1000/35] = [27.21, 28.57].
func TestRateCapacityMeetsBoundsExactly(t *testing.T) {
	rows := runCapacity(t, rateSpec, 1, "")
	if len(rows) != 1 || rows[0].CapacityLoad == nil {
		t.Fatalf("rows %+v", rows)
	}
	exact := 1000.0 / 35
	if c := *rows[0].CapacityLoad; c < exact/1.05 || c > exact {
		t.Errorf("capacity %v req/s, want in [%v, %v]", c, exact/1.05, exact)
	}
}

// A percentile bound limits the capacity on its own: under fixedSpec with TTFT <= 25 ms for
// 99 % of requests (which alone allows 20 per replica), p99_ttft_ms 15 holds only while every
// request is prefilled in the first pass after it arrives (TTFT 10 ms, c <= 10 per replica):
// at c = 11 on one replica, one request in eleven waits a second pass (20 ms), far more than
// 1 %, so the p99 is 20 ms, although every request still meets the 25 ms bound (attainment 1).
// The capacities are 10 and 20; the probes just above them meet attainment but not the bound.
func TestCapacityPercentileBound(t *testing.T) {
	rows := runCapacity(t, fixedSpec, 2, "", "evaluation.sla={ttft_ms: 25, p99_ttft_ms: 15}")
	for i, want := range []float64{10, 20} {
		r := rows[i]
		if r.Status != results.StatusOK || r.CapacityLoad == nil || *r.CapacityLoad != want {
			t.Errorf("replicas %d: status %s capacity %v, want %g (reason %q)", i+1, r.Status, r.CapacityLoad, want, r.Reason)
			continue
		}
		if *r.P99TTFTMs != 10 || !*r.SLAPercentileTermsMet || r.SLAPercentileTermsFailed != nil || *r.SLAP99TTFTMs != 15 {
			t.Errorf("replicas %d: p99 TTFT %g, terms met %v failed %v", i+1, *r.P99TTFTMs, *r.SLAPercentileTermsMet, r.SLAPercentileTermsFailed)
		}
		missed := false
		for _, p := range r.Probes {
			if p.MeetsSLA != (p.Load <= want) || p.SLAPercentileTermsMet == nil || *p.SLAPercentileTermsMet != p.MeetsSLA {
				t.Errorf("replicas %d: probe at %g meets %v, terms met %v", i+1, p.Load, p.MeetsSLA, p.SLAPercentileTermsMet)
			}
			if p.Load == want+1 {
				missed = p.SLAAttainment == 1 && *p.P99TTFTMs == 20
			}
		}
		if !missed {
			t.Errorf("replicas %d: no probe at %g with attainment 1 and p99 TTFT 20: %+v", i+1, want+1, r.Probes)
		}
	}
	// A percentile bound alone: every completed request is good, so the bound decides.
	rows = runCapacity(t, fixedSpec, 1, "", "engine.workers.aggregated.parallelism.replicas=1", "evaluation.sla={p99_ttft_ms: 15}")
	if r := rows[0]; r.CapacityLoad == nil || *r.CapacityLoad != 10 || *r.SLAAttainment != 1 {
		t.Errorf("p99_ttft_ms alone: capacity %v attainment %v, want 10 and 1", r.CapacityLoad, r.SLAAttainment)
	}
	// Below one pass the bound fails at min: infeasible, and the reason names it.
	rows = runCapacity(t, fixedSpec, 1, "", "engine.workers.aggregated.parallelism.replicas=1", "evaluation.sla={ttft_ms: 25, p99_ttft_ms: 5}")
	if r := rows[0]; r.Status != results.StatusInfeasible ||
		r.Reason != "sla_constraint: percentile bound missed at the minimum load 1 concurrency: p99_ttft_ms 10 > 5 (SLA attainment 1 >= 0.99)" {
		t.Errorf("p99_ttft_ms 5: status %s reason %q", r.Status, r.Reason)
	}
}

// bracket puts the capacity below the least load that missed: with misses at 100 and 400 and
// meets at 1, 16, 64 and 200 (a tail bound that misses in a band and holds again above it), lo
// is 64 and hi 100; with no miss, lo is the largest meet; with the minimum missing, lo is -1.
func TestBracket(t *testing.T) {
	mk := func(loads ...float64) []probeResult {
		var out []probeResult
		for _, x := range loads {
			meets := x > 0
			out = append(out, probeResult{load: max(x, -x), probe: results.Probe{Load: max(x, -x), Meets: meets}})
		}
		return out
	}
	for _, c := range []struct {
		loads  []float64 // negative: missed
		lo, hi int
	}{
		{[]float64{1, 16, 200, -400, -100, 64}, 5, 4},
		{[]float64{1, 16, 128}, 2, -1},
		{[]float64{-1}, -1, 0},
		{[]float64{1, 16, -128, 64, -80, 72}, 5, 4},
	} {
		if lo, hi := bracket(mk(c.loads...)); lo != c.lo || hi != c.hi {
			t.Errorf("%v: lo %d hi %d, want %d %d", c.loads, lo, hi, c.lo, c.hi)
		}
	}
}

// gapLoad probes the highest gap wider than 1.5× among the loads that met whose upper end is
// above half the capacity: met at 1, 2, 16, 64 and 189 (capacity 189, half 94.5): 64 to 189 is
// 2.95×, probed at √(64 × 189) = 109.98 → 110; then 110 to 189 (1.72×) at 144; then 64 to 110
// (1.72×, 110 > 94.5) at 84; then none (each gap at most 1.31×, or ending at or below 94.5). A
// gap of exactly 1.5× is left; rate loads are not rounded.
func TestGapLoad(t *testing.T) {
	mk := func(loads ...float64) []probeResult {
		var out []probeResult
		for _, x := range loads {
			out = append(out, probeResult{load: x, probe: results.Probe{Load: x, Meets: true}})
		}
		return out
	}
	top := func(p []probeResult) int {
		lo, _ := bracket(p)
		return lo
	}
	for _, c := range []struct {
		loads []float64
		whole bool
		want  float64
	}{
		{[]float64{1, 2, 16, 64, 189}, true, 110},
		{[]float64{1, 2, 16, 64, 189, 110}, true, 144},
		{[]float64{1, 2, 16, 64, 189, 110, 144}, true, 84},
		{[]float64{1, 2, 16, 64, 189, 110, 144, 84}, true, 0},
		{[]float64{1, 2, 4, 8}, true, 6},
		{[]float64{8, 12}, true, 0},
		{[]float64{1, 3}, true, 2},
		{[]float64{2, 8}, false, 4},
	} {
		p := mk(c.loads...)
		if got := gapLoad(p, top(p), c.whole); got != c.want {
			t.Errorf("%v: gapLoad %v, want %v", c.loads, got, c.want)
		}
	}
}

// A probe within 10 % of the SLA's bound is rerun twice as long: under fixedSpec (one replica)
// with TTFT <= 21 ms, loads up to 10 have TTFT 10 ms (headroom 0.48) and run their own 50
// requests per load unit, loads 11 to 20 have 20 ms for some requests (headroom 0.95 at the
// attainment quantile) and run 100, and above 20 a tenth wait 30 ms (headroom 1.43): the
// capacity is still 20, and its probe ran 100 requests per load unit.
func TestCapacityEdgeProbeDoubled(t *testing.T) {
	r := runCapacity(t, fixedSpec, 1, "", "engine.workers.aggregated.parallelism.replicas=1", "evaluation.sla={ttft_ms: 21}")[0]
	if r.CapacityLoad == nil || *r.CapacityLoad != 20 {
		t.Fatalf("capacity %v, want 20", deref(r.CapacityLoad))
	}
	edges := 0
	for _, p := range r.Probes {
		h := 0.0
		if p.SLAHeadroom != nil {
			h = *p.SLAHeadroom
		}
		doubled := p.StopPerLoadUnit != nil && *p.StopPerLoadUnit == 100
		if doubled {
			edges++
		}
		if edge := h > 0.9 && h < 1.1; doubled != edge || (!edge && p.StopPerLoadUnit != nil) {
			t.Errorf("probe at %v (headroom %v): stop_per_load_unit %v, want 100 only within 10 %% of the bound", p.Load, h, deref(p.StopPerLoadUnit))
		}
		if p.Load == 20 && !doubled {
			t.Errorf("the capacity's probe ran %v requests per load unit, want 100", deref(p.StopPerLoadUnit))
		}
	}
	if edges == 0 {
		t.Error("no probe was rerun")
	}
}

// Under kv_router the built-in workload's H200 BF16 2× TP4 deployment leaves the ramp's even
// spread only over minutes (a session's turns return to the replica holding its KV, and they
// bunch): without the kv_router horizon its capacity was 231 sessions at 4 sessions per slot,
// each short probe below meeting the SLA before the bunching set in. Measured from
// affineHorizonSeconds on, the capacity is the same within 10 % at 4 and 16 sessions per slot
// (90 and 87, 2026-12-06), and the row's probe was measured after a warm-up of at least that
// horizon.
func TestCapacitySettlesUnderKVRouter(t *testing.T) {
	if raceEnabled {
		t.Skip("two capacity searches of 8-GPU deployments: make test runs it without -race")
	}
	var caps []float64
	for _, per := range []string{"4", "16"} {
		rows := runCapacity(t, string(examples.DefaultSweep()), 1, "", "engine.mode=aggregated", aggregatedBudget, "engine.hardware=h200_sxm",
			"engine.precision.weights=bf16", "engine.workers.aggregated.parallelism.replicas=2",
			"engine.workers.aggregated.parallelism.tensor=4", "router.policy=kv_router", "traffic.stop.sessions_per_load_unit="+per)
		if len(rows) != 1 || rows[0].CapacityLoad == nil || rows[0].WarmupSeconds == nil || rows[0].LoadRampSeconds == nil {
			t.Fatalf("%s sessions per slot: rows %+v", per, rows)
		}
		r := rows[0]
		t.Logf("%s sessions per slot: capacity %g, ramp %.2f s, warm-up %.2f s", per, *r.CapacityLoad, *r.LoadRampSeconds, *r.WarmupSeconds)
		if *r.WarmupSeconds < affineHorizonSeconds {
			t.Errorf("%s sessions per slot: warm-up %.2f s (ramp %.2f s), want at least %d s: the probe was not settled "+
				"past the horizon", per, *r.WarmupSeconds, *r.LoadRampSeconds, affineHorizonSeconds)
		}
		caps = append(caps, *r.CapacityLoad)
	}
	if caps[1] < 0.9*caps[0] || caps[1] > caps[0]/0.9 {
		t.Errorf("capacities %v at 4 and 16 sessions per slot: the answer depends on the run's length", caps)
	}
}

// A probe that misses narrowly and meets on its edge rerun is settled before it decides: on the
// built-in workload, H100 BF16, disaggregated P 1× TP2 + D 2× TP1 under round_robin, 146 sessions
// missed (SLA headroom 1.023 over 6 sessions per slot), met on its edge rerun with the run doubled
// (0.994) and missed when settled with the warm-up moved past the edge rerun's steady window (1.034;
// measured 2026-12-06): the search would take 146 from the edge rerun; settled, the capacity is
// below 146 (140) and its row's warm-up is past the pilot's two slot cycles. The runs are
// recorded, so that a timing change that no longer gives this sequence at 146 fails here with
// that said, rather than passing without testing anything.
func TestCapacityEdgeRerunIsSettled(t *testing.T) {
	if raceEnabled {
		t.Skip("a capacity search of a 3-GPU deployment: make test runs it without -race")
	}
	spec, err := grid.Parse(examples.DefaultSweep(), "spec.yaml", []string{"engine.mode=disaggregated", "engine.hardware=h100_sxm",
		"engine.precision.weights=bf16", "engine.workers.prefill.parallelism.replicas=1", "engine.workers.prefill.parallelism.tensor=2",
		"engine.workers.decode.parallelism.replicas=2", "engine.workers.decode.parallelism.tensor=1", "router.policy=round_robin"},
		nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	const load = 146
	var seq []bool // whether each run at the pinned load met the SLA, pilot aside
	record := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		res, err := sim.Run(ctx, cfg, opt)
		if err == nil && cfg.Traffic.Load.Concurrency == load && cfg.Traffic.Load.Ramp() > 0 {
			seq = append(seq, measureProbe(res, cfg, sim.SLA(cfg), 0.99).meets)
		}
		return res, err
	}
	out, err := Run(context.Background(), x.Points, Options{OutputDir: t.TempDir(), Parallelism: 1,
		Capacity: spec.Optimization.CapacitySearch, Simulate: record})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seq, []bool{false, true, false}) {
		t.Fatalf("runs at %d sessions met the SLA %v, want [false true false] (a miss, its edge rerun meeting, "+
			"the settled run missing): the timing moved, so this test no longer pins its case; find a probe that does", load, seq)
	}
	rows := out.Rows
	if len(rows) != 1 || rows[0].CapacityLoad == nil || rows[0].WarmupSeconds == nil || rows[0].LoadRampSeconds == nil {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	t.Logf("capacity %g, ramp %.2f s, warm-up %.2f s", *r.CapacityLoad, *r.LoadRampSeconds, *r.WarmupSeconds)
	if *r.CapacityLoad >= load || *r.WarmupSeconds <= 2.01**r.LoadRampSeconds {
		t.Errorf("capacity %g with warm-up %.2f s (ramp %.2f s): want below %d, from a settled probe", *r.CapacityLoad,
			*r.WarmupSeconds, *r.LoadRampSeconds, load)
	}
	// round_robin is not prefix-affine: its settling reruns keep their doubling, short of the
	// kv_router horizon.
	if *r.WarmupSeconds >= affineHorizonSeconds {
		t.Errorf("warm-up %.2f s under round_robin: settled to the kv_router horizon", *r.WarmupSeconds)
	}
	// One worker leaves kv_router nowhere to choose: the same capacity and warm-up.
	one := func(policy string) results.Row {
		rows := runCapacity(t, string(examples.DefaultSweep()), 1, "", "engine.mode=aggregated", aggregatedBudget, "engine.hardware=h200_sxm",
			"engine.precision.weights=fp8", "engine.workers.aggregated.parallelism.replicas=1",
			"engine.workers.aggregated.parallelism.tensor=1", "router.policy="+policy)
		if len(rows) != 1 || rows[0].CapacityLoad == nil || rows[0].WarmupSeconds == nil {
			t.Fatalf("one worker under %s: rows %+v", policy, rows)
		}
		return rows[0]
	}
	rr, kv := one("round_robin"), one("kv_router")
	if *kv.CapacityLoad != *rr.CapacityLoad || *kv.WarmupSeconds != *rr.WarmupSeconds {
		t.Errorf("one worker: capacity %g, warm-up %g s under kv_router, want %g and %g s as under round_robin",
			*kv.CapacityLoad, *kv.WarmupSeconds, *rr.CapacityLoad, *rr.WarmupSeconds)
	}
	// A spec that gives the ramp keeps its start: no probe is settled, so the row's warm-up is the
	// ramp's 5 s (an explicit ramp_seconds R warms up R).
	rows = runCapacity(t, string(examples.DefaultSweep()), 1, "", "engine.mode=aggregated", aggregatedBudget, "engine.hardware=h200_sxm",
		"engine.precision.weights=fp8", "engine.workers.aggregated.parallelism.replicas=1",
		"engine.workers.aggregated.parallelism.tensor=1", "router.policy=round_robin", "traffic.load.ramp_seconds=5")
	if len(rows) != 1 || rows[0].WarmupSeconds == nil || *rows[0].WarmupSeconds != 5 {
		t.Errorf("explicit ramp: rows %+v, want a warm-up of 5 s", rows)
	}
}

// steady keeps the requests a run's statistics count: from the warm-up on (arrival at warmupMs
// kept) and, with a cool-down, up to its start (arrival at CooldownFromMs kept, after it not),
// and every rejected one; nil, every request, when neither applies.
func TestSteadyKeepsTheMeasuredRequests(t *testing.T) {
	cool := &metrics.Summary{Cooldown: true, CooldownFromMs: 900}
	for _, c := range []struct {
		name    string
		warmup  float64
		s       *metrics.Summary
		arrival []float64
		kept    []bool
	}{
		{"warm-up", 100, nil, []float64{0, 99.9, 100, 5000}, []bool{false, false, true, true}},
		{"warm-up, summary without cool-down", 100, &metrics.Summary{CooldownFromMs: 900}, []float64{99, 100, 901}, []bool{false, true, true}},
		{"warm-up and cool-down", 100, cool, []float64{99, 100, 900, 900.1}, []bool{false, true, true, false}},
		{"cool-down only", 0, cool, []float64{0, 900, 901}, []bool{true, true, false}},
	} {
		keep := steady(c.warmup, c.s)
		if keep == nil {
			t.Fatalf("%s: nil filter", c.name)
		}
		for i, a := range c.arrival {
			if got := keep(&engine.Request{ArrivalMs: a}); got != c.kept[i] {
				t.Errorf("%s: arrival %g kept %v, want %v", c.name, a, got, c.kept[i])
			}
		}
	}
	// A rejected request counts whenever it arrived, as metrics.Summarize counts it.
	keep := steady(100, cool)
	for _, a := range []float64{0, 950} {
		if !keep(&engine.Request{ArrivalMs: a, Status: engine.Rejected}) {
			t.Errorf("a request rejected at %g ms was left out of the headroom", a)
		}
	}
	if steady(0, nil) != nil || steady(0, &metrics.Summary{CooldownFromMs: 900}) != nil {
		t.Error("no warm-up and no cool-down: want nil (every request)")
	}
}

// traceSpec is one replica under a trace_timestamps load: every pass takes 10 ms, so a request
// of 100 prompt and 100 output tokens lives at least 1 s, and at most 64 sequences run at once:
// at most 64 requests per second, speedup 6.4 of evenlyTrace's 10 per second; past about
// speedup 4 the requests beyond the 64 running wait more than the TTFT bound of 100 ms for a
// slot. The stop is set by each test.
const traceSpec = `traffic:
  source: {type: trace, paths: [TRACE], block_size: 64}
  load: {type: trace_timestamps, speedup: 1}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h100_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 1000, max_sequences: 64}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 100000}}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 10}
router: {policy: round_robin}
evaluation: {sla: {ttft_ms: 100}}
optimization: {capacity_search: {attainment: 0.95, min: 0.5, max: 64}}
`

// evenlyTrace writes a Mooncake trace of n requests 100 ms apart (10 per second of trace time),
// each 100 prompt tokens of its own and 100 output tokens, and returns traceSpec over it.
func evenlyTrace(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "even.jsonl")
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 100, "output_length": 100, "hash_ids": [%d, %d]}`+"\n", 100*i, 2*i, 2*i+1)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(traceSpec, "TRACE", path, 1)
}

// A capacity search over a trace_timestamps load replays one segment of the trace at every
// probe: the spec's speedup × max_virtual_time_seconds of trace time (here 1 × 10 s and 1 × 40 s:
// 100 and 400 requests), each probe run until its requests finish, so every probe offers the same
// requests and none is left unfinished. Over an even trace the capacity is then the same at both
// window lengths, within the search's tolerance (a probe stopped at 10 or 40 virtual s would
// replay speedup × that much of the trace and count the requests in flight at the stop, a tenth
// of a 10 s window, as misses). The row's config replays the same segment and reproduces the
// row.
func TestCapacityTraceSegment(t *testing.T) {
	spec := evenlyTrace(t, 600)
	caps := map[int]float64{}
	for _, window := range []int{10, 40} {
		rows := runCapacity(t, spec, 1, "", "traffic.stop={max_virtual_time_seconds: "+strconv.Itoa(window)+"}")
		r := rows[0]
		if r.Status != results.StatusOK || r.CapacityLoad == nil {
			t.Fatalf("window %d s: status %s reason %q", window, r.Status, r.Reason)
		}
		caps[window] = *r.CapacityLoad
		want := int64(10*window + 1) // timestamps 0 to window s inclusive
		for _, p := range r.Probes {
			if *p.OfferedRequests != want || *p.UnfinishedRequests != 0 {
				t.Errorf("window %d s: the probe at speedup %g offered %d requests (%d unfinished), want %d (0)",
					window, p.Load, *p.OfferedRequests, *p.UnfinishedRequests, want)
			}
		}
		if seg := "stop: {max_trace_seconds: " + strconv.Itoa(window) + "}"; !strings.Contains(r.ConfigYAML, seg) ||
			strings.Contains(r.ConfigYAML, "max_virtual_time_seconds") {
			t.Errorf("window %d s: the row's config does not replay the segment (%s):\n%s", window, seg, r.ConfigYAML)
		}
		res := runRowConfig(t, r)
		if got := res.Summary.GoodputCompletedRequests; int64(got) != *r.GoodputCompletedRequests ||
			res.Summary.OutputThroughputTokS != *r.OutputThroughputTokS {
			t.Errorf("window %d s: the row's config gives %d good requests and %g tok/s, the row %d and %g", window,
				got, res.Summary.OutputThroughputTokS, *r.GoodputCompletedRequests, *r.OutputThroughputTokS)
		}
	}
	lo, hi := min(caps[10], caps[40]), max(caps[10], caps[40])
	if hi-lo > grid.DefaultCapacityTolerance*hi || lo < 3 || hi > 6.4 {
		t.Errorf("capacity %g at a 10 s window and %g at 40 s: want both within 5 %% of each other, between 3 and 6.4",
			caps[10], caps[40])
	}
}

// A capacity search counts a request cut short of its requested output as missing the SLA: a
// disaggregated Llama-3.1-8B whose decode pool holds 2,112 tokens cuts 16 of the 201 requests at
// concurrency 1 short (prompts of 1,639–2,048 tokens, outputs of 103–128), attainment 0.920 <
// 0.99 at the minimum load: infeasible, where its latencies alone met the SLA and the search chose
// concurrency 3 with 28 of 211 truncated (a user trial, 2026-12-07). A pool of 2,560 tokens cuts
// none and keeps its capacity.
func TestCapacityCountsTruncatedAsMissed(t *testing.T) {
	spec := `traffic:
  source:
    type: synthetic
    input_tokens: {distribution: uniform, min: 1639, max: 2048}
    output_tokens: {distribution: uniform, min: 103, max: 128}
  load: {type: concurrency, concurrency: 1}
  stop: {requests_per_load_unit: 10}
engine:
  mode: disaggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  workers:
    prefill:
      parallelism: {replicas: 1, tensor: 1}
    decode:
      parallelism: {replicas: 1, tensor: 1}
      kv_cache: {block_size: 64, capacity: {type: default, max_tokens: {choices: [2112, 2560]}}}
router: {policy: round_robin}
evaluation: {sla: {ttft_ms: 2000, itl_ms: 50}}
optimization:
  capacity_search: {max: 256}
`
	rows := runCapacity(t, spec, 2, "")
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	cut, whole := rows[0], rows[1]
	if cut.Status != results.StatusInfeasible || cut.SLAAttainment == nil || math.Abs(*cut.SLAAttainment-185.0/201) > 1e-12 ||
		!strings.Contains(cut.Reason, "16 of 201 completed requests stopped short of their requested output") {
		t.Errorf("pool of 2,112 tokens: %s %q, attainment %v; want infeasible at 185/201", cut.Status, cut.Reason, cut.SLAAttainment)
	}
	// The goodput columns leave the 16 out as attainment does: 185 good of 201 completed over
	// one window, so goodput / request throughput = 185/201 (no warm-up: both over the run).
	first := cut.Probes[0]
	if cut.GoodputCompletedRequests == nil || *cut.GoodputCompletedRequests != 185 ||
		math.Abs(*cut.GoodputRequestThroughputRPS / *cut.RequestThroughputRPS - 185.0/201) > 1e-12 ||
		*first.GoodputCompletedRequests != 185 || math.Abs(*first.GoodputRequestThroughputRPS / *first.RequestThroughputRPS - 185.0/201) > 1e-12 {
		t.Errorf("pool of 2,112 tokens: goodput %v requests at %v/s of %v/s (probe %v at %v/s); want 185 at 185/201 of the rate",
			deref(cut.GoodputCompletedRequests), deref(cut.GoodputRequestThroughputRPS), deref(cut.RequestThroughputRPS),
			deref(first.GoodputCompletedRequests), deref(first.GoodputRequestThroughputRPS))
	}
	if whole.Status != results.StatusOK || whole.CapacityLoad == nil || *whole.CapacityLoad != 3 {
		t.Errorf("pool of 2,560 tokens: %s %q, capacity %v; want ok at 3", whole.Status, whole.Reason, whole.CapacityLoad)
	}
}

// TestTraceCapacityIndependentOfItsWindow runs one deployment's capacity search over a trace
// under a concurrency load at windows of 10 and 100 s of virtual time (a request lives about
// 2 s): the answer is the deployment's, not the window's. Started all at once and with the
// requests in flight at the stop counted as misses, it was infeasible at 10 s and 9 at 100 s;
// ramped (traceRamp) and censored (metrics.Censored), 48 and 46 (2026-12-07).
func TestTraceCapacityIndependentOfItsWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	rng := rand.New(rand.NewPCG(5, 5))
	var b strings.Builder
	for i := range 4000 {
		n, o := 500+rng.IntN(1001), 50+rng.IntN(101)
		ids := make([]string, (n+63)/64)
		for k := range ids {
			ids[k] = strconv.Itoa(100*i + k)
		}
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n", 10*i, n, o,
			strings.Join(ids, ", "))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := `traffic:
  source: {type: trace, format: mooncake, paths: [` + path + `], block_size: 64}
  load: {type: concurrency, concurrency: 1}
  stop: {max_virtual_time_seconds: 10}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h100_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 2048, max_sequences: 256}
      timing: {type: roofline}
router: {policy: round_robin}
evaluation: {sla: {ttft_ms: 300, itl_ms: 20}}
optimization:
  capacity_search: {max: 512}
`
	short := runCapacity(t, spec, 1, "")[0]
	long := runCapacity(t, spec, 1, "", "traffic.stop.max_virtual_time_seconds=100")[0]
	for _, r := range []results.Row{short, long} {
		if r.Status != results.StatusOK || r.CapacityLoad == nil || r.LoadRampSeconds == nil || r.WarmupSeconds == nil {
			t.Fatalf("%v s window: %s %q, capacity %v, ramp %v, warm-up %v", deref(r.StopMaxVirtualTimeSeconds), r.Status, r.Reason,
				deref(r.CapacityLoad), deref(r.LoadRampSeconds), deref(r.WarmupSeconds))
		}
	}
	if a, b := *short.CapacityLoad, *long.CapacityLoad; math.Abs(a-b) > 0.1*b || b < 40 {
		t.Errorf("capacity %g at a 10 s window, %g at 100 s; want within 10 %% of each other, at least 40", a, b)
	}
	// A trace of 60 requests, every one started before the loop could be measured at the loads
	// near the capacity: the trace, not the run, cannot hold them, so the capacity is the largest
	// load measured below one it could not hold, a lower bound (capacity_bounded), below the
	// whole trace's, with the reason naming the trace and that load.
	few := runCapacity(t, spec, 1, "", "traffic.stop.max_virtual_time_seconds=100", "traffic.source.paths=["+shortTrace(t, path)+"]")[0]
	if few.Status != results.StatusOK || few.CapacityLoad == nil || few.CapacityBounded == nil || !*few.CapacityBounded ||
		!results.TraceBounded(&few) || *few.CapacityLoad >= *long.CapacityLoad ||
		!strings.Contains(few.Reason, fmt.Sprintf("the capacity is at least concurrency %g (the SLA held there), and at concurrency ", deref(few.CapacityLoad))) ||
		!strings.Contains(few.Reason, "the trace's 60 sessions all started within") || !strings.HasSuffix(few.Reason, "give a trace of more sessions") {
		t.Errorf("60-session trace: %s %q, capacity %v, bounded %v; want ok, bounded by the trace below %g", few.Status, few.Reason,
			deref(few.CapacityLoad), deref(few.CapacityBounded), *long.CapacityLoad)
	}
	if k := results.Load(&few); few.CapacityLoad != nil && k != fmt.Sprintf("capacity >= concurrency %g (bounded by its trace)", *few.CapacityLoad) {
		t.Errorf("60-session trace's load label %q", k)
	}
	// Its probes say which measured no steady state (unmeasured, never a met probe's), and a
	// probe above the capacity has one.
	unmeasuredAbove := false
	for _, p := range few.Probes {
		switch {
		case p.Unmeasured != nil && (p.MeetsSLA || p.SLABindingTerm != nil || !strings.HasPrefix(*p.Unmeasured, "measured no steady state: ")):
			t.Errorf("probe %d at %g: meets %v, binding %v, unmeasured %q", p.ProbeIndex, p.Load, p.MeetsSLA, deref(p.SLABindingTerm), *p.Unmeasured)
		case p.Unmeasured != nil && few.CapacityLoad != nil && p.Load > *few.CapacityLoad:
			unmeasuredAbove = true
		}
	}
	if !unmeasuredAbove {
		t.Errorf("no probe above the trace-bounded capacity says it measured no steady state: %+v", few.Probes)
	}
	// The same trace under a search max_probes stops before its bracket closes keeps that account
	// (the capacity between two loads), not the trace's; one whose minimum is more sessions than
	// the trace holds fails naming the trace; with an explicit ramp (no trace ramp of the
	// search's) and an SLA loose enough to meet at any load, the loads above the trace's 60
	// sessions are bounded by it, not met up to max (512).
	short60 := "traffic.source.paths=[" + shortTrace(t, path) + "]"
	if r := runCapacity(t, spec, 1, "", "traffic.stop.max_virtual_time_seconds=100", short60, "optimization.capacity_search.max_probes=4")[0]; r.Status != results.StatusOK ||
		!strings.HasPrefix(r.Reason, "capacity_search: stopped at max_probes (4) with the capacity between ") || results.TraceBounded(&r) ||
		r.CapacityBounded == nil || *r.CapacityBounded {
		t.Errorf("60-session trace, max_probes 4: %s %q, bounded %v", r.Status, r.Reason, deref(r.CapacityBounded))
	}
	if r := runCapacity(t, spec, 1, "", "traffic.stop.max_virtual_time_seconds=100", short60, "optimization.capacity_search.min=70")[0]; r.Status != results.StatusFailed ||
		!strings.Contains(r.Reason, "the trace has 60 sessions, fewer than concurrency 70, so the loop cannot hold it: give a trace of more sessions, "+
			"or a lower optimization.capacity_search.min") {
		t.Errorf("60-session trace, min 70: %s %q", r.Status, r.Reason)
	}
	if r := runCapacity(t, spec, 1, "", "traffic.stop.max_virtual_time_seconds=100", short60, "traffic.load.ramp_seconds=0", "evaluation.sla={ttft_ms: 1000000, itl_ms: 1000}")[0]; r.Status != results.StatusOK ||
		!results.TraceBounded(&r) || r.CapacityLoad == nil || *r.CapacityLoad > 60 {
		t.Errorf("60-session trace, ramp 0 s: %s %q, capacity %v; want bounded by the trace at 60 or less", r.Status, r.Reason, deref(r.CapacityLoad))
	}
	// A window of 3 s leaves the loads near the capacity, whose requests live about 2 s, unmeasured:
	// the capacity would be the window's, and the point fails saying what to lengthen.
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"traffic.stop.max_virtual_time_seconds=3"}, "lengthen traffic.stop.max_virtual_time_seconds"},
		// At the search's minimum a 0.2 s window censors the one request in flight: the point
		// fails rather than read infeasible.
		{[]string{"traffic.stop.max_virtual_time_seconds=0.2"}, "more than were judged: lengthen traffic.stop.max_virtual_time_seconds"},
	} {
		r := runCapacity(t, spec, 1, "", c.sets...)[0]
		if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "measured no steady state: ") || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%v: %s %q, capacity %v; want failed, %q", c.sets, r.Status, r.Reason, deref(r.CapacityLoad), c.want)
		}
		checkFailedProbes(t, &r)
	}
	// Without a capacity search, a point at concurrency 48 over that 3 s window fails the same
	// way rather than be ranked on its first wave's burst; at 40 over 10 s it is ramped.
	fixed := func(sets ...string) results.Row {
		return runCapacity(t, spec, 1, "", append([]string{"optimization.capacity_search=null"}, sets...)...)[0]
	}
	if r := fixed("traffic.load.concurrency=48", "traffic.stop.max_virtual_time_seconds=3"); r.Status != results.StatusFailed || r.CapacityProbes != nil ||
		!strings.Contains(r.Reason, "measured no steady state: ") {
		t.Errorf("fixed point, 3 s window: %s %q; want failed, measured no steady state", r.Status, r.Reason)
	}
	if r := fixed("traffic.load.concurrency=40"); r.Status != results.StatusOK || r.LoadRampSeconds == nil || r.WarmupSeconds == nil {
		t.Errorf("fixed point, 10 s window: %s %q, ramp %v, warm-up %v; want ok, ramped", r.Status, r.Reason,
			deref(r.LoadRampSeconds), deref(r.WarmupSeconds))
	}
	// The short window's row is measured at its capacity with requests in flight at the stop,
	// every one of them still within its bounds then: censored, not missed.
	if short.CensoredRequests == nil || *short.CensoredRequests == 0 || *short.CensoredRequests != *short.UnfinishedRequests ||
		*short.SLAAttainment != float64(*short.GoodputCompletedRequests)/float64(*short.OfferedRequests-*short.CensoredRequests) {
		t.Errorf("10 s window's row: %v unfinished, %v censored, attainment %v of %v good in %v offered",
			deref(short.UnfinishedRequests), deref(short.CensoredRequests), deref(short.SLAAttainment),
			deref(short.GoodputCompletedRequests), deref(short.OfferedRequests))
	}
}

// checkFailedProbes requires the failed row r of a capacity search to keep the probes that ran
// before its search stopped, as probes.parquet rows: capacity_probes counts them, its capacity
// and load columns are null, and a probe its reason names (capacity search probe N) that ran is
// among them with its unmeasured column saying why.
func checkFailedProbes(t *testing.T, r *results.Row) {
	t.Helper()
	if r.CapacityLoad != nil || r.LoadConcurrency != nil || r.CapacityBounded != nil {
		t.Errorf("failed row: capacity %v, load %v, bounded %v; want null", deref(r.CapacityLoad), deref(r.LoadConcurrency), deref(r.CapacityBounded))
	}
	var n int
	if _, err := fmt.Sscanf(r.Reason, "capacity search probe %d at ", &n); err != nil || n == 0 && len(r.Probes) == 0 {
		return // failed at its first probe, which was not kept: nothing ran before it
	}
	if r.CapacityProbes == nil || int(*r.CapacityProbes) != len(r.Probes) || len(r.Probes) < n || r.CapacityLoadUnit == nil {
		t.Fatalf("failed at probe %d: capacity_probes %v, %d probes kept, unit %v", n, deref(r.CapacityProbes), len(r.Probes), deref(r.CapacityLoadUnit))
	}
	for i, p := range r.Probes {
		if p.PointID != r.PointID || p.ProbeIndex != int64(i) || p.LoadUnit != *r.CapacityLoadUnit || p.OfferedRequests == nil {
			t.Errorf("probe %d of a failed search: %+v", i, p)
		}
	}
	if n < len(r.Probes) && (r.Probes[n].Unmeasured == nil || !strings.Contains(r.Reason, *r.Probes[n].Unmeasured)) {
		t.Errorf("probe %d, which failed the point, says no unmeasured reason the row's does: %v", n, r.Probes[n].Unmeasured)
	}
}

// shortTrace writes the first 60 lines of the trace at path beside it and returns the new path.
func shortTrace(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	out := filepath.Join(filepath.Dir(path), "trace60.jsonl")
	if err := os.WriteFile(out, []byte(strings.Join(lines[:60], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// censoredMajority, hand-computed: a 10 s window that censored 3 of 5 offered requests (2
// judged) measured no steady state; 2 of 4 (as many as judged) and none are measured.
func TestCensoredMajority(t *testing.T) {
	cfg := &config.Config{}
	cfg.Traffic.Stop.MaxVirtualTimeSeconds = 10
	want := "measured no steady state: 3 of its 5 offered requests were still in flight within every SLA bound when the " +
		"10 s window ended (censored), more than were judged: lengthen traffic.stop.max_virtual_time_seconds"
	if got := censoredMajority(&metrics.Summary{NumRequests: 5, CensoredRequests: 3}, cfg); got != want {
		t.Errorf("3 of 5: %q, want %q", got, want)
	}
	for _, s := range []metrics.Summary{{NumRequests: 4, CensoredRequests: 2}, {NumRequests: 4}} {
		if got := censoredMajority(&s, cfg); got != "" {
			t.Errorf("%d of %d: %q, want none", s.CensoredRequests, s.NumRequests, got)
		}
	}
}

// A fixed request count below a probe's concurrency cannot hold that load: the probe fails its
// point saying so, rather than read the one burst the run is as the load's attainment (met at
// every concurrency up to the search's max); a search whose max is the count measures up to it.
// A fixed count whose run ends within the warm-up is told to scale with the load, not to shorten
// the warm-up (which would measure that burst).
func TestCapacityFixedCountBelowLoad(t *testing.T) {
	one := "engine.workers.aggregated.parallelism.replicas=1"
	r := runCapacity(t, fixedSpec, 1, "", one, "traffic.stop={requests: 16}", "evaluation.sla.ttft_ms=1000")[0]
	if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "traffic.stop.requests is a fixed 16, too few for concurrency ") ||
		!strings.Contains(r.Reason, "above concurrency 16 the loop never holds its load, every request starting at once") ||
		!strings.Contains(r.Reason, "use traffic.stop.requests_per_load_unit, which scales the run with the load, or an "+
			"optimization.capacity_search.max of at most 16") {
		t.Errorf("fixed 16 requests, SLA met by any burst: status %s reason %q capacity %v", r.Status, r.Reason, deref(r.CapacityLoad))
	}
	if len(r.Probes) == 0 {
		t.Error("fixed 16 requests: the failed search kept none of the probes it ran")
	}
	checkFailedProbes(t, &r)
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.stop={requests: 16}", "evaluation.sla.ttft_ms=1000",
		"optimization.capacity_search.max=16")[0]
	if r.Status != results.StatusOK || r.CapacityLoad == nil || *r.CapacityLoad != 16 || !*r.CapacityBounded {
		t.Errorf("fixed 16 requests, max 16: status %s reason %q capacity %v", r.Status, r.Reason, deref(r.CapacityLoad))
	}
	// With the ramp left to the search, a probe needs 4 requests per slot: 16 measure up to
	// concurrency 4.
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.stop={requests: 16}", "evaluation.sla.ttft_ms=1000",
		"traffic.load={type: concurrency, concurrency: 1}")[0]
	if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "traffic.stop.requests is a fixed 16, too few for concurrency ") ||
		!strings.Contains(r.Reason, "above concurrency 4 a probe has fewer than 4 requests per slot, too few to ramp its first wave "+
			"and measure past its warm-up; use traffic.stop.requests_per_load_unit, which scales the run with the load, or an "+
			"optimization.capacity_search.max of at most 4") {
		t.Errorf("fixed 16 requests, ramp left to the search: status %s reason %q", r.Status, r.Reason)
	}
	// Within the warm-up: at the minimum the row is infeasible, its capacity unknown; above it
	// the point fails. Both say what to change.
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.stop={requests: 16}", "traffic.load.warmup_seconds=100")[0]
	if r.Status != results.StatusInfeasible || !strings.HasSuffix(r.Reason, "so none was measured and the deployment's capacity is "+
		"unknown, not missed: traffic.stop.requests is a fixed 16: use traffic.stop.requests_per_load_unit, whose runs are lengthened past the warm-up") {
		t.Errorf("fixed 16 requests within a 100 s warm-up: status %s reason %q", r.Status, r.Reason)
	}
	r = runCapacity(t, fixedSpec, 1, "", one, "traffic.stop={requests: 16}", "evaluation.sla.ttft_ms=1000",
		"traffic.load.warmup_seconds=0.015", "optimization.capacity_search.max=16")[0]
	if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "every arrival came before its warm-up of 0.015 s ended "+
		"(traffic.stop.requests is a fixed 16: use traffic.stop.requests_per_load_unit, whose runs are lengthened past the warm-up)") {
		t.Errorf("fixed 16 requests within a 15 ms warm-up at the higher loads: status %s reason %q", r.Status, r.Reason)
	}
}
