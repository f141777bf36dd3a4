package optimization

import (
	"fmt"
	"slices"
	"strings"
)

// Direction says whether an objective is maximized or minimized.
type Direction string

// Objective directions.
const (
	Maximize Direction = "maximize"
	Minimize Direction = "minimize"
)

// Better reports whether a is strictly better than b in direction d (larger for Maximize,
// smaller otherwise).
func (d Direction) Better(a, b float64) bool {
	if d == Maximize {
		return a > b
	}
	return a < b
}

// ParseDirection accepts maximize/max and minimize/min.
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "maximize", "max":
		return Maximize, nil
	case "minimize", "min":
		return Minimize, nil
	}
	return "", fmt.Errorf("direction must be maximize or minimize, got %q", s)
}

// Objective is one axis of the Pareto front: a numeric column of results.parquet (Metric) and
// the direction in which it improves.
type Objective struct {
	// Metric is the column name, e.g. p99_ttft_ms.
	Metric string `json:"metric"`
	// Direction is Maximize or Minimize.
	Direction Direction `json:"direction"`
}

// String renders the objective as the --objective flag takes it, e.g. "max:p99_ttft_ms".
func (o Objective) String() string {
	if o.Direction == Maximize {
		return "max:" + o.Metric
	}
	return "min:" + o.Metric
}

// DefaultObjectives are the Pareto objectives when a spec names none: maximize output tokens/s
// per GPU, minimize p99 TTFT, minimize p99 ITL.
func DefaultObjectives() []Objective {
	return []Objective{
		{Metric: "output_throughput_per_gpu_tok_s", Direction: Maximize},
		{Metric: "p99_ttft_ms", Direction: Minimize},
		{Metric: "p99_itl_ms", Direction: Minimize},
	}
}

// Targets of optimization.target (dynosim-spec.md §5.5). TargetPareto reports the Pareto front;
// the others also rank the points by one score.
const (
	TargetPareto            = "pareto"
	TargetThroughput        = "throughput"
	TargetThroughputPerGPU  = "throughput_per_gpu"
	TargetThroughputPerUser = "throughput_per_user"
	TargetGoodput           = "goodput"
	TargetGoodputPerGPU     = "goodput_per_gpu"
	TargetTTFT              = "ttft"
	TargetE2ELatency        = "e2e_latency"
	TargetMinGPUs           = "min_gpus"
)

// Targets lists the valid optimization targets.
func Targets() []string {
	return []string{TargetPareto, TargetThroughput, TargetThroughputPerGPU, TargetThroughputPerUser,
		TargetGoodput, TargetGoodputPerGPU, TargetTTFT, TargetE2ELatency, TargetMinGPUs}
}

// CheckTarget returns an error unless target is one of Targets (or "", which means pareto).
func CheckTarget(target string) error {
	if target == "" || slices.Contains(Targets(), target) {
		return nil
	}
	return fmt.Errorf("must be one of %v, got %q", Targets(), target)
}

// TargetObjective returns the column and direction a scalar target ranks by
// (dynosim-spec.md §5.5); ok is false for pareto and unknown targets.
func TargetObjective(target string) (o Objective, ok bool) {
	switch target {
	case TargetThroughput:
		return Objective{"output_throughput_tok_s", Maximize}, true
	case TargetThroughputPerGPU:
		return Objective{"output_throughput_per_gpu_tok_s", Maximize}, true
	case TargetThroughputPerUser:
		return Objective{"mean_output_token_throughput_per_user_tok_s", Maximize}, true
	case TargetGoodput:
		return Objective{"goodput_output_throughput_tok_s", Maximize}, true
	case TargetGoodputPerGPU:
		return Objective{"goodput_output_throughput_per_gpu_tok_s", Maximize}, true
	case TargetTTFT:
		return Objective{"mean_ttft_ms", Minimize}, true
	case TargetE2ELatency:
		return Objective{"mean_e2e_latency_ms", Minimize}, true
	case TargetMinGPUs:
		return Objective{"gpus", Minimize}, true
	}
	return Objective{}, false
}

// SLARequired is the message of a setting that needs evaluation.sla (a strict SLA, a goodput
// target or objective) when there is none: the sweep spec validation and `servesweep report`
// both use it.
const SLARequired = "needs evaluation.sla with at least one bound (ttft_ms, itl_ms, e2e_ms or a percentile bound such as p99_itl_ms)"

// MetricNeedsSLA reports whether a results column exists only under evaluation.sla: the goodput
// columns (goodput_*), the SLA attainment and the bounds themselves (sla_*); an objective on one
// without an SLA would find every row missing it.
func MetricNeedsSLA(metric string) bool {
	return strings.HasPrefix(metric, "goodput_") || strings.HasPrefix(metric, "sla_")
}

// NeedsSLA reports whether a target reads goodput, which needs evaluation.sla.
func NeedsSLA(target string) bool {
	return target == TargetGoodput || target == TargetGoodputPerGPU || target == TargetMinGPUs
}
