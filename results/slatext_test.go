package results

import (
	"github.com/servesweep/servesweep/sim/optimization"
	"strconv"
	"strings"
	"testing"
)

// SLAText names every bound with what it bounds, and the attainment target when a capacity
// search applies it; PricesText says whose the prices are.
func TestSLAAndPricesText(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	r := Row{SLATTFTMs: f(500), SLAITLMs: f(50), SLAP99ITLMs: f(50), CapacityProbes: i64(7), CostUSDPerHour: f(2.5)}
	m := &Manifest{Spec: "examples/default-sweep.yaml", CapacitySearch: &optimization.CapacitySearch{Attainment: 0.99},
		GPUHourUSD: map[string]float64{"h200_sxm": 3.5, "h100_sxm": 2.5}, ExamplePrices: true}
	want := "SLA (evaluation.sla): ttft_ms 500 (each request's TTFT <= 500 ms), itl_ms 50 (each request's mean " +
		"inter-token gap <= 50 ms): for at least 99 % of offered requests at each deployment's capacity (capacity search " +
		"attainment 0.99); p99_itl_ms 50 (the run's p99 of every inter-token gap <= 50 ms): over each run, at the row's " +
		"load (a row that misses one is infeasible)."
	if got := SLAText([]Row{{}, r}, m); got != want {
		t.Errorf("SLAText:\n%s\nwant\n%s", got, want)
	}
	want = "Prices (USD per GPU-hour): h100_sxm 2.5, h200_sxm 3.5: the built-in sweep's EXAMPLE prices, for illustration, " +
		"not quotes; set your own in optimization.cost.gpu_hour_usd of a spec (-c)."
	if got := PricesText([]Row{r}, m); got != want {
		t.Errorf("PricesText:\n%s\nwant\n%s", got, want)
	}
	m.ExamplePrices, m.Spec = false, "my.yaml"
	if got := PricesText([]Row{r}, m); got != "Prices (USD per GPU-hour): h100_sxm 2.5, h200_sxm 3.5: yours, from optimization.cost.gpu_hour_usd of my.yaml." {
		t.Errorf("PricesText, user's: %s", got)
	}
	if got := PricesText([]Row{r}, &Manifest{Defaulted: true}); !strings.Contains(got, "not known here: no sweep.json") {
		t.Errorf("PricesText without a manifest: %s", got)
	}
	if got := PricesText([]Row{r}, &Manifest{}); got != "Prices: the sweep's optimization.cost.gpu_hour_usd (its manifest does not record them)." {
		t.Errorf("PricesText of a manifest without prices: %s", got)
	}
	if got := SLAText([]Row{r}, nil); !strings.Contains(got, "(unknown here: no sweep.json beside the results)") {
		t.Errorf("SLAText of a search without a manifest: %s", got)
	}
	if got := PricesText([]Row{{}}, nil); got != "" {
		t.Errorf("PricesText without cost: %q", got)
	}

	// No capacity search, a median term: the per-request bound has no attainment target.
	g := Row{SLAE2EMs: f(2000), SLAP50TTFTMs: f(300)}
	want = "SLA (evaluation.sla): e2e_ms 2000 (each request's E2E latency <= 2000 ms): counted per request in goodput and " +
		"sla_attainment, with no attainment target (no capacity search); p50_ttft_ms 300 (the run's median TTFT over its " +
		"requests <= 300 ms): over each run, at the row's load (a row that misses one is infeasible)."
	if got := SLAText([]Row{g}, &Manifest{}); got != want {
		t.Errorf("SLAText without a search:\n%s\nwant\n%s", got, want)
	}
	if got := SLAText([]Row{{}}, nil); got != "SLA: none (no evaluation.sla): no latency bound applies." {
		t.Errorf("SLAText without an SLA: %s", got)
	}
	if got := SLAText(nil, nil); got != "" {
		t.Errorf("SLAText of no row: %q", got)
	}
}

// Every one of the 16 percentile keys has its sla_<key> column: a config setting all of them (to
// 1 … 16 ms in key order) gives them back in config.SLA.PercentileBounds order.
func TestPercentileBoundColumns(t *testing.T) {
	var keys, sets []string
	n := 0
	for _, lat := range []string{"ttft", "itl", "tpot", "e2e"} {
		for _, p := range []string{"50", "90", "95", "99"} {
			n++
			keys = append(keys, "p"+p+"_"+lat+"_ms")
			sets = append(sets, "p"+p+"_"+lat+"_ms: "+strconv.Itoa(n))
		}
	}
	cfg := percentileConfig(t, "{"+strings.Join(sets, ", ")+"}")
	r := NewRow(PointInfo{ID: "p", Config: cfg, GPUs: 1}, Record{PointID: "p", Status: StatusFailed})
	got := r.PercentileBounds()
	if len(got) != 16 {
		t.Fatalf("%d bounds, want 16", len(got))
	}
	for i, b := range got {
		if b.Key() != keys[i] || b.Ms != float64(i+1) {
			t.Errorf("bound %d: %s = %g, want %s = %d", i, b.Key(), b.Ms, keys[i], i+1)
		}
		if x, ok, _ := numericValue(&r, "sla_"+keys[i]); !ok || x != float64(i+1) {
			t.Errorf("column sla_%s = %v (%v), want %d", keys[i], x, ok, i+1)
		}
	}
	if r.SLAPercentileTermsMet != nil {
		t.Error("a failed point has sla_percentile_terms_met")
	}
}

// Under a capacity search a latency that ranks the points is measured at each deployment's own
// capacity: the note says so; cost and throughput objectives, or no capacity search, draw none.
func TestLatencyRankingNote(t *testing.T) {
	cs := &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05}}
	for _, c := range []struct {
		s    optimization.Settings
		m    *Manifest
		want string
	}{
		{optimization.Settings{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives()}, cs, "Note: p99_ttft_ms, p99_itl_ms rank the points"},
		{optimization.Settings{Target: optimization.TargetTTFT, Objectives: []optimization.Objective{{Metric: "gpus", Direction: optimization.Minimize}}}, cs,
			"Note: mean_ttft_ms ranks the points, but under a capacity search each row is measured at its own capacity"},
		{optimization.Settings{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives()}, &Manifest{}, ""},
		{optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{
			{Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize}, {Metric: "sla_ttft_ms", Direction: optimization.Minimize}}}, cs, ""},
	} {
		got := LatencyRankingNote(&Analysis{Settings: c.s}, c.m)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: note %q, want %q", c.s, got, c.want)
		}
	}
}

// Under strict_sla (or target min_gpus, which implies it) the SLA sentence says the means are held
// to the per-request bounds, as the printed front would otherwise read as if nothing enforced them.
func TestSLATextNamesStrictSLA(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	r := Row{SLATTFTMs: f(200), SLAITLMs: f(10)}
	head := "SLA (evaluation.sla): ttft_ms 200 (each request's TTFT <= 200 ms), itl_ms 10 (each request's mean inter-token gap " +
		"<= 10 ms): counted per request in goodput and sla_attainment, with no attainment target (no capacity search); "
	for _, c := range []struct {
		s    optimization.Settings
		want string
	}{
		{optimization.Settings{StrictSLA: true}, head + "with optimization.strict_sla, a candidate's mean TTFT, mean TPOT and mean E2E " +
			"latency must be within them."},
		{optimization.Settings{Target: optimization.TargetMinGPUs}, head + "under target min_gpus (as with optimization.strict_sla), " +
			"a candidate's mean TTFT, mean TPOT and mean E2E latency must be within them."},
	} {
		if got := SLAText([]Row{r}, &Manifest{Settings: c.s}); got != c.want {
			t.Errorf("%+v:\n%s\nwant\n%s", c.s, got, c.want)
		}
	}
	if got := SLAText([]Row{r}, &Manifest{}); strings.Contains(got, "strict_sla") {
		t.Errorf("without strict_sla: %s", got)
	}
}
