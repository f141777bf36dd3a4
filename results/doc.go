// Package results owns what a sweep leaves behind: the journal of finished points
// (points.jsonl), the results table (results.parquet), the Pareto-front analysis, and the human
// report (pareto.json, report.md, pareto.png, report.html, recommendations/NNNN.yaml,
// pareto_ties.parquet). It simulates nothing.
//
// Start with Row (one Parquet row per point), NewRow (a row from a point's config and journal
// Record), Journal (the durable, fsync'd append-only record that makes sweeps resumable),
// Analyze (filters, the exact Pareto front, best point per objective, scalar ranking) and
// WriteOutputs. A sharded sweep writes one part per shard (WritePart: the results.parquet schema
// plus PartMeta in the Parquet footer, under results/part-IIIII-of-NNNNN.parquet); FindParts,
// ReadPart and MergeParts turn the parts back into the rows and manifest of one sweep.
//
// # results.parquet schema
//
// One row per sweep point that finished (status ok, degraded, infeasible, failed or timed_out),
// in point order.
// Columns are flat, typed (INT64, DOUBLE, BOOLEAN, STRING) and snake_case; the unit is in the
// name: _ms milliseconds (virtual time unless noted), _tok_s tokens per virtual second, _rps
// requests per virtual second, _s or _seconds seconds, _gb_per_second decimal GB/s, _tokens
// tokens. Nullable columns are null where they do not apply.
//
// Identity:
//
//	point_id          STRING  stable ID: 12 hex digits of SHA-256 of the decoded config
//	point_index       INT64   position in the spec's expansion order
//	status            STRING  ok | degraded | infeasible | failed | timed_out
//	reason            STRING  why the point is degraded, failed or timed out, or has
//	                          no_samples or zero_duration; null otherwise
//	equivalent_to     STRING  point_id of the first point of the point's class (a config that
//	                          simulates identically: grid.CanonicalKey); the twin copies its
//	                          results and is never a candidate. Null on that first point
//
// An ok point where no request completed (completed_requests = 0, e.g. a stop time shorter than
// any request) keeps status ok, with reason NoSamplesReason (it starts with "no_samples:"; a
// degraded one, every request rejected, keeps its rejections first: "rejected_requests: ...;
// no_samples: ..."), and
// its latency columns ({stat}_{ttft,ttst,tpot,itl,e2e_latency}_ms) and throughput columns (every
// column whose name contains "throughput", per-GPU and goodput included) are null, not 0, so
// they never sort first; counts, duration_ms, worker-seconds, gpu_hours and avg_gpus are kept.
// Analyze excludes such points from the front and the rankings (excluded reason no_samples).
// Select them with reason LIKE 'no_samples%' or completed_requests = 0.
//
// An ok point whose requests completed in less than the 1e-9 s floor of the rates (duration_ms
// < 1e-6 with completed_requests > 0: every pass took 0 ms, e.g. fixed timing of 0 ms) keeps
// status ok with reason ZeroDurationReason (it starts with "zero_duration:"), and its throughput
// columns are null instead of completed / 1e-9 s; its latency columns (0 ms) are kept. Analyze
// excludes it from the front and the rankings (excluded reason zero_duration).
//
// Deployment (engine.*, router.*):
//
//	mode, backend, hardware, model                       STRING hardware and model as resolved:
//	                                                            an alias such as h200 is recorded
//	                                                            as its catalog id (h200_sxm)
//	weight_precision, kv_cache_precision          STRING the formats in effect (bf16, fp8,
//	                                                            fp4), auto resolved from the model
//	context_length_tokens                                INT64  0 = "max" (the model's maximum)
//	gpus                                                 INT64  Σ replicas×tensor×pipeline×attention_data
//	{agg,prefill,decode}_replicas, _tensor, _pipeline,   INT64  per role, null when the mode
//	  _attention_data, _moe_tensor, _moe_expert, _gpus,         does not use the role
//	  _max_batched_tokens, _max_sequences,                      (scheduler limits are per
//	  _kv_block_size_tokens, _kv_capacity_blocks                attention-DP rank)
//	{agg,prefill,decode}_prefill_decode_interval         INT64  SGLang only (null on other backends)
//	{agg,prefill,decode}_capacity_policy                 STRING TensorRT-LLM only: guaranteed_no_evict
//	                                                            | max_utilization (null elsewhere)
//	{agg,prefill,decode}_prefix_caching                  BOOLEAN
//	{agg,prefill,decode}_timing                          STRING  fixed | polynomial | default
//	{agg,prefill,decode}_hardware                        STRING  the role's GPU (engine.hardware,
//	                                                            or the role's own), resolved
//	backend_version                                      STRING  engine.backend_version (null: unset)
//	timing_provider                                      STRING  the timing model that priced the
//	                                                            passes: fixed | polynomial | roofline |
//	                                                            op_level <backend> gemm <v>, attention
//	                                                            <v>[, nccl <v>] on <gpu>
//	kv_transfer_bandwidth_gb_per_second                  DOUBLE
//	kv_transfer_latency_ms                               DOUBLE  every hand-off's fixed time as
//	                                                            applied (null: aggregated)
//	frontend_overhead_ms                                 DOUBLE  every request's front-end time as
//	                                                            applied
//	router_policy, router_prefill_load_model             STRING
//	router_overlap_score_credit, router_prefill_load_scale, router_temperature   DOUBLE (null: unset)
//	router_seed                                          INT64   kv_router, random (null: others)
//
// Workload (traffic.*, evaluation.sla):
//
//	source_type                                          STRING  synthetic | synthetic-session | trace
//	source_input_tokens, source_output_tokens            INT64   synthetic ISL / OSL
//	source_new_input_tokens_per_turn, source_output_tokens_per_turn, session_turns,
//	  session_prefix_groups                              INT64   synthetic-session
//	session_shared_prefix_ratio, session_inter_turn_delay_ms   DOUBLE
//	session_inter_turn_delay_stddev_ms                  DOUBLE
//	trace_path, trace_format                             STRING  trace
//	trace_block_size_tokens                              INT64
//	load_type                                            STRING
//	load_concurrency, load_seed                          INT64
//	load_requests_per_second, load_sessions_per_second, load_speedup   DOUBLE
//	load_ramp_seconds                                    DOUBLE  concurrency; the run's (null: none)
//	stop_requests, stop_sessions                         INT64
//	stop_requests_per_load_unit, stop_sessions_per_load_unit, stop_max_virtual_time_s   DOUBLE
//	sla_ttft_ms, sla_itl_ms, sla_e2e_ms                  DOUBLE  per-request bounds
//	sla_p50_ttft_ms, sla_p90_ttft_ms, sla_p95_ttft_ms, sla_p99_ttft_ms,
//	  sla_p50_itl_ms, sla_p90_itl_ms, sla_p95_itl_ms, sla_p99_itl_ms,
//	  sla_p50_tpot_ms, sla_p90_tpot_ms, sla_p95_tpot_ms, sla_p99_tpot_ms,
//	  sla_p50_e2e_ms, sla_p90_e2e_ms, sla_p95_e2e_ms, sla_p99_e2e_ms
//	                                                     DOUBLE  percentile bounds over the run
//
// Metrics: every summary key of prediction.json (dynosim-spec.md §4.2), under the same name,
// null for failed and timed-out points (ok, degraded and infeasible ones carry them; an
// infeasible point's are measured at the capacity search's minimum load; goodput columns are
// also null without an SLA):
//
//	num_requests, completed_requests, offered_requests, rejected_requests,
//	  rejected_requests_context_length, rejected_requests_kv_capacity (prediction.json's
//	  rejected_requests_by_reason), unfinished_requests, truncated_requests,
//	  truncated_output_tokens (completed requests stopped short of their requested output, and
//	  the tokens they did not emit), total_input_tokens, total_output_tokens, processed_tokens,
//	  num_ttft_samples, num_tpot_samples, num_e2e_latency_samples, num_itl_samples,
//	  num_preemptions, total_recovered_tokens, goodput_completed_requests, prefill_gpus_per_worker,
//	  decode_gpus_per_worker                             INT64
//	backlog_growth_requests, queue_growth_requests,
//	  window_arrived_requests                            INT64   an open loop's measured window: the
//	  requests its system gained (negative: lost), those its queue gained, and those that arrived
//	  (all null otherwise; overloaded, degraded, when the system's gain is over a tenth of the
//	  arrivals over a window backlog_growth_judged, or the queue's over 3 × √arrivals; drained,
//	  degraded, when an autoscaled point's system lost over 3 × √(2 × in flight))
//	backlog_growth_judged                                BOOLEAN whether the window spans enough service
//	  lifetimes to judge the system's gain as overload
//	completion_ratio                                     DOUBLE  completed / offered (derived)
//	duration_ms, request_throughput_rps, input_throughput_tok_s, output_throughput_tok_s,
//	  total_throughput_tok_s, prefill_worker_seconds, decode_worker_seconds, gpu_hours,
//	  goodput_request_throughput_rps, goodput_output_throughput_tok_s,
//	  prefix_cache_reused_ratio, first_admission_prefix_cache_reused_ratio   DOUBLE
//	warmup_seconds, steady_window_ms DOUBLE; warmup_requests INT64   null without
//	                                                     traffic.load.warmup_seconds: the
//	                                                     warm-up, the requests it left out of
//	                                                     every other count and distribution,
//	                                                     and the window the rates cover
//	cooldown_requests INT64                              null without traffic.load.cooldown:
//	                                                     the requests that arrived after the
//	                                                     run's last session start (closed or
//	                                                     open loop), left out of every other
//	                                                     count
//	{mean,min,max,median,p75,p90,p95,p99,std}_{ttft_ms,ttst_ms,tpot_ms,itl_ms,e2e_latency_ms}
//	                                                     DOUBLE  latency distributions; null
//	                                                     when the distribution has no sample
//	{mean,min,max,median,p75,p90,p95,p99,std}_output_token_throughput_per_user_tok_s
//	                                                     DOUBLE  prediction.json's
//	                                                     *_output_token_throughput_per_user
//
// Derived (dynosim-spec.md §5.5): avg_gpus (gpu_hours / (duration_ms / 3,600,000)),
// output_throughput_per_gpu_tok_s and goodput_output_throughput_per_gpu_tok_s (divided by
// avg_gpus), DOUBLE. avg_gpus is time-weighted: under the planner (planner.policy enabled)
// gpu_hours integrates the provisioned workers over the run. interactivity_tok_s_per_user
// DOUBLE = 1000 / median_tpot_ms, output tokens/s per user at the median TPOT (InferenceX's
// interactivity); null without a TPOT sample.
//
// Speculative decoding (null without engine.speculation): num_speculative_rounds,
// num_draft_tokens, num_accepted_draft_tokens INT64; draft_acceptance_rate (accepted / drafts)
// and mean_accepted_length (tokens a decode step emits: accepted drafts + 1) DOUBLE.
//
// Trajectories (null unless the workload is an agentic trace): total_trajectories,
// completed_trajectories (every request completed), incomplete_trajectories INT64; and over
// completed trajectories, first arrival to last terminal time in ms, DOUBLE:
// {mean,min,max,median,p75,p90,p95,p99,std}_trajectory_e2e_latency_ms and
// p50_trajectory_e2e_latency_ms (the median, under prediction.json's key too).
//
// Planner (null unless planner.policy is enabled): peak_gpus INT64, the most GPUs provisioned
// at once (active, starting and draining workers); scaling_events_count INT64, the number of
// the planner's scaling decisions (prediction.json's scaling_events).
//
// sla_attainment DOUBLE: (goodput_completed_requests − the good ones cut short of their
// requested output) / (offered_requests − censored_requests), the share of offered requests
// (rejected and truncated ones, and unfinished ones but the censored, count against it) that met evaluation.sla by the
// per-request goodput rule (dynosim-spec.md §4.2.2) with their whole output; null without an
// SLA. censored_requests INT64 counts the unfinished requests that a max_virtual_time_seconds
// stop caught within every per-request bound (metrics.Censored), whose outcome is unknown: they
// are left out rather than counted as misses; null without an SLA or such a stop.
//
// sla_percentile_terms_met BOOLEAN: every percentile bound of evaluation.sla held over the run
// (its median or p<n> of TTFT, ITL over every inter-token gap, TPOT or E2E <= the bound);
// sla_percentile_terms_failed STRING: the keys of those that did not, comma-separated
// (p99_itl_ms,p99_ttft_ms). Null without a percentile bound; the list also when all held. A
// point whose run missed a percentile bound has status infeasible (reason sla_constraint:
// percentile bound missed: ...), with or without a capacity search, and is never a candidate.
//
// Capacity search (optimization.capacity_search; null without it): the row's load and metric
// columns are measured at the capacity load, and its config_yaml sets traffic.load to it. A
// point whose search did not finish (timed out, failed) has null load_concurrency,
// load_requests_per_second, load_sessions_per_second and load_speedup: it was measured at no
// load (its config_yaml is the point's, at the spec's starting load).
//
//	capacity_load          DOUBLE   the largest load found with sla_attainment >= the target
//	                                and every percentile bound held (null when infeasible)
//	capacity_load_unit     STRING   concurrency | requests_per_second | sessions_per_second | speedup
//	capacity_probes        INT64    simulations the search ran (each is a row of probes.parquet)
//	capacity_bounded       BOOLEAN  the SLA still held at the search's max (capacity_load = max)
//	sla_binding_term       STRING   the evaluation.sla term that limits the capacity: the one that
//	                                broke at the least load missed above it, or at the min of an
//	                                infeasible point (ttft_ms, itl_ms, e2e_ms, a percentile key
//	                                such as p99_itl_ms, or completion: rejected or unfinished
//	                                requests alone miss the attainment); null when no load missed
//
// A point that misses the attainment or a percentile bound at the search's min load has status
// infeasible (reason
// sla_constraint: ..., or rejected_requests: ... when its rejections alone make it miss; its
// metrics are those at min) and is never a candidate.
//
// Cost (optimization.cost; null without it): cost_usd_per_hour DOUBLE (gpus × the hardware's USD
// per GPU-hour), usd_per_million_output_tokens DOUBLE (cost_usd_per_hour / (output_throughput_tok_s
// × 3600) × 1e6; null when the row has no output throughput).
//
// # probes.parquet schema
//
// One row per simulation of a capacity search (ProbeRow), in point order then probe order:
// point_id STRING, probe_index INT64, load DOUBLE, load_unit STRING, sla_attainment DOUBLE,
// meets_sla BOOLEAN (attainment reached and every percentile bound held), sla_headroom DOUBLE
// (the factor every SLA bound would need scaling by for the target attainment and every
// percentile bound to hold exactly; < 1 is margin; null when no scaling would do),
// sla_percentile_terms_met BOOLEAN (null without a percentile bound), sla_binding_term STRING
// (the term closest to breaking, or furthest past it, at the probe; null when unknown),
// unmeasured STRING (why the probe measured no steady state, its meets_sla false no SLA miss;
// null when measured), the
// request counts offered/completed/rejected/unfinished/censored/goodput_completed_requests INT64,
// {mean,median,p99}_ttft_ms, {mean,median,p99}_itl_ms, mean_tpot_ms, request_throughput_rps,
// output_throughput_tok_s, goodput_request_throughput_rps, duration_ms DOUBLE, ramp_seconds and
// warmup_seconds DOUBLE (the traffic.load.ramp_seconds and warmup_seconds the probe ran under;
// null when it kept the point's own), and wall_time_ms DOUBLE (host time, the probe's pilot run
// included). Twins (equivalent_to set) have no probes of their own.
//
// Host time (differ between runs; ignore them when comparing outputs): wall_time_ms DOUBLE (host
// ms the sweep spent on the point, also for failed points), processed_tokens_per_s and
// processed_output_tokens_per_s DOUBLE (simulated tokens per host second).
//
// config_yaml STRING: the point's concrete prediction config, accepted by `servesweep predict`.
//
// power_w and power_coverage are not columns: servesweep has no power model (they are always
// null in prediction.json).
package results
