package timing

import (
	"math"
	"strings"
	"testing"
)

// tinyModel is a made-up model small enough to price by hand:
// per layer q 64×64, k and v 64×32 each, o 64×64, MLP 3×64×128 = 36,864 GEMM params; 2 layers
// → LinearParams 73,728; lm_head 64×100 = 6,400.
func tinyModel() ModelSpec {
	return ModelSpec{ID: "tiny", Layers: 2, Hidden: 64, Heads: 4, KVHeads: 2, HeadDim: 16, Intermediate: 128,
		Vocab: 100, MaxContext: 4096, Params: 73728 + 2*6400}
}

// tinyGPU does 1e6 BF16 FLOP per ms, 2e6 FP8 FLOP per ms, streams 1e6 bytes per ms and links
// at 1e6 bytes per ms.
func tinyGPU() Hardware {
	return Hardware{ID: "tiny-gpu", MemoryGiB: 1, MemoryTBps: 0.001, BF16TFLOPS: 0.001, FP8TFLOPS: 0.002, LinkGBps: 1}
}

// ideal is an Efficiency of 1 with no overheads, so the roofline terms show through.
func ideal() Efficiency {
	return Efficiency{GEMM: 1, ExpertGEMM: 1, Attention: 1, Memory: 1, QuantizedGEMM: 1, QuantizedMemory: 1, FP4Memory: 1, Link: 1}
}

func mustRoofline(t *testing.T, m ModelSpec, hw Hardware, p Precisions, s Shape, e Efficiency) *Roofline {
	t.Helper()
	r, err := NewRoofline(m, hw, p, s, e)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestTinyModelParams(t *testing.T) {
	m := tinyModel()
	if m.LinearParams() != 73728 || m.HeadParams() != 6400 {
		t.Fatalf("linear %v head %v, want 73728 and 6400", m.LinearParams(), m.HeadParams())
	}
	// BF16: 73,728×2 + 12,800×2; FP8: 73,728×1 + 12,800×2; FP4: 73,728×0.5625 + 12,800×2.
	for _, c := range []struct {
		p    Precision
		want float64
	}{{BF16, 173056}, {FP8, 99328}, {FP4, 67072}} {
		if got := m.WeightBytes(c.p); got != c.want {
			t.Errorf("WeightBytes(%s) = %v, want %v", c.p, got, c.want)
		}
	}
	// KV per token: 2 layers × 2 × 2 KV heads × 16 × 2 bytes = 256; FP8 128; TP2: one KV head per
	// GPU = 128; TP4: KV heads replicated, still one per GPU = 128; PP2: one layer = 128.
	if m.KVBytesPerToken() != 256 || m.KVBytesPerTokenAs(FP8) != 128 {
		t.Errorf("KV bytes per token %d / fp8 %d", m.KVBytesPerToken(), m.KVBytesPerTokenAs(FP8))
	}
	for _, c := range []struct{ t, p, want int }{{1, 1, 256}, {2, 1, 128}, {4, 1, 128}, {1, 2, 128}, {2, 2, 64}} {
		if got := m.KVBytesPerTokenPerGPU(BF16, c.t, c.p); got != int64(c.want) {
			t.Errorf("KV per GPU t%d p%d = %d, want %d", c.t, c.p, got, c.want)
		}
	}
}

func TestRooflineHandComputed(t *testing.T) {
	m, hw := tinyModel(), tinyGPU()
	bf16 := Precisions{Weights: BF16, KVCache: BF16}
	// Four decode steps, 100 KV tokens each.
	decode := &Batch{DecodeRequests: 4, DecodeSteps: 4, DecodeStepKVTokens: 400, SampledTokens: 4}

	// TP1: GEMM compute 4 × (2×73,728 + 2×6,400) / 1e6 = 0.641024 ms beats the weight read
	// (73,728×2 + 6,400×2) / 1e6 = 0.160256 ms. Decode attention: compute 400 pairs × 4·4·16·2
	// = 204,800 FLOP → 0.2048 ms beats the KV read 400 × 256 B → 0.1024 ms.
	r := mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := r.PassMs(decode), 0.641024+0.2048; !near(got, want) {
		t.Errorf("TP1 decode = %v, want %v", got, want)
	}

	// TP2 with a 10 µs link latency: GEMM 0.320512 (compute halves), attention max(0.1024,
	// 400×128 B → 0.0512) = 0.1024, all-reduce 2 layers × 2 × (0.010 ms + 2·(1/2)·4 tokens·64·2 B
	// / 1e6) = 0.04 + 0.002048.
	e := ideal()
	e.LinkLatencyUs = 10
	r = mustRoofline(t, m, hw, bf16, Shape{Tensor: 2, Pipeline: 1}, e)
	if got, want := r.PassMs(decode), 0.320512+0.1024+0.04+0.002048; !near(got, want) {
		t.Errorf("TP2 decode = %v, want %v", got, want)
	}

	// Overheads: 1 ms per pass + 2 layers × 100 µs + 4 sequences × 50 µs = 1.4 ms on top.
	e = ideal()
	e.PassOverheadMs, e.LayerOverheadUs, e.SequenceOverheadUs = 1, 100, 50
	r = mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, e)
	if got, want := r.PassMs(decode), 1.4+0.641024+0.2048; !near(got, want) {
		t.Errorf("decode with overheads = %v, want %v", got, want)
	}

	// Efficiency scales its term: half the memory bandwidth doubles a memory-bound pass. One
	// decode step of 10 KV tokens: GEMM max(0.160256, 0.160256/0.5) = 0.320512; attention
	// max(10×512/1e6, 10×256/0.5e6) = 0.00512.
	e = ideal()
	e.Memory = 0.5
	r = mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, e)
	one := &Batch{DecodeRequests: 1, DecodeSteps: 1, DecodeStepKVTokens: 10, SampledTokens: 1}
	if got, want := r.PassMs(one), 0.320512+0.00512; !near(got, want) {
		t.Errorf("memory-bound decode = %v, want %v", got, want)
	}

	// A prefill chunk of 10 new tokens after 20 cached: pairs 10×20 + 10×11/2 = 255. GEMM
	// compute 10 × 147,456 / 1e6 + 1 × 12,800 / 1e6 = 1.4873 ms; prefill attention max(255 × 512
	// / 1e6, 30 × 256 / 1e6) = 0.13056.
	prefill := &Batch{PrefillRequests: 1, PrefillTokens: 10, PrefillContextTokens: 20, PrefillAttentionPairs: 255,
		DecodeRequests: 1, SampledTokens: 1}
	r = mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := r.PassMs(prefill), 1.47456+0.0128+0.13056; !near(got, want) {
		t.Errorf("prefill = %v, want %v", got, want)
	}

	// FP8 weights: GEMM math at 2e6 FLOP/ms, lm_head still BF16:
	// 4 × 147,456 / 2e6 + 4 × 12,800 / 1e6 = 0.294912 + 0.0512; an FP8 KV cache runs the
	// attention math at the FP8 rate, 204,800 / 2e6 = 0.1024, and halves the KV read (0.0512).
	fp8 := Precisions{Weights: FP8, KVCache: FP8}
	r = mustRoofline(t, m, hw, fp8, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := r.PassMs(decode), 0.294912+0.0512+0.1024; !near(got, want) {
		t.Errorf("fp8 decode = %v, want %v", got, want)
	}

	// The same decode with attention computed in BF16 over the FP8 cache (vLLM 0.10.2 on
	// Blackwell): the attention math at the BF16 rate, 204,800 / 1e6 = 0.2048, still above the
	// halved KV read. The prefill chunk's attention likewise: 255 × 512 / 1e6 = 0.13056 in BF16
	// against 0.06528 in FP8; its GEMMs 10 × 147,456 / 2e6 + 12,800 / 1e6 = 0.73728 + 0.0128.
	bf16Attn := Precisions{Weights: FP8, KVCache: FP8, Attention: BF16}
	if got := bf16Attn.AttentionFormat(); got != BF16 {
		t.Errorf("AttentionFormat = %s, want bf16", got)
	}
	if got := fp8.AttentionFormat(); got != FP8 {
		t.Errorf("AttentionFormat unset = %s, want the KV cache's fp8", got)
	}
	r = mustRoofline(t, m, hw, bf16Attn, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := r.PassMs(decode), 0.294912+0.0512+0.2048; !near(got, want) {
		t.Errorf("fp8 decode, bf16 attention = %v, want %v", got, want)
	}
	if got, want := r.PassMs(prefill), 0.73728+0.0128+0.13056; !near(got, want) {
		t.Errorf("fp8 prefill, bf16 attention = %v, want %v", got, want)
	}
	r = mustRoofline(t, m, hw, fp8, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := r.PassMs(prefill), 0.73728+0.0128+0.06528; !near(got, want) {
		t.Errorf("fp8 prefill = %v, want %v", got, want)
	}

	// PP2 with p micro-batches: compute and KV halve, the weight read does not; one stage
	// boundary costs α + (T/2)·64·2 B / 1e6.
	e = ideal()
	e.LinkLatencyUs = 10
	r = mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 2}, e)
	if got, want := r.PassMs(decode), 0.320512+0.1024+0.010+2*64*2/1e6; !near(got, want) {
		t.Errorf("PP2 decode = %v, want %v", got, want)
	}

	if got := r.PassMs(&Batch{}); got != 0 {
		t.Errorf("empty batch = %v, want 0", got)
	}
}

func TestRooflineErrors(t *testing.T) {
	m, hw := tinyModel(), tinyGPU()
	p := Precisions{Weights: BF16, KVCache: BF16}
	bad := ideal()
	bad.Memory = 1.5
	noLink := hw
	noLink.LinkGBps = 0
	broken := m
	broken.Layers = 0
	for _, c := range []struct {
		name string
		m    ModelSpec
		hw   Hardware
		s    Shape
		e    Efficiency
		frag string
	}{
		{"efficiency", m, hw, Shape{Tensor: 1, Pipeline: 1}, bad, "Memory must be in (0, 1]"},
		{"shape", m, hw, Shape{Tensor: 0, Pipeline: 1}, ideal(), "tensor and pipeline must be >= 1"},
		{"no link", m, noLink, Shape{Tensor: 2, Pipeline: 1}, ideal(), "no GPU-to-GPU link"},
		{"model", broken, hw, Shape{Tensor: 1, Pipeline: 1}, ideal(), "layers must be > 0, got 0"},
	} {
		if _, err := NewRoofline(c.m, c.hw, p, c.s, c.e); err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.frag)
		}
	}
	if err := CalibratedEfficiency().Validate(); err != nil {
		t.Errorf("calibrated efficiency invalid: %v", err)
	}
	negMoE := ideal()
	negMoE.MoELayerOverheadUs = -1
	if err := negMoE.Validate(); err == nil || !strings.Contains(err.Error(), "MoELayerOverheadUs must be finite and >= 0, got -1") {
		t.Errorf("negative MoELayerOverheadUs: err = %v", err)
	}
	noFP4 := ideal()
	noFP4.FP4Memory = 0
	if err := noFP4.Validate(); err == nil || !strings.Contains(err.Error(), "FP4Memory must be in (0, 1], got 0") {
		t.Errorf("FP4Memory 0: err = %v", err)
	}
}

// TestRooflineLlama70BTensorParallel: with the calibrated factors, Llama-3.1-70B on H200 decodes
// faster per token at TP4 than at TP2 (a batch of 32 at 2k context).
func TestRooflineLlama70BTensorParallel(t *testing.T) {
	m, err := LookupModel("meta-llama/Llama-3.1-70B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	hw, err := LookupHardware("h200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{DecodeRequests: 32, DecodeSteps: 32, DecodeStepKVTokens: 32 * 2048, SampledTokens: 32}
	var prev float64
	for _, tp := range []int{2, 4, 8} {
		r := mustRoofline(t, m, hw, m.Precisions, Shape{Tensor: tp, Pipeline: 1}, CalibratedEfficiency())
		ms := r.PassMs(b)
		if prev > 0 && ms >= prev {
			t.Errorf("TP%d pass %.2f ms is not faster than TP%d's %.2f ms", tp, ms, tp/2, prev)
		}
		prev = ms
	}
}

// BenchmarkRooflinePassMs prices one mixed pass (a prefill chunk and 64 decode steps).
func BenchmarkRooflinePassMs(b *testing.B) {
	m, _ := LookupModel("meta-llama/Llama-3.1-70B")
	hw, _ := LookupHardware("h200_sxm")
	r, err := NewRoofline(m, hw, Precisions{Weights: FP8, KVCache: FP8}, Shape{Tensor: 4, Pipeline: 1}, CalibratedEfficiency())
	if err != nil {
		b.Fatal(err)
	}
	batch := &Batch{PrefillRequests: 1, PrefillTokens: 2048, PrefillContextTokens: 1024, PrefillAttentionPairs: 2048*1024 + 2048*2049/2,
		DecodeRequests: 64, DecodeSteps: 64, DecodeStepKVTokens: 64 * 3000, SampledTokens: 64}
	var model Model = r
	b.ReportAllocs()
	sum := 0.0
	for i := 0; i < b.N; i++ {
		batch.DecodeStepKVTokens += i & 1
		sum += model.PassMs(batch)
	}
	if sum <= 0 {
		b.Fatal("no time")
	}
}

// A lone request passes every pipeline stage in turn: its prefill under PP k takes at least as
// long as under PP1 (Llama-3.1-8B on H200, one 2,048-token prompt), while a batch of k or more
// sequences splits into k micro-batches and its compute shrinks k-fold.
func TestPipelineDoesNotShortenALoneRequest(t *testing.T) {
	m, err := LookupModel("meta-llama/Meta-Llama-3.1-8B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	hw, err := LookupHardware("h200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	prec := Precisions{Weights: BF16, KVCache: BF16}
	lone := &Batch{PrefillRequests: 1, PrefillTokens: 2048, PrefillAttentionPairs: 2048 * 2049 / 2, DecodeRequests: 1, SampledTokens: 1}
	pp1 := mustRoofline(t, m, hw, prec, Shape{Tensor: 1, Pipeline: 1}, CalibratedEfficiency()).PassMs(lone)
	prev := pp1
	for _, p := range []int{2, 4, 8} {
		ms := mustRoofline(t, m, hw, prec, Shape{Tensor: 1, Pipeline: p}, CalibratedEfficiency()).PassMs(lone)
		if ms < pp1 || ms < prev {
			t.Errorf("PP%d: a lone 2,048-token prefill takes %.2f ms, less than PP1's %.2f (or PP%d's %.2f)", p, ms, pp1, p/2, prev)
		}
		prev = ms
	}
	// Hand check on the tiny model with ideal efficiency: 8 prefills of 16 tokens under PP2
	// split into 2 micro-batches, so the GEMM compute halves against one micro-batch, while one
	// of them alone pays the full compute.
	tm, gpu := tinyModel(), tinyGPU()
	two := mustRoofline(t, tm, gpu, prec, Shape{Tensor: 1, Pipeline: 2}, ideal())
	one := mustRoofline(t, tm, gpu, prec, Shape{Tensor: 1, Pipeline: 1}, ideal())
	gemmOnly := func(r *Roofline, n int) float64 {
		return r.PassMs(&Batch{PrefillRequests: n, PrefillTokens: 16 * n}) -
			// the pipeline send of the micro-batches: (p−1)·(T/m)·h·2 bytes at 1e6 bytes per ms
			float64(16*n)/float64(min(2, n))*64*2/1e6*float64(r.pipeline-1)
	}
	// T tokens cost 2·73,728·T FLOP at 1e6 FLOP per ms (compute-bound above 1 token: the weights
	// are 147,456 bytes + 12,800 lm_head bytes = 0.16 ms to stream).
	// Plus writing the prompt's KV: 256 bytes per token (2 layers × 2 KV heads × 16 dims × K and
	// V × 2 bytes), half per stage, for 128 tokens in 2 micro-batches: 128 × 128 bytes.
	if got, want := gemmOnly(two, 8), 2*73728.0*128/1e6/2+128*128/1e6; !near(got, want) {
		t.Errorf("PP2, 8 sequences: %v ms, want %v (half the PP1 compute)", got, want)
	}
	if got, want := gemmOnly(two, 1), gemmOnly(one, 1); !near(got, want) {
		t.Errorf("PP2, one sequence: %v ms, want PP1's %v", got, want)
	}
}

// decodeBatch is n sequences each decoding one token over ctx cached tokens.
func decodeBatch(n, ctx int) *Batch {
	return &Batch{DecodeRequests: n, DecodeSteps: n, DecodeStepKVTokens: n * ctx, SampledTokens: n}
}

// unmeasured returns hw as a GPU the op database does not measure: it streams at
// Efficiency.Memory and its GEMMs reach Efficiency.GEMM of the peak (1 under ideal()), so hand
// computations can use the datasheet bandwidth and peaks.
func unmeasured(hw Hardware) Hardware {
	hw.StreamingFraction = 0
	hw.GEMMFraction = [3]float64{}
	hw.DecodeAttentionFraction = [2]float64{}
	return hw
}

func mustLookup(t *testing.T, model, gpu string) (ModelSpec, Hardware) {
	t.Helper()
	m, err := LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	hw, err := LookupHardware(gpu)
	if err != nil {
		t.Fatal(err)
	}
	return m, hw
}

// FP8 weights stream half the bytes of BF16. With the shipped factors a lone Llama-3.1-8B decode
// step (1k tokens of context, TP1) is at least 30 % faster with FP8 weights and KV on H100 and on
// H200 (whose faster HBM leaves the larger share to the fixed per-pass costs). With ideal
// efficiency the weight-streaming time halves exactly.
func TestQuantizedWeightsMoveTheirBytes(t *testing.T) {
	bf16 := Precisions{Weights: BF16, KVCache: BF16}
	fp8 := Precisions{Weights: FP8, KVCache: FP8}
	step := decodeBatch(1, 1024)
	for _, c := range []struct {
		gpu   string
		ratio float64
	}{{"h100_sxm", 0.70}, {"h200_sxm", 0.70}} {
		m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", c.gpu)
		b := mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, CalibratedEfficiency()).PassMs(step)
		f := mustRoofline(t, m, hw, fp8, Shape{Tensor: 1, Pipeline: 1}, CalibratedEfficiency()).PassMs(step)
		if f > c.ratio*b {
			t.Errorf("%s decode step: FP8 %.3f ms against BF16 %.3f ms (%.0f %% lower), want at least %.0f %% lower",
				c.gpu, f, b, 100*(1-f/b), 100*(1-c.ratio))
		}
	}
	m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", "h200_sxm")
	hw = unmeasured(hw)
	rb := mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, ideal())
	rf := mustRoofline(t, m, hw, fp8, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := rf.weightMs, (m.LinearParams()*1+m.HeadParams()*2)/(hw.MemoryTBps*1e9); !near(got, want) {
		t.Errorf("FP8 weight streaming %v ms, want %v (1 byte per linear weight, BF16 lm_head)", got, want)
	}
	if got, want := rb.weightMs-rf.weightMs, m.LinearParams()/(hw.MemoryTBps*1e9); !near(got, want) {
		t.Errorf("BF16 − FP8 weight streaming %v ms, want %v (1 byte saved per linear weight)", got, want)
	}
	// FP4: 0.5625 bytes per weight (4-bit values and one FP8 scale per 16).
	r4 := mustRoofline(t, m, hw, Precisions{Weights: FP4, KVCache: FP8}, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if got, want := r4.weightMs, (m.LinearParams()*0.5625+m.HeadParams()*2)/(hw.MemoryTBps*1e9); !near(got, want) {
		t.Errorf("FP4 weight streaming %v ms, want %v", got, want)
	}
	// FP4Memory slows the FP4 linear weights' streaming on a GPU with FP4 tensor cores only (the
	// BF16 lm_head streams at Memory; FP8 weights are untouched): at 0.8 on B200 (8 TB/s),
	// 0.5625/0.8 bytes per linear weight at peak bandwidth. H200 has no FP4 tensor cores: its
	// FP4 weights keep 0.5625 bytes at Memory.
	slow := ideal()
	slow.FP4Memory = 0.8
	fp4 := Precisions{Weights: FP4, KVCache: FP8}
	if got, want := mustRoofline(t, m, hw, fp4, Shape{Tensor: 1, Pipeline: 1}, slow).weightMs, r4.weightMs; got != want {
		t.Errorf("H200 FP4 weight streaming with FP4Memory 0.8: %v ms, want %v (unchanged: no FP4 tensor cores)", got, want)
	}
	b200, err := LookupHardware("b200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	b200 = unmeasured(b200)
	if got, want := mustRoofline(t, m, b200, fp4, Shape{Tensor: 1, Pipeline: 1}, slow).weightMs, (m.LinearParams()*0.5625/0.8+m.HeadParams()*2)/8e9; !near(got, want) {
		t.Errorf("B200 FP4 weight streaming with FP4Memory 0.8: %v ms, want %v", got, want)
	}
	if got, want := mustRoofline(t, m, b200, fp8, Shape{Tensor: 1, Pipeline: 1}, slow).weightMs, (m.LinearParams()*1+m.HeadParams()*2)/8e9; !near(got, want) {
		t.Errorf("B200 FP8 weight streaming with FP4Memory 0.8: %v ms, want %v (unchanged)", got, want)
	}
}

// The fixed overheads stand for host work (PassOverheadMs, SequenceOverheadUs) and per-layer
// latency-bound kernels (LayerOverheadUs): the same on every GPU and parallel shape. Removing
// them lowers any pass by exactly PassOverheadMs + L·LayerOverheadUs + S·SequenceOverheadUs,
// whatever the GPU, TP or PP.
func TestOverheadsHoldAcrossGPUsAndShapes(t *testing.T) {
	eff := CalibratedEfficiency()
	bare := eff
	bare.PassOverheadMs, bare.LayerOverheadUs, bare.SequenceOverheadUs = 0, 0, 0
	step := decodeBatch(8, 2048)
	for _, gpu := range []string{"h100_sxm", "h200_sxm", "b200_sxm", "gb200"} {
		m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", gpu)
		want := eff.PassOverheadMs + float64(m.Layers)*eff.LayerOverheadUs/1000 + 8*eff.SequenceOverheadUs/1000
		for _, s := range []Shape{{Tensor: 1, Pipeline: 1}, {Tensor: 2, Pipeline: 1}, {Tensor: 4, Pipeline: 1}, {Tensor: 8, Pipeline: 1}, {Tensor: 1, Pipeline: 2}, {Tensor: 2, Pipeline: 2}} {
			prec := Precisions{Weights: FP8, KVCache: FP8}
			got := mustRoofline(t, m, hw, prec, s, eff).PassMs(step) - mustRoofline(t, m, hw, prec, s, bare).PassMs(step)
			if !near(got, want) {
				t.Errorf("%s TP%d PP%d: overheads %v ms, want %v", gpu, s.Tensor, s.Pipeline, got, want)
			}
		}
	}
}

// Tensor parallelism shortens small-batch decoding of a small FP8 model: on H100, Llama-3.1-8B
// FP8 at 8 sequences of 1k context, TP2's step is at most 90 % of TP1's and TP4's at most 75 %
// (measured TPOT of small FP8 models falls 11.3 → 9.4 → 7.5 ms from TP1 to TP4, ratios 0.83 and
// 0.66; the fixed overheads, which do not scale, cap how far it can fall).
func TestTensorParallelShortensSmallBatchDecode(t *testing.T) {
	m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm")
	prec := Precisions{Weights: FP8, KVCache: FP8}
	step := decodeBatch(8, 1024)
	tp1 := mustRoofline(t, m, hw, prec, Shape{Tensor: 1, Pipeline: 1}, CalibratedEfficiency()).PassMs(step)
	tp2 := mustRoofline(t, m, hw, prec, Shape{Tensor: 2, Pipeline: 1}, CalibratedEfficiency()).PassMs(step)
	tp4 := mustRoofline(t, m, hw, prec, Shape{Tensor: 4, Pipeline: 1}, CalibratedEfficiency()).PassMs(step)
	if tp2 > 0.9*tp1 || tp4 > 0.75*tp1 {
		t.Errorf("steps TP1 %.3f, TP2 %.3f, TP4 %.3f ms: ratios %.2f and %.2f, want <= 0.90 and 0.75", tp1, tp2, tp4, tp2/tp1, tp4/tp1)
	}
}

// TestRooflineDrafts: speculative decoding's verified drafts are tokens of the pass. Four decode
// steps at 100 KV tokens, each verifying 2 drafts (KV 101 and 102: DraftKVTokens 4 × 203 = 812):
// GEMM compute (4 + 8) × 2×73,728 + (4 + 8) lm_head rows × 2×6,400 = 1,923,072 FLOP → 1.923072 ms;
// attention (400 + 812) pairs × 512 FLOP = 620,544 → 0.620544 ms beats the KV read of the 400
// tokens (0.1024 ms). Fixed and polynomial timing charge the same as without drafts.
func TestRooflineDrafts(t *testing.T) {
	r := mustRoofline(t, tinyModel(), tinyGPU(), Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, ideal())
	plain := Batch{DecodeRequests: 4, DecodeKVTokens: 400, DecodeSteps: 4, DecodeStepKVTokens: 400, SampledTokens: 4, KVCapacityTokens: 4000}
	drafts := plain
	drafts.DraftTokens, drafts.DraftKVTokens = 8, 812
	if got, want := r.PassMs(&drafts), 1.923072+0.620544; !near(got, want) {
		t.Errorf("decode with drafts = %v, want %v", got, want)
	}
	for _, m := range []Model{Fixed{PrefillMs: 30, DecodeMs: 8}, Polynomial{}} {
		if a, b := m.PassMs(&plain), m.PassMs(&drafts); a != b {
			t.Errorf("%T: %v without drafts, %v with", m, a, b)
		}
	}
}

// TestPiecewiseGraphs pins Piecewise: a pass without prefill tokens idles PiecewiseGraphLayerUs
// per layer at the graph boundaries (tiny model: 2 layers, 0.014 ms), on the GPU's critical
// path, so overlap scheduling does not hide it; a pass with prefill tokens runs without graphs
// in either mode and is unchanged. r itself is unchanged.
func TestPiecewiseGraphs(t *testing.T) {
	e := ideal()
	e.PassOverheadMs = 0.1
	r := mustRoofline(t, tinyModel(), tinyGPU(), Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, e)
	decode := &Batch{DecodeRequests: 4, DecodeSteps: 4, DecodeStepKVTokens: 400, SampledTokens: 4}
	mixed := &Batch{PrefillRequests: 1, PrefillTokens: 100, PrefillAttentionPairs: 5050, SampledTokens: 5,
		DecodeRequests: 4, DecodeSteps: 4, DecodeStepKVTokens: 400}
	const boundaries = 2 * 7.0 / 1000
	p := r.Piecewise()
	if got, want := p.PassMs(decode), r.PassMs(decode)+boundaries; !near(got, want) {
		t.Errorf("piecewise decode pass = %v ms, want %v", got, want)
	}
	if got, want := p.PassMs(mixed), r.PassMs(mixed); got != want {
		t.Errorf("piecewise mixed pass = %v ms, want the full-graph %v", got, want)
	}
	if got, want := p.Overlapped().PassMs(decode), r.Overlapped().PassMs(decode)+boundaries; !near(got, want) {
		t.Errorf("piecewise overlapped decode pass = %v ms, want %v", got, want)
	}
	if got := p.PassMs(&Batch{}); got != 0 {
		t.Errorf("piecewise empty batch = %v, want 0", got)
	}
	if r.piecewiseMs != 0 {
		t.Errorf("Piecewise changed the original: %v ms of boundaries", r.piecewiseMs)
	}
}

// TestOverlappedHidesHostTime pins Overlapped: the host part of a pass (PassOverheadMs) runs
// beside the rest (GPU time, the per-layer overhead and the per-sequence time, which stay on the
// critical path), so a pass lasts the longer of the two. r itself is unchanged.
func TestOverlappedHidesHostTime(t *testing.T) {
	m, hw := tinyModel(), tinyGPU()
	bf16 := Precisions{Weights: BF16, KVCache: BF16}
	decode := &Batch{DecodeRequests: 4, DecodeSteps: 4, DecodeStepKVTokens: 400, SampledTokens: 4}
	gpu := 0.641024 + 0.2048 // TestRooflineHandComputed's TP1 decode
	for _, c := range []struct {
		name                   string
		passMs, layerUs, seqUs float64
		serial, overlapped     float64
	}{
		// Host 0.1 ms; the rest is GPU 0.845824 + layers 2 × 0.1 + sequences 4 × 0.05 =
		// 1.245824 ms: the host hides.
		{"GPU-bound", 0.1, 100, 50, 0.3 + 0.2 + gpu, 0.2 + 0.2 + gpu},
		// Host 4 ms exceeds the rest, 0.845824 + 0.2 + 4 × 0.05 = 1.245824 ms: the pass is the
		// host's.
		{"host-bound", 4, 100, 50, 4 + 0.2 + 0.2 + gpu, 4},
	} {
		e := ideal()
		e.PassOverheadMs, e.LayerOverheadUs, e.SequenceOverheadUs = c.passMs, c.layerUs, c.seqUs
		r := mustRoofline(t, m, hw, bf16, Shape{Tensor: 1, Pipeline: 1}, e)
		o := r.Overlapped()
		if got := o.PassMs(decode); !near(got, c.overlapped) {
			t.Errorf("%s: overlapped pass = %v ms, want %v", c.name, got, c.overlapped)
		}
		if got := r.PassMs(decode); !near(got, c.serial) {
			t.Errorf("%s: Overlapped changed the original: pass = %v ms, want %v", c.name, got, c.serial)
		}
		if got := o.PassMs(&Batch{}); got != 0 {
			t.Errorf("%s: overlapped empty batch = %v, want 0", c.name, got)
		}
	}
}

// A GPU the op database measures streams weights at its own StreamingFraction whatever
// Efficiency.Memory says; one it does not measure (a100_sxm) at Efficiency.Memory. Llama-3.1-8B
// BF16 on one GPU: weightMs = (linear + lm_head parameters) × 2 bytes / (bandwidth × fraction).
func TestWeightStreamingAtTheGPUsOwnFraction(t *testing.T) {
	eff := CalibratedEfficiency()
	eff.Memory = 0.5
	for _, c := range []struct {
		gpu      string
		fraction float64
	}{{"h100_sxm", 0.84}, {"b200_sxm", 0.76}, {"a100_sxm", 0.5}} {
		m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", c.gpu)
		r := mustRoofline(t, m, hw, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, eff)
		want := (m.LinearParams() + m.HeadParams()) * 2 / (hw.MemoryTBps * 1e9 * c.fraction)
		if !near(r.weightMs, want) {
			t.Errorf("%s: weight streaming %v ms, want %v (fraction %v)", c.gpu, r.weightMs, want, c.fraction)
		}
	}
}

// A GPU the op database measures reads the KV cache at its own DecodeAttentionFraction of the
// cache's format (BF16 or FP8), not at its weight-streaming share; one it does not measure
// (a100_sxm) at Efficiency.Memory. Llama-3.1-8B on one GPU: kvMsPerToken = 32 layers × 2 × 8 KV
// heads × 128 × bytes per element / (bandwidth × fraction), and a decode step over 4,096 cached
// tokens, memory-bound, costs 4,096 of it more than one over none.
func TestKVReadsAtTheGPUsDecodeAttentionFraction(t *testing.T) {
	eff := CalibratedEfficiency()
	eff.Memory = 0.5
	for _, c := range []struct {
		gpu      string
		kv       Precision
		fraction float64
	}{{"h100_sxm", BF16, 0.92}, {"h100_sxm", FP8, 0.86}, {"h200_sxm", FP8, 0.67}, {"b200_sxm", FP8, 0.86}, {"a100_sxm", BF16, 0.5}} {
		m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", c.gpu)
		r := mustRoofline(t, m, hw, Precisions{Weights: BF16, KVCache: c.kv}, Shape{Tensor: 1, Pipeline: 1}, eff)
		want := 32 * 2 * 8 * 128 * c.kv.WeightBytes() / (hw.MemoryTBps * 1e9 * c.fraction)
		if !near(r.kvMsPerToken, want) {
			t.Errorf("%s %s KV: %v ms per token, want %v (fraction %v)", c.gpu, c.kv, r.kvMsPerToken, want, c.fraction)
		}
		if got := r.PassMs(decodeBatch(1, 4096)) - r.PassMs(decodeBatch(1, 0)); !near(got, 4096*want) {
			t.Errorf("%s %s KV: a step over 4,096 cached tokens costs %v ms more than over none, want %v", c.gpu, c.kv, got, 4096*want)
		}
	}
}

// TestAllReduceScale checks the group size each GPU's all-reduce share is read at (hand values
// from the catalog's AllReduceFraction and PooledAllReduceFraction 0.69).
func TestAllReduceScale(t *testing.T) {
	for _, c := range []struct {
		gpu  string
		gpus int
		want float64
	}{
		{"h100_sxm", 2, 0.65 / 0.69},
		{"h100_sxm", 3, 0.65 / 0.69}, // the largest measured size not above 3: 2
		{"h100_sxm", 8, 0.93 / 0.69},
		{"h100_sxm", 16, 0.93 / 0.69}, // past 8: the 8-GPU share
		{"b200_sxm", 8, 0.70 / 0.69},
		{"gb200", 8, 0.69 / 0.69}, // measured up to 4 GPUs
		{"a100_sxm", 8, 1},        // not measured: a typical group
	} {
		hw, err := LookupHardware(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		if got := hw.allReduceScale(c.gpus); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s on %d GPUs: allReduceScale %g, want %g", c.gpu, c.gpus, got, c.want)
		}
	}
}

// TestGEMMScale checks the format each GPU's GEMM share is read at (hand values from the
// catalog's GEMMFraction and the pooled shares 0.74, 0.53 and 0.34), that the roofline's
// compute-bound GEMM and lm_head times divide by it, and that no GEMM runs past the peak.
func TestGEMMScale(t *testing.T) {
	for _, c := range []struct {
		gpu  string
		p    Precision
		want float64
	}{
		{"h100_sxm", FP8, 0.53 / 0.53},
		{"h100_sxm", BF16, 0.77 / 0.74},
		{"h100_sxm", FP4, 0.77 / 0.74}, // no FP4 tensor cores: multiplied in BF16 (PeakTFLOPS)
		{"b200_sxm", FP8, 0.48 / 0.53},
		{"b200_sxm", FP4, 0.41 / 0.34},
		{"b300_sxm", FP4, 0.30 / 0.34},
		{"a100_sxm", FP8, 1}, // not measured: a typical GPU
	} {
		hw, err := LookupHardware(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		if got := hw.gemmScale(c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s %s: gemmScale %g, want %g", c.gpu, c.p, got, c.want)
		}
	}
	eff := CalibratedEfficiency()
	m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", "b200_sxm")
	r := mustRoofline(t, m, hw, Precisions{Weights: FP4, KVCache: FP8}, Shape{Tensor: 2, Pipeline: 1}, eff)
	// 2·params FLOPs per token over two GPUs at the FP4 peak × GEMM × QuantizedGEMM × 0.41/0.34.
	want := 2 * m.LinearParams() / (2 * 9000 * 1e9 * eff.GEMM * eff.QuantizedGEMM * 0.41 / 0.34)
	if !near(r.gemmMsPerToken, want) {
		t.Errorf("b200_sxm FP4 TP2: %v ms of GEMM per token, want %v", r.gemmMsPerToken, want)
	}
	// The lm_head multiplies in BF16: 2·head params per sample over two GPUs at the BF16 peak ×
	// GEMM × B200's BF16 share over the median, 0.66/0.74.
	wantHead := 2 * m.HeadParams() / (2 * 2250 * 1e9 * eff.GEMM * 0.66 / 0.74)
	if !near(r.headMsPerSample, wantHead) {
		t.Errorf("b200_sxm TP2: %v ms of lm_head per sample, want %v", r.headMsPerSample, wantHead)
	}
	// Never past the peak: with GEMM 1 (ideal), B200's NVFP4 GEMMs (scale 0.41/0.34 > 1) run at the
	// FP4 peak, and H100's BF16 lm_head (0.77/0.74 > 1) at the BF16 peak.
	r = mustRoofline(t, m, hw, Precisions{Weights: FP4, KVCache: FP8}, Shape{Tensor: 2, Pipeline: 1}, ideal())
	if want := 2 * m.LinearParams() / (2 * 9000 * 1e9); !near(r.gemmMsPerToken, want) {
		t.Errorf("b200_sxm FP4 TP2 at GEMM 1: %v ms of GEMM per token, want the peak's %v", r.gemmMsPerToken, want)
	}
	m, hw = mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm")
	r = mustRoofline(t, m, hw, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, ideal())
	if want := 2 * m.HeadParams() / (989.5 * 1e9); !near(r.headMsPerSample, want) {
		t.Errorf("h100_sxm BF16 at GEMM 1: %v ms of lm_head per sample, want the peak's %v", r.headMsPerSample, want)
	}
}
