package results

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/optimization"
)

// TestParetoFrontHandMade checks the front over (maximize throughput, minimize TTFT, minimize
// ITL) on a set with a dominated point, a tie on one objective, exact duplicates and a point
// that is only better on one axis.
func TestParetoFrontHandMade(t *testing.T) {
	dirs := []optimization.Direction{optimization.Maximize, optimization.Minimize, optimization.Minimize}
	vecs := [][]float64{
		0: {100, 50, 10}, // front
		1: {90, 60, 12},  // dominated by 0 on every axis
		2: {100, 50, 10}, // duplicate of 0: on the front too
		3: {120, 80, 15}, // best throughput: front
		4: {100, 50, 11}, // ties 0 on two axes, worse ITL: dominated by 0
		5: {80, 20, 30},  // best TTFT: front
		6: {80, 20, 30},  // duplicate of 5
		7: {70, 20, 30},  // ties 5 on TTFT and ITL, worse throughput: dominated
		8: {60, 90, 5},   // best ITL: front
		9: {120, 81, 15}, // dominated by 3 (worse TTFT only)
	}
	got := ParetoFront(vecs, dirs)
	// Best first by throughput, then TTFT, then ITL; duplicates in input order.
	want := []int{3, 0, 2, 5, 6, 8}
	if !slices.Equal(got, want) {
		t.Fatalf("front = %v, want %v", got, want)
	}
	// Brute-force check of the definition on the same set.
	for i := range vecs {
		dominated := false
		for j := range vecs {
			if j != i && dominates(vecs[j], vecs[i], dirs) {
				dominated = true
			}
		}
		if dominated == slices.Contains(got, i) {
			t.Errorf("point %d: dominated=%v but on front=%v", i, dominated, slices.Contains(got, i))
		}
	}
}

func TestParetoFrontEdgeCases(t *testing.T) {
	if got := ParetoFront(nil, []optimization.Direction{optimization.Maximize}); len(got) != 0 {
		t.Errorf("empty set: front %v", got)
	}
	// One objective: only the best value(s) survive.
	got := ParetoFront([][]float64{{3}, {5}, {5}, {1}}, []optimization.Direction{optimization.Maximize})
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("single objective: front %v, want [1 2]", got)
	}
	got = ParetoFront([][]float64{{3}, {5}, {5}, {1}}, []optimization.Direction{optimization.Minimize})
	if !slices.Equal(got, []int{3}) {
		t.Errorf("single minimized objective: front %v, want [3]", got)
	}
}

// TestParetoFrontRandomAgainstBruteForce compares the sorted algorithm with the O(n²) definition
// on pseudo-random sets with many ties (small integer values), for one, two (the O(n log n)
// sweep) and three objectives; the front is in lexicographic order, ties in input order.
func TestParetoFrontRandomAgainstBruteForce(t *testing.T) {
	seed := uint64(7)
	next := func() float64 { // xorshift, values 0..4 to force ties
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return float64(seed % 5)
	}
	for _, dirs := range [][]optimization.Direction{{optimization.Minimize}, {optimization.Maximize, optimization.Minimize}, {optimization.Minimize, optimization.Minimize}, {optimization.Maximize, optimization.Minimize, optimization.Minimize}} {
		for trial := 0; trial < 50; trial++ {
			vecs := make([][]float64, 40)
			for i := range vecs {
				vecs[i] = make([]float64, len(dirs))
				for k := range vecs[i] {
					vecs[i][k] = next()
				}
			}
			got := ParetoFront(vecs, dirs)
			var want []int
			for i := range vecs {
				ok := true
				for j := range vecs {
					if j != i && dominates(vecs[j], vecs[i], dirs) {
						ok = false
						break
					}
				}
				if ok {
					want = append(want, i)
				}
			}
			slices.SortStableFunc(want, func(x, y int) int {
				for k, d := range dirs {
					if a, b := vecs[x][k], vecs[y][k]; a != b {
						if d.Better(a, b) {
							return -1
						}
						return 1
					}
				}
				return 0
			})
			if !slices.Equal(got, want) {
				t.Fatalf("%v trial %d: front %v, brute force %v", dirs, trial, got, want)
			}
		}
	}
}

func ptr(x float64) *float64 { return &x }
func iptr(x int64) *int64    { return &x }

// row builds an ok row with the default objectives' metrics.
func row(id string, gpus int64, tput, ttft, itl float64) Row {
	return Row{PointID: id, Status: StatusOK, GPUs: gpus, CompletedRequests: iptr(10),
		OutputThroughputPerGPUTokS: ptr(tput), OutputThroughputTokS: ptr(tput * float64(gpus)),
		P99TTFTMs: ptr(ttft), P99ITLMs: ptr(itl), MeanTTFTMs: ptr(ttft / 2), MeanTPOTMs: ptr(itl),
		MeanE2ELatencyMs: ptr(ttft * 4), NumTTFTSamples: iptr(10), NumTPOTSamples: iptr(10), NumE2ELatencySamples: iptr(10)}
}

func TestAnalyzeFiltersAndBest(t *testing.T) {
	rows := []Row{
		row("a", 1, 100, 50, 10),
		row("b", 2, 100, 50, 10), // same objectives as a, more GPUs: tied with a on the front; best is a
		{PointID: "c", Status: StatusFailed, GPUs: 1, Reason: "boom"},
		{PointID: "d", Status: StatusTimedOut, GPUs: 1},
		row("e", 16, 500, 10, 1), // dominates everything but is over budget
		row("f", 4, 80, 20, 30),
		row("g", 1, 90, 60, 12), // dominated
	}
	noSamples := row("h", 1, 1000, 0, 0)
	noSamples.CompletedRequests = iptr(0)
	rows = append(rows, noSamples)
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, MaxGPUs: 8})
	if err != nil {
		t.Fatal(err)
	}
	// a and b tie on every objective: one front entry, a (first in point order), with b tied.
	if got, want := a.Front, []int{0, 5}; !slices.Equal(got, want) || !slices.Equal(a.Ties[0], []int{1}) {
		t.Errorf("front rows = %v ties %v, want %v with row 1 tied to row 0", got, a.Ties, want)
	}
	wantExcl := map[string]int{ExcludedFailed: 1, ExcludedTimedOut: 1, ExcludedGPUBudget: 1, ExcludedNoSamples: 1}
	for k, v := range wantExcl {
		if a.Excluded[k] != v {
			t.Errorf("excluded[%s] = %d, want %d (all: %v)", k, a.Excluded[k], v, a.Excluded)
		}
	}
	if len(a.Best) != 3 || a.Best[0].Row != 0 || a.Best[1].Row != 5 || a.Best[2].Row != 0 {
		t.Errorf("best = %+v, want rows a (tput, fewer GPUs than b), f (TTFT), a (ITL)", a.Best)
	}
	if a.Ranking != nil {
		t.Errorf("pareto target has a ranking: %v", a.Ranking)
	}
}

// bestTieRows are candidates for the objectives (min gpus, min mean_ttft_ms[, max
// output_throughput_tok_s]): four 1-GPU points of different TTFT, the first in input order the
// slowest, and two 2-GPU points. Rows 1 and 3 are identical but for point_index.
func bestTieRows() []Row {
	mk := func(id string, index, gpus int64, meanTTFT, tput float64) Row {
		return Row{PointID: id, PointIndex: index, Status: StatusOK, GPUs: gpus, CompletedRequests: iptr(10),
			MeanTTFTMs: ptr(meanTTFT), OutputThroughputTokS: ptr(tput)}
	}
	return []Row{
		0: mk("slow1", 0, 1, 2256, 50),
		1: mk("fast1b", 4, 1, 25, 40),
		2: mk("mid1", 2, 1, 300, 200),
		3: mk("fast1a", 3, 1, 25, 40),
		4: mk("two", 1, 2, 10, 40),
		5: mk("twob", 5, 2, 10, 90),
	}
}

// TestAnalyzeBestIsOnFrontUnderTies checks that a best point breaks ties on its objective by the
// other objectives in order, then by point_index, so it is never a dominated point.
func TestAnalyzeBestIsOnFrontUnderTies(t *testing.T) {
	minGPUs := optimization.Objective{Metric: "gpus", Direction: optimization.Minimize}
	minTTFT := optimization.Objective{Metric: "mean_ttft_ms", Direction: optimization.Minimize}
	maxTput := optimization.Objective{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}
	for _, tc := range []struct {
		name      string
		objs      []optimization.Objective
		wantFront []int
		wantTies  map[int][]int
		wantBest  []int
	}{
		// (gpus, TTFT): slow1 (1, 2256) and mid1 (1, 300) are dominated by fast1a/fast1b (1, 25).
		// Best gpus: the 1-GPU tie goes to TTFT (25: fast1b, fast1a), then point_index 3 < 4:
		// fast1a. Best TTFT: the 10 ms tie (two, twob) has equal GPUs; point_index 1 < 5: two.
		// The front is 1, 3, 4, 5; equal vectors fold into one entry led by the point first in
		// point order: fast1a (3) over fast1b (1 at index 4), two (4, index 1) over twob (5).
		{"gpus_ttft", []optimization.Objective{minGPUs, minTTFT}, []int{3, 4}, map[int][]int{3: {1}, 4: {5}}, []int{3, 4}},
		// (gpus, TTFT, throughput): mid1 (1, 300, 200) now dominates slow1 (1, 2256, 50); two
		// (2, 10, 40) is dominated by twob (2, 10, 90). Best gpus: fast1a as above (throughput
		// ties at 40). Best TTFT: the 10 ms tie has equal GPUs, then throughput 90 > 40: twob.
		// Best throughput: mid1 (200), no tie.
		// The front is 1, 3, 2, 5; fast1a and fast1b still tie: one entry.
		{"gpus_ttft_tput", []optimization.Objective{minGPUs, minTTFT, maxTput}, []int{3, 2, 5}, map[int][]int{3: {1}}, []int{3, 5, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := bestTieRows()
			a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: tc.objs})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Front, tc.wantFront) || fmt.Sprint(a.Ties) != fmt.Sprint(tc.wantTies) {
				t.Errorf("front = %v ties %v, want %v ties %v", a.Front, a.Ties, tc.wantFront, tc.wantTies)
			}
			if len(a.Best) != len(tc.wantBest) {
				t.Fatalf("best = %+v, want rows %v", a.Best, tc.wantBest)
			}
			for k, b := range a.Best {
				if b.Objective != tc.objs[k] || b.Row != tc.wantBest[k] {
					t.Errorf("best %s = row %d (%s), want row %d (%s)", b.Objective, b.Row, rows[b.Row].PointID,
						tc.wantBest[k], rows[tc.wantBest[k]].PointID)
				}
				if !slices.Contains(a.Front, b.Row) {
					t.Errorf("best %s = row %d is not on the front %v", b.Objective, b.Row, a.Front)
				}
			}
		})
	}
}

func TestAnalyzeStrictSLAAndRanking(t *testing.T) {
	rows := []Row{row("a", 1, 100, 50, 10), row("b", 2, 300, 400, 10), row("c", 1, 200, 100, 20)}
	for i := range rows {
		rows[i].SLATTFTMs = ptr(100) // mean TTFT = p99/2: a 25, b 200 (breaks), c 50
	}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughputPerGPU, StrictSLA: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Excluded[ExcludedSLA] != 1 || slices.Contains(a.Candidates, 1) {
		t.Errorf("strict SLA should exclude b: excluded %v, candidates %v", a.Excluded, a.Candidates)
	}
	if !slices.Equal(a.Ranking, []int{2, 0}) {
		t.Errorf("ranking by throughput_per_gpu = %v, want [2 0]", a.Ranking)
	}
	// Without an SLA bound on the row, strict SLA fails closed.
	rows[0].SLATTFTMs = nil
	a, _ = Analyze(rows, optimization.Settings{StrictSLA: true})
	if slices.Contains(a.Candidates, 0) {
		t.Errorf("a row without an SLA passed the strict SLA filter")
	}
	// Minimize TTFT ranking: missing values rank worst.
	rows = []Row{row("a", 1, 100, 50, 10), row("b", 1, 100, 30, 10)}
	rows[1].MeanTTFTMs = nil
	a, _ = Analyze(rows, optimization.Settings{Target: optimization.TargetTTFT, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}})
	if !slices.Equal(a.Ranking, []int{0, 1}) {
		t.Errorf("ranking by ttft with a missing value = %v, want [0 1]", a.Ranking)
	}
}

func TestAnalyzeRejectsBadSettings(t *testing.T) {
	if _, err := Analyze(nil, optimization.Settings{Objectives: []optimization.Objective{{Metric: "no_such_metric", Direction: optimization.Maximize}}}); err == nil {
		t.Error("unknown metric accepted")
	}
	if _, err := Analyze(nil, optimization.Settings{Target: "fastest"}); err == nil {
		t.Error("unknown target accepted")
	}
	if _, err := Analyze(nil, optimization.Settings{Objectives: []optimization.Objective{{Metric: "gpus", Direction: "up"}}}); err == nil {
		t.Error("bad direction accepted")
	}
	if _, err := Analyze(nil, optimization.Settings{Objectives: []optimization.Objective{{Metric: "gpus", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}, {Metric: "gpus", Direction: optimization.Minimize}}}); err == nil ||
		!strings.Contains(err.Error(), "objective gpus is listed twice") {
		t.Errorf("a metric listed twice: %v", err)
	}
}

func TestParseObjective(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want optimization.Objective
		ok   bool
	}{
		{"max:output_throughput_tok_s", optimization.Objective{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, true},
		{"minimize:p99_ttft_ms", optimization.Objective{Metric: "p99_ttft_ms", Direction: optimization.Minimize}, true},
		{"min:gpus", optimization.Objective{Metric: "gpus", Direction: optimization.Minimize}, true},
		{"p99_ttft_ms", optimization.Objective{}, false},
		{"down:p99_ttft_ms", optimization.Objective{}, false},
		{"min:mode", optimization.Objective{}, false},        // a string column is not a metric
		{"max:point_index", optimization.Objective{}, false}, // the grid's numbering is not one either
		{"min:p99_ttft", optimization.Objective{}, false},
	} {
		got, err := ParseObjective(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseObjective(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	// The other order gets the form to write.
	if _, err := ParseObjective("p99_ttft_ms:min"); err == nil || err.Error() != `objective "p99_ttft_ms:min": the direction comes first: write min:p99_ttft_ms` {
		t.Errorf("METRIC:DIRECTION: %v", err)
	}
	if x := score(&Row{}, optimization.Objective{Metric: "p99_ttft_ms", Direction: optimization.Minimize}); !math.IsInf(x, 1) {
		t.Errorf("missing minimized metric scores %v, want +Inf", x)
	}
}

// A point that rejected requests is degraded: its numbers cover only what it served, so it stays
// off the front even when it dominates, unless max_rejected_ratio allows its share (1 of 4).
func TestDegradedOffFront(t *testing.T) {
	served := row("served", 1, 100, 50, 10)
	dropped := row("dropped", 1, 200, 20, 5) // dominates "served" on every objective
	dropped.Status, dropped.OfferedRequests, dropped.RejectedRequests = StatusDegraded, iptr(4), iptr(1)
	rows := []Row{served, dropped}
	for _, c := range []struct {
		ratio float64
		front string
	}{{0, "served"}, {0.2, "served"}, {0.25, "dropped"}} {
		a, err := Analyze(rows, optimization.Settings{MaxRejectedRatio: c.ratio})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Front) != 1 || rows[a.Front[0]].PointID != c.front {
			t.Errorf("max_rejected_ratio %g: front %v, want [%s]", c.ratio, a.Front, c.front)
		}
		for _, b := range a.Best {
			if rows[b.Row].PointID != c.front {
				t.Errorf("max_rejected_ratio %g: best %s for %s", c.ratio, rows[b.Row].PointID, b.Objective)
			}
		}
		if c.front == "served" && a.Excluded[ExcludedRejected] != 1 {
			t.Errorf("max_rejected_ratio %g: excluded %v", c.ratio, a.Excluded)
		}
	}
}

// NewRow marks an ok record with rejected requests degraded, with the counts in its reason.
func TestNewRowDegraded(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 2048, "offered_requests": 2048, "completed_requests": 512, "rejected_requests": 1536,
		"rejected_requests_by_reason.context_length": 1536, "unfinished_requests": 0, "duration_ms": 1000,
	}}
	r := NewRow(PointInfo{ID: "p"}, rec)
	want := "rejected_requests: 1536 of 2048 offered requests rejected (context_length 1536)"
	if r.Status != StatusDegraded || r.Reason != want || *r.CompletionRatio != 0.25 {
		t.Fatalf("status %q reason %q completion %v; want degraded, %q, 0.25", r.Status, r.Reason, *r.CompletionRatio, want)
	}
}

// A point whose completed requests stopped short of their output is degraded too, and its
// truncated requests count against max_rejected_ratio: 512 truncated of 2048 offered is 0.25,
// and beyond it the point is counted as truncated_requests.
func TestNewRowTruncatedIsDegraded(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 2048, "offered_requests": 2048, "completed_requests": 2048, "rejected_requests": 0,
		"unfinished_requests": 0, "truncated_requests": 512, "truncated_output_tokens": 40960, "duration_ms": 1000,
		"output_throughput_tok_s": 100,
	}}
	r := NewRow(PointInfo{ID: "p"}, rec)
	want := "truncated_requests: 512 of 2048 completed requests stopped short of their requested output (40960 output tokens not generated)"
	if r.Status != StatusDegraded || r.Reason != want || r.RejectedRatio() != 0.25 {
		t.Fatalf("status %q reason %q ratio %v; want degraded, %q, 0.25", r.Status, r.Reason, r.RejectedRatio(), want)
	}
	for _, c := range []struct {
		max  float64
		want string
	}{{0, ExcludedTruncated}, {0.2, ExcludedTruncated}, {0.25, ""}} {
		if got := exclusion(&r, optimization.Settings{MaxRejectedRatio: c.max}, false); got != c.want {
			t.Errorf("max_rejected_ratio %v: exclusion %q, want %q", c.max, got, c.want)
		}
	}
	rec.Summary["rejected_requests"], rec.Summary["rejected_requests_by_reason.kv_capacity"] = 8, 8
	r = NewRow(PointInfo{ID: "p"}, rec)
	if !strings.HasPrefix(r.Reason, "rejected_requests: 8 of 2048 offered requests rejected (kv_capacity 8); truncated_requests: 512") {
		t.Errorf("reason %q", r.Reason)
	}
}

// A run that stopped with a backlog (a max_virtual_time_seconds stop on a deployment that fell
// behind) is degraded: its latencies cover only the 7 requests that finished, at 2.5 requests/s
// and 1.4 s each, which keep 3.5 in flight (Little's law); 88 unfinished of 95 offered is more
// than twice that, and they count against max_rejected_ratio. 7 unfinished (at most 2 × 3.5) are
// the run's edge: the point stays ok and its ratio 0.
func TestNewRowUnfinishedIsDegraded(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 95, "offered_requests": 95, "completed_requests": 7, "rejected_requests": 0,
		"unfinished_requests": 88, "truncated_requests": 0, "duration_ms": 3000, "output_throughput_tok_s": 100,
		"request_throughput_rps": 2.5, "mean_e2e_latency_ms": 1400,
	}}
	r := NewRow(PointInfo{ID: "p"}, rec)
	want := "unfinished_requests: 88 of 95 offered requests unfinished when the run stopped (traffic.stop.max_virtual_time_seconds), " +
		"more than twice the 3.5 its completion rate and mean latency keep in flight: a queue grew, and no latency counts them"
	if r.Status != StatusDegraded || r.Reason != want || math.Abs(r.RejectedRatio()-88.0/95) > 1e-15 {
		t.Fatalf("status %q reason %q ratio %v; want degraded, %q, 88/95", r.Status, r.Reason, r.RejectedRatio(), want)
	}
	if got := exclusion(&r, optimization.Settings{}, false); got != ExcludedUnfinished {
		t.Errorf("exclusion %q, want %q", got, ExcludedUnfinished)
	}
	rec.Summary["unfinished_requests"] = 7
	if r := NewRow(PointInfo{ID: "p"}, rec); r.Status != StatusOK || r.RejectedRatio() != 0 {
		t.Errorf("7 unfinished: status %q ratio %v, want ok and 0", r.Status, r.RejectedRatio())
	}
	rec.Summary["unfinished_requests"] = 8
	if r := NewRow(PointInfo{ID: "p"}, rec); r.Status != StatusDegraded {
		t.Errorf("8 unfinished: status %q, want degraded", r.Status)
	}
}

// An open-loop point whose system gained more than a tenth of its window's arrivals (66 of 564,
// the user trial's 20 requests/s on one H200 that serves about 18) is degraded as overloaded and
// kept off the front by its gain's share of the offered requests; a gain of 8 of 226 (its 5
// requests/s) is a deployment keeping up.
func TestNewRowOverloadedIsDegraded(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 600, "offered_requests": 600, "completed_requests": 600, "rejected_requests": 0,
		"unfinished_requests": 0, "truncated_requests": 0, "duration_ms": 30000, "output_throughput_tok_s": 2000,
	}, Backlog: &sim.Backlog{Arrived: 564, AtStart: 12, AtEnd: 78}}
	r := NewRow(PointInfo{ID: "p"}, rec)
	want := "overloaded: its system held 66 more requests at its last arrival than when its measured window began, of 564 that " +
		"arrived in it: arrivals outpace what it serves, so its queue and latencies grow with the run's length"
	if r.Status != StatusDegraded || r.Reason != want || math.Abs(r.RejectedRatio()-66.0/600) > 1e-15 ||
		*r.BacklogGrowthRequests != 66 || *r.WindowArrivedRequests != 564 {
		t.Fatalf("status %q reason %q ratio %v; want degraded, %q, 66/600", r.Status, r.Reason, r.RejectedRatio(), want)
	}
	if got := exclusion(&r, optimization.Settings{}, false); got != ExcludedOverloaded {
		t.Errorf("exclusion %q, want %q", got, ExcludedOverloaded)
	}
	// Stopped by time with 88 unfinished (backlogged: over twice the 3.5 in flight) and a gain of
	// 66: the same queue counted once, the larger.
	both := Row{OfferedRequests: i64(600), UnfinishedRequests: i64(88), RequestThroughputRPS: f64(2.5), MeanE2ELatencyMs: f64(1400),
		BacklogGrowthRequests: i64(66), WindowArrivedRequests: i64(564)}
	if !both.Backlogged() || !both.Overloaded() || math.Abs(both.RejectedRatio()-88.0/600) > 1e-15 {
		t.Errorf("backlogged and overloaded: ratio %v, want 88/600", both.RejectedRatio())
	}
	rec.Backlog = &sim.Backlog{Arrived: 226, AtStart: 3, AtEnd: 11}
	if r := NewRow(PointInfo{ID: "p"}, rec); r.Status != StatusOK || r.RejectedRatio() != 0 || *r.BacklogGrowthRequests != 8 ||
		*r.QueueGrowthRequests != 0 {
		t.Errorf("a gain of 8 of 226: status %q ratio %v, want ok and 0", r.Status, r.RejectedRatio())
	}
	// predict's 20 requests/s over 2,000 arrivals (sim.TestQueueOverloadNearCapacity): a window
	// too short to judge the system's gain of 135 (no backlog_growth_requests), whose queue grew
	// by 134 of 1,421 arrivals (over 3 × √1,421 = 113): degraded by its queue, 134 behind.
	rec.Summary["offered_requests"], rec.Summary["num_requests"], rec.Summary["completed_requests"] = 2000, 2000, 2000
	rec.Backlog = &sim.Backlog{Arrived: 1421, AtStart: 329, AtEnd: 464, QueuedAtStart: 74, QueuedAtEnd: 208, QueueOnly: true}
	r = NewRow(PointInfo{ID: "p"}, rec)
	want = "overloaded: its queue (requests not yet admitted by a worker) held 134 more at its last arrival than when its " +
		"measured window began, of 1421 that arrived in it: arrivals outpace what it serves, so its queue and latencies grow " +
		"with the run's length"
	if r.Status != StatusDegraded || r.Reason != want || *r.BacklogGrowthRequests != 135 || *r.BacklogGrowthJudged ||
		*r.QueueGrowthRequests != 134 || math.Abs(r.RejectedRatio()-134.0/2000) > 1e-15 {
		t.Errorf("queue-judged: status %q reason %q growth %v ratio %v; want degraded, %q, a system growth of 135 not judged, 134/2000",
			r.Status, r.Reason, r.BacklogGrowthRequests, r.RejectedRatio(), want)
	}
}

// An autoscaled open-loop point whose window drained its system (serving, after
// the planner added workers, a queue built before its window: the user trial's one H200 at 40
// requests/s, 584 fewer at the end of a window of 4,512 arrivals, serving 44.6 requests/s at a
// mean latency of 14.3 s, 639 in flight; bound 3 × √(2 × 639) = 107) is degraded as drained and
// kept off the front by the requests it lost; a loss of 100 is within a steady state's swings.
func TestNewRowDrainedIsDegraded(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 6000, "offered_requests": 6000, "completed_requests": 4512, "rejected_requests": 0,
		"unfinished_requests": 0, "truncated_requests": 0, "duration_ms": 150000, "output_throughput_tok_s": 5000,
		"request_throughput_rps": 44.7, "mean_e2e_latency_ms": 14300, "peak_gpus": 3,
	}, Backlog: &sim.Backlog{Arrived: 4512, AtStart: 1200, AtEnd: 616, QueuedAtStart: 500, QueuedAtEnd: 15}}
	r := NewRow(PointInfo{ID: "p"}, rec)
	want := "drained: its system held 584 fewer requests at its last arrival than when its measured window began (of 4512 that " +
		"arrived in it; it keeps about 639 in flight): it served work queued before its window, so its throughput counts " +
		"requests offered earlier; an autoscaled deployment still draining what it queued before the planner added workers " +
		"measures so (lengthen the run)"
	if r.Status != StatusDegraded || r.Reason != want || !r.Drained() || r.Overloaded() || math.Abs(r.RejectedRatio()-584.0/6000) > 1e-15 {
		t.Errorf("status %q reason %q ratio %v; want degraded, %q, 584/6000", r.Status, r.Reason, r.RejectedRatio(), want)
	}
	if got := exclusion(&r, optimization.Settings{}, false); got != ExcludedDrained {
		t.Errorf("exclusion %q, want %q", got, ExcludedDrained)
	}
	// The same loss under a rate profile (a poisson load with no single rate) is its rate
	// stepping down, not a drain; under a poisson load of 40 requests/s it is one.
	profile := r
	profile.LoadType = "poisson"
	if profile.Drained() || profile.RejectedRatio() != 0 {
		t.Errorf("under a rate profile: drained %v, ratio %v; want neither", profile.Drained(), profile.RejectedRatio())
	}
	if profile.LoadRequestsPerSecond = f64(40); !profile.Drained() {
		t.Error("under a poisson load of 40 requests/s: not drained")
	}
	rec.Backlog = &sim.Backlog{Arrived: 4512, AtStart: 700, AtEnd: 600}
	if r := NewRow(PointInfo{ID: "p"}, rec); r.Status != StatusOK || r.Drained() || r.RejectedRatio() != 0 {
		t.Errorf("a loss of 100 with 639 in flight: status %q ratio %v, want ok and 0", r.Status, r.RejectedRatio())
	}
	// A static deployment (no peak_gpus: no planner) cannot drain work queued before a window
	// that starts after its fill: its loss is its count's swing, however large.
	delete(rec.Summary, "peak_gpus")
	rec.Backlog = &sim.Backlog{Arrived: 4512, AtStart: 1200, AtEnd: 616}
	if r := NewRow(PointInfo{ID: "p"}, rec); r.Status != StatusOK || r.Drained() || r.RejectedRatio() != 0 {
		t.Errorf("a static point's loss of 584: status %q (%s) ratio %v, want ok and 0", r.Status, r.Reason, r.RejectedRatio())
	}
}

// A degraded point beyond max_rejected_ratio is excluded under the key of what put it there:
// rejected_requests when its rejected, truncated or backlogged requests alone do (with the
// default 0, whenever it rejected any, overloaded or not), else overloaded or drained, else
// (only the sum is over) rejected_requests; Analyze counts it so, and pareto.json, report.md and
// the no-feasible error print Excluded as it is.
func TestDegradedExclusionKey(t *testing.T) {
	// The overloaded window of TestNewRowOverloadedIsDegraded (66 behind of 600 offered) and the
	// drained one of TestNewRowDrainedIsDegraded (584 lost of 6,000).
	overloaded := func(rejected, truncated int64) Row {
		return Row{PointID: "o", Status: StatusDegraded, OfferedRequests: i64(600), RejectedRequests: iptr(rejected),
			TruncatedRequests: iptr(truncated), CompletedRequests: iptr(600 - rejected), WindowArrivedRequests: i64(564),
			BacklogGrowthRequests: i64(66), BacklogGrowthJudged: boolp(true)}
	}
	drained := Row{PointID: "d", Status: StatusDegraded, OfferedRequests: i64(6000), CompletedRequests: i64(4512),
		RequestThroughputRPS: f64(44.7), MeanE2ELatencyMs: f64(14300), WindowArrivedRequests: i64(4512),
		BacklogGrowthRequests: i64(-584), BacklogGrowthJudged: boolp(true), PeakGPUs: i64(3)} // autoscaled: the planner's run
	for _, c := range []struct {
		name  string
		r     Row
		ratio float64
		want  string
	}{
		{"overloaded alone", overloaded(0, 0), 0, ExcludedOverloaded},
		{"overloaded, 1 rejected", overloaded(1, 0), 0, ExcludedRejected},
		{"overloaded, 1 truncated", overloaded(0, 1), 0, ExcludedTruncated},
		{"overloaded, 2 truncated beside 1 rejected", overloaded(1, 2), 0, ExcludedTruncated},
		{"overloaded, 2 rejected beside 2 truncated", overloaded(2, 2), 0, ExcludedRejected},
		{"overloaded, 1 rejected within 1%", overloaded(1, 0), 0.01, ExcludedOverloaded},
		{"overloaded, 12 rejected over 1%", overloaded(12, 0), 0.01, ExcludedRejected},
		{"overloaded within 12%", overloaded(0, 0), 0.12, ""},
		{"only the sum over 12%", overloaded(7, 0), 0.12, ExcludedOverloaded},
		{"drained alone", drained, 0, ExcludedDrained},
		{"drained within 10%", drained, 0.1, ""},
	} {
		if !c.r.Overloaded() && !c.r.Drained() {
			t.Fatalf("%s: row neither overloaded nor drained", c.name)
		}
		c.r.OutputThroughputPerGPUTokS, c.r.P99TTFTMs, c.r.P99ITLMs, c.r.GPUs = f64(1), f64(1), f64(1), 1
		if got := exclusion(&c.r, optimization.Settings{MaxRejectedRatio: c.ratio}, false); got != c.want {
			t.Errorf("%s (max_rejected_ratio %g): exclusion %q, want %q", c.name, c.ratio, got, c.want)
		}
	}
	a, err := Analyze([]Row{overloaded(0, 0), drained, overloaded(3, 0)}, optimization.Settings{Objectives: optimization.DefaultObjectives()})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{ExcludedOverloaded: 1, ExcludedDrained: 1, ExcludedRejected: 1}; !maps.Equal(a.Excluded, want) {
		t.Errorf("excluded %v, want %v", a.Excluded, want)
	}
}

// TestAnalyzeComparesAtObjectiveDigits checks that values agreeing to ObjectiveDigits significant
// digits compare equal: the sweep's case of a 4-replica point whose p99 ITL differs from a
// 1-replica point's in its last bits only (same TTFT, lower throughput) is dominated, where
// compared exactly it stayed on the front; a point better by a millionth stays; two points whose
// vectors agree that far are ties; the reported values keep every digit.
func TestAnalyzeComparesAtObjectiveDigits(t *testing.T) {
	rows := []Row{
		row("one", 1, 549.6, 175.0875, 5.963513989932835),
		row("four", 4, 532.7, 175.0875, 5.963513989931016), // lower ITL by 2e-12 ms only
		row("finer", 1, 500, 175.0875, 5.963508),           // lower ITL by 1e-6 relative: a real edge
		row("twin", 1, 549.6000000000001, 175.0875, 5.96351398993),
	}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2}; !slices.Equal(a.Front, want) || !slices.Equal(a.Ties[0], []int{3}) {
		t.Errorf("front %v ties %v; want %v (\"four\" dominated, \"finer\" kept) with \"twin\" tied to \"one\"", a.Front, a.Ties, want)
	}
	if got := a.Values[1][2]; got != 5.963513989931016 {
		t.Errorf("reported p99 ITL of \"four\" = %v; want the unrounded 5.963513989931016", got)
	}
	// Best throughput: "one" and "twin" tie at nine digits (the raw 549.6000000000001 would pick
	// "twin", which is folded under "one"); TTFT ties everywhere, then throughput: "one"; ITL: "finer".
	if len(a.Best) != 3 || a.Best[0].Row != 0 || a.Best[1].Row != 0 || a.Best[2].Row != 2 {
		t.Errorf("best = %+v; want rows 0, 0, 2", a.Best)
	}
	// A scalar ranking compares at nine digits too: equal throughput up to noise goes to fewer GPUs.
	two, one := row("two-gpus", 2, 500.00000000000006, 10, 1), row("one-gpu", 1, 1000, 10, 1)
	r, err := Analyze([]Row{two, one}, optimization.Settings{Target: "throughput"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Ranking, []int{1, 0}) {
		t.Errorf("ranking %v; want the 1-GPU point first (throughputs %v and %v equal at nine digits)", r.Ranking,
			*two.OutputThroughputTokS, *one.OutputThroughputTokS)
	}
	for _, c := range []struct{ in, want float64 }{
		{5.963513989932835, 5.96351399}, {-1234567890123, -1234567890000}, {0, 0}, {math.Copysign(0, -1), 0}, {5e-324, 5e-324},
		{1.7976931348623157e308, 1.79769313e308}, {math.Inf(1), math.Inf(1)},
	} {
		if got := atObjectiveDigits(c.in); got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("atObjectiveDigits(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Overrides replace exactly the settings they set and keep the others; the default manifest is
// target pareto over the default objectives.
func TestOverridesApply(t *testing.T) {
	base := optimization.Settings{Target: optimization.TargetThroughput, Objectives: optimization.DefaultObjectives(), MinGPUs: 2,
		MaxGPUs: 16, StrictSLA: true, MaxRejectedRatio: 0.1}
	s := base
	Overrides{}.Apply(&s)
	if !reflect.DeepEqual(s, base) {
		t.Errorf("empty overrides changed %+v to %+v", base, s)
	}
	target, strict, maxGPUs, ratio := optimization.TargetMinGPUs, false, 8, 0.0
	objs := []optimization.Objective{{Metric: "gpus", Direction: optimization.Minimize}}
	Overrides{Objectives: objs, Target: &target, StrictSLA: &strict, MaxGPUs: &maxGPUs, MaxRejectedRatio: &ratio}.Apply(&s)
	want := optimization.Settings{Target: optimization.TargetMinGPUs, Objectives: objs, MinGPUs: 2, MaxGPUs: 8}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("overrides gave %+v, want %+v", s, want)
	}
	if m := DefaultManifest(); !m.Defaulted || m.Settings.Target != optimization.TargetPareto ||
		!reflect.DeepEqual(m.Settings.Objectives, optimization.DefaultObjectives()) {
		t.Errorf("DefaultManifest = %+v", m)
	}
}

// An autoscaled row is priced over its steady window, where its throughput is measured: a
// deployment the planner scaled from 4 workers of 1 GPU to 1 within the first 85 s of a 200 s run
// provisioned 365 worker-seconds in all (avg_gpus 1.825 over the run) but 100 in its window of
// 100 s after a warm-up at 100 s: avg_gpus 1, cost 4 USD an hour at 4 USD per GPU-hour, 1,000
// output tokens/s per GPU of the window's 1,000, and 4 / (1,000 × 3,600) × 1e6 = 1.111 USD per
// million output tokens (where the whole run's 1.825 GPUs gave 7.3 USD an hour, 2.028 USD per
// million). A static row keeps the whole run's.
func TestAutoscaledRowPricedOverItsWindow(t *testing.T) {
	rec := Record{PointID: "p", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 100, "offered_requests": 100, "completed_requests": 100, "rejected_requests": 0, "unfinished_requests": 0,
		"duration_ms": 200000, "decode_worker_seconds": 365, "decode_gpus_per_worker": 1, "gpu_hours": 365.0 / 3600,
		"output_throughput_tok_s": 1000, "peak_gpus": 4,
		windowMsKey: 100000, windowPrefillKey: 0, windowDecodeKey: 100,
	}}
	info := PointInfo{ID: "p", CostUSDPerHour: 16, DecodeGPUHourUSD: 4}
	near := func(a *float64, b float64) bool { return a != nil && math.Abs(*a-b) <= 1e-9*b }
	fv := func(a *float64) any {
		if a == nil {
			return nil
		}
		return *a
	}
	r := NewRow(info, rec)
	if !near(r.AvgGPUs, 1) || !near(r.CostUSDPerHour, 4) || !near(r.OutputThroughputPerGPUTokS, 1000) ||
		!near(r.USDPerMillionOutputTokens, 4/(1000*3600.0)*1e6) {
		t.Errorf("autoscaled: avg_gpus %v, cost %v, per GPU %v, USD/M %v; want 1, 4, 1000, 1.111", fv(r.AvgGPUs),
			fv(r.CostUSDPerHour), fv(r.OutputThroughputPerGPUTokS), fv(r.USDPerMillionOutputTokens))
	}
	for _, k := range []string{"peak_gpus", windowMsKey} {
		delete(rec.Summary, k)
	}
	r = NewRow(info, rec)
	if !near(r.AvgGPUs, 1.825) || !near(r.CostUSDPerHour, 16) {
		t.Errorf("without the window: avg_gpus %v, cost %v; want the whole run's 1.825 and the point's 16", fv(r.AvgGPUs), fv(r.CostUSDPerHour))
	}
}
