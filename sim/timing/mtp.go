package timing

import "fmt"

// MTPModule is the model that prices one draft step of multi-token-prediction (MTP) speculative
// decoding: m's MTP module as a model of its own, one decoder layer (an MoE layer when m has
// experts, DeepSeek-V3 technical report §2.2: "a Transformer block" per module, the checkpoint's
// layer 61 holding routed experts) with m's attention and its lm_head. The module's input
// projection (2·hidden × hidden) and its two RMSNorms are left out: at DeepSeek-V3's sizes they
// are 103M parameters beside the layer's 11.5B and the lm_head's 0.93B. Engines that draft k
// tokens with one module (TensorRT-LLM's MTP "Eagle" mode, SGLang's EAGLE worker over the
// NextN layer, vLLM's deepseek_mtp) run it k times, one draft token per step. Errors: m has
// no MTP module (MTPLayers 0).
func (m ModelSpec) MTPModule() (ModelSpec, error) {
	if m.MTPLayers < 1 {
		return ModelSpec{}, fmt.Errorf("model %s has no multi-token-prediction module that servesweep knows of (its catalog lists one for DeepSeek-V3/R1, "+
			"GLM-5 and Qwen3.5; a model directory's config.json gives it as num_nextn_predict_layers or mtp_num_hidden_layers): MTP speculative decoding needs one", m.ID)
	}
	d := m
	d.ID = m.ID + " MTP module"
	d.Layers, d.MTPLayers = 1, 0
	d.SlidingLayers, d.SlidingWindow, d.LinearAttention = 0, 0, nil
	if m.MoE != nil {
		moe := *m.MoE
		moe.DenseLayers = 0
		d.MoE = &moe
	}
	d.Params = d.architectureParams(false)
	return d, nil
}

// MTP prices passes of an engine running MTP speculative decoding: after its forward pass the
// engine proposes the next round's drafts by running the MTP module Steps times in a row over
// the rows that proposed (Batch.DraftProposals, each attending to its own KV:
// Batch.DraftProposalKVTokens), so
//
//	PassMs(b) = Target.PassMs(b) + Steps · Draft.PassMs(one decode step per proposing row)
//
// The draft steps run inside the same forward step (TensorRT-LLM captures target and draft in
// one CUDA graph; SGLang's and vLLM's drafters launch right after the verify pass), so Draft
// should carry no per-pass host time: build it with Efficiency.PassOverheadMs and
// SequenceOverheadUs at 0. The later steps' one-token-longer KV is not counted. The target's
// verification of the drafts is priced by Target from Batch.DraftTokens, as for any drafting.
// *MTP does not allocate when its models do not; it prices the draft step in a batch of its own,
// so one MTP is not safe for concurrent use (a run's engines call it in turn).
type MTP struct {
	Target, Draft Model
	// Steps is the draft tokens proposed per round (num_speculative_tokens), >= 1.
	Steps int
	step  Batch
}

// PassMs implements Model.
func (m *MTP) PassMs(b *Batch) float64 {
	ms := m.Target.PassMs(b)
	if b.DraftProposals == 0 || m.Steps == 0 {
		return ms
	}
	m.step = Batch{DecodeRequests: b.DraftProposals, DecodeKVTokens: b.DraftProposalKVTokens,
		DecodeSteps: b.DraftProposals, DecodeStepKVTokens: b.DraftProposalKVTokens,
		SampledTokens: b.DraftProposals, KVCapacityTokens: b.KVCapacityTokens}
	return ms + float64(m.Steps)*m.Draft.PassMs(&m.step)
}
