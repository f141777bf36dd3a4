package timing

import (
	"fmt"
	"math"
)

// RuntimeReserveGiB is the device memory per GPU that neither weights, activations nor the KV
// cache may use: the CUDA context, NCCL and cuBLAS workspaces and CUDA-graph pools. vLLM's
// startup log reports roughly 1–2 GiB of such "non-torch" and graph memory per GPU on Hopper;
// servesweep takes 1.5 GiB.
const RuntimeReserveGiB = 1.5

// gib is 2^30 bytes.
const gib = 1 << 30

// CapacityInput is what the default KV capacity depends on: one attention-DP rank of a worker
// (Shape.Tensor × Shape.Pipeline GPUs) serving Model at Precisions on Hardware.
type CapacityInput struct {
	// Model, Hardware and Precisions are the served model, the GPU and the formats.
	Model      ModelSpec
	Hardware   Hardware
	Precisions Precisions
	// Shape is one attention-DP rank's tensor × pipeline layout.
	Shape Shape
	// MemoryFraction is the share of each GPU's memory the engine may use, in (0, 1] (vLLM's
	// gpu_memory_utilization, default 0.9; SGLang's mem_fraction_static, 0.88), or with
	// FractionOfFree the share of the memory left after weights, activations and the runtime
	// reserve that the KV cache takes (TensorRT-LLM's free_gpu_memory_fraction, 0.9).
	MemoryFraction float64
	// FractionOfFree selects TensorRT-LLM's accounting of MemoryFraction (engine-internals.md
	// §2.3: "TRT-LLM: fraction of memory free after non-KV").
	FractionOfFree bool
	// BlockSize is tokens per KV block (> 0).
	BlockSize int
	// MaxBatchedTokens and MaxSequences size the activation reserve (> 0).
	MaxBatchedTokens, MaxSequences int
	// ReserveGiB is the memory per GPU the engine holds outside weights, activations and the KV
	// cache, in GiB (>= 0); nil means RuntimeReserveGiB.
	ReserveGiB *float64
	// KVBytesPerToken overrides the model's KV bytes per token before sharding (all layers, all
	// KV heads); 0 derives it from the model and Precisions.KVCache.
	KVBytesPerToken int64
}

// Capacity is a derived KV pool size with the numbers behind it (per GPU unless noted).
type Capacity struct {
	// Blocks is the KV pool of one attention-DP rank in blocks.
	Blocks int
	// UsableGiB is MemoryFraction × device memory (the whole device memory with FractionOfFree).
	UsableGiB float64
	// WeightsGiB is the GPU's share of the weights (ModelSpec.WeightBytesPerGPU): for a dense
	// model WeightBytes / (tensor × pipeline).
	WeightsGiB float64
	// ActivationGiB is the peak activation memory of a pass of MaxBatchedTokens tokens.
	ActivationGiB float64
	// ReserveGiB is CapacityInput.ReserveGiB, or RuntimeReserveGiB when that is nil.
	ReserveGiB float64
	// StateGiB is the linear-attention state of MaxSequences running sequences
	// (ModelSpec.StateBytesPerSequencePerGPU; 0 without linear-attention layers): set aside
	// beside the KV cache, as SGLang sizes its Mamba-state pool for the running requests and
	// vLLM's hybrid allocator gives every running request one state slot per such layer.
	StateGiB float64
	// KVGiB is what is left for the KV cache: UsableGiB − WeightsGiB − ActivationGiB −
	// ReserveGiB − StateGiB, × MemoryFraction with FractionOfFree.
	KVGiB float64
	// KVBytesPerTokenPerGPU is the GPU's share of one token's KV in bytes.
	KVBytesPerTokenPerGPU int64
}

// activationBytesPerGPU is the peak activation memory of one forward pass of tokens tokens plus
// the sampler's logits, as vLLM's startup profiling run sizes it: per token the SwiGLU MLP's
// gate/up output and activation (3 × intermediate / t), the q/k/v projection output
// ((heads + 2·kv_heads) × head_dim / t) and four hidden-size buffers (residual, norm output,
// attention output, MLP output), all BF16; plus max_sequences × vocab FP32 logits (gathered in
// full on a GPU).
func activationBytesPerGPU(m ModelSpec, t, tokens, seqs int) float64 {
	perToken := float64(3*m.Intermediate)/float64(t) + float64((m.Heads+2*m.KVHeads)*m.HeadDim)/float64(t) + 4*float64(m.Hidden)
	return float64(tokens)*perToken*2 + float64(seqs)*float64(m.Vocab)*4
}

// KVCapacity derives the KV pool of one attention-DP rank (dynosim-spec.md §3.2, the `default`
// capacity; engine-internals.md §2.3, vLLM's accounting). Per GPU:
//
//	usable = MemoryFraction × MemoryGiB
//	kv     = usable − WeightBytesPerGPU(weights, shape) − activation − reserve − state
//	blocks = floor(kv / (BlockSize × KVBytesPerTokenPerGPU))
//
// where reserve is ReserveGiB (RuntimeReserveGiB when nil). With FractionOfFree (TensorRT-LLM),
// usable = MemoryGiB and kv is multiplied by MemoryFraction.
//
// Every GPU of the rank holds its stage's layers and its share of the KV heads, so the per-GPU
// quotient is the rank's pool (KV heads are replicated when tensor > KV heads). Errors name the
// numbers: weights larger than the usable memory ("needs 140.0 GiB of weights, has 72.0 GiB"),
// or no room left for one KV block; and invalid inputs.
func KVCapacity(in CapacityInput) (Capacity, error) {
	m, hw, s := in.Model, in.Hardware, in.Shape
	switch {
	case s.Tensor < 1 || s.Pipeline < 1:
		return Capacity{}, fmt.Errorf("KV capacity: tensor and pipeline must be >= 1, got %d and %d", s.Tensor, s.Pipeline)
	case !(in.MemoryFraction > 0 && in.MemoryFraction <= 1):
		return Capacity{}, fmt.Errorf("KV capacity: memory_fraction must be in (0, 1], got %v", in.MemoryFraction)
	case in.BlockSize <= 0 || in.MaxBatchedTokens <= 0 || in.MaxSequences <= 0:
		return Capacity{}, fmt.Errorf("KV capacity: block_size, max_batched_tokens and max_sequences must be > 0, got %d, %d, %d",
			in.BlockSize, in.MaxBatchedTokens, in.MaxSequences)
	case !(hw.MemoryGiB > 0):
		return Capacity{}, fmt.Errorf("KV capacity: hardware %s has no memory size", hw.ID)
	case m.Layers <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || !(m.Params > 0):
		return Capacity{}, fmt.Errorf("KV capacity: model %s needs layers, KV heads, head dim and a parameter count", m.ID)
	case in.ReserveGiB != nil && !(*in.ReserveGiB >= 0 && !math.IsInf(*in.ReserveGiB, 1)):
		return Capacity{}, fmt.Errorf("KV capacity: reserve_gib must be a finite number >= 0, got %v", *in.ReserveGiB)
	case in.KVBytesPerToken < 0:
		return Capacity{}, fmt.Errorf("KV capacity: bytes_per_token must be > 0 or auto, got %d", in.KVBytesPerToken)
	}
	gpus := s.Tensor * s.Pipeline
	perGPU := m.KVBytesPerTokenPerGPU(in.Precisions.KVCache, s.Tensor, s.Pipeline)
	if in.KVBytesPerToken > 0 {
		// Scale the given whole-model figure by this GPU's share of the model's own figure.
		whole := m.KVBytesPerTokenAs(in.Precisions.KVCache)
		perGPU = int64(math.Ceil(float64(in.KVBytesPerToken) * float64(perGPU) / float64(whole)))
	}
	usable := in.MemoryFraction * hw.MemoryGiB
	if in.FractionOfFree {
		usable = hw.MemoryGiB
	}
	c := Capacity{
		UsableGiB:             usable,
		WeightsGiB:            m.WeightBytesPerGPU(in.Precisions.Weights, s) / gib,
		ActivationGiB:         activationBytesPerGPU(m, s.Tensor, in.MaxBatchedTokens, in.MaxSequences) / gib,
		ReserveGiB:            RuntimeReserveGiB,
		StateGiB:              float64(in.MaxSequences) * float64(m.StateBytesPerSequencePerGPU(s.Tensor, s.Pipeline)) / gib,
		KVBytesPerTokenPerGPU: perGPU,
	}
	if in.ReserveGiB != nil {
		c.ReserveGiB = *in.ReserveGiB
	}
	c.KVGiB = c.UsableGiB - c.WeightsGiB - c.ActivationGiB - c.ReserveGiB - c.StateGiB
	if in.FractionOfFree {
		c.KVGiB *= in.MemoryFraction
	}
	raise := "raise tensor or pipeline"
	switch {
	case m.MoE != nil && s.RedundantExperts > 0:
		raise = fmt.Sprintf("lower redundant_experts (%d beside the model's %d experts), or raise tensor, pipeline, or attention_data with moe_expert (the experts split over more GPUs)",
			s.RedundantExperts, m.MoE.Experts)
	case m.MoE != nil:
		raise = "raise tensor, pipeline, or attention_data with moe_expert (the experts split over more GPUs)"
	}
	if c.WeightsGiB >= c.UsableGiB {
		// A worker of several attention-DP ranks holds each rank's share on its own GPUs: the
		// figures are one rank's (each holds the attention weights whole).
		rank := ""
		if s.AttentionData > 1 {
			rank = fmt.Sprintf(", one of the worker's %d attention-DP ranks, the experts over %d GPUs", s.AttentionData, max(s.MoEExpert, 1)*max(s.MoETensor, 1))
		}
		// Under FractionOfFree (TensorRT-LLM) the weights may take all of the memory: the
		// fraction applies to what they leave.
		usable := fmt.Sprintf("memory_fraction %g × %g GiB × %d GPUs", in.MemoryFraction, hw.MemoryGiB, gpus)
		if in.FractionOfFree {
			usable = fmt.Sprintf("%g GiB × %d GPUs; memory_fraction %g applies to what the weights leave", hw.MemoryGiB, gpus, in.MemoryFraction)
		}
		return c, fmt.Errorf("model %s (%s weights) does not fit on %d × %s (tensor %d × pipeline %d%s): needs %.1f GiB of weights, has %.1f GiB (%s); %s, or quantize",
			m.ID, in.Precisions.Weights, gpus, hw.ID, s.Tensor, s.Pipeline, rank, c.WeightsGiB*float64(gpus), c.UsableGiB*float64(gpus),
			usable, raise)
	}
	blockBytes := float64(in.BlockSize) * float64(perGPU)
	blocks := math.Floor(c.KVGiB * gib / blockBytes)
	if blocks < 1 {
		reserve, lower, open, frac := "runtime reserve", "", "", ""
		if in.ReserveGiB != nil {
			reserve, lower = "runtime reserve (reserve_gib)", ", lower reserve_gib"
		}
		if in.FractionOfFree {
			open, frac = "(", fmt.Sprintf(") × memory_fraction %g", in.MemoryFraction)
		}
		if c.ActivationGiB > 0.1*c.UsableGiB {
			// A pass's token budget this large is the cause to name first.
			lower += ", lower the pass's token budget (scheduler.max_batched_tokens; under SGLang scheduler.chunked_prefill_size), whose activations these are"
		}
		return c, fmt.Errorf("model %s (%s weights) leaves no room for the KV cache on %d × %s (tensor %d × pipeline %d): per GPU %s%.1f GiB usable − %.1f GiB weights − %.1f GiB activations − %.1f GiB %s%s%s = %.2f GiB, one KV block needs %.4f GiB; %s or memory_fraction%s, or quantize",
			m.ID, in.Precisions.Weights, gpus, hw.ID, s.Tensor, s.Pipeline, open, c.UsableGiB, c.WeightsGiB, c.ActivationGiB, c.ReserveGiB, reserve,
			stateTerm(c.StateGiB, in.MaxSequences), frac, c.KVGiB, blockBytes/gib, raise, lower)
	}
	c.Blocks = int(min(blocks, math.MaxInt32))
	return c, nil
}

// stateTerm renders the linear-attention state in a capacity error ("" without).
func stateTerm(gibs float64, seqs int) string {
	if gibs == 0 {
		return ""
	}
	return fmt.Sprintf(" − %.1f GiB linear-attention state of %d sequences (max_sequences)", gibs, seqs)
}
