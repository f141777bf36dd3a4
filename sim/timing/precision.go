package timing

import (
	"fmt"
	"os"
	"strings"
)

// Precision is a numeric format of weights/GEMMs or of the KV cache.
type Precision string

// Precisions. BF16 is also the format of anything left unquantized (embeddings, lm_head,
// norms, activations).
const (
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
	FP4  Precision = "fp4"
)

// ParsePrecision reads a precision name: bf16 (also bfloat16, fp16, float16, half: same size),
// fp8 (also fp8_block, float8, e4m3), fp4 (also nvfp4, mxfp4). The error lists the valid names.
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bf16", "bfloat16", "fp16", "float16", "half":
		return BF16, nil
	case "fp8", "fp8_block", "float8", "e4m3", "fp8_e4m3":
		return FP8, nil
	case "fp4", "nvfp4", "mxfp4":
		return FP4, nil
	}
	return "", fmt.Errorf("unknown precision %q; valid: bf16, fp8, fp4", s)
}

// WeightBytes is the storage of one GEMM weight in bytes, scales included: BF16 2; FP8 1
// (per-tensor or 128×128-block scales are negligible); FP4 0.5625 (NVFP4: 4-bit values plus
// one FP8 scale per 16 values, NVIDIA's NVFP4 format description).
func (p Precision) WeightBytes() float64 {
	switch p {
	case FP8:
		return 1
	case FP4:
		return 0.5625
	}
	return 2
}

// KVBytes is the size of one cached K or V element in bytes: 1 for FP8, else 2 (an FP4 KV cache
// is not modeled; KV precisions are bf16 and fp8).
func (p Precision) KVBytes() int64 {
	if p == FP8 {
		return 1
	}
	return 2
}

// Precisions is a model's numeric setup: the format of its GEMM weights (and GEMM math), of
// its KV cache, and of its attention math.
type Precisions struct {
	// Weights is the format of the GEMM weights and GEMM math (bf16, fp8, fp4).
	Weights Precision
	// KVCache is the format of the KV cache (bf16, fp8).
	KVCache Precision
	// Attention is the format the attention kernels compute Q·Kᵀ and P·V in (bf16, fp8); ""
	// means KVCache's. An engine whose kernels take an FP8 KV cache but a BF16 query computes
	// in BF16 (AttentionFormat).
	Attention Precision
}

// AttentionFormat is the format attention computes in: Attention, or KVCache when Attention is
// unset.
func (p Precisions) AttentionFormat() Precision {
	if p.Attention != "" {
		return p.Attention
	}
	return p.KVCache
}

// DefaultPrecisions is what a model id implies: an id that names FP8 (e.g.
// nvidia/Llama-3.1-8B-Instruct-FP8) means FP8 weights and an FP8 KV cache (NVIDIA's ModelOpt
// FP8 checkpoints quantize the KV cache too); one that names FP4/NVFP4 means FP4 weights and an
// FP8 KV cache (the ModelOpt NVFP4 recipe); anything else is BF16 for both.
func DefaultPrecisions(modelID string) Precisions {
	k := strings.ToLower(modelID)
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	switch {
	case strings.Contains(k, "fp4"):
		return Precisions{Weights: FP4, KVCache: FP8}
	case strings.Contains(k, "fp8"):
		return Precisions{Weights: FP8, KVCache: FP8}
	}
	return Precisions{Weights: BF16, KVCache: BF16}
}

// WeightsConflict describes an engine.precision.weights that contradicts the weight format a
// catalog model id names (DefaultPrecisions: nvidia/Llama-3.1-8B-Instruct-FP8 means FP8), for a
// caller to prefix with the file and engine.precision.weights: the explicit format wins, as it
// always has (the run prices its weights), and the id's FP8 KV cache still applies where
// engine.precision.kv_cache is auto. "" when there is nothing to say: weights empty, auto, not a
// format, or the id's own; an id that names no format; a directory (its config.json, not its
// name, gives the formats) or a name the catalog does not know.
func WeightsConflict(modelID, weights string) string {
	if weights == "" || weights == "auto" {
		return ""
	}
	given, err := ParsePrecision(weights)
	named := DefaultPrecisions(modelID)
	if err != nil || named.Weights == BF16 || given == named.Weights {
		return ""
	}
	if st, err := os.Stat(modelID); err == nil && st.IsDir() {
		return ""
	}
	if _, err := LookupModel(modelID); err != nil {
		return ""
	}
	return fmt.Sprintf("%s contradicts engine.model %q, whose name means %s weights; engine.precision.weights wins: the run "+
		"prices %s weights (and the name's %s KV cache where engine.precision.kv_cache is auto)",
		weights, modelID, named.Weights, given, named.KVCache)
}
