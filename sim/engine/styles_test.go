package engine

import (
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// The TensorRT-LLM and SGLang styles, pass by pass. The pass comments give the arithmetic behind
// every expected value (causal attention pairs of n new tokens after c cached: n×c + n(n+1)/2).
func TestTensorRTLLMScenarios(t *testing.T) {
	for _, sc := range []scenario{
		{
			// Block size 4, 7 blocks. Footprints ceil((prompt + output)/4): requests 0 and 1
			// ceil(12/4) = 3 each, request 2 ceil(6/4) = 2. guaranteed_no_evict admits 0 and 1
			// (room 7 − 3 − 3 = 1) and holds 2 back although one block for its prompt is free.
			name: "guaranteed_no_evict reserves every request's whole output",
			cfg:  Config{Style: StyleTRTLLM, NoEvict: true, MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 7},
			reqs: []spec{{prompt: 8, output: 4}, {prompt: 8, output: 4}, {prompt: 4, output: 2}},
			passes: []pass{
				// Two prompts of 8 (2 blocks each): pairs 2 × 36 = 72; both sample.
				{submit: []int32{0, 1, 2}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 16, PrefillAttentionPairs: 72,
					DecodeRequests: 2, DecodeKVTokens: 16, SampledTokens: 2},
					computed: []int32{8, 8, 0}, running: []int32{0, 1}, waiting: []int32{2}, active: 4},
				// Decode to 9 tokens: a third block each (6 active). Room = 7 − 6 free − 0 still
				// reserved = 1 < 2: request 2 waits.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 18, DecodeSteps: 2, DecodeStepKVTokens: 18, SampledTokens: 2},
					computed: []int32{9, 9, 0}, running: []int32{0, 1}, waiting: []int32{2}, active: 6},
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 20, DecodeSteps: 2, DecodeStepKVTokens: 20, SampledTokens: 2},
					computed: []int32{10, 10, 0}, running: []int32{0, 1}, waiting: []int32{2}, active: 6},
				// Fourth token: both complete and free their 6 blocks.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 22, DecodeSteps: 2, DecodeStepKVTokens: 22, SampledTokens: 2},
					computed: []int32{11, 11, 0}, waiting: []int32{2}, done: []int32{0, 1}},
				// Request 2's prompt of 4: pairs 10, one block.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillAttentionPairs: 10, DecodeRequests: 1, DecodeKVTokens: 4, SampledTokens: 1},
					computed: []int32{11, 11, 4}, running: []int32{2}, active: 1},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 5, DecodeSteps: 1, DecodeStepKVTokens: 5, SampledTokens: 1},
					computed: []int32{11, 11, 5}, done: []int32{2}},
			},
		},
		{
			// Budget 11, block size 4: request 0's whole prompt of 6 leaves 5 tokens, and request
			// 1's first context chunk is cut to whole blocks: 4, not 5.
			name: "context chunks are whole KV blocks",
			cfg:  Config{Style: StyleTRTLLM, NoEvict: true, MaxBatchedTokens: 11, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 20},
			reqs: []spec{{prompt: 6, output: 1}, {prompt: 9, output: 1}},
			passes: []pass{
				// Pairs 6·7/2 + 4·5/2 = 21 + 10 = 31; request 0 samples and completes.
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 10, PrefillAttentionPairs: 31,
					DecodeRequests: 1, DecodeKVTokens: 6, SampledTokens: 1},
					computed: []int32{6, 4}, running: []int32{1}, done: []int32{0}, active: 1},
				// The last chunk of 5 after 4 ends the prompt: pairs 5·4 + 15 = 35.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 5, PrefillContextTokens: 4, PrefillAttentionPairs: 35,
					DecodeRequests: 1, DecodeKVTokens: 9, SampledTokens: 1},
					computed: []int32{6, 9}, done: []int32{1}},
			},
		},
	} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

// max_utilization admits what guaranteed_no_evict holds back: request 2's prompt block is free.
func TestTensorRTLLMMaxUtilizationAdmitsOnNextStep(t *testing.T) {
	for _, noEvict := range []bool{true, false} {
		h := newHarness(t, Config{Style: StyleTRTLLM, NoEvict: noEvict, MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 7},
			spec{prompt: 8, output: 4}, spec{prompt: 8, output: 4}, spec{prompt: 4, output: 2})
		for ri := int32(0); ri < 3; ri++ {
			h.e.Submit(ri)
		}
		h.step()
		want := []int32{0, 1}
		if !noEvict {
			want = []int32{0, 1, 2}
		}
		if !slices.Equal(h.e.running, want) {
			t.Errorf("no_evict %v: running %v, want %v", noEvict, h.e.running, want)
		}
	}
}

// Under guaranteed_no_evict a loaded rank never preempts, while the vLLM style does on the same
// load; every request completes either way.
func TestGuaranteedNoEvictNeverPreempts(t *testing.T) {
	for _, noEvict := range []bool{true, false} {
		specs := make([]spec, 40)
		for i := range specs {
			specs[i] = spec{prompt: int32(5 + i%7), output: int32(3 + (i*5)%11)}
		}
		style := StyleTRTLLM
		if !noEvict {
			style = StyleVLLM
		}
		h := newHarness(t, Config{Style: style, NoEvict: noEvict, MaxBatchedTokens: 32, MaxSequences: 16, BlockSize: 4, CapacityBlocks: 12}, specs...)
		for ri := range specs {
			h.e.Submit(int32(ri))
		}
		for k := 0; h.e.HasWork(); k++ {
			if _, ok, _, _ := h.step(); !ok {
				t.Fatalf("no_evict %v: pass %d scheduled nothing", noEvict, k+1)
			}
		}
		for i := range h.reqs {
			if r := &h.reqs[i]; r.Status != Completed || r.Generated != r.MaxOutput {
				t.Errorf("no_evict %v: request %d %v with %d of %d tokens", noEvict, i, r.Status, r.Generated, r.MaxOutput)
			}
		}
		if got := h.e.Preemptions(); noEvict && got != 0 || !noEvict && got == 0 {
			t.Errorf("no_evict %v: %d preemptions", noEvict, got)
		}
	}
}

// sglangTest is an SGLang rank of blockSize-token blocks over pageSize-token pages with a
// chunked-prefill budget of chunk tokens, admission clip 50 and the given conservativeness.
func sglangTest(blockSize, blocks, pageSize, chunk int, conservativeness float64, interval int) Config {
	return Config{Style: StyleSGLang, MaxBatchedTokens: 1, MaxSequences: 8, BlockSize: blockSize, CapacityBlocks: blocks,
		SGLang: SGLangConfig{PageSize: pageSize, ChunkedPrefillSize: chunk, MaxPrefillTokens: 100, ClipMaxNewTokens: 50,
			Conservativeness: conservativeness, PrefillDecodeInterval: interval}}
}

func TestSGLangScenarios(t *testing.T) {
	decode := func(kv ...int) timing.Batch {
		b := timing.Batch{DecodeRequests: len(kv), DecodeSteps: len(kv), SampledTokens: len(kv)}
		for _, n := range kv {
			b.DecodeKVTokens += n
			b.DecodeStepKVTokens += n
		}
		return b
	}
	recv := sglangTest(4, 20, 1, 16, 1, 0)
	recv.SGLang.RecvInterval = 3
	for _, sc := range []scenario{
		{
			// --scheduler-recv-interval 3: request 0 reaches an idle rank and is prefilled at
			// once; request 1 arrives while 0 decodes and waits for the poll due every third
			// decode pass (the prefill pass made the poll before pass 2 due at once), so it is
			// prefilled at pass 5, not 3; request 2 arrives with it and is taken in by the same
			// poll, behind it.
			name: "receive interval",
			cfg:  recv,
			reqs: []spec{{prompt: 4, output: 10}, {prompt: 4, output: 2}, {prompt: 4, output: 2}},
			passes: []pass{
				{submit: []int32{0}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillAttentionPairs: 10, SampledTokens: 1},
					computed: []int32{4, 0, 0}, running: []int32{0}, active: 1},
				{batch: decode(5), computed: []int32{5, 0, 0}, running: []int32{0}, active: 2},
				// Polls due after 3 decode passes: request 1 is held (not waiting) for two.
				{submit: []int32{1}, batch: decode(6), computed: []int32{6, 0, 0}, running: []int32{0}, active: 2},
				{submit: []int32{2}, batch: decode(7), computed: []int32{7, 0, 0}, running: []int32{0}, active: 2},
				{batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 8, PrefillAttentionPairs: 20, SampledTokens: 2},
					computed: []int32{7, 4, 4}, running: []int32{0, 1, 2}, active: 4},
				{batch: decode(8, 5, 5), computed: []int32{8, 5, 5}, running: []int32{0}, done: []int32{1, 2}, active: 2},
				{batch: decode(9), computed: []int32{9, 5, 5}, running: []int32{0}, active: 3},
				{batch: decode(10), computed: []int32{10, 5, 5}, running: []int32{0}, active: 3},
				{batch: decode(11), computed: []int32{11, 5, 5}, running: []int32{0}, active: 3},
				{batch: decode(12), computed: []int32{12, 5, 5}, running: []int32{0}, active: 3},
				{batch: decode(13), computed: []int32{13, 5, 5}, done: []int32{0}},
			},
		},
		{
			// Blocks of 4 tokens, 20 blocks (80 tokens), page 1, chunked-prefill budget 16
			// (max_batched_tokens 1 is ignored). Request 0's prompt of 20 is chunked 16 + 4.
			name: "prefill first, chunked, first token with the prefill",
			cfg:  sglangTest(4, 20, 1, 16, 1, 0),
			reqs: []spec{{prompt: 20, output: 3}, {prompt: 6, output: 2}},
			passes: []pass{
				// 20 > 16: the chunk is the whole budget of 16 (pairs 136, 4 blocks); it reserves
				// no output yet and spends the chunk budget, so request 1 waits.
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 16, PrefillAttentionPairs: 136},
					computed: []int32{16, 0}, running: []int32{0}, waiting: []int32{1}, active: 4},
				// The chunked request leads: 4 after 16 (pairs 64 + 10 = 74, a fifth block), cost
				// 4 + 3 = 7 of 64. Request 1: 6 tokens + 2 reserved = 8 < 57, pairs 21, 2 blocks.
				// A prefill pass has no decode part: both first tokens come with it.
				{batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 10, PrefillContextTokens: 16, PrefillAttentionPairs: 95, SampledTokens: 2},
					computed: []int32{20, 6}, running: []int32{0, 1}, active: 7},
				// Decode both: request 0 reaches 21 tokens (a sixth block); request 1 completes.
				{batch: decode(21, 7), computed: []int32{21, 7}, running: []int32{0}, done: []int32{1}, active: 6},
				{batch: decode(22), computed: []int32{22, 7}, done: []int32{0}},
			},
		},
		{
			// 6 blocks of 4 tokens, page 4, conservativeness 0.05: new_token_ratio starts at
			// 0.7 × 0.05 = 0.035. Both requests (prompt 4, output 10) end at 4 blocks: 8 > 6.
			name: "retraction of the request with the fewest output tokens",
			cfg:  sglangTest(4, 6, 4, 64, 0.05, 0),
			reqs: []spec{{prompt: 4, output: 10}, {prompt: 4, output: 10}},
			passes: []pass{
				// Room 24 tokens: request 0 costs 4 + 10 = 14 (pairs 10); request 1's 14 >= 10 left.
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillAttentionPairs: 10, SampledTokens: 1},
					computed: []int32{4, 0}, running: []int32{0}, waiting: []int32{1}, active: 1},
				// Room 5 × 4 − 0.035 × 9 = 19.685 > 14: request 1 prefills; request 0 does not
				// decode in a prefill pass.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillAttentionPairs: 10, SampledTokens: 1},
					computed: []int32{4, 4}, running: []int32{0, 1}, active: 2},
				{batch: decode(5, 5), computed: []int32{5, 5}, running: []int32{0, 1}, active: 4},
				{batch: decode(6, 6), computed: []int32{6, 6}, running: []int32{0, 1}, active: 4},
				{batch: decode(7, 7), computed: []int32{7, 7}, running: []int32{0, 1}, active: 4},
				{batch: decode(8, 8), computed: []int32{8, 8}, running: []int32{0, 1}, active: 4},
				{batch: decode(9, 9), computed: []int32{9, 9}, running: []int32{0, 1}, active: 6},
				{batch: decode(10, 10), computed: []int32{10, 10}, running: []int32{0, 1}, active: 6},
				{batch: decode(11, 11), computed: []int32{11, 11}, running: []int32{0, 1}, active: 6},
				{batch: decode(12, 12), computed: []int32{12, 12}, running: []int32{0, 1}, active: 6},
				// Token 13 needs a fourth block each, 2 > 0 free: both have 9 output tokens and
				// prompts of 4, so the latest admitted (1) is retracted, freeing 3 blocks, and goes
				// to the back of the waiting queue. Request 0 decodes its 10th token and completes.
				{batch: decode(13), computed: []int32{13, 0}, waiting: []int32{1}, done: []int32{0}, preemptions: 1},
				// Request 1 recomputes prompt + 9 outputs = 13 tokens (cost 13 + 1 < 24; 16 in pages)
				// in one prefill pass, pairs 13·14/2 = 91, and its 10th token comes with it.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 13, PrefillAttentionPairs: 91, SampledTokens: 1},
					computed: []int32{13, 13}, done: []int32{1}, preemptions: 1},
			},
			check: func(t *testing.T, h *harness) {
				// Re-estimated at the retraction: min(1, (9 + 20 × 1) / (10 + 1)) = 1.
				if h.e.sg.ratio != 1 {
					t.Errorf("new_token_ratio %v after the retraction, want 1", h.e.sg.ratio)
				}
				if h.reqs[1].Preemptions != 1 || h.reqs[0].Preemptions != 0 {
					t.Errorf("preemptions %d, %d; want 0, 1", h.reqs[0].Preemptions, h.reqs[1].Preemptions)
				}
			},
		},
		{
			// prefill_decode_interval 2: request 1, arriving while request 0 decodes, prefills
			// only after two decode passes.
			name: "prefill_decode_interval",
			cfg:  sglangTest(4, 20, 4, 64, 1, 2),
			reqs: []spec{{prompt: 4, output: 4}, {prompt: 4, output: 2}},
			passes: []pass{
				{submit: []int32{0}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillAttentionPairs: 10, SampledTokens: 1},
					computed: []int32{4, 0}, running: []int32{0}, active: 1},
				{submit: []int32{1}, batch: decode(5), computed: []int32{5, 0}, running: []int32{0}, waiting: []int32{1}, active: 2},
				{batch: decode(6), computed: []int32{6, 0}, running: []int32{0}, waiting: []int32{1}, active: 2},
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillAttentionPairs: 10, SampledTokens: 1},
					computed: []int32{6, 4}, running: []int32{0, 1}, active: 3},
				{batch: decode(7, 5), computed: []int32{7, 5}, done: []int32{0, 1}},
			},
		},
	} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

// The new_token_ratio decays by (init − min)/600 per decode pass without retraction, from
// 0.7 × conservativeness down to 0.14 × that.
func TestSGLangNewTokenRatioDecays(t *testing.T) {
	h := newHarness(t, sglangTest(4, 1000, 4, 64, 1, 0), spec{prompt: 4, output: 700})
	h.e.Submit(0)
	h.step() // prefill
	for k := 0; k < 300; k++ {
		h.step()
	}
	init, floor := 0.7, 0.7*0.14
	want := init - 300*(init-floor)/600
	if d := h.e.sg.ratio - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("ratio after 300 decode passes %v, want %v", h.e.sg.ratio, want)
	}
	for h.e.HasWork() {
		h.step()
	}
	if h.e.sg.ratio != floor {
		t.Errorf("ratio after 699 decode passes %v, want the floor %v", h.e.sg.ratio, floor)
	}
}

// Bad SGLang parameters are refused: a block size that is not a multiple of the page size.
func TestSGLangConfigChecked(t *testing.T) {
	cfg := sglangTest(6, 10, 4, 64, 1, 0)
	cfg.Timing = &recorder{}
	if _, err := New(cfg, nil); err == nil {
		t.Error("block size 6 over page size 4 accepted")
	}
}

// Requests that fill the whole pool still run: under SGLang, prompt 12 + output 8 = the 20
// tokens of 5 blocks (the KV budget is waived when nothing else runs); under TensorRT-LLM a token
// budget of 3 below the block size of 4 is used whole.
func TestWholePoolAndTinyBudgetProgress(t *testing.T) {
	for _, cfg := range []Config{
		sglangTest(4, 5, 4, 64, 1, 0),
		{Style: StyleTRTLLM, NoEvict: true, MaxBatchedTokens: 3, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 5},
	} {
		h := newHarness(t, cfg, spec{prompt: 12, output: 8}, spec{prompt: 6, output: 2})
		h.e.Submit(0)
		h.e.Submit(1)
		for k := 0; h.e.HasWork(); k++ {
			if _, ok, _, _ := h.step(); !ok || k > 100 {
				t.Fatalf("%v: pass %d scheduled nothing (or too many passes)", cfg.Style, k+1)
			}
		}
		for i := range h.reqs {
			if r := &h.reqs[i]; r.Status != Completed || r.Generated != r.MaxOutput {
				t.Errorf("%v: request %d %v with %d of %d tokens", cfg.Style, i, r.Status, r.Generated, r.MaxOutput)
			}
		}
	}
}
