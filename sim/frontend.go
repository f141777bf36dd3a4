package sim

import (
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// FrontendOverheadMs is the mean front-end time per request (ms) that Run applies to cfg:
// engine.frontend.overhead_ms when set, else, by the timing of the role a request enters first
// (aggregated, or prefill in disaggregated mode), timing.CalibratedOpLevelFrontendOverheadMs
// under `default` timing with forward_model op_level (the value fitted with op_level's own fixed
// costs), timing.CalibratedFrontendOverheadMs under the other `default` and `roofline` timings,
// and 0 under `fixed` and `polynomial` timing (they keep the reference's exact times).
func FrontendOverheadMs(cfg *config.Config) float64 {
	if f := cfg.Engine.Frontend; f != nil && f.OverheadMs != nil {
		return *f.OverheadMs
	}
	entry := cfg.Engine.Workers.Aggregated
	if cfg.Engine.Mode == config.ModeDisaggregated {
		entry = cfg.Engine.Workers.Prefill
	}
	switch {
	case entry == nil || !entry.Timing.HardwareAware():
		return 0
	case entry.Timing.Type == config.TimingDefault && entry.Timing.ForwardModel == config.ForwardOpLevel:
		return timing.CalibratedOpLevelFrontendOverheadMs
	}
	return timing.CalibratedFrontendOverheadMs
}
