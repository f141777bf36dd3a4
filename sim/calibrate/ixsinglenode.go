package calibrate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// VLLMDefaultMaxSequences and VLLMDefaultMaxBatchedTokens are vLLM's --max-num-seqs and
// --max-num-batched-tokens when a server started with `vllm serve` on a GPU of at least 70 GiB
// (other than A100) sets neither: EngineArgs' defaults for the OpenAI API server in the releases
// the InferenceX MoE rows ran (0.18, 0.19).
const (
	VLLMDefaultMaxSequences     = 1024
	VLLMDefaultMaxBatchedTokens = 8192
)

// singleNodeScript is the serving settings one InferenceX single-node script
// (benchmarks/single_node/<Script>.sh of github.com/SemiAnalysisAI/InferenceX) gave a MoE model's
// aggregated deployment while its flags stayed as read: rows measured on a date in [From, Until)
// of that model, GPU, precision and engine are served with Flags. Until is the first later
// commit date whose version was not read.
type singleNodeScript struct {
	Script, Commit string
	// ModelPrefixes match the row's model id, lower-cased ("deepseek-ai/deepseek-" covers
	// DeepSeek-R1 and DeepSeek-V3, one architecture served by the dsr1 scripts).
	ModelPrefixes     []string
	System, Precision string
	Backend           string
	From, Until       string
	// MaxTensor is the largest TP the single-node script runs (8 GPUs): a row with a wider
	// shape ran another deployment and is not matched.
	MaxTensor int
	// Flags gives the row's flags (its TP, concurrency and ISL select among the script's
	// branches).
	Flags func(r Row) ServerFlags
	// Shape, when set, gives the aggregated worker a row of InferenceX's expert-parallel
	// entries ran (expertParallelRow) from its tp_size T: T GPUs with the experts split T ways,
	// and a note saying which.
	Shape func(r Row) (WorkerShape, string)
	// ExpertParallel lists an SGLang script's search-space entries {tp: T, ep: E} with E > 1 in
	// the model's entry of .github/configs/nvidia-master.yaml on the same dates; the file writes
	// them tp_size T × E, moe_tp_size T, moe_ep_size E (sglangEPShape).
	ExpertParallel [][2]int
}

// expertParallelRow reports the measured file's form of an aggregated InferenceX vLLM row run
// with expert parallelism: a search-space entry {tp: T, ep: E} (dp-attn or not) is written
// tp_size T, attention_dp_size E, moe_ep_size T × E, while the script ran T GPUs (vLLM's
// --enable-expert-parallel spreads the experts over tensor × data parallel = T GPUs). Every such
// row of the shared MoE file has E = T.
func expertParallelRow(r Row) bool {
	return r.Agg.AttentionData > 1 && r.Agg.AttentionData == r.Agg.Tensor && r.Agg.MoEExpert == r.Agg.Tensor*r.Agg.AttentionData
}

// vllmEPShape is the deployment of a vLLM script started with --tensor-parallel-size=T and
// --enable-expert-parallel (dp false) or --tensor-parallel-size=1 --data-parallel-size=T
// --enable-expert-parallel (dp true), T the row's tp_size.
func vllmEPShape(r Row, dp bool, script string) (WorkerShape, string) {
	t := r.Agg.Tensor
	s := WorkerShape{Tensor: t, Pipeline: r.Agg.Pipeline, AttentionData: 1, MoETensor: 1, MoEExpert: t}
	how := fmt.Sprintf("--tensor-parallel-size=%d --enable-expert-parallel", t)
	if dp {
		s.Tensor, s.AttentionData = 1, t
		how = fmt.Sprintf("--tensor-parallel-size=1 --data-parallel-size=%d --enable-expert-parallel", t)
	}
	return s, fmt.Sprintf("shape from %s (%s): %d GPUs, experts split %d ways, in place of the file's tp_size %d × attention_dp_size %d with moe_ep_size %d",
		script, how, t, t, r.Agg.Tensor, r.Agg.AttentionData, r.Agg.MoEExpert)
}

// sglangEPShape gives an aggregated InferenceX SGLang row of an expert-parallel entry the worker
// its script ran, and returns the note that says so (nil when the row is not one). The measured
// file writes the entry {tp: T, ep: E} as tp_size T × E, moe_tp_size T, moe_ep_size E (config
// ids 717, 718 and 736 of the shared MoE file), while the script started SGLang with
// --tensor-parallel-size T --ep-size E on T GPUs: attention over T ranks, the experts split E
// ways, each expert's FFN over T / E. A row is read so only when its script's entries
// (singleNodeScript.ExpertParallel) list {T, E}: a TP4 worker with MoE-TP2 × EP2 is also a shape
// a deployment can have.
func sglangEPShape(r *Row, model string) []string {
	a := r.Agg
	t, e := a.MoETensor, a.MoEExpert
	if a.AttentionData > 1 || e < 2 || t < e || t%e != 0 || a.Tensor != t*e {
		return nil
	}
	served := *r
	served.Agg.Tensor = t
	s, ok := singleNodeScriptOf(served, model)
	if !ok || !slices.Contains(s.ExpertParallel, [2]int{t, e}) {
		return nil
	}
	r.Agg = WorkerShape{Tensor: t, Pipeline: a.Pipeline, AttentionData: 1, MoETensor: t / e, MoEExpert: e, BatchSize: a.BatchSize}
	return []string{fmt.Sprintf("shape from %s.sh (--tensor-parallel-size=%d --ep-size %d, the entry {tp: %d, ep: %d}): %d GPUs, experts split %d ways, in place of the file's tp_size %d with moe_tp_size %d × moe_ep_size %d",
		s.Script, t, e, t, e, t, e, a.Tensor, t, e)}
}

// minimaxFP4DPAttention reports whether a MiniMax-M2.5 FP4 B300 vLLM row ran an entry of
// minimaxm2.5-fp4-b300-vllm with dp-attn: true in InferenceX's .github/configs/nvidia-master.yaml,
// as the last commit of the row's date lists them: on 2026-04-17 (071f849cb) TP2 at 1k/1k and
// concurrency 512; from 2026-04-21 (633fd2377 on, the day's last) TP2 at 1k/1k and concurrency
// 256-2048 and at 8k/1k and 512. The database's config ids of the file's rows agree (726: the
// entry without dp-attn, 727: the one with).
func minimaxFP4DPAttention(r Row) bool {
	if r.Agg.Tensor != 2 || r.OSL != 1024 {
		return false
	}
	c := r.Concurrency
	if r.MeasuredAt < "2026-04-21" {
		return r.ISL == 1024 && c == 512
	}
	return r.ISL == 1024 && c >= 256 && c <= 2048 || r.ISL == 8192 && c == 512
}

// recvInterval is the SGLang scripts' --scheduler-recv-interval: 30 from concurrency 16, else 10.
func recvInterval(conc int) int {
	if conc >= 16 {
		return 30
	}
	return 10
}

// sglangFlags are the flags of an SGLang script (script: its commit and file, as Source names
// them) that sets --max-running-requests maxRunning (-1: $CONC), --mem-fraction-static mem,
// the KV dtype kv ("fp8", or "bf16" for one left at auto), --scheduler-recv-interval recv and
// --chunked-prefill-size chunk, with the radix cache off; Source is written from the values.
func sglangFlags(script string, maxRunning int, mem float64, kv string, recv, chunk int) ServerFlags {
	running, kvText := "$CONC", "fp8 KV"
	if maxRunning > 0 {
		running = fmt.Sprint(maxRunning)
	}
	if kv == "bf16" {
		kvText = "KV dtype auto (BF16)"
	}
	return ServerFlags{MaxSequences: maxRunning, ChunkedPrefill: true, OverlapScheduling: true, KVCache: kv, MemoryFraction: mem,
		RecvInterval: recv, ChunkedPrefillSize: chunk,
		Source: fmt.Sprintf("InferenceX %s: max-running-requests %s, mem-fraction-static %g, %s, radix cache off, "+
			"scheduler-recv-interval %d (new requests taken in every %d decode passes), chunked-prefill-size %d",
			script, running, mem, kvText, recv, recv, chunk)}
}

// singleNodeScripts are the InferenceX single-node MoE scripts read, each at the commit named.
// vLLM from 0.14 schedules asynchronously by default (engine.overlap_scheduling) and always
// chunks prompts; SGLang overlaps by default. A KV cache dtype the script leaves at auto is the
// model's activation dtype, BF16.
var singleNodeScripts = []singleNodeScript{
	{Script: "minimaxm2.5_fp8_b300", Commit: "340d7854c", ModelPrefixes: []string{"minimaxai/minimax-m2.5"},
		System: "b300_sxm", Precision: "fp8", Backend: config.BackendVLLM, From: "2026-04-17", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return ServerFlags{MaxBatchedTokens: 2 * r.ISL, MaxSequences: VLLMDefaultMaxSequences, BlockSize: 32,
				ChunkedPrefill: true, OverlapScheduling: true, KVCache: "fp8", MemoryFraction: 0.9,
				Source: fmt.Sprintf("InferenceX 340d7854c minimaxm2.5_fp8_b300.sh: max-num-batched-tokens 2 × ISL = %d, max-num-seqs vLLM's default %d, block size 32, fp8 KV, no prefix caching, 0.9 of memory, async scheduling (vLLM's default)",
					2*r.ISL, VLLMDefaultMaxSequences)}
		},
		// No DP-attention branch: a dp-attn entry runs as the plain expert-parallel one.
		Shape: func(r Row) (WorkerShape, string) { return vllmEPShape(r, false, "minimaxm2.5_fp8_b300.sh") }},
	{Script: "minimaxm2.5_fp4_b300", Commit: "22d0f12f7", ModelPrefixes: []string{"minimaxai/minimax-m2.5"},
		System: "b300_sxm", Precision: "fp4", Backend: config.BackendVLLM, From: "2026-04-17", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return ServerFlags{MaxBatchedTokens: 2 * r.ISL, MaxSequences: VLLMDefaultMaxSequences,
				ChunkedPrefill: true, OverlapScheduling: true, KVCache: "fp8", MemoryFraction: 0.9,
				Source: fmt.Sprintf("InferenceX 22d0f12f7 minimaxm2.5_fp4_b300.sh: max-num-batched-tokens 2 × ISL = %d, max-num-seqs vLLM's default %d, fp8 KV, no prefix caching, 0.9 of memory, async scheduling (vLLM's default)",
					2*r.ISL, VLLMDefaultMaxSequences)}
		},
		Shape: func(r Row) (WorkerShape, string) {
			return vllmEPShape(r, minimaxFP4DPAttention(r), "minimaxm2.5_fp4_b300.sh")
		}},
	{Script: "kimik2.5_fp4_b300", Commit: "a35e53694", ModelPrefixes: []string{"moonshotai/kimi-k2.5"},
		System: "b300_sxm", Precision: "fp4", Backend: config.BackendVLLM, From: "2026-04-17", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return ServerFlags{MaxBatchedTokens: VLLMDefaultMaxBatchedTokens, MaxSequences: -1,
				ChunkedPrefill: true, OverlapScheduling: true, KVCache: "bf16", MemoryFraction: 0.9,
				Source: "InferenceX a35e53694 kimik2.5_fp4_b300.sh: max-num-seqs $CONC, max-num-batched-tokens vLLM's default 8192, KV dtype auto (BF16), no prefix caching, 0.9 of memory, async scheduling (vLLM's default)"}
		}},
	{Script: "minimaxm2.5_fp8_h100", Commit: "626932a11", ModelPrefixes: []string{"minimaxai/minimax-m2.5"},
		System: "h100_sxm", Precision: "fp8", Backend: config.BackendVLLM, From: "2026-03-11", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return ServerFlags{MaxBatchedTokens: VLLMDefaultMaxBatchedTokens, MaxSequences: 256,
				ChunkedPrefill: true, OverlapScheduling: true, KVCache: "bf16", MemoryFraction: 0.9,
				Source: "InferenceX 626932a11 minimaxm2.5_fp8_h100.sh: max-num-seqs 256, max-num-batched-tokens vLLM's default 8192, KV dtype auto (BF16), no prefix caching (the random prompts share none either way), 0.9 of memory, async scheduling (vLLM's default)"}
		},
		Shape: func(r Row) (WorkerShape, string) { return vllmEPShape(r, false, "minimaxm2.5_fp8_h100.sh") }},
	{Script: "gptoss_fp4_h100", Commit: "626932a11", ModelPrefixes: []string{"openai/gpt-oss-120b"},
		System: "h100_sxm", Precision: "fp4", Backend: config.BackendVLLM, From: "2026-02-25", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return ServerFlags{MaxBatchedTokens: 8192, MaxSequences: -1,
				ChunkedPrefill: true, OverlapScheduling: true, KVCache: "bf16", MemoryFraction: 0.9,
				Source: "InferenceX 626932a11 gptoss_fp4_h100.sh: max-num-seqs $CONC, max-num-batched-tokens 8192, KV dtype auto (BF16), no prefix caching, 0.9 of memory, async scheduling (vLLM's default)"}
		}},
	{Script: "qwen3.5_fp8_b300", Commit: "c0f62a2ef", ModelPrefixes: []string{"qwen/qwen3.5-397b-a17b"},
		System: "b300_sxm", Precision: "fp8", Backend: config.BackendSGLang, From: "2026-04-17", Until: "2026-05-21", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return sglangFlags("c0f62a2ef qwen3.5_fp8_b300.sh", -1, 0.8, "fp8", 10, 16384)
		}},
	{Script: "qwen3.5_bf16_b300", Commit: "32274d6c1", ModelPrefixes: []string{"qwen/qwen3.5-397b-a17b"},
		System: "b300_sxm", Precision: "bf16", Backend: config.BackendSGLang, From: "2026-04-18", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return sglangFlags("32274d6c1 qwen3.5_bf16_b300.sh", 128, 0.82, "bf16", recvInterval(r.Concurrency), 32768)
		}},
	{Script: "qwen3.5_fp4_b300", Commit: "8acbd08b7", ModelPrefixes: []string{"qwen/qwen3.5-397b-a17b"},
		System: "b300_sxm", Precision: "fp4", Backend: config.BackendSGLang, From: "2026-04-18", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return sglangFlags("8acbd08b7 qwen3.5_fp4_b300.sh", 128, 0.8, "fp8", recvInterval(r.Concurrency), 32768)
		},
		ExpertParallel: [][2]int{{2, 2}}},
	{Script: "dsr1_fp8_b300", Commit: "5b302f147", ModelPrefixes: []string{"deepseek-ai/deepseek-r1", "deepseek-ai/deepseek-v3"},
		System: "b300_sxm", Precision: "fp8", Backend: config.BackendSGLang, From: "2026-04-17", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			if r.Agg.Tensor == 4 {
				return sglangFlags("5b302f147 dsr1_fp8_b300.sh (TP4)", 32, 0.95, "fp8", 10, 8192)
			}
			return sglangFlags("5b302f147 dsr1_fp8_b300.sh (TP8)", 128, 0.82, "fp8", recvInterval(r.Concurrency), 32768)
		}},
	{Script: "dsr1_fp4_b300", Commit: "9ebeafb4e", ModelPrefixes: []string{"deepseek-ai/deepseek-r1", "deepseek-ai/deepseek-v3"},
		System: "b300_sxm", Precision: "fp4", Backend: config.BackendSGLang, From: "2026-04-17", Until: "2026-05-12", MaxTensor: 8,
		Flags: func(r Row) ServerFlags {
			return sglangFlags("9ebeafb4e dsr1_fp4_b300.sh", 256, 0.85, "fp8", recvInterval(r.Concurrency), 16384)
		},
		ExpertParallel: [][2]int{{4, 4}, {8, 8}}},
}

// singleNodeDeployment gives an aggregated InferenceX row the worker its script ran
// (singleNodeShape, whose notes it returns) and checks that the row is a run of the public
// configuration in force on its date (aggListed) on one node of its GPUs (multiNodeAggregated):
// the error is the skip reason of a row that is not, or of a measured_at that is not a date.
func singleNodeDeployment(r *Row, model string) ([]string, error) {
	notes, err := singleNodeShape(r, model)
	if err != nil || !aggregatedRow(*r) || HarnessFor(*r).Name != HarnessInferenceX {
		return notes, err
	}
	if err := multiNodeAggregated(*r); err != nil {
		return notes, err
	}
	return notes, aggListed(*r)
}

// MultiNodeAggregated starts the skip reason of an aggregated InferenceX row whose worker, as
// run (singleNodeShape), needs more GPUs than one node of its GPU holds (multiNodeAggregated).
const MultiNodeAggregated = "an aggregated InferenceX row on more GPUs than one node holds"

// multiNodeAggregated refuses aggregated InferenceX row r when its worker (tensor × attention
// data × pipeline GPUs, as singleNodeShape reads them) spans more GPUs than one node of r's GPU
// holds (the reason names the node's GPUs, not the row's, so that such rows group under one
// reason) (timing.Hardware.NodeGPUs: 4 on a GB200 or GB300 tray, 8 on an HGX board). InferenceX
// serves aggregated deployments from single-node scripts (benchmarks/single_node/*.sh); its
// multi-node runs are disaggregated Dynamo deployments. Its GB200 launcher of November 2025
// (runners/launch_gb200-nv.sh at 0ba7aa3ff) submits only Dynamo disaggregated jobs, of 4-GPU
// context workers and generation workers of 8 to 48 GPUs, and the file's aggregated GB200 rows of
// 2025-11-16/17 give tp_size 12 to 72: the total GPUs of such a run (4 × context workers +
// generation GPUs, e.g. 64 = 8 × 4 + 32), with no prefill or decode shape. Simulating one as an
// aggregated worker of that many GPUs would score a deployment that never ran: the error is the
// start of the skip reason of a row whose disaggregated run the public record does not determine
// (multiNodeTopology reads the others as that run); an unknown GPU is left to the planner's own
// error.
func multiNodeAggregated(r Row) error {
	hw, err := timing.LookupHardware(r.System)
	if err != nil || hw.NodeGPUs <= 0 {
		return nil
	}
	if max(r.Agg.Tensor, 1)*max(r.Agg.AttentionData, 1)*max(r.Agg.Pipeline, 1) <= hw.NodeGPUs {
		return nil
	}
	return fmt.Errorf("%s: its worker's GPUs (tp_size × attention_dp_size × pp_size) are more than the %d of one %s node, and InferenceX runs every multi-node deployment disaggregated (its multi-node launchers, e.g. runners/launch_gb200-nv.sh at 0ba7aa3ff, submit only Dynamo disaggregated jobs): the row is such a run with its total GPUs in tp_size",
		MultiNodeAggregated, hw.NodeGPUs, r.System)
}

// singleNodeShape gives an aggregated InferenceX vLLM row of an expert-parallel entry
// (expertParallelRow) the worker its script ran, and returns the note that says so: the Shape
// of the script that served it, or, for a row no tabulated script covers, the plain
// expert-parallel worker every vLLM script of InferenceX starts with --enable-expert-parallel
// (its tp_size GPUs); an SGLang row of an expert-parallel entry its script lists, the worker
// sglangEPShape gives. Other rows are left as they are. An aggregated InferenceX row whose
// measured_at is given but is not a date (YYYY-MM-DD) is an error: the scripts in force on it
// cannot be found.
func singleNodeShape(r *Row, model string) ([]string, error) {
	if !aggregatedRow(*r) || HarnessFor(*r).Name != HarnessInferenceX {
		return nil, nil
	}
	if d := strings.TrimSpace(r.MeasuredAt); d != "" {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return nil, fmt.Errorf("measured_at %q is not a date (YYYY-MM-DD): the serving scripts InferenceX ran on it cannot be found", r.MeasuredAt)
		}
		r.MeasuredAt = d
	}
	if strings.EqualFold(strings.TrimSpace(r.Backend), config.BackendSGLang) {
		return sglangEPShape(r, model), nil
	}
	if !expertParallelRow(*r) || !strings.EqualFold(strings.TrimSpace(r.Backend), config.BackendVLLM) {
		return nil, nil
	}
	shape, note := vllmEPShape(*r, false, "InferenceX's vLLM scripts, none tabulated for the row's model, GPU, precision and date")
	if s, ok := singleNodeScriptOf(*r, model); ok && s.Shape != nil {
		shape, note = s.Shape(*r)
	}
	r.Agg = shape
	return []string{note}, nil
}

// singleNodeFlags returns the flags of an aggregated InferenceX MoE row served by one of
// singleNodeScripts, and false when none matches its model, GPU, precision, engine, date and TP.
func singleNodeFlags(r Row, model string) (ServerFlags, bool) {
	if s, ok := singleNodeScriptOf(r, model); ok {
		return s.Flags(r), true
	}
	return ServerFlags{}, false
}

// aggregatedRow reports whether r's mode is agg or aggregated, in any case, as PlanRow reads it.
func aggregatedRow(r Row) bool {
	mode := strings.ToLower(strings.TrimSpace(r.Mode))
	return mode == "agg" || mode == "aggregated"
}

// singleNodeScriptOf returns the entry of singleNodeScripts that served aggregated row r of model.
func singleNodeScriptOf(r Row, model string) (singleNodeScript, bool) {
	if !aggregatedRow(r) || r.MeasuredAt == "" {
		return singleNodeScript{}, false
	}
	model = strings.ToLower(model)
	for _, s := range singleNodeScripts {
		if r.System != s.System || !strings.EqualFold(r.Precision, s.Precision) || r.Backend != s.Backend ||
			r.MeasuredAt < s.From || r.MeasuredAt >= s.Until || max(r.Agg.Tensor, 1) > s.MaxTensor {
			continue
		}
		for _, p := range s.ModelPrefixes {
			if strings.HasPrefix(model, p) {
				return s, true
			}
		}
	}
	return singleNodeScript{}, false
}
