package timing

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Hardware is one GPU as its public datasheet describes it. Throughputs are dense (without
// structured sparsity), per GPU.
type Hardware struct {
	// ID is the catalog id used in engine.hardware (AIConfigurator's system names).
	ID string
	// MemoryGiB is the device memory in GiB (2^30 bytes) as the datasheet's "GB" figure; the
	// driver reports slightly less, which the KV capacity's runtime reserve absorbs.
	MemoryGiB float64
	// MemoryTBps is the device memory bandwidth in decimal TB/s.
	MemoryTBps float64
	// BF16TFLOPS, FP8TFLOPS and FP4TFLOPS are dense tensor-core peaks in decimal TFLOP/s; 0 means
	// the GPU has no tensor cores for that format (its GEMMs then run weight-only quantized at
	// the BF16 rate, see Roofline).
	BF16TFLOPS, FP8TFLOPS, FP4TFLOPS float64
	// LinkGBps is the GPU-to-GPU bandwidth in one direction in decimal GB/s: NVLink (half the
	// datasheet's bidirectional figure), or PCIe for GPUs without NVLink.
	LinkGBps float64
	// LinkDomainGPUs is how many of these GPUs reach each other at LinkGBps: an HGX or DGX
	// baseboard's 8 (A100, H100, H200, B200, B300; an L40S server's 8 over PCIe), a GB200 or
	// GB300 NVL72 rack's 72 (NVIDIA's system datasheets). A worker of more GPUs sends part of its
	// collectives over the network between nodes (WorkerSpansLinkDomain), which the roofline
	// prices at NetworkGBps and its all-reduces at NetworkAllReduceLatencyUs.
	LinkDomainGPUs int
	// NodeGPUs is how many of these GPUs one host (one process launch) drives: 8 on an HGX or
	// DGX system and an L40S server, 4 on a GB200 or GB300 compute tray. A worker of more GPUs
	// needs a multi-node launch.
	NodeGPUs int
	// StreamingFraction is the share of MemoryTBps that weight-streaming GEMMs reach on this GPU,
	// in (0, 1]: the median, over AIConfigurator's op database (../shared/data/aic-systems, the
	// gemm_perf tables of TensorRT-LLM, SGLang and vLLM, each backend's newest version), of the
	// achieved fraction of BF16 GEMMs of at most 8 tokens over weights of 8,192² elements or more
	// (TestMemoryFromTheOpDatabase recomputes it). It is a kernel measurement, not fitted on any
	// deployment. 0 means the database does not measure the GPU; it then streams at
	// Efficiency.Memory, the median over every GPU the database measures.
	StreamingFraction float64
	// AllReduceFraction is the bus bandwidth, as a share of LinkGBps, that a 128 MiB BF16
	// all-reduce reaches on groups of 2, 4 and 8 of these GPUs (indexes 0, 1, 2; 0 where not
	// measured): NCCL's all_reduce measurements in AIConfigurator's op database
	// (../shared/data/aic-systems, nccl 2.29.2), bus bandwidth = 2(t−1)/t · bytes / (latency −
	// the 8 KiB all-reduce's latency) (TestAllReduceFractionFromTheOpDatabase recomputes them).
	// 128 MiB is one all-reduce of an 8,192-token prefill chunk of a model of hidden size 8,192,
	// where a pass's all-reduce time is mostly bytes. The share depends on the GPU and the group
	// size (NVLink switches on H100 and H200 reduce in the switch and reach 0.93–0.95 at 8 GPUs;
	// B200 reaches 0.70), which one Efficiency.Link cannot say; the roofline scales Link by
	// allReduceScale. A kernel measurement, not fitted on any deployment.
	AllReduceFraction [3]float64
	// GEMMFraction is the share of the format's dense peak (BF16TFLOPS, FP8TFLOPS, FP4TFLOPS)
	// that compute-bound GEMMs reach on this GPU, for BF16, FP8 and NVFP4 operands (indexes 0, 1,
	// 2; 0 where not measured): the median, over AIConfigurator's op database
	// (../shared/data/aic-systems, the gemm_perf tables of TensorRT-LLM, SGLang and vLLM, each
	// backend's newest version, pooled), of 2·m·n·k / latency / peak for GEMMs of 1,024–8,192
	// tokens (m) over weights of n, k >= 4,096 (a prefill chunk through a large model's
	// projections) (TestGEMMFractionFromTheOpDatabase recomputes them). The share depends on the
	// GPU and the format (NVFP4 GEMMs reach 0.41 of B200's FP4 peak and 0.30 of B300's, FP8 ones
	// 0.53 of H100's FP8 peak and 0.48 of B200's), which one Efficiency.GEMM cannot say; the
	// roofline scales GEMM by gemmScale. A kernel measurement, not fitted on any deployment.
	GEMMFraction [3]float64
	// DecodeAttentionFraction is the share of MemoryTBps at which decode-attention kernels read
	// the KV cache on this GPU, per KV-cache format (BF16, FP8): the median over the op
	// database's generation-attention tables (TensorRT-LLM, SGLang and vLLM; 1 to 8 KV heads of
	// 128 per GPU) of each table's rate fitted with a fixed and a per-sequence cost beside it
	// (TestDecodeAttentionFractionFromTheOpDatabase recomputes them). 0 where unmeasured: such a
	// GPU reads KV at its weight-streaming share (streamingFraction). A kernel measurement, not
	// fitted on any deployment.
	DecodeAttentionFraction [2]float64
	// NetworkGBps is the bandwidth of the network port each GPU has to other nodes, one
	// direction, decimal GB/s (0: not in the catalog): the collectives of a worker wider than
	// LinkDomainGPUs send the share bound for other link domains through it (the roofline prices
	// it at Efficiency.Link, as the link).
	NetworkGBps float64
}

// PooledAllReduceFraction is the median of every measured Hardware.AllReduceFraction (16 values
// today: 6 GPUs, groups of 2, 4 and 8 GPUs where measured; TestAllReduceFractionFromTheOpDatabase
// recomputes it): the share of the link a typical group's large all-reduce reaches.
// Efficiency.Link is the fraction of the link bandwidth the engines' all-reduces reach on such a
// group; allReduceScale relates a GPU and group size to it.
const PooledAllReduceFraction = 0.69

// PooledBF16GEMMFraction, PooledFP8GEMMFraction and PooledFP4GEMMFraction are, per operand
// format, the median of the measured Hardware.GEMMFraction of that format (6 GPUs in BF16 and
// FP8, the 4 Blackwell ones in NVFP4 today; TestGEMMFractionFromTheOpDatabase recomputes them):
// the share of the format's peak a typical GPU's compute-bound GEMM reaches. Efficiency.GEMM
// (with QuantizedGEMM for FP8 and FP4 weights) is the share of the peak the engines' GEMMs reach
// on such a GPU; gemmScale relates a GPU to it.
const (
	PooledBF16GEMMFraction = 0.74
	PooledFP8GEMMFraction  = 0.53
	PooledFP4GEMMFraction  = 0.34
)

// gemmScale is how much faster, relative to its format's peak, compute-bound GEMMs with weights
// stored as p run on h than on a typical GPU: GEMMFraction of the format multiplied (the one
// PeakTFLOPS prices: BF16 where h lacks p) divided by that format's pooled median
// (PooledBF16GEMMFraction, PooledFP8GEMMFraction, PooledFP4GEMMFraction); 1 where the op database
// does not measure it.
func (h Hardware) gemmScale(p Precision) float64 {
	i := 0
	switch {
	case p == FP8 && h.FP8TFLOPS > 0:
		i = 1
	case p == FP4 && h.FP4TensorCores():
		i = 2
	}
	if f := h.GEMMFraction[i]; f > 0 {
		return f / [3]float64{PooledBF16GEMMFraction, PooledFP8GEMMFraction, PooledFP4GEMMFraction}[i]
	}
	return 1
}

// allReduceScale is how much faster than a typical group an all-reduce over gpus of h moves its
// bytes: AllReduceFraction at the largest measured group size not above gpus (the smallest
// measured one below 2 … 8 when none is), divided by PooledAllReduceFraction; 1 for a GPU
// without measurements. Group sizes past 8 (multi-node) take the 8-GPU share: their all-reduce
// is at least as slow, which the share of an NVLink domain does not say.
func (h Hardware) allReduceScale(gpus int) float64 {
	f := 0.0
	for i, n := range [3]int{2, 4, 8} {
		if v := h.AllReduceFraction[i]; v > 0 && (n <= gpus || f == 0) {
			f = v
		}
	}
	if f == 0 {
		return 1
	}
	return f / PooledAllReduceFraction
}

// WorkerSpansLinkDomain reports whether a worker of gpus GPUs of h spans more than one link
// domain (LinkDomainGPUs; false when the catalog does not say).
func (h Hardware) WorkerSpansLinkDomain(gpus int) bool {
	return h.LinkDomainGPUs > 0 && gpus > h.LinkDomainGPUs
}

// streamingFraction is the share of the memory bandwidth weight streaming reaches on h:
// its own measured StreamingFraction, or eff.Memory for a GPU the op database does not measure.
func (h Hardware) streamingFraction(eff Efficiency) float64 {
	if h.StreamingFraction > 0 {
		return h.StreamingFraction
	}
	return eff.Memory
}

// kvStreamingFraction is the share of the memory bandwidth at which attention kernels read a
// KV cache stored as kv on h: its measured DecodeAttentionFraction of that format (FP8's for
// the 8-bit and narrower formats), or the weight-streaming share (streamingFraction) where
// the op database does not measure it.
func (h Hardware) kvStreamingFraction(kv Precision, eff Efficiency) float64 {
	i := 1
	if kv == BF16 {
		i = 0
	}
	if f := h.DecodeAttentionFraction[i]; f > 0 {
		return f
	}
	return h.streamingFraction(eff)
}

// FP4TensorCores reports whether the GPU multiplies FP4 (NVFP4) operands natively (FP4TFLOPS >
// 0: Blackwell). Without them FP4 weights run through dequantizing kernels at a lower format's
// peak (PeakTFLOPS), and Efficiency.FP4Memory, measured on the FP4 kernels, does not apply.
func (h Hardware) FP4TensorCores() bool { return h.FP4TFLOPS > 0 }

// PeakTFLOPS is the dense tensor-core peak for GEMMs whose weights are stored as p: the
// format's own rate, or the BF16 rate when the GPU lacks that format (weight-only quantization:
// weights are dequantized to BF16 before the multiply, as vLLM's Marlin kernels do for FP8 on
// Ampere and for FP4 on Hopper, and as the op database's Hopper tables measure 4-bit experts:
// w4a16 only).
func (h Hardware) PeakTFLOPS(p Precision) float64 {
	switch p {
	case FP8:
		if h.FP8TFLOPS > 0 {
			return h.FP8TFLOPS
		}
	case FP4:
		if h.FP4TensorCores() {
			return h.FP4TFLOPS
		}
	}
	return h.BF16TFLOPS
}

// hardwareCatalog returns the built-in GPUs. Sources (NVIDIA datasheets; dense figures are the
// datasheets' sparse figures halved where only those are printed):
//   - a100_sxm: "NVIDIA A100 Tensor Core GPU" datasheet, A100 80GB SXM: 80 GB HBM2e, 2,039 GB/s,
//     BF16 312 TFLOPS dense, no FP8/FP4, NVLink 600 GB/s bidirectional.
//   - h100_sxm: "NVIDIA H100 Tensor Core GPU" datasheet, H100 SXM: 80 GB HBM3, 3.35 TB/s,
//     BF16 1,979 / FP8 3,958 TFLOPS with sparsity, NVLink 900 GB/s bidirectional.
//   - h200_sxm: "NVIDIA H200 Tensor Core GPU" datasheet, H200 SXM: 141 GB HBM3e, 4.8 TB/s,
//     BF16 1,979 / FP8 3,958 TFLOPS with sparsity, NVLink 900 GB/s bidirectional.
//   - b200_sxm: "NVIDIA DGX B200" / HGX B200 datasheet per GPU: 180 GB HBM3e, 8 TB/s (64 TB/s
//     per 8 GPUs), FP4 18 / FP8 9 / BF16 4.5 PFLOPS with sparsity, NVLink 5 1.8 TB/s bidirectional.
//   - gb200: "NVIDIA GB200 NVL72" datasheet divided by 72 GPUs: 13.4 TB HBM3e → 186 GB,
//     576 TB/s → 8 TB/s, FP4 1,440 / FP8 720 / BF16 360 PFLOPS with sparsity → 20 / 10 / 5 PF
//     per GPU sparse, NVLink 5 1.8 TB/s bidirectional.
//   - b300_sxm: "NVIDIA HGX B300" datasheet per GPU (as AIConfigurator's b300_sxm system file
//     quotes it): 288 GB HBM3e, 62 TB/s per 8 GPUs → 7.75 TB/s, BF16 2.25 / FP8 4.5 / FP4 14
//     PFLOPS dense, NVLink 5 1.8 TB/s bidirectional.
//   - gb300: "NVIDIA GB300 NVL72" datasheet per GPU (as AIConfigurator's gb300 system file quotes
//     it): 288 GB HBM3e, 8 TB/s, BF16 2.5 / FP8 5 / FP4 15 PFLOPS dense, NVLink 5 1.8 TB/s
//     bidirectional.
//   - l40s: "NVIDIA L40S" datasheet: 48 GB GDDR6, 864 GB/s, BF16 362.05 / FP8 733 TFLOPS dense
//     (1,466 with sparsity), no NVLink: PCIe Gen4 x16, 64 GB/s bidirectional.
//
// NetworkGBps is each GPU's own network port in the DGX systems' datasheets (one port per GPU):
// DGX A100 8 × ConnectX-6 200 Gb/s (25 GB/s); DGX H100, DGX H200 and DGX B200 8 × ConnectX-7
// 400 Gb/s (50 GB/s); DGX B300 8 × ConnectX-8 800 Gb/s (100 GB/s); the GB200 NVL72 compute tray
// a ConnectX-7 400 Gb/s port per GPU (50 GB/s) and GB300's a ConnectX-8 800 Gb/s one (100
// GB/s), used only by workers wider than the 72-GPU rack. The L40S server has none listed.
func hardwareCatalog() []Hardware {
	return []Hardware{
		{ID: "a100_sxm", MemoryGiB: 80, MemoryTBps: 2.039, BF16TFLOPS: 312, LinkDomainGPUs: 8, NodeGPUs: 8, LinkGBps: 300, NetworkGBps: 25},
		{ID: "h100_sxm", MemoryGiB: 80, MemoryTBps: 3.35, BF16TFLOPS: 989.5, FP8TFLOPS: 1979, LinkDomainGPUs: 8, NodeGPUs: 8, LinkGBps: 450, StreamingFraction: 0.84, AllReduceFraction: [3]float64{0.65, 0.74, 0.93}, GEMMFraction: [3]float64{0.77, 0.53, 0}, DecodeAttentionFraction: [2]float64{0.92, 0.86}, NetworkGBps: 50},
		{ID: "h200_sxm", MemoryGiB: 141, MemoryTBps: 4.8, BF16TFLOPS: 989.5, FP8TFLOPS: 1979, LinkDomainGPUs: 8, NodeGPUs: 8, LinkGBps: 450, StreamingFraction: 0.82, AllReduceFraction: [3]float64{0.65, 0.74, 0.95}, GEMMFraction: [3]float64{0.77, 0.57, 0}, DecodeAttentionFraction: [2]float64{0.92, 0.67}, NetworkGBps: 50},
		{ID: "b200_sxm", MemoryGiB: 180, MemoryTBps: 8, BF16TFLOPS: 2250, FP8TFLOPS: 4500, FP4TFLOPS: 9000, LinkDomainGPUs: 8, NodeGPUs: 8, LinkGBps: 900, StreamingFraction: 0.76, AllReduceFraction: [3]float64{0.57, 0.69, 0.70}, GEMMFraction: [3]float64{0.66, 0.48, 0.41}, DecodeAttentionFraction: [2]float64{0.90, 0.86}, NetworkGBps: 50},
		{ID: "gb200", MemoryGiB: 186, MemoryTBps: 8, BF16TFLOPS: 2500, FP8TFLOPS: 5000, FP4TFLOPS: 10000, LinkDomainGPUs: 72, NodeGPUs: 4, LinkGBps: 900, StreamingFraction: 0.77, AllReduceFraction: [3]float64{0.58, 0.69, 0}, GEMMFraction: [3]float64{0.63, 0.47, 0.39}, DecodeAttentionFraction: [2]float64{0.93, 0.90}, NetworkGBps: 50},
		{ID: "b300_sxm", MemoryGiB: 288, MemoryTBps: 7.75, BF16TFLOPS: 2250, FP8TFLOPS: 4500, FP4TFLOPS: 14000, LinkDomainGPUs: 8, NodeGPUs: 8, LinkGBps: 900, StreamingFraction: 0.78, AllReduceFraction: [3]float64{0.58, 0.69, 0.71}, GEMMFraction: [3]float64{0.75, 0.55, 0.30}, DecodeAttentionFraction: [2]float64{0.92, 0.88}, NetworkGBps: 100},
		{ID: "gb300", MemoryGiB: 288, MemoryTBps: 8, BF16TFLOPS: 2500, FP8TFLOPS: 5000, FP4TFLOPS: 15000, LinkDomainGPUs: 72, NodeGPUs: 4, LinkGBps: 900, StreamingFraction: 0.76, AllReduceFraction: [3]float64{0.58, 0.69, 0}, GEMMFraction: [3]float64{0.73, 0.53, 0.29}, DecodeAttentionFraction: [2]float64{0.91, 0.88}, NetworkGBps: 100},
		{ID: "l40s", MemoryGiB: 48, MemoryTBps: 0.864, BF16TFLOPS: 362.05, FP8TFLOPS: 733, LinkDomainGPUs: 8, NodeGPUs: 8, LinkGBps: 32},
	}
}

// hardwareAliases maps other common spellings (lower case) to catalog ids. Each picks one part
// of a family (the SXM board for "h200"), so ResolveHardwareID reports when one was used.
func hardwareAliases() map[string]string {
	return map[string]string{
		"a100": "a100_sxm", "a100_80gb": "a100_sxm", "a100-sxm": "a100_sxm",
		"h100": "h100_sxm", "h100-sxm": "h100_sxm",
		"h200": "h200_sxm", "h200-sxm": "h200_sxm",
		"b200": "b200_sxm", "b200-sxm": "b200_sxm",
		"gb200_nvl72": "gb200", "gb200-nvl72": "gb200",
		"b300": "b300_sxm", "b300-sxm": "b300_sxm",
		"gb300_nvl72": "gb300", "gb300-nvl72": "gb300",
		"l40s_pcie": "l40s",
	}
}

// HardwareAliases lists the other spellings ResolveHardwareID reads as catalog id id (h100 and
// h100-sxm for h100_sxm), sorted; none for an id without aliases or not in the catalog.
func HardwareAliases(id string) []string {
	var out []string
	for a, to := range hardwareAliases() {
		if to == id {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// ResolveHardwareID returns the catalog id that id names (case-insensitive, surrounding space
// ignored) and whether id was an alias: another spelling such as "h200", which resolves to
// "h200_sxm". The catalog id itself, in any case, is no alias. An id the catalog does not know
// comes back unchanged with wasAlias false; LookupHardware reports it as unknown, and runs that
// derive nothing from the GPU accept any name.
func ResolveHardwareID(id string) (resolved string, wasAlias bool) {
	k := strings.ToLower(strings.TrimSpace(id))
	for _, h := range hardwareCatalog() {
		if h.ID == k {
			return k, false
		}
	}
	if a, ok := hardwareAliases()[k]; ok {
		return a, true
	}
	return id, false
}

// LookupHardware finds a GPU by catalog id or alias (see ResolveHardwareID). An unknown id is an
// error listing the known ids; there is no fallback GPU.
func LookupHardware(id string) (Hardware, error) {
	k, _ := ResolveHardwareID(id)
	for _, h := range hardwareCatalog() {
		if h.ID == k {
			return h, nil
		}
	}
	return Hardware{}, fmt.Errorf("unknown hardware %q; known hardware: %s", id, strings.Join(HardwareIDs(), ", "))
}

// HardwareIDs lists the catalog's hardware ids, sorted.
func HardwareIDs() []string {
	cat := hardwareCatalog()
	ids := make([]string, len(cat))
	for i, h := range cat {
		ids[i] = h.ID
	}
	sort.Strings(ids)
	return ids
}
