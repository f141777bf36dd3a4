package timing

import (
	"errors"
	"fmt"
	"math"
)

// Shape is the GPU layout of one attention-DP rank of a worker: Tensor × Pipeline GPUs that
// hold one copy of the weights. Attention-DP ranks are independent copies (their passes run in
// lock step, which the simulator handles), so they do not enter the pass time.
type Shape struct {
	// Tensor is the tensor-parallel degree (>= 1): GEMM weights, attention heads and KV heads
	// are split across Tensor GPUs, with two all-reduces per layer.
	Tensor int
	// Pipeline is the pipeline-parallel degree (>= 1): layers are split into Pipeline stages.
	Pipeline int
	// AttentionData is the worker's attention data-parallel degree (0 means 1): Tensor ×
	// AttentionData GPUs per stage, each attention-DP rank running attention for its own
	// requests with Tensor-way tensor parallelism.
	AttentionData int
	// MoETensor and MoEExpert split an MoE layer's experts over the Tensor × AttentionData GPUs
	// of a stage (0 means 1): each expert's matrices MoETensor ways, the experts MoEExpert ways.
	MoETensor, MoEExpert int
	// RedundantExperts is the extra expert slots of an expert-parallel MoE layer (>= 0; 0
	// without): replicas of the most-loaded experts that expert-parallel load balancing places
	// beside the model's experts (SGLang's --ep-num-redundant-experts, vLLM's EPLB
	// num_redundant_experts, TensorRT-LLM's load-balancer slots beyond the experts). Each GPU of
	// the MoE layers then holds (experts + RedundantExperts) / MoEExpert expert slots: more
	// weight bytes to hold and to stream, the same FLOPs.
	RedundantExperts int
}

// expertSlots is the expert slots of an MoE layer of m split into s: the model's routed
// experts plus the shape's redundant ones.
func (s Shape) expertSlots(e *MoESpec) int { return e.Experts + max(s.RedundantExperts, 0) }

// moe returns the shape's attention-DP, MoE-tensor and expert-parallel degrees, unset ones 1.
func (s Shape) moe() (d, mt, me int) {
	return max(s.AttentionData, 1), max(s.MoETensor, 1), max(s.MoEExpert, 1)
}

// Efficiency holds the few hardware-independent factors that turn datasheet peaks into achieved
// speed. Most are fitted once on measured deployments; ExpertGEMM, MLAAttention, MLAPrefillTokenPairs, Memory and FP4Memory come from
// kernel measurements, QuantizedMemory is fixed, and MoELayerOverheadUs, AllToAllPeerLatencyUs
// and SGLangMoEPrefillScale are chosen on the MoE deployments leaving one GPU out
// (CalibratedEfficiency gives each one's source). They
// are the same for every GPU, model and parallel shape; the roofline relates some to each GPU's
// own kernel measurements (Memory: Hardware.StreamingFraction, and DecodeAttentionFraction for
// the KV cache's reads; Link: AllReduceFraction; GEMM: GEMMFraction).
type Efficiency struct {
	// GEMM is the fraction of the dense tensor-core peak the linear layers achieve when
	// compute-bound, in (0, 1], on a GPU whose kernels reach its format's median share of the
	// peak (Pooled…GEMMFraction); the roofline scales it by a measured GPU's own share over that
	// median (Hardware.gemmScale), never past the peak.
	GEMM float64
	// ExpertGEMM is the fraction of the weights format's dense tensor-core peak that the routed
	// experts' grouped GEMMs of a mixture-of-experts layer achieve when compute-bound, in (0, 1],
	// measured against each format's own peak (QuantizedGEMM does not apply on top: the kernels
	// it comes from ran FP8 and FP4 weights too). Each expert multiplies only the tokens routed
	// to it, so a grouped GEMM runs many small, unevenly filled matrices and reaches well below a
	// dense GEMM's rate. Dense models do not use it.
	ExpertGEMM float64
	// MLAAttention is the fraction of the tensor-core peak of the KV-cache format that the
	// prefill (context) kernels of multi-head latent attention reach on a long prompt's (query,
	// key) pairs, in (0, 1]; 0 prices them at Attention. MLAPrefillTokenPairs is their fixed
	// cost per prompt token, in pairs at that rate (>= 0): the kernels' time is
	// pairs/rate + tokens · MLAPrefillTokenPairs/rate, so a short prompt reaches a lower share
	// of the peak. Both come from kernel measurements (CalibratedEfficiency). Models without
	// latent attention do not use them; decode steps keep Attention.
	MLAAttention, MLAPrefillTokenPairs float64
	// Attention is the fraction of the tensor-core peak of the KV-cache format that attention
	// math achieves when compute-bound (FlashAttention-style kernels; with an FP8 KV cache the
	// FP8 kernels of TensorRT-LLM, FlashAttention-3 and FlashInfer run Q·Kᵀ and P·V in FP8), in
	// (0, 1].
	Attention float64
	// Memory is the fraction of the HBM bandwidth achieved streaming weights and KV on a GPU the
	// op database does not measure, in (0, 1]; a GPU it measures streams weights at its own
	// Hardware.StreamingFraction and reads KV at its own Hardware.DecodeAttentionFraction
	// instead, whatever Memory says.
	Memory float64
	// QuantizedGEMM is the fraction of GEMM that compute-bound GEMMs with FP8 or FP4 weights
	// achieve against their own (2× or 4×) peak (scale handling, less mature kernels), in (0, 1].
	// Memory-bound GEMMs stream the real weight bytes (Precision.WeightBytes, scales included),
	// at Memory × QuantizedMemory (× FP4Memory for FP4 weights on FP4 tensor cores).
	QuantizedGEMM float64
	// QuantizedMemory is the fraction of Memory that memory-bound GEMMs with FP8 or FP4 weights
	// achieve, in (0, 1]. The shipped value is 1 and calibration does not fit it: FP8 weights
	// move their real byte counts at the same rate as BF16 ones, so FP8 halves the
	// weight-streaming time of small-batch decoding. It stays a factor for what-if studies.
	QuantizedMemory float64
	// FP4Memory is the further fraction of Memory × QuantizedMemory that memory-bound GEMMs with
	// FP4 weights achieve on a GPU with FP4 tensor cores (Hardware.FP4TensorCores), in (0, 1]: the
	// NVFP4 kernels unpack 4-bit values and apply a scale per 16 of them while streaming, and
	// reach a lower share of the bandwidth than BF16 and FP8 ones. It comes from those kernels'
	// measurements, not from deployments (CalibratedEfficiency). A GPU without FP4 tensor cores
	// runs 4-bit weights through other kernels (dequantizing to BF16 or FP8), whose rate no table
	// measures: there FP4 weights stream at Memory × QuantizedMemory.
	FP4Memory float64
	// Link is the fraction of the GPU-to-GPU link bandwidth a ring all-reduce or a pipeline
	// send achieves, in (0, 1]: on a typical group (PooledAllReduceFraction); an all-reduce on a
	// GPU and group size the op database measures moves at Link × its
	// Hardware.AllReduceFraction / PooledAllReduceFraction.
	Link float64
	// LinkLatencyUs is the fixed latency of one collective (an all-reduce or a pipeline-stage
	// send) in µs, >= 0.
	LinkLatencyUs float64
	// AllToAllLatencyUs is the fixed latency in µs of one all-to-all of an expert-parallel MoE
	// layer (the dispatch of tokens to their experts' GPUs, or the combine back), >= 0; its bytes
	// move at Link. Each GPU exchanges a message with every other, so its latency is about
	// twice an all-reduce's.
	AllToAllLatencyUs float64
	// AllToAllPeerLatencyUs is the further latency in µs of one such all-to-all for every GPU
	// of the expert-parallel group beyond AllToAllTableGPUs (the largest group the kernel
	// tables measure): each GPU waits on a message from every other, and groups that wide span
	// several nodes or compute trays. >= 0.
	AllToAllPeerLatencyUs float64
	// LayerOverheadUs is the fixed GPU time per transformer layer per pass in µs: the chain of
	// small latency-bound kernels every GPU runs once per layer whatever its share of the
	// weights (norms, rotary embedding, activation, residual adds, and their launch gaps).
	// Tensor parallelism does not shorten it (every rank runs every kernel on its shard);
	// pipeline parallelism does not either (every layer still runs once per pass). It is the
	// same on every GPU: these kernels are bound by launch and synchronization latency, not by
	// FLOPs or bandwidth. >= 0.
	LayerOverheadUs float64
	// MoELayerOverheadUs is the further fixed GPU time per mixture-of-experts layer per pass in
	// µs, on top of LayerOverheadUs: the kernels an MoE layer runs that a dense MLP does not
	// (router gate, top-k selection, the permutation of tokens to their experts and back, the
	// grouped-GEMM setup), each latency-bound at decode batch sizes. Like LayerOverheadUs, the
	// same on every GPU and not shortened by tensor, expert or pipeline parallelism. Only the
	// roofline adds it: the op_level MoE tables measure those kernels with the experts. >= 0.
	MoELayerOverheadUs float64
	// PassOverheadMs is the host time per forward pass in ms that the GPU waits for: the
	// engine's scheduling step, input preparation and step launch, on the CPU, so the same for
	// every GPU and parallel shape (an engine that overlaps scheduling with the GPU hides it
	// behind the rest of the pass: Roofline.Overlapped, OpLevel.Overlapped). >= 0.
	PassOverheadMs float64
	// SequenceOverheadUs is the time per sampled sequence per pass in µs that the next pass
	// waits for (sampling and the per-request output bookkeeping of its token), the same for
	// every GPU and parallel shape. Overlap scheduling does not hide it: on InferenceX's
	// Llama-3.1-70B rows (vLLM with --async-scheduling, TensorRT-LLM with its overlap scheduler),
	// mean TPOT rises by about the same time per added sequence at TP1 as at TP8 (B200, vLLM,
	// FP8, 1k/1k, concurrency 4 to 64: +6.8 ms at TP1, +6.2 ms at TP8), which a host cost hidden
	// behind GPU passes of 7 to 16 ms could not do. >= 0.
	SequenceOverheadUs float64
	// SGLangMoEPrefillScale is the factor by which a forward pass that computes prompt tokens
	// of a mixture-of-experts model on tensor-parallel attention (attention_data 1) lasts longer
	// under SGLang than the rest of this model gives (Roofline.SGLangPrefill), >= 1; 0 reads as
	// 1 (none), so that a literal which omits it prices no such factor. Dense models, workers
	// with attention data parallelism and other engines do not use it. It comes from
	// deployments, not kernels: CalibratedSGLangMoEPrefillScale says from which.
	SGLangMoEPrefillScale float64
}

// Validate checks that fractions are in (0, 1] and overheads finite and >= 0.
func (e Efficiency) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"GEMM", e.GEMM}, {"ExpertGEMM", e.ExpertGEMM}, {"Attention", e.Attention}, {"Memory", e.Memory}, {"QuantizedGEMM", e.QuantizedGEMM}, {"QuantizedMemory", e.QuantizedMemory}, {"FP4Memory", e.FP4Memory},
		{"Link", e.Link}} {
		if !(f.v > 0 && f.v <= 1) {
			errs = append(errs, fmt.Errorf("efficiency %s must be in (0, 1], got %v", f.name, f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"LinkLatencyUs", e.LinkLatencyUs}, {"AllToAllLatencyUs", e.AllToAllLatencyUs}, {"AllToAllPeerLatencyUs", e.AllToAllPeerLatencyUs}, {"LayerOverheadUs", e.LayerOverheadUs}, {"MoELayerOverheadUs", e.MoELayerOverheadUs},
		{"PassOverheadMs", e.PassOverheadMs},
		{"SequenceOverheadUs", e.SequenceOverheadUs}, {"MLAPrefillTokenPairs", e.MLAPrefillTokenPairs}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("efficiency %s must be finite and >= 0, got %v", f.name, f.v))
		}
	}
	if v := e.SGLangMoEPrefillScale; v != 0 && !(v >= 1 && !math.IsInf(v, 0)) {
		errs = append(errs, fmt.Errorf("efficiency SGLangMoEPrefillScale must be 0 (none) or finite and >= 1, got %v", v))
	}
	if !(e.MLAAttention >= 0 && e.MLAAttention <= 1) {
		errs = append(errs, fmt.Errorf("efficiency MLAAttention must be in [0, 1] (0: Attention's), got %v", e.MLAAttention))
	}
	return errors.Join(errs...)
}

// Roofline is the `default` (alias `roofline`) timing model: an analytical forward-pass time for
// a dense decoder-only model on one attention-DP rank of Shape.Tensor × Shape.Pipeline GPUs.
//
// Notation: L layers, h hidden size, H attention heads, d head dim, t = Tensor, p = Pipeline;
// P_lin = ModelSpec.LinearParams, P_head = hidden × vocab; F(x) the dense tensor peak of format
// x (Hardware.PeakTFLOPS), B the HBM bandwidth, N the link bandwidth (one direction); η the
// Efficiency fractions, except η_mem: the GPU's own Hardware.StreamingFraction, or
// Efficiency.Memory for a GPU without one, and η_kv: the GPU's own
// Hardware.DecodeAttentionFraction of the KV cache's format, or η_mem for a GPU without one
// (the decode-attention kernels' measured rate of reading the KV cache, which differs from the
// weight-streaming GEMMs'). Per pass, from the Batch: T = PrefillTokens + DecodeSteps + DraftTokens
// tokens go through the GEMMs, S = SampledTokens + DraftTokens rows through the lm_head (the
// per-sequence host time counts SampledTokens only); decode attention computes
// DecodeStepKVTokens + DraftKVTokens (query, key) pairs over DecodeStepKVTokens of KV.
//
//	gemm      = max(2·(P_lin·T)/(t·p·F(weights)·η_gemm·η_q·γ(weights)) + 2·(P_head·S)/(t·p·F(bf16)·η_gemm·γ(bf16)),
//	                W/(t·B·η_mem))        W = P_lin·bytes(weights)/η_qm + P_head·2 (lm_head in BF16)
//	prefill   = max(4·H·d·L·PrefillAttentionPairs/(t·p·F(attn)·η_attn),
//	                (PrefillContextTokens+PrefillTokens)·kv/(B·η_kv))
//	            (latent attention: see addMoE)
//	decode    = max(4·H·d·L·DecodeStepKVTokens/(t·p·F(attn)·η_attn),
//	                DecodeStepKVTokens·kv/(B·η_kv))
//	allreduce = 2·L·(α + 2·(t−1)/t · (T/p)·h·2 bytes / (N·η_link·ρ(t)))     when t > 1
//	pipeline  = (p−1)·(α + (T/p)·h·2 bytes / (N·η_link))                      when p > 1
//	overhead  = PassOverheadMs + L·LayerOverheadUs + L_moe·MoELayerOverheadUs + S·SequenceOverheadUs
//	pass      = overhead + gemm + prefill + decode + allreduce + pipeline
//	            (+ L·PiecewiseGraphLayerUs for a pass without prefill tokens under Piecewise)
//
// A hybrid model's linear-attention layers (ModelSpec.LinearAttention) leave the attention
// terms (L counts the full-attention layers only; they alone hold per-token KV) and add
//
//	linear    = max(T·F_lin/(t·p·F(bf16)·η_attn), n·2·state/(B·η_mem))
//
// with F_lin the recurrence's FLOPs per token over those layers, n = PrefillRequests +
// DecodeSteps the sequences of the pass, and state = StateBytesPerSequencePerGPU: every
// sequence's state is read and written back once per pass (a decode step updates it once, a
// prefill chunk scans its tokens through it once; the chunked kernels keep it on chip within a
// chunk). Their projections are GEMMs within P_lin.
//
// where attn = Precisions.AttentionFormat (the KV cache's format unless the engine computes
// attention in another), kv = ModelSpec.KVBytesPerTokenPerGPU (a GPU's share of one token's KV), α =
// LinkLatencyUs (for an all-reduce over more GPUs than one link domain holds, the longer of it
// and NetworkAllReduceLatencyUs, whose bytes then cross the network ports at their own rate
// where that is slower: rooflineRates.netAllReduceMsPerByte), ρ(t) the GPU's measured all-reduce bandwidth on t GPUs relative to a typical
// group's (Hardware.AllReduceFraction / PooledAllReduceFraction; 1 for a GPU without
// measurements; all-reduces only, not pipeline sends or all-to-alls), γ(x) the GPU's measured
// share of format x's peak in compute-bound GEMMs relative to that format's typical GPU
// (Hardware.gemmScale: GEMMFraction over Pooled…GEMMFraction of the format the GPU multiplies
// in, BF16 where it lacks x; 1 for a GPU without measurements; weights = the dense layers'
// format, ModelSpec.DenseWeights), η_gemm·η_q·γ and η_gemm·γ capped at 1, and η_q = QuantizedGEMM and η_qm = QuantizedMemory for FP8 weights,
// QuantizedMemory·FP4Memory for FP4 ones on a GPU with FP4 tensor cores (η_q = QuantizedGEMM
// for both, 1 for
// BF16). Sources: a GEMM of m tokens by a k×n weight costs 2mkn FLOPs and reads kn
// weights (the roofline model, Williams et al. 2009); causal attention costs 2 FLOPs per
// multiply-add in Q·Kᵀ and in P·V, i.e. 4·H·d FLOPs per (query, key) pair per layer
// (FlashAttention, Dao et al. 2022); a decode step reads its whole KV once; Megatron-style
// tensor parallelism does one all-reduce after attention and one after the MLP (Shoeybi et al.
// 2019), and a ring all-reduce moves 2(t−1)/t of the message per GPU (Patarasuk & Yuan 2009);
// activations are BF16. Each phase takes the larger of its compute-bound and memory-bound times
// (they overlap within a kernel); phases run one after another.
//
// Pipeline parallelism is modeled as m = min(p, sequences in the pass) micro-batches in flight
// (vLLM's virtual engines split a batch by sequences, never one sequence's tokens): a
// micro-batch's next step needs its own output, so a pass lasts p stage times of one
// micro-batch of T/m tokens, each stage running 1/p of the layers and reading its 1/p of the
// weights. Weight reads therefore do not shrink with p, while compute, KV reads and activations
// shrink by m: by p for a batch of p or more sequences, not at all for a lone request, whose
// TTFT under PP k is at least its PP1 TTFT (every stage still runs in turn). The formulas above
// are written for m = p; their compute, KV and activation terms scale by p/m. Each micro-batch
// crosses p−1 stage boundaries. Activations, norms and elementwise kernels are left to
// LayerOverheadUs.
//
// With Overlapped, the host part of overhead (PassOverheadMs) overlaps the rest: pass =
// max(host, pass − host). The per-sequence time (SampledTokens · SequenceOverheadUs) stays on
// the critical path (Efficiency.SequenceOverheadUs says why).
//
// Roofline is immutable after NewRoofline, safe for concurrent use, and PassMs does not
// allocate.
type Roofline struct {
	gemmMsPerToken  float64
	headMsPerSample float64
	weightMs        float64
	attnMsPerPair   float64
	// prefillMsPerPair and prefillMsPerToken price prefill attention: attnMsPerPair and 0 for
	// standard attention; latent attention's own kernel rate and fixed cost per prompt token.
	prefillMsPerPair, prefillMsPerToken float64
	kvMsPerToken                        float64
	allReduceMs                         float64
	allReduceMsPerTok                   float64
	pipelineMs                          float64
	pipelineMsPerToken                  float64
	overheadMs                          float64
	seqOverheadMs                       float64
	pipeline                            int
	// hostMs is the host part of overheadMs (PassOverheadMs); with overlap it hides behind the
	// rest of the pass (Overlapped).
	hostMs  float64
	overlap bool
	// piecewiseMs is the GPU idle time at the graph boundaries of a decode-only pass (Piecewise).
	piecewiseMs float64
	// prefillScale multiplies the time of a pass with prompt tokens (SGLangPrefill); 0: none.
	prefillScale float64
	// layers is the model's layer count L.
	layers float64
	// Linear-attention terms (zero without such layers): the recurrence's compute per token and
	// the state read and written once per sequence of a pass; see NewRoofline.
	linearMsPerToken float64
	stateMsPerSeq    float64
	// Mixture-of-experts terms (zero for a dense model); see NewRoofline.
	moe moeTerms
}

// moeTerms are the batch-dependent costs of MoE layers: the expert weights a pass reads depend
// on how many experts its tokens hit, and expert parallelism adds a dispatch and a combine.
type moeTerms struct {
	on bool
	// expertWeightMs streams every local expert slot once; a pass reads the share hit by its
	// tokens: 1 − (1 − TopK/slots)^(tokens · attention_data), slots = Experts + RedundantExperts.
	expertWeightMs float64
	missLog        float64 // ln(1 − TopK/slots)
	dataRanks      float64 // attention_data: ranks whose tokens share the experts
	// commMs and commMsPerToken price the MoE layers' collectives per pass and per token.
	commMs, commMsPerToken float64
}

// Unit conversions of the roofline's rates.
const (
	tflopsToFlopPerMs = 1e9 // 1 TFLOP/s = 1e12 FLOP/s = 1e9 FLOP/ms
	tbpsToBytesPerMs  = 1e9 // 1 TB/s = 1e9 bytes/ms
	gbpsToBytesPerMs  = 1e6 // 1 GB/s = 1e6 bytes/ms
	activationBytes   = 2   // BF16
)

// rooflineRates are the achieved rates of one GPU group that NewRoofline and addMoE price
// with: FLOP/ms of the weights' GEMMs (t·p GPUs), of attention in the KV format, HBM bytes/ms of
// one GPU, link bytes/ms, and the quantized-weight factors.
type rooflineRates struct {
	gemm, attn, mem, link float64
	hw                    Hardware // for the all-reduce bandwidth of a group size (reduceLink)
	expertGEMM            float64  // FLOP/ms of the routed experts' grouped GEMMs (t·p GPUs)
	quantMem              float64  // QuantizedMemory for FP8/FP4 weights (× FP4Memory for FP4 on FP4 tensor cores), else 1
	denseQuantMem         float64  // quantMem for the GEMM weights outside the routed experts (1 when ModelSpec.DenseWeights is BF16)
	alphaMs               float64  // LinkLatencyUs in ms
	a2aAlphaMs            float64  // one all-to-all's latency in ms: AllToAllLatencyUs and the peers' part
	net                   float64  // a GPU's network port, bytes/ms at Link (0: none in the catalog)
	mlaAttn               float64  // FLOP/ms of latent-attention prefill pairs (t·p GPUs, MLAAttention, or Attention when 0)
	mlaTokenPairs         float64  // MLAPrefillTokenPairs
	bf16GEMM              float64  // FLOP/ms of BF16 GEMMs (t·p GPUs): attention projections a checkpoint keeps BF16
}

// reduceLink is the link bytes/ms of an all-reduce over gpus GPUs: link scaled by the GPU's
// measured all-reduce bandwidth at that group size (Hardware.allReduceScale).
func (rt rooflineRates) reduceLink(gpus int) float64 { return rt.link * rt.hw.allReduceScale(gpus) }

// spansDomains reports whether a collective over gpus GPUs reaches beyond one link domain
// (Hardware.LinkDomainGPUs) through GPUs' network ports the catalog gives (NetworkGBps).
func (rt rooflineRates) spansDomains(gpus int) bool {
	return rt.net > 0 && rt.hw.WorkerSpansLinkDomain(gpus)
}

// allReduceAlphaMs is the latency in ms of one all-reduce over gpus GPUs: the link's
// (Efficiency.LinkLatencyUs), or NetworkAllReduceLatencyUs's when the group spans link domains
// (Hardware.WorkerSpansLinkDomain, whether or not the catalog gives the GPU a network port) and
// that is the longer.
func (rt rooflineRates) allReduceAlphaMs(gpus int) float64 {
	if rt.hw.WorkerSpansLinkDomain(gpus) {
		return max(rt.alphaMs, NetworkAllReduceLatencyUs(gpus, rt.hw.LinkDomainGPUs)/1000)
	}
	return rt.alphaMs
}

// MultiNodeBias is the measured bias of workers wider than one link domain, as predict's note on
// such a worker and a sweep's answer line quote it: on the 27 InferenceX rows of
// ../shared/data/silicon/measured_moe_calibration.csv whose DeepSeek-R1/V3 workers (TensorRT-LLM
// TP16 EP16 decode, SGLang TP16) all-reduce over two H100 nodes, measured ÷ predicted TPOT was
// 1.98 (geometric mean; TTFT 1.92) with NetworkAllReduceLatencyUs in force (`validate`,
// 2026-12-08; docs/timing.md, "Nodes").
const MultiNodeBias = "InferenceX's DeepSeek workers over two H100 nodes measured about twice the predicted TPOT"

// NCCL's cost model of a small all-reduce (its tree algorithm with the LL protocol, which it
// picks for decode-sized messages), in µs: a base latency, and per hop the NVLink's within a node
// and the network's between nodes (NCCL's src/graph/tuning.cc, its baseLat and hwLat tables).
const (
	ncclTreeBaseLatencyUs = 6.8
	ncclTreeNVLinkHopUs   = 0.6
	ncclTreeNetworkHopUs  = 5.0
)

// NetworkAllReduceLatencyUs is the latency in µs of a small all-reduce over gpus GPUs spread over
// link domains of domain GPUs (nodes of 8 H100s, say), as NCCL's own cost model prices its tree
// all-reduce: a base latency, then up and down the tree each of the (gpus per node − 1) NVLink
// hops within a node and log2(nodes) network hops between them, 6.8 + 2 · ((p − 1) · 0.6 +
// log2(n) · 5.0) µs with p = min(gpus, domain) and n = ⌈gpus / domain⌉ (NCCL's
// src/graph/tuning.cc; log2 rounded down, as NCCL's). Over two nodes of eight H100s that is 25.2
// µs, the figure NCCL's tuning log prints for a 4-byte all-reduce on such a cluster (NVIDIA/nccl
// issue 1453, 2024); nccl-tests measured 19–21 µs for 8- to 64-byte all-reduces between two A100
// nodes (NVIDIA/nccl-tests issue 150, 2023); four nodes take 35.2 µs. Decode passes all-reduce
// small messages, so a tensor-parallel worker wider than one node waits about this long at each
// all-reduce instead of the link's LinkLatencyUs. Not fitted on any deployment. domain < 1 is
// read as gpus (one domain).
func NetworkAllReduceLatencyUs(gpus, domain int) float64 {
	if domain < 1 || domain > gpus {
		domain = gpus
	}
	nodes := (gpus + domain - 1) / domain
	hops := 0
	for n := nodes; n > 1; n /= 2 {
		hops++
	}
	return ncclTreeBaseLatencyUs + 2*(float64(domain-1)*ncclTreeNVLinkHopUs+float64(hops)*ncclTreeNetworkHopUs)
}

// netAllReduceMsPerByte is the time per byte of an all-reduce over gpus GPUs spent between link
// domains, ms: the hierarchical algorithm's step between the n = g/D domains of D GPUs, each GPU
// sending 2(n−1)/n of its 1/D share through its own network port (NetworkGBps at Link).
// Callers take the slower of it and the ring over the link.
func (rt rooflineRates) netAllReduceMsPerByte(gpus int) float64 {
	d := float64(rt.hw.LinkDomainGPUs)
	n := float64(gpus) / d
	return 2 * (n - 1) / n / d / rt.net
}

// netAllToAllMsPerByte is the time per byte a GPU dispatches in an all-to-all over gpus GPUs
// spent on the (g−D)/g bound for other link domains of D GPUs, which leaves through its network
// port (NetworkGBps at Link) while the rest crosses the link. Callers take the slower.
func (rt rooflineRates) netAllToAllMsPerByte(gpus int) float64 {
	g := float64(gpus)
	return (g - float64(rt.hw.LinkDomainGPUs)) / g / rt.net
}

// NewRoofline precomputes the Roofline of model m with precisions prec on GPUs hw in shape s.
// Errors: a non-positive architecture field, a GPU without memory bandwidth or BF16 peak, a
// GPU without a link when t or p > 1 (or, for an MoE or MLA model, attention_data > 1), a shape
// below 1, or an invalid Efficiency.
func NewRoofline(m ModelSpec, hw Hardware, prec Precisions, s Shape, eff Efficiency) (*Roofline, error) {
	if s.Tensor < 1 || s.Pipeline < 1 {
		return nil, fmt.Errorf("roofline timing: tensor and pipeline must be >= 1, got %d and %d", s.Tensor, s.Pipeline)
	}
	if err := m.CheckArchitecture(); err != nil {
		return nil, fmt.Errorf("roofline timing: %w", err)
	}
	if !(hw.MemoryTBps > 0) || !(hw.BF16TFLOPS > 0) {
		return nil, fmt.Errorf("roofline timing: hardware %s needs a memory bandwidth and a BF16 peak", hw.ID)
	}
	sparse := m.MoE != nil || m.MLA != nil
	if d, _, _ := s.moe(); (s.Tensor > 1 || s.Pipeline > 1 || (sparse && d > 1)) && !(hw.LinkGBps > 0) {
		return nil, fmt.Errorf("roofline timing: hardware %s has no GPU-to-GPU link for tensor %d × pipeline %d × attention_data %d", hw.ID, s.Tensor, s.Pipeline, d)
	}
	if err := eff.Validate(); err != nil {
		return nil, fmt.Errorf("roofline timing: %w", err)
	}
	t, p := float64(s.Tensor), float64(s.Pipeline)
	L, h := float64(m.Layers), float64(m.Hidden)
	quant := 1.0
	rt := rooflineRates{quantMem: 1, denseQuantMem: 1, alphaMs: eff.LinkLatencyUs / 1000, hw: hw}
	if prec.Weights != BF16 {
		rt.quantMem = eff.QuantizedMemory
	}
	if prec.Weights == FP4 && hw.FP4TensorCores() {
		rt.quantMem *= eff.FP4Memory
	}
	dense := m.DenseWeights(prec.Weights)
	if dense != BF16 {
		quant, rt.denseQuantMem = eff.QuantizedGEMM, rt.quantMem
	}
	// A GPU's GEMMs never run past its peak, whatever the fitted share and its kernels' scale.
	peakGEMM := t * p * hw.PeakTFLOPS(dense) * tflopsToFlopPerMs
	rt.gemm = min(peakGEMM, peakGEMM*eff.GEMM*quant*hw.gemmScale(dense))
	rt.expertGEMM = t * p * hw.PeakTFLOPS(m.ExpertMathFormat(prec.Weights, hw)) * tflopsToFlopPerMs * eff.ExpertGEMM
	attnPeak := t * p * hw.PeakTFLOPS(prec.AttentionFormat()) * tflopsToFlopPerMs
	rt.attn = attnPeak * eff.Attention
	rt.mlaAttn, rt.mlaTokenPairs = rt.attn, eff.MLAPrefillTokenPairs
	if eff.MLAAttention > 0 {
		rt.mlaAttn = attnPeak * eff.MLAAttention
	}
	rt.mem = hw.MemoryTBps * tbpsToBytesPerMs * hw.streamingFraction(eff)
	rt.link = hw.LinkGBps * gbpsToBytesPerMs * eff.Link
	rt.net = hw.NetworkGBps * gbpsToBytesPerMs * eff.Link
	rt.a2aAlphaMs = eff.AllToAllLatencyUs / 1000
	if _, _, me := s.moe(); me > AllToAllTableGPUs {
		rt.a2aAlphaMs += float64(me-AllToAllTableGPUs) * eff.AllToAllPeerLatencyUs / 1000
	}
	bf16Peak := t * p * hw.BF16TFLOPS * tflopsToFlopPerMs
	bf16GEMMRate := min(bf16Peak, bf16Peak*eff.GEMM*hw.gemmScale(BF16))
	rt.bf16GEMM = bf16GEMMRate
	r := &Roofline{
		gemmMsPerToken:  2 * m.LinearParams() / rt.gemm,
		headMsPerSample: 2 * m.HeadParams() / bf16GEMMRate,
		weightMs:        (m.LinearParams()*dense.WeightBytes()/rt.denseQuantMem + m.HeadParams()*activationBytes) / t / rt.mem,
		attnMsPerPair:   4 * float64(m.Heads) * float64(m.HeadDim) * (L - float64(m.linearLayers())) / rt.attn,
		kvMsPerToken:    float64(m.KVBytesPerTokenPerGPU(prec.KVCache, s.Tensor, s.Pipeline)) / (hw.MemoryTBps * tbpsToBytesPerMs * hw.kvStreamingFraction(prec.KVCache, eff)),
		overheadMs:      eff.PassOverheadMs + L*eff.LayerOverheadUs/1000,
		seqOverheadMs:   eff.SequenceOverheadUs / 1000,
		pipeline:        s.Pipeline,
		hostMs:          eff.PassOverheadMs,
		layers:          L,
	}
	r.prefillMsPerPair = r.attnMsPerPair
	if m.LinearAttention != nil {
		r.linearMsPerToken = m.linearFlopsPerToken() / (t * p * hw.BF16TFLOPS * tflopsToFlopPerMs * eff.Attention)
		r.stateMsPerSeq = 2 * float64(m.StateBytesPerSequencePerGPU(s.Tensor, s.Pipeline)) / rt.mem
	}
	if s.Pipeline > 1 {
		r.pipelineMs = (p - 1) * rt.alphaMs
		r.pipelineMsPerToken = (p - 1) * h * activationBytes / p / rt.link
	}
	if sparse {
		r.addMoE(m, prec, s, rt)
		r.overheadMs += float64(m.MoELayers()) * eff.MoELayerOverheadUs / 1000
		return r, nil
	}
	if s.Tensor > 1 {
		r.allReduceMs = 2 * L * rt.allReduceAlphaMs(s.Tensor)
		r.allReduceMsPerTok = 2 * L * 2 * (t - 1) / t * h * activationBytes / p / rt.reduceLink(s.Tensor)
		if rt.spansDomains(s.Tensor) {
			r.allReduceMsPerTok = max(r.allReduceMsPerTok, 2*L*h*activationBytes/p*rt.netAllReduceMsPerByte(s.Tensor))
		}
	}
	return r, nil
}

// addMoE replaces r's dense terms for a model with experts or latent attention (MoE and MLA
// additions to the Roofline formula, per GPU of shape s with d = attention_data, mt =
// moe_tensor, me = moe_expert, E experts, k per token, L_moe MoE layers, T a rank's tokens):
//
//	gemm compute   2·(P_active − P_routed)·T/(t·p·F_dense·η_gemm·η_q) + 2·P_routed·T/(t·p·F_expert·η_expert),
//	               with P_routed = ExpertParams·k/E the routed experts' active parameters and η_expert
//	               = ExpertGEMM: the experts' FLOPs of the d ranks' d·T tokens spread over the
//	               mt·me = t·d GPUs, their grouped GEMMs at their own lower rate (which is where
//	               expert-load imbalance and small per-expert matrices show; routing itself is
//	               taken as balanced across GPUs); F_dense = F(ModelSpec.DenseWeights(weights))
//	               (η_q = 1 when that is BF16), F_expert = F(ModelSpec.ExpertMathFormat): the
//	               weights' format but for an MXFP4-experts checkpoint (gpt-oss); the attention
//	               projections a checkpoint keeps in BF16 (ModelSpec.AttentionWeights: NVIDIA's v2
//	               NVFP4 DeepSeek, all but o_proj, P_attn = attentionLinearParams) leave the first
//	               term for 2·P_attn·T/(t·p·F(bf16)·η_gemm) at BF16's rate
//	weights        W_rest/(t·B) + W_slots/(mt·me·B) · (1 − (1 − k/S)^(d·T)): the expected share
//	               of local expert slots some token of the pass routes to, with S = E +
//	               RedundantExperts slots and W_slots = W_experts·S/E (a replica holds its
//	               expert's weights; a token's k choices spread over the S slots); in W_rest the
//	               BF16 attention projections take 2 bytes a parameter
//	collectives    per attention (every layer) and dense MLP (every dense layer) one all-reduce
//	               over t when t > 1; per MoE layer a dispatch and a combine of each token's
//	               hidden state to its k experts when me > 1 (all-to-all, (me−1)/me of it leaves
//	               the GPU; each of an attention group's t GPUs sends its 1/t of the tokens; each
//	               costs AllToAllLatencyUs, plus AllToAllPeerLatencyUs per GPU of the group beyond
//	               AllToAllTableGPUs, plus its bytes at Link) and
//	               an all-reduce of the d·T tokens over mt when mt > 1 (attention-DP ranks are
//	               taken as equally loaded, as engines pad them to the largest batch)
//	attention      MLA: 2·H·(qk_nope + qk_rope + v) FLOPs per (query, key) pair and layer (keys
//	               and values expanded from the latent, DeepSeek-V2 §2.1); the KV read is the
//	               latent (KVBytesPerTokenPerGPU). A prefill costs (PrefillAttentionPairs +
//	               PrefillTokens·MLAPrefillTokenPairs) of those pairs at MLAAttention (the
//	               context kernels' measured rate and fixed cost per token); decode pairs cost
//	               them at η_attn
//
// Compute with a pipeline splits as for dense models; the MoE terms take the pipeline's 1/p of
// the layers on each stage, with every stage in turn.
func (r *Roofline) addMoE(m ModelSpec, prec Precisions, s Shape, rt rooflineRates) {
	t, p := float64(s.Tensor), float64(s.Pipeline)
	d, mt, me := s.moe()
	wb := prec.Weights.WeightBytes() / rt.quantMem
	denseWB := m.DenseWeights(prec.Weights).WeightBytes() / rt.denseQuantMem
	experts := m.ExpertParams()
	if e := m.MoE; e != nil {
		routed := experts * float64(e.TopK) / float64(e.Experts)
		r.gemmMsPerToken = 2*(m.ActiveLinearParams()-routed)/rt.gemm + 2*routed/rt.expertGEMM
		if m.AttentionWeights(prec.Weights) != m.DenseWeights(prec.Weights) {
			attn := m.attentionLinearParams()
			r.gemmMsPerToken = 2*(m.ActiveLinearParams()-routed-attn)/rt.gemm + 2*attn/rt.bf16GEMM + 2*routed/rt.expertGEMM
		}
	} else {
		r.gemmMsPerToken = 2 * m.ActiveLinearParams() / rt.gemm
	}
	r.weightMs = ((m.LinearParams()-experts)*denseWB + m.HeadParams()*activationBytes) / t / rt.mem
	if a := m.AttentionWeights(prec.Weights); a != m.DenseWeights(prec.Weights) {
		attn := m.attentionLinearParams()
		r.weightMs = ((m.LinearParams()-experts-attn)*denseWB + attn*a.WeightBytes() + m.HeadParams()*activationBytes) / t / rt.mem
	}
	if a := m.MLA; a != nil {
		flops := 2 * float64(m.Heads) * float64(a.QKNopeHeadDim+a.QKRopeHeadDim+a.VHeadDim) * float64(m.Layers)
		r.attnMsPerPair = flops / rt.attn
		r.prefillMsPerPair = flops / rt.mlaAttn
		r.prefillMsPerToken = rt.mlaTokenPairs * r.prefillMsPerPair
	}
	L, h := float64(m.Layers), float64(m.Hidden)
	Lmoe := float64(m.MoELayers())
	tokenBytes := h * activationBytes / p // per token of a stage's micro-batch, as the dense terms
	if s.Tensor > 1 {
		n := L + (L - Lmoe) // one after every attention, one after every dense MLP
		r.allReduceMs = n * rt.allReduceAlphaMs(s.Tensor)
		r.allReduceMsPerTok = n * 2 * (t - 1) / t * tokenBytes / rt.reduceLink(s.Tensor)
		if rt.spansDomains(s.Tensor) {
			r.allReduceMsPerTok = max(r.allReduceMsPerTok, n*tokenBytes*rt.netAllReduceMsPerByte(s.Tensor))
		}
	}
	r.moe = moeTerms{on: m.MoE != nil, dataRanks: float64(d)}
	if e := m.MoE; e != nil {
		slots := float64(s.expertSlots(e))
		r.moe.expertWeightMs = experts * slots / float64(e.Experts) * wb / float64(mt*me) / rt.mem
		r.moe.missLog = math.Log1p(-float64(e.TopK) / slots)
		if me > 1 {
			// The t GPUs of an attention group hold the same tokens after its all-reduce; each
			// dispatches (and gets back) its 1/t share.
			r.moe.commMs += 2 * Lmoe * rt.a2aAlphaMs
			a2a := 2 * Lmoe * float64(e.TopK) * float64(me-1) / float64(me) * tokenBytes / t / rt.link
			if rt.spansDomains(me) {
				a2a = max(a2a, 2*Lmoe*float64(e.TopK)*tokenBytes/t*rt.netAllToAllMsPerByte(me))
			}
			r.moe.commMsPerToken += a2a
		}
		if mt > 1 {
			r.moe.commMs += Lmoe * rt.allReduceAlphaMs(mt)
			ar := Lmoe * 2 * float64(mt-1) / float64(mt) * float64(d) * tokenBytes / rt.reduceLink(mt)
			if rt.spansDomains(mt) {
				ar = max(ar, Lmoe*float64(d)*tokenBytes*rt.netAllReduceMsPerByte(mt))
			}
			r.moe.commMsPerToken += ar
		}
	}
}

// PassMs implements Model; see Roofline for the formula. An empty batch costs 0.
func (r *Roofline) PassMs(b *Batch) float64 {
	tokens := float64(b.PrefillTokens + b.DecodeSteps + b.DraftTokens)
	if tokens == 0 && b.SampledTokens == 0 {
		return 0
	}
	// Under pipeline parallelism the batch splits into m = min(p, sequences) micro-batches; the
	// per-token terms were precomputed for m = p and scale by p/m (1 without pipelining).
	scale := 1.0 // p/m with p = m = 1: no division on the common path
	if r.pipeline != 1 {
		scale = float64(r.pipeline) / float64(microBatches(r.pipeline, b))
	}
	weightMs := r.weightMs
	if r.moe.on {
		// The expected share of local experts the pass's tokens (all attention-DP ranks') hit.
		weightMs += r.moe.expertWeightMs * -math.Expm1(tokens*r.moe.dataRanks*r.moe.missLog)
	}
	gemm := max(scale*(tokens*r.gemmMsPerToken+float64(b.SampledTokens+b.DraftTokens)*r.headMsPerSample), weightMs)
	ms := r.overheadMs + float64(b.SampledTokens)*r.seqOverheadMs + gemm
	if r.moe.commMs > 0 || r.moe.commMsPerToken > 0 {
		ms += r.moe.commMs + scale*tokens*r.moe.commMsPerToken
	}
	if b.PrefillRequests > 0 {
		ms += scale * max(float64(b.PrefillAttentionPairs)*r.prefillMsPerPair+float64(b.PrefillTokens)*r.prefillMsPerToken,
			float64(b.PrefillContextTokens+b.PrefillTokens)*r.kvMsPerToken)
	}
	if b.DecodeSteps > 0 {
		// Verified drafts add (query, key) pairs but read the same KV.
		kv := float64(b.DecodeStepKVTokens)
		ms += scale * max((kv+float64(b.DraftKVTokens))*r.attnMsPerPair, kv*r.kvMsPerToken)
	}
	if r.stateMsPerSeq > 0 {
		seqs := float64(b.PrefillRequests + b.DecodeSteps)
		ms += scale * max(tokens*r.linearMsPerToken, seqs*r.stateMsPerSeq)
	}
	if r.allReduceMs > 0 || r.allReduceMsPerTok > 0 {
		ms += r.allReduceMs + scale*tokens*r.allReduceMsPerTok
	}
	if r.pipelineMs > 0 || r.pipelineMsPerToken > 0 {
		ms += r.pipelineMs + scale*tokens*r.pipelineMsPerToken
	}
	if b.PrefillRequests == 0 {
		ms += r.piecewiseMs
	}
	if r.overlap {
		ms = overlapHost(ms, r.hostMs)
	}
	if r.prefillScale > 0 && b.PrefillTokens > 0 {
		ms *= r.prefillScale
	}
	return ms
}

// SGLangPrefill returns a copy of r for an SGLang engine: when r's model is a mixture of experts,
// its attention is tensor-parallel (one attention-DP rank per worker) and scale > 1
// (Efficiency.SGLangMoEPrefillScale), a pass that computes prompt tokens lasts scale times what
// r gives it, overlap scheduling included; other passes, every pass of a dense model and of a
// worker with attention data parallelism are unchanged. SGLang runs prompt tokens in passes of
// their own (it mixes no decode steps into them by default), so the factor prices its prefill,
// and the decode steps of an aggregated worker wait for it. r is unchanged.
func (r *Roofline) SGLangPrefill(scale float64) *Roofline {
	c := *r
	if r.moe.on && r.moe.dataRanks <= 1 && scale > 1 {
		c.prefillScale = scale
	}
	return &c
}

// Piecewise returns a copy of r for an engine that captures its decode passes in piecewise CUDA
// graphs (config.Engine.CUDAGraphs piecewise, vLLM's cudagraph_mode PIECEWISE): attention runs
// outside the graphs, so a pass without prefill tokens adds L · PiecewiseGraphLayerUs of GPU idle
// time at the boundaries. Passes with prefill tokens are unchanged, a modelling choice: vLLM runs
// them in piecewise graphs up to its capture size under PIECEWISE (and under FULL_AND_PIECEWISE)
// and without graphs above it and under FULL_DECODE_ONLY, and their GPU work (hundreds of tokens
// or more) outweighs the boundaries. The idle time is GPU time: overlap scheduling hides it only
// when the host part of the pass is the longer. r is unchanged.
func (r *Roofline) Piecewise() *Roofline {
	c := *r
	c.piecewiseMs = r.layers * PiecewiseGraphLayerUs / 1000
	return &c
}

// PiecewiseGraphLayerUs is the GPU idle time in µs per layer per decode pass of piecewise CUDA
// graphs over one graph of the whole pass: a graph ends before each layer's attention, which
// runs on its own, and the next starts after it. From a vLLM contributor's benchmark on B200 with
// vLLM 0.23.0 (vllm-project/vllm issue 47089, 2026-06-30): Qwen3-235B-A22B-Instruct-2507-FP8 under
// expert parallelism 2 (94 layers), where a layer's GPU work outlasts its host work, so the gap
// is the boundaries' alone: median TPOT 13.37 against 12.70 ms at batch 1, 23.93 against 22.38
// at 16 and mean 30.22 against 29.56 at 128 (the table gives the mean there): 7.1, 16.5
// and 7.0 µs per layer; the median, 7.1, rounded to 7. On
// small models, whose layers finish before the host launches the next, the same issue measured
// ten times that (Qwen3-0.6B: 3.64 against 1.53 ms at batch 1 over 28 layers), which this
// constant does not cover. Not fitted on any deployment.
const PiecewiseGraphLayerUs = 7.0

// Overlapped returns a copy of r for an engine that overlaps scheduling with the GPU
// (config.Engine.OverlapScheduling): the scheduling time of a pass, PassOverheadMs, runs while
// the GPU computes, so a pass lasts max(host, rest) instead of host + rest (see overlapHost); the
// per-sequence time stays on the critical path. r is unchanged.
func (r *Roofline) Overlapped() *Roofline {
	c := *r
	c.overlap = true
	return &c
}

// overlapHost is the duration in ms of a pass of ms = host + GPU milliseconds when its host
// part hostMs runs on the CPU while the GPU computes: max(hostMs, ms − hostMs). Overlap
// schedulers prepare pass n+1 and process pass n−1's outputs while pass n runs on the GPU
// (SGLang's zero-overhead batch scheduler, SGLang v0.4 release notes, 2024-12; TensorRT-LLM's
// overlap scheduler; vLLM's --async-scheduling), so the GPU waits for the host only when the
// host side is the longer one.
func overlapHost(ms, hostMs float64) float64 {
	return max(hostMs, ms-hostMs)
}

// microBatches is the number of pipeline micro-batches a pass runs in flight under pipeline
// degree p: min(p, sequences in the pass), at least 1 (1 without pipelining).
func microBatches(p int, b *Batch) int {
	if p <= 1 {
		return 1
	}
	return max(1, min(p, b.PrefillRequests+b.DecodeSteps))
}
