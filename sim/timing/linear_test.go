package timing

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Qwen3.5-397B-A17B's hybrid layout, counted by hand from its config.json:
//
//	embeddings + lm_head  2 · 248,320 · 4,096                                    =   2,034,237,440
//	full attention ×15    4,096·8,192 (q) + 4,096·8,192 (gate) + 2·4,096·512 (k, v)
//	                      + 8,192·4,096 (o) = 104,857,600 each                   =   1,572,864,000
//	linear attention ×45  4,096·(2·2,048 + 2·8,192) (q, k, v, z) + 4,096·2·64 (a, b)
//	                      + (2·2,048 + 8,192)·4 (conv) + 8,192·4,096 (out)
//	                      = 118,013,952 each                                     =   5,310,627,840
//	routed experts        60 · 512 · 3 · 4,096 · 1,024                           = 386,547,056,640
//	shared expert, router 60 · (3 · 4,096 · 1,024 + 4,096 · 512)                 =     880,803,840
//	norms                 (2·60 + 1) · 4,096                                     =         495,616
//	total                                                                        = 396,346,085,376
//
// (card: 397B with the vision encoder), active 396,346,085,376 − 386,547,056,640 · 502/512 =
// 17,348,775,936 (card: 17B). Per-token KV: only the 15 full-attention layers, 15 · 2 · 2 KV
// heads · 256 · 2 B = 30,720 B in BF16. Linear-attention state per sequence: per layer 64 value heads · 128 · 128 ·
// 4 B (FP32) = 4,194,304 B plus the convolution's (2·2,048 + 8,192) channels · 3 tokens · 2 B =
// 73,728 B, × 45 layers = 192,061,440 B; on one GPU of TP4, 16 heads and 3,072 channels:
// 45 · (1,048,576 + 18,432) = 48,015,360 B; under PP2 a stage holds ceil(45/2) = 23 of the layers:
// 24,541,184 B.
func TestQwen35HybridFootprints(t *testing.T) {
	m, err := LookupModel("Qwen/Qwen3.5-397B-A17B")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckArchitecture(); err != nil {
		t.Fatal(err)
	}
	if m.Params != 396_346_085_376 {
		t.Errorf("params %.0f, want 396,346,085,376", m.Params)
	}
	if active := m.Params - m.ExpertParams()*(1-10.0/512); math.Abs(active-17_348_775_936) > 1 {
		t.Errorf("active params %.4g, want 17,348,775,936", active)
	}
	if got := m.KVBytesPerTokenAs(BF16); got != 30720 {
		t.Errorf("KV bytes per token %d, want 30,720 (15 full-attention layers)", got)
	}
	if got := m.KVBytesPerTokenPerGPU(BF16, 4, 1); got != 15360 {
		t.Errorf("KV bytes per token per GPU at TP4 %d, want 15 · 2 · 1 replicated KV head · 256 · 2 = 15,360", got)
	}
	for _, c := range []struct {
		t, p int
		want int64
	}{{1, 1, 192_061_440}, {4, 1, 48_015_360}, {4, 2, 24_541_184}} {
		if got := m.StateBytesPerSequencePerGPU(c.t, c.p); got != c.want {
			t.Errorf("state per sequence at TP%d PP%d: %d, want %d", c.t, c.p, got, c.want)
		}
	}
	if got := (ModelSpec{}).StateBytesPerSequencePerGPU(4, 1); got != 0 {
		t.Errorf("a model without linear attention holds %d B of state", got)
	}
	// The state of max_sequences running sequences is set aside beside the KV cache: 64 · 48,015,360
	// B = 2.862 GiB per GPU at TP4.
	hw, _ := LookupHardware("b300_sxm")
	c, err := KVCapacity(CapacityInput{Model: m, Hardware: hw, Precisions: Precisions{Weights: FP8, KVCache: FP8},
		Shape: Shape{Tensor: 4, Pipeline: 1, MoETensor: 4, MoEExpert: 1}, MemoryFraction: 0.88, BlockSize: 1, MaxBatchedTokens: 8192, MaxSequences: 64})
	if err != nil {
		t.Fatal(err)
	}
	if want := 64 * 48_015_360.0 / (1 << 30); math.Abs(c.StateGiB-want) > 1e-9 ||
		math.Abs(c.KVGiB-(c.UsableGiB-c.WeightsGiB-c.ActivationGiB-c.ReserveGiB-c.StateGiB)) > 1e-9 {
		t.Errorf("capacity %+v: state %.4f GiB, want %.4f", c, c.StateGiB, want)
	}
	// Tensor 32 divides the 32 attention heads but not the 16 linear-attention key heads.
	var se *ShapeError
	if err := m.CheckShape(Shape{Tensor: 32, Pipeline: 1, MoETensor: 32, MoEExpert: 1}); err == nil || !asShapeError(err, &se) || se.Field != "tensor" ||
		!strings.Contains(err.Error(), "16 linear-attention key heads") {
		t.Errorf("TP32: %v", err)
	}
}

func asShapeError(err error, se **ShapeError) bool {
	e, ok := err.(*ShapeError)
	*se = e
	return ok
}

// The roofline adds, per pass, max(recurrence FLOPs, the state read and written once per
// sequence) and charges full attention on the 15 full-attention layers only. Hand-computed for
// TP4 on B300 (7.75 TB/s, 2,250 BF16 TFLOPS) with the calibrated efficiencies: the state term
// is 2 · 48,015,360 B / (7.75e9 B/ms · η_mem) per sequence, the recurrence 45 · 64 · 8 · 128 ·
// 128 FLOPs per token / (4 · 2,250e9 FLOP/ms · η_attn); a decode pass of 64 sequences is bound
// by the state (64 · 0.0124/η_mem ms against 64 · 4.19e-5/η_attn ms).
func TestRooflineLinearAttention(t *testing.T) {
	m, _ := LookupModel("Qwen/Qwen3.5-397B-A17B")
	hw, _ := LookupHardware("b300_sxm")
	eff := CalibratedEfficiency()
	s := Shape{Tensor: 4, Pipeline: 1, MoETensor: 4, MoEExpert: 1}
	r, err := NewRoofline(m, hw, Precisions{Weights: FP8, KVCache: FP8}, s, eff)
	if err != nil {
		t.Fatal(err)
	}
	stateMs := 2 * 48_015_360 / (7.75e9 * hw.StreamingFraction)
	linMs := 45.0 * 64 * 8 * 128 * 128 / (4 * 2250e9 * eff.Attention)
	if math.Abs(r.stateMsPerSeq/stateMs-1) > 1e-12 || math.Abs(r.linearMsPerToken/linMs-1) > 1e-12 {
		t.Errorf("state %.6g ms/seq (want %.6g), recurrence %.6g ms/token (want %.6g)", r.stateMsPerSeq, stateMs, r.linearMsPerToken, linMs)
	}
	if want := 4 * 32 * 256 * 15.0 / (4 * hw.PeakTFLOPS(FP8) * 1e9 * eff.Attention); math.Abs(r.attnMsPerPair/want-1) > 1e-12 {
		t.Errorf("attention %.6g ms/pair, want %.6g (15 full-attention layers)", r.attnMsPerPair, want)
	}
	b := &Batch{DecodeSteps: 64, SampledTokens: 64, DecodeStepKVTokens: 64 * 2048}
	without := *r
	without.stateMsPerSeq, without.linearMsPerToken = 0, 0
	if got, want := r.PassMs(b)-without.PassMs(b), 64*stateMs; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("decode pass of 64: linear attention adds %.6g ms, want %.6g", got, want)
	}
}

// A config.json of a hybrid model reads its linear-attention layers from layer_types (or, without
// them, full_attention_interval) and the linear_* fields; missing fields are errors naming them.
func TestLoadModelDirLinearAttention(t *testing.T) {
	write := func(cfg string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const base = `"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 10,
		"max_position_embeddings": 64, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8, "attn_output_gate": true,
		"linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_conv_kernel_dim": 4`
	for _, cfg := range []string{
		`{"text_config": {"num_hidden_layers": 4, "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"], ` + base + `}}`,
		`{"num_hidden_layers": 4, "full_attention_interval": 4, ` + base + `}`,
	} {
		m, err := LoadModelDir(write(cfg))
		if err != nil {
			t.Fatal(err)
		}
		// KV: 1 full layer · 2 · 2 · 16 · 2 B = 128; state: 3 · (4 · 8 · 8 · 4 + (2·16 + 32) · 3 · 2) = 3 · 1,408 = 4,224 B.
		if la := m.LinearAttention; la == nil || la.Layers != 3 || !m.AttentionOutputGate || m.KVBytesPerTokenAs(BF16) != 128 ||
			m.StateBytesPerSequencePerGPU(1, 1) != 4224 {
			t.Errorf("%s: linear %+v, gate %v, KV %d, state %d", cfg, la, m.AttentionOutputGate, m.KVBytesPerTokenAs(BF16), m.StateBytesPerSequencePerGPU(1, 1))
		}
	}
	bad := `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "layer_types": ["linear_attention", "full_attention"]}`
	if _, err := LoadModelDir(write(bad)); err == nil || !strings.Contains(err.Error(), "1 linear_attention layers: linear-attention heads and head dims must be > 0") ||
		!strings.Contains(err.Error(), "linear_num_key_heads") {
		t.Errorf("linear layers without their fields: %v", err)
	}
	if _, err := LoadModelDir(write(`{"num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "vocab_size": 10, "max_position_embeddings": 8, "layer_types": ["mamba"]}`)); err == nil ||
		!strings.Contains(err.Error(), `layer_types has "mamba" layers: not modeled`) {
		t.Errorf("unknown layer type: %v", err)
	}
}
