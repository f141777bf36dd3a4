package timing

import (
	"strings"
	"testing"
)

// TestMTPModule: DeepSeek-R1's MTP module is one MoE layer with its MLA attention and lm_head:
// its GEMM parameters are those of one of the model's 58 MoE layers, (P_lin − 3 dense
// layers' attention and MLP) / 58, and its KV is one layer's latent (576 values per token).
// Llama has no module.
func TestMTPModule(t *testing.T) {
	m, err := LookupModel("deepseek-ai/DeepSeek-R1")
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.MTPModule()
	if err != nil {
		t.Fatal(err)
	}
	dense := 3 * (m.attentionParams() + m.swiGLUParams(m.Intermediate))
	if want := (m.LinearParams() - dense) / 58; !near(d.LinearParams(), want) {
		t.Errorf("module GEMM parameters %v, want %v", d.LinearParams(), want)
	}
	if d.Layers != 1 || d.MoELayers() != 1 || d.HeadParams() != m.HeadParams() || d.MTPLayers != 0 || m.MoE.DenseLayers != 3 {
		t.Errorf("module: %d layers, %d MoE, head %v (model %v), MTP %d; model dense layers %d", d.Layers, d.MoELayers(), d.HeadParams(), m.HeadParams(), d.MTPLayers, m.MoE.DenseLayers)
	}
	if got := d.KVBytesPerTokenAs(FP8); got != 576 {
		t.Errorf("module KV %d bytes per token in FP8, want 576", got)
	}
	llama, _ := LookupModel("meta-llama/Llama-3.1-70B-Instruct")
	if _, err := llama.MTPModule(); err == nil || !strings.Contains(err.Error(), "num_nextn_predict_layers") {
		t.Errorf("Llama's MTP module: %v, want an error naming num_nextn_predict_layers", err)
	}
}

// TestMTPPassMs: a pass costs the target's time plus Steps draft steps over the proposing rows:
// target fixed 8 ms per decode pass, draft 1.5 ms per step, 3 steps → 12.5 ms; a pass in which
// no request proposes costs the target's 8 ms. The draft step sees one decode step per
// proposing row at its KV (recorded by a model that returns the KV tokens it was given).
func TestMTPPassMs(t *testing.T) {
	m := &MTP{Target: Fixed{PrefillMs: 30, DecodeMs: 8}, Draft: Fixed{DecodeMs: 1.5}, Steps: 3}
	b := Batch{DecodeRequests: 4, DecodeKVTokens: 400, DecodeSteps: 4, DecodeStepKVTokens: 400, SampledTokens: 4,
		DraftTokens: 12, DraftKVTokens: 1224, DraftProposals: 4, DraftProposalKVTokens: 404}
	if got := m.PassMs(&b); !near(got, 12.5) {
		t.Errorf("pass with proposals = %v ms, want 12.5", got)
	}
	b.DraftProposals, b.DraftProposalKVTokens = 0, 0
	if got := m.PassMs(&b); !near(got, 8) {
		t.Errorf("pass without proposals = %v ms, want 8", got)
	}
	b.DraftProposals, b.DraftProposalKVTokens = 4, 404
	if n := testing.AllocsPerRun(100, func() { m.PassMs(&b) }); n != 0 {
		t.Errorf("PassMs allocates %v times per pass", n)
	}
	b.DraftProposals, b.DraftProposalKVTokens = 0, 0
	seen := kvModel{}
	b.DraftProposals, b.DraftProposalKVTokens = 4, 404
	if got := (&MTP{Target: Fixed{}, Draft: &seen, Steps: 2}).PassMs(&b); got != 2*404 || seen.steps != 4 {
		t.Errorf("draft steps saw %d decode steps, priced %v; want 4 steps, 2 × 404", seen.steps, got)
	}
}

// kvModel prices a pass at its DecodeStepKVTokens and records its DecodeSteps.
type kvModel struct{ steps int }

func (k *kvModel) PassMs(b *Batch) float64 {
	k.steps = b.DecodeSteps
	return float64(b.DecodeStepKVTokens)
}

// TestMTPDraftStepRoofline: on the roofline a DeepSeek-R1 draft step for one request on 8 B200
// (FP8, TP8, EP8) is mostly the lm_head's BF16 read: at least 2·hidden·vocab/8 bytes at the
// GPU's streaming rate, and far less than a full decode pass.
func TestMTPDraftStepRoofline(t *testing.T) {
	m, _ := LookupModel("deepseek-ai/DeepSeek-R1")
	d, _ := m.MTPModule()
	hw, err := LookupHardware("b200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	eff := CalibratedEfficiency()
	eff.PassOverheadMs, eff.SequenceOverheadUs = 0, 0
	s := Shape{Tensor: 8, Pipeline: 1, AttentionData: 1, MoETensor: 1, MoEExpert: 8}
	full, err := NewRoofline(m, hw, Precisions{Weights: FP8, KVCache: FP8}, s, eff)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := NewRoofline(d, hw, Precisions{Weights: FP8, KVCache: FP8}, s, eff)
	if err != nil {
		t.Fatal(err)
	}
	one := Batch{DecodeRequests: 1, DecodeKVTokens: 1024, DecodeSteps: 1, DecodeStepKVTokens: 1024, SampledTokens: 1}
	head := 2 * m.HeadParams() / 8 / (hw.MemoryTBps * 1e9 * hw.streamingFraction(eff))
	if got, pass := draft.PassMs(&one), full.PassMs(&one); got < head || got > pass/10 {
		t.Errorf("draft step %v ms; want at least the lm_head read %v ms and at most a tenth of the pass's %v ms", got, head, pass)
	}
}
