package calibrate

import (
	"context"
	"os"
	"testing"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
)

// BenchmarkValidateMoERow simulates, per backend, the row of the MoE calibration file whose
// benchmark has the most tokens (requests × (ISL + OSL)), as validate does (PlanRow, then
// sim.Run with the calibrated factors): the rows that bound validate's time. It reports simulated
// requests and output tokens per host second. It skips when the file is absent.
//
//	go test ./sim/calibrate -run XXX -bench ValidateMoERow -benchmem
func BenchmarkValidateMoERow(b *testing.B) {
	if _, err := os.Stat(moeCalibrationFile); err != nil {
		b.Skipf("MoE calibration file not available at %s: %v", moeCalibrationFile, err)
	}
	rows, err := ReadCSVFile(moeCalibrationFile)
	if err != nil {
		b.Fatal(err)
	}
	type planned struct {
		plan   *Plan
		tokens int
	}
	heaviest := map[string]planned{}
	for _, r := range rows {
		p, err := PlanRow(r, Options{})
		if err != nil {
			continue
		}
		if n := p.Config.Traffic.Stop.Requests * (r.ISL + r.OSL); n > heaviest[r.Backend].tokens {
			heaviest[r.Backend] = planned{p, n}
		}
	}
	f := CalibratedFactors()
	for _, backend := range []string{config.BackendTRTLLM, config.BackendSGLang, config.BackendVLLM} {
		p := heaviest[backend].plan
		if p == nil {
			continue
		}
		b.Run(backend, func(b *testing.B) {
			b.ReportAllocs()
			var reqs, out int64
			for b.Loop() {
				res, err := sim.Run(context.Background(), p.Config, sim.Options{Efficiency: &f.Efficiency})
				if err != nil {
					b.Fatal(err)
				}
				reqs += res.Summary.NumRequests
				out += res.Summary.TotalOutputTokens
				res.Release()
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(reqs)/sec, "requests/s")
			b.ReportMetric(float64(out)/sec, "output_tokens/s")
		})
	}
}
