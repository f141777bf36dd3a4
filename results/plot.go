package results

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// logSpan is the ratio max/min of an axis's positive values above which Plot draws it on a
// log scale (more than two decades).
const logSpan = 100

// plotColumns is the most panels Plot puts side by side.
const plotColumns = 3

// Plot draws the sweep's trade-offs as a PNG with one panel per pair of objectives of a (the
// first of the pair on the vertical axis; one objective alone is drawn against point_index).
// Grey dots are the candidates, red dots the Pareto front; an axis whose values are all positive
// and span more than two decades is logarithmic. Up to three panels go side by side, more wrap
// into rows.
func Plot(rows []Row, a *Analysis) ([]byte, error) {
	onFront := make(map[int]bool, len(a.Front))
	for _, i := range a.Front {
		onFront[i] = true
	}
	objs := a.Settings.Objectives
	type pair struct{ y, x int } // objective indexes; x == -1: point_index
	var pairs []pair
	for i := range objs {
		for j := i + 1; j < len(objs); j++ {
			pairs = append(pairs, pair{i, j})
		}
	}
	if len(objs) == 1 {
		pairs = []pair{{0, -1}}
	}
	label := func(k int) string {
		if k < 0 {
			return "point_index"
		}
		return fmt.Sprintf("%s (%s)", objs[k].Metric, objs[k].Direction)
	}
	var panels []*plot.Plot
	for _, pr := range pairs {
		p := plot.New()
		p.X.Label.Text, p.Y.Label.Text = label(pr.x), label(pr.y)
		p.Add(plotter.NewGrid())
		var others, front plotter.XYs
		for _, i := range a.Candidates {
			v := a.Values[i]
			x := float64(rows[i].PointIndex)
			if pr.x >= 0 {
				x = v[pr.x]
			}
			pt := plotter.XY{X: x, Y: v[pr.y]}
			if onFront[i] {
				front = append(front, pt)
			} else {
				others = append(others, pt)
			}
		}
		all := append(append(plotter.XYs{}, others...), front...)
		for _, set := range []struct {
			xys    plotter.XYs
			c      color.Color
			radius vg.Length
			name   string
		}{
			{others, color.RGBA{R: 150, G: 150, B: 150, A: 255}, vg.Points(2.5), "other points"},
			{front, color.RGBA{R: 214, G: 39, B: 40, A: 255}, vg.Points(4), "Pareto front"},
		} {
			if len(set.xys) == 0 {
				continue
			}
			s, err := plotter.NewScatter(set.xys)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle.Color = set.c
			s.GlyphStyle.Radius = set.radius
			s.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(s)
			p.Legend.Add(set.name, s)
		}
		p.Legend.Top, p.Legend.Left = true, true
		setAxis(&p.X, all, func(q plotter.XY) float64 { return q.X })
		setAxis(&p.Y, all, func(q plotter.XY) float64 { return q.Y })
		panels = append(panels, p)
	}
	cols := min(len(panels), plotColumns)
	nrows := (len(panels) + cols - 1) / cols
	img := vgimg.NewWith(vgimg.UseWH(vg.Points(float64(300*cols)), vg.Points(float64(300*nrows))), vgimg.UseDPI(96),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: nrows, Cols: cols, PadX: vg.Points(18), PadY: vg.Points(18), PadTop: vg.Points(6),
		PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	grid := make([][]*plot.Plot, nrows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for k, p := range panels {
		grid[k/cols][k%cols] = p
	}
	canvases := plot.Align(grid, tiles, dc)
	for k, p := range panels {
		p.Draw(canvases[k/cols][k%cols])
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// setAxis fits ax to the values of pts: a log scale when every value is positive and they span
// more than logSpan, else a linear range widened by 5 % on each side.
func setAxis(ax *plot.Axis, pts plotter.XYs, get func(plotter.XY) float64) {
	if len(pts) == 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		lo, hi = math.Min(lo, get(q)), math.Max(hi, get(q))
	}
	if lo > 0 && hi/lo > logSpan {
		ax.Scale, ax.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		ax.Min, ax.Max = lo/1.2, hi*1.2
		ax.Label.Text += ", log scale"
		return
	}
	ax.Min, ax.Max = lo, hi
	pad(&ax.Min, &ax.Max)
}

// pad widens an axis range by 5 % on each side so that no dot sits on the frame.
func pad(lo, hi *float64) {
	d := (*hi - *lo) * 0.05
	if d == 0 {
		d = max(1, math.Abs(*hi)*0.05)
	}
	*lo -= d
	*hi += d
}
