package results

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/optimization"
)

func TestFixedNum(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{15029.4, "15029"}, {5438, "5438"}, {0.25544, "0.2554"}, {91.9234, "91.92"}, {373, "373"}, {0.00012345, "0.0001234"},
		{1e21, "1000000000000000000000"}, {math.NaN(), "n/a"}, {-1234.6, "-1235"}} {
		if got := FixedNum(c.x); got != c.want {
			t.Errorf("FixedNum(%g) = %q, want %q", c.x, got, c.want)
		}
	}
}

// nearTieRow is an ok row found at capacity load lo (concurrency), with the probes met at lo and
// missed at miss (none when miss is 0), throughput tput and cost per million tokens usd.
func nearTieRow(id string, lo, miss, tput, usd float64) Row {
	r := row(id, 1, tput, 100, 10)
	unit := "concurrency"
	r.CapacityLoad, r.CapacityLoadUnit, r.USDPerMillionOutputTokens = ptr(lo), &unit, ptr(usd)
	r.Probes = []ProbeRow{{Load: lo, MeetsSLA: true}}
	if miss > 0 {
		r.Probes = append(r.Probes, ProbeRow{Load: miss * 3, MeetsSLA: false}, ProbeRow{Load: miss, MeetsSLA: false})
	}
	return r
}

// The best throughput and cost are flagged when a rival's value at the top of its capacity's
// bracket reaches them; hand-computed brackets: a 1.04, b 1.2, c 1.025, d (no probes) the
// tolerance's 1.05, e bounded 1.
func TestNearTies(t *testing.T) {
	bounded := true
	rows := []Row{
		nearTieRow("a", 100, 104, 1000, 0.100),
		nearTieRow("b", 50, 60, 900, 0.105),   // 900 × 1.2 = 1080; 0.105 / 1.2 = 0.0875
		nearTieRow("c", 200, 205, 800, 0.2),   // 800 × 1.025 = 820 < 1000
		nearTieRow("d", 80, 0, 960, 0.104),    // 960 × 1.05 = 1008; 0.104 / 1.05 = 0.09905
		nearTieRow("e", 4096, 0, 990, 0.1001), // bounded: no bracket, 990 < 1000 and 0.1001 > 0.1
	}
	rows[4].CapacityBounded = &bounded
	objs := []optimization.Objective{{Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize},
		{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	if got := NearTies(rows, a, nil); got != nil {
		t.Errorf("without a capacity search: %+v", got)
	}
	m := &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05}}
	got := NearTies(rows, a, m)
	// p99_ttft_ms is measured at the capacity but does not scale with it: not flagged.
	if len(got) != 2 {
		t.Fatalf("near ties %+v, want cost and throughput", got)
	}
	ids := func(t NearTie) (s []string) {
		for _, i := range t.Rivals {
			s = append(s, rows[i].PointID)
		}
		return s
	}
	cost, tput := got[0], got[1]
	if cost.Objective.Metric != "usd_per_million_output_tokens" || rows[cost.Best].PointID != "a" ||
		!slices.Equal(ids(cost), []string{"d", "b"}) || math.Abs(cost.Reach[0]-0.104/1.05) > 1e-12 || math.Abs(cost.Reach[1]-0.0875) > 1e-12 {
		t.Errorf("cost near tie %+v (rivals %v), want a led by d (reach 0.09905) and b (0.0875)", cost, ids(cost))
	}
	if tput.Objective.Metric != "output_throughput_tok_s" || rows[tput.Best].PointID != "a" ||
		!slices.Equal(ids(tput), []string{"d", "b"}) || math.Abs(tput.Reach[0]-1008) > 1e-9 || math.Abs(tput.Reach[1]-1080) > 1e-9 {
		t.Errorf("throughput near tie %+v (rivals %v), want a led by d (reach 1008) and b (1080)", tput, ids(tput))
	}
	text := NearTieText(rows, &tput, LabelsFor(rows), true)
	for _, want := range []string{"Near tie: the highest output_throughput_tok_s (1000, point `a`) is not settled by the capacity search: " +
		"2 other candidates could reach it", "`d` (1 GPU, ", ") 960, up to 1008; `b` (1 GPU, ", ") 900, up to 1080. Choose among them"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}

	// report.md and pareto.json carry them.
	md := string(reportMarkdown(rows, a, m, &Written{}))
	if !strings.Contains(md, "\n\nNear tie: the lowest usd_per_million_output_tokens (0.1, point `a`)") || !strings.Contains(md, text) {
		t.Errorf("report.md lacks the near ties:\n%s", md)
	}
	doc, err := ParetoDocument(rows, a, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"near_ties": [
    {
      "metric": "usd_per_million_output_tokens",
      "direction": "minimize",
      "point_id": "a",
      "value": 0.1,
      "rivals": [
        {
          "point_id": "d",
          "value": 0.104,`; !strings.Contains(string(doc), want) {
		t.Errorf("pareto.json lacks %s:\n%s", want, doc)
	}

	page, err := ReportHTML(rows, a, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<p class="near-tie">Near tie: the highest output_throughput_tok_s (1000, point a) is not`; !strings.Contains(string(page), want) {
		t.Errorf("report.html lacks %q", want)
	}

	// A scalar target's first point is checked on the target's metric.
	a, err = Analyze(rows, optimization.Settings{Target: optimization.TargetThroughputPerGPU, Objectives: objs[2:]})
	if err != nil {
		t.Fatal(err)
	}
	if got := NearTies(rows, a, m); len(got) != 1 || got[0].Objective.Metric != "output_throughput_per_gpu_tok_s" || !slices.Equal(ids(got[0]), []string{"d", "b"}) {
		t.Errorf("ranking near ties %+v", got)
	}
}

func TestCapacityBracket(t *testing.T) {
	r := nearTieRow("x", 10, 0, 1, 1)
	if got := CapacityBracket(&r, 0.05); got != 1.1 {
		t.Errorf("concurrency 10 without a missed probe: %v, want 1.1 (one session more)", got)
	}
	r = nearTieRow("x", 10, 12, 1, 1)
	if got := CapacityBracket(&r, 0.05); got != 1.2 {
		t.Errorf("missed at 12: %v, want 1.2", got)
	}
	rate := "requests_per_second"
	r = nearTieRow("x", 10, 0, 1, 1)
	r.CapacityLoadUnit = &rate
	if got := CapacityBracket(&r, 0.05); got != 1.05 {
		t.Errorf("rate 10 without a missed probe: %v, want 1.05", got)
	}
	r.CapacityLoad = nil
	if got := CapacityBracket(&r, 0.05); got != 1 {
		t.Errorf("no capacity: %v, want 1", got)
	}
}
