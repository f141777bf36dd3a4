package sim

import (
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// FrontendOverheadMs is the mean front-end time per request (ms) that Run applies to cfg:
// engine.frontend.overhead_ms when set, else timing.CalibratedFrontendOverheadMs when the role a
// request enters first (aggregated, or prefill in disaggregated mode) uses `default` or
// `roofline` timing,
// else 0 (`fixed` and `polynomial` timing keep the reference's exact times).
func FrontendOverheadMs(cfg *config.Config) float64 {
	if f := cfg.Engine.Frontend; f != nil && f.OverheadMs != nil {
		return *f.OverheadMs
	}
	entry := cfg.Engine.Workers.Aggregated
	if cfg.Engine.Mode == config.ModeDisaggregated {
		entry = cfg.Engine.Workers.Prefill
	}
	if entry != nil && entry.Timing.HardwareAware() {
		return timing.CalibratedFrontendOverheadMs
	}
	return 0
}
