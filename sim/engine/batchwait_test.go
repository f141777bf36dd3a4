package engine

import (
	"slices"
	"testing"
)

// TensorRT-LLM's batch waiting, pass by pass (BatchWait): threshold 0.5 × 100 = 50 tokens,
// timeout 2 passes. Request 0 (prompt 4, output 10) decodes throughout.
func TestBatchWaitHoldsAdmissionsWhileDecoding(t *testing.T) {
	cfg := Config{Style: StyleTRTLLM, MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 40,
		BatchWait: BatchWait{TimeoutIters: 2, MaxTokensRatio: 0.5}}
	h := newHarness(t, cfg, spec{prompt: 4, output: 10}, spec{prompt: 8, output: 3}, spec{prompt: 48, output: 2})
	expect := func(pass int, running, waiting []int32, waited int) {
		t.Helper()
		if got := h.e.running; !slices.Equal(got, running) {
			t.Errorf("pass %d: running %v, want %v", pass, got, running)
		}
		if got := h.e.waiting[h.e.wHead:]; !slices.Equal(got, waiting) {
			t.Errorf("pass %d: waiting %v, want %v", pass, got, waiting)
		}
		if h.e.waitedPasses != waited {
			t.Errorf("pass %d: %d waited passes, want %d", pass, h.e.waitedPasses, waited)
		}
	}
	// Pass 1: nothing decodes, so request 0 is admitted at once.
	h.e.Submit(0)
	h.step()
	expect(1, []int32{0}, nil, 0)
	// Passes 2 and 3: request 0 decodes; request 1's 8 prompt tokens + 1 decode step = 9 < 50.
	h.e.Submit(1)
	h.step()
	expect(2, []int32{0}, []int32{1}, 1)
	h.step()
	expect(3, []int32{0}, []int32{1}, 2)
	// Pass 4: two passes have waited (the timeout): request 1 is admitted, the count resets.
	b, _, _, _ := h.step()
	expect(4, []int32{0, 1}, nil, 0)
	if b.PrefillTokens != 8 || b.DecodeSteps != 1 {
		t.Errorf("pass 4: prefill %d tokens, %d decode steps; want 8 and 1", b.PrefillTokens, b.DecodeSteps)
	}
	// Pass 5: request 2's 48 tokens + 2 decode steps = 50 reach the threshold: admitted at once.
	h.e.Submit(2)
	h.step()
	expect(5, []int32{0, 1, 2}, nil, 0)
}

// Zero knobs never wait, and neither do the vLLM style nor a timeout of 0 (TensorRT-LLM stops
// waiting once the count reaches the timeout, which 0 already is).
func TestBatchWaitOffCases(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"zero", Config{Style: StyleTRTLLM}},
		{"vllm style", Config{Style: StyleVLLM, BatchWait: BatchWait{TimeoutIters: 5, MaxTokensRatio: 0.9}}},
		{"timeout 0", Config{Style: StyleTRTLLM, BatchWait: BatchWait{MaxTokensRatio: 0.9}}},
	} {
		cfg := c.cfg
		cfg.MaxBatchedTokens, cfg.MaxSequences, cfg.BlockSize, cfg.CapacityBlocks = 100, 8, 4, 40
		h := newHarness(t, cfg, spec{prompt: 4, output: 10}, spec{prompt: 8, output: 3})
		h.e.Submit(0)
		h.step()
		h.e.Submit(1)
		h.step()
		if !slices.Equal(h.e.running, []int32{0, 1}) {
			t.Errorf("%s: running %v after the second pass, want [0 1]", c.name, h.e.running)
		}
	}
}
