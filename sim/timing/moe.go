package timing

import (
	"fmt"
	"strings"
)

// MoESpec is the mixture-of-experts part of a model (Hugging Face config.json names in
// parentheses). A layer is either dense (the SwiGLU MLP of ModelSpec.Intermediate) or an MoE
// layer: a router picks TopK of Experts routed experts per token, and SharedIntermediate (when
// > 0) is an always-active shared-expert MLP beside them.
type MoESpec struct {
	// Experts is the routed experts per MoE layer (n_routed_experts, num_experts,
	// num_local_experts); TopK the routed experts each token uses (num_experts_per_tok).
	Experts, TopK int
	// ExpertIntermediate is one routed expert's SwiGLU intermediate size (moe_intermediate_size).
	ExpertIntermediate int
	// SharedIntermediate is the total intermediate size of the shared experts of an MoE layer
	// (n_shared_experts × moe_intermediate_size, or shared_expert_intermediate_size); 0: none.
	SharedIntermediate int
	// DenseLayers is the number of leading layers with a dense MLP (first_k_dense_replace).
	DenseLayers int
}

// MLASpec is multi-head latent attention (DeepSeek-V2/V3): keys and values are cached as one
// compressed latent of KVLoraRank values plus a shared rotary key of QKRopeHeadDim values per
// token and layer, whatever the head count.
type MLASpec struct {
	// QLoraRank is the query compression rank (0: queries projected directly from the hidden
	// state); KVLoraRank the key/value latent size.
	QLoraRank, KVLoraRank int
	// QKNopeHeadDim and QKRopeHeadDim are a head's query/key dimensions without and with rotary
	// embedding; VHeadDim a head's value dimension.
	QKNopeHeadDim, QKRopeHeadDim, VHeadDim int
}

// MoELayers is the number of MoE layers (0 for a dense model).
func (m ModelSpec) MoELayers() int {
	if m.MoE == nil {
		return 0
	}
	return max(0, m.Layers-m.MoE.DenseLayers)
}

// attentionParams is one full-attention layer's projection parameters: q, k, v and o
// (hidden × heads·head_dim, twice that with AttentionOutputGate, hidden × kv_heads·head_dim
// twice, heads·head_dim × hidden), or under
// MLA the query path (hidden × q_lora + q_lora × heads·(nope + rope), or hidden ×
// heads·(nope + rope) without q_lora), the latent down-projection hidden × (kv_lora + rope), its
// up-projection kv_lora × heads·(nope + v) and the output heads·v × hidden.
func (m ModelSpec) attentionParams() float64 {
	h, H := float64(m.Hidden), float64(m.Heads)
	if a := m.MLA; a != nil {
		qk := float64(a.QKNopeHeadDim + a.QKRopeHeadDim)
		q := h * H * qk
		if a.QLoraRank > 0 {
			q = h*float64(a.QLoraRank) + float64(a.QLoraRank)*H*qk
		}
		return q + h*float64(a.KVLoraRank+a.QKRopeHeadDim) + float64(a.KVLoraRank)*H*float64(a.QKNopeHeadDim+a.VHeadDim) + H*float64(a.VHeadDim)*h
	}
	q, kv := H*float64(m.HeadDim), float64(m.KVHeads*m.HeadDim)
	gate := 0.0
	if m.AttentionOutputGate {
		gate = h * q // the query projection's second half: one gate value per head dimension
	}
	return h*q + gate + 2*h*kv + q*h
}

// swiGLUParams is the parameter count of a SwiGLU MLP of intermediate size i: gate, up and down.
func (m ModelSpec) swiGLUParams(i int) float64 { return 3 * float64(m.Hidden) * float64(i) }

// ExpertParams is the parameter count of the routed experts of all MoE layers (0 for a dense
// model): MoE layers × Experts × 3 × hidden × ExpertIntermediate.
func (m ModelSpec) ExpertParams() float64 {
	if m.MoE == nil {
		return 0
	}
	return float64(m.MoELayers()) * float64(m.MoE.Experts) * m.swiGLUParams(m.MoE.ExpertIntermediate)
}

// ActiveLinearParams is the GEMM parameters one token uses per forward pass: LinearParams with
// only TopK of each MoE layer's routed experts (equal to LinearParams for a dense model).
func (m ModelSpec) ActiveLinearParams() float64 {
	if m.MoE == nil {
		return m.LinearParams()
	}
	return m.LinearParams() - m.ExpertParams()*(1-float64(m.MoE.TopK)/float64(m.MoE.Experts))
}

// CheckArchitecture reports a model whose fields are inconsistent: non-positive sizes, heads not
// a multiple of KV heads, MoE or MLA fields out of range. Errors name the field.
func (m ModelSpec) CheckArchitecture() error {
	var bad []string
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"kv_heads", m.KVHeads}, {"head_dim", m.HeadDim}, {"vocab", m.Vocab}} {
		if f.v <= 0 {
			bad = append(bad, fmt.Sprintf("%s must be > 0, got %d", f.name, f.v))
		}
	}
	if m.Intermediate <= 0 && (m.MoE == nil || m.MoE.DenseLayers > 0) {
		bad = append(bad, fmt.Sprintf("intermediate must be > 0, got %d", m.Intermediate))
	}
	if m.Heads > 0 && m.KVHeads > 0 && m.Heads%m.KVHeads != 0 {
		bad = append(bad, fmt.Sprintf("heads (%d) must be a multiple of kv_heads (%d)", m.Heads, m.KVHeads))
	}
	if e := m.MoE; e != nil {
		switch {
		case e.Experts < 2:
			bad = append(bad, fmt.Sprintf("experts must be >= 2, got %d", e.Experts))
		case e.TopK < 1 || e.TopK > e.Experts:
			bad = append(bad, fmt.Sprintf("experts per token must be in [1, %d], got %d", e.Experts, e.TopK))
		}
		if e.ExpertIntermediate <= 0 {
			bad = append(bad, fmt.Sprintf("expert intermediate must be > 0, got %d", e.ExpertIntermediate))
		}
		if e.SharedIntermediate < 0 || e.DenseLayers < 0 || e.DenseLayers >= m.Layers {
			bad = append(bad, fmt.Sprintf("shared intermediate (%d) must be >= 0 and dense layers (%d) in [0, layers)", e.SharedIntermediate, e.DenseLayers))
		}
	}
	if a := m.LinearAttention; a != nil {
		bad = append(bad, a.check(m.Layers)...)
		if m.SlidingLayers+a.Layers >= m.Layers {
			bad = append(bad, fmt.Sprintf("sliding (%d) and linear-attention (%d) layers leave no full-attention layer of %d", m.SlidingLayers, a.Layers, m.Layers))
		}
	}
	if a := m.MLA; a != nil && (a.KVLoraRank <= 0 || a.QKNopeHeadDim <= 0 || a.QKRopeHeadDim <= 0 || a.VHeadDim <= 0 || a.QLoraRank < 0) {
		bad = append(bad, fmt.Sprintf("MLA ranks and head dims must be > 0 (q_lora >= 0): %+v", *a))
	}
	if len(bad) > 0 {
		return fmt.Errorf("model %s: %s", m.ID, strings.Join(bad, "; "))
	}
	return nil
}
