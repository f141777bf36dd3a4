package calibrate

import (
	"regexp"
	"strconv"
)

// sglangRedundantExperts is the redundant experts per MoE layer (--ep-num-redundant-experts) of
// the prefill and the decode workers of the SGLang srt-slurm recipes InferenceX's disaggregated
// DeepSeek-R1 deployments name, read by hand from the recipe files as InferenceX tracks them
// (github.com/SemiAnalysisAI/InferenceX at 80d98084f, benchmarks/multi_node/srt-slurm-recipes/,
// the copy of NVIDIA/srt-slurm's recipes/ the configuration's recipe paths name). Every SGLang
// recipe of that copy that sets the flag is here; the others place none.
var sglangRedundantExperts = map[string][2]int{
	"recipes/gb200-fp4/1k1k/max-tpt.yaml":   {0, 32},
	"recipes/gb200-fp4/1k1k/mid-curve.yaml": {0, 32},
	"recipes/gb200-fp4/8k1k/max-tpt.yaml":   {0, 32},
	"recipes/gb200-fp4/8k1k/mid-curve.yaml": {0, 32},
	"recipes/gb200-fp8/1k1k/max-tpt.yaml":   {32, 32},
	"recipes/gb200-fp8/1k1k/mid-curve.yaml": {32, 32},
	"recipes/gb200-fp8/1k1k/ultra-tpt.yaml": {32, 32},
	"recipes/gb200-fp8/8k1k/max_tpt.yaml":   {32, 32},
	"recipes/gb200-fp8/8k1k/mid-curve.yaml": {32, 32},
	"recipes/gb300-fp4/1k1k/max_tpt.yaml":   {0, 32},
	"recipes/gb300-fp4/1k1k/mid_curve.yaml": {0, 32},
	"recipes/gb300-fp4/8k1k/max_tpt.yaml":   {0, 32},
	"recipes/gb300-fp4/8k1k/mid_curve.yaml": {0, 32},
	"recipes/gb300-fp8/1k1k/stp/max.yaml":   {32, 32},
	"recipes/gb300-fp8/1k1k/stp/mid.yaml":   {32, 32},
	"recipes/gb300-fp8/8k1k/stp/max.yaml":   {32, 32},
	"recipes/gb300-fp8/8k1k/stp/mid.yaml":   {32, 32},
}

// trtllmEPLBSlots matches the _eplbN part of a TensorRT-LLM srt-slurm recipe's name (e.g.
// ctx3_gen1_dep32_batch64_eplb288_mtp1.yaml): N is its decode workers' MoE load-balancer
// slots per layer (moe_config.load_balancer.num_slots in the recipe; 0 runs no load balancer).
var trtllmEPLBSlots = regexp.MustCompile(`_eplb(\d+)_`)

// RecipeRedundantExperts returns the redundant experts per MoE layer that the prefill and the
// decode workers of InferenceX serving recipe recipe place beside a model's experts routed
// experts: from sglangRedundantExperts for SGLang's recipes, and for TensorRT-LLM's the decode
// workers' load-balancer slots beyond experts (the recipe name's _eplbN; TensorRT-LLM's
// prefill workers of those recipes run no load balancer). 0, 0 for any other recipe or none.
func RecipeRedundantExperts(recipe string, experts int) (prefill, decode int) {
	if r, ok := sglangRedundantExperts[recipe]; ok {
		return r[0], r[1]
	}
	if m := trtllmEPLBSlots.FindStringSubmatch(recipe); m != nil {
		if slots, err := strconv.Atoi(m[1]); err == nil && slots > experts {
			return 0, slots - experts
		}
	}
	return 0, 0
}
