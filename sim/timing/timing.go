// Package timing holds forward-pass time models: how long one batched pass of a worker takes,
// given what the scheduler put in it. Models are pure values, safe for concurrent use, and do
// not allocate per call.
//
// Start with Model and Batch. Fixed and Polynomial are the reference's models; Roofline (the
// `default` timing) is hardware-aware, built from three catalogs: models (ModelSpec,
// LookupModel, LoadModelDir for a Hugging Face config.json), GPUs (Hardware, LookupHardware) and
// numeric formats (Precision). KVCapacity derives the `default` KV pool from the same inputs.
// The efficiency factors fitted on measured deployments are in CalibratedEfficiency.
package timing

// Batch summarizes one forward pass of one attention-DP rank, as a rank scheduler formed it
// (engine-internals.md §1.2 step 4).
type Batch struct {
	// PrefillRequests counts requests that computed at least one prompt token in this pass.
	PrefillRequests int
	// PrefillTokens is Σ prompt tokens computed in this pass (the new, uncached tokens).
	PrefillTokens int
	// PrefillContextTokens is Σ over prefill requests of the tokens already in KV before this
	// pass (cached prefix plus the request's own earlier chunks).
	PrefillContextTokens int
	// DecodeRequests counts requests that emit a token at the end of this pass (including those
	// whose prefill finishes in it).
	DecodeRequests int
	// DecodeKVTokens is Σ sequence length (tokens in KV) over those requests.
	DecodeKVTokens int
	// KVCapacityTokens is the rank's pool size in tokens (blocks × block size).
	KVCapacityTokens int

	// PrefillAttentionPairs is Σ over prefill requests of the causal (query, key) pairs their
	// attention computes: new × context + new × (new + 1) / 2, where new is the request's
	// PrefillTokens share and context its PrefillContextTokens share.
	PrefillAttentionPairs int64
	// DecodeSteps counts requests that compute exactly one token whose prompt and earlier
	// outputs are all in KV (a decode step, as opposed to a prefill chunk).
	DecodeSteps int
	// DecodeStepKVTokens is Σ over decode steps of the tokens the step attends to (its KV length
	// including the new token).
	DecodeStepKVTokens int
	// SampledTokens counts requests whose known tokens are all computed by this pass, so the
	// pass computes their logits (decode steps and finished prefills, also on a prefill-only
	// worker).
	SampledTokens int
	// DraftTokens counts the draft tokens the pass's decode steps verify (speculative decoding,
	// engine.speculation): each goes through the GEMMs and the lm_head like a token of the
	// pass. DraftKVTokens is Σ over them of the KV length each attends to (its step's KV length
	// plus its position among the drafts). Both are 0 without speculation.
	DraftTokens   int
	DraftKVTokens int
	// DraftProposals counts, with speculative decoding on, the requests that propose drafts for
	// their next round at the end of this pass: those that sample a token in it and have more
	// than one output token left. DraftProposalKVTokens is Σ over them of their tokens in KV.
	// Only a drafter that runs a model prices them (MTP); n-gram drafting is a host lookup.
	DraftProposals        int
	DraftProposalKVTokens int
}

// Model gives the duration of a forward pass in ms. Implementations must return finite values
// >= 0 and must not allocate.
type Model interface {
	// PassMs is the time of the whole pass: prefill part plus decode part (the vLLM core runs
	// them in one forward and sums the two, engine-internals.md §1.2).
	PassMs(b *Batch) float64
}

// Fixed charges PrefillMs for a pass with at least one prefill request and DecodeMs for a pass
// with at least one decoding request; a mixed pass pays both (dynosim-spec.md §3.2.4; the
// reference leaves mixed passes UNCONFIRMED, servesweep sums them like every vLLM pass). Draft
// tokens cost nothing more: a speculative round is one decode pass.
type Fixed struct {
	PrefillMs, DecodeMs float64
}

// PassMs implements Model.
func (f Fixed) PassMs(b *Batch) float64 {
	ms := 0.0
	if b.PrefillRequests > 0 {
		ms += f.PrefillMs
	}
	if b.DecodeRequests > 0 {
		ms += f.DecodeMs
	}
	return ms
}

// Polynomial is the reference mocker's uncalibrated closed form (dynosim-spec.md §3.2.4,
// engine-internals.md §3.1). It ignores model, GPU and parallelism.
//
// Prefill: with n = prefill requests, mean_isl = (Σ context + Σ new) / n and
// mean_prefix = Σ context / n (both integer divisions, as the reference), T = n × (mean_isl −
// mean_prefix): prefill_ms = 4.209989e-7·T² + 1.518344e-2·T + 16.50142, or 0 when T = 0.
//
// Decode: with u = min(1, decode KV tokens / pool tokens) (u = 1 when the pool is empty):
// decode_ms = max(1, −25.74·u² + 54.01·u + 5.74), or 0 with no decoding request. Draft tokens
// do not change it (the closed form depends on KV use only).
type Polynomial struct{}

// Polynomial coefficients, from the reference mocker's perf model (engine-internals.md §3.1).
const (
	polyPrefillA = 4.209989e-07
	polyPrefillB = 1.518344e-02
	polyPrefillC = 1.650142e+01
	polyDecodeA  = -25.74
	polyDecodeB  = 54.01
	polyDecodeC  = 5.74
)

// PrefillMs is the prefill part of a pass in ms.
func (Polynomial) PrefillMs(b *Batch) float64 {
	n := b.PrefillRequests
	if n == 0 {
		return 0
	}
	meanISL := (b.PrefillContextTokens + b.PrefillTokens) / n
	meanPrefix := b.PrefillContextTokens / n
	t := float64(n * (meanISL - meanPrefix))
	if t <= 0 {
		return 0
	}
	return polyPrefillA*t*t + polyPrefillB*t + polyPrefillC
}

// DecodeMs is the decode part of a pass in ms.
func (Polynomial) DecodeMs(b *Batch) float64 {
	if b.DecodeRequests == 0 {
		return 0
	}
	u := 1.0
	if b.KVCapacityTokens > 0 {
		u = min(1, float64(b.DecodeKVTokens)/float64(b.KVCapacityTokens))
	}
	return max(1, polyDecodeA*u*u+polyDecodeB*u+polyDecodeC)
}

// PassMs implements Model.
func (p Polynomial) PassMs(b *Batch) float64 { return p.PrefillMs(b) + p.DecodeMs(b) }
