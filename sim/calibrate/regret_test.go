package calibrate

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// decisionRowsByHand is a hand-made validate run. Every row has OSL 101, so a request takes
// TTFT + 100·TPOT ms and ThroughputPerGPU = concurrency·101·1000 / (TTFT + 100·TPOT) / GPUs.
//
// Group A (m1, h100, vllm, ISL 1000, OSL 101), 1 GPU each:
//
//	line conc  measured TTFT/TPOT → tok/s/GPU        predicted TTFT/TPOT → tok/s/GPU
//	 10    1   100 /  9 → 101000/1000 = 101          100 /  9 → 101
//	 11    4   100 / 14 → 404000/1500 = 269.33       100 / 14 → 269.33
//	 12    8   100 / 19 → 808000/2000 = 404          100 / 19 → 404
//	 13   16   100 / 29 → 1616000/3000 = 538.67      100 / 24 → 1616000/2500 = 646.4
//	 14   32   400 / 36 → 3232000/4000 = 808         100 / 45 → 3232000/4600 = 702.61
//
// Measured TTFTs are ≤ 300 ms except line 14's (400 ms), predicted TTFTs all 100 ms.
// Rows meeting a TPOT bound as measured: 8: none; 10, 12: {10}; 15: {10, 11} — fewer than 3, so
// TPOT bounds 8 … 15 are never counted. 20, 25: {10, 11, 12}; 30: {10 … 13}; 40, 60: {10 … 14},
// less line 14 under the 300 ms TTFT bound. So 5 TPOT bounds × 5 TTFT bounds = 25 SLAs count.
// Predicted feasible: 20: {10, 11, 12}; 25, 30, 40: {10 … 13}; 60: all.
//
//	TPOT  TTFT      pick (largest predicted)     best (measured)   regret
//	 20   any       12 (404)                     12                0, exact
//	 25   any       13 (646.4), measured TPOT 29 > 25: breaks     1
//	 30   any       13                           13                0, exact
//	 40   300       13                           13 (14 too slow)  0, exact
//	 40   ≥ 500     13 (14 predicted 45 > 40)    14                1 − 538.67/808 = 1 − (16/3000)/(32/4000) = 1/3
//	 60   300       14 (702.61), measured TTFT 400 > 300: breaks  1
//	 60   ≥ 500     14                           14                0, exact
//
// Sum of regrets: TTFT 300: 0+1+0+0+1 = 2; each of the 4 others: 0+1+0+1/3+0 = 4/3 → 2 + 16/3 =
// 22/3; mean 22/75. Exact: 3 per TTFT bound → 15 of 25 = 0.6. Both throughputs rise with the line,
// so the rank correlation is 1. Broken: TPOT 25 at each of the 5 TTFT bounds and 60/300, 6 SLAs;
// none unanswered.
//
// Group B (m1, h100, vllm, ISL 4000, OSL 101), 2 GPUs each, measured 100 / 9 (1000 ms request):
//
//	line conc  measured tok/s/GPU            predicted TTFT/TPOT → tok/s/GPU
//	 20    2   2·101000/1000/2 = 101         100 / 100 → 202000/10100/2 = 10
//	 21    4   202                           400 / 400 → 404000/40400/2 = 5
//	 22    8   404                           1600 / 1600 → 808000/161600/2 = 2.5
//
// All three meet every TPOT bound from 10 ms and every TTFT bound as measured: 8 × 5 = 40 SLAs,
// none predicted feasible (predicted TPOT > 60), so 40 regrets of 1 with no pick. The
// predicted order is the reverse of the measured one: rank correlation −1. 40 SLAs unanswered,
// none broken.
//
// Group C (a-model, h100, sglang, ISL 1000, OSL 101): lines 30, 31 simulated (1 GPU, conc 1,
// 50 / 5 measured and predicted, feasible everywhere); line 32 skipped, 33 with 0 GPUs and 34 with
// concurrency 0 carry the same values and must be ignored — counted, they would make 3 feasible
// rows and 45 SLAs. With 2 rows: 0 SLAs, nil regret, share and rank correlation.
//
// Group D (z-model) has only a skipped row: no group.
//
// Pooled: 25 + 40 = 65 SLAs; mean regret (22/3 + 40)/65 = 142/195 = 0.72820…; exact 15/65 =
// 3/13; mean rank correlation (1 + (−1))/2 = 0 over groups A and B; 5 + 3 + 2 = 10 rows; 6
// broken and 40 unanswered SLAs.
func decisionRowsByHand() []RowResult {
	a := func(line, conc int, mTTFT, mTPOT, pTTFT, pTPOT float64) RowResult {
		return RowResult{Line: line, Model: "m1", System: "h100", Backend: "vllm", ISL: 1000, OSL: 101,
			Concurrency: conc, GPUs: 1, MeasuredTTFTMs: mTTFT, MeasuredTPOTMs: mTPOT,
			PredictedTTFTMs: pTTFT, PredictedTPOTMs: pTPOT}
	}
	b := func(line, conc int, pTTFT, pTPOT float64) RowResult {
		return RowResult{Line: line, Model: "m1", System: "h100", Backend: "vllm", ISL: 4000, OSL: 101,
			Concurrency: conc, GPUs: 2, MeasuredTTFTMs: 100, MeasuredTPOTMs: 9,
			PredictedTTFTMs: pTTFT, PredictedTPOTMs: pTPOT}
	}
	c := func(line, conc, gpus int, skipped bool) RowResult {
		return RowResult{Line: line, Model: "a-model", System: "h100", Backend: "sglang", ISL: 1000, OSL: 101,
			Concurrency: conc, GPUs: gpus, MeasuredTTFTMs: 50, MeasuredTPOTMs: 5,
			PredictedTTFTMs: 50, PredictedTPOTMs: 5, Skipped: skipped}
	}
	return []RowResult{
		a(10, 1, 100, 9, 100, 9),
		a(11, 4, 100, 14, 100, 14),
		a(12, 8, 100, 19, 100, 19),
		a(13, 16, 100, 29, 100, 24),
		a(14, 32, 400, 36, 100, 45),
		b(20, 2, 100, 100),
		b(21, 4, 400, 400),
		b(22, 8, 1600, 1600),
		c(30, 1, 1, false),
		c(31, 2, 1, false),
		c(32, 4, 1, true),
		c(33, 8, 0, false),
		c(34, 0, 1, false),
		{Line: 40, Model: "z-model", System: "h100", Backend: "vllm", ISL: 1000, OSL: 101, Concurrency: 1,
			GPUs: 1, MeasuredTTFTMs: 50, MeasuredTPOTMs: 5, Skipped: true, Reason: "no config"},
	}
}

func decisionClose(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.15g, want %.15g", what, got, want)
	}
}

func decisionClosePtr(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %.15g", what, want)
		return
	}
	decisionClose(t, what, *got, want)
}

// decisionPickFor returns the group's pick for s, or nil when s was not counted.
func decisionPickFor(g DecisionGroup, s SLA) *DecisionPick {
	for i := range g.Picks {
		if g.Picks[i].SLA == s {
			return &g.Picks[i]
		}
	}
	return nil
}

func TestDecisionLadder(t *testing.T) {
	l := DecisionLadder()
	if len(l) != 45 {
		t.Fatalf("len = %d, want 45", len(l))
	}
	tpot := []float64{8, 10, 12, 15, 20, 25, 30, 40, 60}
	ttft := []float64{300, 500, 1000, 2000, 5000}
	for i, p := range tpot {
		for j, f := range ttft {
			if got, want := l[5*i+j], (SLA{TPOTMs: p, TTFTMs: f}); got != want {
				t.Errorf("ladder[%d] = %+v, want %+v", 5*i+j, got, want)
			}
		}
	}
	l[0].TPOTMs = 1
	if DecisionLadder()[0].TPOTMs != 8 {
		t.Error("DecisionLadder returned shared storage")
	}
}

func TestDecisionThroughputPerGPU(t *testing.T) {
	// Measured: 8 clients × 101 tokens per (100 + 100·19 = 2000 ms) request = 404 tok/s on 2 GPUs
	// = 202 tok/s/GPU. Predicted: (100 + 100·9 = 1000 ms) → 808 tok/s → 404 tok/s/GPU. Both exact
	// in float64.
	r := RowResult{Concurrency: 8, OSL: 101, GPUs: 2, MeasuredTTFTMs: 100, MeasuredTPOTMs: 19,
		PredictedTTFTMs: 100, PredictedTPOTMs: 9}
	if got := MeasuredThroughputPerGPU(r); got != 202 {
		t.Errorf("measured = %.17g, want 202", got)
	}
	if got := PredictedThroughputPerGPU(r); got != 404 {
		t.Errorf("predicted = %.17g, want 404", got)
	}
	// One output token: the request is the TTFT alone, 4 clients × 1 token / 0.25 s = 16 tok/s.
	if got := ThroughputPerGPU(4, 1, 1, 250, 1e6); got != 16 {
		t.Errorf("OSL 1 = %.17g, want 16", got)
	}
	for _, bad := range []float64{
		ThroughputPerGPU(8, 101, 0, 100, 19),
		ThroughputPerGPU(0, 101, 1, 100, 19),
		ThroughputPerGPU(8, 0, 1, 100, 19),
		ThroughputPerGPU(8, 101, 1, 0, 0),
		ThroughputPerGPU(8, 101, 1, math.Inf(1), 19),
	} {
		if !math.IsNaN(bad) {
			t.Errorf("undefined throughput = %g, want NaN", bad)
		}
	}
}

func TestDecisionMeetsSLABounds(t *testing.T) {
	s := SLA{TPOTMs: 20, TTFTMs: 300}
	for _, c := range []struct {
		ttft, tpot float64
		want       bool
	}{
		{300, 20, true},               // inclusive
		{300 * (1 + 5e-10), 20, true}, // within metrics.BoundTolerance
		{300 * (1 + 2e-9), 20, false}, // beyond it
		{100, 20.001, false},          // TPOT breaks
		{300.5, 10, false},            // TTFT breaks
		{math.NaN(), 10, false},       // undefined
	} {
		if got := MeetsSLA(c.ttft, c.tpot, s); got != c.want {
			t.Errorf("MeetsSLA(%g, %g) = %v, want %v", c.ttft, c.tpot, got, c.want)
		}
	}
}

func TestDecideHandMadeGroups(t *testing.T) {
	d := Decide(decisionRowsByHand())
	if len(d.Groups) != 3 {
		t.Fatalf("%d groups, want 3 (C, A, B): %+v", len(d.Groups), d.Groups)
	}
	gc, ga, gb := d.Groups[0], d.Groups[1], d.Groups[2]
	for i, want := range []struct {
		model, backend string
		isl            int
	}{{"a-model", "sglang", 1000}, {"m1", "vllm", 1000}, {"m1", "vllm", 4000}} {
		g := d.Groups[i]
		if g.Model != want.model || g.System != "h100" || g.Backend != want.backend || g.ISL != want.isl || g.OSL != 101 {
			t.Errorf("group %d = %s/%s/%s/%d/%d, want %s/h100/%s/%d/101", i, g.Model, g.System, g.Backend,
				g.ISL, g.OSL, want.model, want.backend, want.isl)
		}
	}

	// Group A.
	if ga.Rows != 5 || ga.SLAs != 25 || len(ga.Picks) != 25 {
		t.Errorf("A: rows %d, SLAs %d, picks %d; want 5, 25, 25", ga.Rows, ga.SLAs, len(ga.Picks))
	}
	decisionClosePtr(t, "A mean regret", ga.MeanRegret, 22.0/75)
	decisionClosePtr(t, "A exact share", ga.ExactShare, 0.6)
	decisionClosePtr(t, "A rank correlation", ga.RankCorrelation, 1)
	// Broken: line 13 (TPOT 24 predicted, 29 measured) picked under TPOT 25 at all five TTFT
	// bounds; line 14 (TTFT 100 predicted, 400 measured) under TPOT 60 with TTFT 300.
	if ga.BrokenSLAs != 6 || ga.UnansweredSLAs != 0 || ga.BrokenByTTFT != 1 || ga.BrokenByTPOT != 5 {
		t.Errorf("A: %d broken (%d by TTFT, %d by TPOT), %d unanswered SLAs; want 6 (1, 5), 0", ga.BrokenSLAs,
			ga.BrokenByTTFT, ga.BrokenByTPOT, ga.UnansweredSLAs)
	}
	// TPOT 15 ms: only lines 10 and 11 meet it as measured — fewer than 3, not counted.
	for _, ttft := range []float64{300, 500, 1000, 2000, 5000} {
		for _, tpot := range []float64{8, 10, 12, 15} {
			if p := decisionPickFor(ga, SLA{TPOTMs: tpot, TTFTMs: ttft}); p != nil {
				t.Errorf("A: SLA %g/%g counted with %d feasible rows", tpot, ttft, p.FeasibleRows)
			}
		}
	}
	for _, c := range []struct {
		sla              SLA
		feasible         int
		pick, best       int
		breaks, exact    bool
		regret, bestTput float64
	}{
		// Exact pick.
		{SLA{20, 300}, 3, 12, 12, false, true, 0, 404},
		// Predicted feasible (TPOT 24), measured infeasible (29 > 25): regret 1.
		{SLA{25, 1000}, 3, 13, 12, true, false, 1, 404},
		{SLA{30, 5000}, 4, 13, 13, false, true, 0, 16 * 101000.0 / 3000},
		{SLA{40, 300}, 4, 13, 13, false, true, 0, 16 * 101000.0 / 3000},
		// Wrong but feasible: 1 − 538.67/808 = 1/3.
		{SLA{40, 500}, 5, 13, 14, false, false, 1.0 / 3, 808},
		// Picks line 14 whose measured TTFT (400 ms) breaks the 300 ms bound.
		{SLA{60, 300}, 4, 14, 13, true, false, 1, 16 * 101000.0 / 3000},
		{SLA{60, 2000}, 5, 14, 14, false, true, 0, 808},
	} {
		p := decisionPickFor(ga, c.sla)
		if p == nil {
			t.Errorf("A: SLA %+v not counted", c.sla)
			continue
		}
		if p.FeasibleRows != c.feasible || !p.Picked || p.PickLine != c.pick || p.BestLine != c.best ||
			p.BreaksSLA != c.breaks || p.Exact != c.exact {
			t.Errorf("A: SLA %+v: feasible %d picked %v pick %d best %d breaks %v exact %v; want %d true %d %d %v %v",
				c.sla, p.FeasibleRows, p.Picked, p.PickLine, p.BestLine, p.BreaksSLA, p.Exact,
				c.feasible, c.pick, c.best, c.breaks, c.exact)
		}
		decisionClose(t, "A regret", p.Regret, c.regret)
		decisionClose(t, "A best tok/s/GPU", p.BestTokensPerSecPerGPU, c.bestTput)
	}
	if p := decisionPickFor(ga, SLA{40, 500}); p != nil {
		decisionClose(t, "A pick measured", p.PickMeasuredTokensPerSecPerGPU, 16*101000.0/3000)
		decisionClose(t, "A pick predicted", p.PickPredictedTokensPerSecPerGPU, 646.4)
	}
	// Picks come in ladder order.
	if ga.Picks[0].SLA != (SLA{20, 300}) || ga.Picks[24].SLA != (SLA{60, 5000}) {
		t.Errorf("A: picks from %+v to %+v, want 20/300 to 60/5000", ga.Picks[0].SLA, ga.Picks[24].SLA)
	}

	// Group B: no row predicted feasible, every counted SLA regret 1 with no pick.
	if gb.Rows != 3 || gb.SLAs != 40 {
		t.Errorf("B: rows %d, SLAs %d; want 3, 40", gb.Rows, gb.SLAs)
	}
	for _, p := range gb.Picks {
		if p.Picked || p.PickLine != 0 || p.BreaksSLA || p.Regret != 1 || p.Exact || p.BestLine != 22 {
			t.Errorf("B: SLA %+v: %+v, want no pick, regret 1, best line 22", p.SLA, p)
		}
		if p.SLA.TPOTMs < 10 {
			t.Errorf("B: SLA %+v counted, no row meets TPOT 8 ms", p.SLA)
		}
	}
	decisionClosePtr(t, "B mean regret", gb.MeanRegret, 1)
	decisionClosePtr(t, "B exact share", gb.ExactShare, 0)
	decisionClosePtr(t, "B rank correlation", gb.RankCorrelation, -1)
	if gb.BrokenSLAs != 0 || gb.UnansweredSLAs != 40 {
		t.Errorf("B: %d broken, %d unanswered SLAs; want 0, 40", gb.BrokenSLAs, gb.UnansweredSLAs)
	}

	// Group C: 2 rows, nothing counted.
	if gc.Rows != 2 || gc.SLAs != 0 || gc.Picks == nil || len(gc.Picks) != 0 || gc.MeanRegret != nil || gc.ExactShare != nil ||
		gc.RankCorrelation != nil {
		t.Errorf("C = %+v, want 2 rows and nothing counted", gc)
	}

	// Pooled.
	if d.Rows != 10 || d.SLAs != 65 {
		t.Errorf("rows %d, SLAs %d; want 10, 65", d.Rows, d.SLAs)
	}
	decisionClosePtr(t, "mean regret", d.MeanRegret, 142.0/195)
	decisionClosePtr(t, "exact share", d.ExactShare, 3.0/13)
	decisionClosePtr(t, "mean rank correlation", d.MeanRankCorrelation, 0)
	if d.BrokenSLAs != 6 || d.UnansweredSLAs != 40 || gc.BrokenSLAs != 0 || gc.UnansweredSLAs != 0 {
		t.Errorf("pooled %d broken, %d unanswered (C: %d, %d); want 6, 40 (0, 0)", d.BrokenSLAs, d.UnansweredSLAs, gc.BrokenSLAs, gc.UnansweredSLAs)
	}
}

func TestDecideSkippedRowsIgnored(t *testing.T) {
	all := decisionRowsByHand()
	var kept []RowResult
	for _, r := range all {
		if !r.Skipped && r.GPUs > 0 && r.Concurrency > 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) != len(all)-4 {
		t.Fatalf("kept %d of %d rows, want all but 4", len(kept), len(all))
	}
	if got, want := Decide(all), Decide(kept); !reflect.DeepEqual(got, want) {
		t.Errorf("ignored rows changed the result:\n got %+v\nwant %+v", got, want)
	}
	// Counted, the three ignored rows of group C would make 3 feasible rows.
	var c []RowResult
	for _, r := range all {
		if r.Model == "a-model" {
			r.Skipped, r.GPUs, r.Concurrency = false, 1, 1
			c = append(c, r)
		}
	}
	if d := Decide(c); d.SLAs != 45 {
		t.Errorf("group C with its ignored rows restored counts %d SLAs, want 45", d.SLAs)
	}
	// A row whose measured times give no throughput (0 after a parse problem) is left out too.
	bad := append([]RowResult(nil), kept...)
	bad = append(bad, RowResult{Line: 99, Model: "m1", System: "h100", Backend: "vllm", ISL: 1000, OSL: 101,
		Concurrency: 1, GPUs: 1, PredictedTTFTMs: 1, PredictedTPOTMs: 1})
	if got, want := Decide(bad), Decide(kept); !reflect.DeepEqual(got, want) {
		t.Errorf("a row with no measured times changed the result")
	}
	if d := Decide(nil); d.Rows != 0 || d.SLAs != 0 || d.MeanRegret != nil || d.ExactShare != nil ||
		d.MeanRankCorrelation != nil || len(d.Groups) != 0 {
		t.Errorf("Decide(nil) = %+v", d)
	}
}

func TestDecidePickTieLowestLine(t *testing.T) {
	// Three rows predicted alike (100 / 9 → 101 tok/s/GPU each). Measured: lines 7 and 5 at
	// 100 / 9 → 101, line 3 at 100 / 19 → 101000/2000 = 50.5. The pick is line 3 (lowest line
	// of the predicted tie), the best line 5 (lowest line of the measured tie 5, 7). All three meet
	// TPOT ≥ 20 ms under every TTFT bound as measured: 5 × 5 = 25 SLAs, each regret
	// 1 − 50.5/101 = 0.5; TPOT 10 … 15 have only 2 measured-feasible rows.
	row := func(line int, mTPOT float64) RowResult {
		return RowResult{Line: line, Model: "m", System: "s", Backend: "b", ISL: 10, OSL: 101,
			Concurrency: 1, GPUs: 1, MeasuredTTFTMs: 100, MeasuredTPOTMs: mTPOT,
			PredictedTTFTMs: 100, PredictedTPOTMs: 9}
	}
	d := Decide([]RowResult{row(7, 9), row(3, 19), row(5, 9)})
	if d.SLAs != 25 {
		t.Fatalf("SLAs = %d, want 25", d.SLAs)
	}
	for _, p := range d.Groups[0].Picks {
		if p.PickLine != 3 || p.BestLine != 5 || p.BreaksSLA || p.Exact {
			t.Errorf("SLA %+v: pick %d best %d breaks %v exact %v; want pick 3, best 5, feasible, inexact",
				p.SLA, p.PickLine, p.BestLine, p.BreaksSLA, p.Exact)
		}
		decisionClose(t, "regret", p.Regret, 0.5)
	}
	decisionClosePtr(t, "mean regret", d.MeanRegret, 0.5)
	decisionClosePtr(t, "exact share", d.ExactShare, 0)
	// All predictions tie: zero variance, no rank correlation.
	if d.Groups[0].RankCorrelation != nil || d.MeanRankCorrelation != nil {
		t.Errorf("rank correlation %v / %v, want nil (predictions all equal)", d.Groups[0].RankCorrelation, d.MeanRankCorrelation)
	}
}

func TestSpearmanRankCorrelation(t *testing.T) {
	// x = 1, 2, 2, 3 has ranks 1, 2.5, 2.5, 4; y = 10, 30, 20, 40 ranks 1, 3, 2, 4. Both mean 2.5.
	// Deviations: x −1.5, 0, 0, 1.5; y −1.5, 0.5, −0.5, 1.5. Σdxdy = 2.25 + 2.25 = 4.5,
	// Σdx² = 4.5, Σdy² = 2.25 + 0.25 + 0.25 + 2.25 = 5: rho = 4.5/√22.5 = √0.9 = 0.9486832980505138.
	// (The no-ties shortcut 1 − 6·0.5/(4·15) = 0.95 would be wrong.)
	rho, ok := SpearmanRankCorrelation([]float64{1, 2, 2, 3}, []float64{10, 30, 20, 40})
	if !ok {
		t.Fatal("tie example undefined")
	}
	decisionClose(t, "rho with a tie", rho, math.Sqrt(0.9))

	// Monotone but not linear: 1.
	if rho, ok := SpearmanRankCorrelation([]float64{1, 2, 3, 4}, []float64{1, 8, 27, 1000}); !ok || rho != 1 {
		t.Errorf("monotone = %v, %v; want 1", rho, ok)
	}
	// Ranks 1, 2, 3 against 2, 3, 1: d = −1, −1, 2, Σd² = 6, rho = 1 − 36/24 = −0.5.
	rho, ok = SpearmanRankCorrelation([]float64{5, 6, 7}, []float64{0.2, 0.3, 0.1})
	if !ok {
		t.Fatal("3-value example undefined")
	}
	decisionClose(t, "rho of 3", rho, -0.5)

	for _, c := range []struct {
		name string
		x, y []float64
	}{
		{"two values", []float64{1, 2}, []float64{2, 1}},
		{"zero variance", []float64{1, 2, 3}, []float64{4, 4, 4}},
		{"length mismatch", []float64{1, 2, 3}, []float64{1, 2}},
		{"NaN", []float64{1, math.NaN(), 3}, []float64{1, 2, 3}},
	} {
		if rho, ok := SpearmanRankCorrelation(c.x, c.y); ok || rho != 0 {
			t.Errorf("%s: %v, %v; want 0, false", c.name, rho, ok)
		}
	}
}

func TestDecideOrderIndependent(t *testing.T) {
	rows := decisionRowsByHand()
	// Two rows of group A on the same line, with different values, to exercise the tie order.
	dup := rows[2]
	dup.ID, dup.MeasuredTPOTMs = "dup", 18
	rows = append(rows, dup)
	want := Decide(rows)
	rng := rand.New(rand.NewPCG(42, 7))
	for i := range 200 {
		shuffled := append([]RowResult(nil), rows...)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got := Decide(shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffle %d changed the result:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

func TestDecisionSummaryString(t *testing.T) {
	got := Decide(decisionRowsByHand()).String()
	want := "decision regret 72.8% mean over 65 SLAs in 2 of 3 groups, 23% exact, 6 broken (1 by TTFT, 5 by TPOT), 40 without a pick, rank correlation 0.00"
	if got != want {
		t.Errorf("String() =\n%q, want\n%q", got, want)
	}
	got = Decide(nil).String()
	want = "decision regret N/A mean over 0 SLAs in 0 groups, N/A exact, 0 broken, 0 without a pick, rank correlation N/A"
	if got != want {
		t.Errorf("String() of nothing =\n%q, want\n%q", got, want)
	}
}

func TestDecisionSummaryJSON(t *testing.T) {
	b, err := json.Marshal(Decide(decisionRowsByHand()))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, key := range []string{`"rows":10`, `"slas":65`, `"mean_regret":0.728`, `"exact_share":0.2307`,
		`"mean_rank_correlation":0`, `"rank_correlation":null`, `"groups":[`, `"picks":[`,
		`"sla":{"tpot_ms":20,"ttft_ms":300}`, `"pick_line":13`, `"best_line":14`, `"breaks_sla":true`,
		`"picked":false`, `"best_tok_per_s_per_gpu":808`, `"feasible_rows":5`, `"broken_slas":6`, `"unanswered_slas":40`, `"broken_by_ttft":1`, `"broken_by_tpot":5`, `"picks":[]`} {
		if !strings.Contains(s, key) {
			t.Errorf("JSON lacks %s: %s", key, s)
		}
	}
}
