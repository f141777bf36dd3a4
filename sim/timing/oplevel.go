package timing

import (
	"fmt"
	"math"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// OpLevelSource selects the measured tables an OpLevel model composes: the database, the GPU id
// (the database's name, e.g. h200_sxm), the serving backend (vllm, sglang, trtllm) and the
// backend version ("" = the newest version of each table; NCCL tables always the newest).
type OpLevelSource struct {
	DB                    *opdb.DB
	GPU, Backend, Version string
	// MoEDistribution is the expert-load distribution of the MoE table rows used for routed
	// experts (the table's distribution column: balanced, power_law_1.01, power_law_1.2); ""
	// means DefaultMoEDistribution. Dense models ignore it.
	MoEDistribution string
}

// OpLevel is the op-level timing model: a forward pass composed from kernel latencies measured on
// the GPU with the backend (AIConfigurator's per-operation database, package opdb), for a dense
// decoder-only model on one attention-DP rank of Shape.Tensor × Shape.Pipeline GPUs.
//
// Per pass, from the Batch (T = PrefillTokens + DecodeSteps + DraftTokens tokens through the
// GEMMs, S = SampledTokens + DraftTokens rows through the lm_head, r = PrefillRequests,
// d = DecodeSteps + DraftTokens decode queries attending DecodeStepKVTokens + DraftKVTokens keys
// in all: speculative decoding's verified drafts are tokens of the pass), with m =
// min(p, sequences) pipeline micro-batches as in Roofline and T' = T/m:
//
//	layer     = gemm(qkv, T') + gemm(o, T') + gemm(gate_up, T') + gemm(down, T')
//	          + ctx_attn(max(1, r/m), ℓ) + gen_attn(max(1, d/m), (DecodeStepKVTokens + DraftKVTokens)/d)
//	          + 2 · all_reduce(T'·h·2 bytes)                                   when t > 1
//	          + elementwise(T')
//	pass      = L · layer + gemm(lm_head, S) + (p−1) · send(T'·h·2 bytes)
//	          + PassOverheadMs + S · SequenceOverheadUs
//
// (with Overlapped, the host part PassOverheadMs overlaps the rest: pass = max(host, pass −
// host); S · SequenceOverheadUs stays on the critical path)
//
// where the GEMMs are a layer's per-GPU projections (qkv: n = (H + 2·KV)·d/t, k = h; o: n = h,
// k = H·d/t; gate_up: n = 2·I/t, k = h; down: n = h, k = I/t; lm_head: n = vocab/t, k = h in
// BF16) in the weights' format (bfloat16, fp8, nvfp4; bfloat16 outside the experts of an
// MXFP4-experts checkpoint, ModelSpec.DenseWeights), looked up by opdb.GEMM.Latency; the
// attention tables are looked up at the per-GPU heads (H/t, max(1, KV/t), d) and the KV-cache
// format. The database measures attention over whole prompts, so a prefill chunk of n new tokens
// after c cached ones enters by its causal pairs: ℓ = √(2·PrefillAttentionPairs/r), the prompt
// length with the same (query, key) pairs per request (ℓ(ℓ+1)/2 ≈ pairs). all_reduce is the
// backend's custom all-reduce where the database measured it for t GPUs, else NCCL's (half);
// send is a point-to-point transfer priced as an NCCL all_gather of 2 GPUs. elementwise covers
// the kernels the database does not measure (two RMSNorms, rotary embedding, SwiGLU activation,
// two residual adds): memory-bound, T'·(6·h + 3·I/t)·2 bytes / (HBM bandwidth · the GPU's
// streaming share, Hardware.StreamingFraction or else Efficiency.Memory). Host time per pass and per sampled sequence is Efficiency's, as for Roofline.
//
// A model with mixture-of-experts layers or multi-head latent attention (DeepSeek-V3/R1, Kimi,
// Qwen3-MoE, gpt-oss, Mixtral, MiniMax) is composed per layer from the same tables plus the MoE,
// MLA and NCCL ones, with t = Tensor (the attention group), d = AttentionData, mt × me = t · d
// the MoE split, and every lookup through its running maximum (opdb.Curve.Monotone: a measured
// dip between neighbouring sizes never makes a larger pass faster):
//
//	attention (all L layers)
//	  GQA:  gemm(qkv, T') + gemm(o, T') + ctx_attn + gen_attn                      as above
//	  MLA:  gemm(down: n = q_lora + kv_lora + rope, k = h) + gemm(q_b: n = H·(nope + rope)/t,
//	        k = q_lora) + gemm(kv_b: n = H·(nope + v)/t, k = kv_lora) + gemm(o: n = h, k = H·v/t)
//	        + ctx_mla(H/t heads) + gen_mla(H/t heads)     (context/generation_mla_perf tables)
//	        + all_reduce(T'·h·2 bytes) over t                                       when t > 1
//	dense MLP (the DenseLayers first layers): gemm(gate_up) + gemm(down) at I/t + all_reduce
//	        + elementwise(T'·(6·h + 3·I/t)·2 bytes)
//	MoE layer: gemm(router: n = E, k = h, BF16) + gemm(shared gate_up: n = 2·S/t) + gemm(shared
//	        down: k = S/t) + moe(T'·d tokens) + elementwise(T'·(6·h + 3·S/t)·2 bytes)
//	        + all_gather(T'·d·h·2 bytes) + reduce_scatter(same) over t·d GPUs   when d > 1
//	        + all_reduce(T'·h·2 bytes) over t                       when d = 1 and t > 1
//
// moe is the moe_perf row curve over num_tokens at the model's (hidden, expert intermediate,
// top-k, experts), moe_tp = mt, moe_ep = me, the expert-load distribution
// OpLevelSource.MoEDistribution (DefaultMoEDistribution) and the first of moeDtypes measured;
// each attention-DP rank's T' tokens are gathered for the experts (ranks taken as equally
// loaded: engines pad attention-DP ranks to the same batch), as AIConfigurator's MoE op
// multiplies its tokens by attention_dp_size. In decode, MLA's key/value up-projection is
// absorbed into two per-head batched GEMMs of the same weights; they are priced as the kv_b GEMM
// at the decode tokens. The routed experts' gather/scatter is AIConfigurator's dispatch/combine
// for attention-DP without a wide-EP all-to-all kernel; with t > 1 and d = 1 the MoE output is
// all-reduced like a dense MLP's. The lm_head, pipeline sends and host overheads are as above.
// A shape, dtype, head count or collective the tables lack is a *opdb.MissingError naming it,
// and MLA on a backend measured only as whole modules (vLLM) an *UnsupportedModelError.
//
// OpLevel is immutable after NewOpLevel, safe for concurrent use, and PassMs does not allocate.
type OpLevel struct {
	qkv, o, gateUp, down, head gemmCurve
	ctx, gen                   *opdb.Attention
	allReduce, send            *opdb.Collective
	layers, pipeline           float64
	hiddenBytes                float64 // h · 2 bytes: one token's activation
	elementwiseMsPerToken      float64
	overheadMs, seqOverheadMs  float64
	overlap                    bool    // the host time overlaps the GPU time (Overlapped)
	piecewiseMs                float64 // idle time of a decode-only pass's graph boundaries (Piecewise)
	// sparse holds the MoE and MLA tables of a model with either (nil for a dense model).
	sparse *sparseLayers
	// Provider names the tables used, e.g. "op_level vllm gemm 0.24.0, attention 0.24.0, custom
	// all-reduce 0.24.0 on h200_sxm" (", nccl 2.29.2" where NCCL prices a collective).
	Provider string
}

// UnsupportedModelError is NewOpLevel's refusal of a model its composition does not cover on
// the backend, with the reason: an MLA model on a backend whose database measures MLA only as
// whole modules with their projections (vLLM's mla_*_module_perf tables), which the per-kernel
// composition of OpLevel would count twice; or a hybrid model's linear-attention layers, which
// no table measures.
type UnsupportedModelError struct{ Model, Reason string }

// Error names the model and why the op_level model does not price it.
func (e *UnsupportedModelError) Error() string {
	return fmt.Sprintf("the op_level model does not compose %s: %s", e.Model, e.Reason)
}

// gemmCurve is one GEMM's latency over m at its fixed (n, k), precomputed (opdb.GEMM.AtNK).
type gemmCurve struct{ c *opdb.Curve }

func newGEMMCurve(g *opdb.GEMM, n, k float64) gemmCurve { return gemmCurve{g.AtNK(n, k)} }

func (c gemmCurve) at(m float64) float64 {
	if m <= 0 {
		return 0
	}
	return c.c.Latency(m)
}

// gemmDtype is the database's gemm_dtype of a weight format.
func gemmDtype(p Precision) string {
	switch p {
	case FP8:
		return "fp8"
	case FP4:
		return "nvfp4"
	}
	return "bfloat16"
}

// attentionShapes are the op database's keys of model m's prefill (context) and decode
// (generation) attention tables on one GPU of shape s: its share of the query and KV heads, and
// the cache format, which for prefill is the format attention computes in
// (Precisions.AttentionFormat): prefill attention is compute-bound, so an engine that computes
// in BF16 over an FP8 cache runs at the rate the BF16 table measures. Decode attention streams
// the cache it has.
func attentionShapes(m ModelSpec, s Shape, prec Precisions) (ctx, gen opdb.AttentionShape) {
	gen = opdb.AttentionShape{Heads: m.Heads / s.Tensor, KVHeads: max(1, m.KVHeads/s.Tensor), HeadDim: m.HeadDim, KVDtype: kvDtype(prec.KVCache)}
	ctx = gen
	ctx.KVDtype = kvDtype(prec.AttentionFormat())
	return ctx, gen
}

// kvDtype is the database's kv_cache_dtype of a KV-cache format.
func kvDtype(p Precision) string {
	if p == FP8 {
		return "fp8"
	}
	return "bfloat16"
}

// NewOpLevel builds the OpLevel model of model m with precisions prec on src's GPU (hw gives the
// HBM bandwidth of the elementwise kernels) in shape s. Every table it needs is loaded here.
// Errors: an invalid shape or architecture, *UnsupportedModelError for an MLA model on a backend
// whose MLA tables are whole-module measurements, and the database's *opdb.MissingError for a
// table, version, dtype, attention, MLA or MoE shape or collective it lacks.
func NewOpLevel(src OpLevelSource, m ModelSpec, hw Hardware, prec Precisions, s Shape, eff Efficiency) (*OpLevel, error) {
	if s.Tensor < 1 || s.Pipeline < 1 {
		return nil, fmt.Errorf("op_level timing: tensor and pipeline must be >= 1, got %d and %d", s.Tensor, s.Pipeline)
	}
	if err := m.CheckArchitecture(); err != nil {
		return nil, fmt.Errorf("op_level timing: %w", err)
	}
	if !(hw.MemoryTBps > 0) {
		return nil, fmt.Errorf("op_level timing: hardware %s needs a memory bandwidth", hw.ID)
	}
	if err := eff.Validate(); err != nil {
		return nil, fmt.Errorf("op_level timing: %w", err)
	}
	if m.LinearAttention != nil {
		return nil, &UnsupportedModelError{Model: m.ID, Reason: "its Gated DeltaNet linear-attention layers have no kernel table in the database"}
	}
	if s.RedundantExperts != 0 {
		// The op database's MoE tables measure a model's experts over moe_expert GPUs, never
		// extra slots; pricing redundant experts from them would drop their weight bytes.
		return nil, fmt.Errorf("op_level timing: redundant_experts %d: the op database's MoE kernels are measured without redundant experts; use forward_model roofline",
			s.RedundantExperts)
	}
	db, gpu, be := src.DB, src.GPU, src.Backend
	gemmV, err := db.Resolve(gpu, opdb.OpGEMM, be, src.Version)
	if err != nil {
		return nil, err
	}
	w, err := db.GEMM(gpu, be, gemmV, gemmDtype(m.DenseWeights(prec.Weights)))
	if err != nil {
		return nil, err
	}
	bf, err := db.GEMM(gpu, be, gemmV, "bfloat16")
	if err != nil {
		return nil, err
	}
	t := float64(s.Tensor)
	h, d, I := float64(m.Hidden), float64(m.HeadDim), float64(m.Intermediate)
	H, KV := float64(m.Heads), float64(m.KVHeads)
	ol := &OpLevel{
		head:        newGEMMCurve(bf, float64(m.Vocab)/t, h),
		layers:      float64(m.Layers),
		pipeline:    float64(s.Pipeline),
		hiddenBytes: h * 2,
		overheadMs:  eff.PassOverheadMs, seqOverheadMs: eff.SequenceOverheadUs / 1000,
	}
	if m.MoE != nil || m.MLA != nil {
		if err := ol.newSparse(src, m, hw, prec, s, eff, w, bf, gemmV); err != nil {
			return nil, err
		}
	} else {
		attnV, err := db.Resolve(gpu, opdb.OpAttention, be, src.Version)
		if err != nil {
			return nil, err
		}
		ol.qkv, ol.o = newGEMMCurve(w, (H+2*KV)*d/t, h), newGEMMCurve(w, h, H*d/t)
		ol.gateUp, ol.down = newGEMMCurve(w, 2*I/t, h), newGEMMCurve(w, h, I/t)
		ol.elementwiseMsPerToken = (6*h + 3*I/t) * 2 / (hw.MemoryTBps * tbpsToBytesPerMs * hw.streamingFraction(eff))
		ctxShape, genShape := attentionShapes(m, s, prec)
		if ol.ctx, err = db.ContextAttention(gpu, be, attnV, ctxShape); err != nil {
			return nil, err
		}
		if ol.gen, err = db.GenerationAttention(gpu, be, attnV, genShape); err != nil {
			return nil, err
		}
		ol.Provider = fmt.Sprintf("op_level %s gemm %s, attention %s", be, gemmV, attnV)
	}
	usesNCCL := s.Pipeline > 1 || ol.sparse != nil && ol.sparse.gather != nil
	if s.Tensor > 1 {
		if ol.allReduce, err = db.CustomAllReduce(gpu, be, src.Version, s.Tensor); err == nil {
			v, _ := db.Resolve(gpu, opdb.OpComm, be, src.Version)
			ol.Provider += ", custom all-reduce " + v
		} else if ol.allReduce, err = db.NCCL(gpu, "", "all_reduce", "half", s.Tensor); err == nil {
			usesNCCL = true
		} else {
			return nil, err
		}
	}
	if s.Pipeline > 1 {
		if ol.send, err = db.NCCL(gpu, "", "all_gather", "half", 2); err != nil {
			return nil, err
		}
	}
	if ol.sparse != nil {
		// Table noise must not make a larger pass faster (sparseLayers reads every table through
		// its running maximum).
		if ol.allReduce != nil {
			ol.allReduce = ol.allReduce.Monotone()
		}
		if ol.send != nil {
			ol.send = ol.send.Monotone()
		}
	}
	if usesNCCL {
		if vs, err := db.Versions(gpu, opdb.OpComm, opdb.NCCL); err == nil {
			ol.Provider += ", nccl " + vs[len(vs)-1]
		}
	}
	ol.Provider += " on " + gpu
	return ol, nil
}

// PassMs implements Model; see OpLevel for the composition. An empty batch costs 0.
func (ol *OpLevel) PassMs(b *Batch) float64 {
	tokens := float64(b.PrefillTokens + b.DecodeSteps + b.DraftTokens)
	if tokens == 0 && b.SampledTokens == 0 {
		return 0
	}
	micro := float64(microBatches(int(ol.pipeline), b))
	tm := tokens / micro
	if ol.sparse != nil {
		ms := ol.sparse.passMs(ol, b, tm, micro) + ol.head.at(float64(b.SampledTokens+b.DraftTokens)) + ol.overheadMs + float64(b.SampledTokens)*ol.seqOverheadMs
		if ol.send != nil && tm > 0 {
			ms += (ol.pipeline - 1) * ol.send.Latency(tm*ol.hiddenBytes)
		}
		return ol.hostOverlap(ms, b)
	}
	layer := ol.qkv.at(tm) + ol.o.at(tm) + ol.gateUp.at(tm) + ol.down.at(tm) + tm*ol.elementwiseMsPerToken
	if r := float64(b.PrefillRequests); r > 0 {
		l := math.Sqrt(2 * float64(b.PrefillAttentionPairs) / r)
		layer += ol.ctx.Latency(max(1, r/micro), max(1, l))
	}
	if d := float64(b.DecodeSteps); d > 0 {
		// Each verified draft is one more decode query at its own KV length.
		q := d + float64(b.DraftTokens)
		layer += ol.gen.Latency(max(1, q/micro), max(1, float64(b.DecodeStepKVTokens+b.DraftKVTokens)/q))
	}
	if ol.allReduce != nil && tm > 0 {
		layer += 2 * ol.allReduce.Latency(tm*ol.hiddenBytes)
	}
	ms := ol.layers*layer + ol.head.at(float64(b.SampledTokens+b.DraftTokens)) + ol.overheadMs + float64(b.SampledTokens)*ol.seqOverheadMs
	if ol.send != nil && tm > 0 {
		ms += (ol.pipeline - 1) * ol.send.Latency(tm*ol.hiddenBytes)
	}
	return ol.hostOverlap(ms, b)
}

// hostOverlap is the pass b of ms milliseconds, with Piecewise's boundaries when b decodes only,
// under Overlapped: its host part, PassOverheadMs, hidden behind the rest (overlapHost); the
// per-sequence time stays on the critical path, as for Roofline. ms unchanged without either.
func (ol *OpLevel) hostOverlap(ms float64, b *Batch) float64 {
	if b.PrefillRequests == 0 {
		ms += ol.piecewiseMs
	}
	if !ol.overlap {
		return ms
	}
	return overlapHost(ms, ol.overheadMs)
}

// Piecewise returns a copy of ol for an engine that captures decode passes in piecewise CUDA
// graphs (config.Engine.CUDAGraphs), as Roofline.Piecewise. ol is unchanged.
func (ol *OpLevel) Piecewise() *OpLevel {
	c := *ol
	c.piecewiseMs = ol.layers * PiecewiseGraphLayerUs / 1000
	return &c
}

// Overlapped returns a copy of ol for an engine that overlaps scheduling with the GPU
// (config.Engine.OverlapScheduling): a pass lasts max(host, GPU) instead of host + GPU, as for
// Roofline.Overlapped. ol is unchanged.
func (ol *OpLevel) Overlapped() *OpLevel {
	c := *ol
	c.overlap = true
	return &c
}
