package results

import (
	"fmt"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"gopkg.in/yaml.v3"
)

// GPUBudgetExclusion returns why r is outside the GPU budget of s (MinGPUs, MaxGPUs; 0: no
// bound), or "" when it is within: optimization.GPUBudgetExclusion, the rule the sweep filters
// its points by before simulating them, applied to the row's GPUs and, for an autoscaled point
// (planner.policy enabled in its config_yaml), to the planner.max_num_gpus its planner may grow
// it to. A report's --max-gpus thus admits no point that the sweep's max_candidate_gpus of the
// same value would have filtered out.
func GPUBudgetExclusion(r *Row, s optimization.Settings) string {
	why := optimization.GPUBudgetExclusion(optimization.GPUDemand{GPUs: int(r.GPUs)}, s.MinGPUs, s.MaxGPUs, "")
	if why != "" || s.MaxGPUs <= 0 {
		return why // no maximum: a planner's ceiling is within it
	}
	return optimization.GPUBudgetExclusion(rowDemand(r), s.MinGPUs, s.MaxGPUs, "")
}

// rowDemand is what a GPU budget judges of r (config.Planner.GPUDemand): its GPUs and, when its
// config_yaml enables the planner, the planner's ceiling with its default filled in. Only an
// autoscaled row's config is decoded (peak_gpus set: its run had the planner; a row that failed
// before a summary is excluded as failed whatever its budget), so a sweep of fixed deployments
// decodes nothing.
func rowDemand(r *Row) optimization.GPUDemand {
	var doc struct {
		Planner config.Planner `yaml:"planner"`
	}
	if r.PeakGPUs != nil && strings.Contains(r.ConfigYAML, "planner") {
		// config_yaml is the config servesweep wrote for the point; a row whose text does not
		// decode keeps the planner fields read before the error (a disabled planner if none).
		_ = yaml.Unmarshal([]byte(r.ConfigYAML), &doc)
	}
	return doc.Planner.GPUDemand(int(r.GPUs))
}

// GPUBudgetText is the sentence that says why rows a's GPU budget excluded are outside it: the
// budget, how many rows it excluded and the first one's reason (Analysis.ExcludedExamples), e.g.
// "Excluded by the GPU budget (max 2 GPUs): 2 points, e.g. point 6ec4e066de2a: the planner may
// grow it to 8 GPUs (planner.max_num_gpus), over the budget's 2." report.md and report's stdout
// print it; "" when the budget excluded no row.
func GPUBudgetText(a *Analysis) string {
	example := a.ExcludedExamples[ExcludedGPUBudget]
	if example == "" {
		return ""
	}
	return fmt.Sprintf("Excluded by the GPU budget (%s): %s, e.g. %s.", strings.Join(gpuBounds(a.Settings), ", "),
		Plural(a.Excluded[ExcludedGPUBudget], "point"), example)
}

// gpuBounds words the GPU budget of s ("min 2 GPUs", "max 8 GPUs"; none for a bound of 0), for
// report.md's Constraints line and GPUBudgetText.
func gpuBounds(s optimization.Settings) []string {
	var out []string
	if s.MinGPUs > 0 {
		out = append(out, fmt.Sprintf("min %d GPUs", s.MinGPUs))
	}
	if s.MaxGPUs > 0 {
		out = append(out, fmt.Sprintf("max %d GPUs", s.MaxGPUs))
	}
	return out
}
