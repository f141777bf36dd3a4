package timing

import "fmt"

// LinearAttentionSpec is the Gated DeltaNet linear-attention part of a hybrid model (Qwen3-Next,
// Qwen3.5; Hugging Face config.json names in parentheses). A linear-attention layer keeps, per
// sequence, a fixed recurrent state instead of per-token keys and values: per value head a
// KeyHeadDim × ValueHeadDim matrix (in FP32, the checkpoints' mamba_ssm_dtype), plus the last
// ConvKernel − 1 inputs of its short causal convolution over the q, k and v channels (BF16).
// Sources: Yang et al., "Gated Delta Networks: Improving Mamba2 with Delta Rule" (ICLR 2025);
// the layer layout and sizes are the config.json fields below.
type LinearAttentionSpec struct {
	// Layers is the number of linear-attention layers (layer_types "linear_attention"; every
	// full_attention_interval-th layer is full attention, the others linear).
	Layers int
	// KeyHeads and ValueHeads are the query/key and value heads (linear_num_key_heads,
	// linear_num_value_heads); KeyHeadDim and ValueHeadDim their sizes (linear_key_head_dim,
	// linear_value_head_dim).
	KeyHeads, ValueHeads, KeyHeadDim, ValueHeadDim int
	// ConvKernel is the causal convolution's width in tokens (linear_conv_kernel_dim).
	ConvKernel int
}

// Sizes of the linear-attention state's elements in bytes: the recurrent state in FP32
// (config.json mamba_ssm_dtype float32, as vLLM and SGLang keep it), the convolution window in
// the activations' BF16.
const (
	linearStateBytes = 4
	linearConvBytes  = 2
)

// keyDim and valueDim are the widths of the q/k and v channels: heads × head size.
func (a *LinearAttentionSpec) keyDim() int   { return a.KeyHeads * a.KeyHeadDim }
func (a *LinearAttentionSpec) valueDim() int { return a.ValueHeads * a.ValueHeadDim }

// params is one linear-attention layer's parameters: the input projection to q, k, v and the
// output gate z (hidden × (2·key_dim + 2·value_dim)), the per-head decay and β projections
// (hidden × 2·value_heads), the depthwise convolution over q, k, v ((2·key_dim + value_dim) ×
// conv_kernel) and the output projection (value_dim × hidden). Per-head scalars and the gated
// norm (under value_heads × 3 + value_head_dim values) are left out.
func (a *LinearAttentionSpec) params(hidden int) float64 {
	h, kd, vd := float64(hidden), float64(a.keyDim()), float64(a.valueDim())
	return h*(2*kd+2*vd) + h*2*float64(a.ValueHeads) + (2*kd+vd)*float64(a.ConvKernel) + vd*h
}

// StateBytesPerSequencePerGPU is the linear-attention state one sequence holds on one GPU of a
// tensor × pipeline group, in bytes (0 without linear-attention layers): its stage's
// ceil(linear layers / pipeline) layers × (its ceil(value heads / tensor) heads × key head dim
// × value head dim × 4 bytes of recurrent state + its share of the 2·key_dim + value_dim
// convolution channels × (conv_kernel − 1) × 2 bytes). The state does not grow with the
// sequence: it is the same at token 1 and at token 100,000.
func (m ModelSpec) StateBytesPerSequencePerGPU(tensor, pipeline int) int64 {
	a := m.LinearAttention
	if a == nil {
		return 0
	}
	tensor, pipeline = max(tensor, 1), max(pipeline, 1)
	layers := int64((a.Layers + pipeline - 1) / pipeline)
	heads := int64((a.ValueHeads + tensor - 1) / tensor)
	state := heads * int64(a.KeyHeadDim*a.ValueHeadDim) * linearStateBytes
	channels := int64((2*a.keyDim() + a.valueDim() + tensor - 1) / tensor)
	conv := channels * int64(max(a.ConvKernel-1, 0)) * linearConvBytes
	return layers * (state + conv)
}

// linearFlopsPerToken is the recurrence's FLOPs per token over all linear-attention layers: per
// value head and layer, the delta rule's four passes over the key_head_dim × value_head_dim state
// (decay, the prediction kᵀS, the rank-one update and the readout qᵀS), 2 FLOPs per
// multiply-add each.
func (m ModelSpec) linearFlopsPerToken() float64 {
	a := m.LinearAttention
	if a == nil {
		return 0
	}
	return float64(a.Layers) * float64(a.ValueHeads) * 4 * 2 * float64(a.KeyHeadDim*a.ValueHeadDim)
}

// checkLinear lists what is wrong with the linear-attention fields.
func (a *LinearAttentionSpec) check(layers int) []string {
	var bad []string
	if a.Layers < 1 || a.Layers >= layers {
		bad = append(bad, fmt.Sprintf("linear-attention layers must be in [1, %d) (at least one full-attention layer), got %d", layers, a.Layers))
	}
	if a.KeyHeads <= 0 || a.ValueHeads <= 0 || a.KeyHeadDim <= 0 || a.ValueHeadDim <= 0 || a.ConvKernel < 1 {
		bad = append(bad, fmt.Sprintf("linear-attention heads and head dims must be > 0 and conv kernel >= 1: %+v", *a))
	} else if a.ValueHeads%a.KeyHeads != 0 {
		bad = append(bad, fmt.Sprintf("linear-attention value heads (%d) must be a multiple of key heads (%d)", a.ValueHeads, a.KeyHeads))
	}
	return bad
}
