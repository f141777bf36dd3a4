package results

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/servesweep/servesweep/sim"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/timing"
)

// Point statuses (the status column).
const (
	// StatusOK marks a point that simulated to completion; its metric columns are set.
	StatusOK = "ok"
	// StatusFailed marks a point whose simulation returned an error or panicked; reason says why.
	StatusFailed = "failed"
	// StatusTimedOut marks a point that ran longer than optimizer.candidate_timeout_seconds of
	// host time. A resumed sweep simulates it again.
	StatusTimedOut = "timed_out"
	// StatusDegraded marks a point that simulated to completion but rejected requests at
	// arrival (reason DegradedReason), stopped completed requests short of their requested
	// output (TruncatedReason), stopped with requests unfinished (UnfinishedReason) or fell
	// behind its open-loop arrivals (OverloadedReason): its
	// metrics cover less work than it was offered, so it is kept off the front unless
	// optimization.constraints.max_rejected_ratio allows its share of rejected, truncated and
	// unfinished requests. Its journal record is ok; the status is derived when the
	// row is built.
	StatusDegraded = "degraded"
)

// DegradedReason is the reason prefix of a degraded point; the reason goes on with the counts,
// e.g. "rejected_requests: 512 of 2048 offered requests rejected (context_length 512)".
const DegradedReason = "rejected_requests"

// Row is one row of results.parquet: one sweep point. Column names are snake_case with units
// (ms, tok_s = tokens per virtual second, rps = requests per virtual second, gb_per_second =
// decimal GB/s, s = seconds). Optional columns (pointer fields) are null where they do not apply:
// the per-role columns of a role the point's mode does not use, the load fields of another load
// type, and every metric of a point whose status is not ok. See doc.go for the schema.
type Row struct {
	// PointID is the point's stable ID: 12 hex digits of the SHA-256 of its concrete config.
	PointID string `parquet:"point_id"`
	// PointIndex is the point's 0-based position in the spec's expansion order.
	PointIndex int64 `parquet:"point_index"`
	// Status is ok, failed or timed_out.
	Status string `parquet:"status"`
	// Reason says why a point failed, timed out, is degraded or has no samples (null when
	// there is nothing to say).
	Reason string `parquet:"reason,optional"`
	// EquivalentTo is the point_id of the representative of the point's class, whose config
	// simulates identically (its router policy cannot matter on one worker, or its kv_router
	// knobs under another policy; an alias or spelling of its GPU or model; grid.CanonicalKey):
	// such a twin copies that point's results and is never a Pareto candidate. Null on the
	// representative of each class (grid.Point.EquivalentTo says which member that is).
	EquivalentTo string `parquet:"equivalent_to,optional"`

	// Mode is aggregated or disaggregated.
	Mode string `parquet:"mode"`
	// Backend, Hardware and Model are engine.backend, engine.hardware and engine.model, the
	// latter two as resolved: an alias is recorded as the catalog id it names, e.g. "h200" as
	// "h200_sxm" (timing.ResolveHardwareID, timing.ResolveModelID); other names as given.
	Backend  string `parquet:"backend"`
	Hardware string `parquet:"hardware"`
	Model    string `parquet:"model"`
	// BackendVersion is engine.backend_version (null: the newest the performance database
	// holds, or none configured).
	BackendVersion *string `parquet:"backend_version,optional"`
	// WeightPrecision and KVCachePrecision are the formats in effect (engine.precision with auto
	// resolved from the model): bf16, fp8 or fp4 weights, bf16 or fp8 KV cache; null when auto
	// cannot be resolved (a model the catalog does not know).
	WeightPrecision  *string `parquet:"weight_precision,optional"`
	KVCachePrecision *string `parquet:"kv_cache_precision,optional"`
	// ContextLengthTokens is engine.context_length; 0 means "max" (the model's maximum).
	ContextLengthTokens int64 `parquet:"context_length_tokens"`
	// GPUs is the point's GPU count: Σ over its roles of replicas × tensor × pipeline ×
	// attention_data.
	GPUs int64 `parquet:"gpus"`

	// Aggregated role (mode aggregated): parallelism, GPUs, scheduler limits per attention-DP
	// rank, KV block size in tokens, KV capacity in blocks per rank, prefix caching, timing model,
	// and the hardware id it runs on (resolved; a prefill or decode role may set its own).
	AggReplicas              *int64  `parquet:"agg_replicas,optional"`
	AggTensor                *int64  `parquet:"agg_tensor,optional"`
	AggPipeline              *int64  `parquet:"agg_pipeline,optional"`
	AggAttentionData         *int64  `parquet:"agg_attention_data,optional"`
	AggMoeTensor             *int64  `parquet:"agg_moe_tensor,optional"`
	AggMoeExpert             *int64  `parquet:"agg_moe_expert,optional"`
	AggGPUs                  *int64  `parquet:"agg_gpus,optional"`
	AggMaxBatchedTokens      *int64  `parquet:"agg_max_batched_tokens,optional"`
	AggMaxSequences          *int64  `parquet:"agg_max_sequences,optional"`
	AggPrefillDecodeInterval *int64  `parquet:"agg_prefill_decode_interval,optional"`
	AggCapacityPolicy        *string `parquet:"agg_capacity_policy,optional"`
	AggKVBlockSize           *int64  `parquet:"agg_kv_block_size_tokens,optional"`
	AggKVCapacityBlocks      *int64  `parquet:"agg_kv_capacity_blocks,optional"`
	AggPrefixCaching         *bool   `parquet:"agg_prefix_caching,optional"`
	AggTiming                *string `parquet:"agg_timing,optional"`
	AggHardware              *string `parquet:"agg_hardware,optional"`

	// Prefill role (mode disaggregated), as for the aggregated role.
	PrefillReplicas              *int64  `parquet:"prefill_replicas,optional"`
	PrefillTensor                *int64  `parquet:"prefill_tensor,optional"`
	PrefillPipeline              *int64  `parquet:"prefill_pipeline,optional"`
	PrefillAttentionData         *int64  `parquet:"prefill_attention_data,optional"`
	PrefillMoeTensor             *int64  `parquet:"prefill_moe_tensor,optional"`
	PrefillMoeExpert             *int64  `parquet:"prefill_moe_expert,optional"`
	PrefillGPUs                  *int64  `parquet:"prefill_gpus,optional"`
	PrefillMaxBatchedTokens      *int64  `parquet:"prefill_max_batched_tokens,optional"`
	PrefillMaxSequences          *int64  `parquet:"prefill_max_sequences,optional"`
	PrefillPrefillDecodeInterval *int64  `parquet:"prefill_prefill_decode_interval,optional"`
	PrefillCapacityPolicy        *string `parquet:"prefill_capacity_policy,optional"`
	PrefillKVBlockSize           *int64  `parquet:"prefill_kv_block_size_tokens,optional"`
	PrefillKVCapacityBlocks      *int64  `parquet:"prefill_kv_capacity_blocks,optional"`
	PrefillPrefixCaching         *bool   `parquet:"prefill_prefix_caching,optional"`
	PrefillTiming                *string `parquet:"prefill_timing,optional"`
	PrefillHardware              *string `parquet:"prefill_hardware,optional"`

	// Decode role (mode disaggregated), as for the aggregated role.
	DecodeReplicas              *int64  `parquet:"decode_replicas,optional"`
	DecodeTensor                *int64  `parquet:"decode_tensor,optional"`
	DecodePipeline              *int64  `parquet:"decode_pipeline,optional"`
	DecodeAttentionData         *int64  `parquet:"decode_attention_data,optional"`
	DecodeMoeTensor             *int64  `parquet:"decode_moe_tensor,optional"`
	DecodeMoeExpert             *int64  `parquet:"decode_moe_expert,optional"`
	DecodeGPUs                  *int64  `parquet:"decode_gpus,optional"`
	DecodeMaxBatchedTokens      *int64  `parquet:"decode_max_batched_tokens,optional"`
	DecodeMaxSequences          *int64  `parquet:"decode_max_sequences,optional"`
	DecodePrefillDecodeInterval *int64  `parquet:"decode_prefill_decode_interval,optional"`
	DecodeCapacityPolicy        *string `parquet:"decode_capacity_policy,optional"`
	DecodeKVBlockSize           *int64  `parquet:"decode_kv_block_size_tokens,optional"`
	DecodeKVCapacityBlocks      *int64  `parquet:"decode_kv_capacity_blocks,optional"`
	DecodePrefixCaching         *bool   `parquet:"decode_prefix_caching,optional"`
	DecodeTiming                *string `parquet:"decode_timing,optional"`
	DecodeHardware              *string `parquet:"decode_hardware,optional"`

	// TimingProvider names the timing model that priced the point's passes (fixed, polynomial,
	// roofline, or the op_level tables used, e.g. "op_level vllm gemm 0.24.0, attention 0.24.0
	// on h200_sxm"); null unless the point simulated.
	TimingProvider *string `parquet:"timing_provider,optional"`

	// KVTransferBandwidthGBps is engine.kv_transfer.bandwidth_gb_per_second in decimal GB/s
	// (null: no kv_transfer section, or no transfer delay).
	KVTransferBandwidthGBps *float64 `parquet:"kv_transfer_bandwidth_gb_per_second,optional"`
	// KVTransferLatencyMs is the fixed time in ms every disaggregated hand-off took
	// (sim.KVTransferLatencyMs: engine.kv_transfer.latency_ms, or its default for the roles'
	// timing); null in aggregated mode.
	KVTransferLatencyMs *float64 `parquet:"kv_transfer_latency_ms,optional"`
	// FrontendOverheadMs is the front-end time in ms every request took before reaching a worker
	// (sim.FrontendOverheadMs: engine.frontend.overhead_ms, or its default for the timing).
	FrontendOverheadMs float64 `parquet:"frontend_overhead_ms"`

	// RouterPolicy is round_robin, kv_router, random or least_loaded.
	RouterPolicy string `parquet:"router_policy"`
	// RouterPrefillLoadModel is router.prefill_load_model.type.
	RouterPrefillLoadModel string `parquet:"router_prefill_load_model"`
	// kv_router knobs as configured (null when unset; kv_router then uses 1.0, 1.0 and 0.0).
	RouterOverlapScoreCredit *float64 `parquet:"router_overlap_score_credit,optional"`
	RouterPrefillLoadScale   *float64 `parquet:"router_prefill_load_scale,optional"`
	RouterTemperature        *float64 `parquet:"router_temperature,optional"`
	// RouterSeed is the seed of the router's draws (router.seed, 42 when unset) under the
	// policies that draw (kv_router, random); null under the others.
	RouterSeed *int64 `parquet:"router_seed,optional"`

	// SourceType is traffic.source.type; the source_, session_ and trace_ columns hold its fields.
	SourceType                    string   `parquet:"source_type"`
	SourceInputTokens             *int64   `parquet:"source_input_tokens,optional"`
	SourceOutputTokens            *int64   `parquet:"source_output_tokens,optional"`
	SourceNewInputTokensPerTurn   *int64   `parquet:"source_new_input_tokens_per_turn,optional"`
	SourceOutputTokensPerTurn     *int64   `parquet:"source_output_tokens_per_turn,optional"`
	SessionTurns                  *int64   `parquet:"session_turns,optional"`
	SessionSharedPrefixRatio      *float64 `parquet:"session_shared_prefix_ratio,optional"`
	SessionPrefixGroups           *int64   `parquet:"session_prefix_groups,optional"`
	SessionInterTurnDelayMs       *float64 `parquet:"session_inter_turn_delay_ms,optional"`
	SessionInterTurnDelayStddevMs *float64 `parquet:"session_inter_turn_delay_stddev_ms,optional"`
	TracePath                     *string  `parquet:"trace_path,optional"`
	TraceFormat                   *string  `parquet:"trace_format,optional"`
	TraceBlockSizeTokens          *int64   `parquet:"trace_block_size_tokens,optional"`
	LoadType                      string   `parquet:"load_type"`
	LoadConcurrency               *int64   `parquet:"load_concurrency,optional"`
	LoadRequestsPerSecond         *float64 `parquet:"load_requests_per_second,optional"`
	LoadSessionsPerSecond         *float64 `parquet:"load_sessions_per_second,optional"`
	LoadSeed                      *int64   `parquet:"load_seed,optional"`
	LoadSpeedup                   *float64 `parquet:"load_speedup,optional"`
	// LoadRampSeconds is traffic.load.ramp_seconds when the config gives it (a capacity search's
	// probe configs always do), in seconds; null when omitted.
	LoadRampSeconds           *float64 `parquet:"load_ramp_seconds,optional"`
	StopRequests              *int64   `parquet:"stop_requests,optional"`
	StopRequestsPerLoadUnit   *float64 `parquet:"stop_requests_per_load_unit,optional"`
	StopSessions              *int64   `parquet:"stop_sessions,optional"`
	StopSessionsPerLoadUnit   *float64 `parquet:"stop_sessions_per_load_unit,optional"`
	StopMaxVirtualTimeSeconds *float64 `parquet:"stop_max_virtual_time_s,optional"`
	// SLA bounds of evaluation.sla in ms (null when unset).
	SLATTFTMs *float64 `parquet:"sla_ttft_ms,optional"`
	SLAITLMs  *float64 `parquet:"sla_itl_ms,optional"`
	SLAE2EMs  *float64 `parquet:"sla_e2e_ms,optional"`
	// Percentile bounds of evaluation.sla in ms, sla_<key> for each key p50_ttft_ms … p99_e2e_ms
	// (null when unset, and left out of the row's JSON so that rows without them are unchanged).
	SLAP50TTFTMs *float64 `parquet:"sla_p50_ttft_ms,optional" json:",omitempty"`
	SLAP90TTFTMs *float64 `parquet:"sla_p90_ttft_ms,optional" json:",omitempty"`
	SLAP95TTFTMs *float64 `parquet:"sla_p95_ttft_ms,optional" json:",omitempty"`
	SLAP99TTFTMs *float64 `parquet:"sla_p99_ttft_ms,optional" json:",omitempty"`
	SLAP50ITLMs  *float64 `parquet:"sla_p50_itl_ms,optional" json:",omitempty"`
	SLAP90ITLMs  *float64 `parquet:"sla_p90_itl_ms,optional" json:",omitempty"`
	SLAP95ITLMs  *float64 `parquet:"sla_p95_itl_ms,optional" json:",omitempty"`
	SLAP99ITLMs  *float64 `parquet:"sla_p99_itl_ms,optional" json:",omitempty"`
	SLAP50TPOTMs *float64 `parquet:"sla_p50_tpot_ms,optional" json:",omitempty"`
	SLAP90TPOTMs *float64 `parquet:"sla_p90_tpot_ms,optional" json:",omitempty"`
	SLAP95TPOTMs *float64 `parquet:"sla_p95_tpot_ms,optional" json:",omitempty"`
	SLAP99TPOTMs *float64 `parquet:"sla_p99_tpot_ms,optional" json:",omitempty"`
	SLAP50E2EMs  *float64 `parquet:"sla_p50_e2e_ms,optional" json:",omitempty"`
	SLAP90E2EMs  *float64 `parquet:"sla_p90_e2e_ms,optional" json:",omitempty"`
	SLAP95E2EMs  *float64 `parquet:"sla_p95_e2e_ms,optional" json:",omitempty"`
	SLAP99E2EMs  *float64 `parquet:"sla_p99_e2e_ms,optional" json:",omitempty"`

	// Metrics: the summary keys of prediction.json (dynosim-spec.md §4.2) under the same names;
	// null unless status is ok (goodput columns also null without an SLA). Virtual time. The
	// goodput columns leave out the requests cut short of their requested output
	// (withoutTruncatedGoodput), which prediction.json's goodput, judging latencies alone, counts.
	NumRequests        *int64 `parquet:"num_requests,optional" summary:"num_requests"`
	CompletedRequests  *int64 `parquet:"completed_requests,optional" summary:"completed_requests"`
	OfferedRequests    *int64 `parquet:"offered_requests,optional" summary:"offered_requests"`
	RejectedRequests   *int64 `parquet:"rejected_requests,optional" summary:"rejected_requests"`
	UnfinishedRequests *int64 `parquet:"unfinished_requests,optional" summary:"unfinished_requests"`
	// CensoredRequests counts the unfinished requests that had broken no per-request bound of
	// evaluation.sla when a max_virtual_time_seconds stop ended the run (metrics.Censored): they
	// are left out of sla_attainment's offered requests rather than counted as misses. Null
	// without an SLA or without such a stop.
	CensoredRequests *int64 `parquet:"censored_requests,optional" summary:"censored_requests"`
	// TruncatedRequests counts completed requests that stopped short of their requested output
	// (context length or KV pool size); TruncatedOutputTokens the output tokens they did not emit.
	TruncatedRequests     *int64 `parquet:"truncated_requests,optional" summary:"truncated_requests"`
	TruncatedOutputTokens *int64 `parquet:"truncated_output_tokens,optional" summary:"truncated_output_tokens"`
	// BacklogGrowthRequests is, for a point without a capacity search under an open loop
	// (constant_rate, poisson), how many requests its system gained over its measured window, from
	// its warm-up to its last arrival (sim.Backlog.Growth; negative when it lost some),
	// QueueGrowthRequests how many its queue (requests not yet admitted by a worker) gained
	// (sim.Backlog.QueueGrowth), WindowArrivedRequests how many arrived in it, and
	// BacklogGrowthJudged whether the window is long enough to judge the system's gain (false:
	// sim.Backlog.QueueOnly); all null otherwise. A gain of more than a tenth of the arrivals
	// (sim.OverloadShare) over a judged window, or a queue's growth past
	// sim.Backlog.QueueOverloaded's bounds, makes the point degraded (OverloadedReason); so does a
	// loss past sim.Backlog.Drained's (DrainedReason).
	BacklogGrowthRequests *int64 `parquet:"backlog_growth_requests,optional" json:",omitempty"`
	BacklogGrowthJudged   *bool  `parquet:"backlog_growth_judged,optional" json:",omitempty"`
	QueueGrowthRequests   *int64 `parquet:"queue_growth_requests,optional" json:",omitempty"`
	WindowArrivedRequests *int64 `parquet:"window_arrived_requests,optional" json:",omitempty"`
	// Rejected requests by reason (prediction.json's rejected_requests_by_reason members).
	RejectedContextLength *int64 `parquet:"rejected_requests_context_length,optional" summary:"rejected_requests_by_reason.context_length"`
	RejectedKVCapacity    *int64 `parquet:"rejected_requests_kv_capacity,optional" summary:"rejected_requests_by_reason.kv_capacity"`
	// CompletionRatio = completed_requests / offered_requests (derived; null when nothing was offered).
	CompletionRatio                      *float64 `parquet:"completion_ratio,optional"`
	TotalInputTokens                     *int64   `parquet:"total_input_tokens,optional" summary:"total_input_tokens"`
	TotalOutputTokens                    *int64   `parquet:"total_output_tokens,optional" summary:"total_output_tokens"`
	DurationMs                           *float64 `parquet:"duration_ms,optional" summary:"duration_ms"`
	RequestThroughputRPS                 *float64 `parquet:"request_throughput_rps,optional" summary:"request_throughput_rps"`
	InputThroughputTokS                  *float64 `parquet:"input_throughput_tok_s,optional" summary:"input_throughput_tok_s"`
	OutputThroughputTokS                 *float64 `parquet:"output_throughput_tok_s,optional" summary:"output_throughput_tok_s"`
	TotalThroughputTokS                  *float64 `parquet:"total_throughput_tok_s,optional" summary:"total_throughput_tok_s"`
	PrefillWorkerSeconds                 *float64 `parquet:"prefill_worker_seconds,optional" summary:"prefill_worker_seconds"`
	DecodeWorkerSeconds                  *float64 `parquet:"decode_worker_seconds,optional" summary:"decode_worker_seconds"`
	PrefillGPUsPerWorker                 *int64   `parquet:"prefill_gpus_per_worker,optional" summary:"prefill_gpus_per_worker"`
	DecodeGPUsPerWorker                  *int64   `parquet:"decode_gpus_per_worker,optional" summary:"decode_gpus_per_worker"`
	GPUHours                             *float64 `parquet:"gpu_hours,optional" summary:"gpu_hours"`
	GoodputCompletedRequests             *int64   `parquet:"goodput_completed_requests,optional" summary:"goodput_completed_requests"`
	GoodputRequestThroughputRPS          *float64 `parquet:"goodput_request_throughput_rps,optional" summary:"goodput_request_throughput_rps"`
	GoodputOutputThroughputTokS          *float64 `parquet:"goodput_output_throughput_tok_s,optional" summary:"goodput_output_throughput_tok_s"`
	ProcessedTokens                      *int64   `parquet:"processed_tokens,optional" summary:"processed_tokens"`
	PrefixCacheReusedRatio               *float64 `parquet:"prefix_cache_reused_ratio,optional" summary:"prefix_cache_reused_ratio"`
	FirstAdmissionPrefixCacheReusedRatio *float64 `parquet:"first_admission_prefix_cache_reused_ratio,optional" summary:"first_admission_prefix_cache_reused_ratio"`
	NumTTFTSamples                       *int64   `parquet:"num_ttft_samples,optional" summary:"num_ttft_samples"`
	NumTPOTSamples                       *int64   `parquet:"num_tpot_samples,optional" summary:"num_tpot_samples"`
	NumE2ELatencySamples                 *int64   `parquet:"num_e2e_latency_samples,optional" summary:"num_e2e_latency_samples"`
	NumITLSamples                        *int64   `parquet:"num_itl_samples,optional" summary:"num_itl_samples"`
	NumPreemptions                       *int64   `parquet:"num_preemptions,optional" summary:"num_preemptions"`
	TotalRecoveredTokens                 *int64   `parquet:"total_recovered_tokens,optional" summary:"total_recovered_tokens"`
	// WarmupSeconds is traffic.load.warmup_seconds; WarmupRequests counts the requests that
	// arrived before it, left out of every other count, token total and distribution;
	// SteadyWindowMs is the window the rates were measured over (metrics.Summary.SteadyWindowMs;
	// 0 when no request arrived after the warm-up and the rates are the whole run's). All three
	// are null without a warm-up.
	WarmupSeconds  *float64 `parquet:"warmup_seconds,optional" summary:"warmup_seconds"`
	WarmupRequests *int64   `parquet:"warmup_requests,optional" summary:"warmup_requests"`
	SteadyWindowMs *float64 `parquet:"steady_window_ms,optional" summary:"steady_window_ms"`
	// CooldownRequests counts the requests left out as cool-down (traffic.load.cooldown: they
	// arrived after the run's last session start, a closed loop's or an open loop's); null
	// without traffic.load.cooldown.
	CooldownRequests *int64 `parquet:"cooldown_requests,optional" summary:"cooldown_requests"`

	// TTFT (time to first token) in ms: mean, min, max, median, p75, p90, p95, p99 and population std.
	MeanTTFTMs   *float64 `parquet:"mean_ttft_ms,optional" summary:"mean_ttft_ms"`
	MinTTFTMs    *float64 `parquet:"min_ttft_ms,optional" summary:"min_ttft_ms"`
	MaxTTFTMs    *float64 `parquet:"max_ttft_ms,optional" summary:"max_ttft_ms"`
	MedianTTFTMs *float64 `parquet:"median_ttft_ms,optional" summary:"median_ttft_ms"`
	P75TTFTMs    *float64 `parquet:"p75_ttft_ms,optional" summary:"p75_ttft_ms"`
	P90TTFTMs    *float64 `parquet:"p90_ttft_ms,optional" summary:"p90_ttft_ms"`
	P95TTFTMs    *float64 `parquet:"p95_ttft_ms,optional" summary:"p95_ttft_ms"`
	P99TTFTMs    *float64 `parquet:"p99_ttft_ms,optional" summary:"p99_ttft_ms"`
	StdTTFTMs    *float64 `parquet:"std_ttft_ms,optional" summary:"std_ttft_ms"`
	// TTST (time to second token, the gap after the first token) in ms: mean, min, max, median, p75, p90, p95, p99 and population std.
	MeanTTSTMs   *float64 `parquet:"mean_ttst_ms,optional" summary:"mean_ttst_ms"`
	MinTTSTMs    *float64 `parquet:"min_ttst_ms,optional" summary:"min_ttst_ms"`
	MaxTTSTMs    *float64 `parquet:"max_ttst_ms,optional" summary:"max_ttst_ms"`
	MedianTTSTMs *float64 `parquet:"median_ttst_ms,optional" summary:"median_ttst_ms"`
	P75TTSTMs    *float64 `parquet:"p75_ttst_ms,optional" summary:"p75_ttst_ms"`
	P90TTSTMs    *float64 `parquet:"p90_ttst_ms,optional" summary:"p90_ttst_ms"`
	P95TTSTMs    *float64 `parquet:"p95_ttst_ms,optional" summary:"p95_ttst_ms"`
	P99TTSTMs    *float64 `parquet:"p99_ttst_ms,optional" summary:"p99_ttst_ms"`
	StdTTSTMs    *float64 `parquet:"std_ttst_ms,optional" summary:"std_ttst_ms"`
	// TPOT (time per output token, per request) in ms: mean, min, max, median, p75, p90, p95, p99 and population std.
	MeanTPOTMs   *float64 `parquet:"mean_tpot_ms,optional" summary:"mean_tpot_ms"`
	MinTPOTMs    *float64 `parquet:"min_tpot_ms,optional" summary:"min_tpot_ms"`
	MaxTPOTMs    *float64 `parquet:"max_tpot_ms,optional" summary:"max_tpot_ms"`
	MedianTPOTMs *float64 `parquet:"median_tpot_ms,optional" summary:"median_tpot_ms"`
	P75TPOTMs    *float64 `parquet:"p75_tpot_ms,optional" summary:"p75_tpot_ms"`
	P90TPOTMs    *float64 `parquet:"p90_tpot_ms,optional" summary:"p90_tpot_ms"`
	P95TPOTMs    *float64 `parquet:"p95_tpot_ms,optional" summary:"p95_tpot_ms"`
	P99TPOTMs    *float64 `parquet:"p99_tpot_ms,optional" summary:"p99_tpot_ms"`
	StdTPOTMs    *float64 `parquet:"std_tpot_ms,optional" summary:"std_tpot_ms"`
	// ITL (inter-token latency, every token gap) in ms: mean, min, max, median, p75, p90, p95, p99 and population std.
	MeanITLMs   *float64 `parquet:"mean_itl_ms,optional" summary:"mean_itl_ms"`
	MinITLMs    *float64 `parquet:"min_itl_ms,optional" summary:"min_itl_ms"`
	MaxITLMs    *float64 `parquet:"max_itl_ms,optional" summary:"max_itl_ms"`
	MedianITLMs *float64 `parquet:"median_itl_ms,optional" summary:"median_itl_ms"`
	P75ITLMs    *float64 `parquet:"p75_itl_ms,optional" summary:"p75_itl_ms"`
	P90ITLMs    *float64 `parquet:"p90_itl_ms,optional" summary:"p90_itl_ms"`
	P95ITLMs    *float64 `parquet:"p95_itl_ms,optional" summary:"p95_itl_ms"`
	P99ITLMs    *float64 `parquet:"p99_itl_ms,optional" summary:"p99_itl_ms"`
	StdITLMs    *float64 `parquet:"std_itl_ms,optional" summary:"std_itl_ms"`
	// E2E request latency in ms: mean, min, max, median, p75, p90, p95, p99 and population std.
	MeanE2ELatencyMs   *float64 `parquet:"mean_e2e_latency_ms,optional" summary:"mean_e2e_latency_ms"`
	MinE2ELatencyMs    *float64 `parquet:"min_e2e_latency_ms,optional" summary:"min_e2e_latency_ms"`
	MaxE2ELatencyMs    *float64 `parquet:"max_e2e_latency_ms,optional" summary:"max_e2e_latency_ms"`
	MedianE2ELatencyMs *float64 `parquet:"median_e2e_latency_ms,optional" summary:"median_e2e_latency_ms"`
	P75E2ELatencyMs    *float64 `parquet:"p75_e2e_latency_ms,optional" summary:"p75_e2e_latency_ms"`
	P90E2ELatencyMs    *float64 `parquet:"p90_e2e_latency_ms,optional" summary:"p90_e2e_latency_ms"`
	P95E2ELatencyMs    *float64 `parquet:"p95_e2e_latency_ms,optional" summary:"p95_e2e_latency_ms"`
	P99E2ELatencyMs    *float64 `parquet:"p99_e2e_latency_ms,optional" summary:"p99_e2e_latency_ms"`
	StdE2ELatencyMs    *float64 `parquet:"std_e2e_latency_ms,optional" summary:"std_e2e_latency_ms"`
	// output tokens/s per user (1000/ITL gap): mean, min, max, median, p75, p90, p95, p99 and population std.
	MeanOutputTokenThroughputPerUser   *float64 `parquet:"mean_output_token_throughput_per_user_tok_s,optional" summary:"mean_output_token_throughput_per_user"`
	MinOutputTokenThroughputPerUser    *float64 `parquet:"min_output_token_throughput_per_user_tok_s,optional" summary:"min_output_token_throughput_per_user"`
	MaxOutputTokenThroughputPerUser    *float64 `parquet:"max_output_token_throughput_per_user_tok_s,optional" summary:"max_output_token_throughput_per_user"`
	MedianOutputTokenThroughputPerUser *float64 `parquet:"median_output_token_throughput_per_user_tok_s,optional" summary:"median_output_token_throughput_per_user"`
	P75OutputTokenThroughputPerUser    *float64 `parquet:"p75_output_token_throughput_per_user_tok_s,optional" summary:"p75_output_token_throughput_per_user"`
	P90OutputTokenThroughputPerUser    *float64 `parquet:"p90_output_token_throughput_per_user_tok_s,optional" summary:"p90_output_token_throughput_per_user"`
	P95OutputTokenThroughputPerUser    *float64 `parquet:"p95_output_token_throughput_per_user_tok_s,optional" summary:"p95_output_token_throughput_per_user"`
	P99OutputTokenThroughputPerUser    *float64 `parquet:"p99_output_token_throughput_per_user_tok_s,optional" summary:"p99_output_token_throughput_per_user"`
	StdOutputTokenThroughputPerUser    *float64 `parquet:"std_output_token_throughput_per_user_tok_s,optional" summary:"std_output_token_throughput_per_user"`

	// Speculative decoding (engine.speculation; null without it, and left out of the row's JSON
	// so that rows without it are unchanged): speculation rounds, draft tokens proposed and
	// accepted, draft_acceptance_rate = accepted / drafts (0 with none) and mean_accepted_length,
	// the mean tokens a decode step emits (accepted drafts + 1).
	NumSpeculativeRounds   *int64   `parquet:"num_speculative_rounds,optional" summary:"num_speculative_rounds" json:",omitempty"`
	NumDraftTokens         *int64   `parquet:"num_draft_tokens,optional" summary:"num_draft_tokens" json:",omitempty"`
	NumAcceptedDraftTokens *int64   `parquet:"num_accepted_draft_tokens,optional" summary:"num_accepted_draft_tokens" json:",omitempty"`
	DraftAcceptanceRate    *float64 `parquet:"draft_acceptance_rate,optional" summary:"draft_acceptance_rate" json:",omitempty"`
	MeanAcceptedLength     *float64 `parquet:"mean_accepted_length,optional" summary:"mean_accepted_length" json:",omitempty"`

	// Trajectories of an agentic trace (null for other workloads, and left out of the row's JSON):
	// their count, those whose every request completed and the others, and the E2E latency in ms
	// over completed trajectories (first arrival to last terminal time): mean, min, max, median,
	// p75, p90, p95, p99 and population std, and p50 (= median, prediction.json's key too).
	TotalTrajectories            *int64   `parquet:"total_trajectories,optional" summary:"total_trajectories" json:",omitempty"`
	CompletedTrajectories        *int64   `parquet:"completed_trajectories,optional" summary:"completed_trajectories" json:",omitempty"`
	IncompleteTrajectories       *int64   `parquet:"incomplete_trajectories,optional" summary:"incomplete_trajectories" json:",omitempty"`
	MeanTrajectoryE2ELatencyMs   *float64 `parquet:"mean_trajectory_e2e_latency_ms,optional" summary:"mean_trajectory_e2e_latency_ms" json:",omitempty"`
	MinTrajectoryE2ELatencyMs    *float64 `parquet:"min_trajectory_e2e_latency_ms,optional" summary:"min_trajectory_e2e_latency_ms" json:",omitempty"`
	MaxTrajectoryE2ELatencyMs    *float64 `parquet:"max_trajectory_e2e_latency_ms,optional" summary:"max_trajectory_e2e_latency_ms" json:",omitempty"`
	MedianTrajectoryE2ELatencyMs *float64 `parquet:"median_trajectory_e2e_latency_ms,optional" summary:"median_trajectory_e2e_latency_ms" json:",omitempty"`
	P75TrajectoryE2ELatencyMs    *float64 `parquet:"p75_trajectory_e2e_latency_ms,optional" summary:"p75_trajectory_e2e_latency_ms" json:",omitempty"`
	P90TrajectoryE2ELatencyMs    *float64 `parquet:"p90_trajectory_e2e_latency_ms,optional" summary:"p90_trajectory_e2e_latency_ms" json:",omitempty"`
	P95TrajectoryE2ELatencyMs    *float64 `parquet:"p95_trajectory_e2e_latency_ms,optional" summary:"p95_trajectory_e2e_latency_ms" json:",omitempty"`
	P99TrajectoryE2ELatencyMs    *float64 `parquet:"p99_trajectory_e2e_latency_ms,optional" summary:"p99_trajectory_e2e_latency_ms" json:",omitempty"`
	StdTrajectoryE2ELatencyMs    *float64 `parquet:"std_trajectory_e2e_latency_ms,optional" summary:"std_trajectory_e2e_latency_ms" json:",omitempty"`
	P50TrajectoryE2ELatencyMs    *float64 `parquet:"p50_trajectory_e2e_latency_ms,optional" summary:"p50_trajectory_e2e_latency_ms" json:",omitempty"`

	// Derived per-GPU metrics (dynosim-spec.md §5.5): AvgGPUs = gpu_hours / (duration_ms /
	// 3,600,000), the time-averaged provisioned GPUs (equal to gpus for a static pool); the
	// per-GPU throughputs divide by it (0 when it is 0).
	AvgGPUs *float64 `parquet:"avg_gpus,optional"`
	// PeakGPUs is the most GPUs provisioned at once and ScalingEventsCount the planner's scaling
	// decisions, with planner.policy enabled (null otherwise, and left out of the row's JSON so
	// that rows of fixed deployments are unchanged).
	PeakGPUs                          *int64   `parquet:"peak_gpus,optional" summary:"peak_gpus" json:",omitempty"`
	ScalingEventsCount                *int64   `parquet:"scaling_events_count,optional" summary:"scaling_events_count" json:",omitempty"`
	OutputThroughputPerGPUTokS        *float64 `parquet:"output_throughput_per_gpu_tok_s,optional"`
	GoodputOutputThroughputPerGPUTokS *float64 `parquet:"goodput_output_throughput_per_gpu_tok_s,optional"`
	// InteractivityTokSPerUser is the output rate one user sees at the median TPOT, in output
	// tokens/s per user: 1000 / median_tpot_ms, the interactivity (median_intvty) that
	// InferenceX's charts put on their x-axis against throughput per GPU. TPOT is per request,
	// (E2E - TTFT) / (output tokens - 1), so the prefill passes that stall a request's decode
	// count in it; mean_output_token_throughput_per_user_tok_s averages 1000 / gap over every
	// gap instead, and reads higher when some gaps are long stalls. Null when no request had two
	// or more output tokens or the median TPOT is 0 ms.
	InteractivityTokSPerUser *float64 `parquet:"interactivity_tok_s_per_user,optional"`
	// SLAAttainment = goodput_completed_requests / (offered_requests − censored_requests) (a
	// request cut short of its requested output is not attained, and not in that column): the
	// share of offered requests (rejected and unfinished ones included, but those censored at a
	// time stop, whose outcome is unknown) that met evaluation.sla by the goodput rule of
	// dynosim-spec.md §4.2.2 (null without an SLA, or when every offered request was censored).
	SLAAttainment *float64 `parquet:"sla_attainment,optional"`
	// SLAPercentileTermsMet is prediction.json's sla_percentile_terms_met: whether every
	// percentile bound of evaluation.sla held over the run (the run's percentile <= the bound,
	// metrics.MeetsBound); SLAPercentileTermsFailed lists the failed bounds' keys, comma-separated
	// (e.g. "p99_itl_ms"). Both null without a percentile bound or a simulation, the failed list
	// also when every bound held; left out of the row's JSON when null. A row whose terms failed
	// is infeasible.
	SLAPercentileTermsMet    *bool   `parquet:"sla_percentile_terms_met,optional" json:",omitempty"`
	SLAPercentileTermsFailed *string `parquet:"sla_percentile_terms_failed,optional" json:",omitempty"`

	// Capacity search (optimization.capacity_search; null without it). CapacityLoad is the
	// largest load found within the SLA, in the unit CapacityLoadUnit names (concurrency,
	// requests_per_second, sessions_per_second or speedup); the load and metric columns of the
	// row are those measured at it (at the search's min for an infeasible point, whose
	// capacity_load is null). CapacityProbes counts the simulations the search ran;
	// CapacityBounded is true when the SLA still held at the search's max (capacity_load = max).
	CapacityLoad     *float64 `parquet:"capacity_load,optional"`
	CapacityLoadUnit *string  `parquet:"capacity_load_unit,optional"`
	CapacityProbes   *int64   `parquet:"capacity_probes,optional"`
	CapacityBounded  *bool    `parquet:"capacity_bounded,optional"`
	// SLABindingTerm is the evaluation.sla term that limits the capacity: the one that broke at
	// the least load above the capacity the search missed at, or at the search's min for an
	// infeasible point (metrics.SLABinding: ttft_ms, itl_ms, e2e_ms, a percentile key such as
	// p99_itl_ms, or completion when rejected or unfinished requests alone miss the attainment);
	// null without a capacity search and when no probe missed there (bounded, or stopped at
	// max_probes before any miss).
	SLABindingTerm *string `parquet:"sla_binding_term,optional"`

	// Cost (optimization.cost; null without it). CostUSDPerHour = Σ over the roles of their GPUs
	// × their hardware's USD per GPU-hour (a disaggregated role may run on its own hardware), or
	// for an autoscaled point its provisioned GPU-hours at those prices per hour of run
	// (provisionedCostPerHour); USDPerMillionOutputTokens = cost_usd_per_hour / (output_throughput_tok_s × 3600)
	// × 1e6, at the capacity load under a capacity search (null without output throughput).
	CostUSDPerHour            *float64 `parquet:"cost_usd_per_hour,optional"`
	USDPerMillionOutputTokens *float64 `parquet:"usd_per_million_output_tokens,optional"`

	// Host-time columns: they differ from run to run, so determinism checks ignore them.
	// WallTimeMs is the host time the sweep spent on the point (ms), also for failed points.
	WallTimeMs                float64  `parquet:"wall_time_ms"`
	ProcessedTokensPerS       *float64 `parquet:"processed_tokens_per_s,optional" summary:"processed_tokens_per_s"`
	ProcessedOutputTokensPerS *float64 `parquet:"processed_output_tokens_per_s,optional" summary:"processed_output_tokens_per_s"`

	// ConfigYAML is the point's concrete prediction config, as `servesweep predict` accepts it
	// (under a capacity search, at the capacity load).
	ConfigYAML string `parquet:"config_yaml"`

	// Probes are the capacity search's probes of the point, written to probes.parquet, not to
	// results.parquet (empty without a capacity search, and for a twin: equivalent_to's probes
	// are its own).
	Probes []ProbeRow `parquet:"-"`
}

// HostTimeColumns names the columns that depend on host speed rather than on the simulation; two
// runs of the same sweep agree on every other column.
func HostTimeColumns() []string {
	return []string{"wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"}
}

// WithoutHostTime returns a copy of r with the host-time columns (HostTimeColumns) cleared, for
// comparing the outputs of two runs.
func (r Row) WithoutHostTime() Row {
	r.WallTimeMs = 0
	r.ProcessedTokensPerS = nil
	r.ProcessedOutputTokensPerS = nil
	return r
}

// PointInfo is what a row needs to know about a sweep point.
type PointInfo struct {
	// ID is the point's stable ID and Index its 0-based position in the expansion order.
	ID    string
	Index int
	// Config is the point's decoded concrete config.
	Config *config.Config
	// YAML is the point's concrete prediction YAML.
	YAML []byte
	// GPUs is the point's GPU count.
	GPUs int
	// EquivalentTo is the ID of the representative of the point's class (grid.CanonicalKey),
	// or "" when the point is the representative.
	EquivalentTo string
	// CostUSDPerHour is the point's price per hour in USD, its GPUs at their hardware's price
	// (0: no cost columns).
	CostUSDPerHour float64
	// PrefillGPUHourUSD and DecodeGPUHourUSD are the prices per GPU-hour of the prefill role's
	// and the decode (or aggregated) role's hardware, which price an autoscaled point's
	// provisioned GPU-hours (provisionedCostPerHour).
	PrefillGPUHourUSD, DecodeGPUHourUSD float64
	// LoadSearched is set when the sweep searches each point's load (optimization.capacity_search):
	// a row without a search result (timed out or failed: Record.Capacity nil, or holding only
	// the probes that ran) was measured at no load, so its load columns (load_concurrency, load_requests_per_second,
	// load_sessions_per_second, load_speedup) are null rather than the spec's starting value.
	LoadSearched bool
}

// NewRow builds the row of a point from its config and its journal record. Metric columns are
// filled from rec.Summary (prediction.json keys) only when rec.Status is ok.
func NewRow(p PointInfo, rec Record) Row {
	c := p.Config
	r := Row{
		PointID:      p.ID,
		PointIndex:   int64(p.Index),
		EquivalentTo: p.EquivalentTo,
		Status:       rec.Status,
		Reason:       rec.Reason,
		GPUs:         int64(p.GPUs),
		WallTimeMs:   rec.WallTimeMs,
		ConfigYAML:   string(p.YAML),
	}
	if c != nil {
		fillConfig(&r, c)
	}
	switch {
	case rec.Capacity != nil && !rec.Capacity.Stopped:
		fillCapacity(&r, rec.Capacity)
	case rec.Capacity != nil:
		// A search that failed or timed out: no capacity and no load, but the probes it ran
		// before it stopped, which explain the failure (its reason names the probe that stopped it).
		r.LoadConcurrency, r.LoadRequestsPerSecond, r.LoadSessionsPerSecond, r.LoadSpeedup = nil, nil, nil, nil
		r.CapacityLoadUnit, r.CapacityProbes = str(rec.Capacity.Unit), i64(len(rec.Capacity.Probes))
		r.Probes = ProbeRows(r.PointID, rec.Capacity)
	case p.LoadSearched:
		r.LoadConcurrency, r.LoadRequestsPerSecond, r.LoadSessionsPerSecond, r.LoadSpeedup = nil, nil, nil, nil
	}
	if p.CostUSDPerHour > 0 {
		r.CostUSDPerHour = f64(p.CostUSDPerHour)
	}
	if rec.Status == StatusOK {
		r.TimingProvider = str(rec.TimingProvider)
		fillSummary(&r, withoutTruncatedGoodput(rec.Summary))
		if c != nil && c.Engine.Workers.Prefill == nil {
			// Aggregated serving has no prefill role: its per-role summary columns are null, not 0.
			r.PrefillWorkerSeconds, r.PrefillGPUsPerWorker = nil, nil
		}
		fillDerived(&r)
		if cost, ok := provisionedCostPerHour(&r, p); ok {
			r.CostUSDPerHour = f64(cost)
		}
		windowProvisioning(&r, rec.Summary, p)
		terms := percentileTerms(&r, rec.Summary)
		if terms != nil {
			r.SLAPercentileTermsMet = boolp(metrics.AllMet(terms))
			if failed := metrics.FailedKeys(terms); failed != nil {
				r.SLAPercentileTermsFailed = str(strings.Join(failed, ","))
			}
		}
		clearEmptyDistributions(&r)
		if b := rec.Backlog; b != nil {
			r.WindowArrivedRequests, r.QueueGrowthRequests = i64(b.Arrived), i64(b.QueueGrowth())
			r.BacklogGrowthRequests, r.BacklogGrowthJudged = i64(b.Growth()), boolp(!b.QueueOnly)
		}
		if deref(r.RejectedRequests) > 0 || deref(r.TruncatedRequests) > 0 || r.Backlogged() || r.Overloaded() || r.Drained() {
			// A capacity search's own note (stopped at max_probes) stays after the degradation's.
			capacityNote := ""
			if strings.HasPrefix(r.Reason, "capacity_search:") {
				capacityNote = "; " + r.Reason
			}
			r.Status, r.Reason = StatusDegraded, degradedReason(&r, rec.Summary)+capacityNote
		}
		switch c := rec.Capacity; {
		case c != nil && !c.Feasible:
			r.Status, r.Reason = StatusInfeasible, infeasibleReason(&r, c, terms)
		case !metrics.AllMet(terms):
			// A percentile bound holds or not for the run as a whole: a point that missed one at
			// its load does not meet the SLA, with or without a capacity search.
			r.Status, r.Reason = StatusInfeasible, percentileReason(&r, terms)
		}
		// An infeasible row keeps saying why it is infeasible; its metrics are cleared alike.
		switch {
		case r.CompletedRequests == nil || *r.CompletedRequests == 0:
			r.Reason = withReason(r, NoSamplesReason)
			clearMetrics(&r, true)
		case zeroDuration(&r):
			r.Reason = withReason(r, ZeroDurationReason)
			clearMetrics(&r, false)
		}
		// Cost per token follows the output throughput that remains (none once cleared).
		if r.CostUSDPerHour != nil && r.OutputThroughputTokS != nil && *r.OutputThroughputTokS > 0 {
			r.USDPerMillionOutputTokens = f64(*r.CostUSDPerHour / (*r.OutputThroughputTokS * 3600) * 1e6)
		}
	}
	return r
}

// withReason is r's reason once reason (no_samples or zero_duration) applies to it: an
// infeasible row keeps its own, a degraded one adds it after its rejections (which stay first, so
// reason LIKE 'rejected_requests%' still finds it), an ok one takes it.
func withReason(r Row, reason string) string {
	switch r.Status {
	case StatusInfeasible:
		return r.Reason
	case StatusDegraded:
		return r.Reason + "; " + reason
	}
	return reason
}

// degradedReason is the reason of a degraded row: the rejected and offered counts and the
// rejections by reason (from the record's rejected_requests_by_reason.<reason> values, when the
// summary carries them).
//
// A point whose completed requests were truncated says so after the rejections (or alone):
// "truncated_requests: N of M completed requests stopped short of their requested output (K
// output tokens not generated)".
func degradedReason(r *Row, summary map[string]float64) string {
	var msgs []string
	if n := deref(r.RejectedRequests); n > 0 {
		msg := fmt.Sprintf("%s: %d of %d offered requests rejected", DegradedReason, n, deref(r.OfferedRequests))
		var parts []string
		for k, v := range summary {
			if reason, ok := strings.CutPrefix(k, "rejected_requests_by_reason."); ok && v > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", reason, int64(v)))
			}
		}
		if len(parts) > 0 {
			slices.Sort(parts)
			msg += " (" + strings.Join(parts, ", ") + ")"
		}
		msgs = append(msgs, msg)
	}
	if n := deref(r.TruncatedRequests); n > 0 {
		msgs = append(msgs, fmt.Sprintf("%s: %d of %d completed requests stopped short of their requested output (%d output tokens not generated)",
			TruncatedReason, n, deref(r.CompletedRequests), deref(r.TruncatedOutputTokens)))
	}
	if r.Backlogged() {
		msgs = append(msgs, fmt.Sprintf("%s: %d of %d offered requests unfinished when the run stopped (traffic.stop.max_virtual_time_seconds), "+
			"more than twice the %.1f its completion rate and mean latency keep in flight: a queue grew, and no latency counts them",
			UnfinishedReason, deref(r.UnfinishedRequests), deref(r.OfferedRequests), r.inFlight()))
	}
	if b, ok := r.backlog(); ok && b.SystemOverloaded() {
		msgs = append(msgs, fmt.Sprintf("%s: its system held %d more requests at its last arrival than when its measured window "+
			"began, of %d that arrived in it: arrivals outpace what it serves, so its queue and latencies grow with the run's length",
			OverloadedReason, b.Growth(), b.Arrived))
	} else if ok && b.QueueOverloaded() {
		msgs = append(msgs, fmt.Sprintf("%s: its queue (requests not yet admitted by a worker) held %d more at its last arrival than "+
			"when its measured window began, of %d that arrived in it: arrivals outpace what it serves, so its queue and latencies "+
			"grow with the run's length", OverloadedReason, b.QueueGrowth(), b.Arrived))
	}
	if r.Drained() {
		msgs = append(msgs, fmt.Sprintf("%s: its system held %d fewer requests at its last arrival than when its measured window "+
			"began (of %d that arrived in it; it keeps about %.0f in flight): it served work queued before its window, so its "+
			"throughput counts requests offered earlier; an autoscaled deployment still draining what it queued before the planner "+
			"added workers measures so (lengthen the run)", DrainedReason, -deref(r.BacklogGrowthRequests), deref(r.WindowArrivedRequests), r.inFlight()))
	}
	return strings.Join(msgs, "; ")
}

// OverloadedReason is the reason prefix of a degraded point whose open-loop arrivals outpaced it
// (Overloaded): its latencies are set by how long the run let the queue grow.
const OverloadedReason = "overloaded"

// DrainedReason is the reason prefix of a degraded point whose measured window drained its
// system (Drained): its throughput counts work offered before the window.
const DrainedReason = "drained"

// Drained reports whether r, an autoscaled point (peak_gpus set: planner.policy enabled), lost
// more requests from its system over its measured window than a steady state does, given the
// requests it keeps in flight (sim.Backlog.Drained, with sim.InFlight of its completion rate and
// mean latency, as sweep judges it).
func (r *Row) Drained() bool {
	b, ok := r.backlog()
	return ok && r.PeakGPUs != nil && !r.rateProfile() && b.Drained(r.inFlight())
}

// rateProfile reports whether r's open loop (constant_rate or poisson) sets its rate per phase
// (traffic.load.profile: no single rate in its load columns). Such a run is judged for overload
// only: a profile that steps its rate down sheds what the deployment held in flight, the load
// falling rather than a drain of work queued before the window (a review, 2026-12-07: an
// autoscaled point under 16 requests/s for 60 s, then 2, was drained by 93 requests).
func (r *Row) rateProfile() bool {
	return (r.LoadType == config.LoadConstantRate || r.LoadType == config.LoadPoisson) &&
		r.LoadRequestsPerSecond == nil && r.LoadSessionsPerSecond == nil
}

// Overloaded reports whether r's measured window gained more requests in its system, or in its
// queue, than a deployment that keeps up does (sim.Backlog.Overloaded).
func (r *Row) Overloaded() bool {
	b, ok := r.backlog()
	return ok && b.Overloaded()
}

// backlog is the sim.Backlog r's columns give, which its rules read (the window's arrivals and
// its gains, as from empty starts); false without window_arrived_requests.
func (r *Row) backlog() (sim.Backlog, bool) {
	if r.WindowArrivedRequests == nil {
		return sim.Backlog{}, false
	}
	b := sim.Backlog{Arrived: int(*r.WindowArrivedRequests), QueueOnly: r.BacklogGrowthJudged != nil && !*r.BacklogGrowthJudged}
	if r.BacklogGrowthRequests != nil {
		b.AtEnd = int(*r.BacklogGrowthRequests)
	}
	if r.QueueGrowthRequests != nil {
		b.QueuedAtEnd = int(*r.QueueGrowthRequests)
	}
	return b, true
}

// UnfinishedReason is the reason prefix of a degraded point whose run stopped with a backlog of
// unfinished requests (Backlogged): its latencies and throughput cover only the requests that
// finished, so a deployment that fell behind would look fast.
const UnfinishedReason = "unfinished_requests"

// TruncatedReason is the reason prefix of a degraded point whose completed requests stopped
// short of their requested output.
const TruncatedReason = "truncated_requests"

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// RejectedRatio is (rejected_requests + truncated_requests + the requests it fell behind by) /
// offered_requests of r, at most 1: the share of offered requests not served in full, or not
// kept up with; 0 when offered_requests is missing. It fell behind by unfinished_requests when
// Backlogged, by the larger of backlog_growth_requests and queue_growth_requests when Overloaded
// (queue_growth_requests alone over a window not backlog_growth_judged), and by the larger of all
// when both (largely the same requests, queued at a time stop); a Drained
// window counts the requests it lost, served within it though offered before it.
func (r *Row) RejectedRatio() float64 {
	if r.OfferedRequests == nil || *r.OfferedRequests == 0 {
		return 0
	}
	var behind int64
	if r.Backlogged() {
		behind = deref(r.UnfinishedRequests)
	}
	if b, ok := r.backlog(); ok && b.SystemOverloaded() {
		behind = max(behind, int64(b.Growth()), int64(b.QueueGrowth()))
	} else if ok && b.QueueOverloaded() {
		behind = max(behind, int64(b.QueueGrowth()))
	}
	if r.Drained() {
		behind = max(behind, -deref(r.BacklogGrowthRequests))
	}
	n := deref(r.RejectedRequests) + deref(r.TruncatedRequests) + behind
	return min(1, float64(n)/float64(*r.OfferedRequests))
}

// Backlogged reports whether r's run stopped (at traffic.stop.max_virtual_time_seconds) with
// more requests unfinished than its own pace keeps in flight: more than twice, and more than
// one, the request_throughput_rps × mean_e2e_latency_ms it completed at (Little's law, L = λW:
// the requests a deployment that keeps up has in flight whenever a run is cut). Fewer are the
// run's edge, left out of the latencies as before; more mean a queue grew that the finished
// requests' latencies do not show.
func (r *Row) Backlogged() bool {
	n := deref(r.UnfinishedRequests)
	return n > 0 && float64(n) > max(2*r.inFlight(), 1)
}

// inFlight is request_throughput_rps × mean_e2e_latency_ms / 1000 of r (0 when either is
// missing): the requests its completion rate and mean latency keep in flight.
func (r *Row) inFlight() float64 {
	if r.RequestThroughputRPS == nil || r.MeanE2ELatencyMs == nil {
		return 0
	}
	return sim.InFlight(*r.RequestThroughputRPS, *r.MeanE2ELatencyMs)
}

// NoSamplesReason is the reason of an ok point (appended to a degraded one's, see withReason)
// where no request completed (completed_requests
// = 0, for example a stop.max_virtual_time_s shorter than any request): its latency and
// throughput columns are null rather than 0, so that they never sort first, and Analyze
// excludes it from the front as no_samples.
const NoSamplesReason = "no_samples: no request completed (completed_requests = 0); latency and throughput columns are null"

// ZeroDurationReason is the reason of an ok point whose requests completed in less than the
// 1e-9 s floor of the rates (metrics.DurationFloored; every pass took 0 ms, e.g. fixed timing of
// 0 ms): its throughput columns are null rather than completed / 1e-9 s, and Analyze excludes it
// from the front as zero_duration. Its latency columns (0 ms) are kept.
const ZeroDurationReason = "zero_duration: the simulated duration is under 1e-9 s (every pass took 0 ms); throughput columns are null"

// zeroDuration reports whether r (with its summary filled) completed requests in less than the
// floor of the rates.
func zeroDuration(r *Row) bool {
	return r.CompletedRequests != nil && r.DurationMs != nil && metrics.DurationFloored(*r.CompletedRequests, *r.DurationMs)
}

// clearMetrics sets to null every throughput column (request, token, goodput, per-user, per-GPU)
// of r and, when latency is set, the latency distributions ({stat}_{ttft,ttst,tpot,itl,
// e2e_latency}_ms); counts, duration, worker-seconds, GPU-hours and host-time columns are kept.
func clearMetrics(r *Row, latency bool) {
	v := reflect.ValueOf(r).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := columnName(t.Field(i))
		f := v.Field(i)
		if f.Kind() != reflect.Pointer || f.Type().Elem().Kind() != reflect.Float64 || strings.HasPrefix(name, "processed_") ||
			slaBoundColumn(name) {
			continue
		}
		isLatency := false
		for _, m := range []string{"_ttft_ms", "_ttst_ms", "_tpot_ms", "_itl_ms", "_e2e_latency_ms"} {
			isLatency = isLatency || strings.HasSuffix(name, m)
		}
		if latency && isLatency || strings.Contains(name, "throughput") {
			f.SetZero()
		}
	}
}

// slaBoundColumn reports whether the column is an evaluation.sla bound (sla_ttft_ms,
// sla_p99_itl_ms, ...): config, not a measured latency, though its name ends like one, so the
// clearing of a row's latencies leaves it.
func slaBoundColumn(name string) bool {
	return strings.HasPrefix(name, "sla_") && strings.HasSuffix(name, "_ms")
}

// distributionSamples maps the column suffix of each latency distribution to the summary count
// of its samples: TTST and TPOT have one sample per request with two or more tokens, ITL and
// per-user throughput one per token gap.
var distributionSamples = map[string]string{
	"_ttft_ms": "num_ttft_samples", "_ttst_ms": "num_tpot_samples", "_tpot_ms": "num_tpot_samples",
	"_e2e_latency_ms": "num_e2e_latency_samples", "_itl_ms": "num_itl_samples",
	"_output_token_throughput_per_user_tok_s": "num_itl_samples",
	// One sample per completed trajectory (the columns also end in _e2e_latency_ms: either
	// count at 0 clears them).
	"_trajectory_e2e_latency_ms": "completed_trajectories",
}

// columnName is the results.parquet column name of a Row field ("-" for fields not written).
func columnName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
	return name
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// clearEmptyDistributions sets to null the statistics of every distribution with no sample
// (prediction.json reports them as 0.0, dynosim-spec.md §4.2.1), so that an empty population
// never reads as a latency of 0 ms.
func clearEmptyDistributions(r *Row) {
	v := reflect.ValueOf(r).Elem()
	t := v.Type()
	counts := map[string]*int64{} // the sample-count columns distributionSamples names
	for _, count := range distributionSamples {
		counts[count] = nil
	}
	for i := 0; i < t.NumField(); i++ {
		if name := columnName(t.Field(i)); hasKey(counts, name) {
			counts[name], _ = v.Field(i).Interface().(*int64)
		}
	}
	for i := 0; i < t.NumField(); i++ {
		name := columnName(t.Field(i))
		if hasKey(counts, name) || slaBoundColumn(name) {
			continue
		}
		for suffix, count := range distributionSamples {
			if strings.HasSuffix(name, suffix) {
				if n := counts[count]; n != nil && *n == 0 {
					v.Field(i).SetZero()
				}
			}
		}
	}
}

func i64(x int) *int64       { v := int64(x); return &v }
func f64(x float64) *float64 { return &x }
func str(s string) *string   { return &s }
func boolp(b bool) *bool     { return &b }
func optF64(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return f64(*p)
}
func nonZeroI(x int) *int64 {
	if x == 0 {
		return nil
	}
	return i64(x)
}
func nonZeroF(x float64) *float64 {
	if x == 0 {
		return nil
	}
	return f64(x)
}

// roleColumns are the per-role columns of one role.
type roleColumns struct {
	replicas, tensor, pipeline, attentionData, moeTensor, moeExpert, gpus **int64
	maxBatchedTokens, maxSequences                                        **int64
	prefillDecodeInterval                                                 **int64
	capacityPolicy                                                        **string
	blockSize, capacityBlocks                                             **int64
	prefixCaching                                                         **bool
	timing, hardware                                                      **string
}

func (r *Row) roles() [3]roleColumns {
	return [3]roleColumns{
		{&r.AggReplicas, &r.AggTensor, &r.AggPipeline, &r.AggAttentionData, &r.AggMoeTensor, &r.AggMoeExpert, &r.AggGPUs,
			&r.AggMaxBatchedTokens, &r.AggMaxSequences, &r.AggPrefillDecodeInterval, &r.AggCapacityPolicy, &r.AggKVBlockSize, &r.AggKVCapacityBlocks, &r.AggPrefixCaching, &r.AggTiming, &r.AggHardware},
		{&r.PrefillReplicas, &r.PrefillTensor, &r.PrefillPipeline, &r.PrefillAttentionData, &r.PrefillMoeTensor, &r.PrefillMoeExpert, &r.PrefillGPUs,
			&r.PrefillMaxBatchedTokens, &r.PrefillMaxSequences, &r.PrefillPrefillDecodeInterval, &r.PrefillCapacityPolicy, &r.PrefillKVBlockSize, &r.PrefillKVCapacityBlocks, &r.PrefillPrefixCaching, &r.PrefillTiming, &r.PrefillHardware},
		{&r.DecodeReplicas, &r.DecodeTensor, &r.DecodePipeline, &r.DecodeAttentionData, &r.DecodeMoeTensor, &r.DecodeMoeExpert, &r.DecodeGPUs,
			&r.DecodeMaxBatchedTokens, &r.DecodeMaxSequences, &r.DecodePrefillDecodeInterval, &r.DecodeCapacityPolicy, &r.DecodeKVBlockSize, &r.DecodeKVCapacityBlocks, &r.DecodePrefixCaching, &r.DecodeTiming, &r.DecodeHardware},
	}
}

// fillConfig sets the configuration columns from c.
func fillConfig(r *Row, c *config.Config) {
	e := &c.Engine
	r.Mode, r.Backend = string(e.Mode), e.Backend
	if e.BackendVersion != "" {
		r.BackendVersion = str(e.BackendVersion)
	}
	r.Hardware, _ = timing.ResolveHardwareID(e.Hardware)
	r.Model, _ = timing.ResolveModelID(e.Model)
	if prec, err := sim.Precisions(c); err == nil {
		// The formats in effect: auto resolved from the model, as the timing model sees them.
		r.WeightPrecision, r.KVCachePrecision = str(string(prec.Weights)), str(string(prec.KVCache))
	}
	r.ContextLengthTokens = int64(e.ContextLength)
	cols := r.roles()
	for i, role := range []*config.WorkerRole{e.Workers.Aggregated, e.Workers.Prefill, e.Workers.Decode} {
		if role == nil {
			continue
		}
		rc, p := cols[i], role.Parallelism
		*rc.replicas, *rc.tensor, *rc.pipeline = i64(p.Replicas), i64(p.Tensor), i64(p.Pipeline)
		*rc.attentionData, *rc.moeTensor, *rc.moeExpert = i64(p.AttentionData), i64(p.MoeTensor), i64(p.MoeExpert)
		*rc.gpus = i64(p.GPUs())
		*rc.maxBatchedTokens, *rc.maxSequences = i64(role.Scheduler.MaxBatchedTokens), i64(role.Scheduler.MaxSequences)
		switch e.Backend { // the style-specific keys, where the style uses them
		case config.BackendSGLang:
			*rc.prefillDecodeInterval = i64(role.Scheduler.PrefillDecodeInterval)
		case config.BackendTRTLLM:
			*rc.capacityPolicy = str(role.Scheduler.CapacityPolicy)
		}
		*rc.blockSize = i64(role.KVCache.BlockSize)
		if blocks, err := sim.CapacityBlocks(c, config.Roles()[i]); err == nil {
			*rc.capacityBlocks = i64(blocks) // fixed, or derived by default capacity as the run sizes it
		}
		*rc.prefixCaching = boolp(role.KVCache.PrefixCaching)
		*rc.timing = str(role.Timing.Type)
		hw := e.Hardware
		if role.Hardware != "" {
			hw = role.Hardware
		}
		id, _ := timing.ResolveHardwareID(hw)
		*rc.hardware = str(id)
	}
	if kt := e.KVTransfer; kt != nil {
		r.KVTransferBandwidthGBps = optF64(kt.BandwidthGBps)
	}
	if e.Mode == config.ModeDisaggregated {
		r.KVTransferLatencyMs = f64(sim.KVTransferLatencyMs(c))
	}
	r.FrontendOverheadMs = sim.FrontendOverheadMs(c)
	rt := &c.Router
	r.RouterPolicy, r.RouterPrefillLoadModel = string(rt.Policy), rt.PrefillLoadModel.Type
	if rt.Policy == config.PolicyKVRouter {
		// The values the run uses, defaults included; null for policies that have no knobs.
		k := rt.Knobs()
		r.RouterOverlapScoreCredit = f64(k.OverlapScoreCredit)
		r.RouterPrefillLoadScale = f64(k.PrefillLoadScale)
		r.RouterTemperature = f64(k.Temperature)
	}
	if rt.Policy == config.PolicyKVRouter || rt.Policy == config.PolicyRandom {
		r.RouterSeed = i64(int(min(rt.RandomSeed(), math.MaxInt64)))
	}

	t := &c.Traffic
	r.SourceType = t.Source.Type
	switch t.Source.Type {
	case config.SourceSynthetic:
		r.SourceInputTokens, r.SourceOutputTokens = i64(t.Source.InputTokens), i64(t.Source.OutputTokens)
	case config.SourceSyntheticSession:
		r.SourceNewInputTokensPerTurn = i64(t.Source.NewInputTokensPerTurn)
		r.SourceOutputTokensPerTurn = i64(t.Source.OutputTokensPerTurn)
		if sh := t.Source.Session; sh != nil {
			r.SessionTurns, r.SessionPrefixGroups = i64(sh.Turns), i64(sh.PrefixGroups)
			r.SessionSharedPrefixRatio, r.SessionInterTurnDelayMs = f64(sh.SharedPrefixRatio), f64(sh.InterTurnDelayMs)
			r.SessionInterTurnDelayStddevMs = f64(sh.InterTurnDelayStddevMs)
		}
	case config.SourceTrace:
		r.TracePath = str(strings.Join(t.Source.Paths, ","))
		r.TraceFormat = str(t.Source.Format)
		r.TraceBlockSizeTokens = nonZeroI(t.Source.BlockSize)
	}
	l := &t.Load
	r.LoadType = l.Type
	switch l.Type {
	case config.LoadConcurrency:
		r.LoadConcurrency = i64(l.Concurrency)
		r.LoadRampSeconds = optF64(l.RampSeconds)
	case config.LoadConstantRate, config.LoadPoisson:
		r.LoadRequestsPerSecond, r.LoadSessionsPerSecond = nonZeroF(l.RequestsPerSecond), nonZeroF(l.SessionsPerSecond)
		if l.Type == config.LoadPoisson {
			r.LoadSeed = i64(int(min(l.Seed, math.MaxInt64)))
		}
	case config.LoadTraceTimestamps:
		r.LoadSpeedup = f64(l.Speedup)
	}
	s := &t.Stop
	r.StopRequests, r.StopSessions = nonZeroI(s.Requests), nonZeroI(s.Sessions)
	r.StopRequestsPerLoadUnit, r.StopSessionsPerLoadUnit = nonZeroF(s.RequestsPerLoadUnit), nonZeroF(s.SessionsPerLoadUnit)
	r.StopMaxVirtualTimeSeconds = nonZeroF(s.MaxVirtualTimeSeconds)
	if sla := c.Evaluation.SLA; sla != nil {
		r.SLATTFTMs, r.SLAITLMs, r.SLAE2EMs = optF64(sla.TTFTMs), optF64(sla.ITLMs), optF64(sla.E2EMs)
		for _, b := range sla.PercentileBounds() {
			*r.percentileBound(b.Key()) = f64(b.Ms)
		}
	}
}

// percentileBoundFields maps each sla_<key> column name to its Row field index.
var percentileBoundFields = sync.OnceValue(func() map[string]int {
	out := map[string]int{}
	t := reflect.TypeFor[Row]()
	for i := 0; i < t.NumField(); i++ {
		if name := columnName(t.Field(i)); strings.HasPrefix(name, "sla_p") && t.Field(i).Type == reflect.TypeFor[*float64]() {
			out[name] = i
		}
	}
	return out
})

// percentileBound returns the field of the sla_<key> column of percentile bound key (p50_ttft_ms
// … p99_e2e_ms); it panics on another key, which config.SLA.PercentileBounds never gives.
func (r *Row) percentileBound(key string) **float64 {
	i, ok := percentileBoundFields()["sla_"+key]
	if !ok {
		panic("results: no column sla_" + key)
	}
	return reflect.ValueOf(r).Elem().Field(i).Addr().Interface().(**float64)
}

// PercentileBounds lists the percentile bounds of r's evaluation.sla (its sla_p<n>_<latency>_ms
// columns), in config.SLA.PercentileBounds order; nil when none is set.
func (r *Row) PercentileBounds() []config.PercentileBound {
	var out []config.PercentileBound
	for _, lat := range config.PercentileLatencies() {
		for _, p := range config.SLAPercentiles() {
			b := config.PercentileBound{Percentile: p, Latency: lat}
			if x := *r.percentileBound(b.Key()); x != nil {
				b.Ms = *x
				out = append(out, b)
			}
		}
	}
	return out
}

// percentileTerms evaluates the percentile bounds of r's evaluation.sla against summary, the
// run's prediction.json values (nil without a bound).
func percentileTerms(r *Row, summary map[string]float64) []metrics.TermResult {
	bounds := r.PercentileBounds()
	if len(bounds) == 0 {
		return nil
	}
	terms := make([]metrics.PercentileTerm, len(bounds))
	for i, b := range bounds {
		terms[i] = metrics.PercentileTerm{Percentile: b.Percentile, Latency: b.Latency, BoundMs: b.Ms}
	}
	return metrics.CheckTerms(terms, summary)
}

// withoutTruncatedGoodput returns the journal summary m with the good requests cut short of their
// requested output (goodput_truncated_requests, and their share of the goodput throughputs
// where the journal has it) taken off goodput_completed_requests,
// goodput_request_throughput_rps and goodput_output_throughput_tok_s: prediction.json's
// goodput judges latencies alone, servesweep's columns (and sla_attainment, min_goodput_rps
// with them) count a request as good only when it was also served whole. A journal written
// before the throughputs' shares were recorded scales them by the good requests left, (good −
// truncated) / good. m itself when none was cut short; never modified.
func withoutTruncatedGoodput(m map[string]float64) map[string]float64 {
	n := m[goodputTruncatedKey]
	if n <= 0 {
		return m
	}
	out := maps.Clone(m)
	good, hasGood := m["goodput_completed_requests"]
	if hasGood {
		out["goodput_completed_requests"] = max(0, good-n)
	}
	for key, part := range map[string]string{"goodput_request_throughput_rps": goodputTruncatedRPSKey,
		"goodput_output_throughput_tok_s": goodputTruncatedTokSKey} {
		v, ok := out[key]
		switch share, has := m[part]; {
		case !ok:
		case has:
			out[key] = max(0, v-share)
		case hasGood && good > 0:
			out[key] = v * max(0, good-n) / good
		}
	}
	return out
}

// TruncatedGoodputKeys returns the journal keys withoutTruncatedGoodput reads, which a capacity
// search's probe keeps beside ProbeSummaryKeys. The slice is new on every call.
func TruncatedGoodputKeys() []string {
	return []string{goodputTruncatedKey, goodputTruncatedRPSKey, goodputTruncatedTokSKey}
}

// fillSummary sets every column tagged `summary:"key"` from the prediction.json value of key.
// Keys missing from m (goodput without an SLA) leave their column null.
func fillSummary(r *Row, m map[string]float64) { fillTagged(r, m) }

// fillTagged sets every *int64 or *float64 field of the struct ptr points to that is tagged
// `summary:"key"` from m[key]; missing and non-finite values leave the field nil.
func fillTagged(ptr any, m map[string]float64) {
	v := reflect.ValueOf(ptr).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		key := t.Field(i).Tag.Get("summary")
		x, ok := m[key]
		if key == "" || !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		f := v.Field(i)
		switch f.Type().Elem().Kind() {
		case reflect.Int64:
			n := int64(x)
			f.Set(reflect.ValueOf(&n))
		case reflect.Float64:
			f.Set(reflect.ValueOf(&x))
		}
	}
}

// provisionedCostPerHour is the price per hour, in USD, of an autoscaled point (planner.policy
// enabled: r.PeakGPUs is set): the GPU-hours each role provisioned over the run at its hardware's
// price, divided by the run's hours,
//
//	(prefill_worker_seconds × prefill_gpus_per_worker × prefill price +
//	 decode_worker_seconds × decode_gpus_per_worker × decode price) / 3600 / (duration_ms / 3.6e6)
//
// so a pool that grew from 1 to 4 workers and back, averaging 1.529 GPUs at 3.5 USD per
// GPU-hour, costs 5.35 USD per hour, not the 3.5 of its starting size. ok is false for a fixed
// deployment (whose provisioned GPUs are its configured ones, priced in p.CostUSDPerHour), without
// prices, or when the run has no duration or worker-seconds.
func provisionedCostPerHour(r *Row, p PointInfo) (float64, bool) {
	if r.PeakGPUs == nil || p.CostUSDPerHour <= 0 || r.DurationMs == nil || *r.DurationMs <= 0 {
		return 0, false
	}
	usdSeconds := 0.0 // Σ role worker-seconds × GPUs per worker × USD per GPU-hour
	for _, role := range []struct {
		seconds *float64
		gpus    *int64
		price   float64
	}{
		{r.PrefillWorkerSeconds, r.PrefillGPUsPerWorker, p.PrefillGPUHourUSD},
		{r.DecodeWorkerSeconds, r.DecodeGPUsPerWorker, p.DecodeGPUHourUSD},
	} {
		if role.seconds != nil && role.gpus != nil {
			usdSeconds += *role.seconds * float64(*role.gpus) * role.price
		}
	}
	if usdSeconds <= 0 {
		return 0, false
	}
	return usdSeconds / (*r.DurationMs / 1000), true
}

// windowProvisioning sets an autoscaled row's avg_gpus, per-GPU throughputs and (with prices)
// cost_usd_per_hour from the GPUs its pools provisioned over its steady window (the journal's
// planner_window_* values), where its throughputs are measured, rather than over the whole run
// (gpu_hours / duration_ms, dynosim-spec.md §5.5), whose start holds the workers the config
// starts with until the planner has scaled them: over the whole run a deployment the planner
// scales from 4 workers to 1 over 85 s costs what the run's length makes of those 85 s (a user
// trial, 2026-12-07). A row without them (not autoscaled, or measured without a warm-up) keeps
// the whole run's.
func windowProvisioning(r *Row, summary map[string]float64, p PointInfo) {
	ms := summary[windowMsKey]
	if r.PeakGPUs == nil || !(ms > 0) {
		return
	}
	gpus := func(n *int64) float64 {
		if n == nil {
			return 0
		}
		return float64(*n)
	}
	pre, dec := summary[windowPrefillKey]*gpus(r.PrefillGPUsPerWorker), summary[windowDecodeKey]*gpus(r.DecodeGPUsPerWorker)
	s := ms / 1000
	setAvgGPUs(r, (pre+dec)/s)
	if p.CostUSDPerHour > 0 {
		if cost := (pre*p.PrefillGPUHourUSD + dec*p.DecodeGPUHourUSD) / s; cost > 0 {
			r.CostUSDPerHour = f64(cost)
		}
	}
}

// fillDerived computes the per-GPU columns (dynosim-spec.md §5.5) and the interactivity.
func fillDerived(r *Row) {
	r.InteractivityTokSPerUser = interactivity(r)
	if r.CompletedRequests != nil && r.OfferedRequests != nil && *r.OfferedRequests > 0 {
		r.CompletionRatio = f64(float64(*r.CompletedRequests) / float64(*r.OfferedRequests))
	}
	if r.GoodputCompletedRequests != nil && r.OfferedRequests != nil {
		if judged := *r.OfferedRequests - deref(r.CensoredRequests); judged > 0 {
			r.SLAAttainment = f64(float64(*r.GoodputCompletedRequests) / float64(judged))
		}
	}
	if r.GPUHours == nil || r.DurationMs == nil {
		return
	}
	avg := 0.0
	if *r.GPUHours > 0 && *r.DurationMs > 0 {
		avg = *r.GPUHours / (*r.DurationMs / 3.6e6)
	}
	setAvgGPUs(r, avg)
}

// setAvgGPUs sets r's avg_gpus to avg and its per-GPU throughputs from it.
func setAvgGPUs(r *Row, avg float64) {
	r.AvgGPUs = f64(avg)
	per := func(x *float64) *float64 {
		if x == nil {
			return nil
		}
		if avg <= 0 {
			return f64(0)
		}
		return f64(*x / avg)
	}
	r.OutputThroughputPerGPUTokS = per(r.OutputThroughputTokS)
	r.GoodputOutputThroughputPerGPUTokS = per(r.GoodputOutputThroughputTokS)
}

// interactivity is the InteractivityTokSPerUser column of r: 1000 / median TPOT (ms), null
// without a TPOT sample or with a median of 0 ms (a rate without a bound).
func interactivity(r *Row) *float64 {
	if r.NumTPOTSamples == nil || *r.NumTPOTSamples <= 0 || r.MedianTPOTMs == nil || !(*r.MedianTPOTMs > 0) {
		return nil
	}
	return f64(1000 / *r.MedianTPOTMs)
}

// Column describes one column of results.parquet.
type Column struct {
	// Name is the column name.
	Name string
	// Type is the Go type of the column: int64, float64, bool or string.
	Type string
	// Optional reports whether the column may hold nulls.
	Optional bool
	// SummaryKey is the prediction.json key the column carries ("" for other columns).
	SummaryKey string
}

// Columns lists the columns of results.parquet in file order.
func Columns() []Column {
	t := reflect.TypeFor[Row]()
	out := make([]Column, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		out = append(out, Column{Name: name, Type: ft.Kind().String(), Optional: strings.Contains(opts, "optional"),
			SummaryKey: f.Tag.Get("summary")})
	}
	return out
}

// numericValue returns the value of the numeric column name in r: ok is false when the column is
// null, known is false when name is not a numeric column.
func numericValue(r *Row, name string) (x float64, ok, known bool) {
	c, found := rowFields().byName[name]
	if !found || !isNumericKind(c.kind) {
		return 0, false, false
	}
	f := reflect.ValueOf(r).Elem().Field(c.index)
	if c.pointer {
		if f.IsNil() {
			return 0, false, true
		}
		f = f.Elem()
	}
	if c.kind == reflect.Int64 {
		return float64(f.Int()), true, true
	}
	return f.Float(), true, true
}

// rowField is one written field of Row: its index, column name, kind (of the pointed-to type for
// an optional column) and whether it is a pointer.
type rowField struct {
	index   int
	name    string
	kind    reflect.Kind
	pointer bool
}

// rowFieldSet lists Row's written fields in column order and indexes them by column name.
type rowFieldSet struct {
	list   []rowField
	byName map[string]rowField
}

// rowFields reads Row's struct tags once: per-value lookups then cost no tag parsing.
var rowFields = sync.OnceValue(func() rowFieldSet {
	t := reflect.TypeFor[Row]()
	s := rowFieldSet{byName: map[string]rowField{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := columnName(f)
		if name == "-" || name == "" {
			continue
		}
		c := rowField{index: i, name: name, kind: f.Type.Kind()}
		if c.kind == reflect.Pointer {
			c.kind, c.pointer = f.Type.Elem().Kind(), true
		}
		s.list = append(s.list, c)
		s.byName[name] = c
	}
	return s
})

func isNumericKind(k reflect.Kind) bool { return k == reflect.Int64 || k == reflect.Float64 }

// NumericColumns lists the names of the numeric columns (int64 or float64) other than the
// host-time ones (HostTimeColumns) and point_index (the grid's numbering): the metrics an
// objective may name.
func NumericColumns() []string {
	var out []string
	for _, c := range Columns() {
		if (c.Type == "int64" || c.Type == "float64") && !slices.Contains(HostTimeColumns(), c.Name) && c.Name != "point_index" {
			out = append(out, c.Name)
		}
	}
	return out
}

// fmtNum formats a number for reports: integers without a fraction, others with 4 significant
// digits past the decimal point where useful.
func fmtNum(x float64) string {
	switch {
	case math.IsInf(x, 0) || math.IsNaN(x):
		return "n/a"
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
}
