package timing

import (
	"errors"
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// expertPeakTFLOPS is the dense peak a routed-expert kernel of the op database's moe_dtype runs
// against on hw: BF16 for BF16 and weight-only formats (their activations are BF16), FP8 for FP8
// weights or activations, FP4 for NVFP4; 0 for a format not counted.
func expertPeakTFLOPS(hw Hardware, dtype string) float64 {
	switch dtype {
	case "bfloat16", "float16", "w4a16_mxfp4", "int4_wo", "int8_wo":
		return hw.BF16TFLOPS
	case "fp8", "fp8_block", "w4a8_mxfp4_mxfp8", "w4afp8":
		return hw.FP8TFLOPS
	case "nvfp4", "w4a4_mxfp4":
		return hw.FP4TFLOPS
	}
	return 0
}

// TestExpertGEMMFromTheOpDatabase derives CalibratedEfficiency's ExpertGEMM from the kernel
// measurements of the op database (not from any deployment): for every routed-expert series of
// the moe_perf tables measured on one GPU (moe_tp 1, moe_ep 1) under the power_law_1.01
// expert-load distribution, on every GPU and backend, the best achieved fraction of the format's
// dense peak at 4,096 or more tokens, with 2 · tokens · top-k · 3 · hidden · inter FLOPs (a
// SwiGLU expert's three matrices); the shipped value is their median rounded to two digits and
// must stay within 0.01 of it.
// Skips without ../shared, and under -race (it reads every MoE table: about a minute); make test
// runs it without the race detector.
func TestExpertGEMMFromTheOpDatabase(t *testing.T) {
	if raceEnabled {
		t.Skip("reads every MoE table of the op database: run without -race (make test does)")
	}
	db := openDB(t)
	var fractions []float64
	forEachKernelTable(t, func(gpu string, hw Hardware, backend string) {
		shapes, err := db.MoEShapes(gpu, backend, "")
		var missing *opdb.MissingError
		if errors.As(err, &missing) {
			return // e.g. SGLang on b200_sxm measured only whole MoE modules
		} else if err != nil {
			t.Fatal(err)
		}
		for _, s := range shapes {
			peak := expertPeakTFLOPS(hw, s.Dtype)
			if s.TP != 1 || s.EP != 1 || s.Distribution != "power_law_1.01" || peak == 0 {
				continue
			}
			c, err := db.MoE(gpu, backend, "", s)
			if err != nil {
				t.Fatal(err)
			}
			tokens, ms := c.Samples()
			best := 0.0
			for i, n := range tokens {
				if n >= 4096 {
					flop := 2 * n * float64(s.TopK) * 3 * float64(s.Hidden) * float64(s.Inter)
					best = max(best, flop/ms[i]/(peak*tflopsToFlopPerMs))
				}
			}
			if best > 0 {
				fractions = append(fractions, best)
			}
		}
	})
	if len(fractions) < 100 {
		t.Fatalf("%d routed-expert series found, want hundreds", len(fractions))
	}
	med, q1, q3 := medianIQR(fractions)
	t.Logf("%d series: median %.3f of peak, interquartile range %.3f–%.3f", len(fractions), med, q1, q3)
	// 0.2555 today: within 0.01 of the shipped value, not at the mercy of its rounding.
	if want := CalibratedEfficiency().ExpertGEMM; math.Abs(med-want) > 0.01 {
		t.Errorf("the op database's median expert-GEMM fraction is %.3f, more than 0.01 from the shipped ExpertGEMM %.2f", med, want)
	}
}
