package timing

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
	"gonum.org/v1/gonum/stat"
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
	perGPU := map[string][]float64{}
	forEachKernelTable(t, func(gpu string, hw Hardware, backend string) {
		g, err := db.GEMM(gpu, backend, "", "bfloat16")
		var missing *opdb.MissingError
		if errors.As(err, &missing) {
			t.Fatalf("%s %s: %v (every GPU and backend has a BF16 GEMM table today)", gpu, backend, err)
		} else if err != nil {
			t.Fatal(err)
		}
		weightStreamingSamples(g, 8192*8192, func(weights, latencyMs float64) {
			f := 2 * weights / latencyMs / (hw.MemoryTBps * tbpsToBytesPerMs)
			stream = append(stream, f)
			perGPU[gpu] = append(perGPU[gpu], f)
		})
	})
	// Each GPU's own fraction (Hardware.StreamingFraction) is the median of its three tables'
	// samples pooled.
	for _, gpu := range kernelGPUs {
		got, q1, q3 := medianIQR(perGPU[gpu])
		hw, _ := LookupHardware(gpu)
		t.Logf("%s: %d samples, median %.4f, interquartile range %.3f–%.3f", gpu, len(perGPU[gpu]), got, q1, q3)
		if math.Abs(got-hw.StreamingFraction) > 0.01 {
			t.Errorf("%s: the op database's median weight-streaming fraction is %.4f, more than 0.01 from its StreamingFraction %.2f", gpu, got, hw.StreamingFraction)
		}
	}
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

// weightStreamingSamples calls fn with the weight count n·k and the latency in ms of every
// measured GEMM of g with at most 8 tokens (m <= 8) over n·k >= minWeights weights: the GEMMs a
// decode pass runs, whose time is the streaming of their weights plus a fixed floor.
func weightStreamingSamples(g *opdb.GEMM, minWeights float64, fn func(weights, latencyMs float64)) {
	for nk, c := range g.Cells() {
		if nk[0]*nk[1] < minWeights {
			continue
		}
		ms, lat := c.Samples()
		for i, m := range ms {
			if m <= 8 {
				fn(nk[0]*nk[1], lat[i])
			}
		}
	}
}

// streamingRate fits latency = floor + bytes / rate by least squares (gonum's
// stat.LinearRegression) over the GEMMs of g with m <= 8 tokens and n·k >= 2,048² weights of
// bytesPerWeight bytes each, and returns the rate in bytes/ms and the number of samples. Fitting
// the floor separates a format's fixed per-GEMM latency (activation quantization, launch) from
// its streaming rate, which a median of bytes / latency at one size mixes.
func streamingRate(g *opdb.GEMM, bytesPerWeight float64) (rate float64, n int) {
	var bytes, latency []float64
	weightStreamingSamples(g, 2048*2048, func(weights, latencyMs float64) {
		bytes = append(bytes, weights*bytesPerWeight)
		latency = append(latency, latencyMs)
	})
	if len(bytes) < 2 {
		return math.NaN(), len(bytes)
	}
	_, msPerByte := stat.LinearRegression(bytes, latency, nil, false)
	return 1 / msPerByte, len(bytes)
}

// TestFP4MemoryFromTheOpDatabase derives CalibratedEfficiency's FP4Memory from the kernel
// measurements of the op database (not from any deployment), and checks QuantizedMemory's 1 for
// FP8 the same way: per GPU and backend (each backend's newest version), the weight-streaming
// rate of the FP8 and NVFP4 GEMMs of at most 8 tokens divided by that of the BF16 GEMMs, each
// rate fitted with a fixed per-GEMM floor (streamingRate); the shipped factors must stay within
// 0.01 (QuantizedMemory × FP4Memory) and 0.03 (QuantizedMemory) of the medians over the tables. NVFP4 tables exist on the Blackwell
// GPUs only. Skips without ../shared, and under -race.
func TestFP4MemoryFromTheOpDatabase(t *testing.T) {
	if raceEnabled {
		t.Skip("reads every GEMM table of the op database: run without -race (make test does)")
	}
	db := openDB(t)
	var fp8, fp4 []float64
	forEachKernelTable(t, func(gpu string, hw Hardware, backend string) {
		rate := func(dtype string, bytes float64) float64 {
			g, err := db.GEMM(gpu, backend, "", dtype)
			var missing *opdb.MissingError
			if errors.As(err, &missing) {
				return math.NaN()
			} else if err != nil {
				t.Fatal(err)
			}
			r, n := streamingRate(g, bytes)
			if n < 1000 {
				t.Fatalf("%s %s %s: %d weight-streaming samples, want 1,000 or more", gpu, backend, dtype, n)
			}
			if !(r > 0) || math.IsInf(r, 0) {
				t.Fatalf("%s %s %s: fitted streaming rate %v bytes/ms, want finite and > 0", gpu, backend, dtype, r)
			}
			return r
		}
		bf16 := rate("bfloat16", BF16.WeightBytes())
		if math.IsNaN(bf16) {
			t.Fatalf("%s %s: no BF16 GEMM table (every GPU and backend has one today)", gpu, backend)
		}
		if r := rate("fp8", FP8.WeightBytes()); !math.IsNaN(r) {
			fp8 = append(fp8, r/bf16)
		}
		if r := rate("nvfp4", FP4.WeightBytes()); !math.IsNaN(r) {
			fp4 = append(fp4, r/bf16)
		}
	})
	// 18 FP8 tables (6 GPUs × 3 backends) and 12 NVFP4 ones (4 Blackwell GPUs × 3) today.
	if len(fp8) < 18 || len(fp4) < 12 {
		t.Fatalf("%d FP8 and %d NVFP4 GEMM tables found, want 18 and 12", len(fp8), len(fp4))
	}
	med8, lo8, hi8 := medianIQR(fp8)
	med4, lo4, hi4 := medianIQR(fp4)
	t.Logf("streaming rate against BF16: FP8 median %.4f (IQR %.3f–%.3f), NVFP4 median %.4f (IQR %.3f–%.3f)", med8, lo8, hi8, med4, lo4, hi4)
	eff := CalibratedEfficiency()
	if fp4 := eff.QuantizedMemory * eff.FP4Memory; math.Abs(med4-fp4) > 0.01 {
		t.Errorf("NVFP4 GEMMs stream at %.4f of the BF16 rate in the op database, more than 0.01 from the shipped QuantizedMemory × FP4Memory %.2f", med4, fp4)
	}
	if math.Abs(med8-eff.QuantizedMemory) > 0.03 {
		t.Errorf("FP8 GEMMs stream at %.4f of the BF16 rate in the op database, more than 0.03 from the shipped QuantizedMemory %.2f", med8, eff.QuantizedMemory)
	}
}

// TestLinkLatencyFromTheOpDatabase derives CalibratedEfficiency's LinkLatencyUs from the
// collective measurements of the op database (not from any deployment): the median latency of an
// 8 KiB all-reduce in each backend's own all-reduce table (TensorRT-LLM, SGLang and vLLM, the
// kernels those engines run on a decode pass's small messages, captured in CUDA graphs) on
// h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm and gb300 at 2, 4 and 8 GPUs where measured:
// 4.6 µs today over 48 series. The shipped value must stay within 0.3 µs of it.
//
// It also logs the bandwidth those tables and NCCL's reach on 64 MiB messages (a prefill chunk
// of 4,096 tokens of Llama-3.1-70B), 0.61 of the one-way link: Link stays fitted on deployments
// (CalibratedEfficiency says why). Skips without ../shared.
func TestLinkLatencyFromTheOpDatabase(t *testing.T) {
	db := openDB(t)
	const small, large = 8 << 10, 64 << 20
	var alphas, links []float64
	add := func(c *opdb.Collective, hw Hardware, gpus int, custom bool) {
		a := c.Latency(small) * 1000 // µs
		if custom {
			alphas = append(alphas, a)
		}
		n := float64(gpus)
		links = append(links, 2*(n-1)/n*large/((c.Latency(large)*1000-a)*1e-6)/(hw.LinkGBps*1e9))
	}
	for _, gpu := range kernelGPUs {
		hw, err := LookupHardware(gpu)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpus := range []int{2, 4, 8} {
			for _, backend := range kernelBackends {
				c, err := db.CustomAllReduce(gpu, backend, "", gpus)
				var missing *opdb.MissingError
				if errors.As(err, &missing) {
					continue // the GB200 and GB300 tables stop at 4 GPUs (an NVL4 tray)
				} else if err != nil {
					t.Fatal(err)
				}
				add(c, hw, gpus, true)
			}
			if c, err := db.NCCL(gpu, "", "all_reduce", "half", gpus); err == nil {
				add(c, hw, gpus, false)
			}
		}
	}
	if len(alphas) < 48 || len(links) < 64 {
		t.Fatalf("%d custom all-reduce and %d all-reduce series in all, want 48 and 64 (today's database)", len(alphas), len(links))
	}
	a, aq1, aq3 := medianIQR(alphas)
	l, lq1, lq3 := medianIQR(links)
	t.Logf("8 KiB all-reduce latency median %.2f µs (IQR %.1f–%.1f); 64 MiB bus bandwidth median %.3f of the one-way link (IQR %.2f–%.2f)", a, aq1, aq3, l, lq1, lq3)
	if want := CalibratedEfficiency().LinkLatencyUs; math.Abs(a-want) > 0.3 {
		t.Errorf("the op database's median small all-reduce latency is %.2f µs, more than 0.3 µs from the shipped LinkLatencyUs %g", a, want)
	}
}

// TestAllToAllFromTheOpDatabase derives CalibratedEfficiency's AllToAllLatencyUs from NCCL's
// alltoall measurements in the op database (not from any deployment),
// on h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm and gb300 at 2, 4 and 8 GPUs where measured
// (16 series today): the median latency of an 8 KiB all-to-all; the shipped value must stay
// within 0.3 µs of it. It logs the median of (n−1)/n · 8 MiB / (latency − that series' 8 KiB
// latency) / LinkGBps too, the share of the one-way link an 8 MiB all-to-all reaches (the size
// of a decode pass's dispatch of 64 tokens per rank to 8 of DeepSeek-R1's 256 experts, 64 × 8 ×
// 7,168 × 2 bytes = 7 MiB), which is not shipped (CalibratedEfficiency says why). Skips without
// ../shared.
func TestAllToAllFromTheOpDatabase(t *testing.T) {
	db := openDB(t)
	const small, large = 8 << 10, 8 << 20
	var alphas, links []float64
	for _, gpu := range kernelGPUs {
		hw, err := LookupHardware(gpu)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpus := range []int{2, 4, 8} {
			c, err := db.NCCL(gpu, "", "alltoall", "half", gpus)
			var missing *opdb.MissingError
			if errors.As(err, &missing) {
				continue // the GB200 and GB300 tables stop at 4 GPUs
			} else if err != nil {
				t.Fatal(err)
			}
			a := c.Latency(small) * 1000
			n := float64(gpus)
			alphas = append(alphas, a)
			links = append(links, (n-1)/n*large/((c.Latency(large)*1000-a)*1e-6)/(hw.LinkGBps*1e9))
		}
	}
	if len(alphas) < 16 {
		t.Fatalf("%d NCCL alltoall series, want 16 (today's database)", len(alphas))
	}
	a, aq1, aq3 := medianIQR(alphas)
	l, lq1, lq3 := medianIQR(links)
	t.Logf("8 KiB all-to-all latency median %.2f µs (IQR %.1f–%.1f); 8 MiB all-to-all at %.3f of the one-way link (IQR %.2f–%.2f)", a, aq1, aq3, l, lq1, lq3)
	eff := CalibratedEfficiency()
	if math.Abs(a-eff.AllToAllLatencyUs) > 0.3 {
		t.Errorf("the op database's median small all-to-all latency is %.2f µs, more than 0.3 µs from the shipped AllToAllLatencyUs %g", a, eff.AllToAllLatencyUs)
	}
}

// TestAllReduceFractionFromTheOpDatabase recomputes Hardware.AllReduceFraction: per GPU and group
// size, the bus bandwidth of NCCL's 128 MiB BF16 all-reduce as a share of the one-way link, after
// the 8 KiB all-reduce's latency; and PooledAllReduceFraction, their median. Each shipped value
// must be within 0.005 of the tables'; a size the tables lack must be shipped as 0.
func TestAllReduceFractionFromTheOpDatabase(t *testing.T) {
	db := openDB(t)
	const small, large = 8 << 10, 128 << 20
	var all []float64
	for _, gpu := range kernelGPUs {
		hw, err := LookupHardware(gpu)
		if err != nil {
			t.Fatal(err)
		}
		for i, gpus := range []int{2, 4, 8} {
			c, err := db.NCCL(gpu, "", "all_reduce", "half", gpus)
			var missing *opdb.MissingError
			if errors.As(err, &missing) {
				if hw.AllReduceFraction[i] != 0 {
					t.Errorf("%s on %d GPUs: no NCCL all-reduce table, but AllReduceFraction %g", gpu, gpus, hw.AllReduceFraction[i])
				}
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			n := float64(gpus)
			got := 2 * (n - 1) / n * large / ((c.Latency(large) - c.Latency(small)) * 1e-3) / (hw.LinkGBps * 1e9)
			all = append(all, got)
			t.Logf("%s on %d GPUs: %.4f of the link", gpu, gpus, got)
			if math.Abs(got-hw.AllReduceFraction[i]) > 0.005 {
				t.Errorf("%s on %d GPUs: the tables' 128 MiB all-reduce reaches %.4f of the link, AllReduceFraction says %g", gpu, gpus, got, hw.AllReduceFraction[i])
			}
		}
	}
	if len(all) < 16 {
		t.Fatalf("%d group sizes measured, want 16 (today's database)", len(all))
	}
	med, q1, q3 := medianIQR(all)
	t.Logf("median %.4f (interquartile range %.2f–%.2f)", med, q1, q3)
	if math.Abs(med-PooledAllReduceFraction) > 0.005 {
		t.Errorf("median all-reduce share %.4f, PooledAllReduceFraction %g", med, PooledAllReduceFraction)
	}
}

// TestGEMMFractionFromTheOpDatabase recomputes Hardware.GEMMFraction: per GPU and operand format
// (bfloat16, fp8, nvfp4), the median over the three backends' gemm_perf tables pooled of
// 2·m·n·k / latency / the format's dense peak, for GEMMs of 1,024–8,192 tokens over n, k >=
// 4,096; and per format the Pooled…GEMMFraction, the median over its GPUs. Each shipped value
// must be within 0.006 of the tables' (two digits); a format no table measures must be shipped as
// 0. Skips without ../shared, and under -race (it reads every GEMM table).
func TestGEMMFractionFromTheOpDatabase(t *testing.T) {
	if raceEnabled {
		t.Skip("reads every GEMM table of the op database: run without -race (make test does)")
	}
	db := openDB(t)
	pooled := [3]float64{PooledBF16GEMMFraction, PooledFP8GEMMFraction, PooledFP4GEMMFraction}
	// 6 GPUs measure BF16 and FP8, the 4 Blackwell ones NVFP4, today.
	wantGPUs := [3]int{6, 6, 4}
	for i, dtype := range []string{"bfloat16", "fp8", "nvfp4"} {
		var medians []float64
		for _, gpu := range kernelGPUs {
			hw, err := LookupHardware(gpu)
			if err != nil {
				t.Fatal(err)
			}
			peak := [3]float64{hw.BF16TFLOPS, hw.FP8TFLOPS, hw.FP4TFLOPS}[i]
			var shares []float64
			for _, backend := range kernelBackends {
				g, err := db.GEMM(gpu, backend, "", dtype)
				var missing *opdb.MissingError
				if errors.As(err, &missing) {
					continue
				} else if err != nil {
					t.Fatal(err)
				}
				computeBoundSamples(g, func(flop, latencyMs float64) {
					shares = append(shares, flop/(latencyMs*tflopsToFlopPerMs)/peak)
				})
			}
			if len(shares) == 0 {
				if hw.GEMMFraction[i] != 0 {
					t.Errorf("%s %s: no GEMM table, but GEMMFraction %g", gpu, dtype, hw.GEMMFraction[i])
				}
				continue
			}
			got, q1, q3 := medianIQR(shares)
			medians = append(medians, got)
			t.Logf("%s %s: %d samples, median %.4f of the peak, interquartile range %.3f–%.3f", gpu, dtype, len(shares), got, q1, q3)
			if math.Abs(got-hw.GEMMFraction[i]) > 0.006 {
				t.Errorf("%s %s: the tables' compute-bound GEMMs reach %.4f of the peak, GEMMFraction says %g", gpu, dtype, got, hw.GEMMFraction[i])
			}
		}
		if len(medians) != wantGPUs[i] {
			t.Fatalf("%s: %d GPUs measured, want %d (today's database)", dtype, len(medians), wantGPUs[i])
		}
		med, _, _ := medianIQR(medians)
		t.Logf("%s: median over GPUs %.4f", dtype, med)
		if math.Abs(med-pooled[i]) > 0.006 {
			t.Errorf("%s: median compute-bound GEMM share %.4f, pooled value shipped %g", dtype, med, pooled[i])
		}
	}
}

// computeBoundSamples calls fn with the FLOPs (2·m·n·k) and latency in ms of every measured GEMM
// of g with 1,024 <= m <= 8,192 tokens and n, k >= 4,096: a prefill chunk through a large
// model's projections, where the time is the multiply.
func computeBoundSamples(g *opdb.GEMM, fn func(flop, latencyMs float64)) {
	for nk, c := range g.Cells() {
		if nk[0] < 4096 || nk[1] < 4096 {
			continue
		}
		ms, lat := c.Samples()
		for i, m := range ms {
			if m >= 1024 && m <= 8192 {
				fn(2*m*nk[0]*nk[1], lat[i])
			}
		}
	}
}
