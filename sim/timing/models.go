package timing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ModelSpec is the public architecture of a decoder-only model, as in its Hugging Face
// config.json: dense, or with mixture-of-experts layers (MoE) and/or multi-head latent
// attention (MLA).
type ModelSpec struct {
	// ID is the canonical catalog id, or the directory a config.json was read from.
	ID string
	// Layers (num_hidden_layers), Hidden (hidden_size), Heads (num_attention_heads),
	// KVHeads (num_key_value_heads), HeadDim (head_dim, or hidden/heads), Intermediate
	// (intermediate_size of the SwiGLU MLP), Vocab (vocab_size).
	Layers, Hidden, Heads, KVHeads, HeadDim, Intermediate, Vocab int
	// MaxContext is max_position_embeddings in tokens.
	MaxContext int
	// Params is the total parameter count (embeddings, lm_head and norms included).
	Params float64
	// Precisions is what the id (or the checkpoint's quantization_config) implies; see
	// DefaultPrecisions. ResolveModel fills it for the id it was given.
	Precisions Precisions
	// MoE is the mixture-of-experts layout; nil for a dense model. Intermediate is then the
	// dense layers' MLP size (0 when every layer is an MoE layer).
	MoE *MoESpec
	// MLA is the latent attention layout; nil for multi-head or grouped-query attention.
	MLA *MLASpec
	// SlidingLayers counts the layers of sliding-window attention (config.json layer_types
	// "sliding_attention"), which attend to the last SlidingWindow tokens only. Their KV is kept
	// apart from the per-token cache (vLLM's hybrid KV cache manager, SGLang's sliding-window
	// pool, TensorRT-LLM's per-layer attention window): a request holds at most SlidingWindow
	// tokens of it, a constant left out of the per-token KV footprint.
	SlidingLayers, SlidingWindow int
	// LinearAttention is the Gated DeltaNet layout of a hybrid model (nil: every layer is
	// softmax attention). Its layers hold a fixed state per sequence
	// (StateBytesPerSequencePerGPU) and no per-token KV.
	LinearAttention *LinearAttentionSpec
	// AttentionOutputGate is config.json attn_output_gate: the full-attention layers' query
	// projection also produces a sigmoid gate per head (heads × head_dim more outputs).
	AttentionOutputGate bool
	// MTPLayers is config.json num_nextn_predict_layers (mtp_num_hidden_layers for Qwen3.5): the
	// multi-token-prediction modules
	// after the last layer (DeepSeek-V3 technical report §2.2), each one decoder layer (an MoE
	// layer in a model with experts) sharing the embedding and the lm_head. 0: the checkpoint
	// has none, and MTP speculative decoding cannot run.
	MTPLayers int
	// MXFP4Experts marks a checkpoint whose routed experts alone are MXFP4 and whose other
	// weights (attention, router, embeddings, lm_head) are BF16: gpt-oss (config.json
	// quantization_config, quant_method mxfp4, modules_to_not_convert; TensorRT-LLM's gpt-oss
	// README: "MoE weights quantized with mxfp4. All the other weights are in bf16"). With
	// Precisions.Weights fp4 (the checkpoint as published) the non-expert GEMMs are priced and
	// stored as BF16 (DenseWeights) and the experts multiply at ExpertMathFormat's rate.
	MXFP4Experts bool
	// FP4ExpertsOnly marks a model whose 4-bit checkpoint quantizes the routed experts alone
	// (W4A4 NVFP4 experts), its other GEMM weights staying BF16: MiniMax-M2.5 (NVIDIA's
	// MiniMax-M2.5-NVFP4, ModelOpt's experts-only NVFP4 recipe: gate/up and down projections of
	// the experts quantized; attention, router, embeddings and lm_head BF16, as the model cards of
	// reproductions of it state). With Precisions.Weights fp4 its non-expert GEMMs are priced and
	// stored as BF16 (DenseWeights); its experts run at FP4's rate.
	FP4ExpertsOnly bool
	// BF16AttentionAtFP4 marks a model whose 4-bit checkpoint quantizes every MLP to NVFP4 (the
	// routed and shared experts and the dense layers' MLPs) and keeps the attention projections
	// BF16: NVIDIA's DeepSeek-R1 and -V3 NVFP4 checkpoints, made by ModelOpt's DeepSeek recipe,
	// whose post-training quantization disables the quantizers of every attention module unless
	// asked for FP8 MLA (examples/deepseek/ptq.py in NVIDIA/TensorRT-Model-Optimizer: quant_cfg
	// "*attn*" enable False), and which SGLang's SGLANG_NVFP4_CKPT_FP8_GEMM_IN_ATTN reads as BF16
	// ("quantize q_b_proj from BF16 to FP8 when launching a DeepSeek NVFP4 checkpoint"). With
	// Precisions.Weights fp4 the attention GEMMs are priced and stored as BF16
	// (AttentionWeights); the other GEMMs as FP4.
	BF16AttentionAtFP4 bool
}

// DenseWeights is the format of the GEMM weights outside the routed experts when the GEMM
// weights are stored as w: BF16 at w = fp4 for a checkpoint that quantizes its experts alone
// (MXFP4Experts, FP4ExpertsOnly), else w.
func (m ModelSpec) DenseWeights(w Precision) Precision {
	if (m.MXFP4Experts || m.FP4ExpertsOnly) && w == FP4 {
		return BF16
	}
	return w
}

// AttentionWeights is the format of the attention projections' weights when the GEMM weights
// are stored as w: BF16 at w = fp4 for a checkpoint that keeps them BF16 (BF16AttentionAtFP4),
// else DenseWeights(w).
func (m ModelSpec) AttentionWeights(w Precision) Precision {
	if m.BF16AttentionAtFP4 && w == FP4 {
		return BF16
	}
	return m.DenseWeights(w)
}

// attentionLinearParams is the parameter count, over all full-attention layers, of the
// attention projections AttentionWeights prices: every projection but the output one (o_proj,
// heads·v_head_dim × hidden), which NVIDIA's v2 NVFP4 DeepSeek checkpoints quantize with the
// MLPs ("Compared to nvidia/DeepSeek-R1-0528-FP4, this checkpoint additionally quantizes the wo
// module in attention layers", the model card of nvidia/DeepSeek-R1-0528-FP4-v2, the checkpoint
// InferenceX serves).
func (m ModelSpec) attentionLinearParams() float64 {
	v := m.HeadDim
	if a := m.MLA; a != nil {
		v = a.VHeadDim
	}
	return float64(m.Layers-m.linearLayers()) * (m.attentionParams() - float64(m.Heads)*float64(v)*float64(m.Hidden))
}

// ExpertMathFormat is the format whose tensor-core peak the routed experts' GEMMs run at with
// weights stored as w on GPU hw. An MXFP4Experts checkpoint served as published multiplies its
// MXFP4 experts with MXFP8 activations on GPUs with FP4 tensor cores (FP8's rate: TensorRT-LLM's
// gpt-oss support matrix, Blackwell: activation mxfp8, weight mxfp4, backends TRTLLM and
// CUTLASS; vLLM with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8, as InferenceX's gpt-oss B200 script
// sets it) and with BF16 activations elsewhere (BF16's rate: TensorRT-LLM's Hopper row, Triton
// backend; vLLM's Marlin kernels, VLLM_MXFP4_USE_MARLIN in InferenceX's H100 script). Otherwise
// w (Hardware.PeakTFLOPS falls back where the GPU lacks the format).
func (m ModelSpec) ExpertMathFormat(w Precision, hw Hardware) Precision {
	if m.MXFP4Experts && w == FP4 {
		if hw.FP4TensorCores() {
			return FP8
		}
		return BF16
	}
	return w
}

// linearLayers is the number of linear-attention layers (0 without).
func (m ModelSpec) linearLayers() int {
	if m.LinearAttention == nil {
		return 0
	}
	return m.LinearAttention.Layers
}

// kvLayers is the number of layers whose KV the per-token cache holds: every layer but the
// sliding-window and linear-attention ones.
func (m ModelSpec) kvLayers() int { return m.Layers - m.SlidingLayers - m.linearLayers() }

// LinearParams is the parameter count of the transformer blocks' GEMMs (the part a quantized
// checkpoint stores in FP8/FP4): per layer q (hidden × heads·head_dim), k and v (hidden ×
// kv_heads·head_dim each), o (heads·head_dim × hidden) and the SwiGLU MLP (3 × hidden ×
// intermediate). With MLA the attention projections are MLA's (attentionParams), with an
// attention output gate q is twice as wide, and linear-attention layers have their own
// projections (LinearAttentionSpec) instead of q, k, v and o; an MoE layer
// has, instead of the dense MLP, its routed experts (Experts × 3 × hidden × ExpertIntermediate),
// its shared experts (3 × hidden × SharedIntermediate) and the router (hidden × Experts).
func (m ModelSpec) LinearParams() float64 {
	if m.MoE == nil && m.MLA == nil && m.LinearAttention == nil && !m.AttentionOutputGate {
		h, q, kv, i := float64(m.Hidden), float64(m.Heads*m.HeadDim), float64(m.KVHeads*m.HeadDim), float64(m.Intermediate)
		return float64(m.Layers) * (h*q + 2*h*kv + q*h + 3*h*i)
	}
	moe := m.MoELayers()
	p := float64(m.Layers-m.linearLayers())*m.attentionParams() + float64(m.Layers-moe)*m.swiGLUParams(m.Intermediate)
	if a := m.LinearAttention; a != nil {
		p += float64(a.Layers) * a.params(m.Hidden)
	}
	if e := m.MoE; e != nil {
		p += m.ExpertParams() + float64(moe)*(m.swiGLUParams(e.SharedIntermediate)+float64(m.Hidden)*float64(e.Experts))
	}
	return p
}

// HeadParams is the lm_head's parameter count, hidden × vocab (kept in BF16 by FP8 and NVFP4
// checkpoints).
func (m ModelSpec) HeadParams() float64 { return float64(m.Hidden) * float64(m.Vocab) }

// WeightBytes is the memory the weights take in bytes when the GEMM weights are stored as p (the
// ones outside the routed experts as DenseWeights(p), the attention projections a checkpoint
// keeps apart as AttentionWeights(p)) and everything else (embeddings, lm_head, norms: Params −
// LinearParams) in BF16.
func (m ModelSpec) WeightBytes(p Precision) float64 {
	lin, experts := m.LinearParams(), m.ExpertParams()
	dense := (lin - experts) * m.DenseWeights(p).WeightBytes()
	if a := m.AttentionWeights(p); a != m.DenseWeights(p) {
		attn := m.attentionLinearParams()
		dense = (lin-experts-attn)*m.DenseWeights(p).WeightBytes() + attn*a.WeightBytes()
	}
	return dense + experts*p.WeightBytes() + max(m.Params-lin, 0)*2
}

// KVBytesPerToken is the BF16 KV cache size of one token over all layers before tensor-parallel
// sharding: layers × 2 (K and V) × KV heads × head dim × 2 bytes (engine-internals.md §2.3).
func (m ModelSpec) KVBytesPerToken() int64 { return m.KVBytesPerTokenAs(BF16) }

// KVBytesPerTokenAs is KVBytesPerToken for a KV cache stored as p:
// layers × 2 × KV heads × head dim × p.KVBytes(), or with MLA layers × (kv_lora_rank +
// qk_rope_head_dim) × p.KVBytes() (the latent and the shared rotary key; DeepSeek-V2 paper §2.1).
func (m ModelSpec) KVBytesPerTokenAs(p Precision) int64 {
	if a := m.MLA; a != nil {
		return int64(m.kvLayers()) * int64(a.KVLoraRank+a.QKRopeHeadDim) * p.KVBytes()
	}
	return int64(m.kvLayers()) * 2 * int64(m.KVHeads) * int64(m.HeadDim) * p.KVBytes()
}

// KVBytesPerTokenPerGPU is the KV cache one GPU of a tensor × pipeline group holds per token:
// its pipeline stage's ceil(layers / pipeline) layers × 2 × its ceil(KV heads / tensor) KV
// heads (KV heads are replicated when tensor > KV heads, as vLLM does) × head dim × element
// bytes.
// With MLA every GPU of the tensor group holds the whole latent of its stage's layers (the
// latent is not split by heads).
func (m ModelSpec) KVBytesPerTokenPerGPU(p Precision, tensor, pipeline int) int64 {
	tensor, pipeline = max(tensor, 1), max(pipeline, 1)
	layers := (m.kvLayers() + pipeline - 1) / pipeline
	if a := m.MLA; a != nil {
		return int64(layers) * int64(a.KVLoraRank+a.QKRopeHeadDim) * p.KVBytes()
	}
	heads := (m.KVHeads + tensor - 1) / tensor
	return int64(layers) * 2 * int64(heads) * int64(m.HeadDim) * p.KVBytes()
}

// catalogEntry is a built-in model with the other names it goes by (folded by modelKey) and,
// when its own checkpoint is not BF16, the precisions an id without a quantization suffix means.
type catalogEntry struct {
	spec    ModelSpec
	aliases []string
	native  *Precisions
}

// moeEntry is a catalog entry of an MoE model whose Params are counted from its architecture
// (architectureParams); the model cards' totals are in the comments of modelCatalog and
// TestMoECatalogParams checks them.
func moeEntry(m ModelSpec, native *Precisions, aliases ...string) catalogEntry {
	m.Params = m.architectureParams(false)
	return catalogEntry{spec: m, aliases: aliases, native: native}
}

// architectureParams counts the parameters from the architecture: embeddings (vocab × hidden),
// lm_head (the same, unless tied), LinearParams, and two RMSNorm vectors per layer plus the final
// norm.
func (m ModelSpec) architectureParams(tied bool) float64 {
	embed := float64(m.Vocab) * float64(m.Hidden)
	p := embed + m.LinearParams() + float64(2*m.Layers+1)*float64(m.Hidden)
	if !tied {
		p += embed
	}
	return p
}

// modelCatalog returns the built-in models; figures from each model's published config.json
// (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size, max_position_embeddings) and the parameter count on its model
// card.
func modelCatalog() []catalogEntry {
	return []catalogEntry{
		{ModelSpec{ID: "meta-llama/Llama-3.1-8B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 128256, MaxContext: 131072, Params: 8.03e9}, nil, nil},
		{ModelSpec{ID: "meta-llama/Llama-3.1-70B", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, MaxContext: 131072, Params: 70.6e9}, nil, nil},
		{ModelSpec{ID: "meta-llama/Llama-3.1-405B", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128, Intermediate: 53248, Vocab: 128256, MaxContext: 131072, Params: 405.9e9}, nil, nil},
		{ModelSpec{ID: "meta-llama/Llama-3.3-70B-Instruct", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, MaxContext: 131072, Params: 70.6e9}, nil, nil},
		{ModelSpec{ID: "Qwen/Qwen3-8B", Layers: 36, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 12288, Vocab: 151936, MaxContext: 40960, Params: 8.19e9}, nil, nil},
		{ModelSpec{ID: "Qwen/Qwen3-14B", Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 17408, Vocab: 151936, MaxContext: 40960, Params: 14.8e9}, nil, nil},
		{ModelSpec{ID: "Qwen/Qwen3-32B", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 25600, Vocab: 151936, MaxContext: 40960, Params: 32.8e9}, nil, nil},
		{ModelSpec{ID: "mistralai/Mistral-7B-Instruct-v0.3", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 32768, MaxContext: 32768, Params: 7.25e9},
			[]string{"mistralai/Mistral-7B"}, nil},

		// Mixture-of-experts models, from each config.json (n_routed_experts / num_experts /
		// num_local_experts, num_experts_per_tok, moe_intermediate_size, n_shared_experts or
		// shared_expert_intermediate_size, first_k_dense_replace; MLA: q_lora_rank, kv_lora_rank,
		// qk_nope_head_dim, qk_rope_head_dim, v_head_dim; num_nextn_predict_layers, Qwen3.5's
		// mtp_num_hidden_layers: DeepSeek-V3/R1, GLM-5 and Qwen3.5 ship one MTP module). HeadDim of an
		// MLA model is its query/key head size (nope + rope). Card totals: DeepSeek-V3/R1 671B (37B active), Kimi-K2.5 1T
		// (32B), GLM-5 744B (40B), Qwen3-235B-A22B 235B (22B), Qwen3-30B-A3B 30.5B (3.3B),
		// gpt-oss-120b 117B (5.1B), gpt-oss-20b 21B (3.6B), Mixtral-8x7B 46.7B (12.9B),
		// MiniMax-M2 230B (10B; M2.5 has the same architecture), Qwen3.5-397B-A17B 397B (17B).
		moeEntry(ModelSpec{ID: "deepseek-ai/DeepSeek-V3", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, Intermediate: 18432, Vocab: 129280, MaxContext: 163840,
			MoE: &MoESpec{Experts: 256, TopK: 8, ExpertIntermediate: 2048, SharedIntermediate: 2048, DenseLayers: 3},
			MLA: &MLASpec{QLoraRank: 1536, KVLoraRank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128}, MTPLayers: 1,
			BF16AttentionAtFP4: true},
			&Precisions{Weights: FP8, KVCache: BF16}, "deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3-Base"),
		moeEntry(ModelSpec{ID: "deepseek-ai/DeepSeek-R1", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192, Intermediate: 18432, Vocab: 129280, MaxContext: 163840,
			MoE: &MoESpec{Experts: 256, TopK: 8, ExpertIntermediate: 2048, SharedIntermediate: 2048, DenseLayers: 3},
			MLA: &MLASpec{QLoraRank: 1536, KVLoraRank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128}, MTPLayers: 1,
			BF16AttentionAtFP4: true},
			&Precisions{Weights: FP8, KVCache: BF16}, "deepseek-ai/DeepSeek-R1-0528"),
		moeEntry(ModelSpec{ID: "moonshotai/Kimi-K2.5", Layers: 61, Hidden: 7168, Heads: 64, KVHeads: 64, HeadDim: 192, Intermediate: 18432, Vocab: 163840, MaxContext: 262144,
			MoE: &MoESpec{Experts: 384, TopK: 8, ExpertIntermediate: 2048, SharedIntermediate: 2048, DenseLayers: 1},
			MLA: &MLASpec{QLoraRank: 1536, KVLoraRank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128}},
			// The checkpoint's routed experts are INT4 (groups of 32), the rest BF16: fp4 bytes.
			&Precisions{Weights: FP4, KVCache: BF16}),
		moeEntry(ModelSpec{ID: "zai-org/GLM-5", Layers: 78, Hidden: 6144, Heads: 64, KVHeads: 64, HeadDim: 256, Intermediate: 12288, Vocab: 154880, MaxContext: 202752,
			MoE: &MoESpec{Experts: 256, TopK: 8, ExpertIntermediate: 2048, SharedIntermediate: 2048, DenseLayers: 3},
			MLA: &MLASpec{QLoraRank: 2048, KVLoraRank: 512, QKNopeHeadDim: 192, QKRopeHeadDim: 64, VHeadDim: 256}, MTPLayers: 1},
			nil, "zhipuai/GLM-5"),
		moeEntry(ModelSpec{ID: "Qwen/Qwen3-235B-A22B", Layers: 94, Hidden: 4096, Heads: 64, KVHeads: 4, HeadDim: 128, Vocab: 151936, MaxContext: 40960,
			MoE: &MoESpec{Experts: 128, TopK: 8, ExpertIntermediate: 1536}}, nil),
		moeEntry(ModelSpec{ID: "Qwen/Qwen3-30B-A3B", Layers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, Vocab: 151936, MaxContext: 40960,
			MoE: &MoESpec{Experts: 128, TopK: 8, ExpertIntermediate: 768}}, nil),
		// gpt-oss alternates 128-token sliding-window and full attention layers (config.json
		// layer_types, sliding_window 128): half its layers keep only a window of KV. Its experts
		// alone are MXFP4 in the checkpoint (MXFP4Experts).
		moeEntry(ModelSpec{ID: "openai/gpt-oss-120b", Layers: 36, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, Vocab: 201088, MaxContext: 131072,
			MoE: &MoESpec{Experts: 128, TopK: 4, ExpertIntermediate: 2880}, SlidingLayers: 18, SlidingWindow: 128, MXFP4Experts: true}, &Precisions{Weights: FP4, KVCache: BF16}),
		moeEntry(ModelSpec{ID: "openai/gpt-oss-20b", Layers: 24, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, Vocab: 201088, MaxContext: 131072,
			MoE: &MoESpec{Experts: 32, TopK: 4, ExpertIntermediate: 2880}, SlidingLayers: 12, SlidingWindow: 128, MXFP4Experts: true}, &Precisions{Weights: FP4, KVCache: BF16}),
		moeEntry(ModelSpec{ID: "mistralai/Mixtral-8x7B-v0.1", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 32000, MaxContext: 32768,
			MoE: &MoESpec{Experts: 8, TopK: 2, ExpertIntermediate: 14336}}, nil, "mistralai/Mixtral-8x7B-Instruct-v0.1"),
		// Qwen3.5-397B-A17B (card: 397B total, 17B active): a hybrid of 45 Gated DeltaNet
		// linear-attention layers and 15 gated full-attention layers (every 4th,
		// full_attention_interval 4), every layer an MoE layer of 512 experts, top-10, plus one
		// shared expert of 1,024. From https://huggingface.co/Qwen/Qwen3.5-397B-A17B
		// (config.json text_config: hidden_size 4096, num_hidden_layers 60, num_attention_heads
		// 32, num_key_value_heads 2, head_dim 256, attn_output_gate true, linear_num_key_heads 16,
		// linear_num_value_heads 64, linear_key_head_dim 128, linear_value_head_dim 128,
		// linear_conv_kernel_dim 4, num_experts 512, num_experts_per_tok 10,
		// moe_intermediate_size 1024, shared_expert_intermediate_size 1024, vocab_size 248320,
		// max_position_embeddings 262144, tie_word_embeddings false; the model card's "Hidden
		// Layout: 15 × (3 × (Gated DeltaNet → MoE) → 1 × (Gated Attention → MoE))"). The
		// checkpoint is BF16; the vision encoder is left out.
		moeEntry(ModelSpec{ID: "Qwen/Qwen3.5-397B-A17B", Layers: 60, Hidden: 4096, Heads: 32, KVHeads: 2, HeadDim: 256, Vocab: 248320, MaxContext: 262144,
			MoE:                 &MoESpec{Experts: 512, TopK: 10, ExpertIntermediate: 1024, SharedIntermediate: 1024},
			LinearAttention:     &LinearAttentionSpec{Layers: 45, KeyHeads: 16, ValueHeads: 64, KeyHeadDim: 128, ValueHeadDim: 128, ConvKernel: 4},
			AttentionOutputGate: true, MTPLayers: 1}, nil),
		// MiniMax-M2.5's FP8 checkpoint is its own; its FP4 one, NVIDIA's, quantizes the experts
		// alone (FP4ExpertsOnly).
		moeEntry(ModelSpec{ID: "MiniMaxAI/MiniMax-M2.5", Layers: 62, Hidden: 3072, Heads: 48, KVHeads: 8, HeadDim: 128, Vocab: 200064, MaxContext: 196608,
			MoE: &MoESpec{Experts: 256, TopK: 8, ExpertIntermediate: 1536}, FP4ExpertsOnly: true}, &Precisions{Weights: FP8, KVCache: BF16}, "MiniMaxAI/MiniMax-M2"),
	}
}

// unsupportedModels are known models whose architecture servesweep does not model yet, by
// modelKey, with the reason.
var unsupportedModels = map[string]string{
	"qwen3-next-80b-a3b": "not in the catalog (hybrid linear attention); give a local directory holding its config.json",
}

// modelKey folds the spellings of one model to one key: organisation dropped, lower case,
// "meta-" prefix and one "-instruct" removed, a quantized checkpoint's revision after its format
// removed (trimCheckpointRevision: nvidia/DeepSeek-R1-0528-FP4-v2), one quantization suffix
// ("-fp8", "-fp8-dynamic", "-nvfp4", "-fp4") removed, so meta-llama/Meta-Llama-3.1-8B-Instruct and
// nvidia/Llama-3.1-8B-Instruct-FP8 both name llama-3.1-8b. Each is removed once: a name that
// repeats one (Llama-3.1-8B-Instruct-Instruct) or stacks two formats (DeepSeek-R1-NVFP4-FP8)
// is a typo no published checkpoint carries, and keeps a key no model has.
func modelKey(id string) string {
	k := strings.ToLower(strings.TrimSpace(id))
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	k = strings.TrimPrefix(k, "meta-")
	k = strings.Replace(k, "-instruct", "", 1)
	k = trimCheckpointRevision(k)
	for _, suf := range formatSuffixes {
		if t, ok := strings.CutSuffix(k, suf); ok {
			k = t
			break
		}
	}
	return k
}

// LookupModel finds a built-in model by any of its common ids (see modelKey) and sets its
// Precisions from id (DefaultPrecisions). The error lists the known models.
func LookupModel(id string) (ModelSpec, error) {
	if msg := ModelIDProblem(id); msg != "" {
		return ModelSpec{}, errors.New(msg)
	}
	key := modelKey(id)
	for _, e := range modelCatalog() {
		match := modelKey(e.spec.ID) == key
		for _, a := range e.aliases {
			match = match || modelKey(a) == key
		}
		if match {
			m := e.spec
			m.Precisions = DefaultPrecisions(id)
			if e.native != nil && m.Precisions == (Precisions{Weights: BF16, KVCache: BF16}) {
				m.Precisions = *e.native
			}
			return m, nil
		}
	}
	if why, ok := unsupportedModels[key]; ok {
		return ModelSpec{}, fmt.Errorf("model %q is not modeled yet: %s; known models: %s", id, why, strings.Join(ModelIDs(), ", "))
	}
	if st, err := os.Stat(id); err == nil && !st.IsDir() {
		return ModelSpec{}, fmt.Errorf("model %q is a file; give a model directory holding a Hugging Face config.json, or a known model: %s", id, strings.Join(ModelIDs(), ", "))
	}
	return ModelSpec{}, fmt.Errorf("unknown model %q; known models: %s (or a local directory holding a Hugging Face config.json)",
		id, strings.Join(ModelIDs(), ", "))
}

// modelPathPrefixes mark a model id written as a file path: absolute, relative to the current
// folder or its parent, or under a home folder (~, which servesweep does not expand).
var modelPathPrefixes = []string{"/", "./", "../", "~", `.\`, `..\`}

// IsModelPath reports whether id is written as a file path (modelPathPrefixes, an absolute path
// of the platform, . or ..) rather than a model id: it names a model directory, never a catalog
// model by the name after its last '/'.
func IsModelPath(id string) bool {
	if id == "." || id == ".." || filepath.IsAbs(id) {
		return true
	}
	return slices.ContainsFunc(modelPathPrefixes, func(p string) bool { return strings.HasPrefix(id, p) })
}

// ModelIDProblem says what is wrong with a model id before any lookup, for a caller to prefix
// with the file and the field path, or "" when nothing is: leading or trailing spaces (a lookup
// would trim them, but launch files and messages would copy them), or a path (IsModelPath) that
// names no directory, which would otherwise be read as the catalog model its last element names,
// or an id ending in '/' that names no directory (meta-llama/Llama-3.1-8B/: a hub id has none).
func ModelIDProblem(id string) string {
	if t := strings.TrimSpace(id); t != id {
		return fmt.Sprintf("%q has leading or trailing spaces; remove them: %q", id, t)
	}
	_, statErr := os.Stat(id)
	if !IsModelPath(id) {
		if t := strings.TrimRight(id, "/"); t != id && statErr != nil {
			return fmt.Sprintf("%q ends in '/' but no such directory exists; a model id has no trailing '/': write %q, "+
				"or give a directory holding a Hugging Face config.json", id, t)
		}
		return ""
	}
	if statErr == nil {
		return ""
	}
	home := ""
	if strings.HasPrefix(id, "~") {
		home = " (servesweep does not expand ~: write the full path)"
	}
	catalog := "its catalog id"
	if base := filepath.Base(id); !IsModelPath(base) {
		if _, err := LookupModel(base); err == nil {
			c, _ := CanonicalModelID(base)
			catalog = c
		}
	}
	return fmt.Sprintf("%q is a path, but no such directory exists%s; give a directory holding a Hugging Face config.json, "+
		"or for a catalog model write %s", id, home, catalog)
}

// quantizerOrganizations publish quantized checkpoints of other organizations' models under the
// model's name with a weight-format suffix: NVIDIA's ModelOpt FP8 and NVFP4 checkpoints
// (nvidia/Llama-3.1-8B-Instruct-FP8, nvidia/Qwen3-32B-NVFP4) and Red Hat's, formerly Neural
// Magic's, FP8 and FP8-dynamic ones. UnknownOrganization accepts them for a suffixed id only.
var quantizerOrganizations = []string{"nvidia", "RedHatAI", "neuralmagic"}

// formatSuffixes are the weight-format suffixes modelKey drops, longest first.
var formatSuffixes = []string{"-fp8-dynamic", "-fp8", "-nvfp4", "-fp4"}

// trimCheckpointRevision drops a revision tag "-v" and digits from the end of the lower-case
// model name k when what precedes it ends in a weight-format suffix: NVIDIA republishes a
// quantized checkpoint under the same name with "-v2" (nvidia/DeepSeek-R1-0528-FP4-v2, the one
// InferenceX serves; ModelSpec.BF16AttentionAtFP4 prices that revision). A revision after no
// format suffix is left, so it keeps a key no model has.
func trimCheckpointRevision(k string) string {
	i := strings.LastIndex(k, "-v")
	if i < 0 || i+2 == len(k) || strings.Trim(k[i+2:], "0123456789") != "" {
		return k
	}
	for _, suf := range formatSuffixes {
		if strings.HasSuffix(k[:i], suf) {
			return k[:i]
		}
	}
	return k
}

// hasFormatSuffix reports whether the model name (organization dropped) ends in a weight-format
// suffix, in any case, before a checkpoint revision if it has one (trimCheckpointRevision).
func hasFormatSuffix(name string) bool {
	k := trimCheckpointRevision(strings.ToLower(strings.TrimSpace(name)))
	for _, suf := range formatSuffixes {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// UnknownOrganization reports an id that the catalog reads as one of its models although the
// organization it names (the text before the last '/') is not one the catalog knows for that
// model, e.g. wrongorg/Llama-3.1-8B, which LookupModel reads as meta-llama/Llama-3.1-8B since it
// matches by the name after the organization. Known are the organizations of the model's
// catalog id and of its aliases (own), and quantizerOrganizations for an id with a weight-format
// suffix. It returns the id's organization, the catalog id the id was read as and own; org is ""
// when there is nothing to report: an id without an organization, any case of a known one, an
// existing directory (its config.json names the model), or a name the catalog does not know
// (LookupModel reports it).
func UnknownOrganization(id string) (org, catalogID string, own []string) {
	i := strings.LastIndexByte(id, '/')
	if i < 0 {
		return "", "", nil
	}
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return "", "", nil
	}
	org = strings.TrimSpace(id[:i])
	key := modelKey(id)
	for _, e := range modelCatalog() {
		names := append([]string{e.spec.ID}, e.aliases...)
		if !slices.ContainsFunc(names, func(n string) bool { return modelKey(n) == key }) {
			continue
		}
		for _, n := range names {
			if o, _, ok := strings.Cut(n, "/"); ok && !slices.Contains(own, o) {
				own = append(own, o)
			}
		}
		known := own
		if hasFormatSuffix(id[i+1:]) {
			known = append(slices.Clone(own), quantizerOrganizations...)
		}
		if org == "" || slices.ContainsFunc(known, func(o string) bool { return strings.EqualFold(o, org) }) {
			return "", "", nil
		}
		return org, e.spec.ID, own
	}
	return "", "", nil
}

// OrganizationNote is the note on an id UnknownOrganization reports, for a caller to prefix
// with the file and the field path, or "" when it reports none: what the id was read as (with the
// weight and KV-cache formats its name implies when they are not the catalog id's own), the
// organizations the catalog knows for that model, and the spellings to write instead, each of
// which reads as the same model and precisions as id (CanonicalModelID, and the name without
// its organization).
func OrganizationNote(id string) string {
	org, catalogID, own := UnknownOrganization(id)
	if org == "" {
		return ""
	}
	name := strings.TrimSpace(id[strings.LastIndexByte(id, '/')+1:])
	readAs, write := catalogID, []string{name}
	if m, err := LookupModel(id); err == nil {
		if c, _ := CanonicalModelID(id); c != id {
			write = []string{c, name}
		}
		if base, _ := LookupModel(catalogID); base.Precisions != m.Precisions {
			readAs = fmt.Sprintf("%s with %s weights and a %s KV cache", catalogID, m.Precisions.Weights, m.Precisions.KVCache)
		}
	}
	return fmt.Sprintf("%q is read as %s, but the catalog knows that model under %s (a quantized checkpoint whose name ends "+
		"in a weight-format suffix such as -FP8 also under %s), not %s; write %s (servesweep list models prints the "+
		"spellings), or give a local directory holding the checkpoint's config.json if it is another model",
		id, readAs, strings.Join(own, " or "), strings.Join(quantizerOrganizations, ", "), org, strings.Join(write, " or "))
}

// ResolveModelID returns the catalog id that id resolves to when id is one of a catalog entry's
// declared aliases (another name, such as "mistralai/Mistral-7B" for
// "mistralai/Mistral-7B-Instruct-v0.3", compared as modelKey folds them), with wasAlias true.
// Any other id comes back unchanged with wasAlias false: a catalog id or one of its spellings
// (the checkpoint name is kept, as it also implies the precision), an alias spelled with a
// weight format (e.g. nvidia/DeepSeek-R1-0528-NVFP4: a checkpoint of its own, whose name says
// its format), an existing model directory, or a name the catalog does not know (LookupModel
// reports it). Entries are tried in catalog order, as LookupModel does.
func ResolveModelID(id string) (resolved string, wasAlias bool) {
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return id, false
	}
	key := modelKey(id)
	for _, e := range modelCatalog() {
		if modelKey(e.spec.ID) == key {
			return id, false
		}
		for _, a := range e.aliases {
			if modelKey(a) == key {
				if DefaultPrecisions(id).Weights != BF16 {
					return id, false
				}
				return e.spec.ID, true
			}
		}
	}
	return id, false
}

// CanonicalModelID returns one name for every spelling of a catalog model that reads as the same
// architecture and precisions (LookupModel), so that configs naming it differently simulate as
// one: the catalog id when id reads as the catalog id itself does (Llama-3.1-8B,
// meta-llama/Meta-Llama-3.1-8B-Instruct and the alias mistralai/Mistral-7B read as their catalog
// ids), else the catalog id with the weight-format suffix that reads as id does
// (nvidia/Llama-3.1-8B-Instruct-FP8 is meta-llama/Llama-3.1-8B-FP8). changed reports whether the
// result differs from id. A directory, a name the catalog does not know, and an id no candidate
// reads as come back unchanged. The result of a result is itself.
func CanonicalModelID(id string) (canonical string, changed bool) {
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return id, false
	}
	m, err := LookupModel(id)
	if err != nil {
		return id, false
	}
	for _, c := range []string{m.ID, m.ID + "-FP8", m.ID + "-FP4"} {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			break // a directory of that name is another model to ResolveModel
		}
		if cm, err := LookupModel(c); err == nil && cm.ID == m.ID && cm.Precisions == m.Precisions {
			return c, c != id
		}
	}
	return id, false
}

// ModelIDs lists the catalog's canonical model ids, sorted.
func ModelIDs() []string {
	cat := modelCatalog()
	ids := make([]string, len(cat))
	for i, e := range cat {
		ids[i] = e.spec.ID
	}
	sort.Strings(ids)
	return ids
}

// ResolveModel returns the model engine.model names: when id is an existing directory, the
// architecture in its config.json (LoadModelDir); otherwise the catalog entry (LookupModel).
func ResolveModel(id string) (ModelSpec, error) {
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return LoadModelDir(id)
	}
	return LookupModel(id)
}

// hfConfig is the subset of a Hugging Face config.json servesweep reads.
type hfConfig struct {
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	HiddenSize            *int            `json:"hidden_size"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	IntermediateSize      *int            `json:"intermediate_size"`
	VocabSize             *int            `json:"vocab_size"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`
	NumExperts            int             `json:"num_experts"`
	NumLocalExperts       int             `json:"num_local_experts"`
	NRoutedExperts        int             `json:"n_routed_experts"`
	NumExpertsPerTok      int             `json:"num_experts_per_tok"`
	MoEIntermediateSize   int             `json:"moe_intermediate_size"`
	NSharedExperts        int             `json:"n_shared_experts"`
	SharedExpertInterm    int             `json:"shared_expert_intermediate_size"`
	FirstKDenseReplace    int             `json:"first_k_dense_replace"`
	NumNextNPredictLayers int             `json:"num_nextn_predict_layers"`
	MTPNumHiddenLayers    int             `json:"mtp_num_hidden_layers"`
	QLoraRank             *int            `json:"q_lora_rank"`
	KVLoraRank            *int            `json:"kv_lora_rank"`
	QKNopeHeadDim         int             `json:"qk_nope_head_dim"`
	QKRopeHeadDim         int             `json:"qk_rope_head_dim"`
	VHeadDim              int             `json:"v_head_dim"`
	LayerTypes            []string        `json:"layer_types"`
	SlidingWindow         *int            `json:"sliding_window"`
	InterleaveMoEStep     int             `json:"interleave_moe_layer_step"`
	DecoderSparseStep     int             `json:"decoder_sparse_step"`
	MLPOnlyLayers         []int           `json:"mlp_only_layers"`
	AttnOutputGate        bool            `json:"attn_output_gate"`
	FullAttentionInterval int             `json:"full_attention_interval"`
	LinearNumKeyHeads     int             `json:"linear_num_key_heads"`
	LinearNumValueHeads   int             `json:"linear_num_value_heads"`
	LinearKeyHeadDim      int             `json:"linear_key_head_dim"`
	LinearValueHeadDim    int             `json:"linear_value_head_dim"`
	LinearConvKernelDim   int             `json:"linear_conv_kernel_dim"`
	TextConfig            *hfConfig       `json:"text_config"`
	QuantizationConfig    json.RawMessage `json:"quantization_config"`
}

// hfQuant is the subset of a quantization_config servesweep reads.
type hfQuant struct {
	QuantMethod      string          `json:"quant_method"`
	QuantAlgo        string          `json:"quant_algo"`
	KVCacheQuantAlgo string          `json:"kv_cache_quant_algo"`
	KVCacheScheme    json.RawMessage `json:"kv_cache_scheme"`
	ConfigGroups     map[string]struct {
		Weights *struct {
			NumBits int    `json:"num_bits"`
			Type    string `json:"type"`
		} `json:"weights"`
	} `json:"config_groups"`
}

// LoadModelDir reads dir/config.json (a Hugging Face model directory) into a ModelSpec. A
// multimodal config's text_config is used when present. Params is computed from the
// architecture: embeddings (vocab × hidden), lm_head (the same, unless tie_word_embeddings),
// LinearParams and two RMSNorm vectors per layer plus the final norm. Precisions come from
// quantization_config: quant_method fp8 → FP8 weights; modelopt quant_algo FP8/NVFP4 → FP8/FP4
// weights, kv_cache_quant_algo FP8 → FP8 KV; compressed-tensors 8-bit / 4-bit float weights →
// FP8/FP4, a kv_cache_scheme → FP8 KV; no quantization_config → BF16. Errors name the file and
// the field: an unreadable or malformed file, a missing or non-positive field, inconsistent
// mixture-of-experts or MLA fields, linear-attention fields, a layer type other than
// full_attention, sliding_attention or linear_attention, an unrecognized quantization method.
// Linear-attention (Gated DeltaNet) layers: layer_types "linear_attention" (or, without
// layer_types, all but every full_attention_interval-th layer), linear_num_key_heads,
// linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim;
// attn_output_gate widens the full-attention query projection. Mixture-of-experts fields: the expert count (n_routed_experts,
// num_experts or num_local_experts), num_experts_per_tok, moe_intermediate_size (else
// intermediate_size is the expert size and there is no dense MLP), shared experts
// (shared_expert_intermediate_size, or n_shared_experts × moe_intermediate_size) and
// first_k_dense_replace; MLA: kv_lora_rank, q_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
// v_head_dim; num_nextn_predict_layers (or Qwen3.5's mtp_num_hidden_layers), the MTP modules
// (MTPLayers).
func LoadModelDir(dir string) (ModelSpec, error) {
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ModelSpec{}, fmt.Errorf("%s: model directory has no config.json (a Hugging Face model directory is expected)", dir)
		}
		return ModelSpec{}, fmt.Errorf("%s: %v", path, err)
	}
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: invalid config.json: %v", path, err)
	}
	quant := c.QuantizationConfig
	if c.TextConfig != nil {
		tc := *c.TextConfig
		if len(tc.QuantizationConfig) == 0 {
			tc.QuantizationConfig = quant
		}
		c = tc
		quant = c.QuantizationConfig
	}
	sliding, linear, err := c.layerKinds(path)
	if err != nil {
		return ModelSpec{}, err
	}
	n, err := c.checkFields(path)
	if err != nil {
		return ModelSpec{}, err
	}
	moe, mla := c.moeAndMLA(n)
	m, err := c.sizes(dir, path, moe)
	if err != nil {
		return ModelSpec{}, err
	}
	m.MoE, m.MLA, m.AttentionOutputGate = moe, mla, c.AttnOutputGate
	if c.NumNextNPredictLayers < 0 || c.MTPNumHiddenLayers < 0 {
		return ModelSpec{}, fmt.Errorf("%s: num_nextn_predict_layers and mtp_num_hidden_layers must be >= 0, got %d and %d", path, c.NumNextNPredictLayers, c.MTPNumHiddenLayers)
	}
	m.MTPLayers = max(c.NumNextNPredictLayers, c.MTPNumHiddenLayers)
	if linear > 0 {
		la := &LinearAttentionSpec{Layers: linear, KeyHeads: c.LinearNumKeyHeads, ValueHeads: c.LinearNumValueHeads,
			KeyHeadDim: c.LinearKeyHeadDim, ValueHeadDim: c.LinearValueHeadDim, ConvKernel: c.LinearConvKernelDim}
		if bad := la.check(m.Layers); len(bad) > 0 {
			return ModelSpec{}, fmt.Errorf("%s: %d linear_attention layers: %s (fields linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim)",
				path, linear, strings.Join(bad, "; "))
		}
		m.LinearAttention = la
	}
	if sliding > 0 {
		if sliding >= m.Layers {
			return ModelSpec{}, fmt.Errorf("%s: layer_types makes all %d layers sliding_attention: a model without full-attention layers is not modeled", path, m.Layers)
		}
		if c.SlidingWindow == nil || *c.SlidingWindow <= 0 {
			return ModelSpec{}, fmt.Errorf("%s: layer_types has %d sliding_attention layers: sliding_window is required (a positive int, tokens)", path, sliding)
		}
		m.SlidingLayers, m.SlidingWindow = sliding, *c.SlidingWindow
	}
	if err := m.CheckArchitecture(); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %v (fields num_experts_per_tok, moe_intermediate_size, first_k_dense_replace, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)", path, err)
	}
	m.Params = m.architectureParams(c.TieWordEmbeddings)
	m.Precisions, err = checkpointPrecisions(quant)
	if err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// layerKinds counts the sliding_attention and linear_attention layers of c (layer_types, or
// Qwen3-Next's full_attention_interval). Errors: a layer type that is not modeled.
func (c *hfConfig) layerKinds(path string) (sliding, linear int, err error) {
	for _, lt := range c.LayerTypes {
		switch lt {
		case "sliding_attention":
			sliding++
		case "linear_attention":
			linear++
		case "full_attention", "attention":
		default:
			return 0, 0, fmt.Errorf("%s: layer_types has %q layers: not modeled; servesweep models full_attention, sliding_attention and linear_attention (Gated DeltaNet) layers", path, lt)
		}
	}
	if len(c.LayerTypes) == 0 && c.FullAttentionInterval > 1 && c.NumHiddenLayers != nil && c.LinearNumValueHeads > 0 {
		// Qwen3-Next style: every full_attention_interval-th layer is full attention.
		linear = *c.NumHiddenLayers - *c.NumHiddenLayers/c.FullAttentionInterval
	}
	return sliding, linear, nil
}

// checkFields checks c's MoE and MLA fields, reporting every problem at once, and returns the
// expert count (0 for a dense model).
func (c *hfConfig) checkFields(path string) (experts int, err error) {
	var fieldErrs []error
	switch {
	case c.InterleaveMoEStep > 1:
		fieldErrs = append(fieldErrs, fmt.Errorf("%s: interleave_moe_layer_step %d: MoE layers interleaved with dense ones are not modeled (only leading dense layers, first_k_dense_replace)", path, c.InterleaveMoEStep))
	case c.DecoderSparseStep > 1:
		fieldErrs = append(fieldErrs, fmt.Errorf("%s: decoder_sparse_step %d: MoE layers interleaved with dense ones are not modeled (only leading dense layers, first_k_dense_replace)", path, c.DecoderSparseStep))
	case len(c.MLPOnlyLayers) > 0:
		fieldErrs = append(fieldErrs, fmt.Errorf("%s: mlp_only_layers %v: dense layers among MoE layers are not modeled (only leading dense layers, first_k_dense_replace)", path, c.MLPOnlyLayers))
	}
	n := 0
	for _, f := range []struct {
		name string
		v    int
	}{{"n_routed_experts", c.NRoutedExperts}, {"num_experts", c.NumExperts}, {"num_local_experts", c.NumLocalExperts}} {
		switch {
		case f.v < 0:
			fieldErrs = append(fieldErrs, fmt.Errorf("%s: %s must be >= 0, got %d", path, f.name, f.v))
		case f.v > 0 && n > 0 && f.v != n:
			fieldErrs = append(fieldErrs, fmt.Errorf("%s: %s (%d) contradicts another expert count (%d)", path, f.name, f.v, n))
		case f.v > 0:
			n = f.v
		}
	}
	if n > 0 && (c.NumExpertsPerTok < 1 || c.NumExpertsPerTok > n) {
		fieldErrs = append(fieldErrs, fmt.Errorf("%s: num_experts_per_tok must be in [1, %d] (the expert count), got %d", path, n, c.NumExpertsPerTok))
	}
	if c.FirstKDenseReplace < 0 || (c.NumHiddenLayers != nil && c.FirstKDenseReplace >= *c.NumHiddenLayers && n > 0) {
		fieldErrs = append(fieldErrs, fmt.Errorf("%s: first_k_dense_replace must be in [0, num_hidden_layers), got %d", path, c.FirstKDenseReplace))
	}
	if c.KVLoraRank != nil {
		if *c.KVLoraRank <= 0 {
			fieldErrs = append(fieldErrs, fmt.Errorf("%s: kv_lora_rank must be > 0 (or absent, for attention without MLA), got %d", path, *c.KVLoraRank))
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"qk_nope_head_dim", c.QKNopeHeadDim}, {"qk_rope_head_dim", c.QKRopeHeadDim}, {"v_head_dim", c.VHeadDim}} {
			if f.v <= 0 {
				fieldErrs = append(fieldErrs, fmt.Errorf("%s: %s must be > 0 with kv_lora_rank (MLA), got %d", path, f.name, f.v))
			}
		}
		if c.QLoraRank != nil && *c.QLoraRank < 0 {
			fieldErrs = append(fieldErrs, fmt.Errorf("%s: q_lora_rank must be >= 0 or null, got %d", path, *c.QLoraRank))
		}
	}
	return n, errors.Join(fieldErrs...)
}

// moeAndMLA returns c's MoE layout for n experts (nil when n is 0) and its MLA layout (nil
// without kv_lora_rank). An MoE model that gives the expert size as intermediate_size loses it
// as its dense size, and MLA sets head_dim to the query-key head size.
func (c *hfConfig) moeAndMLA(n int) (*MoESpec, *MLASpec) {
	var moe *MoESpec
	if n > 0 {
		moe = &MoESpec{Experts: n, TopK: c.NumExpertsPerTok, ExpertIntermediate: c.MoEIntermediateSize, DenseLayers: c.FirstKDenseReplace}
		if moe.ExpertIntermediate == 0 && c.IntermediateSize != nil {
			// Mixtral and gpt-oss give the expert size as intermediate_size and have no dense MLP.
			moe.ExpertIntermediate = *c.IntermediateSize
			if moe.DenseLayers == 0 {
				c.IntermediateSize = nil
			}
		}
		moe.SharedIntermediate = c.SharedExpertInterm
		if moe.SharedIntermediate == 0 {
			moe.SharedIntermediate = c.NSharedExperts * moe.ExpertIntermediate
		}
	}
	var mla *MLASpec
	if c.KVLoraRank != nil {
		mla = &MLASpec{KVLoraRank: *c.KVLoraRank, QKNopeHeadDim: c.QKNopeHeadDim, QKRopeHeadDim: c.QKRopeHeadDim, VHeadDim: c.VHeadDim}
		if c.QLoraRank != nil {
			mla.QLoraRank = *c.QLoraRank
		}
		hd := c.QKNopeHeadDim + c.QKRopeHeadDim
		c.HeadDim = &hd
	}
	return moe, mla
}

// sizes returns the model dir's ModelSpec with c's sizes (layers, hidden, heads, KV heads, head
// dim, intermediate, vocabulary, context), reporting every missing or bad one at once.
func (c *hfConfig) sizes(dir, path string, moe *MoESpec) (ModelSpec, error) {
	get := func(field string, v *int, def int) (int, error) {
		switch {
		case v == nil && def > 0:
			return def, nil
		case v == nil:
			return 0, fmt.Errorf("%s: %s is required (a positive int)", path, field)
		case *v <= 0:
			return 0, fmt.Errorf("%s: %s must be > 0, got %d", path, field, *v)
		}
		return *v, nil
	}
	m := ModelSpec{ID: dir}
	var errs []error
	set := func(dst *int, field string, v *int, def int) {
		x, err := get(field, v, def)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = x
	}
	set(&m.Layers, "num_hidden_layers", c.NumHiddenLayers, 0)
	set(&m.Hidden, "hidden_size", c.HiddenSize, 0)
	set(&m.Heads, "num_attention_heads", c.NumAttentionHeads, 0)
	set(&m.KVHeads, "num_key_value_heads", c.NumKeyValueHeads, m.Heads)
	hd := 0
	if m.Heads > 0 {
		hd = m.Hidden / m.Heads
	}
	set(&m.HeadDim, "head_dim", c.HeadDim, hd)
	if moe == nil || moe.DenseLayers > 0 || c.IntermediateSize != nil {
		set(&m.Intermediate, "intermediate_size", c.IntermediateSize, 0)
	}
	set(&m.Vocab, "vocab_size", c.VocabSize, 0)
	set(&m.MaxContext, "max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if len(errs) > 0 {
		return ModelSpec{}, errors.Join(errs...)
	}
	if m.Heads%m.KVHeads != 0 {
		return ModelSpec{}, fmt.Errorf("%s: num_attention_heads (%d) must be a multiple of num_key_value_heads (%d)", path, m.Heads, m.KVHeads)
	}
	return m, nil
}

// checkpointPrecisions maps a config.json quantization_config to precisions (see LoadModelDir).
func checkpointPrecisions(raw json.RawMessage) (Precisions, error) {
	p := Precisions{Weights: BF16, KVCache: BF16}
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	var q hfQuant
	if err := json.Unmarshal(raw, &q); err != nil {
		return p, fmt.Errorf("quantization_config: %v", err)
	}
	if strings.EqualFold(q.KVCacheQuantAlgo, "fp8") || (len(q.KVCacheScheme) > 0 && string(q.KVCacheScheme) != "null") {
		p.KVCache = FP8
	}
	method := strings.ToLower(q.QuantMethod)
	switch method {
	case "fp8", "fbgemm_fp8":
		p.Weights = FP8
		return p, nil
	case "modelopt":
		algo := strings.ToLower(q.QuantAlgo)
		switch {
		case strings.Contains(algo, "fp4"):
			p.Weights = FP4
			return p, nil
		case strings.Contains(algo, "fp8"):
			p.Weights = FP8
			return p, nil
		}
		return p, fmt.Errorf("quantization_config.quant_algo %q is not modeled; valid: FP8, NVFP4", q.QuantAlgo)
	case "compressed-tensors":
		for _, g := range q.ConfigGroups {
			if g.Weights == nil {
				continue
			}
			switch {
			case g.Weights.NumBits == 8 && g.Weights.Type == "float":
				p.Weights = FP8
				return p, nil
			case g.Weights.NumBits == 4 && g.Weights.Type == "float":
				p.Weights = FP4
				return p, nil
			}
		}
		return p, errors.New("quantization_config: compressed-tensors weights are neither 8-bit nor 4-bit float; not modeled")
	}
	return p, fmt.Errorf("quantization_config.quant_method %q is not modeled; valid: fp8, modelopt (FP8, NVFP4), compressed-tensors", q.QuantMethod)
}

// ShapeError is a parallel shape a model cannot be split into. Field is the parallelism field
// at fault: tensor, pipeline, attention_data, moe_tensor or moe_expert.
type ShapeError struct {
	Field, Msg string
}

// Error returns Msg, the message naming the field and what would be valid.
func (e *ShapeError) Error() string { return e.Msg }

// CheckShape reports why model m cannot be split into shape s, as a *ShapeError: the first of
// ShapeErrors, or nil.
func (m ModelSpec) CheckShape(s Shape) error {
	if errs := m.ShapeErrors(s); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ShapeErrors lists every reason model m cannot be split into shape s, in field order: a tensor
// degree that does not divide its attention heads or, failing that, its linear-attention key
// heads (every tensor-parallel engine splits the heads evenly); more pipeline stages than layers;
// for a dense model a moe_tensor or moe_expert other than 1; for an MoE model moe_tensor ×
// moe_expert other than tensor × attention_data (the MoE layers repartition the same GPUs,
// dynosim-spec.md §3.2.2), expert slots (experts plus redundant_experts) not divisible by
// moe_expert, redundant experts without expert parallelism, an expert intermediate size not
// divisible by moe_tensor, and negative redundant experts (for a dense model any). Empty when
// the shape is valid.
func (m ModelSpec) ShapeErrors(s Shape) []*ShapeError {
	var errs []*ShapeError
	if s.Tensor > 0 && m.Heads%s.Tensor != 0 {
		errs = append(errs, &ShapeError{"tensor", fmt.Sprintf("tensor %d does not divide %s's %d attention heads; valid: %s", s.Tensor, m.ID, m.Heads, divisors(m.Heads))})
	} else if a := m.LinearAttention; a != nil && s.Tensor > 0 && a.KeyHeads%s.Tensor != 0 {
		errs = append(errs, &ShapeError{"tensor", fmt.Sprintf("tensor %d does not divide %s's %d linear-attention key heads", s.Tensor, m.ID, a.KeyHeads)})
	}
	if s.Pipeline > m.Layers {
		errs = append(errs, &ShapeError{"pipeline", fmt.Sprintf("pipeline %d exceeds %s's %d layers", s.Pipeline, m.ID, m.Layers)})
	}
	d, mt, me := s.moe()
	e := m.MoE
	if e == nil {
		if mt != 1 {
			errs = append(errs, &ShapeError{"moe_tensor", fmt.Sprintf("moe_tensor %d needs a mixture-of-experts model; %s is dense: use 1", mt, m.ID)})
		}
		if me != 1 {
			errs = append(errs, &ShapeError{"moe_expert", fmt.Sprintf("moe_expert %d needs a mixture-of-experts model; %s is dense: use 1", me, m.ID)})
		}
		if s.RedundantExperts != 0 {
			errs = append(errs, &ShapeError{"redundant_experts", fmt.Sprintf("redundant_experts %d needs a mixture-of-experts model; %s is dense: use 0", s.RedundantExperts, m.ID)})
		}
		return errs
	}
	if g := max(s.Tensor, 1) * d; mt*me != g {
		// Suggest only splits of the g GPUs the model allows.
		var ways []string
		// Whole pairs: naming one value alone reads as a fix when the other is the culprit.
		if e.Experts%g == 0 {
			ways = append(ways, fmt.Sprintf("moe_tensor: 1 with moe_expert: %d (experts split over the GPUs)", g))
		}
		if e.ExpertIntermediate%g == 0 {
			ways = append(ways, fmt.Sprintf("moe_tensor: %d with moe_expert: 1 (each expert split)", g))
		}
		hint := "no split of " + fmt.Sprint(g) + " GPUs divides " + m.ID + "'s experts or expert intermediate size: change tensor or attention_data"
		if len(ways) > 0 {
			hint = "e.g. " + strings.Join(ways, " or ")
		}
		field := "moe_expert"
		if me == 1 && mt > 1 {
			field = "moe_tensor" // only moe_tensor was given
		}
		errs = append(errs, &ShapeError{field, fmt.Sprintf("moe_tensor × moe_expert (%d × %d = %d) must equal tensor × attention_data (%d × %d = %d): the MoE layers use the same GPUs; %s",
			mt, me, mt*me, max(s.Tensor, 1), d, g, hint)})
	}
	switch slots := s.expertSlots(e); {
	case s.RedundantExperts > 0 && me == 1:
		errs = append(errs, &ShapeError{"redundant_experts", fmt.Sprintf("redundant_experts %d needs expert parallelism (moe_expert > 1): with every expert on every GPU there is nothing to rebalance; use 0",
			s.RedundantExperts)})
	case slots%me != 0 && s.RedundantExperts > 0:
		errs = append(errs, &ShapeError{"moe_expert", fmt.Sprintf("moe_expert %d does not divide %s's %d experts + %d redundant = %d expert slots; valid moe_expert: %s, or change redundant_experts",
			me, m.ID, e.Experts, s.RedundantExperts, slots, divisors(slots))})
	case slots%me != 0:
		hint := ""
		if me > 1 {
			r := (me - e.Experts%me) % me
			hint = fmt.Sprintf(" (or redundant_experts: %d, which makes %d expert slots)", r, e.Experts+r)
		}
		errs = append(errs, &ShapeError{"moe_expert", fmt.Sprintf("moe_expert %d does not divide %s's %d experts; valid: %s%s", me, m.ID, e.Experts, divisors(e.Experts), hint)})
	}
	if e.ExpertIntermediate%mt != 0 {
		errs = append(errs, &ShapeError{"moe_tensor", fmt.Sprintf("moe_tensor %d does not divide %s's expert intermediate size %d; valid: %s", mt, m.ID, e.ExpertIntermediate, divisors(e.ExpertIntermediate))})
	}
	if s.RedundantExperts < 0 {
		errs = append(errs, &ShapeError{"redundant_experts", fmt.Sprintf("redundant_experts %d is negative: use 0 (none) or more", s.RedundantExperts)})
	}
	return errs
}

// WeightBytesPerGPU is one GPU's share of the weights in bytes with the GEMM weights stored as p
// on shape s: everything but the routed experts (attention, dense and shared MLPs, routers in
// DenseWeights(p), the attention projections a checkpoint keeps apart in AttentionWeights(p);
// embeddings, lm_head and norms in BF16) split tensor × pipeline ways and replicated over
// attention-DP ranks, and the routed experts, with s.RedundantExperts more expert slots of the
// same size, split moe_tensor × moe_expert × pipeline ways. For a dense model this is
// WeightBytes(p) / (tensor × pipeline).
func (m ModelSpec) WeightBytesPerGPU(p Precision, s Shape) float64 {
	tp := float64(max(s.Tensor, 1) * max(s.Pipeline, 1))
	if m.MoE == nil {
		return m.WeightBytes(p) / tp
	}
	_, mt, me := s.moe()
	experts := m.ExpertParams()
	slots := experts * float64(s.expertSlots(m.MoE)) / float64(m.MoE.Experts)
	return (m.WeightBytes(p)-experts*p.WeightBytes())/tp + slots*p.WeightBytes()/float64(mt*me*max(s.Pipeline, 1))
}

// divisors lists n's divisors in increasing order, comma-separated, for the "valid:" part of a
// shape error.
func divisors(n int) string {
	var d []string
	for k := 1; k <= n; k++ {
		if n%k == 0 {
			d = append(d, fmt.Sprint(k))
		}
	}
	return strings.Join(d, ", ")
}
