package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// engine.overlap_scheduling under default timing: a lone request's every decode pass loses its
// host time, PassOverheadMs + 1 sequence × SequenceOverheadUs (0.4 + 0.035 ms with the shipped
// factors), while its GPU time (about 3 ms for Llama-3.1-8B on H200) stays, on the roofline and
// on op-level tables; SGLang overlaps by default, not when its role pipelines; polynomial timing
// ignores the setting; the timing provider says when the host time overlaps.
func TestOverlapSchedulingHidesHostTime(t *testing.T) {
	run := func(opt Options, sets ...string) (tpot float64, provider string) {
		t.Helper()
		_, tpot, provider = loneRequest(t, opt, sets...)
		return tpot, provider
	}
	e := timing.CalibratedEfficiency()
	// The scheduling step hides; the per-sequence time stays on the critical path.
	host := e.PassOverheadMs
	check := func(name string, serial, overlapped float64) {
		t.Helper()
		host := host
		if strings.Contains(name, "op_level") {
			// op_level's own scheduling time per pass (timing.CalibratedOpLevelEfficiency).
			host = timing.CalibratedOpLevelEfficiency().PassOverheadMs
		}
		if d := serial - overlapped; d < host-1e-9 || d > host+1e-9 {
			t.Errorf("%s: TPOT %v ms serial, %v overlapped: differ by %v, want the host time %v", name, serial, overlapped, d, host)
		}
	}
	serial, p1 := run(Options{})
	overlapped, p2 := run(Options{}, "engine.overlap_scheduling=true")
	check("vllm roofline", serial, overlapped)
	if p1 != "roofline" || p2 != "roofline, overlap scheduling" {
		t.Errorf("providers %q and %q, want roofline and roofline, overlap scheduling", p1, p2)
	}
	sg := []string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=1"}
	a, _ := run(Options{}, sg...)
	b, _ := run(Options{}, append(sg, "engine.overlap_scheduling=false")...)
	check("sglang default against false", b, a)
	pp := "engine.workers.aggregated.parallelism.pipeline=2"
	a, _ = run(Options{}, append(sg, pp)...)
	b, _ = run(Options{}, append(sg, pp, "engine.overlap_scheduling=false")...)
	if a != b {
		t.Errorf("sglang with pipeline 2: TPOT %v ms by default, %v with false: want SGLang's default off under pipelining", a, b)
	}
	poly := "engine.workers.aggregated.timing={type: polynomial}"
	a, _ = run(Options{}, poly)
	b, _ = run(Options{}, poly, "engine.overlap_scheduling=true")
	if a != b {
		t.Errorf("polynomial TPOT %v ms, %v with overlap scheduling: want equal", a, b)
	}
	// Op-level tables (vLLM on H200 from the database beside the repository).
	db := systemsDB(t)
	ol := "engine.workers.aggregated.timing={type: default, forward_model: op_level}"
	serial, p1 = run(Options{Systems: db}, ol)
	overlapped, p2 = run(Options{Systems: db}, ol, "engine.overlap_scheduling=true")
	check("vllm op_level", serial, overlapped)
	if p2 != p1+", overlap scheduling" {
		t.Errorf("op_level providers %q and %q: want the second to add \", overlap scheduling\"", p1, p2)
	}
}

// timing.sequence_overhead_us replaces the calibrated per-sequence host time of its role: a lone
// request's every decode pass carries one sampled sequence, so its TPOT grows by exactly the
// difference (1,000 µs − the shipped 20 µs = 0.98 ms), serial or overlapped (the per-sequence
// time stays on the critical path).
func TestSequenceOverheadFromTheConfig(t *testing.T) {
	tpot := func(sets ...string) float64 {
		t.Helper()
		_, tpot, provider := loneRequest(t, Options{}, sets...)
		if given := strings.Contains(strings.Join(sets, " "), "sequence_overhead_us"); given != strings.Contains(provider, ", 1000 µs per sequence") {
			t.Errorf("%v: timing provider %q", sets, provider)
		}
		return tpot
	}
	want := (1000 - timing.CalibratedEfficiency().SequenceOverheadUs) / 1000
	for _, overlap := range []string{"false", "true"} {
		o := "engine.overlap_scheduling=" + overlap
		d := tpot(o, "engine.workers.aggregated.timing.sequence_overhead_us=1000") - tpot(o)
		if d < want-1e-9 || d > want+1e-9 {
			t.Errorf("overlap %s: sequence_overhead_us 1000 adds %v ms of TPOT, want %v", overlap, d, want)
		}
	}
}

// engine.cuda_graphs piecewise under default timing: a lone request's every decode pass idles
// timing.PiecewiseGraphLayerUs at each of Llama-3.1-8B's 32 layers (0.224 ms), serial or
// overlapped (the idle time is the GPU's); its first token, from a pass with prefill tokens, does
// not move; the timing provider says so.
func TestPiecewiseGraphsSlowDecodePasses(t *testing.T) {
	run := func(sets ...string) (ttft, tpot float64, provider string) {
		t.Helper()
		return loneRequest(t, Options{}, sets...)
	}
	const boundaries = 32 * timing.PiecewiseGraphLayerUs / 1000
	for _, overlap := range []string{"false", "true"} {
		t0, full, p1 := run("engine.overlap_scheduling=" + overlap)
		t1, pw, p2 := run("engine.overlap_scheduling="+overlap, "engine.cuda_graphs=piecewise")
		if d := pw - full; d < boundaries-1e-9 || d > boundaries+1e-9 {
			t.Errorf("overlap %s: TPOT %v ms whole, %v piecewise: differ by %v, want %v", overlap, full, pw, d, boundaries)
		}
		if t0 != t1 {
			t.Errorf("overlap %s: TTFT %v ms whole, %v piecewise: want equal", overlap, t0, t1)
		}
		if !strings.HasSuffix(strings.TrimSuffix(p2, ", overlap scheduling"), ", piecewise CUDA graphs") || strings.Contains(p1, "piecewise") {
			t.Errorf("providers %q and %q", p1, p2)
		}
	}
}

// loneRequest runs one request of 512 prompt and 33 output tokens alone on one replica of the
// seed config under default timing, with sets applied, and returns its TTFT and TPOT in ms (the
// mean of its 32 gaps) and the run's timing provider; tokens must be conserved.
func loneRequest(t *testing.T, opt Options, sets ...string) (ttft, tpot float64, provider string) {
	t.Helper()
	base := []string{"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.parallelism.replicas=1",
		"traffic={source: {type: synthetic, input_tokens: 512, output_tokens: 33}, load: {type: concurrency, concurrency: 1}, stop: {requests: 1}}"}
	res, err := Run(context.Background(), mustLoad(t, seedSynthetic, append(base, sets...)...), opt)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, res)
	r := &res.Requests[0]
	return r.FirstTokenMs - r.ArrivalMs, (r.LastTokenMs - r.FirstTokenMs) / 32, res.TimingProvider
}
