package calibrate

import "testing"

// Two recipes' SGLang settings, checked by hand against the files (InferenceX 80d98084f,
// benchmarks/multi_node/srt-slurm-recipes/): gb300-fp4/1k1k/mid_curve.yaml's prefill workers
// run --max-running-requests 30000 and --chunked-prefill-size 65536 over dp-size 4 with
// --max-total-tokens 131072 and --mem-fraction-static 0.84, its decode workers 67584 over
// dp-size 32 with 3122380 and 0.83; gb200-fp8/1k1k/low-latency.yaml's run 512 and 8192 with
// --scheduler-recv-interval 10, --max-total-tokens 8192 and --mem-fraction-static 0.95, and 128
// running requests on the decode side, with no token cap and 0.95.
func TestRecipeSGLangLimits(t *testing.T) {
	l, ok := RecipeSGLangLimits("recipies/gb300-fp4/1k1k/mid_curve.yaml")
	if !ok || l.Prefill != (SGLangRoleLimits{30000, 65536, 0, 131072, 0.84}) || l.Decode != (SGLangRoleLimits{67584, 0, 0, 3122380, 0.83}) {
		t.Fatalf("mid_curve: %+v, %v", l, ok)
	}
	r := Row{Concurrency: 512, Prefill: WorkerShape{Workers: 4, Tensor: 1, AttentionData: 4},
		Decode: WorkerShape{Workers: 1, Tensor: 1, AttentionData: 32}}
	l.apply(&r, 0, 0)
	// 30000 / 4 ranks = 7500 prefill requests per rank; the decode share 512 / 32 = 16 is below
	// 67584 / 32 = 2112, so the row's share stands.
	if r.Prefill.BatchSize != 7500 || r.Prefill.ChunkedPrefillSize != 65536 || r.Prefill.RecvInterval != 0 || r.Decode.BatchSize != 0 ||
		r.Prefill.MaxTotalTokens != 131072 || r.Prefill.MemoryFraction != 0.84 || r.Decode.MaxTotalTokens != 3122380 || r.Decode.MemoryFraction != 0.83 {
		t.Errorf("mid_curve at concurrency 512: prefill %+v, decode %+v", r.Prefill, r.Decode)
	}
	l, ok = RecipeSGLangLimits("recipes/gb200-fp8/1k1k/low-latency.yaml")
	if !ok {
		t.Fatal("low-latency: not found")
	}
	r = Row{Concurrency: 256, Prefill: WorkerShape{Workers: 1, Tensor: 4, AttentionData: 1},
		Decode: WorkerShape{Workers: 1, Tensor: 4, AttentionData: 1}}
	l.apply(&r, 3, 0)
	// The decode share, 256 per rank, is above the recipe's 128: the recipe's limit holds.
	if r.Prefill.BatchSize != 512 || r.Prefill.ChunkedPrefillSize != 8192 || r.Prefill.RecvInterval != 10 || r.Decode.BatchSize != 128 ||
		r.Prefill.MaxTotalTokens != 8192 || r.Prefill.MemoryFraction != 0.95 || r.Decode.MaxTotalTokens != 0 || r.Decode.MemoryFraction != 0.95 {
		t.Errorf("low-latency at concurrency 256: prefill %+v, decode %+v", r.Prefill, r.Decode)
	}
	if _, ok := RecipeSGLangLimits("recipes/trtllm/gb200-fp4/1k1k/stp/ctx1_gen1_dep8_batch512_eplb0_mtp0.yaml"); ok {
		t.Error("a TensorRT-LLM recipe matched")
	}
}
