package results

import (
	"bytes"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot draws the sweep's trade-off as a PNG of two panels: output tokens/s per GPU against p99
// TTFT, and against p99 ITL. Grey dots are the candidates, red dots the Pareto front of a
// (whatever its objectives). Rows lacking a plotted metric are left out of that panel.
func Plot(rows []Row, a *Analysis) ([]byte, error) {
	onFront := make(map[int]bool, len(a.Front))
	for _, i := range a.Front {
		onFront[i] = true
	}
	panel := func(title, xLabel string, x func(*Row) *float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = xLabel
		p.Y.Label.Text = "output tokens/s per GPU"
		p.Add(plotter.NewGrid())
		var others, front plotter.XYs
		for _, i := range a.Candidates {
			r := &rows[i]
			xv, yv := x(r), r.OutputThroughputPerGPUTokS
			if xv == nil || yv == nil || !isFinite(*xv) || !isFinite(*yv) {
				continue
			}
			pt := plotter.XY{X: *xv, Y: *yv}
			if onFront[i] {
				front = append(front, pt)
			} else {
				others = append(others, pt)
			}
		}
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
		// The high-throughput, low-latency corner is the one a trade-off leaves empty.
		p.Legend.Top, p.Legend.Left = true, true
		pad(&p.X.Min, &p.X.Max)
		pad(&p.Y.Min, &p.Y.Max)
		return p, nil
	}
	ttft, err := panel("Throughput per GPU vs p99 TTFT", "p99 TTFT (ms)", func(r *Row) *float64 { return r.P99TTFTMs })
	if err != nil {
		return nil, err
	}
	itl, err := panel("Throughput per GPU vs p99 ITL", "p99 ITL (ms)", func(r *Row) *float64 { return r.P99ITLMs })
	if err != nil {
		return nil, err
	}
	img := vgimg.NewWith(vgimg.UseWH(vg.Points(900), vg.Points(380)), vgimg.UseDPI(96),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(18), PadTop: vg.Points(6), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	plots := [][]*plot.Plot{{ttft, itl}}
	canvases := plot.Align(plots, tiles, dc)
	ttft.Draw(canvases[0][0])
	itl.Draw(canvases[0][1])
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pad widens an axis range by 5 % on each side so that no dot sits on the frame.
func pad(lo, hi *float64) {
	d := (*hi - *lo) * 0.05
	if d == 0 {
		d = max(1, abs(*hi)*0.05)
	}
	*lo -= d
	*hi += d
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
