package results

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"github.com/servesweep/servesweep/sim/optimization"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Exclusion reasons of Analysis.Excluded. A degraded row beyond MaxRejectedRatio has one of five
// (degradedExclusion): ExcludedRejected, ExcludedTruncated, ExcludedUnfinished, ExcludedOverloaded or
// ExcludedDrained.
const (
	ExcludedFailed        = "failed"
	ExcludedTimedOut      = "timed_out"
	ExcludedGPUBudget     = "gpu_budget"
	ExcludedSLA           = "sla_constraint"
	ExcludedMinGoodput    = "min_goodput"
	ExcludedNoSamples     = "no_samples"
	ExcludedZeroDuration  = "zero_duration"
	ExcludedMissingMetric = "missing_metric"
	ExcludedRejected      = DegradedReason
	ExcludedEquivalent    = "equivalent"
	ExcludedCost          = "cost"

	// ExcludedOverloaded is a degraded row that fell behind its open-loop arrivals (Row.Overloaded)
	// by more than MaxRejectedRatio allows, without rejecting that many requests itself.
	ExcludedOverloaded = OverloadedReason
	// ExcludedDrained is a degraded row whose measured window drained its system (Row.Drained) by
	// more than MaxRejectedRatio allows, without rejecting that many requests itself.
	ExcludedDrained = DrainedReason
	// ExcludedTruncated is a degraded row whose truncated requests (completed short of their
	// requested output) are the largest share of what it left undone beyond MaxRejectedRatio.
	ExcludedTruncated = TruncatedReason
	// ExcludedUnfinished is a degraded row whose backlog of unfinished requests when its run
	// stopped (Row.Backlogged) is the largest share of what it left undone beyond
	// MaxRejectedRatio.
	ExcludedUnfinished = UnfinishedReason
)

// Best is the best candidate for one objective.
type Best struct {
	// Objective is the objective the row is best at.
	Objective optimization.Objective
	// Row indexes the rows given to Analyze; Value is its objective value.
	Row   int
	Value float64
}

// Analysis is the outcome of Analyze. Row numbers index the rows given to Analyze.
type Analysis struct {
	// Settings are the settings used, with defaults filled in.
	Settings optimization.Settings
	// Candidates are the rows that passed every filter, in input order.
	Candidates []int
	// Excluded counts the rows that did not, by reason (Excluded* constants).
	Excluded map[string]int
	// ExcludedExamples gives, for ExcludedGPUBudget, the first such row's ID and why the budget
	// excludes it (GPUBudgetExclusion), as sweep.json's filtered_examples does for the points
	// the sweep filtered: "point ID: reason". Nil when no row was excluded by the budget.
	ExcludedExamples map[string]string
	// Front is the Pareto front over Settings.Objectives (values rounded to ObjectiveDigits),
	// best first by the first objective, then the next ones, then input order. Points with
	// equal objective vectors (at ObjectiveDigits) are folded into
	// one entry (dynosim-spec.md §5.5): the one first in point order stands on Front, the others
	// are listed in Ties under it.
	Front []int
	// Ties maps a Front row to the other front rows whose objective vectors equal its own at
	// ObjectiveDigits, in point order (absent when it has none).
	Ties map[int][]int
	// Values[row][k] is objective k of that row (nil for rows that are not candidates).
	Values [][]float64
	// compared[row][k] is Values[row][k] at ObjectiveDigits significant digits: the value the
	// front, the ties and the best points compare.
	compared [][]float64
	// Best holds the best candidate per objective, one per objective in Settings.Objectives
	// order; each is on Front. Values compare at ObjectiveDigits; ties on the objective go to the
	// other objectives in their order
	// (lexicographically), then to point_index, then to input order.
	Best []Best
	// Ranking orders the candidates by the scalar target's score at ObjectiveDigits, best first
	// (ties: fewer GPUs,
	// then input order; min_gpus ties: higher goodput, then lower mean E2E latency); nil for
	// TargetPareto.
	Ranking []int
	// unsettled caches UnsettledOf for manifest unsettledFor.
	unsettled    *Unsettled
	unsettledFor *Manifest
}

// ObjectiveDigits is how many significant digits of an objective value the Pareto front, its
// ties, the best points and a scalar ranking compare: each value is rounded to that many digits
// first. The simulation's metrics are sums and quantiles taken in different orders at different
// replica counts, so a point can differ from another in its last bits only (a p99 ITL of
// 5.963513989932835 ms against 5.963513989931016 ms); compared exactly, a point worse on
// throughput would stay on the front, and become a recommendation, on that noise alone. Rounding
// (rather than a tolerance) keeps equality transitive, so the front stays exact over the rounded
// values; two values astride a rounding boundary still differ, which at nine digits (a relative
// 5e-10) takes noise landing within about 1e-15 of it.
const ObjectiveDigits = 9

// atObjectiveDigits rounds a finite x to ObjectiveDigits significant digits (-0 becomes 0, so
// that equal values have one key).
func atObjectiveDigits(x float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', ObjectiveDigits, 64), 64)
	if err != nil {
		return x
	}
	if r == 0 {
		return 0
	}
	return r
}

// CheckObjectives returns an error unless every objective names a numeric column of
// results.parquet once, with direction maximize or minimize.
func CheckObjectives(objs []optimization.Objective) error {
	for k, o := range objs {
		if err := CheckMetric(o.Metric); err != nil {
			return err
		}
		if slices.ContainsFunc(objs[:k], func(x optimization.Objective) bool { return x.Metric == o.Metric }) {
			return fmt.Errorf("objective %s is listed twice; list each metric once", o.Metric)
		}
		if o.Direction != optimization.Maximize && o.Direction != optimization.Minimize {
			return fmt.Errorf("objective %s: direction must be maximize or minimize, got %q", o.Metric, o.Direction)
		}
	}
	return nil
}

// Analyze filters rows (status ok, or degraded within MaxRejectedRatio, the GPU budget, the strict SLA, min_goodput_rps, at least
// one completed request, a duration of at least the 1e-9 s floor of the rates, every objective
// present and finite) and computes the Pareto front, the
// best point per objective and, for a scalar target, the ranking. Rows should be in point order;
// ties are broken by it. An unknown metric or target is an error.
func Analyze(rows []Row, s optimization.Settings) (*Analysis, error) {
	if s.Target == "" {
		s.Target = optimization.TargetPareto
	}
	if len(s.Objectives) == 0 {
		s.Objectives = optimization.DefaultObjectives()
	}
	if err := CheckObjectives(s.Objectives); err != nil {
		return nil, err
	}
	if err := optimization.CheckTarget(s.Target); err != nil {
		return nil, fmt.Errorf("target %v", err)
	}
	targetObj, scalar := optimization.TargetObjective(s.Target)
	a := &Analysis{Settings: s, Excluded: map[string]int{}, Values: make([][]float64, len(rows)), compared: make([][]float64, len(rows))}
	strict := s.StrictSLA || s.Target == optimization.TargetMinGPUs
	for i := range rows {
		r := &rows[i]
		if reason := exclusion(r, s, strict); reason != "" {
			a.Excluded[reason]++
			if reason == ExcludedGPUBudget && a.ExcludedExamples[reason] == "" {
				if a.ExcludedExamples == nil {
					a.ExcludedExamples = map[string]string{}
				}
				a.ExcludedExamples[reason] = "point " + r.PointID + ": " + GPUBudgetExclusion(r, s)
			}
			continue
		}
		vals := make([]float64, len(s.Objectives))
		ok := true
		for k, o := range s.Objectives {
			x, present, _ := numericValue(r, o.Metric)
			if !present || math.IsNaN(x) || math.IsInf(x, 0) {
				ok = false
				break
			}
			vals[k] = x
		}
		if !ok {
			a.Excluded[ExcludedMissingMetric]++
			continue
		}
		a.Values[i] = vals
		a.compared[i] = make([]float64, len(vals))
		for k, x := range vals {
			a.compared[i][k] = atObjectiveDigits(x)
		}
		a.Candidates = append(a.Candidates, i)
	}

	vecs := make([][]float64, len(a.Candidates))
	for j, i := range a.Candidates {
		vecs[j] = a.compared[i]
	}
	dirs := make([]optimization.Direction, len(s.Objectives))
	for k, o := range s.Objectives {
		dirs[k] = o.Direction
	}
	for _, j := range ParetoFront(vecs, dirs) {
		a.Front = append(a.Front, a.Candidates[j])
	}
	a.Front, a.Ties = foldTies(rows, a.Front, a.compared)

	for k, o := range s.Objectives {
		best := -1
		for _, i := range a.Candidates {
			if best < 0 || bestOrder(rows, a.compared, dirs, k, i, best) < 0 {
				best = i
			}
		}
		if best >= 0 {
			a.Best = append(a.Best, Best{Objective: o, Row: best, Value: a.Values[best][k]})
		}
	}

	if scalar {
		a.Ranking = slices.Clone(a.Candidates)
		key := func(i int) float64 {
			x := atObjectiveDigits(score(&rows[i], targetObj))
			if targetObj.Direction == optimization.Minimize {
				return -x
			}
			return x
		}
		slices.SortStableFunc(a.Ranking, func(x, y int) int {
			if c := cmp.Compare(key(y), key(x)); c != 0 {
				return c
			}
			if s.Target == optimization.TargetMinGPUs {
				gx := atObjectiveDigits(score(&rows[x], optimization.Objective{Metric: "goodput_output_throughput_tok_s", Direction: optimization.Maximize}))
				gy := atObjectiveDigits(score(&rows[y], optimization.Objective{Metric: "goodput_output_throughput_tok_s", Direction: optimization.Maximize}))
				if c := cmp.Compare(gy, gx); c != 0 {
					return c
				}
				ex := atObjectiveDigits(score(&rows[x], optimization.Objective{Metric: "mean_e2e_latency_ms", Direction: optimization.Minimize}))
				ey := atObjectiveDigits(score(&rows[y], optimization.Objective{Metric: "mean_e2e_latency_ms", Direction: optimization.Minimize}))
				if c := cmp.Compare(ex, ey); c != 0 {
					return c
				}
			}
			return cmp.Compare(rows[x].GPUs, rows[y].GPUs)
		})
	}
	return a, nil
}

// foldTies groups the front rows whose objective vectors are equal: each group is represented by
// its row first in point order (point_index, then input order), placed where the group's first
// member stood; the other members go to ties under it, in point order.
func foldTies(rows []Row, front []int, values [][]float64) ([]int, map[int][]int) {
	groups := map[string][]int{}
	var order []string
	for _, i := range front {
		k := vectorKey(values[i])
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	out := make([]int, 0, len(order))
	ties := map[int][]int{}
	for _, k := range order {
		g := groups[k]
		slices.SortFunc(g, func(x, y int) int {
			if c := cmp.Compare(rows[x].PointIndex, rows[y].PointIndex); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		out = append(out, g[0])
		if len(g) > 1 {
			ties[g[0]] = g[1:]
		}
	}
	return out, ties
}

// vectorKey is a map key equal for two vectors exactly when their values are bit for bit equal.
func vectorKey(v []float64) string {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return string(b)
}

// bestOrder compares candidate rows x and y for the best point of objective k: < 0 when x comes
// first. Objective k decides; ties go to the other objectives in order (0, 1, ... without k), then
// to point_index, then to input order. A point first in such a lexicographic order is never
// dominated (whatever dominates it would come before it), so the best point of every objective is
// on the Pareto front.
func bestOrder(rows []Row, values [][]float64, dirs []optimization.Direction, k, x, y int) int {
	vx, vy := values[x], values[y]
	cmpObj := func(j int) int {
		switch {
		case vx[j] == vy[j]:
			return 0
		case dirs[j].Better(vx[j], vy[j]):
			return -1
		}
		return 1
	}
	if c := cmpObj(k); c != 0 {
		return c
	}
	for j := range dirs {
		if j == k {
			continue
		}
		if c := cmpObj(j); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(rows[x].PointIndex, rows[y].PointIndex); c != 0 {
		return c
	}
	return cmp.Compare(x, y)
}

// exclusion returns why r is not a candidate, or "".
func exclusion(r *Row, s optimization.Settings, strict bool) string {
	switch {
	case r.EquivalentTo != "":
		return ExcludedEquivalent
	case r.Status == StatusFailed:
		return ExcludedFailed
	case r.Status == StatusTimedOut:
		return ExcludedTimedOut
	case r.Status == StatusDegraded && r.RejectedRatio() > s.MaxRejectedRatio:
		return degradedExclusion(r, s)
	case r.Status == StatusInfeasible && strings.HasPrefix(r.Reason, DegradedReason):
		return ExcludedRejected
	case r.Status == StatusInfeasible:
		return ExcludedSLA
	case r.Status != StatusOK && r.Status != StatusDegraded:
		return ExcludedFailed
	case GPUBudgetExclusion(r, s) != "":
		return ExcludedGPUBudget
	case r.CompletedRequests == nil || *r.CompletedRequests == 0:
		return ExcludedNoSamples
	case zeroDuration(r):
		return ExcludedZeroDuration
	case strict && !meetsSLA(r):
		return ExcludedSLA
	case s.Target == optimization.TargetMinGPUs && s.MinGoodputRPS > 0 &&
		(r.GoodputRequestThroughputRPS == nil || *r.GoodputRequestThroughputRPS < s.MinGoodputRPS):
		return ExcludedMinGoodput
	case s.MaxCostUSDPerHour > 0 && (r.CostUSDPerHour == nil || *r.CostUSDPerHour > s.MaxCostUSDPerHour),
		s.MaxUSDPerMillionOutputTokens > 0 && (r.USDPerMillionOutputTokens == nil ||
			*r.USDPerMillionOutputTokens > s.MaxUSDPerMillionOutputTokens):
		return ExcludedCost
	}
	return ""
}

// degradedExclusion is the key a degraded row beyond s.MaxRejectedRatio is excluded under, named
// for what put it there. When the requests it rejected, truncated or left unfinished in a backlog
// alone exceed the ratio (with the default 0: whenever it rejected or truncated any, overloaded or
// not), the largest of the three names it: ExcludedRejected, ExcludedTruncated or
// ExcludedUnfinished (ties in that order). Else ExcludedOverloaded when it fell behind its
// arrivals, ExcludedDrained when its window drained its system; else (only their sum exceeds the
// ratio) ExcludedRejected.
func degradedExclusion(r *Row, s optimization.Settings) string {
	rejected, truncated, unfinished := deref(r.RejectedRequests), deref(r.TruncatedRequests), int64(0)
	if r.Backlogged() {
		unfinished = deref(r.UnfinishedRequests)
	}
	switch offered := deref(r.OfferedRequests); {
	case offered > 0 && float64(rejected+truncated+unfinished)/float64(offered) > s.MaxRejectedRatio:
		switch {
		case rejected >= truncated && rejected >= unfinished:
			return ExcludedRejected
		case truncated >= unfinished:
			return ExcludedTruncated
		}
		return ExcludedUnfinished
	case r.Overloaded():
		return ExcludedOverloaded
	case r.Drained():
		return ExcludedDrained
	}
	return ExcludedRejected
}

// meetsSLA is the strict-SLA check of dynosim-spec.md §5.4: mean TTFT <= ttft_ms, mean TPOT <=
// itl_ms (TPOT, not ITL), mean E2E latency <= e2e_ms for each set bound; a missing metric, or a
// row without any bound, fails. Percentile bounds count as set bounds: they must have held over
// the run (sla_percentile_terms_met true).
func meetsSLA(r *Row) bool {
	if len(r.PercentileBounds()) > 0 {
		if r.SLAPercentileTermsMet == nil || !*r.SLAPercentileTermsMet {
			return false
		}
		if r.SLATTFTMs == nil && r.SLAITLMs == nil && r.SLAE2EMs == nil {
			return true
		}
	}
	checks := []struct {
		bound, mean *float64
		samples     *int64
	}{
		{r.SLATTFTMs, r.MeanTTFTMs, r.NumTTFTSamples},
		{r.SLAITLMs, r.MeanTPOTMs, r.NumTPOTSamples},
		{r.SLAE2EMs, r.MeanE2ELatencyMs, r.NumE2ELatencySamples},
	}
	set := false
	for _, c := range checks {
		if c.bound == nil {
			continue
		}
		set = true
		if c.mean == nil || c.samples == nil || *c.samples == 0 || math.IsNaN(*c.mean) || *c.mean > *c.bound {
			return false
		}
	}
	return set
}

// ParetoFront returns the indices of the non-dominated vectors: v dominates w when v is at least
// as good as w on every objective and strictly better on one (dirs[k] says which way objective k
// improves). Equal vectors do not dominate each other, so duplicates are all kept. The result is
// ordered best first lexicographically (objective 0, then 1, ...), ties in input order. Every
// vector must have len(dirs) finite values. It runs in O(n log n) for two objectives, and in
// O(n log n + n·d·k) otherwise, for d distinct vectors on the front (equal vectors are compared
// once).
func ParetoFront(vecs [][]float64, dirs []optimization.Direction) []int {
	order := make([]int, len(vecs))
	for i := range order {
		order[i] = i
	}
	lex := func(a, b []float64) int { // < 0 when a is lexicographically better
		for k, d := range dirs {
			if a[k] != b[k] {
				if d.Better(a[k], b[k]) {
					return -1
				}
				return 1
			}
		}
		return 0
	}
	slices.SortStableFunc(order, func(x, y int) int { return lex(vecs[x], vecs[y]) })
	// Any vector that dominates v is lexicographically better, so it comes before v; checking v
	// against the distinct vectors of the front found so far is enough (domination is
	// transitive). Equal vectors are adjacent in this order: one equal to the last front vector
	// is on the front too.
	var front []int
	var distinct []int // the front's distinct vectors, in order
	// With two objectives, every earlier vector is at least as good on objective 0, so v is
	// dominated exactly when an earlier distinct vector is at least as good on objective 1: the
	// best objective 1 so far decides.
	two := len(dirs) == 2
	var best1 float64 // the best objective 1 of the distinct front vectors so far
	for _, i := range order {
		v := vecs[i]
		if n := len(distinct); n > 0 && lex(vecs[distinct[n-1]], v) == 0 {
			front = append(front, i)
			continue
		}
		dominated := false
		if two {
			dominated = len(distinct) > 0 && !dirs[1].Better(v[1], best1)
		} else {
			for _, f := range distinct {
				if dominates(vecs[f], v, dirs) {
					dominated = true
					break
				}
			}
		}
		if !dominated {
			front = append(front, i)
			distinct = append(distinct, i)
			if two {
				best1 = v[1]
			}
		}
	}
	return front
}

// dominates reports whether a dominates b.
func dominates(a, b []float64, dirs []optimization.Direction) bool {
	strictly := false
	for k, d := range dirs {
		if d.Better(b[k], a[k]) {
			return false
		}
		if a[k] != b[k] {
			strictly = true
		}
	}
	return strictly
}
