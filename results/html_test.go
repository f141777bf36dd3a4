package results

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servesweep/servesweep/sim/optimization"
)

// htmlRows returns n ok rows over two modes, two GPUs, two weight precisions and two routers,
// with the default objectives spread so that the front has several points, an SLA attainment
// and a cost each.
func htmlRows(n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		k := float64(i)
		// Throughput per GPU grows with i while p99 TTFT wobbles: a front of several points.
		r := row(fmt.Sprintf("%012x", uint64(i+1)*0x9e3779b97f4a7c15>>16), int64(1+i%4), 100+7*k,
			50+math.Mod(k*37, 300), 5+math.Mod(k*13, 40))
		r.PointIndex = int64(i)
		r.Mode = []string{"aggregated", "disaggregated"}[i%2]
		r.Hardware = []string{"h100_sxm", "h200_sxm"}[i/2%2]
		r.WeightPrecision = ptrS([]string{"bf16", "fp8"}[i/4%2])
		r.RouterPolicy = []string{"kv_router", "round_robin"}[i/8%2]
		r.LoadType, r.LoadConcurrency = "concurrency", iptr(int64(4+i))
		r.SLAAttainment = ptr(0.9 + math.Mod(k, 10)/100)
		r.CostUSDPerHour = ptr(2.5 * float64(r.GPUs))
		r.USDPerMillionOutputTokens = ptr(*r.CostUSDPerHour / (*r.OutputThroughputTokS * 3600) * 1e6)
		rows[i] = r
	}
	return rows
}

// htmlManifest is a manifest of the built-in sweep's kind for rows: example prices, a grid larger
// than the rows.
func htmlManifest(rows []Row) *Manifest {
	return &Manifest{Spec: "examples/default-sweep.yaml", Algorithm: "grid", ExamplePrices: true,
		GPUHourUSD: map[string]float64{"h100_sxm": 2.5, "h200_sxm": 3.5},
		Settings:   optimization.Settings{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives()},
		Counts: Counts{GridPoints: len(rows) + 10, ValidPoints: len(rows) + 2, SelectedPoints: len(rows) + 2,
			Filtered: map[string]int{FilteredGPUBudget: 8}, Simulated: len(rows), OK: len(rows)}}
}

// renderHTML analyzes rows under m's settings and renders report.html of the analysis' front.
func renderHTML(t *testing.T, rows []Row, m *Manifest) ([]byte, *Analysis) {
	t.Helper()
	a, err := Analyze(rows, m.Settings)
	if err != nil {
		t.Fatal(err)
	}
	page, err := ReportHTML(rows, a, m, a.Front)
	if err != nil {
		t.Fatal(err)
	}
	return page, a
}

// report.html states the grid counts, the SLA and that the prices are examples, and is the same
// bytes for the same input.
func TestReportHTMLFactsAndDeterminism(t *testing.T) {
	rows := htmlRows(40)
	m := htmlManifest(rows)
	page, a := renderHTML(t, rows, m)
	again, err := ReportHTML(rows, a, m, a.Front)
	if err != nil || !bytes.Equal(page, again) {
		t.Fatalf("two renderings differ (%v)", err)
	}
	text := string(page)
	for _, want := range []string{
		"Grid: 50 points before filtering, 42 valid (filtered: gpu_budget 8), 42 selected.",
		"Simulated: 40 points (40 ok, 0 degraded, 0 infeasible, 0 failed, 0 timed out).",
		fmt.Sprintf("Feasible: %d candidates after the filters.", len(a.Candidates)),
		"Unfinished: 2 selected points have no result.",
		"EXAMPLE prices, for illustration, not quotes",
		`<p id="prices" class="example">`,
		"SLA: none (no evaluation.sla)",
		fmt.Sprintf("40 of 40 candidates plotted"),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, ext := range []string{"<script src", "<link", "http://", "https://", "@import", "url("} {
		if i := strings.Index(text, ext); i >= 0 && !strings.HasPrefix(text[i:], "http://www.w3.org/2000/svg") {
			t.Errorf("report.html refers outside itself: %q at %d", ext, i)
		}
	}
}

// Text from the input is escaped: a spec path with markup shows as text.
func TestReportHTMLEscapes(t *testing.T) {
	rows := htmlRows(5)
	m := htmlManifest(rows)
	m.Spec = `a<b>&"c.yaml`
	page, _ := renderHTML(t, rows, m)
	if !bytes.Contains(page, []byte("Spec a&lt;b&gt;&amp;&#34;c.yaml")) || bytes.Contains(page, []byte("<b>")) {
		t.Errorf("the spec path is not escaped:\n%s", page[:min(len(page), 4000)])
	}
}

// HTMLPoints keeps every candidate when they fit; past MaxHTMLPoints it keeps the front first,
// then an even sample of the others in input order, MaxHTMLPoints in all.
func TestHTMLPointsFrontFirstThenSample(t *testing.T) {
	rows := htmlRows(30)
	a, err := Analyze(rows, optimization.Settings{Objectives: optimization.DefaultObjectives()})
	if err != nil {
		t.Fatal(err)
	}
	got := HTMLPoints(a)
	if len(got) != len(a.Candidates) || !slices.Equal(got[:len(a.Front)], a.Front) {
		t.Errorf("30 rows: %v, want the front %v then the other candidates", got, a.Front)
	}
	const n = 25_000
	big := benchRows(n, 50)
	a, err = Analyze(big, optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}})
	if err != nil {
		t.Fatal(err)
	}
	got = HTMLPoints(a)
	if len(got) != MaxHTMLPoints || !slices.Equal(got[:len(a.Front)], a.Front) {
		t.Fatalf("%d rows: %d points, front first %v; want %d, front %v", n, len(got), got[:len(a.Front)], MaxHTMLPoints, a.Front)
	}
	rest := got[len(a.Front):]
	for k := 1; k < len(rest); k++ {
		if rest[k] <= rest[k-1] || slices.Contains(a.Front, rest[k]) {
			t.Fatalf("sample %d: row %d after %d (front: %v)", k, rest[k], rest[k-1], slices.Contains(a.Front, rest[k]))
		}
	}
	// Every 2.5th of the 24,950 other rows: the last one sampled is near the end.
	if last := rest[len(rest)-1]; last < n-5 {
		t.Errorf("the sample ends at row %d of %d", last, n)
	}
}

// browser returns the path of a Chromium, skipping the test when there is none, and failing it
// when CI is set (CI installs one: .ci/run).
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH (chromium, chromium-browser, google-chrome): install one (Debian: apt-get install chromium) to load report.html in a browser"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI is set, where .ci/run installs it")
	}
	t.Skip(msg)
	return ""
}

// dumpDOM loads page (with fragment, "" for none) in headless Chromium and returns the DOM after
// its scripts ran.
func dumpDOM(t *testing.T, chrome, page, fragment string) string {
	t.Helper()
	u := url.URL{Scheme: "file", Path: page, Fragment: fragment}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chrome, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--dump-dom", u.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --dump-dom %s: %v\n%s", chrome, u.String(), err, stderr.String())
	}
	if !bytes.Contains(out, []byte(`id="chart"`)) {
		t.Fatalf("%s --dump-dom %s printed no report:\n%s\n%s", chrome, u.String(), out, stderr.String())
	}
	return string(out)
}

var (
	circleTag = regexp.MustCompile(`<circle ([^>]*)><title>([^<]*)</title></circle>`)
	rankTag   = regexp.MustCompile(`<a( href="([^"]*)")?><text class="rank" ([^>]*)>([^<]*)</text></a>`)
	attrRe    = regexp.MustCompile(`([a-z][a-z0-9-]*)="([^"]*)"`)
	tickTag   = regexp.MustCompile(`<text [^>]*>([^<]*)</text></g>`)
)

// element is one parsed tag: its attributes and text.
type element struct {
	attr map[string]string
	text string
}

func attrs(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range attrRe.FindAllStringSubmatch(s, -1) {
		m[kv[1]] = kv[2]
	}
	return m
}

func circles(dom string) []element {
	var out []element
	for _, c := range circleTag.FindAllStringSubmatch(dom, -1) {
		out = append(out, element{attr: attrs(c[1]), text: c[2]})
	}
	return out
}

func domRankLabels(dom string) []element {
	var out []element
	for _, c := range rankTag.FindAllStringSubmatch(dom, -1) {
		e := element{attr: attrs(c[3]), text: c[4]}
		e.attr["href"] = c[2]
		out = append(out, e)
	}
	return out
}

// section returns the part of dom between the tags that open and close the group id.
func section(dom, id string) string {
	i := strings.Index(dom, `<g id="`+id+`">`)
	if i < 0 {
		return ""
	}
	j := strings.Index(dom[i:], `</g>
</g>`)
	if j < 0 {
		j = strings.Index(dom[i:], "</g></g>")
	}
	if j < 0 {
		return dom[i:]
	}
	return dom[i : i+j+8]
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

// TestReportHTMLInBrowser loads report.html in headless Chromium and checks what its script drew
// against pareto.json and the page as written: every front entry is plotted once, red, numbered
// by its rank next to its dot and linked to its recommendation; every point has a tooltip with
// deployment, load, SLA attainment and cost; the script places the points, ticks and numbers of
// the default axes where the page has them; other axes (#x=...&y=...) move the points to where
// the scale of those objectives puts them; a filter (#hide=mode:...) hides exactly that mode's
// points. Skipped without a browser, except under CI.
func TestReportHTMLInBrowser(t *testing.T) {
	chrome := browser(t)
	dir := t.TempDir()
	rows := htmlRows(60)
	if _, _, err := WriteOutputs(dir, rows, htmlManifest(rows)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Front []struct {
			Rank           int    `json:"rank"`
			PointID        string `json:"point_id"`
			Recommendation string `json:"recommendation"`
		} `json:"front"`
		Candidates int `json:"candidates"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ParetoFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d candidates, %d on the front", doc.Candidates, len(doc.Front))
	if len(doc.Front) < 3 {
		t.Fatalf("front of %d points: the test needs several", len(doc.Front))
	}
	page := filepath.Join(dir, HTMLFile)
	written, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	static := string(written)
	dom := dumpDOM(t, chrome, page, "")

	checkFront := func(what, dom string) {
		t.Helper()
		cs := circles(dom)
		if len(cs) != doc.Candidates {
			t.Errorf("%s: %d points plotted, want the %d candidates", what, len(cs), doc.Candidates)
		}
		var front []element
		for _, c := range cs {
			if c.attr["class"] == "front" {
				front = append(front, c)
			}
			for _, fact := range []string{"point " + c.attr["data-id"], "deployment: ", "load: concurrency ", "SLA attainment: ", " % of offered requests", "cost: ", " USD/h"} {
				if !strings.Contains(c.text, fact) {
					t.Errorf("%s: the tooltip of %s lacks %q: %q", what, c.attr["id"], fact, c.text)
				}
			}
		}
		labels := domRankLabels(dom)
		if len(front) != len(doc.Front) || len(labels) != len(doc.Front) {
			t.Fatalf("%s: %d front dots, %d numbers; pareto.json has %d front points", what, len(front), len(labels), len(doc.Front))
		}
		for n, f := range doc.Front {
			c, l := front[n], labels[n]
			if c.attr["data-id"] != f.PointID || c.attr["data-rank"] != strconv.Itoa(f.Rank) {
				t.Errorf("%s: front dot %d is %s rank %s; pareto.json: %s rank %d", what, n, c.attr["data-id"], c.attr["data-rank"], f.PointID, f.Rank)
			}
			if l.text != strconv.Itoa(f.Rank) || l.attr["data-id"] != f.PointID || l.attr["href"] != f.Recommendation || f.Recommendation == "" {
				t.Errorf("%s: number %q of %s links %q; pareto.json: rank %d of %s, recommendation %q", what, l.text, l.attr["data-id"],
					l.attr["href"], f.Rank, f.PointID, f.Recommendation)
			}
			if !strings.Contains(c.text, fmt.Sprintf("#%d on the Pareto front", f.Rank)) {
				t.Errorf("%s: the tooltip of front point %s does not give its rank %d: %q", what, f.PointID, f.Rank, c.text)
			}
			if l.attr["style"] == "display: none;" {
				continue
			}
			// The number's box (7 px a digit, 12 px high, its baseline 2 px above the box's bottom)
			// touches the 5 px dot's 7 px surroundings, or lies just beyond, unless it found no room.
			dx := num(t, l.attr["x"]) - num(t, c.attr["cx"])
			dy := num(t, l.attr["y"]) - num(t, c.attr["cy"])
			if math.Abs(dx) > 30 || math.Abs(dy) > 40 {
				t.Errorf("%s: number %d at (%s, %s), %.1f, %.1f px from its dot", what, f.Rank, l.attr["x"], l.attr["y"], dx, dy)
			}
		}
	}
	checkFront("as written", static)
	checkFront("after the script", dom)

	// The script redraws the default view as the page was written: same places, same ticks.
	same := func(a, b []element, keys ...string) {
		t.Helper()
		for i := range a {
			for _, k := range keys {
				if d := math.Abs(num(t, a[i].attr[k]) - num(t, b[i].attr[k])); d > 0.15 {
					t.Errorf("%s of %s: %s as written, %s after the script", k, a[i].attr["data-id"], a[i].attr[k], b[i].attr[k])
				}
			}
		}
	}
	same(circles(static), circles(dom), "cx", "cy")
	same(domRankLabels(static), domRankLabels(dom), "x", "y")
	for _, axis := range []string{"xticks", "yticks"} {
		want, got := tickTag.FindAllStringSubmatch(section(static, axis), -1), tickTag.FindAllStringSubmatch(section(dom, axis), -1)
		if len(want) < 5 || fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%s: %v as written, %v after the script (want five or more, the same)", axis, want, got)
		}
	}

	// Other axes: p99_itl_ms across, p99_ttft_ms up. The page's linear scales (fitScale: the
	// range widened by 5 %) put each point at its values.
	moved := dumpDOM(t, chrome, page, "x=p99_itl_ms&y=p99_ttft_ms")
	checkFront("p99_itl_ms across, p99_ttft_ms up", moved)
	if !strings.Contains(moved, `>p99_itl_ms (minimize)</text>`) || !strings.Contains(moved, `>p99_ttft_ms (minimize)</text>`) {
		t.Error("the axis labels do not name the objectives picked")
	}
	cs := circles(moved)
	var xs, ys []float64
	for _, c := range cs {
		v := strings.Fields(c.attr["data-v"])
		xs, ys = append(xs, num(t, v[2])), append(ys, num(t, v[1]))
	}
	sx, sy := fitScale(xs, svgLeft, svgRight), fitScale(ys, svgBottom, svgTop)
	for i, c := range cs {
		if dx, dy := num(t, c.attr["cx"])-sx.px(xs[i]), num(t, c.attr["cy"])-sy.px(ys[i]); math.Abs(dx) > 0.15 || math.Abs(dy) > 0.15 {
			t.Errorf("point %s with p99 ITL %g, p99 TTFT %g at (%s, %s), want (%.1f, %.1f)", c.attr["data-id"], xs[i], ys[i],
				c.attr["cx"], c.attr["cy"], sx.px(xs[i]), sy.px(ys[i]))
		}
	}

	// A filter hides exactly the points (and numbers) of the mode unticked.
	filtered := dumpDOM(t, chrome, page, "hide=mode:disaggregated")
	hiddenN := 0
	for _, c := range circles(filtered) {
		hidden := c.attr["style"] == "display: none;"
		if hidden != (c.attr["data-mode"] == "disaggregated") {
			t.Errorf("point %s (%s): hidden %v", c.attr["data-id"], c.attr["data-mode"], hidden)
		}
		if hidden {
			hiddenN++
		}
	}
	if hiddenN == 0 || !strings.Contains(filtered, fmt.Sprintf("%d shown (the filters hide %d)", doc.Candidates-hiddenN, hiddenN)) {
		t.Errorf("%d points hidden; the page does not say so", hiddenN)
	}
}
