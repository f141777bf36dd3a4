package results

import (
	"bytes"
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

// nearTieRow is an ok row found at capacity load lo (concurrency), throughput tput and cost per
// million tokens usd, with probes met at lo and missed at miss and 3 × miss; without probes (a
// results file read without probes.parquet) when miss is 0.
func nearTieRow(id string, lo, miss, tput, usd float64) Row {
	r := row(id, 1, tput, 100, 10)
	unit := "concurrency"
	r.CapacityLoad, r.CapacityLoadUnit, r.USDPerMillionOutputTokens, r.LoadConcurrency = ptr(lo), &unit, ptr(usd), iptr(int64(lo))
	if miss > 0 {
		r.Probes = []ProbeRow{{ProbeIndex: 0, Load: lo, MeetsSLA: true}, {ProbeIndex: 1, Load: miss * 3, MeetsSLA: false},
			{ProbeIndex: 2, Load: miss, MeetsSLA: false}}
	}
	return r
}

// The best throughput and cost are flagged when a rival's value at the top of its capacity's
// bracket reaches them; hand-computed brackets (a concurrency's top is one below the least load
// missed): a 103/100, b 59/50, c 204/200, d (no probes) the tolerance's 84 less one, 83/80, e
// bounded 1.
func TestNearTies(t *testing.T) {
	bounded := true
	rows := []Row{
		nearTieRow("a", 100, 104, 1000, 0.100),
		nearTieRow("b", 50, 60, 900, 0.105),   // 900 × 1.18 = 1062; 0.105 / 1.18 = 0.08898
		nearTieRow("c", 200, 205, 800, 0.2),   // 800 × 1.02 = 816 < 1000
		nearTieRow("d", 80, 0, 970, 0.1035),   // 970 × 1.0375 = 1006.375; 0.1035 / 1.0375 = 0.09976
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
	m := &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05, Min: 1, Max: 4096}}
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
		!slices.Equal(ids(cost), []string{"d", "b"}) || math.Abs(cost.Reach[0]-0.1035/1.0375) > 1e-12 || math.Abs(cost.Reach[1]-0.105/1.18) > 1e-12 {
		t.Errorf("cost near tie %+v (rivals %v), want a led by d (reach 0.09976) and b (0.08898)", cost, ids(cost))
	}
	if tput.Objective.Metric != "output_throughput_tok_s" || rows[tput.Best].PointID != "a" ||
		!slices.Equal(ids(tput), []string{"d", "b"}) || math.Abs(tput.Reach[0]-1006.375) > 1e-9 || math.Abs(tput.Reach[1]-1062) > 1e-9 {
		t.Errorf("throughput near tie %+v (rivals %v), want a led by d (reach 1006.375) and b (1062)", tput, ids(tput))
	}
	text := NearTieText(rows, &tput, LabelsFor(rows), true)
	for _, want := range []string{"Near tie: the highest output_throughput_tok_s (1000, point `a`) is not settled by the capacity search: " +
		"2 other candidates could reach it within the brackets their capacities were found in: `d` (1 GPU, ", "`d` (1 GPU, ", ") 970, 1006 at the top of its bracket; `b` (1 GPU, ", ") 900, 1062 at the top of its bracket. Choose among them"} {
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
      "worst": 0.1,
      "rivals": [
        {
          "point_id": "d",
          "value": 0.1035,`; !strings.Contains(string(doc), want) {
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
	cs := &optimization.CapacitySearch{RelativeTolerance: 0.05, Min: 1, Max: 256}
	r := nearTieRow("x", 10, 0, 1, 1)
	if got := CapacityBracket(&r, cs); got != 1 {
		t.Errorf("concurrency 10, closed without a missed probe on the row: %v, want 1 (closed at 11, a whole number above)", got)
	}
	r = nearTieRow("x", 10, 11, 1, 1)
	if got := CapacityBracket(&r, cs); got != 1 {
		t.Errorf("met at 10, missed at 11: %v, want 1 (no concurrency in between)", got)
	}
	r = nearTieRow("x", 10, 12, 1, 1)
	if got := CapacityBracket(&r, cs); got != 1.1 {
		t.Errorf("missed at 12: %v, want 1.1 (11 at most)", got)
	}
	// A throughput is bounded by the one measured where the search missed: a saturated
	// deployment (3,427 tok/s at 134 against 3,432 at its capacity 122) gains nothing.
	r = nearTieRow("x", 122, 134, 3432, 1)
	r.Probes[1].OutputThroughputTokS, r.Probes[2].OutputThroughputTokS = ptr(3419), ptr(3427)
	if got := throughputBracket(&r, cs); got != 1 {
		t.Errorf("saturated: %v, want 1", got)
	}
	r.Probes[2].OutputThroughputTokS = ptr(3600)
	if got, want := throughputBracket(&r, cs), 3600.0/3432; got != want {
		t.Errorf("throughput bracket %v, want %v (the missed probe's, under the load bracket 133/122)", got, want)
	}
	// Stopped at max_probes before any miss: the capacity is a lower bound up to the search's max.
	r = nearTieRow("x", 40, 0, 1, 1)
	r.Reason = "capacity_search: stopped at max_probes (3) before any load missed the SLA: the capacity is at least 40 concurrency"
	if got := CapacityBracket(&r, cs); got != 6.4 {
		t.Errorf("unclosed at 40 of max 256: %v, want 6.4", got)
	}
	rate := "requests_per_second"
	r = nearTieRow("x", 10, 0, 1, 1)
	r.CapacityLoadUnit = &rate
	if got := CapacityBracket(&r, cs); got != 1.05 {
		t.Errorf("rate 10 without a missed probe: %v, want 1.05", got)
	}
	for name, q := range map[string]func(*Row){
		"no capacity":  func(r *Row) { r.CapacityLoad = nil },
		"NaN capacity": func(r *Row) { r.CapacityLoad = ptr(math.NaN()) },
		"negative":     func(r *Row) { r.CapacityLoad = ptr(-48) },
		"bounded":      func(r *Row) { b := true; r.CapacityBounded = &b },
	} {
		r = nearTieRow("x", 10, 0, 1, 1)
		r.CapacityLoadUnit = &rate
		q(&r)
		if got := CapacityBracket(&r, cs); got != 1 {
			t.Errorf("%s: %v, want 1", name, got)
		}
	}
	// Probes that show no load missed above the capacity (a NaN one is no load): the search
	// stopped before any miss, up to its max (256 / 10); so does a degraded row's reason without
	// probes, which keeps the capacity search's after its own, and one that missed names the load.
	r = nearTieRow("x", 10, 0, 1, 1)
	r.CapacityLoadUnit = &rate
	r.Probes = []ProbeRow{{Load: math.NaN()}, {Load: 10, MeetsSLA: true}}
	if got := CapacityBracket(&r, cs); got != 25.6 {
		t.Errorf("no load missed: %v, want 25.6", got)
	}
	r.Probes = nil
	r.Reason = "rejected_requests: 1 of 100 offered; capacity_search: stopped at max_probes (3) before any load missed the SLA: the capacity is at least 10 requests_per_second"
	if got := CapacityBracket(&r, cs); got != 25.6 || !Unconverged(&r) {
		t.Errorf("degraded, no load missed: %v (unconverged %v), want 25.6", got, Unconverged(&r))
	}
	r.Reason = "capacity_search: stopped at max_probes (16) with the capacity between 10 and 13.5 requests_per_second, wider than relative_tolerance"
	if got := CapacityBracket(&r, cs); got != 1.35 {
		t.Errorf("missed at 13.5 by the reason: %v, want 1.35", got)
	}
	if got := CapacityBracket(&r, nil); got != 1 {
		t.Errorf("no capacity search: %v, want 1", got)
	}
}

// A front entry another candidate could dominate within its bracket is marginal; a candidate off
// the front that its own bracket could put on it is a contender. Hand-computed: b (0.2103, 9906)
// is on the front only by 0.14 % of cost against c (0.2106, 19789, bracket 1.04: 0.2025 at its
// top), so c could dominate it at 0.2106 / 0.2103 = 1.0014 times its capacity; d (0.2110, 9800,
// bracket 1.05: 0.2010 and 10290 at its top) is dominated by c as measured and by no candidate
// at the top of its own bracket; e (0.3, 5000, bracket 1.02) stays dominated.
func TestMarginalFrontAndContenders(t *testing.T) {
	rows := []Row{
		nearTieRow("a", 100, 110, 4000, 0.169),
		nearTieRow("b", 300, 330, 9906, 0.2103),
		nearTieRow("c", 600, 624, 19789, 0.2106),
		nearTieRow("d", 200, 210, 9800, 0.2110),
		nearTieRow("e", 100, 102, 5000, 0.3),
	}
	objs := []optimization.Objective{{Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize},
		{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) != 3 {
		t.Fatalf("front %v, want a, b, c", a.Front)
	}
	m := &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05, Min: 1, Max: 4096}}
	marg := MarginalFront(rows, a, m)
	if len(marg) != 1 || rows[marg[0].Entry].PointID != "b" || rows[marg[0].By].PointID != "c" || math.Abs(marg[0].Factor-0.2106/0.2103) > 1e-12 {
		t.Errorf("marginal %+v, want b by c at 1.0014", marg)
	}
	if c := FrontContenders(rows, a, m); len(c) != 1 || rows[c[0]].PointID != "d" {
		t.Errorf("contenders %v, want d", c)
	}
	if got := MarginalText(rows, a, &marg[0], LabelsFor(rows), false); !strings.Contains(got, "were its throughput at capacity 0.14 % higher") {
		t.Errorf("marginal text %q", got)
	}
	// With the load itself the only objective the capacity sets, the text names the load.
	for _, tc := range []struct {
		objs []optimization.Objective
		want string
	}{
		{[]optimization.Objective{{Metric: "capacity_load", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}, "load"},
		{[]optimization.Objective{{Metric: "load_concurrency", Direction: optimization.Maximize}, {Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize}}, "throughput"},
	} {
		if got := scaledNoun(tc.objs); got != tc.want {
			t.Errorf("noun for %v: %s, want %s", tc.objs, got, tc.want)
		}
	}
	if MarginalFront(rows, a, nil) != nil || FrontContenders(rows, a, nil) != nil {
		t.Error("flagged without a capacity search")
	}
	// Under a scalar target the front is not what is recommended: no marginal entry or contender.
	ranked, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	if u := UnsettledOf(rows, ranked, m); u.Marginal != nil || u.Contenders != nil {
		t.Errorf("scalar target: %+v", u)
	}
	// Objectives the capacity does not set compare as measured: nothing to flag.
	lat := []optimization.Objective{{Metric: "p99_ttft_ms", Direction: optimization.Minimize}, {Metric: "gpus", Direction: optimization.Minimize}}
	if a, err = Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: lat}); err != nil {
		t.Fatal(err)
	}
	if MarginalFront(rows, a, m) != nil || FrontContenders(rows, a, m) != nil {
		t.Error("flagged on objectives the capacity does not set")
	}
}

// A rival equal to the best at ObjectiveDigits is a tie, not a near tie; where more capacity
// worsens the metric (a minimized capacity), the best point's own bracket is what can close the
// gap.
func TestNearTieEdges(t *testing.T) {
	bounded := true
	rows := []Row{nearTieRow("a", 100, 104, 1000, 0.1), nearTieRow("b", 4096, 0, 1000, 0.2), nearTieRow("c", 103, 200, 900, 0.3)}
	rows[1].CapacityBounded = &bounded
	m := &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05, Min: 1, Max: 4096}}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput,
		Objectives: []optimization.Objective{{Metric: "p99_ttft_ms", Direction: optimization.Minimize}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := NearTies(rows, a, m); len(got) != 1 || len(got[0].Rivals) != 1 || rows[got[0].Rivals[0]].PointID != "c" {
		t.Errorf("throughput near ties %+v, want c only (b ties a exactly)", got)
	}
	a, err = Analyze(rows, optimization.Settings{Target: optimization.TargetPareto,
		Objectives: []optimization.Objective{{Metric: "capacity_load", Direction: optimization.Minimize}}})
	if err != nil {
		t.Fatal(err)
	}
	// a (100, missed at 104: up to 103) against c (103, its least).
	got := NearTies(rows, a, m)
	if len(got) != 1 || rows[got[0].Best].PointID != "a" || got[0].Worst != 103 || len(got[0].Rivals) != 1 || rows[got[0].Rivals[0]].PointID != "c" {
		t.Fatalf("min capacity near ties %+v, want a (worst 103) and c", got)
	}
	if text := NearTieText(rows, &got[0], LabelsFor(rows), false); !strings.Contains(text, "within its own capacity's bracket it could be 103, and 1 other candidate could reach that: c (") {
		t.Errorf("text %q", text)
	}
}

// A capacity whose search stopped at max_probes says so wherever its load is shown.
func TestLoadNamesAnUnconvergedCapacity(t *testing.T) {
	r := nearTieRow("x", 122, 134, 1, 1)
	r.Reason = "capacity_search: stopped at max_probes (16) with the capacity between 122 and 134 concurrency, wider than relative_tolerance"
	if got, want := Load(&r), "capacity concurrency 122 (not converged: below 134, the search stopped at max_probes)"; got != want {
		t.Errorf("Load = %q, want %q", got, want)
	}
	n := int64(3)
	r.CapacityProbes = &n
	var b bytes.Buffer
	capacityMarkdown(&b, []Row{r}, nil)
	if want := "Stopped at max_probes before the bracket closed (`x`: capacity concurrency 122 (not converged: below 134, the search " +
		"stopped at max_probes)): such a capacity is known only to that bracket; raise capacity_search.max_probes to settle it."; !strings.Contains(b.String(), want) {
		t.Errorf("capacity paragraph %q lacks %q", b.String(), want)
	}
	r = nearTieRow("x", 40, 0, 1, 1)
	r.Reason = "capacity_search: stopped at max_probes (3) before any load missed the SLA: the capacity is at least 40 concurrency"
	if got, want := Load(&r), "capacity >= concurrency 40 (not converged: no load missed before the search stopped at max_probes)"; got != want {
		t.Errorf("Load = %q, want %q", got, want)
	}
}

// CheckRows refuses what would make an analysis count a point twice or read a capacity that is
// not one.
func TestCheckRows(t *testing.T) {
	good := []Row{nearTieRow("a", 10, 12, 1, 1), nearTieRow("b", 10, 12, 1, 1)}
	for i := range good {
		for k := range good[i].Probes {
			good[i].Probes[k].LoadUnit = "concurrency"
		}
	}
	if err := CheckRows(good); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit func([]Row) []Row
		want string
	}{
		"duplicate":  {func(r []Row) []Row { return append(r, r[0]) }, "point a appears twice"},
		"NaN":        {func(r []Row) []Row { r[1].CapacityLoad = ptr(math.NaN()); return r }, "point b: capacity_load NaN is not a finite load > 0"},
		"negative":   {func(r []Row) []Row { r[1].CapacityLoad = ptr(-48); return r }, "capacity_load -48"},
		"probe +Inf": {func(r []Row) []Row { r[0].Probes[1].Load = math.Inf(1); return r }, "point a: probe 1's load +Inf"},
		"probe unit": {func(r []Row) []Row { r[0].Probes[0].LoadUnit = "speedup"; return r }, `probe 0's load_unit "speedup" is not its capacity's "concurrency"`},
	} {
		rows := slices.Clone(good)
		for i := range rows {
			rows[i].Probes = slices.Clone(good[i].Probes)
		}
		if err := CheckRows(c.edit(rows)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// report.html states the capacity search's findings as report.md does, and prices to the cent.
func TestReportHTMLStatesTheCapacitySearch(t *testing.T) {
	rows := []Row{nearTieRow("a", 100, 104, 1000, 0.1), nearTieRow("b", 50, 60, 900, 0.105)}
	n, term := int64(2), "p99_itl_ms"
	for i := range rows {
		rows[i].CapacityProbes, rows[i].CostUSDPerHour, rows[i].SLABindingTerm = &n, ptr(2.5), &term
	}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto})
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{CapacitySearch: &optimization.CapacitySearch{Attainment: 0.99, Min: 1, Max: 4096, RelativeTolerance: 0.05, MaxProbes: 16}}
	page, err := ReportHTML(rows, a, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<p class="capacity">Capacity search (concurrency, attainment &gt;= 0.99 of evaluation.sla`,
		`<p class="capacity">Capacities limited by (sla_binding_term: `, "p99_itl_ms 2.", "cost: 2.50 USD/h, 0.1 USD per million output tokens",
		`<p class="capacity">Note: p99_ttft_ms, p99_itl_ms rank the points, but under a capacity search`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// unconvergedUpper reads the reasons fillCapacity writes: this test ties the two formats, so a
// change of wording there cannot silently turn a missed load into "no load missed".
func TestUnconvergedReadsFillCapacitysReasons(t *testing.T) {
	for _, c := range []struct {
		capacity Capacity
		miss     float64
		noMiss   bool
	}{
		{Capacity{Feasible: true, Load: 122, Unit: "concurrency", Unclosed: true, Upper: 134}, 134, false},
		{Capacity{Feasible: true, Load: 40, Unit: "concurrency", Unclosed: true}, 0, true},
		{Capacity{Feasible: true, Load: 2.5, Unit: "requests_per_second", Unclosed: true, Upper: 3.75}, 3.75, false},
	} {
		var r Row
		fillCapacity(&r, &c.capacity)
		r.Probes = nil // as read without probes.parquet
		miss, noMiss := unconvergedUpper(&r)
		if miss != c.miss || noMiss != c.noMiss || !Unconverged(&r) {
			t.Errorf("%q: miss %v, no miss %v, unconverged %v; want %v, %v, true", r.Reason, miss, noMiss, Unconverged(&r), c.miss, c.noMiss)
		}
	}
}

// A candidate whose capacity search held the SLA at its max has a capacity that is a lower bound
// with no bracket above it: it is named as unsettled (first among the sentences, ranked where it
// is on the front) and listed in pareto.json, under a capacity search only.
func TestBoundedCandidates(t *testing.T) {
	rows, a, m := seedRows()
	bounded := true
	rows[3].CapacityBounded = &bounded // d: 600 tok/s at 0.12, off the front, met at the max
	a, err := Analyze(rows, a.Settings)
	if err != nil {
		t.Fatal(err)
	}
	u := UnsettledOf(rows, a, m)
	if !slices.Equal(u.Bounded, []int{3}) {
		t.Fatalf("bounded %v, want d (3)", u.Bounded)
	}
	got := u.Sentences(rows, a, LabelsFor(rows), false)
	want := "Capacity bounded: 1 candidate met the SLA at the capacity search's max (concurrency 100; pareto.json's " +
		"capacity_bounded_points): point d (1 GPU, "
	if len(got) == 0 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "its capacity and every value measured "+
		"there are lower bounds, so where it stands against the others is not settled: raise optimization.capacity_search.max and sweep again.") {
		t.Errorf("sentences %q\nwant the first to begin %q", got, want)
	}
	rows[0].CapacityBounded = &bounded // a, #1 on the front
	a, err = Analyze(rows, a.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if got := BoundedText(rows, a, BoundedCandidates(rows, a, m), LabelsFor(rows), false); !strings.Contains(got, "2 candidates met") ||
		!strings.Contains(got, "): #1, point a (1 GPU, ") || !strings.Contains(got, "their capacities") {
		t.Errorf("two bounded, one on the front: %q", got)
	}
	// Bounded by their trace (TraceBoundMark): the sentence says so, and what to change; one of
	// each names both.
	rows[3].Reason = TraceBoundMark + ": the capacity is at least concurrency 100 (the SLA held there), and at concurrency 101 …"
	if got := BoundedText(rows, a, BoundedCandidates(rows, a, m), LabelsFor(rows), false); !strings.Contains(got,
		"2 candidates met the SLA at the capacity search's max, or (1 of them) below a load their trace cannot hold (") ||
		!strings.HasSuffix(got, ": raise optimization.capacity_search.max, or give a trace of more sessions, and sweep again.") {
		t.Errorf("one bounded by the search's max, one by its trace: %q", got)
	}
	rows[0].Reason = rows[3].Reason
	if got := BoundedText(rows, a, BoundedCandidates(rows, a, m), LabelsFor(rows), false); !strings.Contains(got,
		"2 candidates met the SLA below a load their trace cannot hold (") ||
		!strings.HasSuffix(got, ": give a trace of more sessions (their reason names the load) and sweep again.") {
		t.Errorf("both bounded by their trace: %q", got)
	}
	if got := Load(&rows[0]); got != "capacity >= concurrency 100 (bounded by its trace)" {
		t.Errorf("a trace-bounded row's load: %q", got)
	}
	// A degraded row's reason puts the degradation first and keeps the search's note after it.
	rows[0].Reason = "rejected_requests: 3 of 1000 rejected; " + rows[3].Reason
	if !TraceBounded(&rows[0]) {
		t.Errorf("a degraded trace-bounded row: %q", rows[0].Reason)
	}
	rows[0].Reason, rows[3].Reason = "", ""
	data, err := ParetoDocument(rows, a, m, nil)
	if err != nil || !strings.Contains(string(data), `"capacity_bounded_points": [
    "a",
    "d"
  ]`) || !strings.Contains(string(data), `"capacity_bounded_count": 2`) {
		t.Errorf("pareto.json (%v):\n%s", err, data)
	}
	if got := BoundedCandidates(rows, a, &Manifest{}); got != nil {
		t.Errorf("without a capacity search: %v", got)
	}
}
