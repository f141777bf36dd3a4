package calibrate

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"gopkg.in/yaml.v3"
)

// Harness names (RowResult.Harness, Summary.Sources).
const (
	// HarnessInferenceX is SemiAnalysis InferenceX's public benchmark (rows whose source is
	// inferencex): its client and its per-date server flags are known (InferenceXHarness).
	HarnessInferenceX = "inferencex"
	// HarnessAssumed is the one assumption made for a row whose benchmark was not published
	// (every other source, and a file without a source column): AssumedHarness.
	HarnessAssumed = "assumed"
)

// Harness is how a measured row was benchmarked: the client that loaded the deployment. Every
// harness servesweep simulates is a closed loop: Concurrency requests start together, a new one
// starts whenever one completes until RequestsPerConcurrency × concurrency have been sent, and
// the reported means average over every request.
type Harness struct {
	// Name is HarnessInferenceX or HarnessAssumed.
	Name string
	// Known says the harness is documented for the row's source (its figures are scored in the
	// headline); an assumed harness's rows are reported apart.
	Known bool
	// RangeRatio draws each prompt's and each output's length uniformly from the integers
	// [int(RangeRatio × L), L] for the row's nominal length L; 1 sends exactly L.
	RangeRatio float64
	// RequestsPerConcurrency is the number of requests sent per unit of concurrency.
	RequestsPerConcurrency int
}

// InferenceXHarness is the client of SemiAnalysis InferenceX's runs (public repository
// SemiAnalysisAI/InferenceX; for the Llama-3.1-70B rows the workflow .github/workflows/70b-tmpl.yml
// and the runners' launch scripts at commit 9596d23d7): bench_serving's benchmark_serving.py with
// --dataset-name random --random-range-ratio 0.8 (lengths uniform in [int(0.8 L), L], random
// tokens: no shared prefix), --num-prompts 10 × CONC, --max-concurrency CONC, --request-rate inf
// (the first CONC requests at once), --ignore-eos (every output runs its drawn length), no
// warm-up (one was added to the client in January 2026), means over every request; mean TPOT per
// request is (latency − TTFT) / (output tokens − 1), as Validate computes it.
func InferenceXHarness() Harness {
	return Harness{Name: HarnessInferenceX, Known: true, RangeRatio: 0.8, RequestsPerConcurrency: 10}
}

// AssumedHarness is the single documented assumption for rows of an unpublished harness
// (aic-gap-analysis and every other source): AIConfigurator's own benchmark generator, the likely
// one (the data's README; UNCONFIRMED for these rows), as it runs: AIPerf with prompts and outputs
// of exactly the row's ISL and OSL, --concurrency C (the first C requests at once, then a closed
// loop), --request-count 20 × C, ignore_eos, means over every request. Its warm-up requests
// (--warmup-request-count C) run as a phase of their own before the measured one, which again
// starts with C requests at once, so they change nothing servesweep measures and are not
// simulated. These rows are scored apart from the headline. With every length equal, the
// simulated waves stay in step as long as the engine keeps them so (a prefill-first scheduler
// finishes a wave's requests on the same pass); a real run's timing jitter may spread them, which
// is one reason these rows score worse than the InferenceX rows.
func AssumedHarness() Harness {
	return Harness{Name: HarnessAssumed, RangeRatio: 1, RequestsPerConcurrency: 20}
}

// knownSources are the source values of the shared measured files (compared without regard to
// case): inferencex (InferenceXHarness) and aic-gap-analysis (AssumedHarness, by assumption).
var knownSources = []string{HarnessInferenceX, "aic-gap-analysis"}

// UnknownSourceNote returns the note of a row whose source is neither empty nor one of the known
// sources (inferencex, aic-gap-analysis, in any case): a value such as "inferncex" is simulated
// under the assumed harness and scored apart from the headline, which a misspelling would do
// silently. It returns "" for a known or empty source.
func UnknownSourceNote(source string) string {
	if source == "" {
		return ""
	}
	for _, k := range knownSources {
		if strings.EqualFold(source, k) {
			return ""
		}
	}
	return fmt.Sprintf("source %q is not one servesweep knows (%s): simulated under the assumed harness and scored apart from the headline; check its spelling",
		source, strings.Join(knownSources, ", "))
}

// HarnessFor returns the harness of a row from its source column.
func HarnessFor(r Row) Harness {
	if strings.EqualFold(r.Source, HarnessInferenceX) {
		return InferenceXHarness()
	}
	return AssumedHarness()
}

// lengths returns the synthetic token count of nominal length l under the harness: l itself, or
// the uniform distribution over [int(RangeRatio × l), l].
func (h Harness) lengths(l int) (int, *config.Distribution) {
	if h.RangeRatio >= 1 {
		return l, nil
	}
	lo := max(int(h.RangeRatio*float64(l)), 1)
	d := &config.Distribution{Distribution: config.DistUniform, Min: lo, Max: l}
	return int(d.Expected() + 0.5), d
}

// ServerFlags are the serving engine's settings of a benchmarked deployment that change what
// servesweep simulates. Zero fields keep the value PlanRow's engine defaults give.
type ServerFlags struct {
	// MaxBatchedTokens is vLLM's --max-num-batched-tokens or TensorRT-LLM's --max_num_tokens.
	MaxBatchedTokens int
	// MaxSequences is vLLM's --max-num-seqs or TensorRT-LLM's max_batch_size; -1 means the
	// row's concurrency (a script that passes --max-num-seqs $CONC).
	MaxSequences int
	// PrefixCaching is vLLM's prefix caching or TensorRT-LLM's KV block reuse.
	PrefixCaching bool
	// ChunkedPrefill is whether a prompt may be split across passes.
	ChunkedPrefill bool
	// OverlapScheduling is vLLM's --async-scheduling or TensorRT-LLM's overlap scheduler
	// (engine.overlap_scheduling): host work of the next pass hides behind the GPU's.
	OverlapScheduling bool
	// KVCache is the KV cache's dtype ("fp8": --kv-cache-dtype fp8, kv_cache_config.dtype; "bf16":
	// a script that leaves it at auto for a model computing in BF16); "" keeps PlanRow's.
	KVCache string
	// Attention is the format the engine's attention kernels compute in (engine.precision.attention:
	// "bf16" for vLLM 0.10.2 on Blackwell over an FP8 KV cache, InferenceXServerFlags says
	// why); "" keeps auto, the KV cache's format.
	Attention string
	// BlockSize is vLLM's --block-size (tokens per KV block); 0 keeps PlanRow's.
	BlockSize int
	// ChunkedPrefillSize and RecvInterval are SGLang's --chunked-prefill-size and
	// --scheduler-recv-interval (scheduler.chunked_prefill_size, scheduler.recv_interval); 0
	// keeps the role's value (PlanRow's: SGLang's defaults, or a serving recipe's).
	ChunkedPrefillSize, RecvInterval int
	// MemoryFraction is the GPU memory share of weights plus KV cache (vLLM
	// --gpu-memory-utilization; TensorRT-LLM's free_gpu_memory_fraction, default 0.9).
	MemoryFraction float64
	// BatchWaitTimeoutIters and BatchWaitMaxTokensRatio are TensorRT-LLM's batch waiting
	// (config.Scheduler).
	BatchWaitTimeoutIters   int
	BatchWaitMaxTokensRatio float64
	// VLLM0102 says the engine was vLLM 0.10.2, whose per-sequence host time PlanRow writes into
	// every role's timing.sequence_overhead_us (Factors.VLLMSequenceOverheadUs).
	VLLM0102 bool
	// PiecewiseGraphs says the engine captured decode passes in piecewise CUDA graphs
	// (engine.cuda_graphs piecewise).
	PiecewiseGraphs bool
	// Source says where the flags were read, for Plan.Notes.
	Source string
}

// inferenceXLlama70BDate is the measured_at of InferenceX's Llama-3.1-70B rows; the scripts of
// commit 9596d23d7 (the last before Llama-70B was retired) were in force then.
const inferenceXLlama70BDate = "2025-10-29"

// InferenceXServerFlags returns the server flags of an InferenceX row, read from the public
// SemiAnalysisAI/InferenceX scripts in force at the row's measured_at, and false when they are
// not tabulated for its model, GPU, engine and date, or when its backend_version names another
// release than the date's images ran (the row then keeps PlanRow's engine defaults, with a
// note).
//
// Llama-3.1-70B (nvidia/Llama-3.3-70B-Instruct-FP8 and -FP4), 2025-10-29, commit 9596d23d7:
//   - vLLM (vllm/vllm-openai:v0.10.2; benchmarks/70b_<fp8|fp4>_<gpu>_<docker|slurm>.sh):
//     max-num-batched-tokens 8192, kv-cache-dtype fp8, async-scheduling true, prefix caching
//     off, --gpu-memory-utilization 0.9, chunked prefill on (vLLM V1 always chunks);
//     --max-num-seqs $CONC on H100 and H200, 512 on B200 (vLLM rows of another GPU are not
//     tabulated). The B200 scripts pass a compilation
//     config with cudagraph_mode FULL_DECODE_ONLY (decode passes captured whole); the H100 and
//     H200 ones pass none, so vLLM 0.10.2's default PIECEWISE holds there and the rows set
//     engine.cuda_graphs piecewise (timing.PiecewiseGraphLayerUs). On B200 the rows set
//     engine.precision.attention bf16: vLLM's FlashInfer backend on Blackwell computed attention
//     in BF16 over an FP8 cache until pull request 23647, merged in the weeks before 0.10.2;
//     whether the release carries it is UNCONFIRMED, and the rows' 8k prefills, 15-35 % slower
//     than the FP8 rate that prices TensorRT-LLM's on the same GPU, are why BF16 is taken
//     (docs/validation.md). On H100 the FlashAttention 3 backend computes in FP8.
//   - TensorRT-LLM (release 1.1.0rc2.post2; benchmarks/70b_<fp8|fp4>_b200_trt_*.sh):
//     --max_num_tokens 16384, no --max_batch_size (trtllm-serve's default, 2048), KV cache
//     fp8 with block reuse off and the default free_gpu_memory_fraction 0.9, the PyTorch
//     executor's defaults: overlap scheduler on, chunked prefill off; for ISL = OSL = 1024 below
//     TP8 also batch_wait_max_tokens_ratio 0.9 and batch_wait_timeout_iters 20. stream_interval
//     10 batches streamed tokens but leaves TTFT (the first token is sent at once) and the
//     client's TPOT ((latency − TTFT) / (output − 1)) as they are, and CUDA-graph padding up to
//     batch 1024 is not modelled.
//
// Aggregated MoE deployments of the single-node scripts (vLLM and SGLang, 2026): singleNodeScripts,
// each with the commit read and the dates its flags held.
func InferenceXServerFlags(r Row, model string) (ServerFlags, bool) {
	if f, ok := singleNodeFlags(r, model); ok {
		return f, true
	}
	if r.MeasuredAt != inferenceXLlama70BDate || !strings.Contains(strings.ToLower(model), "llama-3.1-70b") {
		return ServerFlags{}, false
	}
	// A row whose backend_version names another release than the date's images ran is not
	// matched: its flags may differ.
	if v := r.BackendVersion; v != "" && !strings.HasPrefix(v, map[string]string{config.BackendVLLM: "0.10.2", config.BackendTRTLLM: "1.1.0rc2"}[r.Backend]) {
		return ServerFlags{}, false
	}
	switch r.Backend {
	case config.BackendVLLM:
		f := ServerFlags{MaxBatchedTokens: 8192, MaxSequences: -1, ChunkedPrefill: true, OverlapScheduling: true,
			KVCache: "fp8", MemoryFraction: 0.9, VLLM0102: true,
			Source: "InferenceX 9596d23d7 70b vLLM scripts: max-num-batched-tokens 8192, max-num-seqs $CONC, fp8 KV, async scheduling, no prefix caching"}
		conc := "the concurrency"
		if r.Concurrency > 0 {
			conc = fmt.Sprint(r.Concurrency)
		}
		switch r.System {
		case "b200_sxm":
			f.MaxSequences, conc = 512, "512"
			f.Attention = config.PrecisionBF16
			f.Source += "; cudagraph_mode FULL_DECODE_ONLY; attention computed in BF16 over the FP8 KV cache (vLLM's FlashInfer backend on Blackwell before its FP8 query)"
		case "h100_sxm", "h200_sxm":
			f.PiecewiseGraphs = true
			f.Source += "; no compilation config: vLLM 0.10.2's piecewise CUDA graphs"
		default:
			// The scripts of another GPU were not read.
			return ServerFlags{}, false
		}
		f.Source = strings.Replace(f.Source, "$CONC", conc, 1)
		return f, true
	case config.BackendTRTLLM:
		f := ServerFlags{MaxBatchedTokens: 16384, MaxSequences: 2048, OverlapScheduling: true, KVCache: "fp8", MemoryFraction: 0.9,
			Source: "InferenceX 9596d23d7 70b TensorRT-LLM scripts: max_num_tokens 16384, fp8 KV, no block reuse, overlap scheduler"}
		if r.ISL == 1024 && r.OSL == 1024 && r.Agg.Tensor < 8 {
			f.BatchWaitTimeoutIters, f.BatchWaitMaxTokensRatio = 20, 0.9
			f.Source += ", batch wait 20 iterations / 0.9 of max_num_tokens"
		}
		return f, true
	}
	return ServerFlags{}, false
}

// apply sets the flags on every worker role of cfg (concurrency is the row's, for MaxSequences
// -1; seqOverheadUs and reserveGiB, when > 0, the per-sequence host time and the memory held
// outside weights, activations and KV cache of a vLLM 0.10.2 row's roles).
func (f ServerFlags) apply(cfg *config.Config, concurrency int, seqOverheadUs, reserveGiB float64) {
	for _, w := range []*config.WorkerRole{cfg.Engine.Workers.Aggregated, cfg.Engine.Workers.Prefill, cfg.Engine.Workers.Decode} {
		if w == nil {
			continue
		}
		if f.VLLM0102 && seqOverheadUs > 0 && w.Timing.HardwareAware() {
			us := seqOverheadUs
			w.Timing.SequenceOverheadUs = &us
		}
		if f.MaxBatchedTokens > 0 {
			w.Scheduler.MaxBatchedTokens = f.MaxBatchedTokens
		}
		switch {
		case f.MaxSequences == -1:
			w.Scheduler.MaxSequences = concurrency
		case f.MaxSequences > 0:
			w.Scheduler.MaxSequences = f.MaxSequences
		}
		w.KVCache.PrefixCaching = f.PrefixCaching
		if f.BlockSize > 0 {
			w.KVCache.BlockSize = f.BlockSize
		}
		if f.ChunkedPrefillSize > 0 {
			w.Scheduler.ChunkedPrefillSize = f.ChunkedPrefillSize
		}
		if f.RecvInterval > 0 {
			w.Scheduler.RecvInterval = f.RecvInterval
		}
		if f.MemoryFraction > 0 {
			w.KVCache.Capacity.MemoryFraction = f.MemoryFraction
		}
		if f.VLLM0102 && reserveGiB > 0 && w.KVCache.Capacity.Type == config.CapacityDefault {
			gib := reserveGiB
			w.KVCache.Capacity.ReserveGiB = &gib
		}
		w.Scheduler.BatchWaitTimeoutIters, w.Scheduler.BatchWaitMaxTokensRatio = f.BatchWaitTimeoutIters, f.BatchWaitMaxTokensRatio
	}
	if f.PiecewiseGraphs {
		cfg.Engine.CUDAGraphs = config.CUDAGraphsPiecewise
	}
	chunked, overlap := f.ChunkedPrefill, f.OverlapScheduling
	cfg.Engine.EnableChunkedPrefill, cfg.Engine.OverlapScheduling = &chunked, &overlap
	if f.KVCache != "" {
		cfg.Engine.Precision.KVCache = f.KVCache
	}
	if f.Attention != "" {
		cfg.Engine.Precision.Attention = f.Attention
	}
}

// describe is the harness's client for Plan.Notes.
func (h Harness) describe(conc int) string {
	lengths := "fixed ISL and OSL"
	if h.RangeRatio < 1 {
		lengths = fmt.Sprintf("ISL and OSL uniform in [int(%.1f L), L]", h.RangeRatio)
	}
	start := "all of the first wave at once, means over every request"
	return fmt.Sprintf("harness %s: %s, %d requests (%d × concurrency %d), %s",
		h.Name, lengths, h.RequestsPerConcurrency*conc, h.RequestsPerConcurrency, conc, start)
}

// YAML renders the plan's config as a prediction YAML a user can run with `servesweep predict
// -c`: every field the row sets, the harness's length distributions as `{distribution: uniform,
// min, max}` mappings. Decoding it gives the config Validate runs (TestPlanYAMLRunsAsValidated).
func (p *Plan) YAML() ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(p.Config); err != nil {
		return nil, err
	}
	src := p.Config.Traffic.Source
	for _, d := range []struct {
		key  string
		dist *config.Distribution
	}{{"input_tokens", src.InputTokensDist}, {"output_tokens", src.OutputTokensDist}} {
		if d.dist == nil {
			continue
		}
		var v yaml.Node
		if err := v.Encode(map[string]any{"distribution": d.dist.Distribution, "min": d.dist.Min, "max": d.dist.Max}); err != nil {
			return nil, err
		}
		v.Style = yaml.FlowStyle
		if n := mappingValue(mappingValue(mappingValue(&doc, "traffic"), "source"), d.key); n != nil {
			*n = v
		}
	}
	// A derived KV-transfer size is written as the word the schema takes for it.
	if t := p.Config.Engine.KVTransfer; t != nil && t.BytesPerToken == 0 {
		if n := mappingValue(mappingValue(mappingValue(&doc, "engine"), "kv_transfer"), "bytes_per_token"); n != nil {
			n.Tag, n.Value, n.Style = "!!str", "auto", 0
		}
	}
	if root := &doc; root.Kind == yaml.MappingNode {
		// The router (round_robin, no prefill load model) and planner (disabled) sections are
		// the defaults a plan always has; written out they would ask for the dynamo stack. An
		// empty evaluation block says nothing.
		for i := 0; i+1 < len(root.Content); {
			switch k := root.Content[i].Value; {
			case k == "router" || k == "planner" || (k == "evaluation" && len(root.Content[i+1].Content) == 0):
				root.Content = append(root.Content[:i], root.Content[i+2:]...)
			default:
				i += 2
			}
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mappingValue is the value node of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
