package results

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// logSpan is the ratio max/min of an axis's positive values above which Plot draws it on a
// log scale (more than two decades).
const logSpan = 100

// Plot geometry. At plotDPI a point is 4/3 px, so a panel is 900×600 px and the legend strip
// above the panels 48 px high.
const (
	// plotColumns is the most panels Plot puts side by side.
	plotColumns = 2
	plotDPI     = 96
	// panelWidth and panelHeight are one panel's size; legendHeight the strip that holds the
	// legend above every panel, outside their data areas.
	panelWidth   = vg.Length(675)
	panelHeight  = vg.Length(450)
	legendHeight = vg.Length(36)
	// minTicks and maxTicks bound the labelled ticks of a linear axis (readableTicks).
	minTicks, maxTicks = 5, 10
)

var (
	frontColor = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	otherColor = color.RGBA{R: 150, G: 150, B: 150, A: 255}
)

// figure is Plot's drawing before it is rendered: the panels in reading order, the tiling they
// take, and the legend, drawn in its own strip above the panels so that it covers no data.
type figure struct {
	panels     []*plot.Plot
	cols, rows int
	legend     plot.Legend
	// ranks[k] numbers the front's dots of panels[k] (nil: the panel has no front point).
	ranks []*rankLabels
}

// size is the figure's width and height.
func (f *figure) size() (w, h vg.Length) {
	return panelWidth * vg.Length(f.cols), legendHeight + panelHeight*vg.Length(f.rows)
}

// layout splits the canvas c of the figure's size into the legend's strip (the top
// legendHeight) and one canvas per panel, in f.panels order.
func (f *figure) layout(c draw.Canvas) (legend draw.Canvas, panels []draw.Canvas) {
	legend = draw.Crop(c, vg.Points(8), 0, c.Size().Y-legendHeight, 0)
	below := draw.Crop(c, 0, 0, 0, -legendHeight)
	tiles := draw.Tiles{Rows: f.rows, Cols: f.cols, PadX: vg.Points(18), PadY: vg.Points(18), PadTop: vg.Points(6),
		PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12)}
	grid := make([][]*plot.Plot, f.rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, f.cols)
	}
	for k, p := range f.panels {
		grid[k/f.cols][k%f.cols] = p
	}
	aligned := plot.Align(grid, tiles, below)
	for k := range f.panels {
		panels = append(panels, aligned[k/f.cols][k%f.cols])
	}
	return legend, panels
}

// Plot draws the sweep's trade-offs as a PNG with one panel per pair of objectives of a (the
// first of the pair on the vertical axis; one objective alone is drawn against point_index).
// Grey dots are the candidates, red dots the Pareto front, each numbered by its rank (pareto.json's
// front rank, report.md's #); the legend sits in a strip above the panels. A panel is 900×600 px;
// up to two go side by side, more wrap into rows. An axis whose values are all positive and span
// more than two decades is logarithmic; every axis has at least five labelled ticks in fixed
// notation (readableTicks, logTicks).
func Plot(rows []Row, a *Analysis) ([]byte, error) {
	f, err := plotFigure(rows, a)
	if err != nil {
		return nil, err
	}
	w, h := f.size()
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	legend, panels := f.layout(dc)
	for k, p := range f.panels {
		p.Draw(panels[k])
	}
	f.legend.Draw(legend)
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// plotFigure builds Plot's panels and legend.
func plotFigure(rows []Row, a *Analysis) (*figure, error) {
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
	f := &figure{legend: plot.NewLegend()}
	f.legend.Top, f.legend.Left = true, true
	var legendDots [2]*plotter.Scatter
	for _, pr := range pairs {
		p := plot.New()
		p.X.Label.Text, p.Y.Label.Text = label(pr.x), label(pr.y)
		p.Add(plotter.NewGrid())
		var others, front plotter.XYs
		var ranks []string
		at := func(i int) plotter.XY {
			v := a.Values[i]
			x := float64(rows[i].PointIndex)
			if pr.x >= 0 {
				x = v[pr.x]
			}
			return plotter.XY{X: x, Y: v[pr.y]}
		}
		for _, i := range a.Candidates {
			if !onFront[i] {
				others = append(others, at(i))
			}
		}
		for n, i := range a.Front {
			front = append(front, at(i))
			ranks = append(ranks, strconv.Itoa(n+1))
		}
		all := append(append(plotter.XYs{}, others...), front...)
		for k, set := range []struct {
			xys    plotter.XYs
			c      color.Color
			radius vg.Length
		}{
			{others, otherColor, vg.Points(2.5)},
			{front, frontColor, vg.Points(4)},
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
			legendDots[k] = s
		}
		var numbers *rankLabels
		if len(front) > 0 {
			numbers = newRankLabels(front, ranks)
			p.Add(numbers)
		}
		f.ranks = append(f.ranks, numbers)
		setAxis(&p.X, all, func(q plotter.XY) float64 { return q.X })
		setAxis(&p.Y, all, func(q plotter.XY) float64 { return q.Y })
		f.panels = append(f.panels, p)
	}
	if s := legendDots[0]; s != nil {
		f.legend.Add("other candidates", s)
	}
	if s := legendDots[1]; s != nil {
		f.legend.Add("Pareto front, numbered by rank (report.md's #, pareto.json's rank)", s)
	}
	f.cols = min(len(f.panels), plotColumns)
	f.rows = (len(f.panels) + f.cols - 1) / f.cols
	return f, nil
}

// setAxis fits ax to the values of pts: a log scale with logTicks when every value is positive
// and they span more than logSpan, else a linear range widened by 5 % on each side with
// readableTicks.
func setAxis(ax *plot.Axis, pts plotter.XYs, get func(plotter.XY) float64) {
	ax.Tick.Marker = readableTicks{}
	if len(pts) == 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		lo, hi = math.Min(lo, get(q)), math.Max(hi, get(q))
	}
	if lo > 0 && hi/lo > logSpan {
		ax.Scale, ax.Tick.Marker = plot.LogScale{}, logTicks{}
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

// readableTicks marks a linear axis with minTicks to maxTicks labelled ticks at a round step (1,
// 2, 2.5 or 5 times a power of ten: the largest such step that gives at least minTicks), labels
// in fixed notation with as many decimals as the step needs ("12500", "0.25"), and an unlabelled
// tick halfway between labelled ones.
type readableTicks struct{}

// Ticks returns the ticks of [lo, hi]; none when the range is empty or not finite.
func (readableTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	step, decimals := tickStep(lo, hi)
	var ticks []plot.Tick
	first := math.Ceil(lo/step - 1e-9)
	for k := first; ; k++ {
		v := k * step // a whole multiple, so that 0 is exactly 0
		if v > hi+step*1e-9 {
			break
		}
		if v == 0 {
			v = 0 // +0: Ceil gives -0 for a lo in (-step, 0), and -0 prints "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		if mid := v + step/2; mid <= hi {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	if mid := first*step - step/2; mid >= lo {
		ticks = append(ticks, plot.Tick{Value: mid})
	}
	return ticks
}

// tickStep returns the largest round step (1, 2, 2.5 or 5 × 10^e) that puts at least minTicks
// multiples in [lo, hi], and the decimals its labels need.
func tickStep(lo, hi float64) (step float64, decimals int) {
	e := math.Floor(math.Log10((hi - lo) / minTicks))
	for ; ; e-- {
		for _, m := range []float64{5, 2.5, 2, 1} {
			step = m * math.Pow(10, e)
			if math.Floor(hi/step+1e-9)-math.Ceil(lo/step-1e-9)+1 >= minTicks {
				decimals = max(0, int(-e))
				if m == 2.5 {
					decimals = max(0, int(-e)+1)
				}
				return step, decimals
			}
		}
	}
}

// logTicks marks a log axis with labelled ticks at the powers of ten in its range, or at 1, 2
// and 5 times them when the powers alone are fewer than minTicks (or at every digit times them
// when those are still too few), labelled in fixed notation ("0.05", "20000"); the other digits'
// multiples are unlabelled ticks.
type logTicks struct{}

// Ticks returns the ticks of [lo, hi]; none unless 0 < lo < hi.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	for _, labelled := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		var ticks []plot.Tick
		n := 0
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for d := 1; d <= 9; d++ {
				v := float64(d) * math.Pow(10, e)
				if e < 0 {
					v = float64(d) / math.Pow(10, -e) // 0.3, not 0.30000000000000004
				}
				if v < lo*(1-1e-12) || v > hi*(1+1e-12) {
					continue
				}
				t := plot.Tick{Value: v}
				for _, l := range labelled {
					if d == l {
						t.Label = strconv.FormatFloat(v, 'f', -1, 64)
						n++
					}
				}
				ticks = append(ticks, t)
			}
		}
		if n >= minTicks || len(labelled) == 9 {
			return ticks
		}
	}
	return nil
}

// rankLabels numbers the front's dots with their ranks. Each number goes beside its dot, at the
// first of a few offsets (right above, right below, left above, left below, then further above
// and below) where it overlaps neither a number already placed nor another front dot and stays
// inside the data area, so that the ranks of nearby points stay legible; when no offset is free
// it goes right above.
type rankLabels struct {
	xys   plotter.XYs
	ranks []string
	style text.Style
}

// rankDotRadius is the radius of a front dot (Plot's red glyphs), which numbers keep clear of.
const rankDotRadius = vg.Length(4)

func newRankLabels(xys plotter.XYs, ranks []string) *rankLabels {
	sty := text.Style{Font: font.From(plot.DefaultFont, 12), Color: frontColor, Handler: plot.DefaultTextHandler}
	return &rankLabels{xys: xys, ranks: ranks, style: sty}
}

// Plot implements plot.Plotter.
func (l *rankLabels) Plot(c draw.Canvas, p *plot.Plot) {
	for i, r := range l.place(c, p) {
		box := l.style.Rectangle(l.ranks[i]) // relative to where the text is drawn
		c.FillText(l.style, r.Min.Sub(box.Min), l.ranks[i])
	}
}

// place returns each number's box on canvas c of plot p.
func (l *rankLabels) place(c draw.Canvas, p *plot.Plot) []vg.Rectangle {
	trX, trY := p.Transforms(&c)
	dots := make([]vg.Point, len(l.xys))
	for i, q := range l.xys {
		dots[i] = vg.Point{X: trX(q.X), Y: trY(q.Y)}
	}
	overlaps := func(a, b vg.Rectangle) bool {
		return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
	}
	var placed []vg.Rectangle
	for i, d := range dots {
		size := l.style.Rectangle(l.ranks[i]).Size()
		w, h, gap := size.X, size.Y, rankDotRadius+1
		offsets := []vg.Point{{X: gap, Y: gap / 2}, {X: gap, Y: -gap/2 - h}, {X: -gap - w, Y: gap / 2}, {X: -gap - w, Y: -gap/2 - h},
			{X: -w / 2, Y: gap}, {X: -w / 2, Y: -gap - h}, {X: gap, Y: gap/2 + h}, {X: gap, Y: -gap/2 - 2*h}}
		best := vg.Rectangle{}
		for k, o := range offsets {
			r := vg.Rectangle{Min: vg.Point{X: d.X + o.X, Y: d.Y + o.Y}}
			r.Max = vg.Point{X: r.Min.X + w, Y: r.Min.Y + h}
			if k == 0 {
				best = r
			}
			free := r.Min.X >= c.Min.X && r.Max.X <= c.Max.X && r.Min.Y >= c.Min.Y && r.Max.Y <= c.Max.Y
			for _, q := range placed {
				free = free && !overlaps(r, q)
			}
			for j, e := range dots {
				dot := vg.Rectangle{Min: vg.Point{X: e.X - rankDotRadius, Y: e.Y - rankDotRadius},
					Max: vg.Point{X: e.X + rankDotRadius, Y: e.Y + rankDotRadius}}
				free = free && (j == i || !overlaps(r, dot))
			}
			if free {
				best = r
				break
			}
		}
		placed = append(placed, best)
	}
	return placed
}
