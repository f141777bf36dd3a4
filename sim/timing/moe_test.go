package timing

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// toyMoE is a 4-layer MoE model small enough to count by hand: one dense layer first, then
// three MoE layers of 8 experts (top-2) with a shared expert.
var toyMoE = ModelSpec{ID: "toy-moe", Layers: 4, Hidden: 1024, Heads: 8, KVHeads: 2, HeadDim: 128, Intermediate: 4096,
	Vocab: 32000, MaxContext: 4096, Params: 65560576 + 2*32000*1024,
	MoE: &MoESpec{Experts: 8, TopK: 2, ExpertIntermediate: 512, SharedIntermediate: 512, DenseLayers: 1}}

// Hand-computed parameter counts of toyMoE:
//
//	attention per layer  1024·1024 + 2·1024·256 + 1024·1024          = 2,621,440
//	dense MLP            3·1024·4096                                  = 12,582,912
//	MoE layer            8·3·1024·512 + 3·1024·512 + 1024·8 (router)  = 14,163,968
//	linear               4·2,621,440 + 12,582,912 + 3·14,163,968      = 65,560,576
//	routed experts       3·8·3·1024·512                               = 37,748,736
//	active per token     65,560,576 − 37,748,736·(1 − 2/8)            = 37,249,024
func TestMoEParameterCounts(t *testing.T) {
	if err := toyMoE.CheckArchitecture(); err != nil {
		t.Fatal(err)
	}
	if got := toyMoE.LinearParams(); got != 65560576 {
		t.Errorf("linear params %v, want 65,560,576", got)
	}
	if got := toyMoE.ExpertParams(); got != 37748736 {
		t.Errorf("expert params %v, want 37,748,736", got)
	}
	if got := toyMoE.ActiveLinearParams(); got != 37249024 {
		t.Errorf("active params %v, want 37,249,024", got)
	}
	dense := toyMoE
	dense.MoE = nil
	if dense.ActiveLinearParams() != dense.LinearParams() || dense.ExpertParams() != 0 || dense.MoELayers() != 0 {
		t.Error("a dense model has experts")
	}
}

// One GPU's weights, BF16, tensor 2 × attention_data 2 with the experts split 4 ways (moe_expert
// 4): everything but the experts (262,193,152 − 75,497,472 bytes) over the 2 tensor ranks, the
// experts (75,497,472 bytes) over 4: 93,347,840 + 18,874,368 = 112,222,208 bytes. A dense model
// keeps WeightBytes / (tensor × pipeline).
func TestMoEWeightsPerGPU(t *testing.T) {
	if got := toyMoE.WeightBytes(BF16); got != 262193152 {
		t.Fatalf("weight bytes %v", got)
	}
	s := Shape{Tensor: 2, Pipeline: 1, AttentionData: 2, MoETensor: 1, MoEExpert: 4}
	if got := toyMoE.WeightBytesPerGPU(BF16, s); got != 112222208 {
		t.Errorf("weights per GPU %v, want 112,222,208", got)
	}
	dense := toyMoE
	dense.MoE = nil
	if got, want := dense.WeightBytesPerGPU(FP8, Shape{Tensor: 2, Pipeline: 2}), dense.WeightBytes(FP8)/4; got != want {
		t.Errorf("dense weights per GPU %v, want %v", got, want)
	}
	// One redundant expert over 3 expert-parallel GPUs (attention_data 3, tensor 1): 9 slots of
	// 75,497,472 / 8 = 9,437,184 bytes, 3 per GPU (28,311,552), beside the 186,695,680 bytes of
	// everything else, whole on each GPU: 215,007,232.
	s = Shape{Tensor: 1, Pipeline: 1, AttentionData: 3, MoETensor: 1, MoEExpert: 3, RedundantExperts: 1}
	if got := toyMoE.WeightBytesPerGPU(BF16, s); got != 215007232 {
		t.Errorf("weights per GPU with a redundant expert %v, want 215,007,232", got)
	}
}

// Redundant experts add weight bytes to hold and stream, not FLOPs: over 2 expert-parallel GPUs,
// 2 redundant experts make 10 slots, 5 per GPU instead of 4, so streaming every local slot takes
// 10/8 as long, and a token's 2 choices land on a given slot with probability 2/10, not 2/8.
func TestRedundantExpertsStreamTheirWeights(t *testing.T) {
	hw := Hardware{ID: "toy", MemoryGiB: 80, MemoryTBps: 2, BF16TFLOPS: 1000, LinkGBps: 400}
	s := Shape{Tensor: 1, Pipeline: 1, AttentionData: 2, MoETensor: 1, MoEExpert: 2}
	base := mustRoofline(t, toyMoE, hw, Precisions{Weights: BF16, KVCache: BF16}, s, ideal())
	s.RedundantExperts = 2
	red := mustRoofline(t, toyMoE, hw, Precisions{Weights: BF16, KVCache: BF16}, s, ideal())
	if got, want := red.moe.expertWeightMs, base.moe.expertWeightMs*10/8; math.Abs(got-want) > 1e-12*want {
		t.Errorf("expert streaming %v ms, want %v (10/8 of %v)", got, want, base.moe.expertWeightMs)
	}
	if got, want := red.moe.missLog, math.Log1p(-2.0/10); got != want {
		t.Errorf("miss log %v, want ln(1 − 2/10) = %v", got, want)
	}
	if red.gemmMsPerToken != base.gemmMsPerToken {
		t.Errorf("GEMM per token %v, want %v: redundant experts add no FLOPs", red.gemmMsPerToken, base.gemmMsPerToken)
	}
	// A memory-bound pass of 32 decode tokens per rank reads nearly every local slot either way.
	b := &Batch{DecodeSteps: 32, SampledTokens: 32, DecodeStepKVTokens: 32}
	if dr, db := red.PassMs(b), base.PassMs(b); !(dr > db) {
		t.Errorf("pass with redundant experts %v ms, want more than %v", dr, db)
	}
}

// MLA caches one latent of kv_lora_rank values plus the rotary key per token and layer, whatever
// the heads or the tensor degree: DeepSeek-V3's 61 layers × (512 + 64) × 2 bytes = 70,272 bytes
// in BF16, 35,136 in FP8, on every GPU of a tensor group.
func TestMLAKVBytes(t *testing.T) {
	m := ModelSpec{ID: "mla", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, Vocab: 129280,
		MLA: &MLASpec{QLoraRank: 1536, KVLoraRank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128}}
	if got := m.KVBytesPerTokenAs(BF16); got != 70272 {
		t.Errorf("BF16 %d, want 70,272", got)
	}
	if got := m.KVBytesPerTokenAs(FP8); got != 35136 {
		t.Errorf("FP8 %d, want 35,136", got)
	}
	if got := m.KVBytesPerTokenPerGPU(BF16, 8, 1); got != 70272 {
		t.Errorf("per GPU at TP8 %d, want 70,272 (not split)", got)
	}
	if got := m.KVBytesPerTokenPerGPU(BF16, 8, 2); got != 31*576*2 {
		t.Errorf("per GPU at PP2 %d, want 31 layers' worth", got)
	}
}

// Every impossible MoE split names its field.
func TestMoEShapeRules(t *testing.T) {
	dense := toyMoE
	dense.MoE = nil
	for _, c := range []struct {
		name  string
		m     ModelSpec
		s     Shape
		field string
		msg   string
	}{
		{"dense model with experts split", dense, Shape{Tensor: 2, Pipeline: 1, MoEExpert: 2}, "moe_expert", "is dense"},
		{"dense model with MoE tensor", dense, Shape{Tensor: 2, Pipeline: 1, MoETensor: 2}, "moe_tensor", "is dense"},
		{"product differs", toyMoE, Shape{Tensor: 2, Pipeline: 1, AttentionData: 2, MoETensor: 1, MoEExpert: 2}, "moe_expert", "(1 × 2 = 2) must equal tensor × attention_data (2 × 2 = 4)"},
		{"experts not divisible", toyMoE, Shape{Tensor: 1, Pipeline: 1, AttentionData: 3, MoETensor: 1, MoEExpert: 3}, "moe_expert", "does not divide toy-moe's 8 experts; valid: 1, 2, 4, 8"},
		{"intermediate not divisible", toyMoE, Shape{Tensor: 1, Pipeline: 1, AttentionData: 6, MoETensor: 3, MoEExpert: 2}, "moe_tensor", "does not divide toy-moe's expert intermediate size 512; valid: 1, 2, 4, 8, 16, 32, 64, 128, 256, 512"},
		{"heads", toyMoE, Shape{Tensor: 3, Pipeline: 1, MoETensor: 3}, "tensor", "does not divide toy-moe's 8 attention heads"},
		{"only moe_tensor given", toyMoE, Shape{Tensor: 2, Pipeline: 1, AttentionData: 2, MoETensor: 2, MoEExpert: 1}, "moe_tensor",
			"e.g. moe_tensor: 1 with moe_expert: 4 (experts split over the GPUs) or moe_tensor: 4 with moe_expert: 1 (each expert split)"},
		{"no valid split to suggest", toyMoE, Shape{Tensor: 1, Pipeline: 1, AttentionData: 3, MoETensor: 1, MoEExpert: 1}, "moe_expert",
			"no split of 3 GPUs divides toy-moe's experts or expert intermediate size"},
		{"experts not divisible, redundant suggested", toyMoE, Shape{Tensor: 1, Pipeline: 1, AttentionData: 3, MoETensor: 1, MoEExpert: 3}, "moe_expert",
			"(or redundant_experts: 1, which makes 9 expert slots)"},
		{"slots not divisible", toyMoE, Shape{Tensor: 1, Pipeline: 1, AttentionData: 3, MoETensor: 1, MoEExpert: 3, RedundantExperts: 2}, "moe_expert",
			"moe_expert 3 does not divide toy-moe's 8 experts + 2 redundant = 10 expert slots; valid moe_expert: 1, 2, 5, 10"},
		{"redundant without expert parallelism", toyMoE, Shape{Tensor: 2, Pipeline: 1, MoETensor: 2, RedundantExperts: 2}, "redundant_experts",
			"needs expert parallelism (moe_expert > 1)"},
		{"negative redundant", toyMoE, Shape{Tensor: 2, Pipeline: 1, MoEExpert: 2, RedundantExperts: -2}, "redundant_experts", "is negative"},
		{"dense model with redundant experts", dense, Shape{Tensor: 1, Pipeline: 1, RedundantExperts: 4}, "redundant_experts", "is dense: use 0"},
	} {
		err := c.m.CheckShape(c.s)
		var se *ShapeError
		if !errors.As(err, &se) || se.Field != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (field %v), want field %s and %q", c.name, err, se, c.field, c.msg)
		}
	}
	for _, s := range []Shape{
		{Tensor: 2, Pipeline: 1, AttentionData: 2, MoETensor: 1, MoEExpert: 4},
		{Tensor: 4, Pipeline: 2, MoETensor: 4, MoEExpert: 1},
		{Tensor: 1, Pipeline: 1},
		{Tensor: 1, Pipeline: 1, AttentionData: 3, MoETensor: 1, MoEExpert: 3, RedundantExperts: 1},
	} {
		if err := toyMoE.CheckShape(s); err != nil || len(toyMoE.ShapeErrors(s)) != 0 {
			t.Errorf("%+v: %v", s, err)
		}
	}
	// Every fault is listed, not only the first: TP3 with 3 expert-parallel ranks on 8 heads and
	// 8 experts over 9 pipeline stages of 4 layers; a dense model with both MoE degrees above 1.
	var fields []string
	for _, se := range toyMoE.ShapeErrors(Shape{Tensor: 3, Pipeline: 9, MoETensor: 1, MoEExpert: 3}) {
		fields = append(fields, se.Field)
	}
	if want := []string{"tensor", "pipeline", "moe_expert"}; !slices.Equal(fields, want) {
		t.Errorf("faults %v, want %v", fields, want)
	}
	fields = fields[:0]
	for _, se := range dense.ShapeErrors(Shape{Tensor: 4, Pipeline: 1, MoETensor: 2, MoEExpert: 2}) {
		fields = append(fields, se.Field)
	}
	if want := []string{"moe_tensor", "moe_expert"}; !slices.Equal(fields, want) {
		t.Errorf("dense faults %v, want %v", fields, want)
	}
}

// The MoE catalog's parameter counts, computed from each architecture, agree with the model
// cards' totals and active counts within 5 % (cards round, and count or omit multi-token
// prediction layers, biases, norms and the input embedding table differently); every model of the measured MoE file
// resolves (Qwen3-Next, not in the catalog, is refused naming the known models).
func TestMoECatalogParams(t *testing.T) {
	for _, c := range []struct {
		id            string
		total, active float64
	}{
		{"deepseek-ai/DeepSeek-V3", 671e9, 37e9},
		{"deepseek-ai/DeepSeek-R1", 671e9, 37e9},
		{"moonshotai/Kimi-K2.5", 1000e9, 32e9},
		{"zhipuai/GLM-5", 744e9, 40e9},
		{"Qwen/Qwen3-235B-A22B-FP8", 235e9, 22e9},
		{"Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9},
		{"openai/gpt-oss-120b", 117e9, 5.1e9},
		{"openai/gpt-oss-20b", 21e9, 3.6e9},
		{"mistralai/Mixtral-8x7B-v0.1", 46.7e9, 12.9e9},
		{"MiniMaxAI/MiniMax-M2.5", 230e9, 10e9},
		{"Qwen/Qwen3.5-397B-A17B", 397e9, 17e9},
	} {
		m, err := LookupModel(c.id)
		if err != nil {
			t.Errorf("%s: %v", c.id, err)
			continue
		}
		if err := m.CheckArchitecture(); err != nil {
			t.Errorf("%s: %v", c.id, err)
		}
		// Active per token: cards differ on counting the input embedding table (a lookup, not
		// compute); either count must match.
		active := m.Params - m.ExpertParams()*(1-float64(m.MoE.TopK)/float64(m.MoE.Experts))
		withoutEmbed := active - float64(m.Vocab*m.Hidden)
		if math.Abs(m.Params/c.total-1) > 0.05 || min(math.Abs(active/c.active-1), math.Abs(withoutEmbed/c.active-1)) > 0.05 {
			t.Errorf("%s: %.1fB total, %.2fB active; card %.1fB, %.2fB", c.id, m.Params/1e9, active/1e9, c.total/1e9, c.active/1e9)
		}
	}
	for id, want := range map[string]Precisions{
		"deepseek-ai/DeepSeek-R1":     {Weights: FP8, KVCache: BF16},
		"nvidia/DeepSeek-V3.1-NVFP4":  {Weights: FP4, KVCache: FP8},
		"Qwen/Qwen3-235B-A22B-FP8":    {Weights: FP8, KVCache: FP8},
		"openai/gpt-oss-120b":         {Weights: FP4, KVCache: BF16},
		"mistralai/Mixtral-8x7B-v0.1": {Weights: BF16, KVCache: BF16},
	} {
		if m, err := LookupModel(id); err != nil || m.Precisions != want {
			t.Errorf("%s: precisions %+v (%v), want %+v", id, m.Precisions, err, want)
		}
	}
	if _, err := LookupModel("Qwen/Qwen3-Next-80B-A3B"); err == nil || !strings.Contains(err.Error(), "hybrid linear attention") || !strings.Contains(err.Error(), "known models: ") {
		t.Errorf("Qwen3-Next-80B-A3B: %v", err)
	}
}

// A local config.json of an MoE model with MLA (DeepSeek-V3's fields) reads into the catalog's
// DeepSeek-V3 architecture, parameter count included; one in Mixtral's style (intermediate_size
// is the expert size, no dense layers) reads into the catalog's Mixtral.
func TestLoadModelDirMoE(t *testing.T) {
	for _, c := range []struct {
		json, id string
	}{
		{`{"num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128,
		  "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256, "num_experts_per_tok": 8,
		  "n_shared_experts": 1, "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512,
		  "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280,
		  "max_position_embeddings": 163840, "tie_word_embeddings": false}`, "deepseek-ai/DeepSeek-V3"},
		{`{"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
		  "intermediate_size": 14336, "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
		  "max_position_embeddings": 32768}`, "mistralai/Mixtral-8x7B-v0.1"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadModelDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		want, _ := LookupModel(c.id)
		if *got.MoE != *want.MoE || (want.MLA != nil) != (got.MLA != nil) || (want.MLA != nil && *got.MLA != *want.MLA) ||
			got.HeadDim != want.HeadDim || got.Intermediate != want.Intermediate || got.Params != want.Params {
			t.Errorf("%s: read %+v %+v %+v, catalog %+v %+v %+v", c.id, got, got.MoE, got.MLA, want, want.MoE, want.MLA)
		}
	}
}

// A lone decode step of toyMoE on one H100 with ideal efficiency and no KV is weight-bound: it
// reads every non-expert weight (65,560,576 − 37,748,736 linear + 32,768,000 lm_head
// parameters, BF16) and the share of experts a token hits, 1 − (1 − 2/8)^1 = 1/4 of
// 37,748,736 parameters: (60,579,840 + 9,437,184) × 2 bytes / 3.35 TB/s. With 1,000 tokens the
// experts are all hit and the compute grows with the active parameters only.
func TestRooflineMoEDecodeReadsTheExpertsHit(t *testing.T) {
	hw, _ := LookupHardware("h100_sxm")
	r := mustRoofline(t, toyMoE, unmeasured(hw), Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, ideal())
	lone := &Batch{DecodeRequests: 1, DecodeSteps: 1, SampledTokens: 1}
	want := (65560576 - 37748736 + 32768000 + 37748736/4.0) * 2 / 3.35e9
	if got := r.PassMs(lone); math.Abs(got-want) > 1e-12 {
		t.Errorf("lone decode %.12g ms, want %.12g", got, want)
	}
	// 1,000 tokens: compute 2 × 37,249,024 × 1,000 / 989.5 TFLOPS against all the weights.
	big := &Batch{PrefillRequests: 1, PrefillTokens: 1000, SampledTokens: 1}
	weights := (65560576 + 32768000) * 2 / 3.35e9 * -math.Expm1(1000*math.Log1p(-0.25)) // ≈ all
	compute := 2*37249024*1000/(hw.BF16TFLOPS*1e9) + 2*32768000/(hw.BF16TFLOPS*1e9)
	if got := r.PassMs(big); got < math.Max(weights, compute)*0.999 {
		t.Errorf("1,000-token pass %.6g ms, below max(weights %.6g, compute %.6g)", got, weights, compute)
	}
	// Expert parallelism adds a dispatch and a combine per MoE layer; it never shortens a step.
	ep := mustRoofline(t, toyMoE, hw, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 2, Pipeline: 1, MoEExpert: 2}, ideal())
	tp := mustRoofline(t, toyMoE, hw, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 2, Pipeline: 1, MoETensor: 2}, ideal())
	if ep.moe.commMsPerToken <= 0 || tp.moe.commMsPerToken <= 0 {
		t.Errorf("EP comm %v, MoE-TP comm %v per token: want both > 0", ep.moe.commMsPerToken, tp.moe.commMsPerToken)
	}
}

// FP4Memory slows every FP4 weight read of an MoE model on a GPU with FP4 tensor cores, the
// experts' as well as the rest: a lone decode step of toyMoE with FP4 weights on B200 (8 TB/s)
// reads the non-expert linear weights and a quarter of the experts at 0.5625 bytes each / 0.8,
// and the BF16 lm_head at 2 bytes.
func TestFP4MemoryPricesMoEWeights(t *testing.T) {
	hw, err := LookupHardware("b200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	slow := ideal()
	slow.FP4Memory = 0.8
	r := mustRoofline(t, toyMoE, unmeasured(hw), Precisions{Weights: FP4, KVCache: FP8}, Shape{Tensor: 1, Pipeline: 1}, slow)
	lone := &Batch{DecodeRequests: 1, DecodeSteps: 1, SampledTokens: 1}
	want := ((65560576-37748736+37748736/4.0)*0.5625/0.8 + 32768000*2) / 8e9
	if got := r.PassMs(lone); math.Abs(got-want) > 1e-12 {
		t.Errorf("lone FP4 decode with FP4Memory 0.8: %.12g ms, want %.12g", got, want)
	}
}

// Every MoE model of the catalog builds a roofline at a legal shape, including those whose every
// layer is an MoE layer (no dense intermediate size).
func TestRooflineBuildsEveryMoECatalogModel(t *testing.T) {
	hw, _ := LookupHardware("h200_sxm")
	for _, id := range ModelIDs() {
		m, _ := LookupModel(id)
		if m.MoE == nil {
			continue
		}
		s := Shape{Tensor: 8, Pipeline: 1, MoEExpert: 8}
		if err := m.CheckShape(s); err != nil {
			s = Shape{Tensor: 8, Pipeline: 1, MoETensor: 8}
		}
		if _, err := NewRoofline(m, hw, m.Precisions, s, CalibratedEfficiency()); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// A lone 2,048-token prefill of DeepSeek-R1 gets faster when a worker doubles its GPUs with
// tensor and expert parallelism together (TP8/EP8 → TP16/EP16 → TP32/EP32) within one link
// domain (a GB200 NVL72 rack): each GPU computes, reads and dispatches a smaller share. On
// H200 nodes of 8 the TP16/EP16 worker spans two, and its dispatch through the 50 GB/s network
// ports makes the same prefill slower than on one node (TestCollectivesBetweenLinkDomains).
func TestRooflineMoEScalesWithGPUs(t *testing.T) {
	m, h200 := mustLookup(t, "deepseek-ai/DeepSeek-R1", "h200_sxm")
	prefillOn := func(hw Hardware, g int) float64 {
		b := &Batch{PrefillRequests: 1, PrefillTokens: 2048, PrefillAttentionPairs: 2048 * 2049 / 2, SampledTokens: 1}
		return mustRoofline(t, m, hw, m.Precisions, Shape{Tensor: g, Pipeline: 1, MoEExpert: g}, CalibratedEfficiency()).PassMs(b)
	}
	if one, two := prefillOn(h200, 8), prefillOn(h200, 16); two <= one {
		t.Errorf("H200 TP16/EP16 over two nodes: prefill %.2f ms, not above %.2f ms on one node", two, one)
	}
	hw, err := LookupHardware("gb200")
	if err != nil {
		t.Fatal(err)
	}
	prefill := &Batch{PrefillRequests: 1, PrefillTokens: 2048, PrefillAttentionPairs: 2048 * 2049 / 2, SampledTokens: 1}
	prev := math.Inf(1)
	for _, g := range []int{8, 16, 32} {
		ms := mustRoofline(t, m, hw, m.Precisions, Shape{Tensor: g, Pipeline: 1, MoEExpert: g}, CalibratedEfficiency()).PassMs(prefill)
		if ms >= prev {
			t.Errorf("TP%d/EP%d prefill %.2f ms, not below %.2f ms on half the GPUs", g, g, ms, prev)
		}
		prev = ms
	}
}

// MoELayerOverheadUs adds exactly L_moe × MoELayerOverheadUs to every pass of an MoE model
// under the roofline, whatever the GPU or the TP, EP or PP shape (DeepSeek-R1: 61 layers, the
// first 3 dense, so 58 MoE layers; 40 µs gives 2.32 ms), and nothing to a dense model's.
func TestMoELayerOverheadHoldsAcrossGPUsAndShapes(t *testing.T) {
	bare := CalibratedEfficiency()
	bare.MoELayerOverheadUs = 0
	eff := bare
	eff.MoELayerOverheadUs = 40
	step := decodeBatch(8, 2048)
	for _, gpu := range []string{"h100_sxm", "h200_sxm", "b200_sxm", "gb200"} {
		m, hw := mustLookup(t, "deepseek-ai/DeepSeek-R1", gpu)
		if m.MoELayers() != 58 {
			t.Fatalf("DeepSeek-R1 has %d MoE layers, want 58", m.MoELayers())
		}
		for _, s := range []Shape{{Tensor: 8, Pipeline: 1, MoEExpert: 8}, {Tensor: 8, Pipeline: 1, MoETensor: 8},
			{Tensor: 16, Pipeline: 1, MoETensor: 2, MoEExpert: 8}, {Tensor: 8, Pipeline: 2, MoEExpert: 8}} {
			got := mustRoofline(t, m, hw, m.Precisions, s, eff).PassMs(step) - mustRoofline(t, m, hw, m.Precisions, s, bare).PassMs(step)
			if !near(got, 2.32) {
				t.Errorf("%s %+v: MoE layer overhead %v ms, want 2.32", gpu, s, got)
			}
		}
		dense, _ := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", gpu)
		s := Shape{Tensor: 1, Pipeline: 1}
		if d := mustRoofline(t, dense, hw, dense.Precisions, s, eff).PassMs(step) - mustRoofline(t, dense, hw, dense.Precisions, s, bare).PassMs(step); d != 0 {
			t.Errorf("%s: a dense model's pass changed by %v ms", gpu, d)
		}
	}
}

// ExpertGEMM prices only the routed experts' FLOPs. toyMoE routes 37,748,736 · 2/8 = 9,437,184
// expert parameters per token; a compute-bound prefill of 4,096 tokens on a 1,000 TFLOPS GPU
// (BF16, every other efficiency 1) spends 2 · 9,437,184 · 4,096 / 1e12 FLOP/ms = 0.0773 ms in
// them at ExpertGEMM 1, and four times that, 0.3092 ms (0.231928233984 ms more), at ExpertGEMM 0.25;
// TP2 (MoE-TP2) halves both. The rest of the pass, and a dense model's pass, do not change.
func TestExpertGEMMPricesTheRoutedExpertsOnly(t *testing.T) {
	hw := Hardware{ID: "kilo-gpu", MemoryGiB: 1000, MemoryTBps: 1000, BF16TFLOPS: 1000, LinkGBps: 1e6}
	prec := Precisions{Weights: BF16, KVCache: BF16}
	full := ideal()
	slow := full
	slow.ExpertGEMM = 0.25
	prefill := &Batch{PrefillRequests: 1, PrefillTokens: 4096, PrefillAttentionPairs: 4096 * 4097 / 2, SampledTokens: 1}
	for _, c := range []struct {
		s    Shape
		want float64
	}{{Shape{Tensor: 1, Pipeline: 1}, 0.231928233984}, {Shape{Tensor: 2, Pipeline: 1, MoETensor: 2}, 0.115964116992}} {
		a := mustRoofline(t, toyMoE, hw, prec, c.s, full)
		b := mustRoofline(t, toyMoE, hw, prec, c.s, slow)
		if a.weightMs >= a.gemmMsPerToken*4096 {
			t.Fatalf("%+v: the prefill must be compute-bound (weights %v ms, compute %v ms)", c.s, a.weightMs, a.gemmMsPerToken*4096)
		}
		if got := b.PassMs(prefill) - a.PassMs(prefill); !near(got, c.want) {
			t.Errorf("%+v: ExpertGEMM 0.25 adds %.10f ms, want %.10f", c.s, got, c.want)
		}
	}
	dense := tinyModel()
	s := Shape{Tensor: 1, Pipeline: 1}
	if a, b := mustRoofline(t, dense, hw, prec, s, full).PassMs(prefill), mustRoofline(t, dense, hw, prec, s, slow).PassMs(prefill); a != b {
		t.Errorf("a dense model's pass changed from %v to %v ms", a, b)
	}
	bad := full
	bad.ExpertGEMM = 0
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "ExpertGEMM must be in (0, 1], got 0") {
		t.Errorf("ExpertGEMM 0: err = %v", err)
	}
}

// A collective over more GPUs than one link domain sends the share bound for other domains
// through each GPU's network port (Hardware.NetworkGBps at Link) and takes the slower of that
// and the link. toyMoE (3 MoE layers of 4, top-2, hidden 1,024: 2,048 bytes a token) on H100s
// in link domains of 2 GPUs with 50 GB/s ports, ideal efficiencies:
//
//	DP4 EP4, per token: dispatch and combine, 2·3·2·2,048 = 24,576 bytes, of which 3/4 leave
//	the GPU over the link (450 GB/s: 4.096e-5 ms) and 2/4 leave the domain through the port
//	(50 GB/s: 2.4576e-4 ms): the port's.
//	TP4 MoE-TP4: 5 all-reduces (4 attention, 1 dense MLP) and 3 MoE ones of 2,048 bytes a
//	token; a ring moves 2·3/4 of them at 450 GB/s × 0.74/0.69 (H100's four-GPU all-reduce
//	share over the pooled one), the step between the 2 domains 2·(1/2)/2 = 1/2 through the port.
//
// With no port in the catalog (NetworkGBps 0) the link prices them all, as before.
func TestCollectivesBetweenLinkDomains(t *testing.T) {
	h100, _ := LookupHardware("h100_sxm")
	split := h100
	split.LinkDomainGPUs, split.NetworkGBps = 2, 50
	noPort := split
	noPort.NetworkGBps = 0
	prec := Precisions{Weights: BF16, KVCache: BF16}
	const link, port = 450e6, 50e6 // bytes/ms
	dep := Shape{Tensor: 1, Pipeline: 1, AttentionData: 4, MoEExpert: 4}
	for _, c := range []struct {
		hw   Hardware
		want float64
	}{{split, 24576 * 0.5 / port}, {noPort, 24576 * 0.75 / link}} {
		r := mustRoofline(t, toyMoE, c.hw, prec, dep, ideal())
		if got := r.moe.commMsPerToken; math.Abs(got-c.want) > 1e-15 {
			t.Errorf("DP4 EP4, port %g GB/s: all-to-all %.6g ms a token, want %.6g", c.hw.NetworkGBps, got, c.want)
		}
	}
	ring := link * 0.74 / PooledAllReduceFraction
	tep := Shape{Tensor: 4, Pipeline: 1, MoETensor: 4}
	for _, c := range []struct {
		hw           Hardware
		attn, expert float64
	}{
		{split, 5 * 2048 * 0.5 / port, 3 * 2048 * 0.5 / port},
		{noPort, 5 * 2 * 0.75 * 2048 / ring, 3 * 2 * 0.75 * 2048 / ring},
	} {
		r := mustRoofline(t, toyMoE, c.hw, prec, tep, ideal())
		if got := r.allReduceMsPerTok; math.Abs(got-c.attn) > 1e-15 {
			t.Errorf("TP4, port %g GB/s: attention and dense all-reduces %.6g ms a token, want %.6g", c.hw.NetworkGBps, got, c.attn)
		}
		if got := r.moe.commMsPerToken; math.Abs(got-c.expert) > 1e-15 {
			t.Errorf("MoE-TP4, port %g GB/s: MoE all-reduces %.6g ms a token, want %.6g", c.hw.NetworkGBps, got, c.expert)
		}
	}
}

// Each GPU of an expert-parallel group beyond AllToAllTableGPUs adds AllToAllPeerLatencyUs to
// every dispatch and combine: DeepSeek-R1's 58 MoE layers run two all-to-alls each per pass, so
// 1.5 µs per GPU adds 2 · 58 · (16 − 8) · 1.5 µs = 1.392 ms to any pass of a DP16 EP16 worker
// and 2 · 58 · 24 · 1.5 µs = 4.176 ms to a DP32 EP32 one's, and nothing to a DP8 EP8 one's.
func TestRooflineWideExpertParallelAllToAllLatency(t *testing.T) {
	m, err := LookupModel("deepseek-ai/DeepSeek-R1")
	if err != nil {
		t.Fatal(err)
	}
	if m.MoELayers() != 58 || AllToAllTableGPUs != 8 {
		t.Fatalf("DeepSeek-R1 MoE layers %d, AllToAllTableGPUs %d: the expectations below assume 58 and 8", m.MoELayers(), AllToAllTableGPUs)
	}
	hw, _ := LookupHardware("gb200")
	prec := Precisions{Weights: FP8, KVCache: FP8}
	without, with := CalibratedEfficiency(), CalibratedEfficiency()
	without.AllToAllPeerLatencyUs, with.AllToAllPeerLatencyUs = 0, 1.5
	batches := []*Batch{
		{DecodeRequests: 1, DecodeKVTokens: 1000, DecodeSteps: 1, DecodeStepKVTokens: 1000, SampledTokens: 1},
		{PrefillRequests: 2, PrefillTokens: 4096, PrefillAttentionPairs: 2 * 2048 * 2049 / 2, SampledTokens: 2, DecodeRequests: 2},
	}
	for _, c := range []struct {
		ep     int
		wantMs float64
	}{{8, 0}, {16, 1.392}, {32, 4.176}} {
		s := Shape{Tensor: 1, Pipeline: 1, AttentionData: c.ep, MoEExpert: c.ep}
		a, b := mustRoofline(t, m, hw, prec, s, without), mustRoofline(t, m, hw, prec, s, with)
		for i, batch := range batches {
			if got := b.PassMs(batch) - a.PassMs(batch); math.Abs(got-c.wantMs) > 1e-9 {
				t.Errorf("EP%d, batch %d: the peers' latency adds %.9g ms, want %.9g", c.ep, i, got, c.wantMs)
			}
		}
	}
}

// An MXFP4-experts checkpoint (gpt-oss) served as published keeps everything but its routed
// experts in BF16 (so does an NVFP4 experts-only one, FP4ExpertsOnly): toyMoE so marked, at fp4, stores 27,811,840 non-expert GEMM weights × 2 bytes
// + 37,748,736 experts × 0.5625 + 65,536,000 other parameters × 2 = 207,929,344 bytes. On a GPU
// of BF16 1,000, FP8 2,000 and FP4 4,000 TFLOPS with ideal efficiencies a prefill token costs
// 2·27,811,840 FLOPs at BF16 (1e12 FLOP/ms) and 2·9,437,184 routed-expert FLOPs at FP8's rate
// (MXFP8 activations): 5.562368e-5 + 9.437184e-6 = 6.5060864e-5 ms; without FP4 tensor cores
// the experts run at BF16's rate (7.4498048e-5 ms); unmarked, every GEMM runs at FP4's rate
// (2·37,249,024 / 4e12 = 1.8624512e-5 ms). At fp8 the mark changes nothing.
func TestExpertsOnlyCheckpoints(t *testing.T) {
	mx := toyMoE
	mx.MXFP4Experts = true
	if got := mx.WeightBytes(FP4); got != 207929344 {
		t.Errorf("weight bytes %v, want 207,929,344", got)
	}
	if got, want := mx.WeightBytes(FP8), toyMoE.WeightBytes(FP8); got != want {
		t.Errorf("fp8 weight bytes %v, want the unmarked %v", got, want)
	}
	hw := Hardware{ID: "kilo-gpu", MemoryGiB: 1000, MemoryTBps: 1000, BF16TFLOPS: 1000, FP8TFLOPS: 2000, FP4TFLOPS: 4000, LinkGBps: 1e6}
	noFP4 := hw
	noFP4.FP4TFLOPS = 0
	fp4 := Precisions{Weights: FP4, KVCache: FP8}
	s := Shape{Tensor: 1, Pipeline: 1}
	for _, c := range []struct {
		name string
		m    ModelSpec
		hw   Hardware
		p    Precisions
		want float64
	}{
		{"marked, FP4 tensor cores", mx, hw, fp4, 6.5060864e-5},
		{"marked, no FP4 tensor cores", mx, noFP4, fp4, 7.4498048e-5},
		{"unmarked", toyMoE, hw, fp4, 1.8624512e-5},
		{"marked at fp8", mx, hw, Precisions{Weights: FP8, KVCache: FP8}, 2 * 37249024 / 2e12},
	} {
		if got := mustRoofline(t, c.m, c.hw, c.p, s, ideal()).gemmMsPerToken; !near(got, c.want) {
			t.Errorf("%s: %.10g ms of GEMM per prefill token, want %.10g", c.name, got, c.want)
		}
	}
	// The weights streamed besides the experts: 27,811,840 × 2 + the 32,768,000-parameter head
	// × 2 bytes over 1e12 bytes/ms (1,000 TB/s).
	if got, want := mustRoofline(t, mx, hw, fp4, s, ideal()).weightMs, (27811840*2+32768000*2)/1e12; !near(got, want) {
		t.Errorf("non-expert weight streaming %.10g ms, want %.10g", got, want)
	}
	// An NVFP4 experts-only checkpoint keeps the BF16 rest but multiplies its experts at FP4's
	// rate (W4A4): 5.562368e-5 + 2·9,437,184 / 4e12 = 6.0342272e-5 ms.
	eo := toyMoE
	eo.FP4ExpertsOnly = true
	if got := mustRoofline(t, eo, hw, fp4, s, ideal()).gemmMsPerToken; !near(got, 6.0342272e-5) {
		t.Errorf("FP4ExpertsOnly: %.10g ms of GEMM per prefill token, want 6.0342272e-5", got)
	}
	if got := eo.WeightBytes(FP4); got != 207929344 {
		t.Errorf("FP4ExpertsOnly weight bytes %v, want 207,929,344", got)
	}
	minimax, err := LookupModel("MiniMaxAI/MiniMax-M2.5")
	if err != nil || !minimax.FP4ExpertsOnly || minimax.DenseWeights(FP4) != BF16 || minimax.DenseWeights(FP8) != FP8 {
		t.Errorf("MiniMax-M2.5: FP4ExpertsOnly %v, err %v; want its fp4 checkpoint's non-expert weights BF16, its fp8 one's FP8", minimax.FP4ExpertsOnly, err)
	}
	gptoss, b200 := mustLookup(t, "openai/gpt-oss-120b", "b200_sxm")
	if !gptoss.MXFP4Experts || gptoss.ExpertMathFormat(FP4, b200) != FP8 || gptoss.DenseWeights(FP4) != BF16 {
		t.Errorf("gpt-oss-120b on b200_sxm: MXFP4Experts %v, experts multiply in %s, the rest is %s; want true, fp8, bf16",
			gptoss.MXFP4Experts, gptoss.ExpertMathFormat(FP4, b200), gptoss.DenseWeights(FP4))
	}
}

// NVIDIA's v2 NVFP4 DeepSeek checkpoints keep every attention projection but the output one in
// BF16 (BF16AttentionAtFP4): per layer q_a 7,168 × 1,536, q_b 1,536 × 128·192, kv_a 7,168 × 576
// and kv_b 512 × 128·256, 69,664,768 parameters, 4,249,550,848 over 61 layers. At fp4 they take
// 2 bytes each instead of FP4's 0.5625: 6,108,729,344 bytes more than the mark-less model; on
// the ideal GPU of TestExpertsOnlyCheckpoints (BF16 1e12 FLOP/ms, FP4 4e12) a token's GEMMs
// cost 2 · 4,249,550,848 · (1/1e12 − 1/4e12) = 6.374326272e-3 ms more and a pass streams
// 6,108,729,344 / 1e12 ms more weights. At fp8 (DeepSeek's own checkpoint) nothing changes.
func TestBF16AttentionAtFP4(t *testing.T) {
	ds, err := LookupModel("deepseek-ai/DeepSeek-R1")
	if err != nil || !ds.BF16AttentionAtFP4 || ds.AttentionWeights(FP4) != BF16 || ds.AttentionWeights(FP8) != FP8 || ds.DenseWeights(FP4) != FP4 {
		t.Fatalf("DeepSeek-R1: BF16AttentionAtFP4 %v, err %v, attention at fp4 %s, at fp8 %s; want true, bf16, fp8", ds.BF16AttentionAtFP4, err, ds.AttentionWeights(FP4), ds.AttentionWeights(FP8))
	}
	if got := ds.attentionLinearParams(); got != 4249550848 {
		t.Errorf("BF16 attention parameters %v, want 4,249,550,848", got)
	}
	plain := ds
	plain.BF16AttentionAtFP4 = false
	if got := ds.WeightBytes(FP4) - plain.WeightBytes(FP4); got != 6108729344 {
		t.Errorf("fp4 weight bytes %v above the unmarked model's, want 6,108,729,344", got)
	}
	if ds.WeightBytes(FP8) != plain.WeightBytes(FP8) {
		t.Errorf("fp8 weight bytes %v, want the unmarked %v", ds.WeightBytes(FP8), plain.WeightBytes(FP8))
	}
	hw := Hardware{ID: "kilo-gpu", MemoryGiB: 1000, MemoryTBps: 1000, BF16TFLOPS: 1000, FP8TFLOPS: 2000, FP4TFLOPS: 4000, LinkGBps: 1e6}
	fp4 := Precisions{Weights: FP4, KVCache: FP8}
	s := Shape{Tensor: 1, Pipeline: 1}
	a, b := mustRoofline(t, ds, hw, fp4, s, ideal()), mustRoofline(t, plain, hw, fp4, s, ideal())
	if got := a.gemmMsPerToken - b.gemmMsPerToken; !near(got, 6.374326272e-3) {
		t.Errorf("GEMM per token %.10g ms above the unmarked model's, want 6.374326272e-3", got)
	}
	if got := a.weightMs - b.weightMs; !near(got, 6108729344/1e12) {
		t.Errorf("weight streaming %.10g ms above the unmarked model's, want %.10g", got, 6108729344/1e12)
	}
	fp8 := Precisions{Weights: FP8, KVCache: FP8}
	if a, b := mustRoofline(t, ds, hw, fp8, s, ideal()), mustRoofline(t, plain, hw, fp8, s, ideal()); a.gemmMsPerToken != b.gemmMsPerToken || a.weightMs != b.weightMs {
		t.Errorf("fp8: the mark changed the GEMM (%v, %v) or weight (%v, %v) times", a.gemmMsPerToken, b.gemmMsPerToken, a.weightMs, b.weightMs)
	}
}

// SGLangPrefill multiplies the time of a MoE pass that computes prompt tokens by the factor, overlap
// scheduling included, and leaves decode passes, workers with attention data parallelism, dense
// models and a factor of 1 alone; the original roofline is unchanged. Efficiency.Validate accepts 0 (none) and factors >= 1 only.
func TestSGLangPrefillScalesMoEPrefillPasses(t *testing.T) {
	bf16 := Precisions{Weights: BF16, KVCache: BF16}
	prefill := &Batch{PrefillRequests: 2, PrefillTokens: 512, PrefillAttentionPairs: 2 * 256 * 257 / 2, SampledTokens: 2}
	decode := &Batch{DecodeRequests: 4, DecodeSteps: 4, DecodeStepKVTokens: 400, SampledTokens: 4}
	e := ideal()
	e.PassOverheadMs, e.LayerOverheadUs = 0.5, 10
	hw := tinyGPU()
	hw.MemoryGiB = 80
	moe := mustRoofline(t, toyMoE, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, e)
	for _, r := range []*Roofline{moe, moe.Overlapped()} {
		s := r.SGLangPrefill(2.5)
		if got, want := s.PassMs(prefill), 2.5*r.PassMs(prefill); !near(got, want) || !(want > 0) {
			t.Errorf("prefill pass %v ms, want 2.5 × %v", got, r.PassMs(prefill))
		}
		if got, want := s.PassMs(decode), r.PassMs(decode); got != want {
			t.Errorf("decode pass %v ms, want %v unchanged", got, want)
		}
		if got, want := r.SGLangPrefill(1).PassMs(prefill), r.PassMs(prefill); got != want {
			t.Errorf("factor 1: prefill pass %v ms, want %v", got, want)
		}
	}
	if got, want := moe.PassMs(prefill), mustRoofline(t, toyMoE, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, e).PassMs(prefill); got != want {
		t.Errorf("SGLangPrefill changed the original: %v ms, want %v", got, want)
	}
	dp := mustRoofline(t, toyMoE, hw, bf16, Shape{Tensor: 1, Pipeline: 1, AttentionData: 2, MoEExpert: 2}, e)
	if got, want := dp.SGLangPrefill(2.5).PassMs(prefill), dp.PassMs(prefill); got != want {
		t.Errorf("attention data parallelism: prefill pass %v ms, want %v unchanged", got, want)
	}
	dense := mustRoofline(t, tinyModel(), tinyGPU(), bf16, Shape{Tensor: 1, Pipeline: 1}, e)
	if got, want := dense.SGLangPrefill(2.5).PassMs(prefill), dense.PassMs(prefill); got != want {
		t.Errorf("dense model: prefill pass %v ms, want %v unchanged", got, want)
	}
	for _, c := range []struct {
		v  float64
		ok bool
	}{{0, true}, {1, true}, {2.5, true}, {0.5, false}, {-1, false}, {math.Inf(1), false}, {math.NaN(), false}} {
		e := CalibratedEfficiency()
		e.SGLangMoEPrefillScale = c.v
		if err := e.Validate(); (err == nil) != c.ok {
			t.Errorf("SGLangMoEPrefillScale %v: Validate() = %v, want ok %v", c.v, err, c.ok)
		}
	}
}

// An all-reduce over GPUs of more than one link domain waits NetworkAllReduceLatencyUs instead
// of the link's LinkLatencyUs, unless the link's is the longer. NCCL's tree model gives 6.8 + 2 ·
// ((p − 1) · 0.6 + log2(n) · 5.0) µs for p GPUs a node over n nodes: 25.2 µs over two nodes of 8,
// 35.2 over four (and over six: log2 rounded down), 45.2 over eight, 18.0 over two domains of 2.
// toyMoE (4 layers, 1 dense) at TP4 MoE-TP4 on H100s split into domains of 2 runs 4 + 1
// attention and dense-MLP all-reduces (5 · 0.018 = 0.09 ms a pass) and 3 MoE ones (0.054 ms),
// the same without a network port in the catalog (its bytes then cross at the link's rate), and
// at the link's latency where that is the longer (30 µs: 0.15 and 0.09 ms). Llama-3.1-70B's 160
// all-reduces a pass take 160 · 25.2 µs = 4.032 ms at TP16 on H100 nodes of 8, 160 · 35.2 µs =
// 5.632 ms at TP32, and 160 · 4.8 µs = 0.768 ms at TP8 (the shipped LinkLatencyUs).
func TestNetworkAllReduceLatency(t *testing.T) {
	for _, c := range []struct {
		gpus, domain int
		want         float64
	}{{16, 8, 25.2}, {32, 8, 35.2}, {48, 8, 35.2}, {64, 8, 45.2}, {4, 2, 18.0}} {
		if got := NetworkAllReduceLatencyUs(c.gpus, c.domain); !near(got, c.want) {
			t.Errorf("NetworkAllReduceLatencyUs(%d, %d) = %.6g µs, want %.6g", c.gpus, c.domain, got, c.want)
		}
	}
	h100, _ := LookupHardware("h100_sxm")
	split := h100
	split.LinkDomainGPUs, split.NetworkGBps = 2, 50
	noPort := split
	noPort.NetworkGBps = 0
	slowLink := ideal()
	slowLink.LinkLatencyUs = 30
	prec := Precisions{Weights: BF16, KVCache: BF16}
	tep := Shape{Tensor: 4, Pipeline: 1, MoETensor: 4}
	for _, c := range []struct {
		name         string
		hw           Hardware
		eff          Efficiency
		attn, expert float64
	}{
		{"across domains", split, ideal(), 0.09, 0.054},
		{"no port", noPort, ideal(), 0.09, 0.054},
		{"slower link", split, slowLink, 0.15, 0.09},
	} {
		r := mustRoofline(t, toyMoE, c.hw, prec, tep, c.eff)
		if !near(r.allReduceMs, c.attn) || !near(r.moe.commMs, c.expert) {
			t.Errorf("%s: all-reduce latency %.6g ms and MoE %.6g ms a pass, want %.6g and %.6g", c.name, r.allReduceMs, r.moe.commMs, c.attn, c.expert)
		}
	}
	llama, err := LookupModel("meta-llama/Llama-3.1-70B")
	if err != nil {
		t.Fatal(err)
	}
	if llama.Layers != 80 || CalibratedEfficiency().LinkLatencyUs != 4.8 {
		t.Fatalf("Llama-3.1-70B layers %d, LinkLatencyUs %g: the expectations assume 80 and 4.8", llama.Layers, CalibratedEfficiency().LinkLatencyUs)
	}
	for _, c := range []struct {
		tp   int
		want float64
	}{{8, 0.768}, {16, 4.032}, {32, 5.632}} {
		r := mustRoofline(t, llama, h100, Precisions{Weights: FP8, KVCache: FP8}, Shape{Tensor: c.tp, Pipeline: 1}, CalibratedEfficiency())
		if !near(r.allReduceMs, c.want) {
			t.Errorf("Llama-3.1-70B TP%d on H100: all-reduce latency %.6g ms a pass, want %.6g", c.tp, r.allReduceMs, c.want)
		}
	}
}
