package timing

import (
	"errors"
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
	"gonum.org/v1/gonum/mat"
)

// mlaContextLengths and mlaContextBatches are the prompt lengths and batch sizes at which
// TestMLAAttentionFromTheOpDatabase reads each context-MLA table (interpolated where a table
// measured others).
var (
	mlaContextLengths = []float64{512, 1024, 2048, 4096, 8192, 16384}
	mlaContextBatches = []float64{1, 2, 4, 8}
)

// TestMLAAttentionFromTheOpDatabase derives CalibratedEfficiency's MLAAttention and
// MLAPrefillTokenPairs from the kernel measurements of the op database (not from any
// deployment): for every context-MLA table with an FP8 KV cache (TensorRT-LLM and SGLang on
// h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm and gb300; 128, 32 and 16 heads per GPU, as
// attention-DP and tensor-parallel shapes of DeepSeek run), a least-squares fit (gonum) of the
// latency at prompt lengths 512-16,384 and batches 1-8 to α·pairs + τ·tokens (pairs = batch ·
// length²/2, tokens = batch · length) gives the rate on pairs, 2·H·(128 + 64 + 128) FLOPs each
// (DeepSeek's qk_nope, qk_rope and v head dims), as a fraction of the GPU's FP8 peak, and the
// fixed cost per token as τ/α pairs. The shipped values are the medians (rounded to two digits
// and to 10 pairs) and must stay within 0.01 and 20 pairs of them.
// Skips without ../shared.
func TestMLAAttentionFromTheOpDatabase(t *testing.T) {
	db := openDB(t)
	var rates, tokenPairs []float64
	forEachKernelTable(t, func(gpu string, hw Hardware, backend string) {
		for _, heads := range []int{128, 32, 16} {
			c, err := db.ContextMLA(gpu, backend, "", heads, "fp8")
			var missing *opdb.MissingError
			if errors.As(err, &missing) {
				continue // vLLM's tables measure no MLA kernels
			} else if err != nil {
				t.Fatal(err)
			}
			var x, y []float64
			for _, s := range mlaContextLengths {
				for _, b := range mlaContextBatches {
					x = append(x, b*s*s/2, b*s)
					y = append(y, c.Latency(b, s))
				}
			}
			var fit mat.VecDense
			if err := fit.SolveVec(mat.NewDense(len(y), 2, x), mat.NewVecDense(len(y), y)); err != nil {
				t.Fatal(err)
			}
			alpha, tau := fit.AtVec(0), fit.AtVec(1)
			rate := 2 * float64(heads) * (128 + 64 + 128) / alpha / (hw.FP8TFLOPS * tflopsToFlopPerMs)
			rates = append(rates, rate)
			tokenPairs = append(tokenPairs, tau/alpha)
			t.Logf("%-9s %-7s %3d heads: %.3f of the FP8 peak, %.0f pairs per token", gpu, backend, heads, rate, tau/alpha)
		}
	})
	// 12 tables × 3 head counts today.
	if len(rates) < 30 {
		t.Fatalf("%d context-MLA tables fitted, want 30 or more", len(rates))
	}
	med, q1, q3 := medianIQR(rates)
	t.Logf("rate: median %.3f of the FP8 peak, interquartile range %.3f–%.3f", med, q1, q3)
	// 0.342 and 591 today.
	if want := CalibratedEfficiency().MLAAttention; math.Abs(med-want) > 0.01 {
		t.Errorf("the op database's median context-MLA rate is %.3f, more than 0.01 from the shipped MLAAttention %.2f", med, want)
	}
	med, q1, q3 = medianIQR(tokenPairs)
	t.Logf("fixed cost: median %.0f pairs per token, interquartile range %.0f–%.0f", med, q1, q3)
	if want := CalibratedEfficiency().MLAPrefillTokenPairs; math.Abs(med-want) > 20 {
		t.Errorf("the op database's median context-MLA cost per token is %.0f pairs, more than 20 from the shipped MLAPrefillTokenPairs %.0f", med, want)
	}
}

// A latent-attention prefill is priced at MLAAttention with MLAPrefillTokenPairs per prompt
// token, a decode step at Attention. DeepSeek-R1 on a GB200 attention-DP rank with an FP8 cache
// (the FP8 peak, 5,000 TFLOPS): a pair costs 2 · 128 heads · (128 + 64 + 128) · 61 layers =
// 4,997,120 FLOPs, so 1,000 prompt tokens (500,500 pairs) with 100 pairs per token at 0.25 cost
// 600,500 · 4,997,120 / (5e12 · 0.25) = 2.40062 ms, against 500,500 · 4,997,120 / (5e12 · 0.5)
// = 1.00042 ms with MLAAttention 0 (Attention's 0.5): 1.40020 ms more, everything else equal.
func TestRooflineMLAPrefillAttention(t *testing.T) {
	m, hw := mustLookup(t, "deepseek-ai/DeepSeek-R1", "gb200")
	prec := Precisions{Weights: FP4, KVCache: FP8}
	s := Shape{Tensor: 1, Pipeline: 1, AttentionData: 4, MoEExpert: 4}
	eff := ideal()
	eff.Attention = 0.5
	plain := mustRoofline(t, m, hw, prec, s, eff)
	eff.MLAAttention, eff.MLAPrefillTokenPairs = 0.25, 100
	kernels := mustRoofline(t, m, hw, prec, s, eff)
	prefill := &Batch{PrefillRequests: 1, PrefillTokens: 1000, PrefillAttentionPairs: 500500, SampledTokens: 1}
	if got, want := kernels.PassMs(prefill)-plain.PassMs(prefill), 1.40020; math.Abs(got-want) > 1e-4 {
		t.Errorf("prefill of 1,000 tokens: %.5f ms more at the kernels' rate, want %.5f", got, want)
	}
	decode := &Batch{DecodeRequests: 64, DecodeSteps: 64, DecodeStepKVTokens: 64 * 8192, SampledTokens: 64}
	if a, b := kernels.PassMs(decode), plain.PassMs(decode); a != b {
		t.Errorf("decode step %v ms with the prefill kernels' rate, %v without: want equal", a, b)
	}
}
