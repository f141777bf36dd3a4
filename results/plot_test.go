package results

import (
	"bytes"
	"github.com/servesweep/servesweep/sim/optimization"
	"image/png"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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

// One panel of 900×600 px per pair of objectives, two per row, under a 48 px legend strip: 2
// objectives give 1 panel, 3 give 3 panels in two rows, 4 give 6 panels in three rows, 1 gives a
// single panel against point_index.
func TestPlotPanelsFollowObjectives(t *testing.T) {
	rows := []Row{row("a", 1, 100, 50, 10), row("b", 2, 300, 20, 5), row("c", 4, 900, 500, 40)}
	objs := optimization.DefaultObjectives()
	for _, c := range []struct {
		objs   []optimization.Objective
		wx, hy int
	}{
		{objs[:2], 900, 648},
		{objs, 1800, 1248},
		{append(objs[:3:3], optimization.Objective{Metric: "gpus", Direction: optimization.Minimize}), 1800, 1848},
		{objs[:1], 900, 648},
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

// The legend is drawn in its own strip: its extent overlaps no panel's data area. Every panel
// numbers its front dots 1..n in front order, at the front's values, and the numbers of points
// that nearly coincide do not overlap one another.
func TestPlotLegendOutsideDataAndRanksNumbered(t *testing.T) {
	rows := []Row{
		row("a", 1, 100, 50, 10), row("b", 1, 300, 20, 5), row("c", 1, 900, 500, 40),
		row("d", 1, 301, 20.5, 4.9), row("e", 1, 302, 21, 4.8), // b, d, e nearly coincide
		row("f", 1, 50, 600, 50), // dominated, as a is (by b)
	}
	a, err := Analyze(rows, optimization.Settings{Objectives: optimization.DefaultObjectives()})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) != 4 {
		t.Fatalf("front %v, want 4 points (b, c, d, e)", a.Front)
	}
	f, err := plotFigure(rows, a)
	if err != nil {
		t.Fatal(err)
	}
	w, h := f.size()
	dc := draw.New(vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI)))
	legend, panels := f.layout(dc)
	box := f.legend.Rectangle(legend)
	if box.Size().X <= 0 || box.Size().Y <= 0 {
		t.Fatalf("legend extent %v: no entries", box)
	}
	overlaps := func(a, b vg.Rectangle) bool {
		return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
	}
	for k, p := range f.panels {
		data := p.DataCanvas(panels[k]).Rectangle
		if overlaps(box, data) {
			t.Errorf("panel %d: legend %v overlaps the data area %v", k, box, data)
		}
		l := f.ranks[k]
		if want := []string{"1", "2", "3", "4"}; !slices.Equal(l.ranks, want) {
			t.Errorf("panel %d: numbers %v, want %v", k, l.ranks, want)
		}
		y := []int{0, 0, 1}[k] // the panels plot objectives 0:1, 0:2, 1:2
		for n, i := range a.Front {
			if l.xys[n].Y != a.Values[i][y] {
				t.Errorf("panel %d: number %d at y %g, want front point %s's %g", k, n+1, l.xys[n].Y, rows[i].PointID, a.Values[i][y])
			}
		}
		placed := l.place(p.DataCanvas(panels[k]), p)
		for i := range placed {
			for j := range i {
				if overlaps(placed[i], placed[j]) {
					t.Errorf("panel %d: numbers %s %v and %s %v overlap", k, l.ranks[i], placed[i], l.ranks[j], placed[j])
				}
			}
		}
	}
}

// labels returns the labelled ticks' labels.
func labels(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		if !t.IsMinor() {
			out = append(out, t.Label)
		}
	}
	return out
}

// A linear axis has at least five labelled ticks at a round step, in fixed notation with the
// step's decimals: the largest step of 1, 2, 2.5 or 5 × 10^e that gives five (hand-computed:
// 0.213–2.1 spans 1.887, a fifth of it 0.38: steps of 0.5 give 4 ticks, of 0.25 give 8;
// 0.000212–0.000219 takes steps of 1e-6, as 2e-6 give 4).
func TestReadableTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0.213, 2.1, "0.25 0.50 0.75 1.00 1.25 1.50 1.75 2.00"},
		{100, 16500, "2500 5000 7500 10000 12500 15000"},
		{0, 1, "0.00 0.25 0.50 0.75 1.00"},
		{-3, 3, "-3 -2 -1 0 1 2 3"},
		{14000, 14100, "14000 14025 14050 14075 14100"},
		{1.2e6, 1.9e6, "1200000 1300000 1400000 1500000 1600000 1700000 1800000 1900000"},
		{0.000212, 0.000219, "0.000212 0.000213 0.000214 0.000215 0.000216 0.000217 0.000218 0.000219"},
	} {
		got := strings.Join(labels(readableTicks{}.Ticks(c.lo, c.hi)), " ")
		if got != c.want {
			t.Errorf("[%g, %g]: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
		n := len(labels(readableTicks{}.Ticks(c.lo, c.hi)))
		if n < minTicks || n > maxTicks {
			t.Errorf("[%g, %g]: %d labelled ticks, want %d to %d", c.lo, c.hi, n, minTicks, maxTicks)
		}
	}
	if ticks := (readableTicks{}).Ticks(1, 1); ticks != nil {
		t.Errorf("an empty range: ticks %v, want none", ticks)
	}
}

// A log axis labels powers of ten when they are five or more, else 1, 2 and 5 times them; labels
// are fixed notation and equal their values.
func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{1, 1000, "1 2 5 10 20 50 100 200 500 1000"},
		{0.05, 30, "0.05 0.1 0.2 0.5 1 2 5 10 20"},
		{1e3, 1e9, "1000 10000 100000 1000000 10000000 100000000 1000000000"},
	} {
		ticks := logTicks{}.Ticks(c.lo, c.hi)
		if got := strings.Join(labels(ticks), " "); got != c.want {
			t.Errorf("[%g, %g]: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
		for _, tk := range ticks {
			if tk.IsMinor() {
				continue
			}
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || v != tk.Value || strings.ContainsAny(tk.Label, "eE") {
				t.Errorf("label %q of tick %v: not the value in fixed notation", tk.Label, tk.Value)
			}
		}
	}
}
