package timing

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// A decode pass of DeepSeek-R1 on h200_sxm under SGLang 0.5.14, TP8 with EP8 (FP8 block-scaled
// experts, BF16 KV), n sequences each attending 2,048 tokens, composed by hand:
//
//	every layer (61): MLA projections (fp8 GEMMs at m = n: down n 2112 k 7168, q_b n 3072 k 1536,
//	                  kv_b n 4096 k 512, o n 7168 k 2048) + generation MLA (16 heads, bf16 KV,
//	                  generation_mla_perf.parquet at batch n, isl 1 + step 2047)
//	                  + custom all-reduce (8 GPUs, n·7168·2 bytes)
//	dense layers (3): gate_up n 4608 k 7168, down n 7168 k 2304 + all-reduce
//	                  + n·(6·7168 + 3·18432/8)·2 bytes / (4.8 TB/s · 0.85)
//	MoE layers (58):  router (bf16 n 256 k 7168) + routed experts (moe_perf.parquet fp8_block,
//	                  7168/2048/top-8/256 experts, moe_tp 1, moe_ep 8, power_law_1.01 at n
//	                  tokens) + shared expert (gate_up n 512 k 7168, down n 7168 k 256)
//	                  + all-reduce + n·(6·7168 + 3·2048/8)·2 bytes / (4.8 TB/s · 0.85)
//	lm_head (bf16 n 16160 k 7168) + 0.4 ms + n · 0.035 ms
//
// The MoE and MLA latencies are the table rows themselves (at 1 and 64, measured points, which
// the running maximum leaves unchanged); the GEMMs and the all-reduce are read through the
// database's own lookups and their running maximum (opdb.Curve.Monotone).
func TestOpLevelMoEDecodeFromTableValues(t *testing.T) {
	db := openDB(t)
	m, hw := mustLookup(t, "deepseek-ai/DeepSeek-R1", "h200_sxm")
	ol, err := NewOpLevel(OpLevelSource{DB: db, GPU: "h200_sxm", Backend: "sglang"}, m, unmeasured(hw), m.Precisions,
		Shape{Tensor: 8, Pipeline: 1, MoEExpert: 8}, testEff)
	if err != nil {
		t.Fatal(err)
	}
	fp8, err := db.GEMM("h200_sxm", "sglang", "", "fp8")
	if err != nil {
		t.Fatal(err)
	}
	bf, err := db.GEMM("h200_sxm", "sglang", "", "bfloat16")
	if err != nil {
		t.Fatal(err)
	}
	ar, err := db.CustomAllReduce("h200_sxm", "sglang", "", 8)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[int]struct{ mla, moe float64 }{
		1:  {0.01711200028657913, 0.09201343536376953},
		64: {0.055395197868347165, 0.3412518310546875},
	}
	for _, n := range []int{1, 64} {
		x := float64(n)
		g := func(n, k float64) float64 { return fp8.AtNK(n, k).Monotone().Latency(x) }
		allReduce := ar.Monotone().Latency(x * 7168 * 2)
		bw := 4.8 * 1e9 * 0.85
		if hw.MemoryTBps != 4.8 {
			t.Fatalf("h200_sxm bandwidth %v, the hand computation assumes 4.8 TB/s", hw.MemoryTBps)
		}
		attn := g(2112, 7168) + g(3072, 1536) + g(4096, 512) + g(7168, 2048) + rows[n].mla + allReduce
		dense := g(4608, 7168) + g(7168, 2304) + allReduce + x*(6*7168+3*18432/8)*2/bw
		moe := bf.AtNK(256, 7168).Monotone().Latency(x) + rows[n].moe + g(512, 7168) + g(7168, 256) + allReduce + x*(6*7168+3*2048/8)*2/bw
		want := 61*attn + 3*dense + 58*moe + bf.AtNK(16160, 7168).Monotone().Latency(x) + 0.4 + x*0.035
		b := &Batch{DecodeRequests: n, DecodeSteps: n, DecodeKVTokens: 2048 * n, DecodeStepKVTokens: 2048 * n, SampledTokens: n}
		if got := ol.PassMs(b); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%d sequences: %.9f ms, hand-composed %.9f ms", n, got, want)
		}
	}
	for _, s := range []string{"mla 0.5.14", "moe 0.5.14 fp8_block power_law_1.01", "custom all-reduce"} {
		if !strings.Contains(ol.Provider, s) {
			t.Errorf("provider %q lacks %q", ol.Provider, s)
		}
	}
}

// Pass time never falls as the batch grows, for decode batches and prefill chunks, on every
// MoE shape the database prices (tensor-parallel, expert-parallel with attention-DP, GQA MoE).
func TestOpLevelMoEMonotoneInTokens(t *testing.T) {
	db := openDB(t)
	for _, c := range []struct {
		model, gpu, backend string
		s                   Shape
	}{
		{"deepseek-ai/DeepSeek-R1", "h200_sxm", "sglang", Shape{Tensor: 8, Pipeline: 1, MoEExpert: 8}},
		{"deepseek-ai/DeepSeek-R1", "h200_sxm", "sglang", Shape{Tensor: 1, Pipeline: 1, AttentionData: 8, MoEExpert: 8}},
		{"Qwen/Qwen3-235B-A22B", "h100_sxm", "trtllm", Shape{Tensor: 4, Pipeline: 1, MoEExpert: 4}},
		{"Qwen/Qwen3-30B-A3B", "h200_sxm", "vllm", Shape{Tensor: 2, Pipeline: 1, MoETensor: 2}},
	} {
		m, hw := mustLookup(t, c.model, c.gpu)
		ol, err := NewOpLevel(OpLevelSource{DB: db, GPU: c.gpu, Backend: c.backend}, m, hw, m.Precisions, c.s, CalibratedEfficiency())
		if err != nil {
			t.Errorf("%s on %s %s: %v", c.model, c.gpu, c.backend, err)
			continue
		}
		prevD, prevP := 0.0, 0.0
		for n := 1; n <= 1024; n++ {
			d := ol.PassMs(&Batch{DecodeRequests: n, DecodeSteps: n, DecodeKVTokens: 1000 * n, DecodeStepKVTokens: 1000 * n, SampledTokens: n})
			p := 8 * n
			pre := ol.PassMs(&Batch{PrefillRequests: 1, PrefillTokens: p, PrefillAttentionPairs: int64(p) * int64(p+1) / 2, SampledTokens: 1})
			if d < prevD || pre < prevP {
				t.Errorf("%s %+v: %d decode steps %.4f ms (before %.4f), %d-token prefill %.4f ms (before %.4f)", c.model, c.s, n, d, prevD, p, pre, prevP)
				break
			}
			prevD, prevP = d, pre
		}
	}
}

// A shape the database lacks is refused with an error naming it, so forward_model auto falls
// back to the roofline: DeepSeek-R1's FP8 experts on gb200 under TensorRT-LLM (its MoE table
// holds only w4a8_mxfp4_mxfp8 shapes), toyMoE's shape anywhere, and MLA on vLLM (only whole
// attention modules measured).
func TestOpLevelMoERefusesMissingShape(t *testing.T) {
	db := openDB(t)
	m, hw := mustLookup(t, "deepseek-ai/DeepSeek-R1", "gb200")
	_, err := NewOpLevel(OpLevelSource{DB: db, GPU: "gb200", Backend: "trtllm"}, m, hw, m.Precisions, Shape{Tensor: 4, Pipeline: 1, MoEExpert: 4}, testEff)
	var me *opdb.MissingError
	if !errors.As(err, &me) || !strings.Contains(me.What, "MoE shape (moe fp8_block hidden 7168, inter 2048, topk 8, experts 256, moe_tp 1, moe_ep 4") {
		t.Errorf("DeepSeek-R1 on gb200 trtllm: %v", err)
	}
	hw100, _ := LookupHardware("h100_sxm")
	_, err = NewOpLevel(OpLevelSource{DB: db, GPU: "h100_sxm", Backend: "sglang"}, toyMoE, hw100, Precisions{Weights: BF16, KVCache: BF16}, Shape{Tensor: 1, Pipeline: 1}, testEff)
	if !errors.As(err, &me) {
		t.Errorf("toy MoE: %v", err)
	}
	m, hw = mustLookup(t, "deepseek-ai/DeepSeek-R1", "h200_sxm")
	_, err = NewOpLevel(OpLevelSource{DB: db, GPU: "h200_sxm", Backend: "vllm"}, m, hw, m.Precisions, Shape{Tensor: 8, Pipeline: 1, MoEExpert: 8}, testEff)
	var ue *UnsupportedModelError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "mla_context_module_perf.parquet") {
		t.Errorf("DeepSeek-R1 on h200 vllm: %v", err)
	}
	// A distribution the table lacks is a missing shape too.
	_, err = NewOpLevel(OpLevelSource{DB: db, GPU: "h200_sxm", Backend: "sglang", MoEDistribution: "zipf"}, m, hw, m.Precisions, Shape{Tensor: 8, Pipeline: 1, MoEExpert: 8}, testEff)
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "power_law_1.01") {
		t.Errorf("distribution zipf: %v", err)
	}
	// Redundant experts: the tables measure none, so op_level refuses rather than drop their bytes.
	_, err = NewOpLevel(OpLevelSource{DB: db, GPU: "h200_sxm", Backend: "sglang"}, m, hw, m.Precisions, Shape{Tensor: 8, Pipeline: 1, MoEExpert: 8, RedundantExperts: 32}, testEff)
	if err == nil || !strings.Contains(err.Error(), "redundant_experts 32") || !strings.Contains(err.Error(), "use forward_model roofline") {
		t.Errorf("redundant experts under op_level: %v", err)
	}
}
