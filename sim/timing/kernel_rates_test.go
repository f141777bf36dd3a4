package timing

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// kernelGPUs are the op database GPUs the kernel-derived factors come from.
var kernelGPUs = []string{"h100_sxm", "h200_sxm", "b200_sxm", "gb200", "b300_sxm", "gb300"}

// kernelBackends are the backends whose kernel tables the derivations read.
var kernelBackends = []string{"trtllm", "sglang", "vllm"}

// forEachKernelTable calls fn for every kernel GPU, with its Hardware, and backend; an unknown
// GPU fails the test.
func forEachKernelTable(t *testing.T, fn func(gpu string, hw Hardware, backend string)) {
	t.Helper()
	for _, gpu := range kernelGPUs {
		hw, err := LookupHardware(gpu)
		if err != nil {
			t.Fatal(err)
		}
		for _, backend := range kernelBackends {
			fn(gpu, hw, backend)
		}
	}
}

// medianIQR is the median of xs and its lower and upper quartiles (xs sorted in place; the
// quartiles are the elements at len/4 and 3·len/4); NaNs when xs is empty.
func medianIQR(xs []float64) (med, q1, q3 float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	slices.Sort(xs)
	med = xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + med) / 2
	}
	return med, xs[len(xs)/4], xs[3*len(xs)/4]
}

// TestMemoryFromTheOpDatabase derives CalibratedEfficiency's Memory from the kernel
// measurements of the op database (not from any deployment): the median achieved fraction of
// the HBM bandwidth of the BF16 GEMMs with m <= 8 tokens and n·k >= 8,192² weights (2nk bytes
// streamed once: the weight streaming of a decode pass over a model's large matrices), on
// h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm and gb300 under TensorRT-LLM, SGLang and vLLM
// (each backend's newest version, read through opdb). The shipped value must stay within 0.01
// of it. Skips without ../shared, and under -race (it reads every GEMM table); make test runs it
// without the race detector.
func TestMemoryFromTheOpDatabase(t *testing.T) {
	if raceEnabled {
		t.Skip("reads every GEMM table of the op database: run without -race (make test does)")
	}
	db := openDB(t)
	var stream []float64
	forEachKernelTable(t, func(gpu string, hw Hardware, backend string) {
		g, err := db.GEMM(gpu, backend, "", "bfloat16")
		var missing *opdb.MissingError
		if errors.As(err, &missing) {
			t.Fatalf("%s %s: %v (every GPU and backend has a BF16 GEMM table today)", gpu, backend, err)
		} else if err != nil {
			t.Fatal(err)
		}
		for nk, c := range g.Cells() {
			if nk[0]*nk[1] < 8192*8192 {
				continue
			}
			ms, lat := c.Samples()
			for i, m := range ms {
				if m <= 8 {
					stream = append(stream, 2*nk[0]*nk[1]/lat[i]/(hw.MemoryTBps*tbpsToBytesPerMs))
				}
			}
		}
	})
	// 18 tables (6 GPUs × 3 backends) of 696 samples each today.
	if len(stream) < 12000 {
		t.Fatalf("%d weight-streaming GEMM samples found, want 12,000 or more", len(stream))
	}
	got, q1, q3 := medianIQR(stream)
	t.Logf("%d samples: median %.4f of the HBM bandwidth, interquartile range %.3f–%.3f", len(stream), got, q1, q3)
	// 0.7915 today.
	if want := CalibratedEfficiency().Memory; math.Abs(got-want) > 0.01 {
		t.Errorf("the op database's median weight-streaming fraction is %.4f, more than 0.01 from the shipped Memory %.2f", got, want)
	}
}
