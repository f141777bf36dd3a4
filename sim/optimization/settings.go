package optimization

// Settings choose which points are candidates and how they are compared.
type Settings struct {
	// Target is TargetPareto or a scalar target (see Targets).
	Target string `json:"target"`
	// Objectives are the axes of the Pareto front (DefaultObjectives when empty).
	Objectives []Objective `json:"objectives"`
	// MinGPUs and MaxGPUs bound a candidate's GPU count (0: no bound).
	MinGPUs int `json:"min_candidate_gpus,omitempty"`
	MaxGPUs int `json:"max_candidate_gpus,omitempty"`
	// StrictSLA rejects points whose mean TTFT, mean TPOT or mean E2E latency breaks the
	// matching bound of the point's evaluation.sla (dynosim-spec.md §5.4). Always applied for
	// TargetMinGPUs.
	StrictSLA bool `json:"strict_sla,omitempty"`
	// MinGoodputRPS is the least goodput_request_throughput_rps a point needs under
	// TargetMinGPUs (0: no bound).
	MinGoodputRPS float64 `json:"min_goodput_rps,omitempty"`
	// MaxRejectedRatio is the largest share of offered requests a degraded point may have
	// rejected or truncated (results.Row.RejectedRatio) and still be a candidate (0, the default: a
	// point that rejected or truncated any request is never on the front, a best point or a
	// recommendation).
	MaxRejectedRatio float64 `json:"max_rejected_ratio,omitempty"`
	// MaxCostUSDPerHour and MaxUSDPerMillionOutputTokens bound cost_usd_per_hour and
	// usd_per_million_output_tokens (0: no bound; a row without the column fails a set bound).
	MaxCostUSDPerHour            float64 `json:"max_cost_usd_per_hour,omitempty"`
	MaxUSDPerMillionOutputTokens float64 `json:"max_usd_per_million_output_tokens,omitempty"`
}

// DefaultAttainment is the usual SLA attainment target, the share of offered requests that must
// meet every per-request bound of evaluation.sla: optimization.capacity_search's default
// attainment, and the share below which a report warns that an answer no filter holds to the SLA
// misses it (results.AttainmentText).
const DefaultAttainment = 0.99

// CapacitySearch is optimization.capacity_search: for each deployment, find the largest load
// intensity (traffic.load's concurrency, requests_per_second, sessions_per_second or speedup,
// whichever the load type uses) at which SLA attainment, (goodput_completed_requests − the good
// requests cut short of their requested output) / offered_requests under evaluation.sla, is at
// least Attainment, in (0, 1]. Min and Max (in the
// intensity's unit) bound the search; RelativeTolerance (> 0) is the bracket width, relative to
// the capacity found, below which it stops; MaxProbes (>= 2) bounds the simulations per
// deployment. sweep.Run runs it; sweep.json records it.
type CapacitySearch struct {
	Attainment        float64 `json:"attainment"`
	Min               float64 `json:"min"`
	Max               float64 `json:"max"`
	RelativeTolerance float64 `json:"relative_tolerance"`
	MaxProbes         int     `json:"max_probes"`
}
