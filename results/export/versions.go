package export

import (
	"fmt"
	"strconv"
	"strings"
)

// minVersions are, per target, the oldest engine.backend_version (major, minor) whose public
// CLI documentation names every flag and option the export writes:
//
//   - vLLM 0.9: --tensor-parallel-size, --pipeline-parallel-size, --data-parallel-size,
//     --enable-expert-parallel, --max-num-seqs, --max-num-batched-tokens, --block-size (8 to
//     128), --enable-prefix-caching/--no-enable-prefix-caching, --enable-chunked-prefill,
//     --kv-cache-dtype (auto, fp8), --quantization fp8, --max-model-len,
//     --gpu-memory-utilization, --num-gpu-blocks-override, --kv-transfer-config; and, with
//     engine.overlap_scheduling, --async-scheduling (0.10 and later, refused before) and
//     --no-async-scheduling (written for 0.14 and later, whose default it overrides); and
//     --compilation-config's cudagraph_mode (engine.cuda_graphs: PIECEWISE written for 0.11 and
//     later, FULL_AND_PIECEWISE for 0.10.2 to 0.10.x, whose default is PIECEWISE; whole decode
//     graphs refused before 0.10.2, the first release whose use of cudagraph_mode is published:
//     InferenceX's B200 scripts of 2025-10 pass it to vllm/vllm-openai:v0.10.2).
//   - SGLang 0.5: --tp-size, --pp-size, --dp-size with --enable-dp-attention, --ep-size,
//     --max-running-requests, --chunked-prefill-size, --page-size, --disable-radix-cache,
//     --kv-cache-dtype (auto, fp8_e4m3), --quantization fp8, --context-length,
//     --mem-fraction-static, --max-total-tokens, --disaggregation-mode,
//     --disaggregation-transfer-backend, --disable-overlap-schedule.
//   - TensorRT-LLM 1.0 (PyTorch backend): trtllm-serve --tp_size, --pp_size, --ep_size,
//     --max_batch_size, --max_num_tokens, --max_seq_len, --kv_cache_free_gpu_memory_fraction,
//     --extra_llm_api_options; LLM-API options enable_attention_dp, enable_chunked_prefill,
//     kv_cache_config (enable_block_reuse, tokens_per_block, dtype, max_tokens,
//     free_gpu_memory_fraction), scheduler_config.capacity_scheduler_policy,
//     cache_transceiver_config, disable_overlap_scheduler.
//
// Dynamo's manifest follows the nvidia.com/v1alpha1 DynamoGraphDeployment of Dynamo 0.6 to
// 0.9 (spec.services), and its workers take the engine arguments above.
var minVersions = map[string][2]int{
	"vllm":   {0, 9},
	"sglang": {0, 5},
	"trtllm": {1, 0},
}

// coveredVersions says, per target, which versions the flag names follow (for the headers).
var coveredVersions = map[string]string{
	"vllm":   "0.9 and later",
	"sglang": "0.5 and later",
	"trtllm": "1.0 and later (PyTorch backend)",
	"dynamo": "0.6 to 0.9 (nvidia.com/v1alpha1)",
}

// checkVersion records an engine.backend_version older than the versions the export covers, or
// one it cannot read. "" (the latest) is covered.
func (x *exporter) checkVersion() {
	v := x.cfg.Engine.BackendVersion
	if v == "" {
		return
	}
	lo, ok := minVersions[x.backend]
	if !ok {
		return
	}
	major, minor, ok := majorMinor(v)
	if !ok {
		x.fail("engine.backend_version", fmt.Sprintf("%q is not a version the export can read (want MAJOR.MINOR[.PATCH...], e.g. %d.%d.0)", v, lo[0], lo[1]))
		return
	}
	if major < lo[0] || major == lo[0] && minor < lo[1] {
		x.fail("engine.backend_version", fmt.Sprintf("%s is older than the %s versions the export's flag names follow (%s); "+
			"set a version of %d.%d or later, or omit it for the latest", v, x.backendName(), coveredVersions[x.backend], lo[0], lo[1]))
	}
}

// vllmBefore reports whether engine.backend_version names a vLLM release older than
// major.minor; the latest (an unset version) and an unreadable one (refused by checkVersion)
// are not.
func (x *exporter) vllmBefore(major, minor int) bool { return x.vllmPatchBefore(major, minor, 0) }

// vllmPatchBefore is vllmBefore to the patch: older than major.minor.patch (a version without a
// patch number reads as .0).
func (x *exporter) vllmPatchBefore(major, minor, patch int) bool {
	ma, mi, pa, ok := versionParts(x.cfg.Engine.BackendVersion)
	return ok && (ma < major || ma == major && (mi < minor || mi == minor && pa < patch))
}

// majorMinor reads the leading MAJOR.MINOR of a version such as 0.11.0, v1.0.0rc3 or 0.5.1.post1.
func majorMinor(v string) (major, minor int, ok bool) {
	major, minor, _, ok = versionParts(v)
	return major, minor, ok
}

// versionParts reads the leading MAJOR.MINOR and the PATCH number after them of a version such
// as 0.11.0, v1.0.0rc3 or 0.5.1.post1 (the leading digits of each part; a missing or non-numeric
// patch reads as 0); ok is false without a numeric major and minor.
func versionParts(v string) (major, minor, patch int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, 0, false
	}
	num := func(s string) (int, bool) {
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		n, err := strconv.Atoi(s[:end])
		return n, err == nil
	}
	major, ok1 := num(parts[0])
	minor, ok2 := num(parts[1])
	if len(parts) == 3 {
		patch, _ = num(parts[2])
	}
	return major, minor, patch, ok1 && ok2 && len(parts[0]) > 0
}
