package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/servesweep/servesweep/sim/metrics"
)

// Decision regret scores the choice servesweep would make from its predictions rather than the
// predictions themselves. For one (model, system, backend, ISL, OSL) group of measured rows and
// one SLA, a user asks "which of these deployments gives the most output tokens per second per
// GPU while meeting the SLA?". servesweep answers with the row its predictions rank first; the
// benchmark answers with the row the measurements rank first. Regret is the share of measured
// throughput per GPU lost by following servesweep's answer.

// SLA is one pair of latency bounds a deployment must meet, in ms: mean TPOT (time per output
// token after the first) at most TPOTMs and mean TTFT (time to first token) at most TTFTMs, both
// inclusive as metrics.MeetsBound compares them.
type SLA struct {
	// TPOTMs is the bound on the mean time per output token, ms.
	TPOTMs float64 `json:"tpot_ms"`
	// TTFTMs is the bound on the mean time to first token, ms.
	TTFTMs float64 `json:"ttft_ms"`
}

// ladderTPOTMs and ladderTTFTMs are the axes of DecisionLadder, ms, ascending.
var (
	ladderTPOTMs = [...]float64{8, 10, 12, 15, 20, 25, 30, 40, 60}
	ladderTTFTMs = [...]float64{300, 500, 1000, 2000, 5000}
)

// DecisionLadder returns the 45 SLAs Decide scores: every mean-TPOT bound of {8, 10, 12, 15, 20,
// 25, 30, 40, 60} ms crossed with every mean-TTFT bound of {300, 500, 1000, 2000, 5000} ms,
// ordered by TPOT bound, then TTFT bound, both ascending (index = 5·tpotIndex + ttftIndex).
//
// The grid is a fixed choice of this score, not read from any benchmark: the TPOT bounds run from
// 8 ms (125 output tokens/s per user) to 60 ms (about 17 tokens/s per user) and the TTFT bounds
// from 300 ms (interactive) to 5 s (batch-like), so the SLAs range from ones only small
// concurrencies meet to ones nearly every measured row meets. The slice is new on every call.
func DecisionLadder() []SLA {
	out := make([]SLA, 0, len(ladderTPOTMs)*len(ladderTTFTMs))
	for _, tpot := range ladderTPOTMs {
		for _, ttft := range ladderTTFTMs {
			out = append(out, SLA{TPOTMs: tpot, TTFTMs: ttft})
		}
	}
	return out
}

// MinFeasibleRowsPerSLA is the number of rows of a group that must meet an SLA as measured for
// Decide to count that SLA for the group. With one or two feasible rows there is almost no choice
// to get right or wrong, and such SLAs would inflate the exact share.
const MinFeasibleRowsPerSLA = 3

// exactRegret is the regret at or below which a pick counts as exact: its measured throughput
// per GPU equals the measured best up to rounding.
const exactRegret = 1e-12

// ThroughputPerGPU returns the output tokens per second per GPU of a closed loop of concurrency
// clients, each sending requests of osl output tokens with mean TTFT ttftMs and mean TPOT tpotMs
// (ms), on a deployment of gpus GPUs:
//
//	concurrency × osl / ((ttftMs + (osl − 1) × tpotMs) / 1000) / gpus
//
// A request takes TTFT until its first token and TPOT for each of its osl − 1 others; with no
// pause between a client's requests, Little's law gives concurrency / request time requests per
// second, each of osl tokens. The result is NaN when concurrency, osl or gpus is not positive or
// the request time is not finite and positive.
func ThroughputPerGPU(concurrency, osl, gpus int, ttftMs, tpotMs float64) float64 {
	if concurrency <= 0 || osl <= 0 || gpus <= 0 {
		return math.NaN()
	}
	requestMs := ttftMs + float64(osl-1)*tpotMs
	if !(requestMs > 0) || math.IsInf(requestMs, 0) {
		return math.NaN()
	}
	return float64(concurrency) * float64(osl) * 1000 / requestMs / float64(gpus)
}

// MeasuredThroughputPerGPU is ThroughputPerGPU of the row's concurrency, OSL and GPUs at its
// measured mean TTFT and TPOT: output tokens/s/GPU.
func MeasuredThroughputPerGPU(r RowResult) float64 {
	return ThroughputPerGPU(r.Concurrency, r.OSL, r.GPUs, r.MeasuredTTFTMs, r.MeasuredTPOTMs)
}

// PredictedThroughputPerGPU is ThroughputPerGPU of the row's concurrency, OSL and GPUs at its
// predicted mean TTFT and TPOT: output tokens/s/GPU.
func PredictedThroughputPerGPU(r RowResult) float64 {
	return ThroughputPerGPU(r.Concurrency, r.OSL, r.GPUs, r.PredictedTTFTMs, r.PredictedTPOTMs)
}

// MeetsSLA reports whether mean TTFT ttftMs and mean TPOT tpotMs (ms) both meet the SLA's bounds,
// each compared with metrics.MeetsBound (v ≤ b·(1 + metrics.BoundTolerance)).
func MeetsSLA(ttftMs, tpotMs float64, s SLA) bool {
	return metrics.MeetsBound(ttftMs, s.TTFTMs) && metrics.MeetsBound(tpotMs, s.TPOTMs)
}

// SpearmanRankCorrelation returns Spearman's rank correlation of x and y: the Pearson correlation
// of their rank vectors, where each value's rank is its 1-based position in ascending order and
// tied values all get the mean of the positions they span (1, 2.5, 2.5, 4 for 1, 2, 2, 3). With
// ties this differs from the shortcut 1 − 6Σd²/(n(n²−1)), which holds only for distinct values.
// ok is false, and rho 0, when the slices differ in length, hold fewer than 3 values or a NaN, or
// either has zero variance (all values equal). rho is in [−1, 1].
func SpearmanRankCorrelation(x, y []float64) (rho float64, ok bool) {
	n := len(x)
	if n != len(y) || n < 3 {
		return 0, false
	}
	for i := range n {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			return 0, false
		}
	}
	rx, ry := averageRanks(x), averageRanks(y)
	mean := float64(n+1) / 2 // the mean of any average-rank vector of n values
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := rx[i]-mean, ry[i]-mean
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	rho = sxy / math.Sqrt(sxx*syy)
	return max(-1, min(1, rho)), true
}

// averageRanks returns the 1-based ranks of v in ascending order, ties given their mean rank.
func averageRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	ranks := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1 // mean of the 1-based positions i+1 … j+1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		i = j + 1
	}
	return ranks
}

// DecisionPick is servesweep's choice for one SLA of one group, against the measured best.
// Throughputs are output tokens/s/GPU (ThroughputPerGPU); lines are the rows' CSV lines.
type DecisionPick struct {
	// SLA is the ladder SLA.
	SLA SLA `json:"sla"`
	// FeasibleRows is the number of the group's rows that meet the SLA as measured
	// (at least MinFeasibleRowsPerSLA, or the SLA would not be counted).
	FeasibleRows int `json:"feasible_rows"`
	// BestLine and BestID identify the measured best: the row with the largest measured
	// throughput per GPU among those meeting the SLA as measured (ties: lowest line);
	// BestTokensPerSecPerGPU is that throughput.
	BestLine               int     `json:"best_line"`
	BestID                 string  `json:"best_id,omitempty"`
	BestTokensPerSecPerGPU float64 `json:"best_tok_per_s_per_gpu"`
	// Picked is false when no row of the group is predicted to meet the SLA; then PickLine is 0,
	// PickID empty, both pick throughputs 0, BreaksSLA false and Regret 1.
	Picked bool `json:"picked"`
	// PickLine and PickID identify servesweep's pick: the row with the largest predicted
	// throughput per GPU among those predicted to meet the SLA (ties: lowest line).
	PickLine int    `json:"pick_line"`
	PickID   string `json:"pick_id,omitempty"`
	// PickPredictedTokensPerSecPerGPU and PickMeasuredTokensPerSecPerGPU are the pick's predicted
	// and measured throughput per GPU.
	PickPredictedTokensPerSecPerGPU float64 `json:"pick_predicted_tok_per_s_per_gpu"`
	PickMeasuredTokensPerSecPerGPU  float64 `json:"pick_measured_tok_per_s_per_gpu"`
	// BreaksSLA is true when the pick does not meet the SLA as measured.
	BreaksSLA bool `json:"breaks_sla"`
	// Regret is 1 − PickMeasuredTokensPerSecPerGPU / BestTokensPerSecPerGPU, a fraction in
	// [0, 1]; 1 when the pick breaks the SLA or there is no pick.
	Regret float64 `json:"regret"`
	// Exact is true when Regret ≤ 1e-12: the pick's measured throughput per GPU equals the best.
	Exact bool `json:"exact"`
}

// DecisionGroup is the decision score of one (model, system, backend, ISL, OSL) group.
type DecisionGroup struct {
	// Model, System, Backend, ISL and OSL identify the group (RowResult's fields).
	Model   string `json:"model"`
	System  string `json:"system"`
	Backend string `json:"backend"`
	ISL     int    `json:"isl"`
	OSL     int    `json:"osl"`
	// Rows is the number of the group's rows Decide scored (see Decide for which rows).
	Rows int `json:"rows"`
	// SLAs is the number of ladder SLAs counted: those at least MinFeasibleRowsPerSLA of the
	// group's rows meet as measured (0 … 45).
	SLAs int `json:"slas"`
	// MeanRegret is the mean Regret over the counted SLAs, a fraction in [0, 1]; nil when
	// SLAs == 0.
	MeanRegret *float64 `json:"mean_regret"`
	// ExactShare is the fraction (0 … 1) of counted SLAs whose pick is Exact; nil when SLAs == 0.
	ExactShare *float64 `json:"exact_share"`
	// RankCorrelation is SpearmanRankCorrelation of predicted against measured throughput per
	// GPU over the group's rows; nil when it is undefined (fewer than 3 rows, or zero variance).
	RankCorrelation *float64 `json:"rank_correlation"`
	// BrokenSLAs counts the counted SLAs whose pick breaks the SLA as measured, and
	// UnansweredSLAs those no row is predicted to meet: each costs a regret of 1, the first an
	// optimistic prediction (the deployment a user would run misses the SLA), the second a
	// pessimistic one (no answer where at least MinFeasibleRowsPerSLA rows meet it).
	BrokenSLAs     int `json:"broken_slas"`
	UnansweredSLAs int `json:"unanswered_slas"`
	// BrokenByTTFT and BrokenByTPOT count the broken SLAs whose pick's measured TTFT, and TPOT,
	// exceeds the SLA's bound (a pick that misses both counts in both): which predicted term was
	// too optimistic for the decision.
	BrokenByTTFT int `json:"broken_by_ttft"`
	BrokenByTPOT int `json:"broken_by_tpot"`
	// Picks holds one entry per counted SLA, in DecisionLadder order (empty, never nil, for a
	// group without one: the JSON always has the list).
	Picks []DecisionPick `json:"picks"`
}

// DecisionSummary is the decision score of a validate run (Decide).
type DecisionSummary struct {
	// Rows is the number of rows scored, over all groups.
	Rows int `json:"rows"`
	// SLAs is the number of (group, ladder SLA) pairs counted, over all groups.
	SLAs int `json:"slas"`
	// MeanRegret is the mean Regret over all counted SLAs of all groups (pooled, so a group
	// weighs by its number of counted SLAs), a fraction in [0, 1]; nil when SLAs == 0.
	MeanRegret *float64 `json:"mean_regret"`
	// ExactShare is the fraction (0 … 1) of all counted SLAs whose pick is Exact; nil when
	// SLAs == 0.
	ExactShare *float64 `json:"exact_share"`
	// MeanRankCorrelation is the unweighted mean of RankCorrelation over the groups that have
	// one, in [−1, 1]; nil when none has.
	MeanRankCorrelation *float64 `json:"mean_rank_correlation"`
	// BrokenSLAs, UnansweredSLAs, BrokenByTTFT and BrokenByTPOT are the groups' counts
	// (DecisionGroup) summed.
	BrokenSLAs     int `json:"broken_slas"`
	UnansweredSLAs int `json:"unanswered_slas"`
	BrokenByTTFT   int `json:"broken_by_ttft"`
	BrokenByTPOT   int `json:"broken_by_tpot"`
	// Groups holds every group with a scored row, sorted by model, system, backend, ISL, OSL.
	Groups []DecisionGroup `json:"groups"`
}

// decisionRow is a scored row with its throughputs per GPU.
type decisionRow struct {
	r                   RowResult
	measured, predicted float64 // output tokens/s/GPU
}

// decisionKey identifies a group.
type decisionKey struct {
	model, system, backend string
	isl, osl               int
}

// Decide scores the decisions servesweep would make from rows' predictions.
//
// It scores the rows that were simulated (not Skipped) with GPUs > 0 and Concurrency > 0 whose
// measured and predicted ThroughputPerGPU are both finite (OSL > 0 and a finite, positive
// request time), grouped by (Model, System, Backend, ISL, OSL). For each group and each SLA of
// DecisionLadder, the SLA is counted only when at least MinFeasibleRowsPerSLA rows meet it as
// measured (MeetsSLA of the measured TTFT and TPOT). The measured best is then the largest
// measured throughput per GPU among the rows meeting the SLA as measured; servesweep's pick the
// row with the largest predicted throughput per GPU among the rows meeting it as predicted (ties:
// lowest Line); the regret 1 − measured(pick) / best, or 1 when the pick breaks the SLA as
// measured or no row is predicted to meet it. The result does not depend on the order of rows.
func Decide(rows []RowResult) DecisionSummary {
	groups := map[decisionKey][]decisionRow{}
	for _, r := range rows {
		if r.Skipped || r.GPUs <= 0 || r.Concurrency <= 0 {
			continue
		}
		m, p := MeasuredThroughputPerGPU(r), PredictedThroughputPerGPU(r)
		if math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(p) || math.IsInf(p, 0) {
			continue
		}
		k := decisionKey{r.Model, r.System, r.Backend, r.ISL, r.OSL}
		groups[k] = append(groups[k], decisionRow{r: r, measured: m, predicted: p})
	}
	keys := make([]decisionKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b decisionKey) int {
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.system, b.system),
			cmp.Compare(a.backend, b.backend), cmp.Compare(a.isl, b.isl), cmp.Compare(a.osl, b.osl))
	})

	out := DecisionSummary{Groups: make([]DecisionGroup, 0, len(keys))}
	var regretSum, corrSum float64
	var exact, corrs int
	for _, k := range keys {
		g, gRegret, gExact := decideGroup(k, groups[k])
		out.Groups = append(out.Groups, g)
		out.Rows += g.Rows
		out.SLAs += g.SLAs
		out.BrokenSLAs += g.BrokenSLAs
		out.UnansweredSLAs += g.UnansweredSLAs
		out.BrokenByTTFT += g.BrokenByTTFT
		out.BrokenByTPOT += g.BrokenByTPOT
		regretSum += gRegret
		exact += gExact
		if g.RankCorrelation != nil {
			corrSum += *g.RankCorrelation
			corrs++
		}
	}
	if out.SLAs > 0 {
		out.MeanRegret = decisionFloat(regretSum / float64(out.SLAs))
		out.ExactShare = decisionFloat(float64(exact) / float64(out.SLAs))
	}
	if corrs > 0 {
		out.MeanRankCorrelation = decisionFloat(corrSum / float64(corrs))
	}
	return out
}

// decideGroup scores one group; it also returns the sum of its regrets and its number of exact
// picks for pooling.
func decideGroup(k decisionKey, rows []decisionRow) (g DecisionGroup, regretSum float64, exact int) {
	// A total order on everything the result reports, so that ties (equal lines or equal
	// throughputs) resolve the same way whatever the input order.
	slices.SortFunc(rows, func(a, b decisionRow) int {
		return cmp.Or(cmp.Compare(a.r.Line, b.r.Line), cmp.Compare(a.r.ID, b.r.ID),
			cmp.Compare(a.measured, b.measured), cmp.Compare(a.predicted, b.predicted),
			cmp.Compare(a.r.MeasuredTTFTMs, b.r.MeasuredTTFTMs), cmp.Compare(a.r.MeasuredTPOTMs, b.r.MeasuredTPOTMs),
			cmp.Compare(a.r.PredictedTTFTMs, b.r.PredictedTTFTMs), cmp.Compare(a.r.PredictedTPOTMs, b.r.PredictedTPOTMs))
	})
	g = DecisionGroup{Model: k.model, System: k.system, Backend: k.backend, ISL: k.isl, OSL: k.osl, Rows: len(rows),
		Picks: []DecisionPick{}} // an empty list, not null, for a group without a counted SLA

	for _, s := range DecisionLadder() {
		var best, pick *decisionRow
		feasible := 0
		for i := range rows {
			r := &rows[i]
			if MeetsSLA(r.r.MeasuredTTFTMs, r.r.MeasuredTPOTMs, s) {
				feasible++
				if best == nil || r.measured > best.measured {
					best = r
				}
			}
			if MeetsSLA(r.r.PredictedTTFTMs, r.r.PredictedTPOTMs, s) {
				if pick == nil || r.predicted > pick.predicted {
					pick = r
				}
			}
		}
		if feasible < MinFeasibleRowsPerSLA {
			continue
		}
		p := DecisionPick{SLA: s, FeasibleRows: feasible, BestLine: best.r.Line, BestID: best.r.ID,
			BestTokensPerSecPerGPU: best.measured, Regret: 1}
		if pick != nil {
			p.Picked = true
			p.PickLine, p.PickID = pick.r.Line, pick.r.ID
			p.PickPredictedTokensPerSecPerGPU = pick.predicted
			p.PickMeasuredTokensPerSecPerGPU = pick.measured
			p.BreaksSLA = !MeetsSLA(pick.r.MeasuredTTFTMs, pick.r.MeasuredTPOTMs, s)
			if !p.BreaksSLA {
				p.Regret = max(0, 1-pick.measured/best.measured)
			} else {
				g.BrokenSLAs++
				if !metrics.MeetsBound(pick.r.MeasuredTTFTMs, s.TTFTMs) {
					g.BrokenByTTFT++
				}
				if !metrics.MeetsBound(pick.r.MeasuredTPOTMs, s.TPOTMs) {
					g.BrokenByTPOT++
				}
			}
		} else {
			g.UnansweredSLAs++
		}
		p.Exact = p.Regret <= exactRegret
		g.Picks = append(g.Picks, p)
		regretSum += p.Regret
		if p.Exact {
			exact++
		}
	}
	g.SLAs = len(g.Picks)
	if g.SLAs > 0 {
		g.MeanRegret = decisionFloat(regretSum / float64(g.SLAs))
		g.ExactShare = decisionFloat(float64(exact) / float64(g.SLAs))
	}

	measured := make([]float64, len(rows))
	predicted := make([]float64, len(rows))
	for i, r := range rows {
		measured[i], predicted[i] = r.measured, r.predicted
	}
	if rho, ok := SpearmanRankCorrelation(predicted, measured); ok {
		g.RankCorrelation = decisionFloat(rho)
	}
	return g, regretSum, exact
}

// decisionFloat returns a pointer to a copy of x.
func decisionFloat(x float64) *float64 { return &x }

// String is a one-line account, e.g. "decision regret 4.2 % mean over 123 SLAs in 9 groups,
// 61 % exact, 5 broken (4 by TTFT, 2 by TPOT), 0 without a pick, rank correlation 0.93": the
// pooled mean regret and exact share in percent, the counted SLAs and the groups that have one
// ("in 7 of 9 groups" when some groups have none), BrokenSLAs (with BrokenByTTFT and
// BrokenByTPOT when any), UnansweredSLAs and the mean rank correlation; N/A for an undefined
// value.
func (d DecisionSummary) String() string {
	pct := func(x *float64, format string) string {
		if x == nil {
			return "N/A"
		}
		return fmt.Sprintf(format, 100**x)
	}
	corr := "N/A"
	if d.MeanRankCorrelation != nil {
		corr = fmt.Sprintf("%.2f", *d.MeanRankCorrelation)
	}
	scored := 0
	for _, g := range d.Groups {
		if g.SLAs > 0 {
			scored++
		}
	}
	groups := fmt.Sprintf("%d of %d groups", scored, len(d.Groups))
	if scored == len(d.Groups) {
		groups = fmt.Sprintf("%d groups", scored)
		if scored == 1 {
			groups = "1 group"
		}
	}
	slas := fmt.Sprintf("%d SLAs", d.SLAs)
	if d.SLAs == 1 {
		slas = "1 SLA"
	}
	broken := fmt.Sprintf("%d broken", d.BrokenSLAs)
	if d.BrokenSLAs > 0 {
		broken += fmt.Sprintf(" (%d by TTFT, %d by TPOT)", d.BrokenByTTFT, d.BrokenByTPOT)
	}
	return fmt.Sprintf("decision regret %s mean over %s in %s, %s exact, %s, %d without a pick, rank correlation %s",
		pct(d.MeanRegret, "%.1f%%"), slas, groups, pct(d.ExactShare, "%.0f%%"), broken, d.UnansweredSLAs, corr)
}
