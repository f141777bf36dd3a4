package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
)

// capacityScaled are the metrics a capacity search sets through the capacity it finds: +1 for
// those that grow in proportion to the load (throughputs, goodput rates, the load itself), -1
// for the cost per token, which falls as the throughput grows. Latencies and per-user rates
// are measured at the capacity too, but they do not scale with it, and the GPU count and the
// hourly cost do not depend on it.
var capacityScaled = map[string]int{
	"capacity_load": 1, "load_concurrency": 1, "load_requests_per_second": 1, "load_sessions_per_second": 1,
	"request_throughput_rps": 1, "input_throughput_tok_s": 1, "output_throughput_tok_s": 1, "total_throughput_tok_s": 1,
	"output_throughput_per_gpu_tok_s": 1, "goodput_request_throughput_rps": 1, "goodput_output_throughput_tok_s": 1,
	"goodput_output_throughput_per_gpu_tok_s": 1, "usd_per_million_output_tokens": -1,
}

// NearTie is a best point whose lead a capacity search did not resolve: other candidates could
// reach its value, within the brackets their capacities were found in.
type NearTie struct {
	// Objective is the metric and direction the point is best at (one of Settings.Objectives,
	// or a scalar target's); Best indexes its row and Value is its value there.
	Objective optimization.Objective
	Best      int
	Value     float64
	// Rivals index the other candidates (for a best point, its ties on the front left out) that could reach Value,
	// nearest to it first; Reach[i] is the value Rivals[i] would have at the upper end of its
	// capacity's bracket (CapacityBracket), its value scaled by the bracket's width.
	Rivals []int
	Reach  []float64
}

// CapacityBracket is how far above its capacity (capacity_load) a row's true capacity may lie,
// as a ratio >= 1: the least load one of its probes missed the SLA at, over the capacity; the
// search's relative tolerance above 1 (a whole-number load: at least one unit more) when the
// row carries no probes (a journal without probes.parquet); 1 for a row without a capacity or
// whose search was bounded (the SLA held at the search's max: how far above it is unknown, and
// the report counts such rows apart). tol is capacity_search.relative_tolerance.
func CapacityBracket(r *Row, tol float64) float64 {
	if r.CapacityLoad == nil || *r.CapacityLoad <= 0 || r.CapacityBounded != nil && *r.CapacityBounded {
		return 1
	}
	lo := *r.CapacityLoad
	upper := math.Inf(1)
	for _, p := range r.Probes {
		if !p.MeetsSLA && p.Load > lo {
			upper = min(upper, p.Load)
		}
	}
	if math.IsInf(upper, 1) {
		upper = lo * (1 + tol)
		if r.CapacityLoadUnit != nil && *r.CapacityLoadUnit == "concurrency" {
			upper = max(upper, lo+1)
		}
	}
	return upper / lo
}

// NearTies returns the best points whose lead is within what the capacity search resolved: for
// each of a.Best and, for a scalar target, the ranking's first point, on a metric the capacity
// sets (capacityScaled), the candidates whose value at the upper end of their capacity's
// bracket (CapacityBracket) reaches the best value. A capacity is found to within its bracket,
// and the best value is measured at its own capacity, which its true one can only exceed; so a
// rival that could reach it might, measured at its true capacity, be the better one: the order
// between them is not settled by the search. nil without a capacity search (m.CapacitySearch).
func NearTies(rows []Row, a *Analysis, m *Manifest) []NearTie {
	if m == nil || m.CapacitySearch == nil {
		return nil
	}
	tol := m.CapacitySearch.RelativeTolerance
	var out []NearTie
	add := func(o optimization.Objective, best int, ties []int) {
		sign, ok := capacityScaled[o.Metric]
		if !ok || slices.ContainsFunc(out, func(t NearTie) bool { return t.Objective == o && t.Best == best }) {
			return
		}
		v := score(&rows[best], o)
		t := NearTie{Objective: o, Best: best, Value: v}
		var dist []float64
		for _, i := range a.Candidates {
			if i == best || slices.Contains(ties, i) {
				continue
			}
			x := score(&rows[i], o)
			reach := x * math.Pow(CapacityBracket(&rows[i], tol), float64(sign))
			better := reach >= v
			if o.Direction == optimization.Minimize {
				better = reach <= v
			}
			if better && isFinite(reach) {
				t.Rivals, t.Reach = append(t.Rivals, i), append(t.Reach, reach)
				dist = append(dist, math.Abs(x-v))
			}
		}
		if len(t.Rivals) == 0 {
			return
		}
		idx := make([]int, len(t.Rivals))
		for k := range idx {
			idx[k] = k
		}
		slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(dist[x], dist[y]) })
		rivals, reach := make([]int, len(idx)), make([]float64, len(idx))
		for k, j := range idx {
			rivals[k], reach[k] = t.Rivals[j], t.Reach[j]
		}
		t.Rivals, t.Reach = rivals, reach
		out = append(out, t)
	}
	for _, b := range a.Best {
		add(b.Objective, b.Row, a.Ties[b.Row]) // equal on every objective: the front shows them as tied
	}
	if o, scalar := optimization.TargetObjective(a.Settings.Target); scalar && len(a.Ranking) > 0 {
		add(o, a.Ranking[0], nil) // a.Ties are equal on the objectives, not on the target
	}
	return out
}

// FixedNum renders x for stdout and the reports' prose in fixed notation, never with an exponent: to the unit from
// 1,000 up (14124.7 prints 14125), else with four significant digits (0.2554, 91.92, 0.0001234);
// n/a for NaN and infinities.
func FixedNum(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case math.Abs(x) >= 1000:
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'e', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// maxNearTieRivals is how many rivals NearTieText names; the others are counted.
const maxNearTieRivals = 3

// NearTieText is one sentence saying that t's best point does not lead by more than the
// capacity search resolved, naming up to maxNearTieRivals rivals with their value and the value
// at the top of their bracket, for stdout and report.md (code spans around point IDs when md).
func NearTieText(rows []Row, t *NearTie, labels Labels, md bool) string {
	id := func(i int) string {
		if md {
			return "`" + rows[i].PointID + "`"
		}
		return rows[i].PointID
	}
	what, bound := "highest", "up to"
	if t.Objective.Direction == optimization.Minimize {
		what, bound = "lowest", "down to"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Near tie: the %s %s (%s, point %s) is not settled by the capacity search: %s could reach it within "+
		"its capacity's bracket (below the least load its search missed the SLA at): ",
		what, t.Objective.Metric, FixedNum(t.Value), id(t.Best), Plural(len(t.Rivals), "other candidate"))
	for k, i := range t.Rivals[:min(len(t.Rivals), maxNearTieRivals)] {
		if k > 0 {
			b.WriteString("; ")
		}
		r := &rows[i]
		fmt.Fprintf(&b, "%s (%s, %s %s %s %s) %s, %s %s", id(i), Plural(int(r.GPUs), "GPU"), labels.Hardware(r), r.Mode,
			labels.Shape(r), r.RouterPolicy, FixedNum(score(r, t.Objective)), bound, FixedNum(t.Reach[k]))
	}
	if n := len(t.Rivals) - maxNearTieRivals; n > 0 {
		fmt.Fprintf(&b, "; and %d more", n)
	}
	b.WriteString(". Choose among them on other grounds, or search them again with a smaller capacity_search.relative_tolerance.")
	return b.String()
}
