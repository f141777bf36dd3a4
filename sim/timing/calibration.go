package timing

// CalibratedEfficiency returns the Efficiency factors servesweep ships. It is a function, not a
// variable, so no caller can change the defaults.
//
// Provenance: fitted with calibrate.Fit (coordinate descent in log space; objective max(a, b) +
// (a + b)/4 with a = TPOT MAPE / 15 % and b = TTFT MAPE / 30 %) on
// ../shared/data/silicon/measured_dense_calibration.csv, 872 rows from AIConfigurator's public
// "silicon sample" (dense Llama-3.1-8B/70B and Qwen3-32B on h100_sxm, b200_sxm and gb200 under
// vLLM, SGLang and TensorRT-LLM, aggregated and disaggregated; no H200 rows), together with the
// measurement factors calibrate.CalibratedFrontendMs and calibrate.CalibratedBurstShares, then
// rounded to two significant digits. With them `servesweep validate` on that file (default
// options) simulates 872 of 872 rows with overall TTFT MAPE 27.6 % (median APE 21.9 %) and TPOT
// MAPE 12.6 % (median APE 9.5 %); per-group figures are in the README.
//
// The values are physically plausible on their own: GEMMs reach 55 % of the dense tensor peak,
// FlashAttention-style kernels 65 % of the BF16 peak, weight and KV streaming 85 % of HBM
// bandwidth (FP8/FP4 weights two thirds of that: scale loads and dequantization), ring
// all-reduces 60 % of the one-way NVLink bandwidth after an 11 µs latency; fixed costs are 0.5 ms
// per pass, 24 µs per layer and 35 µs per sampled sequence.
func CalibratedEfficiency() Efficiency {
	return Efficiency{
		GEMM:               0.55,
		Attention:          0.65,
		Memory:             0.85,
		QuantizedWeights:   0.67,
		Link:               0.6,
		LinkLatencyUs:      11,
		LayerOverheadUs:    24,
		PassOverheadMs:     0.52,
		SequenceOverheadUs: 35,
	}
}
