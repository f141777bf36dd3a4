package timing

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestLookupModelCatalog(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B"},
		{"meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B"},
		{"nvidia/Llama-3.1-70B-Instruct-FP8", "meta-llama/Llama-3.1-70B"},
		{"meta-llama/Meta-Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B"},
		{"nvidia/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B"},
		{"meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct"},
		{"nvidia/Llama-3.3-70B-Instruct-FP8", "meta-llama/Llama-3.3-70B-Instruct"},
		{"Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},
		{"Qwen/Qwen3-14B", "Qwen/Qwen3-14B"},
		{"qwen/qwen3-32b", "Qwen/Qwen3-32B"},
		{"nvidia/Qwen3-32B-NVFP4", "Qwen/Qwen3-32B"},
		{"Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-32B"},
		{"mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"},
		{"mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"},
		{"mistralai/Mistral-7B", "mistralai/Mistral-7B-Instruct-v0.3"},
		// A quantized checkpoint's revision after its format (the NVFP4 DeepSeek InferenceX serves).
		{"nvidia/DeepSeek-R1-0528-FP4-V2", "deepseek-ai/DeepSeek-R1"},
		{"nvidia/DeepSeek-R1-0528-NVFP4-v2", "deepseek-ai/DeepSeek-R1"},
		{"nvidia/DeepSeek-R1-FP4-v2", "deepseek-ai/DeepSeek-R1"},
	} {
		m, err := LookupModel(c.id)
		if err != nil || m.ID != c.want {
			t.Errorf("%s: got %q, %v; want %s", c.id, m.ID, err, c.want)
		}
	}
	// Each spelling variant is read once: a repeated "-Instruct" or two stacked weight
	// formats are typos, not names of the model.
	for _, id := range []string{"meta-llama/Llama-3.1-70B-Instruct-Instruct", "deepseek-ai/DeepSeek-R1-NVFP4-FP8",
		"nvidia/Llama-3.1-8B-Instruct-FP8-FP8", "Qwen/Qwen3-32B-FP4-FP8-dynamic",
		// A revision after no format, or one that is not "-v" and digits, names no model.
		"deepseek-ai/DeepSeek-R1-v2", "nvidia/DeepSeek-R1-FP4-v", "nvidia/DeepSeek-R1-FP4-v2b"} {
		if m, err := LookupModel(id); err == nil || !strings.Contains(err.Error(), "unknown model") {
			t.Errorf("%s: got %q, %v; want an unknown-model error", id, m.ID, err)
		}
	}
	_, err := LookupModel("acme/unknown-1B")
	if err == nil || !strings.Contains(err.Error(), `unknown model "acme/unknown-1B"`) ||
		!strings.Contains(err.Error(), "meta-llama/Llama-3.1-70B") || !strings.Contains(err.Error(), "Qwen/Qwen3-32B") {
		t.Errorf("unknown model error = %v; want it to list the known models", err)
	}
	// The catalog's architectures reproduce the published parameter counts within 2 %.
	for _, id := range ModelIDs() {
		m, _ := LookupModel(id)
		est := m.LinearParams() + 2*m.HeadParams()
		if math.Abs(est-m.Params)/m.Params > 0.02 {
			t.Errorf("%s: architecture gives %.3g params, catalog says %.3g", id, est, m.Params)
		}
	}
}

func TestLookupHardware(t *testing.T) {
	for _, id := range []string{"a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "gb200", "l40s"} {
		h, err := LookupHardware(id)
		if err != nil || h.ID != id || !(h.MemoryGiB > 0 && h.MemoryTBps > 0 && h.BF16TFLOPS > 0 && h.LinkGBps > 0) {
			t.Errorf("%s: %+v, %v", id, h, err)
		}
	}
	if h, err := LookupHardware("H100"); err != nil || h.ID != "h100_sxm" {
		t.Errorf("alias H100: %+v, %v", h, err)
	}
	h, _ := LookupHardware("h200_sxm")
	if h.MemoryGiB != 141 || h.MemoryTBps != 4.8 || h.PeakTFLOPS(FP8) != 1979 || h.PeakTFLOPS(BF16) != 989.5 {
		t.Errorf("h200_sxm = %+v", h)
	}
	// No FP4 on Hopper: FP4 weights run at the FP8 rate; no FP8 on Ampere: the BF16 rate.
	if h.PeakTFLOPS(FP4) != 989.5 {
		t.Errorf("h200 fp4 peak = %v, want the bf16 rate (weight-only 4-bit kernels)", h.PeakTFLOPS(FP4))
	}
	a, _ := LookupHardware("a100_sxm")
	if a.PeakTFLOPS(FP8) != 312 {
		t.Errorf("a100 fp8 peak = %v, want the bf16 rate", a.PeakTFLOPS(FP8))
	}
	// Blackwell Ultra, with the AIConfigurator database's figures: FP4 at its own 14 PF rate.
	if b, err := LookupHardware("b300"); err != nil || b.ID != "b300_sxm" || b.MemoryGiB != 288 || b.PeakTFLOPS(FP4) != 14000 {
		t.Errorf("b300 = %+v, %v", b, err)
	}
	_, err := LookupHardware("tpu_v5")
	if err == nil || !strings.Contains(err.Error(), `unknown hardware "tpu_v5"`) || !strings.Contains(err.Error(), "b200_sxm, b300_sxm, gb200, gb300, h100_sxm") {
		t.Errorf("unknown hardware error = %v", err)
	}
}

func TestPrecisionDefaults(t *testing.T) {
	for _, c := range []struct {
		id   string
		want Precisions
	}{
		{"meta-llama/Llama-3.1-8B-Instruct", Precisions{Weights: BF16, KVCache: BF16}},
		{"nvidia/Llama-3.1-8B-Instruct-FP8", Precisions{Weights: FP8, KVCache: FP8}},
		{"nvidia/Qwen3-32B-NVFP4", Precisions{Weights: FP4, KVCache: FP8}},
		{"nvidia/Llama-3.3-70B-Instruct-FP4", Precisions{Weights: FP4, KVCache: FP8}},
		{"Qwen/Qwen3-32B-FP8", Precisions{Weights: FP8, KVCache: FP8}},
	} {
		if got := DefaultPrecisions(c.id); got != c.want {
			t.Errorf("DefaultPrecisions(%s) = %+v, want %+v", c.id, got, c.want)
		}
		m, err := LookupModel(c.id)
		if err != nil || m.Precisions != c.want {
			t.Errorf("LookupModel(%s).Precisions = %+v, %v", c.id, m.Precisions, err)
		}
	}
	for _, c := range []struct {
		in   string
		want Precision
	}{{"bf16", BF16}, {"FP16", BF16}, {"fp8", FP8}, {"fp8_block", FP8}, {"nvfp4", FP4}, {"fp4", FP4}} {
		if got, err := ParsePrecision(c.in); err != nil || got != c.want {
			t.Errorf("ParsePrecision(%q) = %v, %v", c.in, got, err)
		}
	}
	if _, err := ParsePrecision("int4"); err == nil || !strings.Contains(err.Error(), "valid: bf16, fp8, fp4") {
		t.Errorf("ParsePrecision(int4) err = %v", err)
	}
}

// TestKVCapacityLlama8BH200 is the default capacity of Llama-3.1-8B (BF16) on one H200 with the
// vLLM defaults, computed by hand:
//
//	usable      0.9 × 141 GiB                                   = 126.9 GiB
//	weights     (6,979,321,856 GEMM + 1,050,678,144 other) × 2 B = 16.06e9 B = 14.9570 GiB
//	activation  8192 × (3·14336 + 48·128 + 4·4096) × 2 B = 1 GiB, + 256 × 128,256 × 4 B
//	reserve     1.5 GiB
//	KV          126.9 − 14.9570 − 1.1223 − 1.5 = 109.3207 GiB
//	block       64 tokens × 131,072 B = 8 MiB → 109.3207 × 128 = 13,993 blocks
func TestKVCapacityLlama8BH200(t *testing.T) {
	m, _ := LookupModel("meta-llama/Meta-Llama-3.1-8B-Instruct")
	hw, _ := LookupHardware("h200_sxm")
	if m.LinearParams() != 6979321856 {
		t.Fatalf("linear params %v", m.LinearParams())
	}
	in := CapacityInput{Model: m, Hardware: hw, Precisions: Precisions{Weights: BF16, KVCache: BF16}, Shape: Shape{Tensor: 1, Pipeline: 1},
		MemoryFraction: 0.9, BlockSize: 64, MaxBatchedTokens: 8192, MaxSequences: 256}
	c, err := KVCapacity(in)
	if err != nil {
		t.Fatal(err)
	}
	weights := 8.03e9 * 2 / (1 << 30)
	act := (1<<30 + 256*128256*4.0) / (1 << 30)
	kv := 0.9*141 - weights - act - 1.5
	want := int(math.Floor(kv * (1 << 30) / (64 * 131072)))
	if want != 13993 || c.Blocks != want {
		t.Errorf("blocks = %d, hand-computed %d (want 13993)", c.Blocks, want)
	}
	if !near(c.WeightsGiB, weights) || !near(c.ActivationGiB, act) || c.KVBytesPerTokenPerGPU != 131072 {
		t.Errorf("capacity = %+v", c)
	}

	// FP8 KV holds twice the tokens per byte; FP8 weights free 7.5 GiB more.
	in.Precisions = Precisions{Weights: FP8, KVCache: FP8}
	c8, err := KVCapacity(in)
	if err != nil {
		t.Fatal(err)
	}
	if c8.Blocks <= 2*c.Blocks {
		t.Errorf("fp8 blocks %d, want > 2 × %d", c8.Blocks, c.Blocks)
	}

	// A numeric bytes_per_token replaces the model's: 262,144 B/token halves the blocks.
	in.Precisions = Precisions{Weights: BF16, KVCache: BF16}
	in.KVBytesPerToken = 262144
	c2, err := KVCapacity(in)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Blocks != c.Blocks/2 && c2.Blocks != (c.Blocks-1)/2 {
		t.Errorf("bytes_per_token 262144: %d blocks, want half of %d", c2.Blocks, c.Blocks)
	}

	// A reserve of 19.5 GiB instead of 1.5 takes 18 GiB × 128 blocks/GiB = 2,304 blocks (91.3207 GiB
	// left: 11,689 blocks), and 0
	// gives back the 1.5 GiB (192 blocks) rounded with the rest.
	in.KVBytesPerToken = 0
	for _, tc := range []struct {
		reserve float64
		want    int
	}{{19.5, int(math.Floor((kv - 18) * 128))}, {0, int(math.Floor((kv + 1.5) * 128))}, {1.5, 13993}} {
		r := tc.reserve
		in.ReserveGiB = &r
		cr, err := KVCapacity(in)
		if err != nil {
			t.Fatal(err)
		}
		if cr.Blocks != tc.want || cr.ReserveGiB != r {
			t.Errorf("reserve %g GiB: %d blocks (reserve %g), want %d", r, cr.Blocks, cr.ReserveGiB, tc.want)
		}
	}
	if tc := 11689; int(math.Floor((kv-18)*128)) != tc {
		t.Errorf("hand-computed blocks with a 19.5 GiB reserve = %d, want %d", int(math.Floor((kv-18)*128)), tc)
	}
	for _, bad := range []float64{-1, math.Inf(1), math.NaN()} {
		in.ReserveGiB = &bad
		if _, err := KVCapacity(in); err == nil || !strings.Contains(err.Error(), "reserve_gib must be a finite number >= 0") {
			t.Errorf("reserve %v: err = %v", bad, err)
		}
	}
	// More reserve than the memory beside the weights: the capacity error names it.
	big := 120.0
	in.ReserveGiB = &big
	if _, err := KVCapacity(in); err == nil || !strings.Contains(err.Error(), "120.0 GiB runtime reserve (reserve_gib)") || !strings.Contains(err.Error(), "lower reserve_gib") {
		t.Errorf("reserve 120 GiB: err = %v", err)
	}
}

func TestKVCapacityGrowsWithTP(t *testing.T) {
	m, _ := LookupModel("meta-llama/Llama-3.1-70B")
	hw, _ := LookupHardware("h200_sxm")
	prev := 0
	for _, tp := range []int{2, 4, 8} {
		c, err := KVCapacity(CapacityInput{Model: m, Hardware: hw, Precisions: Precisions{Weights: BF16, KVCache: BF16}, Shape: Shape{Tensor: tp, Pipeline: 1},
			MemoryFraction: 0.9, BlockSize: 64, MaxBatchedTokens: 8192, MaxSequences: 256})
		if err != nil {
			t.Fatal(err)
		}
		if c.Blocks <= prev {
			t.Errorf("TP%d: %d blocks, not more than TP%d's %d", tp, c.Blocks, tp/2, prev)
		}
		prev = c.Blocks
	}
}

func TestKVCapacityDoesNotFit(t *testing.T) {
	m, _ := LookupModel("meta-llama/Llama-3.1-70B")
	hw, _ := LookupHardware("h100_sxm")
	in := CapacityInput{Model: m, Hardware: hw, Precisions: Precisions{Weights: BF16, KVCache: BF16}, Shape: Shape{Tensor: 1, Pipeline: 1},
		MemoryFraction: 0.9, BlockSize: 64, MaxBatchedTokens: 8192, MaxSequences: 256}
	_, err := KVCapacity(in)
	// 70.6e9 × 2 B = 131.5 GiB of weights; 0.9 × 80 GiB = 72 GiB usable.
	if err == nil || !strings.Contains(err.Error(), "needs 131.5 GiB of weights, has 72.0 GiB") {
		t.Errorf("err = %v", err)
	}
	// TensorRT-LLM's fraction applies to the memory the weights leave: they may take all 80 GiB,
	// and the message says so rather than 0.9 × 80.
	in.FractionOfFree = true
	if _, err := KVCapacity(in); err == nil || !strings.Contains(err.Error(), "needs 131.5 GiB of weights, has 80.0 GiB (80 GiB × 1 GPUs; memory_fraction 0.9 applies to what the weights leave)") {
		t.Errorf("TensorRT-LLM: err = %v", err)
	}
	in.FractionOfFree = false
	// Weights that fit but leave no KV room: FP8 weights at TP2 take 33.8 GiB per GPU, which
	// memory_fraction 0.44 (35.2 GiB) holds, but not with 1.4 GiB of activations and the 1.5 GiB
	// reserve.
	in.Precisions, in.Shape, in.MemoryFraction = Precisions{Weights: FP8, KVCache: FP8}, Shape{Tensor: 2, Pipeline: 1}, 0.44
	if _, err := KVCapacity(in); err == nil || !strings.Contains(err.Error(), "leaves no room for the KV cache") {
		t.Errorf("err = %v", err)
	}
	in.MemoryFraction = 1.5
	if _, err := KVCapacity(in); err == nil || !strings.Contains(err.Error(), "memory_fraction must be in (0, 1]") {
		t.Errorf("err = %v", err)
	}
}

func TestLoadModelDir(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Llama-3.1-8B's config.json (abridged), with an FP8 ModelOpt quantization.
	write(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
		"max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 32,
		"num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": false,
		"quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}`)
	m, err := ResolveModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := LookupModel("meta-llama/Llama-3.1-8B")
	if m.Layers != cat.Layers || m.Hidden != cat.Hidden || m.Heads != cat.Heads || m.KVHeads != cat.KVHeads ||
		m.HeadDim != 128 || m.Intermediate != cat.Intermediate || m.Vocab != cat.Vocab || m.MaxContext != cat.MaxContext {
		t.Errorf("loaded %+v, catalog %+v", m, cat)
	}
	// Embeddings + lm_head + GEMMs + norms = 8,030,261,248 (the published 8.03B).
	if m.Params != 8030261248 {
		t.Errorf("params = %v, want 8030261248", m.Params)
	}
	if m.Precisions != (Precisions{Weights: FP8, KVCache: FP8}) || m.ID != dir {
		t.Errorf("precisions %+v id %q", m.Precisions, m.ID)
	}

	// Tied embeddings, no quantization, head_dim given, KV heads defaulting to heads.
	write(`{"hidden_size": 1024, "intermediate_size": 3072, "max_position_embeddings": 40960,
		"num_attention_heads": 16, "num_hidden_layers": 28, "head_dim": 128, "vocab_size": 151936,
		"tie_word_embeddings": true, "num_nextn_predict_layers": 1}`)
	m, err = LoadModelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.KVHeads != 16 || m.HeadDim != 128 || m.Precisions != (Precisions{Weights: BF16, KVCache: BF16}) || m.MTPLayers != 1 {
		t.Errorf("tied model %+v", m)
	}
	if want := 151936*1024 + m.LinearParams() + float64(57*1024); m.Params != want {
		t.Errorf("tied params %v, want %v", m.Params, want)
	}

	for _, c := range []struct{ json, frag string }{
		{`{"hidden_size": 64}`, "num_hidden_layers is required"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "num_nextn_predict_layers": -1}`,
			"num_nextn_predict_layers and mtp_num_hidden_layers must be >= 0, got -1 and 0"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 0, "vocab_size": 10, "max_position_embeddings": 8}`,
			"intermediate_size must be > 0, got 0"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "num_local_experts": 8}`,
			"num_experts_per_tok must be in [1, 8] (the expert count), got 0"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "num_experts": -5}`,
			"num_experts must be >= 0, got -5"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "num_experts": 8, "num_experts_per_tok": 2, "decoder_sparse_step": 2}`,
			"decoder_sparse_step 2: MoE layers interleaved with dense ones are not modeled"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "num_experts": 128, "num_local_experts": 64, "num_experts_per_tok": 2}`,
			"num_local_experts (64) contradicts another expert count (128)"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "num_experts": 8, "num_experts_per_tok": 2, "first_k_dense_replace": 2}`,
			"first_k_dense_replace must be in [0, num_hidden_layers), got 2"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": -1, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8}`,
			"kv_lora_rank must be > 0 (or absent, for attention without MLA), got -1"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "kv_lora_rank": 32}`,
			"qk_nope_head_dim must be > 0 with kv_lora_rank (MLA), got 0"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "layer_types": ["linear_attention", "full_attention"]}`,
			`1 linear_attention layers: linear-attention heads and head dims must be > 0`},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "quantization_config": {"quant_method": "gptq"}}`,
			`quant_method "gptq" is not modeled`},
		{`{not json`, "invalid config.json"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "layer_types": ["sliding_attention", "full_attention"]}`,
			"sliding_window is required"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "sliding_window": 16, "layer_types": ["sliding_attention", "sliding_attention"]}`,
			"all 2 layers sliding_attention"},
	} {
		write(c.json)
		_, err := LoadModelDir(dir)
		if err == nil || !strings.Contains(err.Error(), c.frag) || !strings.Contains(err.Error(), "config.json") {
			t.Errorf("%s: err = %v, want %q naming config.json", c.json, err, c.frag)
		}
	}
	if _, err := LoadModelDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no config.json") {
		t.Errorf("empty dir: err = %v", err)
	}
	// A path that is not a directory is refused: it names a directory, not a catalog model.
	if _, err := ResolveModel(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "no such directory exists") {
		t.Errorf("missing path: err = %v", err)
	}
}

// TestResolveHardwareID checks alias resolution: an alias gives its catalog id and wasAlias, a
// catalog id (any case) itself and no alias, an unknown name comes back unchanged; every alias
// names a catalog GPU.
func TestResolveHardwareID(t *testing.T) {
	for _, c := range []struct {
		id, want string
		alias    bool
	}{
		{"h200", "h200_sxm", true},
		{"H200", "h200_sxm", true},
		{" h200-sxm ", "h200_sxm", true},
		{"a100", "a100_sxm", true},
		{"a100_80gb", "a100_sxm", true},
		{"gb200_nvl72", "gb200", true},
		{"l40s_pcie", "l40s", true},
		{"h200_sxm", "h200_sxm", false},
		{"H200_SXM", "h200_sxm", false},
		{"gb200", "gb200", false},
		{"tpu_v9", "tpu_v9", false},
		{"", "", false},
	} {
		got, alias := ResolveHardwareID(c.id)
		if got != c.want || alias != c.alias {
			t.Errorf("ResolveHardwareID(%q) = %q, %v; want %q, %v", c.id, got, alias, c.want, c.alias)
		}
	}
	for a, id := range hardwareAliases() {
		got, alias := ResolveHardwareID(a)
		if !alias || got != id {
			t.Errorf("alias %s: resolved %q, %v; want %q, true", a, got, alias, id)
		}
		if h, err := LookupHardware(a); err != nil || h.ID != id {
			t.Errorf("alias %s names no catalog GPU: %+v, %v", a, h, err)
		}
	}
}

// TestResolveModelID checks that only a declared catalog alias resolves (to its entry's id);
// catalog ids, their folded spellings, directories and unknown names come back as given.
func TestResolveModelID(t *testing.T) {
	// A model directory named like an alias is a directory, not the alias.
	dir := filepath.Join(t.TempDir(), "Mistral-7B")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, want string
		alias    bool
	}{
		{"mistralai/Mistral-7B", "mistralai/Mistral-7B-Instruct-v0.3", true},
		{"mistralai/mistral-7b-instruct", "mistralai/Mistral-7B-Instruct-v0.3", true},
		{"mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3", false},
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct", false},
		{"nvidia/Llama-3.1-8B-Instruct-FP8", "nvidia/Llama-3.1-8B-Instruct-FP8", false},
		// An alias spelled with a weight format is a checkpoint of its own: its name is kept.
		{"deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1", true},
		{"nvidia/DeepSeek-R1-0528-NVFP4", "nvidia/DeepSeek-R1-0528-NVFP4", false},
		{"acme/Unknown-7B", "acme/Unknown-7B", false},
		{dir, dir, false},
	} {
		got, alias := ResolveModelID(c.id)
		if got != c.want || alias != c.alias {
			t.Errorf("ResolveModelID(%q) = %q, %v; want %q, %v", c.id, got, alias, c.want, c.alias)
		}
	}
}

// Sliding-window layers keep only a window of KV, outside the per-token cache: gpt-oss-120b's
// per-token KV is its 18 full-attention layers × 2 × 8 KV heads × 64 × 2 bytes = 36,864 B (BF16),
// half of what all 36 layers would hold; a config.json's layer_types and sliding_window give the
// same.
func TestSlidingWindowKV(t *testing.T) {
	m, err := LookupModel("openai/gpt-oss-120b")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.KVBytesPerTokenAs(BF16); got != 36864 {
		t.Errorf("gpt-oss-120b KV bytes per token %d, want 36864", got)
	}
	if got := m.KVBytesPerTokenPerGPU(BF16, 8, 2); got != 9*2*1*64*2 {
		t.Errorf("per GPU at TP8 PP2: %d, want ceil(18/2) layers × 2 × 1 head × 64 × 2 = %d", got, 9*2*1*64*2)
	}
	dir := t.TempDir()
	cfg := `{"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 8,
		"vocab_size": 10, "max_position_embeddings": 64, "sliding_window": 16,
		"layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadModelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.SlidingLayers != 2 || d.SlidingWindow != 16 || d.KVBytesPerTokenAs(BF16) != 2*2*2*16*2 {
		t.Errorf("config.json: sliding %d window %d, KV %d B/token; want 2, 16, %d", d.SlidingLayers, d.SlidingWindow, d.KVBytesPerTokenAs(BF16), 2*2*2*16*2)
	}
}

// An organization the catalog does not know for the model a name reads as is reported (the
// catalog matches by the name after the organization); every spelling the catalog documents is
// not: catalog ids and aliases in any case, no organization, NVIDIA's and Red Hat's quantized
// checkpoints with a weight-format suffix, and the model_path ids of the measured-deployment CSV
// files validate reads. Directories and unknown names are left to ResolveModel.
func TestUnknownOrganization(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wrongorg", "Llama-3.1-8B")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	quiet := []string{"Llama-3.1-8B", "llama-3.1-8b", "META-LLAMA/Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B-Instruct",
		"nvidia/Llama-3.1-8B-Instruct-FP8", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8",
		"nvidia/Llama-3.3-70B-Instruct-FP4", "nvidia/Llama-3.1-405B-Instruct-FP8", "nvidia/DeepSeek-R1-0528-NVFP4", "Qwen/Qwen3-32B-FP8",
		"mistralai/Mistral-7B", "zai-org/GLM-5", "deepseek-ai/DeepSeek-V3-0324",
		// measured_dense_calibration.csv and measured_moe_calibration.csv
		"nvidia/Qwen3-32B-NVFP4", "Qwen/Qwen3-32B", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B",
		"MiniMaxAI/MiniMax-M2.5", "Qwen/Qwen3.5-397B-A17B", "moonshotai/Kimi-K2.5", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1",
		"nvidia/DeepSeek-V3.1-NVFP4", "Qwen/Qwen3-235B-A22B-FP8", "openai/gpt-oss-120b", "zhipuai/GLM-5",
		"acme/Unknown-7B", dir}
	for _, e := range modelCatalog() {
		quiet = append(append(quiet, e.spec.ID, strings.ToUpper(e.spec.ID)), e.aliases...)
	}
	for _, id := range quiet {
		if org, _, _ := UnknownOrganization(id); org != "" || OrganizationNote(id) != "" {
			t.Errorf("%s: organization %q reported, note %q", id, org, OrganizationNote(id))
		}
	}
	for _, c := range []struct {
		id, org, model string
		own            []string
	}{
		{"wrongorg/Llama-3.1-8B", "wrongorg", "meta-llama/Llama-3.1-8B", []string{"meta-llama"}},
		{"wrongorg/Meta-Llama-3.1-8B-Instruct-FP8", "wrongorg", "meta-llama/Llama-3.1-8B", []string{"meta-llama"}},
		// A quantizer's name without a weight-format suffix is no checkpoint of theirs.
		{"nvidia/Llama-3.1-8B", "nvidia", "meta-llama/Llama-3.1-8B", []string{"meta-llama"}},
		{"openai/GLM-5", "openai", "zai-org/GLM-5", []string{"zai-org", "zhipuai"}},
		{"models/meta-llama/Llama-3.1-8B", "models/meta-llama", "meta-llama/Llama-3.1-8B", []string{"meta-llama"}},
	} {
		org, model, own := UnknownOrganization(c.id)
		if org != c.org || model != c.model || !slices.Equal(own, c.own) {
			t.Errorf("%s: %q, %q, %v; want %q, %q, %v", c.id, org, model, own, c.org, c.model, c.own)
		}
	}
	want := `"wrongorg/Llama-3.1-8B" is read as meta-llama/Llama-3.1-8B, but the catalog knows that model under meta-llama ` +
		`(a quantized checkpoint whose name ends in a weight-format suffix such as -FP8 also under nvidia, RedHatAI, neuralmagic), ` +
		`not wrongorg; write meta-llama/Llama-3.1-8B or Llama-3.1-8B (servesweep list models prints the spellings), ` +
		`or give a local directory holding the checkpoint's config.json if it is another model`
	if got := OrganizationNote("wrongorg/Llama-3.1-8B"); got != want {
		t.Errorf("note:\n%s\nwant\n%s", got, want)
	}
	// A suffixed id is read with the formats its suffix names, and every spelling the note
	// suggests reads as the same model and precisions (the bare catalog id is BF16: another model).
	wantFP8 := `"wrongorg/Llama-3.1-8B-FP8" is read as meta-llama/Llama-3.1-8B with fp8 weights and a fp8 KV cache, ` +
		`but the catalog knows that model under meta-llama`
	wantWrite := `; write meta-llama/Llama-3.1-8B-FP8 or Llama-3.1-8B-FP8 (servesweep list models`
	if got := OrganizationNote("wrongorg/Llama-3.1-8B-FP8"); !strings.HasPrefix(got, wantFP8) || !strings.Contains(got, wantWrite) {
		t.Errorf("note:\n%s\nwant it to start\n%s\nand contain\n%s", got, wantFP8, wantWrite)
	}
	for _, id := range []string{"wrongorg/Llama-3.1-8B", "wrongorg/Llama-3.1-8B-FP8", "wrongorg/Meta-Llama-3.1-8B-Instruct-FP8",
		"nvidia/Llama-3.1-8B", "openai/GLM-5", "acme/Qwen3-32B-NVFP4", "models/meta-llama/Llama-3.1-8B"} {
		note := OrganizationNote(id)
		_, write, ok := strings.Cut(note, "; write ")
		if !ok {
			t.Fatalf("%s: no spellings in %q", id, note)
		}
		write, _, _ = strings.Cut(write, " (servesweep list models")
		m, err := LookupModel(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range strings.Split(write, " or ") {
			if wm, err := LookupModel(w); err != nil || wm.ID != m.ID || wm.Precisions != m.Precisions {
				t.Errorf("%s: the note suggests %s, read as %s %+v (%v); want %s %+v", id, w, wm.ID, wm.Precisions, err, m.ID, m.Precisions)
			}
		}
	}
}

// Every spelling that reads as the same catalog architecture and formats has one canonical name,
// which is its own canonical name; a weight-format suffix reads as another model than the bare
// name; directories and unknown names are kept.
func TestCanonicalModelID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Llama-3.1-8B")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, want string }{
		{"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"},
		{"wrongorg/llama-3.1-8b", "meta-llama/Llama-3.1-8B"},
		{"nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B-FP8"},
		{"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "meta-llama/Llama-3.1-8B-FP8"},
		{"nvidia/Qwen3-32B-NVFP4", "Qwen/Qwen3-32B-FP4"},
		{"mistralai/Mistral-7B", "mistralai/Mistral-7B-Instruct-v0.3"},
		// A model whose own checkpoint is FP8: the bare name and an alias read as it.
		{"deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1"},
		{"nvidia/DeepSeek-R1-0528-NVFP4", "deepseek-ai/DeepSeek-R1-FP4"},
		{"acme/Unknown-7B", "acme/Unknown-7B"},
		{dir, dir},
	} {
		got, changed := CanonicalModelID(c.id)
		if got != c.want || changed != (c.want != c.id) {
			t.Errorf("CanonicalModelID(%q) = %q, %v; want %q", c.id, got, changed, c.want)
			continue
		}
		if again, changed := CanonicalModelID(got); again != got || changed {
			t.Errorf("CanonicalModelID(%q) = %q, %v; want itself", got, again, changed)
		}
		a, errA := LookupModel(c.id)
		b, errB := LookupModel(got)
		if errA == nil && (errB != nil || !reflect.DeepEqual(a, b)) {
			t.Errorf("%s reads as %+v, its canonical name %s as %+v (%v)", c.id, a, got, b, errB)
		}
	}
}

// An engine.precision.weights that contradicts the format a catalog id's name gives is described,
// with the explicit format winning; agreement, auto, a name without a format, an unknown name and
// a directory are not.
func TestWeightsConflict(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Llama-3.1-8B-FP8")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := `bf16 contradicts engine.model "nvidia/Llama-3.1-8B-Instruct-FP8", whose name means fp8 weights; ` +
		"engine.precision.weights wins: the run prices bf16 weights (and the name's fp8 KV cache where engine.precision.kv_cache is auto)"
	if got := WeightsConflict("nvidia/Llama-3.1-8B-Instruct-FP8", "bf16"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := WeightsConflict("nvidia/Qwen3-32B-NVFP4", "fp8"); !strings.HasPrefix(got, `fp8 contradicts engine.model "nvidia/Qwen3-32B-NVFP4", whose name means fp4 weights`) {
		t.Errorf("NVFP4 id with fp8 weights: %q", got)
	}
	for _, c := range [][2]string{{"nvidia/Llama-3.1-8B-Instruct-FP8", "fp8"}, {"nvidia/Llama-3.1-8B-Instruct-FP8", "auto"},
		{"nvidia/Llama-3.1-8B-Instruct-FP8", ""}, {"nvidia/Qwen3-32B-NVFP4", "nvfp4"}, {"meta-llama/Llama-3.1-8B", "fp8"},
		{"deepseek-ai/DeepSeek-R1", "bf16"}, {"acme/Unknown-7B-FP8", "bf16"}, {dir, "bf16"}, {"nvidia/Llama-3.1-8B-Instruct-FP8", "int3"}} {
		if got := WeightsConflict(c[0], c[1]); got != "" {
			t.Errorf("%s with weights %q: %q, want nothing", c[0], c[1], got)
		}
	}
}

// A model id written as a path names a directory: without one it is refused with a message naming
// the path and the catalog id to write, never read as the catalog model its last element names.
// An existing directory and ids that are not paths are no problem.
func TestModelIDProblem(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "Llama-3.1-8B")
	for _, id := range []string{missing, "./servesweep-no-such-dir/Llama-3.1-8B-FP8", "../servesweep-no-such-dir", "~/models/x", "/Llama-3.1-8B"} {
		msg := ModelIDProblem(id)
		if !strings.HasPrefix(msg, fmt.Sprintf("%q is a path, but no such directory exists", id)) {
			t.Errorf("%s: %q", id, msg)
		}
		if _, err := LookupModel(id); err == nil || err.Error() != msg {
			t.Errorf("LookupModel(%s): %v; want %q", id, err, msg)
		}
		if _, err := ResolveModel(id); err == nil {
			t.Errorf("ResolveModel(%s) read a catalog model", id)
		}
	}
	if want := "; give a directory holding a Hugging Face config.json, or for a catalog model write meta-llama/Llama-3.1-8B"; !strings.HasSuffix(ModelIDProblem(missing), want) {
		t.Errorf("%q lacks %q", ModelIDProblem(missing), want)
	}
	if want := "write meta-llama/Llama-3.1-8B-FP8"; !strings.HasSuffix(ModelIDProblem("./servesweep-no-such-dir/Llama-3.1-8B-FP8"), want) {
		t.Errorf("FP8: lacks %q", want)
	}
	const slash = "meta-llama/Llama-3.1-8B/"
	if msg, want := ModelIDProblem(slash), `"meta-llama/Llama-3.1-8B/" ends in '/' but no such directory exists; a model id has no trailing '/': write "meta-llama/Llama-3.1-8B", or give a directory holding a Hugging Face config.json`; msg != want {
		t.Errorf("trailing slash: %q; want %q", msg, want)
	}
	for _, id := range []string{dir, dir + "/", "meta-llama/Llama-3.1-8B", "Llama-3.1-8B", "acme/Unknown-7B"} {
		if msg := ModelIDProblem(id); msg != "" {
			t.Errorf("%s: %q", id, msg)
		}
	}
}
