package timing

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// systemsDir is the performance database subset beside the repository.
const systemsDir = "../../../shared/data/aic-systems"

func openDB(tb testing.TB) *opdb.DB {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(systemsDir, "h100_sxm.yaml")); err != nil {
		tb.Skipf("performance database not available at %s: %v", systemsDir, err)
	}
	db, err := opdb.Open(systemsDir)
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// gridModel is a 2-layer dense model whose per-GPU GEMM shapes at TP1 all lie on the database's
// measured n and k values, so a pass time is a sum of table rows.
var gridModel = ModelSpec{ID: "grid-test", Layers: 2, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
	Intermediate: 8192, Vocab: 65536, MaxContext: 8192, Params: 1e9}

// testEff has round host overheads and HBM efficiency 0.85.
var testEff = Efficiency{GEMM: 1, ExpertGEMM: 1, Attention: 1, Memory: 0.85, QuantizedGEMM: 1, QuantizedMemory: 1, FP4Memory: 1, Link: 1,
	PassOverheadMs: 0.4, SequenceOverheadUs: 35}

// One decode step of a sequence with 1,024 tokens in KV on h100_sxm under vLLM 0.24.0, TP1,
// BF16, composed by hand from the database's rows (gemm_perf.parquet at m = 1, bfloat16;
// generation_attention_perf.parquet at batch 1, 32 heads, 8 KV heads, head dim 128, KV length
// 1,024, bfloat16 KV):
//
//	qkv     n 6144,  k 4096: 0.019898666275872123 ms
//	o       n 4096,  k 4096: 0.015045333239767285
//	gate_up n 16384, k 4096: 0.046015110280778676
//	down    n 4096,  k 8192: 0.030247999562157526
//	attention               : 0.01357866699496905
//	elementwise: (6·4096 + 3·8192)·2 bytes / (3.35 TB/s · 0.85) = 98,304 / 2.8475e9 ms
//	lm_head n 65536, k 4096: 0.21803822782304552 (once)
//	host: 0.4 ms per pass + 0.035 ms per sampled sequence
//
// pass = 2 · (sum of the per-layer terms) + lm_head + 0.435 ms.
func TestOpLevelPassFromTableValues(t *testing.T) {
	db := openDB(t)
	hw, err := LookupHardware("h100_sxm")
	if err != nil {
		t.Fatal(err)
	}
	ol, err := NewOpLevel(OpLevelSource{DB: db, GPU: "h100_sxm", Backend: "vllm"}, gridModel, unmeasured(hw),
		Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, testEff)
	if err != nil {
		t.Fatal(err)
	}
	layer := 0.019898666275872123 + 0.015045333239767285 + 0.046015110280778676 + 0.030247999562157526 +
		0.01357866699496905 + 98304/2.8475e9
	want := 2*layer + 0.21803822782304552 + 0.4 + 0.035
	b := &Batch{DecodeRequests: 1, DecodeKVTokens: 1024, DecodeSteps: 1, DecodeStepKVTokens: 1024, SampledTokens: 1}
	if got := ol.PassMs(b); math.Abs(got-want) > 1e-12 {
		t.Errorf("pass %.15g ms, want %.15g", got, want)
	}
	if ol.Provider != "op_level vllm gemm 0.24.0, attention 0.24.0 on h100_sxm" {
		t.Errorf("provider %q", ol.Provider)
	}
	if got := ol.PassMs(&Batch{}); got != 0 {
		t.Errorf("empty pass %v", got)
	}
	// Overlapped: the host's 0.4 ms per pass hide behind the GPU's 2 · layer + lm_head (≈ 0.47
	// ms) and the sequence's 0.035 ms, which stay.
	if got, want := ol.Overlapped().PassMs(b), 2*layer+0.21803822782304552+0.035; math.Abs(got-want) > 1e-12 {
		t.Errorf("overlapped pass %.15g ms, want %.15g", got, want)
	}
	if got := ol.PassMs(b); math.Abs(got-(2*layer+0.21803822782304552+0.435)) > 1e-12 {
		t.Errorf("Overlapped changed the original: pass %.15g ms", got)
	}
	// Piecewise: the decode pass idles 7 µs at each of its 2 layers' graph boundaries.
	if got := ol.Piecewise().PassMs(b); math.Abs(got-(want+0.014)) > 1e-12 {
		t.Errorf("piecewise pass %.15g ms, want %.15g", got, want+0.014)
	}
}

// Tensor parallelism adds two all-reduces per layer (the backend's custom all-reduce) and
// shrinks each GPU's GEMMs; the provider names the tables that priced the collectives; a lone request's pass under PP2
// is never shorter than under PP1.
func TestOpLevelParallelism(t *testing.T) {
	db := openDB(t)
	m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", "h200_sxm")
	prec := Precisions{Weights: FP8, KVCache: FP8}
	build := func(s Shape) *OpLevel {
		ol, err := NewOpLevel(OpLevelSource{DB: db, GPU: "h200_sxm", Backend: "vllm"}, m, hw, prec, s, testEff)
		if err != nil {
			t.Fatal(err)
		}
		return ol
	}
	tp1, tp2, pp2 := build(Shape{Tensor: 1, Pipeline: 1}), build(Shape{Tensor: 2, Pipeline: 1}), build(Shape{Tensor: 1, Pipeline: 2})
	if tp2.allReduce == nil || tp2.allReduce.Source != "vllm" || tp2.Provider != "op_level vllm gemm 0.24.0, attention 0.24.0, custom all-reduce 0.24.0 on h200_sxm" {
		t.Errorf("TP2: all-reduce %+v, provider %q", tp2.allReduce, tp2.Provider)
	}
	if !strings.HasSuffix(pp2.Provider, ", nccl 2.29.2 on h200_sxm") {
		t.Errorf("PP2: provider %q, want the NCCL version of its sends", pp2.Provider)
	}
	prefill := &Batch{PrefillRequests: 1, PrefillTokens: 2048, PrefillAttentionPairs: 2048 * 2049 / 2, DecodeRequests: 1,
		DecodeKVTokens: 2048, SampledTokens: 1}
	if a, b := tp1.PassMs(prefill), tp2.PassMs(prefill); !(b < a) {
		t.Errorf("2k prefill: TP2 %v ms not below TP1 %v ms", b, a)
	}
	if a, b := tp1.PassMs(prefill), pp2.PassMs(prefill); !(b >= a) {
		t.Errorf("lone 2k prefill: PP2 %v ms below PP1 %v ms", b, a)
	}
}

// What the database lacks stops the build with the database's error: a format without GEMM
// rows (nvfp4 on Hopper), a version it does not hold.
func TestOpLevelMissingTables(t *testing.T) {
	db := openDB(t)
	m, hw := mustLookup(t, "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm")
	var me *opdb.MissingError
	_, err := NewOpLevel(OpLevelSource{DB: db, GPU: "h100_sxm", Backend: "vllm"}, m, hw, Precisions{Weights: FP4, KVCache: FP8}, Shape{Tensor: 1, Pipeline: 1}, testEff)
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "nvfp4") {
		t.Errorf("fp4 on h100: %v", err)
	}
	_, err = NewOpLevel(OpLevelSource{DB: db, GPU: "h100_sxm", Backend: "vllm", Version: "0.6.0"}, m, hw, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, testEff)
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "available: 0.24.0") {
		t.Errorf("vllm 0.6.0: %v", err)
	}
}

// BenchmarkOpLevelPassMs prices a mixed pass (one 512-token chunk after 1,536 cached, 63 decode
// steps) on Llama-3.1-8B, h200_sxm, TP2: ns/op and 0 allocs.
func BenchmarkOpLevelPassMs(b *testing.B) {
	db := openDB(b)
	m, err := ResolveModel("meta-llama/Meta-Llama-3.1-8B-Instruct")
	if err != nil {
		b.Fatal(err)
	}
	hw, _ := LookupHardware("h200_sxm")
	ol, err := NewOpLevel(OpLevelSource{DB: db, GPU: "h200_sxm", Backend: "vllm"}, m, hw, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 2, Pipeline: 1}, testEff)
	if err != nil {
		b.Fatal(err)
	}
	batch := &Batch{PrefillRequests: 1, PrefillTokens: 512, PrefillContextTokens: 1536, PrefillAttentionPairs: 512*1536 + 512*513/2,
		DecodeRequests: 64, DecodeKVTokens: 64 * 1500, DecodeSteps: 63, DecodeStepKVTokens: 63 * 1500, SampledTokens: 64}
	b.ReportAllocs()
	for b.Loop() {
		ol.PassMs(batch)
	}
}
