package engine

import (
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// TestUnchunkedPrefill: with a 100-token budget, prompts of 60 and 50 tokens and 2 output tokens
// each, chunked prefill would compute 60 + 40 in pass 1; unchunked, the second prompt waits
// (head-of-line) for a pass with 50 tokens of budget left and then runs whole.
func TestUnchunkedPrefill(t *testing.T) {
	for _, style := range []Style{StyleVLLM, StyleTRTLLM} {
		t.Run(style.String(), func(t *testing.T) {
			runScenario(t, scenario{
				cfg:  Config{Style: style, MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 16, CapacityBlocks: 100, Unchunked: true},
				reqs: []spec{{prompt: 60, output: 2}, {prompt: 50, output: 2}},
				passes: []pass{
					// Pass 1: request 0's whole prompt (60 pairs: 60·61/2 = 1830); 40 tokens of
					// budget left cannot hold request 1's 50. Request 0 emits its first token.
					{submit: []int32{0, 1},
						batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 60, PrefillAttentionPairs: 1830,
							DecodeRequests: 1, DecodeKVTokens: 60, SampledTokens: 1},
						computed: []int32{60, 0}, running: []int32{0}, waiting: []int32{1}, active: 4},
					// Pass 2: request 0's decode step (KV 61) and request 1's whole prompt
					// (50·51/2 = 1275 pairs); request 0 completes, request 1 emits its first token.
					{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 50, PrefillAttentionPairs: 1275,
						DecodeRequests: 2, DecodeKVTokens: 61 + 50, DecodeSteps: 1, DecodeStepKVTokens: 61, SampledTokens: 2},
						computed: []int32{61, 50}, running: []int32{1}, done: []int32{0}, active: 4},
					// Pass 3: request 1's decode step (KV 51); it completes.
					{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 51, DecodeSteps: 1, DecodeStepKVTokens: 51, SampledTokens: 1},
						computed: []int32{61, 51}, done: []int32{1}},
				},
			})
		})
	}
}

// TestUnchunkedChunk: all or nothing up to the token budget; a recompute longer than the whole
// budget is still cut, so it cannot stall.
func TestUnchunkedChunk(t *testing.T) {
	e := &Engine{cfg: Config{MaxBatchedTokens: 100, Unchunked: true}, bs: 16}
	for _, c := range []struct{ remaining, budget, want int32 }{
		{60, 100, 60}, {60, 59, 0}, {100, 100, 100}, {150, 100, 100}, {150, 30, 30},
	} {
		if got := e.chunk(c.remaining, c.budget); got != c.want {
			t.Errorf("chunk(%d, %d) = %d, want %d", c.remaining, c.budget, got, c.want)
		}
	}
}
