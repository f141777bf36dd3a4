package calibrate

import (
	"context"
	"flag"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

var moeLeaveOneGPUOut = flag.Bool("moe-loo", false,
	"run TestMoELayerOverheadLeftOutByGPU: five validations of the MoE calibration file (about 12 minutes on 2 cores)")

// moeCalibrationFile is the measured MoE set, used only from ../shared (never committed).
const moeCalibrationFile = "../../../shared/data/silicon/measured_moe_calibration.csv"

// moeLayerOverheadCandidates are the MoELayerOverheadUs values (µs) the choice is made among.
var moeLayerOverheadCandidates = []float64{0, 15, 30, 45, 60}

// TestMoELayerOverheadLeftOutByGPU reproduces how timing.CalibratedEfficiency's
// MoELayerOverheadUs was chosen, with predict's code (Validate) on the MoE calibration file: for
// each GPU in turn, the candidate with the lowest Objective on the other GPUs' rows, scored on
// that GPU's rows. Every fold must choose the shipped value; the left-out figures (the README's
// table) are logged per GPU and pooled. Slow, so it runs only with -args -moe-loo:
//
//	go test ./sim/calibrate -run MoELayerOverheadLeftOutByGPU -v -timeout 60m -args -moe-loo
func TestMoELayerOverheadLeftOutByGPU(t *testing.T) {
	if !*moeLeaveOneGPUOut {
		t.Skip("five validations of the MoE file: run with -args -moe-loo")
	}
	if _, err := os.Stat(moeCalibrationFile); err != nil {
		t.Skipf("MoE calibration file not available at %s: %v", moeCalibrationFile, err)
	}
	rows, err := ReadCSVFile(moeCalibrationFile)
	if err != nil {
		t.Fatal(err)
	}
	results := make([][]RowResult, len(moeLayerOverheadCandidates))
	for i, us := range moeLayerOverheadCandidates {
		f := CalibratedFactors()
		f.Efficiency.MoELayerOverheadUs = us
		rep, err := Validate(context.Background(), rows, Options{Factors: &f})
		if err != nil {
			t.Fatal(err)
		}
		results[i] = rep.Rows
		t.Logf("%2.0f µs, all rows: %s", us, rep.Summary)
	}
	var systems []string
	for _, r := range results[0] {
		if !r.Skipped && !slices.Contains(systems, r.System) {
			systems = append(systems, r.System)
		}
	}
	slices.Sort(systems)
	on := func(rs []RowResult, keep func(RowResult) bool) []RowResult {
		var out []RowResult
		for _, r := range rs {
			if keep(r) {
				out = append(out, r)
			}
		}
		return out
	}
	shipped := timing.CalibratedEfficiency().MoELayerOverheadUs
	var pooled, pooledWithout []RowResult
	for _, g := range systems {
		best, bestObj := 0, math.Inf(1)
		for i := range moeLayerOverheadCandidates {
			if o := Objective(summarize(on(results[i], func(r RowResult) bool { return r.System != g }), 0)); o < bestObj {
				best, bestObj = i, o
			}
		}
		left := on(results[best], func(r RowResult) bool { return r.System == g })
		without := on(results[0], func(r RowResult) bool { return r.System == g })
		t.Logf("%s left out: chose %.0f µs; %s (without the overhead: %s)", g, moeLayerOverheadCandidates[best],
			summarize(left, 0), summarize(without, 0))
		if moeLayerOverheadCandidates[best] != shipped {
			t.Errorf("%s left out: the other GPUs' rows choose %.0f µs, the shipped MoELayerOverheadUs is %.0f µs",
				g, moeLayerOverheadCandidates[best], shipped)
		}
		pooled, pooledWithout = append(pooled, left...), append(pooledWithout, without...)
	}
	if len(systems) < 2 {
		t.Fatalf("simulated rows on %d GPUs: nothing to leave out", len(systems))
	}
	t.Logf("pooled left-out: %s (without the overhead: %s)", summarize(pooled, 0), summarize(pooledWithout, 0))
}
