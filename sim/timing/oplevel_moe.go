package timing

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// DefaultMoEDistribution is the expert-load distribution OpLevel reads the MoE table at when
// OpLevelSource.MoEDistribution is "": the table's power_law_1.01, tokens routed to experts with
// a power-law skew of exponent 1.01 (AIConfigurator's default workload distribution for MoE
// models, its DeepSeek model's power-law alpha). The tables also hold "balanced" (every expert
// gets the same tokens) and "power_law_1.2" (more skew).
const DefaultMoEDistribution = "power_law_1.01"

// moeDtypes are the MoE table dtypes (moe_dtype) tried, in order, for the routed experts of model
// m with weights stored as p on GPU hw: FP8 checkpoints of the catalog's MoE models
// (DeepSeek-V3/R1, Qwen3-FP8, MiniMax-M2) use 128×128 block scales (their quantization_config
// weight_block_size), so fp8_block before per-tensor fp8; FP4 is NVFP4; an MXFP4-experts
// checkpoint (gpt-oss, ModelSpec.MXFP4Experts) served as published runs the MXFP4 kernels of
// its activations' format (ModelSpec.ExpertMathFormat): w4a8_mxfp4_mxfp8 on FP4 tensor cores,
// the weight-only w4a16_mxfp4 elsewhere (the tables' only MXFP4 kernels of TensorRT-LLM on
// Blackwell and of Hopper respectively).
func moeDtypes(m ModelSpec, p Precision, hw Hardware) []string {
	if m.MXFP4Experts && p == FP4 {
		if m.ExpertMathFormat(p, hw) == FP8 {
			return []string{"w4a8_mxfp4_mxfp8"}
		}
		return []string{"w4a16_mxfp4"}
	}
	switch p {
	case FP8:
		return []string{"fp8_block", "fp8"}
	case FP4:
		return []string{"nvfp4"}
	}
	return []string{"bfloat16"}
}

// sparseLayers are the op_level tables of a model with MoE layers and/or MLA attention; see
// OpLevel for the composition.
type sparseLayers struct {
	mla bool
	// MLA projections (mla true): the latent down-projection (q_a and kv_a fused, or kv_a alone
	// without q_lora), the query up-projection (q_b, or q from the hidden state), the key/value
	// up-projection kv_b and the output o.
	down, qUp, kvUp gemmCurve
	// Dense-MLP and MoE-layer GEMMs: router (BF16), shared-expert gate_up and down.
	router, sharedGateUp, sharedDown gemmCurve
	hasShared                        bool
	experts                          *opdb.Curve
	// Layer counts: dense (attention + dense MLP) and MoE.
	denseLayers, moeLayers float64
	// ranks is attention_data: the ranks whose tokens the expert group gathers.
	ranks float64
	// gather and scatter are the expert group's all_gather and reduce_scatter (attention_data >
	// 1); otherwise the MoE output is all-reduced over the attention group (allReduce).
	gather, scatter *opdb.Collective
	// Elementwise time per token of a dense layer and of an MoE layer.
	denseElemMsPerToken, moeElemMsPerToken float64
}

// newSparse fills ol for a model with MoE layers or MLA attention (see OpLevel). The dense
// fields of ol already hold the lm_head, the pipeline and the overheads.
func (ol *OpLevel) newSparse(src OpLevelSource, m ModelSpec, hw Hardware, prec Precisions, s Shape, eff Efficiency, w, bf *opdb.GEMM, gemmV string) error {
	db, gpu, be := src.DB, src.GPU, src.Backend
	t := float64(s.Tensor)
	h, H := float64(m.Hidden), float64(m.Heads)
	d, mt, me := s.moe()
	if e := m.MoE; e != nil && mt*me != s.Tensor*d {
		return fmt.Errorf("op_level timing: moe_tensor × moe_expert (%d × %d) must equal tensor × attention_data (%d × %d)", mt, me, s.Tensor, d)
	}
	sp := &sparseLayers{ranks: float64(d), denseLayers: float64(m.Layers - m.MoELayers()), moeLayers: float64(m.MoELayers())}
	ol.sparse = sp
	ol.head = monotoneGEMM(bf, float64(m.Vocab)/t, h)
	bytesPerMs := hw.MemoryTBps * tbpsToBytesPerMs
	// Attention: every layer, its projections from the table of their own format.
	aw := attentionGEMM(m, prec, w, bf)
	if a := m.MLA; a != nil {
		sp.mla = true
		qk, ql, kvl, rope := float64(a.QKNopeHeadDim+a.QKRopeHeadDim), float64(a.QLoraRank), float64(a.KVLoraRank), float64(a.QKRopeHeadDim)
		if a.QLoraRank > 0 {
			sp.down = monotoneGEMM(aw, ql+kvl+rope, h)
			sp.qUp = monotoneGEMM(aw, H*qk/t, ql)
		} else {
			sp.down = monotoneGEMM(aw, kvl+rope, h)
			sp.qUp = monotoneGEMM(aw, H*qk/t, h)
		}
		sp.kvUp = monotoneGEMM(aw, H*float64(a.QKNopeHeadDim+a.VHeadDim)/t, kvl)
		ol.o = monotoneGEMM(aw, h, H*float64(a.VHeadDim)/t)
		mlaV, err := db.Resolve(gpu, opdb.OpMLA, be, src.Version)
		if err != nil {
			return err
		}
		if ol.ctx, err = db.ContextMLA(gpu, be, mlaV, m.Heads/s.Tensor, kvDtype(prec.AttentionFormat())); err != nil {
			var me *opdb.MissingError
			if errors.As(err, &me) && strings.HasPrefix(me.What, "table") && slices.ContainsFunc(me.Available, func(f string) bool { return strings.Contains(f, "module") }) {
				return &UnsupportedModelError{Model: m.ID, Reason: fmt.Sprintf("the %s MLA tables on %s (%s) measure whole attention modules (%s), not the MLA kernel",
					be, gpu, mlaV, strings.Join(me.Available, ", "))}
			}
			return err
		}
		if ol.gen, err = db.GenerationMLA(gpu, be, mlaV, m.Heads/s.Tensor, kvDtype(prec.KVCache)); err != nil {
			return err
		}
		ol.ctx, ol.gen = ol.ctx.Monotone(), ol.gen.Monotone()
		ol.Provider = fmt.Sprintf("op_level %s gemm %s, mla %s", be, gemmV, mlaV)
	} else {
		attnV, err := db.Resolve(gpu, opdb.OpAttention, be, src.Version)
		if err != nil {
			return err
		}
		d := float64(m.HeadDim)
		KV := float64(m.KVHeads)
		ol.qkv = monotoneGEMM(aw, (H+2*KV)*d/t, h)
		ol.o = monotoneGEMM(aw, h, H*d/t)
		ctxShape, genShape := attentionShapes(m, s, prec)
		if ol.ctx, err = db.ContextAttention(gpu, be, attnV, ctxShape); err != nil {
			return err
		}
		if ol.gen, err = db.GenerationAttention(gpu, be, attnV, genShape); err != nil {
			return err
		}
		ol.ctx, ol.gen = ol.ctx.Monotone(), ol.gen.Monotone()
		ol.Provider = fmt.Sprintf("op_level %s gemm %s, attention %s", be, gemmV, attnV)
	}
	// Dense MLP layers (all layers of a dense-MLP MLA model).
	normBytes := 6 * h * activationBytes
	if sp.denseLayers > 0 {
		I := float64(m.Intermediate)
		ol.gateUp = monotoneGEMM(w, 2*I/t, h)
		ol.down = monotoneGEMM(w, h, I/t)
		sp.denseElemMsPerToken = (normBytes + 3*I/t*activationBytes) / (bytesPerMs * hw.streamingFraction(eff))
	}
	// MoE layers.
	if e := m.MoE; e != nil {
		sp.router = monotoneGEMM(bf, float64(e.Experts), h)
		elem := normBytes
		if e.SharedIntermediate > 0 {
			S := float64(e.SharedIntermediate)
			sp.hasShared = true
			sp.sharedGateUp = monotoneGEMM(w, 2*S/t, h)
			sp.sharedDown = monotoneGEMM(w, h, S/t)
			elem += 3 * S / t * activationBytes
		}
		sp.moeElemMsPerToken = elem / (bytesPerMs * hw.streamingFraction(eff))
		moeV, err := db.Resolve(gpu, opdb.OpMoE, be, src.Version)
		if err != nil {
			return err
		}
		dist := src.MoEDistribution
		if dist == "" {
			dist = DefaultMoEDistribution
		}
		var first error
		for _, dt := range moeDtypes(m, prec.Weights, hw) {
			c, err := db.MoE(gpu, be, moeV, opdb.MoEShape{Dtype: dt, Hidden: m.Hidden, Inter: e.ExpertIntermediate, TopK: e.TopK,
				Experts: e.Experts, TP: mt, EP: me, Distribution: dist})
			if err == nil {
				sp.experts = c.Monotone()
				ol.Provider += fmt.Sprintf(", moe %s %s %s", moeV, dt, dist)
				break
			}
			if first == nil {
				first = err
			}
		}
		if sp.experts == nil {
			return first
		}
		if d > 1 {
			if sp.gather, err = db.NCCL(gpu, "", "all_gather", "half", s.Tensor*d); err != nil {
				return err
			}
			if sp.scatter, err = db.NCCL(gpu, "", "reduce_scatter", "half", s.Tensor*d); err != nil {
				return err
			}
			sp.gather, sp.scatter = sp.gather.Monotone(), sp.scatter.Monotone()
		}
	}
	return nil
}

// passMs is OpLevel.PassMs of a model with MoE layers or MLA attention; tm is a micro-batch's
// tokens and micro the micro-batches.
func (sp *sparseLayers) passMs(ol *OpLevel, b *Batch, tm, micro float64) float64 {
	// Attention, every layer.
	attn := ol.o.at(tm)
	if sp.mla {
		attn += sp.down.at(tm) + sp.qUp.at(tm) + sp.kvUp.at(tm)
	} else {
		attn += ol.qkv.at(tm)
	}
	if r := float64(b.PrefillRequests); r > 0 {
		l := math.Sqrt(2 * float64(b.PrefillAttentionPairs) / r)
		attn += ol.ctx.Latency(max(1, r/micro), max(1, l))
	}
	if d := float64(b.DecodeSteps); d > 0 {
		q := d + float64(b.DraftTokens)
		attn += ol.gen.Latency(max(1, q/micro), max(1, float64(b.DecodeStepKVTokens+b.DraftKVTokens)/q))
	}
	var ar float64
	if ol.allReduce != nil && tm > 0 {
		ar = ol.allReduce.Latency(tm * ol.hiddenBytes)
	}
	attn += ar
	ms := (sp.denseLayers + sp.moeLayers) * attn
	if sp.denseLayers > 0 {
		ms += sp.denseLayers * (ol.gateUp.at(tm) + ol.down.at(tm) + ar + tm*sp.denseElemMsPerToken)
	}
	if sp.moeLayers > 0 && tm > 0 {
		layer := sp.router.at(tm) + sp.experts.Latency(tm*sp.ranks) + tm*sp.moeElemMsPerToken
		if sp.hasShared {
			layer += sp.sharedGateUp.at(tm) + sp.sharedDown.at(tm)
		}
		if sp.gather != nil {
			v := tm * sp.ranks * ol.hiddenBytes
			layer += sp.gather.Latency(v) + sp.scatter.Latency(v)
		} else {
			layer += ar
		}
		ms += sp.moeLayers * layer
	}
	return ms
}

// attentionGEMM is the GEMM table the attention projections of m run on: bf, the BF16 table,
// when the checkpoint keeps them BF16 apart from its other weights (ModelSpec.AttentionWeights),
// else w, the table of the other GEMM weights' format.
func attentionGEMM(m ModelSpec, prec Precisions, w, bf *opdb.GEMM) *opdb.GEMM {
	if m.AttentionWeights(prec.Weights) != m.DenseWeights(prec.Weights) {
		return bf
	}
	return w
}

// monotoneGEMM is the GEMM's curve over m at (n, k) through its running maximum
// (opdb.Curve.Monotone).
func monotoneGEMM(g *opdb.GEMM, n, k float64) gemmCurve { return gemmCurve{g.AtNK(n, k).Monotone()} }
