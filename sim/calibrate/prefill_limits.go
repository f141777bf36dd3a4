package calibrate

import (
	"path"
	"strings"
)

// trtllmPrefillLimits is the running requests (max_batch_size) and the tokens per pass
// (max_num_tokens) of each attention-DP rank of the prefill (context) workers of the TensorRT-LLM
// srt-slurm recipes InferenceX's disaggregated deployments name, keyed by the recipes' folder
// (recipes/<...>/<ISL and OSL>, the folder above stp/ or mtp/), read by hand from the recipe
// files as InferenceX tracks them (github.com/SemiAnalysisAI/InferenceX at 80d98084f,
// benchmarks/multi_node/srt-slurm-recipes/, backend.trtllm_config.prefill). Every recipe of a
// folder sets the same two values, STP and MTP alike, save the one in trtllmPrefillLimitsByFile.
var trtllmPrefillLimits = map[string][2]int{
	"recipes/trtllm/b200-fp4/1k1k":  {8, 10240},
	"recipes/trtllm/b200-fp4/8k1k":  {2, 16896},
	"recipes/trtllm/b200-fp8/1k1k":  {16, 16384},
	"recipes/trtllm/b200-fp8/8k1k":  {1, 8320},
	"recipes/trtllm/b300-fp4/1k1k":  {8, 10240},
	"recipes/trtllm/b300-fp4/8k1k":  {2, 16896},
	"recipes/trtllm/b300-fp8/1k1k":  {8, 8320},
	"recipes/trtllm/b300-fp8/8k1k":  {8, 8320},
	"recipes/trtllm/gb200-fp4/1k1k": {16, 16384},
	"recipes/trtllm/gb200-fp4/8k1k": {2, 16640},
	"recipes/trtllm/gb200-fp8/1k1k": {16, 16384},
	"recipes/trtllm/gb200-fp8/8k1k": {2, 16384},
	"recipes/trtllm/gb300-fp4/1k1k": {16, 16384},
	"recipes/trtllm/gb300-fp4/8k1k": {2, 16640},
	"recipes/trtllm/gb300-fp8/1k1k": {16, 16384},
	"recipes/trtllm/gb300-fp8/8k1k": {2, 16384},
	"recipes/trtllm/h100-fp8/1k1k":  {2, 2048},
	"recipes/trtllm/h100-fp8/8k1k":  {1, 8224},
	"recipes/trtllm/h200/1k1k":      {8, 8192},
	"recipes/trtllm/h200/8k1k":      {2, 16640},

	"recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/ISL1K_OSL1K": {16, 16384},
	"recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/ISL8K_OSL1K": {2, 16384},
}

// trtllmPrefillLimitsByFile holds the recipes whose prefill limits differ from their folder's
// (same source): a TP8 context worker without attention DP.
var trtllmPrefillLimitsByFile = map[string][2]int{
	"recipes/trtllm/b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1.yaml": {64, 8320},
}

// RecipePrefillLimits returns the running requests and the tokens per pass of each
// attention-DP rank of the prefill workers of InferenceX serving recipe recipe (a path as
// InferenceX's configuration names it, e.g. recipes/trtllm/b300-fp4/1k1k/stp/ctx1_gen5_...yaml;
// the configuration's "recipies/" misspelling is read as "recipes/"), from
// trtllmPrefillLimits, and from the folder they come from. A 1k8k recipe, of which InferenceX
// tracks none, takes its 1k1k sibling's limits (from names that folder): its prefill workers
// see the same 1,024-token prompts. ok is false for a recipe the table does not cover (SGLang's,
// the TensorRT-LLM ones InferenceX does not track, none).
func RecipePrefillLimits(recipe string) (batch, tokens int, from string, ok bool) {
	if recipe == "" {
		return 0, 0, "", false
	}
	recipe = strings.Replace(recipe, "recipies/", "recipes/", 1)
	if l, ok := trtllmPrefillLimitsByFile[recipe]; ok {
		return l[0], l[1], recipe, true
	}
	dir := path.Dir(path.Dir(recipe))
	if l, ok := trtllmPrefillLimits[dir]; ok {
		return l[0], l[1], dir, true
	}
	if strings.HasSuffix(dir, "/1k8k") {
		sib := strings.TrimSuffix(dir, "1k8k") + "1k1k"
		if l, ok := trtllmPrefillLimits[sib]; ok {
			return l[0], l[1], sib, true
		}
	}
	return 0, 0, "", false
}
