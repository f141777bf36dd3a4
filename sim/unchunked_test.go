package sim

import (
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/engine"
)

// TestUnchunkedPrefillRun: three 60-token prompts (2 output tokens, concurrency 3) under a
// 100-token budget with fixed timing (prefill 30 ms, decode 8 ms; a pass with both pays 38).
// Unchunked, each pass starts one whole prompt beside the decode steps:
//
//	pass 1  0– 38: prompt 0                      → request 0's first token at 38
//	pass 2 38– 76: decode 0, prompt 1 (61 tokens) → 0 done at 76, 1's first token at 76
//	pass 3 76–114: decode 1, prompt 2             → 1 done at 114, 2's first token at 114
//	pass 4 114–122: decode 2                      → 2 done at 122
//
// Chunked, pass 1 computes prompt 0 and 40 tokens of prompt 1, and pass 2 the rest of prompt 1
// and all of prompt 2, so request 2's first token comes at 76 and it completes at 84.
func TestUnchunkedPrefillRun(t *testing.T) {
	for _, tc := range []struct {
		chunked             bool
		firstMs, terminalMs []float64
	}{
		{false, []float64{38, 76, 114}, []float64{76, 114, 122}},
		{true, []float64{38, 76, 76}, []float64{76, 84, 84}},
	} {
		cfg := testConfig(60, 2, 3, 3, 1000)
		cfg.Engine.Workers.Aggregated.Scheduler.MaxBatchedTokens = 100
		cfg.Engine.EnableChunkedPrefill = &tc.chunked
		res := mustRun(t, cfg)
		var first, terminal []float64
		for i := range res.Requests {
			first = append(first, res.Requests[i].FirstTokenMs)
			terminal = append(terminal, res.Requests[i].TerminalMs)
		}
		if !slices.Equal(first, tc.firstMs) || !slices.Equal(terminal, tc.terminalMs) {
			t.Errorf("chunked %v: first tokens %v, completions %v; want %v and %v", tc.chunked, first, terminal, tc.firstMs, tc.terminalMs)
		}
		_, listed := res.Summary.RejectedByReason["max_batched_tokens"]
		if listed == tc.chunked {
			t.Errorf("chunked %v: rejected_requests_by_reason lists max_batched_tokens: %v", tc.chunked, listed)
		}
	}
}

// TestUnchunkedPrefillRejects: a prompt longer than max_batched_tokens is rejected at arrival
// with reason max_batched_tokens (vLLM refuses it); a prompt of exactly the budget runs. In
// disaggregated mode the prefill role's budget decides.
func TestUnchunkedPrefillRejects(t *testing.T) {
	off := false
	for _, tc := range []struct {
		isl      int
		rejected int64
	}{{101, 3}, {100, 0}} {
		cfg := testConfig(tc.isl, 2, 3, 3, 1000)
		cfg.Engine.Workers.Aggregated.Scheduler.MaxBatchedTokens = 100
		cfg.Engine.EnableChunkedPrefill = &off
		res := mustRun(t, cfg)
		s := res.Summary
		if s.RejectedRequests != tc.rejected || s.RejectedByReason["max_batched_tokens"] != tc.rejected || s.CompletedRequests != 3-tc.rejected {
			t.Errorf("isl %d: rejected %d (by reason %v), completed %d; want %d rejected", tc.isl, s.RejectedRequests, s.RejectedByReason, s.CompletedRequests, tc.rejected)
		}
		for i := range res.Requests {
			if r := &res.Requests[i]; tc.rejected > 0 && (r.Status != engine.Rejected || r.Rejection.String() != "max_batched_tokens") {
				t.Errorf("isl %d: request %d status %v reason %q", tc.isl, i, r.Status, r.Rejection)
			}
		}
	}
	cfg := mustLoad(t, seedDisaggregated, "engine.enable_chunked_prefill=false",
		"engine.workers.prefill.scheduler.max_batched_tokens=512", "engine.workers.decode.scheduler.max_batched_tokens=8192",
		"traffic={source: {type: synthetic, input_tokens: 600, output_tokens: 4}, load: {type: concurrency, concurrency: 2}, stop: {requests: 4}}")
	res := mustRun(t, cfg)
	if s := res.Summary; s.RejectedByReason["max_batched_tokens"] != 4 {
		t.Errorf("disaggregated: rejected by reason %v, want 4 max_batched_tokens", s.RejectedByReason)
	}
}
