package results

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
	"gonum.org/v1/plot"
)

// HTMLFile is the report's page: report.md's facts, an interactive plot of the candidates and
// the front's table, in one self-contained file (ReportHTML).
const HTMLFile = "report.html"

// MaxHTMLPoints bounds the points report.html plots, so that a merge of 100,000 rows writes a
// page of a few MB: the front first, then an even sample of the other candidates.
const MaxHTMLPoints = 10_000

// maxHTMLTableRows bounds the rows of the page's front table, and maxRankLabels the front
// points the plot numbers (the first ones by rank); pareto.json lists the whole front.
const (
	maxHTMLTableRows = 200
	maxRankLabels    = 100
)

// The plot's geometry in SVG user units (CSS px): the viewBox and the data area inside it. The
// page's script reads them from the chart's data-geometry attribute; reporthtml.tmpl draws the
// frame and the tick lines at the same numbers.
const (
	svgWidth, svgHeight = 960, 600
	svgLeft, svgTop     = 90.0, 20.0
	svgRight, svgBottom = 930.0, 540.0
	// rankCharWidth and rankHeight size a rank number's box (12 px text); rankGap is the space
	// between a front dot's centre and its number.
	rankCharWidth, rankHeight, rankGap = 7.0, 12.0, 7.0
	frontDotRadius, otherDotRadius     = 5.0, 3.0
)

//go:embed reporthtml.tmpl
var reportHTMLTemplate string

var reportHTMLPage = template.Must(template.New(HTMLFile).Parse(reportHTMLTemplate))

// htmlAxis is one objective a select offers, or point_index when there is one objective.
type htmlAxis struct {
	// Index is its place in a point's data-v values; Label its name and direction.
	Index int
	Label string
}

// htmlFilter is one facet of the filters (mode, GPU, precision, router): its values with how
// many embedded points take each.
type htmlFilter struct {
	Dim, Label string
	Values     []htmlFilterValue
}

type htmlFilterValue struct {
	Value string
	Count int
}

// htmlPoint is one plotted point: where the default axes put it, its facets, and its tooltip.
type htmlPoint struct {
	X, Y, R                      string
	Values                       string
	Front                        bool
	Rank                         int
	PointID                      string
	Mode, GPU, Precision, Router string
	Title                        string
	vx, vy                       float64
}

// htmlTick is a labelled tick of an axis at Pos (px).
type htmlTick struct {
	Pos   string
	Label string
}

// htmlRankLabel is a front point's number on the plot, linked to its recommendation.
type htmlRankLabel struct {
	Point          int
	Rank           int
	PointID        string
	X, Y           string
	Recommendation string
}

// htmlTableRow is a row of the front's or the ranking's table.
type htmlTableRow struct {
	Rank                                int
	PointID, Ties                       string
	Hardware, Mode, Shape, Router, Load string
	GPUs                                int64
	Values                              []string
	Recommendation                      string
}

// htmlPage is what reporthtml.tmpl renders.
type htmlPage struct {
	Heading, Settings, Partial, Counts, SLA, Prices, Constraints, Objectives string
	ExamplePrices                                                            bool
	Axes                                                                     []htmlAxis
	DefaultX, DefaultY                                                       int
	Filters                                                                  []htmlFilter
	Points                                                                   []htmlPoint
	Embedded                                                                 string
	XLabel, YLabel                                                           string
	XTicks, YTicks                                                           []htmlTick
	PairFront                                                                string
	RankLabels                                                               []htmlRankLabel
	FrontTitle, FrontNote                                                    string
	// AnswerNotes are warnings about the answer shown under the front's title: the points
	// that could change it without a result (UnfinishedText), and the answer's SLA attainment
	// when nothing enforced the SLA (AttainmentText).
	AnswerNotes  []string
	Front        []htmlTableRow
	RankingTitle string
	Ranking      []htmlTableRow
	// Capacity are report.md's paragraphs on the capacity search (capacityParagraphs), as text,
	// and its note on latencies that rank the points (LatencyRankingNote).
	Capacity []string
	// NearTies are Unsettled.Sentences, one paragraph each, after the tables.
	NearTies []string
	Metrics  []string
	Geometry string
	// Directions are the axes' directions in Axes order: -1 maximize, 1 minimize (and
	// point_index).
	Directions string
}

// HTMLPoints returns the rows report.html plots, in its order: every front entry in front order,
// then the other candidates in input order, evenly sampled (every k-th, k = n / room) when they
// would make more than MaxHTMLPoints; at most MaxHTMLPoints rows in all.
func HTMLPoints(a *Analysis) []int {
	out := slices.Clone(a.Front[:min(len(a.Front), MaxHTMLPoints)])
	onFront := make(map[int]bool, len(a.Front))
	for _, i := range a.Front {
		onFront[i] = true
	}
	others := make([]int, 0, len(a.Candidates)-len(a.Front))
	for _, i := range a.Candidates {
		if !onFront[i] {
			others = append(others, i)
		}
	}
	room := MaxHTMLPoints - len(out)
	if len(others) <= room {
		return append(out, others...)
	}
	for k := range room {
		out = append(out, others[k*len(others)/room])
	}
	return out
}

// ReportHTML returns the bytes of report.html for rows, their analysis a, the sweep's manifest m
// (nil when there is none) and the rows of the recommendations in order (Written.RecommendedRows):
// report.md's facts (grid counts, SLA, prices, constraints), a plot of HTMLPoints on two
// objectives picked with two selects (default: the first objective up, the second across, as
// pareto.png's first panel), each point's tooltip (deployment, load, SLA attainment, cost,
// objectives), the sweep's front numbered by rank and linked to its recommendations, the front of
// the two objectives shown as a line, filters by mode, GPU, precision and router, and the front's
// table. The plot is rendered into the page for the default axes, so the page reads without its
// script; the script redraws it for other axes or filters. The same input gives the same bytes.
func ReportHTML(rows []Row, a *Analysis, m *Manifest, recommended []int) ([]byte, error) {
	s := a.Settings
	labels := LabelsFor(rows)
	recFor := map[int]string{}
	for n, i := range recommended {
		recFor[i] = filepath.ToSlash(filepath.Join(RecommendationsDir, fmt.Sprintf("%04d.yaml", n+1)))
	}
	rank := make(map[int]int, len(a.Front))
	for n, i := range a.Front {
		rank[i] = n + 1
	}
	tiedWith := map[int]int{}
	for n, i := range a.Front {
		for _, j := range a.Ties[i] {
			tiedWith[j] = n + 1
		}
	}
	p := &htmlPage{Heading: "servesweep sweep report", ExamplePrices: m != nil && m.ExamplePrices}
	p.Settings, p.Partial, p.Counts = htmlFacts(rows, a, m)
	p.SLA, p.Prices = SLAText(rows, m), PricesText(rows, m)
	for _, para := range capacityParagraphs(rows, m) {
		p.Capacity = append(p.Capacity, strings.ReplaceAll(para, "`", ""))
	}
	if note := LatencyRankingNote(a, m); note != "" {
		p.Capacity = append(p.Capacity, note)
	}
	p.Constraints = constraintsText(s)
	var objs []string
	for k, o := range s.Objectives {
		objs = append(objs, string(o.Direction)+" "+o.Metric)
		p.Axes = append(p.Axes, htmlAxis{Index: k, Label: o.Metric + " (" + string(o.Direction) + ")"})
		p.Metrics = append(p.Metrics, o.Metric)
	}
	p.Objectives = "Objectives: " + strings.Join(objs, ", ") + "."
	nObj := len(s.Objectives)
	p.DefaultY, p.DefaultX = 0, 1
	if nObj == 1 {
		p.Axes = append(p.Axes, htmlAxis{Index: 1, Label: "point_index"})
	}
	var dirs []string
	for k := range p.Axes {
		dirs = append(dirs, strconv.Itoa(int(axisDirection(s, k))))
	}
	p.Directions = strings.Join(dirs, " ")

	embedded := HTMLPoints(a)
	p.Embedded = fmt.Sprintf("%d of %d candidates plotted", len(embedded), len(a.Candidates))
	if len(embedded) < len(a.Candidates) {
		front := min(len(a.Front), MaxHTMLPoints)
		p.Embedded += fmt.Sprintf(" (at most %d: the front's %d first, then %d of the other %d, evenly spaced in point order)",
			MaxHTMLPoints, front, len(embedded)-front, len(a.Candidates)-len(a.Front))
	}
	facets := map[string]map[string]int{"mode": {}, "gpu": {}, "precision": {}, "router": {}}
	for _, i := range embedded {
		r := &rows[i]
		pt := htmlPoint{Front: rank[i] > 0, Rank: rank[i], PointID: r.PointID, Mode: r.Mode, GPU: gpuLabel(r),
			Precision: "unknown", Router: r.RouterPolicy}
		if r.WeightPrecision != nil {
			pt.Precision = *r.WeightPrecision
		}
		vals := make([]string, 0, nObj+1)
		for k := range nObj {
			vals = append(vals, strconv.FormatFloat(a.Values[i][k], 'g', -1, 64))
		}
		vals = append(vals, strconv.FormatInt(r.PointIndex, 10))
		pt.Values = strings.Join(vals, " ")
		v := func(k int) float64 {
			if k >= nObj {
				return float64(r.PointIndex)
			}
			return a.Values[i][k]
		}
		pt.vx, pt.vy = v(p.DefaultX), v(p.DefaultY)
		pt.Title = pointTitle(r, labels, s, a.Values[i], rank[i], tiedWith[i])
		facets["mode"][pt.Mode]++
		facets["gpu"][pt.GPU]++
		facets["precision"][pt.Precision]++
		facets["router"][pt.Router]++
		p.Points = append(p.Points, pt)
	}
	for _, f := range []struct{ dim, label string }{{"mode", "Mode"}, {"gpu", "GPU"}, {"precision", "Weight precision"}, {"router", "Router"}} {
		hf := htmlFilter{Dim: f.dim, Label: f.label}
		for _, v := range slicesSortedKeys(facets[f.dim]) {
			hf.Values = append(hf.Values, htmlFilterValue{Value: v, Count: facets[f.dim][v]})
		}
		p.Filters = append(p.Filters, hf)
	}
	p.XLabel, p.YLabel = p.Axes[p.DefaultX].Label, p.Axes[p.DefaultY].Label
	layoutSVG(p, s, embedded, recFor)

	htmlTables(p, rows, a, labels, recFor)
	if note := UnfinishedText(rows, a, labels, false); note != "" {
		p.AnswerNotes = append(p.AnswerNotes, "Partial answer: "+note)
	}
	for _, note := range []string{AttainmentText(rows, a, m, false), ThinText(rows, a, false), UnjudgedText(rows, a, false), MultiNodeText(rows, a, false)} {
		if note != "" {
			p.AnswerNotes = append(p.AnswerNotes, note)
		}
	}
	u := UnsettledOf(rows, a, m)
	p.NearTies = u.Sentences(rows, a, labels, false)
	if line := SeedCheckText(rows, m, a, labels, false); line != "" {
		p.NearTies = append(p.NearTies, line)
	}
	p.Geometry = fmt.Sprintf("%d %d %g %g %g %g %g %g %g %g %d %d", svgWidth, svgHeight, svgLeft, svgTop, svgRight, svgBottom,
		rankCharWidth, rankHeight, rankGap, frontDotRadius, maxRankLabels, logSpan)
	var b bytes.Buffer
	if err := reportHTMLPage.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// htmlTables fills p's front table (and the ranking's, for a scalar target): rank, deployment,
// load, GPUs, objective values and recommendation link of at most maxHTMLTableRows rows each.
func htmlTables(p *htmlPage, rows []Row, a *Analysis, labels Labels, recFor map[int]string) {
	s := a.Settings
	table := func(list []int) []htmlTableRow {
		var out []htmlTableRow
		for n, i := range list[:min(len(list), maxHTMLTableRows)] {
			r := &rows[i]
			tr := htmlTableRow{Rank: n + 1, PointID: r.PointID, Hardware: labels.Hardware(r), Mode: r.Mode, Shape: labels.Shape(r),
				Router: r.RouterPolicy, Load: labels.Load(r), GPUs: r.GPUs, Recommendation: recFor[i]}
			if t := len(a.Ties[i]); t > 0 {
				tr.Ties = fmt.Sprintf("+%d tied", t)
			}
			for k := range s.Objectives {
				tr.Values = append(tr.Values, fmtNum(a.Values[i][k]))
			}
			out = append(out, tr)
		}
		return out
	}
	points := "points"
	if len(a.Front) == 1 {
		points = "point"
	}
	p.FrontTitle = fmt.Sprintf("Pareto front (%d %s)", len(a.Front), points)
	if len(a.Front) > maxHTMLTableRows {
		p.FrontNote = fmt.Sprintf("The first %d by rank; %s lists them all.", maxHTMLTableRows, ParetoFile)
	}
	p.Front = table(a.Front)
	if a.Ranking != nil {
		n := min(len(a.Ranking), maxScalarRecommends)
		p.RankingTitle = fmt.Sprintf("Ranking by target %s (best %d)", s.Target, n)
		p.Ranking = table(a.Ranking[:n])
	}
}

// slicesSortedKeys returns m's keys in order.
func slicesSortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// gpuLabel is a row's GPU: its hardware, or "P a + D b" when a disaggregated role runs on its
// own GPU.
func gpuLabel(r *Row) string {
	if p, d := r.PrefillHardware, r.DecodeHardware; p != nil && d != nil && (*p != r.Hardware || *d != r.Hardware) {
		return "P " + *p + " + D " + *d
	}
	return r.Hardware
}

// pointTitle is a plotted point's tooltip: its ID and place on the front, deployment, load, SLA
// attainment, cost and objective values, one fact a line.
func pointTitle(r *Row, labels Labels, s optimization.Settings, values []float64, rank, tiedWith int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "point %s", r.PointID)
	switch {
	case rank > 0:
		fmt.Fprintf(&b, ", #%d on the Pareto front", rank)
	case tiedWith > 0:
		fmt.Fprintf(&b, ", tied with #%d on the Pareto front", tiedWith)
	}
	fmt.Fprintf(&b, "\ndeployment: %s, %s %s, router %s, %s", labels.Hardware(r), r.Mode, labels.Shape(r), r.RouterPolicy, Plural(int(r.GPUs), "GPU"))
	fmt.Fprintf(&b, "\nload: %s", labels.Load(r))
	if r.SLAAttainment != nil {
		fmt.Fprintf(&b, "\nSLA attainment: %s %% of offered requests", strconv.FormatFloat(*r.SLAAttainment*100, 'f', 2, 64))
	} else {
		b.WriteString("\nSLA attainment: n/a (no per-request bound)")
	}
	switch {
	case r.CostUSDPerHour != nil && r.USDPerMillionOutputTokens != nil:
		fmt.Fprintf(&b, "\ncost: %s USD/h, %s USD per million output tokens", usd(*r.CostUSDPerHour), FixedNum(*r.USDPerMillionOutputTokens))
	case r.CostUSDPerHour != nil:
		fmt.Fprintf(&b, "\ncost: %s USD/h", usd(*r.CostUSDPerHour))
	default:
		b.WriteString("\ncost: n/a (no optimization.cost prices)")
	}
	for k, o := range s.Objectives {
		fmt.Fprintf(&b, "\n%s: %s", o.Metric, fmtNum(values[k]))
	}
	return b.String()
}

// htmlFacts returns the page's settings line, its partial-results warning ("" when complete) and
// its grid counts: grid points, valid and selected (with the filtered by reason), rows by status
// (the simulated points), candidates (feasible after the filters) with the excluded by reason,
// and the selected points without a result.
func htmlFacts(rows []Row, a *Analysis, m *Manifest) (settings, partial, counts string) {
	s := a.Settings
	var c []string
	switch {
	case m != nil && m.Defaulted:
		settings = fmt.Sprintf("Target %s · settings: the defaults and the flags given (no %s beside the results).", s.Target, ManifestFile)
	case m != nil:
		settings = fmt.Sprintf("Spec %s · optimizer %s · target %s.", m.Spec, m.Algorithm, s.Target)
		g := fmt.Sprintf("Grid: %d points before filtering, %d valid", m.Counts.GridPoints, m.Counts.ValidPoints)
		if len(m.Counts.Filtered) > 0 {
			g += " (filtered: " + CountList(m.Counts.Filtered) + ")"
		}
		c = append(c, g+fmt.Sprintf(", %d selected.", m.Counts.SelectedPoints))
	default:
		settings = fmt.Sprintf("Target %s.", s.Target)
	}
	n := CountStatuses(rows)
	c = append(c, fmt.Sprintf("Simulated: %d points (%d ok, %d degraded, %d infeasible, %d failed, %d timed out).",
		len(rows), n.OK, n.Degraded, n.Infeasible, n.Failed, n.TimedOut))
	f := fmt.Sprintf("Feasible: %d candidates after the filters", len(a.Candidates))
	if len(a.Excluded) > 0 {
		excluded := 0
		for _, k := range a.Excluded {
			excluded += k
		}
		f += fmt.Sprintf("; excluded: %d (%s)", excluded, CountList(a.Excluded))
	}
	c = append(c, f+".")
	if m != nil && !m.Defaulted && m.Counts.SelectedPoints > len(rows) {
		c = append(c, fmt.Sprintf("Unfinished: %d selected points have no result.", m.Counts.SelectedPoints-len(rows)))
	}
	if m.Incomplete() {
		why := "the sweep was interrupted"
		if m.Merge != nil {
			why = "the merged parts lack points"
		}
		partial = fmt.Sprintf("Partial results: %s; the front is of the %d points with results only.", why, len(rows))
	}
	return settings, partial, strings.Join(c, " ")
}

// constraintsText lists the candidate filters of s beyond status, as report.md does (constraints);
// "" when none.
func constraintsText(s optimization.Settings) string {
	cons := constraints(s)
	if len(cons) == 0 {
		return ""
	}
	return "Constraints: " + strings.Join(cons, ", ") + "."
}

// svgScale maps values of one axis to px: linear over the values' range widened by 5 % on each
// side, or logarithmic over [min/1.2, max×1.2] when every value is positive and they span more
// than logSpan (pareto.png's rule, setAxis).
type svgScale struct {
	lo, hi   float64
	log      bool
	from, to float64 // px of lo and hi
}

func fitScale(vals []float64, from, to float64) svgScale {
	sc := svgScale{lo: math.Inf(1), hi: math.Inf(-1), from: from, to: to}
	for _, v := range vals {
		sc.lo, sc.hi = math.Min(sc.lo, v), math.Max(sc.hi, v)
	}
	if len(vals) == 0 {
		sc.lo, sc.hi = 0, 1
		return sc
	}
	if sc.lo > 0 && sc.hi/sc.lo > logSpan {
		sc.log, sc.lo, sc.hi = true, sc.lo/1.2, sc.hi*1.2
		return sc
	}
	pad(&sc.lo, &sc.hi)
	return sc
}

// px maps v into [from, to].
func (sc svgScale) px(v float64) float64 {
	t := (v - sc.lo) / (sc.hi - sc.lo)
	if sc.log {
		t = (math.Log(v) - math.Log(sc.lo)) / (math.Log(sc.hi) - math.Log(sc.lo))
	}
	return sc.from + t*(sc.to-sc.from)
}

// ticks are the axis's labelled ticks (readableTicks or logTicks, pareto.png's).
func (sc svgScale) ticks() []htmlTick {
	var tk []htmlTick
	var all []plot.Tick
	if sc.log {
		all = logTicks{}.Ticks(sc.lo, sc.hi)
	} else {
		all = readableTicks{}.Ticks(sc.lo, sc.hi)
	}
	for _, t := range all {
		if !t.IsMinor() {
			tk = append(tk, htmlTick{Pos: px1(sc.px(t.Value)), Label: t.Label})
		}
	}
	return tk
}

// px1 formats a coordinate with one decimal.
func px1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// layoutSVG places p's points, ticks, rank numbers and the pair's front for the default axes,
// as the page's script does for any axes.
func layoutSVG(p *htmlPage, s optimization.Settings, embedded []int, recFor map[int]string) {
	xs := make([]float64, len(p.Points))
	ys := make([]float64, len(p.Points))
	for k := range p.Points {
		xs[k], ys[k] = p.Points[k].vx, p.Points[k].vy
	}
	sx, sy := fitScale(xs, svgLeft, svgRight), fitScale(ys, svgBottom, svgTop)
	p.XTicks, p.YTicks = sx.ticks(), sy.ticks()
	for k := range p.Points {
		pt := &p.Points[k]
		pt.X, pt.Y = px1(sx.px(pt.vx)), px1(sy.px(pt.vy))
		pt.R = strconv.FormatFloat(otherDotRadius, 'g', -1, 64)
		if pt.Front {
			pt.R = strconv.FormatFloat(frontDotRadius, 'g', -1, 64)
		}
	}
	var pts []string
	for _, k := range pairFront(xs, ys, axisDirection(s, p.DefaultX), axisDirection(s, p.DefaultY)) {
		pts = append(pts, p.Points[k].X+","+p.Points[k].Y)
	}
	p.PairFront = strings.Join(pts, " ")
	var placed [][4]float64
	var dots [][2]float64
	var labelled []int
	for k := range p.Points {
		if p.Points[k].Front && p.Points[k].Rank <= maxRankLabels {
			labelled = append(labelled, k)
			dots = append(dots, [2]float64{sx.px(p.Points[k].vx), sy.px(p.Points[k].vy)})
		}
	}
	for n, k := range labelled {
		pt := &p.Points[k]
		box := placeRank(dots, n, strconv.Itoa(pt.Rank), placed)
		placed = append(placed, box)
		p.RankLabels = append(p.RankLabels, htmlRankLabel{Point: k, Rank: pt.Rank, PointID: pt.PointID,
			X: px1(box[0]), Y: px1(box[1] + rankHeight - 2), Recommendation: recFor[embedded[k]]})
	}
}

// axisDirection is -1 for axis k when it is a maximized objective, else 1 (a minimized one, or
// point_index past the objectives): the factor that makes it minimized.
func axisDirection(s optimization.Settings, k int) float64 {
	if k < len(s.Objectives) && s.Objectives[k].Direction == optimization.Maximize {
		return -1
	}
	return 1
}

// pairFront returns the indexes of the points not dominated on (x, y), with dx, dy = 1 to
// minimize and -1 to maximize, in order of x from best to worst; of points with equal values
// the first stands.
func pairFront(xs, ys []float64, dx, dy float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(dx*xs[a], dx*xs[b]); c != 0 {
			return c
		}
		return cmp.Compare(dy*ys[a], dy*ys[b])
	})
	var out []int
	best := math.Inf(1)
	for _, i := range idx {
		if dy*ys[i] < best {
			best = dy * ys[i]
			out = append(out, i)
		}
	}
	return out
}

// placeRank returns the box (x, y of its top left corner, width, height; px) of the number of
// dots[n]: the first of eight offsets around the dot (right above, right below, left above, left
// below, above, below, further right above, further right below) that stays in the data area and
// overlaps neither a placed box nor another labelled dot; right above when none does.
func placeRank(dots [][2]float64, n int, text string, placed [][4]float64) [4]float64 {
	w, h, g := rankCharWidth*float64(len(text)), rankHeight, rankGap
	cx, cy := dots[n][0], dots[n][1]
	offsets := [][2]float64{{g, -g/2 - h}, {g, g / 2}, {-g - w, -g/2 - h}, {-g - w, g / 2}, {-w / 2, -g - h}, {-w / 2, g},
		{g, -g/2 - 2*h}, {g, g/2 + h}}
	overlaps := func(a, b [4]float64) bool {
		return a[0] < b[0]+b[2] && b[0] < a[0]+a[2] && a[1] < b[1]+b[3] && b[1] < a[1]+a[3]
	}
	for _, o := range offsets {
		box := [4]float64{cx + o[0], cy + o[1], w, h}
		free := box[0] >= svgLeft && box[0]+w <= svgRight && box[1] >= svgTop && box[1]+h <= svgBottom
		for _, q := range placed {
			free = free && !overlaps(box, q)
		}
		for j, d := range dots {
			r := frontDotRadius
			free = free && (j == n || !overlaps(box, [4]float64{d[0] - r, d[1] - r, 2 * r, 2 * r}))
		}
		if free {
			return box
		}
	}
	return [4]float64{cx + offsets[0][0], cy + offsets[0][1], w, h}
}

// usd renders an amount of US dollars to the cent, as prices read (2.50, 5.00).
func usd(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
