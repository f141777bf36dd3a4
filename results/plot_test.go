package results

import (
	"bytes"
	"github.com/servesweep/servesweep/sim/optimization"
	"image/png"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// An axis is logarithmic exactly when its values are positive and span more than two decades.
func TestSetAxisLogScale(t *testing.T) {
	for _, c := range []struct {
		vals []float64
		log  bool
	}{
		{[]float64{1, 50, 1000}, true},  // 1000× span
		{[]float64{10, 500}, false},     // 50×
		{[]float64{0, 10, 5000}, false}, // not all positive
		{[]float64{2, 200}, false},      // exactly 100×: not more than two decades
	} {
		var pts plotter.XYs
		for _, v := range c.vals {
			pts = append(pts, plotter.XY{X: v, Y: v})
		}
		p := plot.New()
		setAxis(&p.X, pts, func(q plotter.XY) float64 { return q.X })
		_, isLog := p.X.Scale.(plot.LogScale)
		if isLog != c.log {
			t.Errorf("%v: log scale %v, want %v", c.vals, isLog, c.log)
		}
	}
}

// One panel per pair of objectives, three per row: 3 objectives give 3 panels in one row, 4 give
// 6 panels in two rows, 1 gives a single panel against point_index (300 pt = 400 px a panel).
func TestPlotPanelsFollowObjectives(t *testing.T) {
	rows := []Row{row("a", 1, 100, 50, 10), row("b", 2, 300, 20, 5), row("c", 4, 900, 500, 40)}
	objs := optimization.DefaultObjectives()
	for _, c := range []struct {
		objs   []optimization.Objective
		wx, hy int
	}{
		{objs, 1200, 400},
		{append(objs[:3:3], optimization.Objective{Metric: "gpus", Direction: optimization.Minimize}), 1200, 800},
		{objs[:1], 400, 400},
	} {
		a, err := Analyze(rows, optimization.Settings{Objectives: c.objs})
		if err != nil {
			t.Fatal(err)
		}
		img, err := Plot(rows, a)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Width != c.wx || cfg.Height != c.hy {
			t.Errorf("%d objectives: %d×%d px, want %d×%d", len(c.objs), cfg.Width, cfg.Height, c.wx, c.hy)
		}
	}
}
