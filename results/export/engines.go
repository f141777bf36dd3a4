package export

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/timing"
)

// vllmBlockSizes are the KV block sizes vLLM's --block-size accepts on CUDA GPUs (its
// documented choices, less 1, which the simulator does not take for vLLM).
var vllmBlockSizes = []int{8, 16, 32, 64, 128}

// vllmArgs returns the vLLM engine arguments of role r (vllm serve's, which Dynamo's vLLM worker
// takes too). standalone adds what a bare `vllm serve` needs and Dynamo supplies itself: the
// port and, for disaggregated roles, the KV connector.
func (x *exporter) vllmArgs(r roleRef, standalone bool) []arg {
	w, p := r.w, r.w.Parallelism
	var a []arg
	if standalone {
		a = append(a, arg{"--port", "${PORT:-8000}"})
	}
	a = append(a,
		arg{"--tensor-parallel-size", itoa(p.Tensor)},
		arg{"--pipeline-parallel-size", itoa(p.Pipeline)},
		arg{"--data-parallel-size", itoa(p.AttentionData)})
	x.checkMoE(r, false)
	if p.MoeExpert > 1 {
		a = append(a, arg{"--enable-expert-parallel", ""})
	}
	if p.RedundantExperts > 0 {
		// vLLM places redundant experts with its expert-parallel load balancer (EPLBConfig, whose
		// --eplb-config flag vLLM 0.11 has).
		if x.vllmBefore(0, 11) {
			x.unsupported(r.path+".parallelism.redundant_experts", p.RedundantExperts,
				"vLLM's --eplb-config (num_redundant_experts) needs vLLM 0.11 or later; set engine.backend_version accordingly or use 0")
		}
		a = append(a, arg{"--enable-eplb", ""}, arg{"--eplb-config", fmt.Sprintf(`{"num_redundant_experts": %d}`, p.RedundantExperts)})
	}
	x.refuse(r) // --max-num-batched-tokens below --max-num-seqs, a --block-size vLLM does not take
	a = append(a,
		arg{"--max-num-seqs", itoa(w.Scheduler.MaxSequences)},
		arg{"--max-num-batched-tokens", itoa(w.Scheduler.MaxBatchedTokens)})
	a = append(a, arg{"--block-size", itoa(w.KVCache.BlockSize)})
	if w.KVCache.PrefixCaching {
		a = append(a, arg{"--enable-prefix-caching", ""})
	} else {
		a = append(a, arg{"--no-enable-prefix-caching", ""})
	}
	if x.chunkedPrefill() {
		a = append(a, arg{"--enable-chunked-prefill", ""})
	} else {
		a = append(a, arg{"--no-enable-chunked-prefill", ""})
	}
	// engine.overlap_scheduling: vLLM's asynchronous scheduling, opt-in before 0.14 and the
	// default since.
	if x.cfg.Engine.HostOverlap(p.Pipeline) {
		if x.vllmBefore(0, 10) {
			x.unsupported("engine.overlap_scheduling", true, "vLLM's --async-scheduling needs vLLM 0.10 or later; set engine.backend_version accordingly or remove it")
		}
		a = append(a, arg{"--async-scheduling", ""})
	} else if !x.vllmBefore(0, 14) {
		a = append(a, arg{"--no-async-scheduling", ""})
	}
	// engine.cuda_graphs: vLLM's default is PIECEWISE before 0.11 and FULL_AND_PIECEWISE (whole
	// decode graphs) since, so each mode is written where it is not the release's default.
	switch piecewise := x.cfg.Engine.CUDAGraphs == config.CUDAGraphsPiecewise; {
	case piecewise && !x.vllmBefore(0, 11):
		a = append(a, arg{"--compilation-config", `{"cudagraph_mode":"PIECEWISE"}`})
	case !piecewise && x.vllmPatchBefore(0, 10, 2):
		x.unsupported("engine.cuda_graphs", cmp.Or(x.cfg.Engine.CUDAGraphs, config.CUDAGraphsFull), "vLLM before 0.10.2 captures decode passes only in piecewise CUDA graphs; "+
			"set engine.cuda_graphs: piecewise to price them, or a backend_version of 0.10.2 or later")
	case !piecewise && x.vllmBefore(0, 11):
		a = append(a, arg{"--compilation-config", `{"cudagraph_mode":"FULL_AND_PIECEWISE"}`})
	}
	if sp := x.cfg.Engine.Speculation; sp != nil && sp.Kind == config.SpeculationMTP {
		x.unsupported("engine.speculation.kind", sp.Kind, "MTP drafting is not exported to any target; remove engine.speculation, or use kind ngram with target vllm")
	} else if sp != nil {
		// vLLM's n-gram (prompt lookup) drafting with the simulated draft count; the acceptance
		// rates are the workload's, not a setting.
		a = append(a, arg{"--speculative-config",
			fmt.Sprintf(`{"method":"ngram","num_speculative_tokens":%d,"prompt_lookup_max":4}`, sp.NumSpeculativeTokens)})
	}
	a = x.precisionArgs(a, "fp8", "--max-model-len")
	if c := x.capacity(r); c.Type == config.CapacityFixed {
		a = append(a, arg{"--num-gpu-blocks-override", itoa(c.Blocks)})
	} else {
		a = append(a, arg{"--gpu-memory-utilization", ftoa(c.MemoryFraction)})
	}
	if standalone && x.disaggregated() {
		a = append(a, arg{"--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`})
	}
	return a
}

// sglangArgs returns the SGLang server arguments of role r (sglang.launch_server's, which
// Dynamo's SGLang worker takes too); standalone adds the port.
func (x *exporter) sglangArgs(r roleRef, standalone bool) []arg {
	w, p := r.w, r.w.Parallelism
	var a []arg
	x.noSpeculation()
	if standalone {
		a = append(a, arg{"--port", "${PORT:-8000}"})
	}
	// SGLang's tp-size counts every GPU of a stage; with DP attention, attention runs
	// tp-size / dp-size ways within each of dp-size ranks.
	a = append(a, arg{"--tp-size", itoa(p.Tensor * p.AttentionData)})
	if p.Pipeline > 1 {
		a = append(a, arg{"--pp-size", itoa(p.Pipeline)})
	}
	if p.AttentionData > 1 {
		a = append(a, arg{"--dp-size", itoa(p.AttentionData)}, arg{"--enable-dp-attention", ""})
	}
	x.checkMoE(r, true)
	if p.MoeExpert > 1 {
		a = append(a, arg{"--ep-size", itoa(p.MoeExpert)})
	}
	if p.RedundantExperts > 0 {
		a = append(a, arg{"--enable-eplb", ""}, arg{"--ep-num-redundant-experts", itoa(p.RedundantExperts)})
	}
	// SGLang divides --max-running-requests over its DP-attention ranks; max_sequences is per rank.
	a = append(a,
		arg{"--max-running-requests", itoa(w.Scheduler.MaxSequences * p.AttentionData)},
		// The simulated prefill budget: SGLang's chunked_prefill_size, divided over the DP
		// ranks by SGLang as by the simulator. Pinned, as SGLang's own default depends on the GPU.
		arg{"--chunked-prefill-size", itoa(engine.SGLangChunk(w.Scheduler.ChunkedPrefillSize))},
		arg{"--page-size", itoa(w.KVCache.BlockSize)})
	if n := engine.SGLangChunk(w.Scheduler.ChunkedPrefillSize); n > engine.SGLangMaxPrefillTokens {
		// The simulator charges a prefill pass at most max(16384, chunked_prefill_size) prompt
		// tokens (engine.DefaultSGLang).
		a = append(a, arg{"--max-prefill-tokens", itoa(n)})
	}
	if n := w.Scheduler.RecvInterval; n > 1 {
		a = append(a, arg{"--scheduler-recv-interval", itoa(n)})
	}
	if w.Scheduler.PrefillDecodeInterval > 0 {
		x.unsupported(r.path+".scheduler.prefill_decode_interval", w.Scheduler.PrefillDecodeInterval,
			"SGLang's server arguments have no setting that holds prefill back for a number of decode passes; use 0")
	}
	if !w.KVCache.PrefixCaching {
		a = append(a, arg{"--disable-radix-cache", ""})
	}
	if !x.cfg.Engine.HostOverlap(p.Pipeline) {
		// engine.overlap_scheduling off: SGLang's overlap scheduler is on unless disabled.
		a = append(a, arg{"--disable-overlap-schedule", ""})
	}
	a = x.precisionArgs(a, "fp8_e4m3", "--context-length")
	if c := x.capacity(r); c.Type == config.CapacityFixed {
		a = append(a, arg{"--max-total-tokens", itoa(c.Blocks * w.KVCache.BlockSize)})
	} else {
		a = append(a, arg{"--mem-fraction-static", ftoa(c.MemoryFraction)})
	}
	if x.disaggregated() {
		a = append(a, arg{"--disaggregation-mode", string(r.name)}, arg{"--disaggregation-transfer-backend", "nixl"})
	}
	return a
}

// trtllmShape checks role r's shape against TensorRT-LLM's: attention data parallelism runs one
// attention rank per GPU (attention tensor parallel 1), so tensor must be 1 when attention_data
// is above 1. It returns tp_size, TensorRT-LLM's count of the GPUs of a stage.
func (x *exporter) trtllmShape(r roleRef) int {
	p := r.w.Parallelism
	if p.AttentionData > 1 && p.Tensor > 1 {
		x.unsupported(r.path+".parallelism.attention_data", fmt.Sprintf("attention_data %d with tensor %d", p.AttentionData, p.Tensor),
			"TensorRT-LLM's attention data parallelism (enable_attention_dp) gives each of the tp_size GPUs its own attention rank; use tensor 1")
	}
	x.checkMoE(r, true)
	return p.Tensor * p.AttentionData
}

// trtllmOptions returns the LLM-API options of role r, in the order the YAML lists them. full
// adds the options trtllm-serve takes as flags (parallel sizes, batch limits, max_seq_len), for
// Dynamo's worker, which reads them all from the file.
func (x *exporter) trtllmOptions(r roleRef, full bool) []kv {
	w, p := r.w, r.w.Parallelism
	tp := x.trtllmShape(r)
	var o []kv
	if p.RedundantExperts > 0 {
		x.unsupported(r.path+".parallelism.redundant_experts", p.RedundantExperts,
			"TensorRT-LLM places extra expert slots through its MoE load balancer's configuration, which the export does not write; set redundant_experts to 0 or configure the load balancer by hand")
	}
	if full {
		o = append(o, kv{"tensor_parallel_size", tp}, kv{"pipeline_parallel_size", p.Pipeline})
		if p.MoeExpert > 1 {
			o = append(o, kv{"moe_expert_parallel_size", p.MoeExpert})
		}
		o = append(o, kv{"max_batch_size", w.Scheduler.MaxSequences}, kv{"max_num_tokens", w.Scheduler.MaxBatchedTokens})
		if n := x.cfg.Engine.ContextLength; n > 0 {
			o = append(o, kv{"max_seq_len", n})
		}
	}
	if p.AttentionData > 1 {
		o = append(o, kv{"enable_attention_dp", true})
	}
	o = append(o, kv{"enable_chunked_prefill", x.chunkedPrefill()})
	if ov := x.cfg.Engine.OverlapScheduling; ov != nil {
		// Only when set: unset, servesweep prices TensorRT-LLM as its default overlap scheduler
		// was measured to run (config.Engine.HostOverlap).
		o = append(o, kv{"disable_overlap_scheduler", !*ov})
	}
	x.noSpeculation()
	cache := []kv{{"enable_block_reuse", w.KVCache.PrefixCaching}, {"tokens_per_block", w.KVCache.BlockSize}}
	x.refuse(r) // tokens_per_block not a power of 2
	if _, kvp, _ := x.precisions(); kvp == timing.FP8 {
		cache = append(cache, kv{"dtype", "fp8"})
	} else {
		cache = append(cache, kv{"dtype", "auto"})
	}
	if c := x.capacity(r); c.Type == config.CapacityFixed {
		cache = append(cache, kv{"max_tokens", c.Blocks * w.KVCache.BlockSize})
	} else if full {
		cache = append(cache, kv{"free_gpu_memory_fraction", c.MemoryFraction})
	}
	o = append(o, kv{"kv_cache_config", cache})
	policy := "GUARANTEED_NO_EVICT"
	if w.Scheduler.CapacityPolicy == config.CapacityMaxUtilization {
		policy = "MAX_UTILIZATION"
	}
	o = append(o, kv{"scheduler_config", []kv{{"capacity_scheduler_policy", policy}}})
	if x.disaggregated() {
		o = append(o, kv{"cache_transceiver_config", []kv{{"backend", "DEFAULT"}}})
	}
	x.onlineFP8(false)
	return o
}

// trtllmArgs returns trtllm-serve's flags for role r; options names its LLM-API YAML.
func (x *exporter) trtllmArgs(r roleRef, options string) []arg {
	w, p := r.w, r.w.Parallelism
	a := []arg{{"--backend", "pytorch"}, {"--port", "${PORT:-8000}"},
		{"--tp_size", itoa(x.trtllmShape(r))}, {"--pp_size", itoa(p.Pipeline)}}
	if p.MoeExpert > 1 {
		a = append(a, arg{"--ep_size", itoa(p.MoeExpert)})
	}
	a = append(a, arg{"--max_batch_size", itoa(w.Scheduler.MaxSequences)}, arg{"--max_num_tokens", itoa(w.Scheduler.MaxBatchedTokens)})
	if n := x.cfg.Engine.ContextLength; n > 0 {
		a = append(a, arg{"--max_seq_len", itoa(n)})
	}
	if c := x.capacity(r); c.Type == config.CapacityDefault {
		a = append(a, arg{"--kv_cache_free_gpu_memory_fraction", ftoa(c.MemoryFraction)})
	}
	return append(a, arg{"--extra_llm_api_options", options})
}

// capacity is role r's KV capacity as the launch command gives it. A default capacity with
// reserve_gib or max_tokens has no single engine flag (engines size their pool from a memory
// fraction alone, and vLLM has no token cap), so it is exported as the fixed pool it derives
// (sim.CapacityBlocks): the deployment then runs the pool servesweep simulated. An underivable
// one is a failure naming the field.
func (x *exporter) capacity(r roleRef) config.KVCapacity {
	c := r.w.KVCache.Capacity
	if c.Type != config.CapacityDefault || c.ReserveGiB == nil && c.MaxTokens == 0 {
		return c
	}
	blocks, err := sim.CapacityBlocks(x.cfg, r.name)
	if err != nil {
		field := ".kv_cache.capacity.reserve_gib"
		if c.ReserveGiB == nil {
			field = ".kv_cache.capacity.max_tokens"
		}
		x.fail(r.path+field, err.Error())
		return c
	}
	return config.KVCapacity{Type: config.CapacityFixed, Blocks: blocks}
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// engineLaunch returns launch.sh (one command per worker role) and, for TensorRT-LLM, the
// LLM-API options YAML of each role.
func (x *exporter) engineLaunch() []File {
	var b bytes.Buffer
	var extra []File
	fmt.Fprintf(&b, "#!/bin/sh\n# %s launch commands for %s, from servesweep export --target %s.\n", x.backendName(), x.sourceName(), x.target)
	fmt.Fprintf(&b, "# Flag names follow %s %s.\n", x.backendName(), coveredVersions[x.target])
	if x.disaggregated() {
		b.WriteString("# Disaggregated: requests must reach the prefill workers and then the decode workers through\n" +
			"# a prefill/decode router, which is not part of this engine's server; --target dynamo exports one.\n")
	}
	x.checkReplicaRouting()
	for _, r := range x.roles() {
		b.WriteString("\n")
		x.roleComment(&b, r)
		switch x.target {
		case TargetVLLM:
			shellCommand(&b, []string{"vllm", "serve", shellQuote(x.model)}, x.vllmArgs(r, true))
		case TargetSGLang:
			shellCommand(&b, []string{"python3", "-m", "sglang.launch_server", "--model-path", shellQuote(x.model)}, x.sglangArgs(r, true))
		case TargetTRTLLM:
			name := "trtllm-" + string(r.name) + ".yaml"
			extra = append(extra, File{Name: name, Data: x.trtllmYAML(r, false)})
			shellCommand(&b, []string{"trtllm-serve", shellQuote(x.model)}, x.trtllmArgs(r, name))
		}
	}
	return append([]File{{Name: x.target + "-launch.sh", Data: b.Bytes(), Executable: true}}, extra...)
}

// trtllmYAML is the LLM-API options file of role r.
func (x *exporter) trtllmYAML(r roleRef, full bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# TensorRT-LLM LLM-API options of the %s workers of %s (servesweep export).\n", r.name, x.sourceName())
	writeYAML(&b, x.trtllmOptions(r, full), 0)
	return b.Bytes()
}

// roleComment describes role r's workers above its command: count, GPUs, hardware.
func (x *exporter) roleComment(b *bytes.Buffer, r roleRef) {
	p := r.w.Parallelism
	x.roleShapeComment(b, r, ".")
	if p.Replicas > 1 {
		fmt.Fprintf(b, "# Start one per worker, each on its own GPUs and port (PORT=8000, 8001, ...), behind a\n"+
			"# round-robin load balancer (router.policy %s).\n", x.cfg.Router.Policy)
	}
}

// roleShapeComment writes role r's line of workers, GPUs per worker and their hardware, ended by
// end.
func (x *exporter) roleShapeComment(b *bytes.Buffer, r roleRef, end string) {
	p := r.w.Parallelism
	hw := r.w.Hardware
	if hw == "" {
		hw = x.cfg.Engine.Hardware
	}
	fmt.Fprintf(b, "# %s: %d %s of %d %s GPU%s each (tensor %d, pipeline %d, attention_data %d, moe_tensor %d, moe_expert %d)%s\n",
		r.path, p.Replicas, plural(p.Replicas, "worker", "workers"), p.GPUsPerWorker(), hw, plural(p.GPUsPerWorker(), "", "s"),
		p.Tensor, p.Pipeline, p.AttentionData, p.MoeTensor, p.MoeExpert, end)
}

// checkReplicaRouting records router policies a bare engine cannot carry: with several workers
// in a role, a load balancer in front can round-robin, but only a router that knows the engines'
// KV caches and loads (Dynamo's) can place requests by prefix overlap or load.
func (x *exporter) checkReplicaRouting() {
	pol := x.cfg.Router.Policy
	if pol == config.PolicyRoundRobin || pol == "" {
		return
	}
	for _, r := range x.roles() {
		if r.w.Parallelism.Replicas > 1 {
			x.unsupported("router.policy", pol, fmt.Sprintf("%s serves one worker and has no router across the %d workers of %s; "+
				"use target dynamo, or router.policy round_robin (any load balancer)", x.backendName(), r.w.Parallelism.Replicas, r.path))
			return
		}
	}
}

// sourceName names the config the export came from.
func (x *exporter) sourceName() string {
	if x.cfg.File == "" {
		return "the config"
	}
	return x.cfg.File
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// chunkedPrefill reports whether the simulated engine chunks prefills (engine.enable_chunked_prefill,
// on unless false).
func (x *exporter) chunkedPrefill() bool {
	c := x.cfg.Engine.EnableChunkedPrefill
	return c == nil || *c
}

// noSpeculation refuses engine.speculation on targets whose n-gram drafting settings this export
// does not cover (SGLang and TensorRT-LLM): a speculative simulation must not be exported as a
// plain deployment.
func (x *exporter) noSpeculation() {
	switch sp := x.cfg.Engine.Speculation; {
	case sp != nil && sp.Kind == config.SpeculationMTP:
		x.unsupported("engine.speculation.kind", sp.Kind, "MTP drafting is not exported to any target; remove engine.speculation, or use kind ngram with target vllm")
	case sp != nil:
		x.unsupported("engine.speculation", sp.Kind+" drafting", "n-gram speculative decoding is exported for vLLM only (--speculative-config); remove engine.speculation or use target vllm")
	}
}

// precisionArgs appends the flags vLLM and SGLang share but for names: --kv-cache-dtype (fp8KV
// for an FP8 KV cache, else auto), --quantization fp8 for FP8 weights quantized at load time
// from a BF16 checkpoint, and the context length under contextFlag when the config sets one.
func (x *exporter) precisionArgs(a []arg, fp8KV, contextFlag string) []arg {
	kvType := "auto"
	if _, kv, _ := x.precisions(); kv == timing.FP8 {
		kvType = fp8KV
	}
	a = append(a, arg{"--kv-cache-dtype", kvType})
	if x.onlineFP8(true) {
		a = append(a, arg{"--quantization", "fp8"})
	}
	if n := x.cfg.Engine.ContextLength; n > 0 {
		a = append(a, arg{contextFlag, itoa(n)})
	}
	return a
}
