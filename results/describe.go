package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
)

// MetricInfo describes one numeric column of results.parquet, the names an objective, a
// --objective flag or `servesweep list metrics` may use.
type MetricInfo struct {
	// Name is the column name, e.g. p99_ttft_ms.
	Name string `json:"name"`
	// Type is the Parquet value kind: int64 or float64.
	Type string `json:"type"`
	// Unit is the column's unit in words: "ms", "tokens/s", "requests/s", "GB/s", "s",
	// "tokens", "KV blocks", "GPUs", "USD/h", "USD per 1M output tokens", "GPU-hours",
	// "fraction" (0 to 1), "count", or "" for an identifier such as point_index.
	Unit string `json:"unit"`
	// Meaning says what the value is, in one short phrase.
	Meaning string `json:"meaning"`
	// Nullable says whether the column may be null (see Row).
	Nullable bool `json:"nullable"`
}

// Metrics describes every numeric column of results.parquet but the host-time ones and
// point_index, in file order: exactly the names CheckMetric accepts (NumericColumns). The units and meanings come from the columns' naming
// rules (a statistic prefix such as p99_ on a distribution, a role prefix agg_, prefill_ or
// decode_ on a deployment knob, sla_ on a bound) and, for the other columns, from one table,
// so a numeric column without a description fails TestMetricsDescribeEveryNumericColumn.
func Metrics() []MetricInfo {
	var out []MetricInfo
	for _, c := range Columns() {
		if !slices.Contains(NumericColumns(), c.Name) {
			continue
		}
		unit, meaning, _ := describeColumn(c.Name)
		out = append(out, MetricInfo{Name: c.Name, Type: c.Type, Unit: unit, Meaning: meaning, Nullable: c.Optional})
	}
	return out
}

// distributions are the per-request (or per-gap) distributions whose statistics are columns,
// with their unit and what one sample is.
var distributions = map[string][2]string{
	"ttft_ms":                                {"ms", "time to first token"},
	"ttst_ms":                                {"ms", "time from first to second token"},
	"tpot_ms":                                {"ms", "time per output token after the first, per request"},
	"itl_ms":                                 {"ms", "inter-token latency (every gap of every request)"},
	"e2e_latency_ms":                         {"ms", "end-to-end latency of a request"},
	"output_token_throughput_per_user_tok_s": {"tokens/s", "output tokens per second one user sees"},
	"trajectory_e2e_latency_ms":              {"ms", "end-to-end latency of an agentic trajectory"},
}

// statistics are the prefixes of a distribution's statistic columns.
var statistics = []struct{ prefix, what string }{
	{"mean_", "mean"}, {"min_", "minimum"}, {"max_", "maximum"}, {"median_", "median"}, {"std_", "standard deviation"},
	{"p50_", "50th percentile"}, {"p75_", "75th percentile"}, {"p90_", "90th percentile"},
	{"p95_", "95th percentile"}, {"p99_", "99th percentile"},
}

// roleKnobs are the per-role deployment columns, after their agg_, prefill_ or decode_ prefix.
var roleKnobs = map[string][2]string{
	"replicas":                {"count", "workers (replicas)"},
	"tensor":                  {"count", "tensor-parallel size (TP)"},
	"pipeline":                {"count", "pipeline-parallel size (PP)"},
	"attention_data":          {"count", "attention data-parallel ranks (DP)"},
	"moe_tensor":              {"count", "MoE tensor-parallel size"},
	"moe_expert":              {"count", "MoE expert-parallel size (EP)"},
	"gpus":                    {"GPUs", "GPUs: replicas × TP × PP × DP"},
	"max_batched_tokens":      {"tokens", "scheduler token budget per pass"},
	"max_sequences":           {"count", "scheduler's most sequences per pass"},
	"prefill_decode_interval": {"count", "decode passes between prefills (0: no limit)"},
	"kv_block_size_tokens":    {"tokens", "KV block size"},
	"kv_capacity_blocks":      {"KV blocks", "KV cache capacity per attention-DP rank"},
}

// roleNames maps a role column prefix to the role it describes.
var roleNames = []struct{ prefix, role string }{{"agg_", "aggregated"}, {"prefill_", "prefill"}, {"decode_", "decode"}}

// otherColumns describes the numeric columns no naming rule covers: {unit, meaning}.
var otherColumns = map[string][2]string{
	"context_length_tokens":                     {"tokens", "engine.context_length (0: the model's maximum)"},
	"gpus":                                      {"GPUs", "GPUs of the deployment, summed over its roles"},
	"kv_transfer_bandwidth_gb_per_second":       {"GB/s", "prefill-to-decode KV transfer bandwidth"},
	"kv_transfer_latency_ms":                    {"ms", "fixed latency of one KV transfer"},
	"frontend_overhead_ms":                      {"ms", "front end's time per request before routing"},
	"router_overlap_score_credit":               {"", "kv_router: weight of cached-prefix overlap"},
	"router_prefill_load_scale":                 {"", "kv_router: weight of prefill load"},
	"router_temperature":                        {"", "kv_router: sampling temperature (0: best worker)"},
	"router_seed":                               {"", "random seed of kv_router's and random's draws"},
	"source_input_tokens":                       {"tokens", "synthetic source's input tokens per request"},
	"source_output_tokens":                      {"tokens", "synthetic source's output tokens per request"},
	"source_new_input_tokens_per_turn":          {"tokens", "session source's new input tokens per turn"},
	"source_output_tokens_per_turn":             {"tokens", "session source's output tokens per turn"},
	"session_turns":                             {"count", "turns per session"},
	"session_shared_prefix_ratio":               {"fraction", "share of the first prompt shared in a prefix group"},
	"session_prefix_groups":                     {"count", "prefix groups sessions are drawn from"},
	"session_inter_turn_delay_ms":               {"ms", "delay between a reply and the next turn"},
	"session_inter_turn_delay_stddev_ms":        {"ms", "standard deviation of that delay"},
	"trace_block_size_tokens":                   {"tokens", "trace's hash block size"},
	"load_concurrency":                          {"count", "requests (or sessions) in flight, closed loop"},
	"load_requests_per_second":                  {"requests/s", "open-loop arrival rate"},
	"load_sessions_per_second":                  {"sessions/s", "open-loop session arrival rate"},
	"load_seed":                                 {"", "random seed of a poisson load's arrivals"},
	"load_speedup":                              {"", "trace replay speed-up factor"},
	"load_ramp_seconds":                         {"s", "time over which a closed loop's first wave starts"},
	"stop_requests":                             {"count", "run stops after this many requests"},
	"stop_requests_per_load_unit":               {"count", "requests per unit of load before the stop"},
	"stop_sessions":                             {"count", "run stops after this many sessions"},
	"stop_sessions_per_load_unit":               {"count", "sessions per unit of load before the stop"},
	"stop_max_virtual_time_s":                   {"s", "run stops at this virtual time"},
	"num_requests":                              {"count", "requests that arrived before the stop"},
	"completed_requests":                        {"count", "requests that finished"},
	"offered_requests":                          {"count", "requests offered: completed + rejected + unfinished"},
	"rejected_requests":                         {"count", "requests rejected at arrival"},
	"unfinished_requests":                       {"count", "requests still queued or running at the stop"},
	"censored_requests":                         {"count", "unfinished requests within every SLA bound at a time stop, left out of sla_attainment"},
	"truncated_requests":                        {"count", "completed requests stopped short of their output"},
	"truncated_output_tokens":                   {"tokens", "output tokens truncated requests did not get"},
	"backlog_growth_requests":                   {"requests", "requests an open loop's system gained over its measured window (overloaded above a tenth of its arrivals)"},
	"queue_growth_requests":                     {"requests", "requests an open loop's queue (not yet admitted by a worker) gained over its measured window (overloaded above 3 × √arrivals)"},
	"window_arrived_requests":                   {"requests", "requests that arrived in an open loop's measured window"},
	"rejected_requests_context_length":          {"count", "requests rejected: prompt >= context length"},
	"rejected_requests_kv_capacity":             {"count", "requests rejected: prompt larger than a KV pool"},
	"completion_ratio":                          {"fraction", "completed / offered requests"},
	"total_input_tokens":                        {"tokens", "prompt tokens of the run"},
	"total_output_tokens":                       {"tokens", "output tokens of the run"},
	"duration_ms":                               {"ms", "virtual time the run's metrics cover"},
	"request_throughput_rps":                    {"requests/s", "completed requests per second"},
	"input_throughput_tok_s":                    {"tokens/s", "prompt tokens per second"},
	"output_throughput_tok_s":                   {"tokens/s", "output tokens per second"},
	"total_throughput_tok_s":                    {"tokens/s", "prompt plus output tokens per second"},
	"prefill_worker_seconds":                    {"s", "prefill workers' busy-or-idle lifetime summed"},
	"decode_worker_seconds":                     {"s", "decode (or aggregated) workers' lifetime summed"},
	"prefill_gpus_per_worker":                   {"GPUs", "GPUs per prefill worker"},
	"decode_gpus_per_worker":                    {"GPUs", "GPUs per decode (or aggregated) worker"},
	"gpu_hours":                                 {"GPU-hours", "GPU time of the run"},
	"goodput_completed_requests":                {"count", "completed requests within every SLA bound"},
	"goodput_request_throughput_rps":            {"requests/s", "goodput requests per second"},
	"goodput_output_throughput_tok_s":           {"tokens/s", "output tokens per second of goodput requests"},
	"processed_tokens":                          {"tokens", "prompt plus output tokens processed"},
	"prefix_cache_reused_ratio":                 {"fraction", "prompt tokens found in the KV cache"},
	"first_admission_prefix_cache_reused_ratio": {"fraction", "prompt tokens cached at first admission"},
	"num_ttft_samples":                          {"count", "TTFT samples"},
	"num_tpot_samples":                          {"count", "TPOT samples"},
	"num_e2e_latency_samples":                   {"count", "E2E latency samples"},
	"num_itl_samples":                           {"count", "inter-token gaps sampled"},
	"num_preemptions":                           {"count", "sequences preempted for KV space"},
	"total_recovered_tokens":                    {"tokens", "tokens recomputed after preemption"},
	"warmup_seconds":                            {"s", "warm-up left out of the metrics"},
	"warmup_requests":                           {"count", "requests left out as warm-up"},
	"steady_window_ms":                          {"ms", "steady-state window the metrics cover"},
	"cooldown_requests":                         {"count", "requests left out as cool-down (after the last session start)"},
	"num_speculative_rounds":                    {"count", "speculative decoding rounds"},
	"num_draft_tokens":                          {"tokens", "draft tokens proposed"},
	"num_accepted_draft_tokens":                 {"tokens", "draft tokens accepted"},
	"draft_acceptance_rate":                     {"fraction", "accepted / draft tokens"},
	"mean_accepted_length":                      {"tokens", "tokens per decode round that verified drafts"},
	"total_trajectories":                        {"count", "agentic trajectories started"},
	"completed_trajectories":                    {"count", "agentic trajectories finished"},
	"incomplete_trajectories":                   {"count", "agentic trajectories unfinished at the stop"},
	"avg_gpus":                                  {"GPUs", "time-weighted mean GPUs in use (planner)"},
	"peak_gpus":                                 {"GPUs", "most GPUs in use at once (planner)"},
	"scaling_events_count":                      {"count", "planner scaling events"},
	"output_throughput_per_gpu_tok_s":           {"tokens/s", "output tokens per second per GPU"},
	"goodput_output_throughput_per_gpu_tok_s":   {"tokens/s", "goodput output tokens per second per GPU"},
	"interactivity_tok_s_per_user":              {"tokens/s", "output tokens per second per user at the median TPOT: 1000 / median_tpot_ms"},
	"sla_attainment":                            {"fraction", "offered requests meeting every SLA bound"},
	"capacity_load":                             {"load unit", "largest load within the SLA (capacity_load_unit)"},
	"capacity_probes":                           {"count", "simulations the capacity search ran"},
	"cost_usd_per_hour":                         {"USD/h", "deployment's price per hour"},
	"usd_per_million_output_tokens":             {"USD per 1M output tokens", "cost of a million output tokens"},
	"wall_time_ms":                              {"ms", "host time the simulation took (not virtual)"},
	"processed_tokens_per_s":                    {"tokens/s", "tokens processed per host second (simulator speed)"},
	"processed_output_tokens_per_s":             {"tokens/s", "output tokens per host second (simulator speed)"},
}

// describeColumn returns the unit and meaning of the numeric column name; ok is false when no
// rule or table entry describes it.
func describeColumn(name string) (unit, meaning string, ok bool) {
	if d, found := otherColumns[name]; found {
		return d[0], d[1], true
	}
	if key, found := strings.CutPrefix(name, "sla_"); found {
		for _, s := range statistics {
			if base, cut := strings.CutPrefix(key, s.prefix); cut {
				if d, isDist := slaDistributions[base]; isDist {
					return "ms", fmt.Sprintf("evaluation.sla bound on the run's %s %s", s.what, d), true
				}
			}
		}
		if d, isBound := slaRequestBounds[key]; isBound {
			return "ms", "evaluation.sla bound on each request's " + d, true
		}
	}
	for _, s := range statistics {
		if base, found := strings.CutPrefix(name, s.prefix); found {
			if d, isDist := distributions[base]; isDist {
				return d[0], s.what + " of " + d[1], true
			}
		}
	}
	for _, r := range roleNames {
		if knob, found := strings.CutPrefix(name, r.prefix); found {
			if d, isKnob := roleKnobs[knob]; isKnob {
				return d[0], r.role + ": " + d[1], true
			}
		}
	}
	return "", "", false
}

// slaDistributions are the latencies evaluation.sla bounds, by their key without a percentile.
var slaDistributions = map[string]string{
	"ttft_ms": "TTFT", "itl_ms": "ITL", "tpot_ms": "TPOT", "e2e_ms": "E2E latency",
}

// slaRequestBounds are evaluation.sla's per-request bounds: what each bounds in a request.
var slaRequestBounds = map[string]string{
	"ttft_ms": "TTFT", "itl_ms": "mean ITL, (E2E - TTFT) / (n - 1)", "e2e_ms": "E2E latency",
}

// lowerIsBetter are the numeric columns, besides the latency distributions' statistics, whose
// smaller value is the better deployment: costs, GPU time, and requests or tokens rejected, left
// unfinished, truncated or recomputed.
var lowerIsBetter = []string{
	"cost_usd_per_hour", "usd_per_million_output_tokens", "gpu_hours",
	"rejected_requests", "rejected_requests_context_length", "rejected_requests_kv_capacity", "unfinished_requests",
	"truncated_requests", "truncated_output_tokens", "incomplete_trajectories", "num_preemptions", "total_recovered_tokens",
}

// higherIsBetter are the numeric columns, besides the per-user output speed's statistics and the
// roles' KV capacities, whose larger value is the better deployment: throughputs, goodput, SLA
// attainment, capacity, completions and cache and draft reuse.
var higherIsBetter = []string{
	"request_throughput_rps", "input_throughput_tok_s", "output_throughput_tok_s", "total_throughput_tok_s",
	"output_throughput_per_gpu_tok_s", "interactivity_tok_s_per_user",
	"goodput_completed_requests", "goodput_request_throughput_rps", "goodput_output_throughput_tok_s",
	"goodput_output_throughput_per_gpu_tok_s", "sla_attainment", "capacity_load", "completion_ratio", "completed_requests",
	"completed_trajectories", "prefix_cache_reused_ratio", "first_admission_prefix_cache_reused_ratio",
	"draft_acceptance_rate", "mean_accepted_length",
}

// BetterDirection returns the direction in which the numeric column metric is better for a
// deployment: Minimize for a latency (every statistic of TTFT, TTST, TPOT, ITL, E2E and
// trajectory E2E latency) and the lowerIsBetter columns, Maximize for the statistics of the
// per-user output speed, a role's KV capacity (agg_, prefill_ or decode_kv_capacity_blocks) and
// the higherIsBetter columns. ok is false for a column with no better direction: a deployment
// or workload setting (gpus, tensor, load_concurrency, an SLA bound), a run's size (num_requests,
// duration_ms) or a count whose good value depends on the question asked.
func BetterDirection(metric string) (d optimization.Direction, ok bool) {
	switch {
	case slices.Contains(lowerIsBetter, metric):
		return optimization.Minimize, true
	case slices.Contains(higherIsBetter, metric):
		return optimization.Maximize, true
	}
	for _, r := range roleNames {
		if metric == r.prefix+"kv_capacity_blocks" {
			return optimization.Maximize, true
		}
	}
	for _, s := range statistics {
		base, found := strings.CutPrefix(metric, s.prefix)
		if _, isDist := distributions[base]; !found || !isDist {
			continue
		}
		if base == "output_token_throughput_per_user_tok_s" {
			return optimization.Maximize, true
		}
		return optimization.Minimize, true
	}
	return "", false
}

// ReversedObjective returns, for an objective whose direction is the opposite of its metric's
// better direction (BetterDirection), what is wrong with it, e.g. "maximize p99_ttft_ms, but a
// lower p99_ttft_ms (99th percentile of time to first token) is better, so this objective favours
// the deployments that do worst on it"; "" for any other objective (a metric without a better
// direction included). The caller names where the objective came from and how to reverse it.
func ReversedObjective(o optimization.Objective) string {
	better, ok := BetterDirection(o.Metric)
	if !ok || better == o.Direction {
		return ""
	}
	way := "lower"
	if better == optimization.Maximize {
		way = "higher"
	}
	what := ""
	if _, meaning, found := describeColumn(o.Metric); found {
		what = " (" + meaning + ")"
	}
	return fmt.Sprintf("%s %s, but a %s %s%s is better, so this objective favours the deployments that do worst on it", o.Direction, o.Metric, way, o.Metric, what)
}
