package sim

import (
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// engine.overlap_scheduling under default timing: a lone request's every decode pass loses its
// host time, PassOverheadMs + 1 sequence × SequenceOverheadUs (0.4 + 0.035 ms with the shipped
// factors), while its GPU time (about 3 ms for Llama-3.1-8B on H200) stays; SGLang overlaps by
// default; polynomial timing ignores the setting.
func TestOverlapSchedulingHidesHostTime(t *testing.T) {
	tpot := func(sets ...string) float64 {
		t.Helper()
		base := []string{"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.parallelism.replicas=1",
			"traffic={source: {type: synthetic, input_tokens: 512, output_tokens: 33}, load: {type: concurrency, concurrency: 1}, stop: {requests: 1}}"}
		res := mustRun(t, mustLoad(t, seedSynthetic, append(base, sets...)...))
		r := &res.Requests[0]
		return (r.LastTokenMs - r.FirstTokenMs) / 32
	}
	e := timing.CalibratedEfficiency()
	host := e.PassOverheadMs + e.SequenceOverheadUs/1000
	serial, overlapped := tpot(), tpot("engine.overlap_scheduling=true")
	if d := serial - overlapped; d < host-1e-9 || d > host+1e-9 {
		t.Errorf("vllm TPOT %v ms serial, %v overlapped: differ by %v, want the host time %v", serial, overlapped, d, host)
	}
	sg := []string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=1"}
	if a, b := tpot(sg...), tpot(append(sg, "engine.overlap_scheduling=false")...); b-a < host-1e-9 || b-a > host+1e-9 {
		t.Errorf("sglang TPOT %v ms by default, %v without overlap: want the default overlapped (%v ms less)", a, b, host)
	}
	poly := "engine.workers.aggregated.timing={type: polynomial}"
	if a, b := tpot(poly), tpot(poly, "engine.overlap_scheduling=true"); a != b {
		t.Errorf("polynomial TPOT %v ms, %v with overlap: want equal", a, b)
	}
}
