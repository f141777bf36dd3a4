package results

import "github.com/servesweep/servesweep/sim/optimization"

// DefaultManifest is the manifest a re-analysis assumes for results without a sweep.json:
// Defaulted, target pareto, the default objectives (optimization.DefaultObjectives), no SLA
// filter, no GPU bounds and a max rejected ratio of 0.
func DefaultManifest() *Manifest {
	return &Manifest{Defaulted: true, Settings: optimization.Settings{Target: optimization.TargetPareto,
		Objectives: optimization.DefaultObjectives()}}
}

// Overrides are the analysis settings a re-analysis of a sweep's results replaces (servesweep
// report's flags); a nil field keeps the sweep's setting.
type Overrides struct {
	// Objectives replace the Pareto objectives when non-nil.
	Objectives []optimization.Objective
	// Target, StrictSLA, MinGPUs, MaxGPUs and MaxRejectedRatio replace their settings when set.
	Target           *string
	StrictSLA        *bool
	MinGPUs, MaxGPUs *int
	MaxRejectedRatio *float64
	// MaxCostUSDPerHour, MaxUSDPerMillionOutputTokens and MinGoodputRPS replace their settings
	// when set (0: no bound).
	MaxCostUSDPerHour, MaxUSDPerMillionOutputTokens, MinGoodputRPS *float64
}

// Apply replaces the settings of s that o sets. It checks nothing: CheckObjectives,
// optimization.CheckTarget and Analyze judge the result.
func (o Overrides) Apply(s *optimization.Settings) {
	if o.Objectives != nil {
		s.Objectives = o.Objectives
	}
	if o.Target != nil {
		s.Target = *o.Target
	}
	if o.StrictSLA != nil {
		s.StrictSLA = *o.StrictSLA
	}
	if o.MinGPUs != nil {
		s.MinGPUs = *o.MinGPUs
	}
	if o.MaxGPUs != nil {
		s.MaxGPUs = *o.MaxGPUs
	}
	if o.MaxRejectedRatio != nil {
		s.MaxRejectedRatio = *o.MaxRejectedRatio
	}
	if o.MaxCostUSDPerHour != nil {
		s.MaxCostUSDPerHour = *o.MaxCostUSDPerHour
	}
	if o.MaxUSDPerMillionOutputTokens != nil {
		s.MaxUSDPerMillionOutputTokens = *o.MaxUSDPerMillionOutputTokens
	}
	if o.MinGoodputRPS != nil {
		s.MinGoodputRPS = *o.MinGoodputRPS
	}
}
