package planner

import (
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// TestForecasters checks each forecaster (planner.load_predictor) by hand.
func TestForecasters(t *testing.T) {
	feed := func(p forecaster, ys ...float64) float64 {
		for _, y := range ys {
			p.add(y)
		}
		return p.next()
	}
	set := (&config.Planner{Policy: "enabled"}).Settings()
	set.Predictor = config.PredictorConstant
	if got := feed(newForecaster(set), 3, 7); got != 7 {
		t.Errorf("constant: %v, want 7", got)
	}
	set.Predictor = config.PredictorARIMA
	// Differences 10, 5: φ = 5 × 10 / 10² = 0.5; 25 + 0.5 × 5 = 27.5.
	if got := feed(newForecaster(set), 10, 20, 25); math.Abs(got-27.5) > 1e-12 {
		t.Errorf("arima: %v, want 27.5", got)
	}
	// Two points: the last.
	if got := feed(newForecaster(set), 10, 20); got != 20 {
		t.Errorf("arima with 2 points: %v, want 20", got)
	}
	set.Predictor = config.PredictorKalman
	// Fewer than kalman_min_points (5): the last observation.
	if got := feed(newForecaster(set), 1, 2, 3); got != 3 {
		t.Errorf("kalman before min points: %v, want 3", got)
	}
	// A constant series stays constant; a straight line is followed to its next point.
	if got := feed(newForecaster(set), 5, 5, 5, 5, 5, 5); math.Abs(got-5) > 1e-9 {
		t.Errorf("kalman constant: %v, want 5", got)
	}
	var line []float64
	for i := 1; i <= 40; i++ {
		line = append(line, float64(10*i))
	}
	if got := feed(newForecaster(set), line...); math.Abs(got-410) > 1 {
		t.Errorf("kalman line: %v, want about 410", got)
	}
	set.Predictor, set.Log1p = config.PredictorConstant, true
	if got := feed(newForecaster(set), 4, 9); math.Abs(got-9) > 1e-9 {
		t.Errorf("log1p constant: %v, want 9", got)
	}
}
