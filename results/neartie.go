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
// reach its value, within the brackets their capacities (or its own) were found in.
type NearTie struct {
	// Objective is the metric and direction the point is best at (one of Settings.Objectives,
	// or a scalar target's); Best indexes its row and Value is its value there.
	Objective optimization.Objective
	Best      int
	Value     float64
	// Rivals index the other candidates that could reach Value, nearest to it first (one equal to
	// it at ObjectiveDigits only when a bracket could part them: an exact tie is not a near one); Reach[i]
	// is Rivals[i]'s most favourable value within its bracket (its value scaled by bracketOf:
	// the load's bracket for a load, the throughput's for a rate or a cost per token, where more
	// capacity improves the metric, else its measured value), and Worst is Best's least
	// favourable one (scaled by its own bracketOf where more capacity worsens the metric, as for
	// a minimized throughput, else Value).
	Rivals []int
	Reach  []float64
	Worst  float64
}

// CapacityBracket is how far above its capacity (capacity_load) a row's true capacity may lie,
// as a ratio >= 1, under capacity search cs: the top of the bracket the search left, over the
// capacity. The top is the least load one of its probes missed the SLA at (for a concurrency,
// a whole number, one less: a search that met at 3 and missed at 4 found the capacity exactly);
// the search's max when it stopped at max_probes before any load missed (the capacity is only a
// lower bound then); for a row whose probes the row does not carry (a results file read without
// its probes.parquet), the missed load its reason names when its search stopped at max_probes
// (unconvergedUpper), else the relative tolerance's width (a concurrency: the largest whole
// number below it). 1 for a row without a capacity or whose search was bounded (the SLA
// held at the search's max, which it does not look beyond), and without a capacity search.
func CapacityBracket(r *Row, cs *optimization.CapacitySearch) float64 {
	if cs == nil || r.CapacityLoad == nil || !isFinite(*r.CapacityLoad) || *r.CapacityLoad <= 0 ||
		r.CapacityBounded != nil && *r.CapacityBounded {
		return 1
	}
	lo := *r.CapacityLoad
	whole := r.CapacityLoadUnit != nil && *r.CapacityLoadUnit == "concurrency"
	var top float64
	if miss, noMiss := unconvergedUpper(r); miss > 0 {
		top = miss
		if whole {
			top = math.Ceil(top) - 1
		}
	} else if noMiss && cs.Max > lo {
		top = cs.Max
	} else {
		// A closed search: the least missed load lay within the tolerance (the search's own test,
		// sweep's closed: hi - lo <= tol × lo), a concurrency at least one above.
		top = lo + cs.RelativeTolerance*lo
		if whole {
			top = math.Floor(top) - 1
		}
	}
	if !isFinite(top) || top <= lo {
		return 1
	}
	return top / lo
}

// Both reasons of a capacity search that stopped at max_probes before its bracket closed begin
// with unclosedMark (fillCapacity); the one that stopped before any load missed has noMissMark,
// the other "between LO and HI" with HI the least load that missed.
const (
	unclosedMark = "capacity_search: stopped at max_probes"
	noMissMark   = "before any load missed the SLA"
)

// Unconverged reports whether r's capacity search stopped at max_probes before its bracket
// closed: its reason says so (a degraded row's keeps it after its own), or its probes show no
// load missed above a capacity the search's max did not bound.
func Unconverged(r *Row) bool {
	if strings.Contains(r.Reason, unclosedMark) {
		return true
	}
	return len(r.Probes) > 0 && r.CapacityLoad != nil && (r.CapacityBounded == nil || !*r.CapacityBounded) && missedAbove(r) == nil
}

// unconvergedUpper reads what bounds r's capacity from above: the least load above it a probe
// missed at (miss > 0), else, from its probes (feasible, not bounded, none missed above: the
// search stopped before any miss) or its reason when the probes are absent, whether no load
// missed at all (noMiss). A degraded row's reason keeps the capacity search's after its own.
func unconvergedUpper(r *Row) (miss float64, noMiss bool) {
	if p := missedAbove(r); p != nil {
		return p.Load, false
	}
	if len(r.Probes) > 0 {
		return 0, r.CapacityLoad != nil && (r.CapacityBounded == nil || !*r.CapacityBounded)
	}
	i := strings.Index(r.Reason, unclosedMark)
	if i < 0 {
		return 0, false
	}
	rest := r.Reason[i:]
	if strings.Contains(rest, noMissMark) {
		return 0, true
	}
	if j := strings.Index(rest, " and "); j >= 0 {
		var hi float64
		if _, err := fmt.Sscanf(rest[j+len(" and "):], "%g", &hi); err == nil && isFinite(hi) {
			return hi, false
		}
	}
	return 0, false
}

// missedAbove is the probe of r at the least load above its capacity that missed the SLA, nil
// when none did (or r has no capacity or probes).
func missedAbove(r *Row) *ProbeRow {
	if r.CapacityLoad == nil {
		return nil
	}
	var miss *ProbeRow
	for k := range r.Probes {
		p := &r.Probes[k]
		if !p.MeetsSLA && isFinite(p.Load) && p.Load > *r.CapacityLoad && (miss == nil || p.Load < miss.Load) {
			miss = p
		}
	}
	return miss
}

// throughputBracket is how far above the measured one a row's throughput may lie at the top of
// its capacity's bracket, as a ratio >= 1: the bracket's width (CapacityBracket), a throughput
// growing at most in proportion to the load, and no more than the throughput measured at the
// load its search missed at, which lies above every load of the bracket (a saturated deployment
// gains nothing from more sessions in flight).
func throughputBracket(r *Row, cs *optimization.CapacitySearch) float64 {
	b := CapacityBracket(r, cs)
	if b == 1 || r.CapacityLoad == nil {
		return b
	}
	if miss := missedAbove(r); miss != nil && miss.OutputThroughputTokS != nil && r.OutputThroughputTokS != nil && *r.OutputThroughputTokS > 0 {
		if t := *miss.OutputThroughputTokS / *r.OutputThroughputTokS; isFinite(t) {
			return min(b, max(1, t))
		}
	}
	return b
}

// loadMetrics are the capacityScaled metrics that are the load itself, scaled by the bracket's
// width; the others are rates scaled as the throughput (throughputBracket).
var loadMetrics = map[string]bool{"capacity_load": true, "load_concurrency": true, "load_requests_per_second": true, "load_sessions_per_second": true}

// bracketOf is the factor by which metric o of row r may exceed its measured value at the top of
// r's capacity's bracket, to the metric's sign: > 1 grows it, < 1 shrinks it (a cost per
// token); 1 for a metric the capacity does not set.
func bracketOf(o optimization.Objective, r *Row, cs *optimization.CapacitySearch) float64 {
	sign := capacityScaled[o.Metric]
	if sign == 0 {
		return 1
	}
	f := throughputBracket(r, cs)
	if loadMetrics[o.Metric] {
		f = CapacityBracket(r, cs)
	}
	return math.Pow(f, float64(sign))
}

// favourable returns the better and the worse of x and y for objective o.
func favourable(o optimization.Objective, x, y float64) (better, worse float64) {
	if o.Direction == optimization.Minimize == (x < y) {
		return x, y
	}
	return y, x
}

// NearTies returns the best points whose lead is within what the capacity search resolved: for
// each of a.Best and, for a scalar target, the ranking's first point, on a metric the capacity
// sets (capacityScaled), the candidates whose most favourable value within their capacity's
// bracket (CapacityBracket) reaches the best point's least favourable one. A capacity is found
// within its bracket, and every metric of a row is measured at it; where a rival's true
// capacity, or the best point's, could close the gap, their order is not settled by the search.
// nil without a capacity search (m.CapacitySearch).
func NearTies(rows []Row, a *Analysis, m *Manifest) []NearTie {
	if m == nil || m.CapacitySearch == nil {
		return nil
	}
	cs := m.CapacitySearch
	var out []NearTie
	add := func(o optimization.Objective, best int) {
		if _, ok := capacityScaled[o.Metric]; !ok || slices.ContainsFunc(out, func(t NearTie) bool { return t.Objective == o && t.Best == best }) {
			return
		}
		v := score(&rows[best], o)
		_, worst := favourable(o, v, v*bracketOf(o, &rows[best], cs))
		t := NearTie{Objective: o, Best: best, Value: v, Worst: worst}
		var dist []float64
		for _, i := range a.Candidates {
			x := score(&rows[i], o)
			if i == best || !isFinite(x) {
				continue
			}
			reach, _ := favourable(o, x, x*bracketOf(o, &rows[i], cs))
			if reach == x && worst == v && atObjectiveDigits(x) == atObjectiveDigits(v) {
				continue // equal, and neither bracket could part them: a tie, not a near one
			}
			if better, _ := favourable(o, reach, worst); better == reach {
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
		add(b.Objective, b.Row)
	}
	if o, scalar := optimization.TargetObjective(a.Settings.Target); scalar && len(a.Ranking) > 0 {
		add(o, a.Ranking[0])
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
	what := "highest"
	if t.Objective.Direction == optimization.Minimize {
		what = "lowest"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Near tie: the %s %s (%s, point %s) is not settled by the capacity search: ", what, t.Objective.Metric,
		FixedNum(t.Value), id(t.Best))
	if t.Worst != t.Value {
		fmt.Fprintf(&b, "within its own capacity's bracket it could be %s, and %s could reach that: ", FixedNum(t.Worst),
			Plural(len(t.Rivals), "other candidate"))
	} else {
		fmt.Fprintf(&b, "%s could reach it within the brackets their capacities were found in: ", Plural(len(t.Rivals), "other candidate"))
	}
	for k, i := range t.Rivals[:min(len(t.Rivals), maxNearTieRivals)] {
		if k > 0 {
			b.WriteString("; ")
		}
		r := &rows[i]
		fmt.Fprintf(&b, "%s (%s, %s %s %s %s) %s", id(i), Plural(int(r.GPUs), "GPU"), labels.Hardware(r), r.Mode,
			labels.Shape(r), r.RouterPolicy, FixedNum(score(r, t.Objective)))
		if reach := t.Reach[k]; reach != score(r, t.Objective) {
			fmt.Fprintf(&b, ", %s at the top of its bracket", FixedNum(reach))
		}
	}
	if n := len(t.Rivals) - maxNearTieRivals; n > 0 {
		fmt.Fprintf(&b, "; and %d more", n)
	}
	b.WriteString(". Choose among them on other grounds, or search them again with a smaller capacity_search.relative_tolerance " +
		"(more max_probes where a search stopped short).")
	return b.String()
}

// Marginal is a front entry that another candidate could dominate within that candidate's
// capacity bracket: the front's membership there is not settled by the capacity search.
type Marginal struct {
	// Entry indexes the front entry's row; By the candidate that could dominate it, the one
	// needing the least; Factor that need: the ratio by which By's throughput (or load, for an
	// objective on the load) at its true capacity would exceed the measured one, within By's
	// bracket (1 when By's measured values already match Entry's at full precision).
	Entry, By int
	Factor    float64
}

// dominationFactor is how far up its capacity's bracket a row with values vj must lie to be at
// least as good as values vi on every objective: the largest, over the objectives the capacity
// sets where more capacity helps, of the factor its value needs (a throughput × f, a cost per
// token ÷ f), each within that objective's bracket (brackets[k], bracketOf); the others compare
// as measured. ok is false when some objective cannot get there.
func dominationFactor(objs []optimization.Objective, vj, vi, brackets []float64) (f float64, ok bool) {
	f = 1
	for k, o := range objs {
		x, y := vj[k], vi[k]
		if better, _ := favourable(o, x, y); better == x {
			continue // as good as measured
		}
		top, _ := favourable(o, x, x*brackets[k])
		if better, _ := favourable(o, top, y); top == x || better != top || x <= 0 || y <= 0 {
			return 0, false
		}
		// The capacity factor F with F^sign = y/x: the metric's sign is the bracket's side of 1.
		f = max(f, math.Pow(y/x, math.Copysign(1, math.Log(brackets[k]))))
	}
	return f, true
}

// MarginalFront returns the front entries (a.Front order) that another candidate could dominate
// if its capacity lay higher within its bracket (CapacityBracket), as Marginal: each names the
// candidate needing the least extra capacity. Such an entry is on the front by less than the
// search resolved, and a rerun (another seed, another run length) may drop it. nil without a
// capacity search or when no objective is one the capacity sets.
func MarginalFront(rows []Row, a *Analysis, m *Manifest) []Marginal {
	if !capacityObjectives(a, m) {
		return nil
	}
	// Each candidate's brackets, once: they depend on the candidate alone.
	brackets := make(map[int][]float64, len(a.Candidates))
	for _, j := range a.Candidates {
		b := make([]float64, len(a.Settings.Objectives))
		for k, o := range a.Settings.Objectives {
			b[k] = bracketOf(o, &rows[j], m.CapacitySearch)
		}
		brackets[j] = b
	}
	var out []Marginal
	for _, i := range a.Front {
		best := Marginal{Entry: i, By: -1}
		for _, j := range a.Candidates {
			if j == i || slices.Equal(a.compared[j], a.compared[i]) {
				continue
			}
			if f, ok := dominationFactor(a.Settings.Objectives, a.Values[j], a.Values[i], brackets[j]); ok && (best.By < 0 || f < best.Factor) {
				best.By, best.Factor = j, f
			}
		}
		if best.By >= 0 {
			out = append(out, best)
		}
	}
	return out
}

// FrontContenders returns the candidates off the front (in input order) that could join it
// within their own capacity bracket: at the favourable end of it on every objective the
// capacity sets, no candidate's measured values dominate theirs (checked against the front's
// entries, O(candidates × entries)). nil without a capacity search
// or when no objective is one the capacity sets.
func FrontContenders(rows []Row, a *Analysis, m *Manifest) []int {
	if !capacityObjectives(a, m) {
		return nil
	}
	cs := m.CapacitySearch
	onFront := map[int]bool{}
	for _, i := range a.Front {
		onFront[i] = true
		for _, t := range a.Ties[i] {
			onFront[t] = true
		}
	}
	objs := a.Settings.Objectives
	dirs := make([]optimization.Direction, len(objs))
	for k, o := range objs {
		dirs[k] = o.Direction
	}
	var out []int
	for _, j := range a.Candidates {
		if onFront[j] {
			continue
		}
		opt := make([]float64, len(objs))
		for k, o := range objs {
			x := a.Values[j][k]
			opt[k], _ = favourable(o, x, x*bracketOf(o, &rows[j], cs))
		}
		// Every candidate off the front is dominated by a front entry, so the entries are the
		// ones to check: what dominates opt, an entry dominates too.
		dominated := false
		for _, i := range a.Front {
			if dominates(a.Values[i], opt, dirs) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, j)
		}
	}
	return out
}

// capacityObjectives reports whether a's sweep ran a capacity search and one of its objectives
// is a metric the capacity sets.
func capacityObjectives(a *Analysis, m *Manifest) bool {
	if m == nil || m.CapacitySearch == nil {
		return false
	}
	return slices.ContainsFunc(a.Settings.Objectives, func(o optimization.Objective) bool { return capacityScaled[o.Metric] != 0 })
}

// describe is row i's deployment for the near-tie sentences: its point ID (a code span when md),
// GPUs, hardware, mode, shape and router.
func describe(rows []Row, i int, labels Labels, md bool) string {
	r := &rows[i]
	return fmt.Sprintf("%s (%s, %s %s %s %s)", idText(r.PointID, md), Plural(int(r.GPUs), "GPU"), labels.Hardware(r), r.Mode,
		labels.Shape(r), r.RouterPolicy)
}

// MarginalText is one sentence saying that front entry mg.Entry (rank its 1-based place on the
// front) is on the front by less than the capacity search resolved, for stdout and report.md.
func MarginalText(rows []Row, a *Analysis, mg *Marginal, labels Labels, md bool) string {
	rank := slices.Index(a.Front, mg.Entry) + 1
	by := "point " + describe(rows, mg.By, labels, md)
	if k := slices.Index(a.Front, mg.By); k >= 0 {
		by = fmt.Sprintf("#%d, point %s,", k+1, describe(rows, mg.By, labels, md))
	}
	return fmt.Sprintf("Marginal: #%d, point %s, is on the front by less than the capacity search resolved: %s would dominate it "+
		"were its %s at capacity %s higher than measured, within the bracket its capacity was found in; another run "+
		"(a seed, a run length) may drop it from the front.", rank, describe(rows, mg.Entry, labels, md), by, scaledNoun(a.Settings.Objectives),
		percentNeeded(mg.Factor))
}

// scaledNoun names what Marginal.Factor scales for objectives objs: "load" when every objective
// the capacity sets is a load (capacity_load, load_*), else "throughput" (a throughput or goodput
// rate, or the cost per token, which falls as it grows).
func scaledNoun(objs []optimization.Objective) string {
	for _, o := range objs {
		if capacityScaled[o.Metric] != 0 && o.Metric != "capacity_load" && !strings.HasPrefix(o.Metric, "load_") {
			return "throughput"
		}
	}
	return "load"
}

// ContendersText is one sentence saying how many candidates off the front could join it within
// their capacity's bracket, naming up to maxNearTieRivals of them; "" when none could.
func ContendersText(rows []Row, contenders []int, labels Labels, md bool) string {
	if len(contenders) == 0 {
		return ""
	}
	named := namedFew(contenders, func(i int) string { return describe(rows, i, labels, md) })
	within := "the brackets their capacities were found in"
	if len(contenders) == 1 {
		within = "the bracket its capacity was found in"
	}
	return fmt.Sprintf("Contenders: %s off the front could join it within %s (pareto.json's front_contenders): %s.",
		Plural(len(contenders), "candidate"), within, named)
}

// namedFew names the first maxNearTieRivals of points by name, joined by "; ", with "; and N
// more" for the rest.
func namedFew(points []int, name func(int) string) string {
	var named []string
	for _, i := range points[:min(len(points), maxNearTieRivals)] {
		named = append(named, name(i))
	}
	if n := len(points) - len(named); n > 0 {
		named = append(named, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(named, "; ")
}

// BoundedCandidates returns the candidates (in input order) whose capacity search held the SLA at
// its max (capacity_bounded): their capacity is only a lower bound, and so is every value measured
// there, with no bracket above it (CapacityBracket is 1), so where they stand against the others
// is not settled whatever the margin. nil without a capacity search or when no objective is one
// the capacity sets.
func BoundedCandidates(rows []Row, a *Analysis, m *Manifest) []int {
	if !capacityObjectives(a, m) {
		return nil
	}
	var out []int
	for _, j := range a.Candidates {
		if b := rows[j].CapacityBounded; b != nil && *b {
			out = append(out, j)
		}
	}
	return out
}

// BoundedText is one sentence naming up to maxNearTieRivals of the candidates whose capacity the
// search's max bounded (BoundedCandidates; ranked on a's front or ranking where they are), with
// that max as the first one's row gives it (its capacity load); "" when none is.
func BoundedText(rows []Row, a *Analysis, bounded []int, labels Labels, md bool) string {
	if len(bounded) == 0 {
		return ""
	}
	order := a.Front
	if a.Ranking != nil {
		order = a.Ranking
	}
	named := namedFew(bounded, func(i int) string {
		name := "point " + describe(rows, i, labels, md)
		if k := slices.Index(order, i); k >= 0 {
			name = fmt.Sprintf("#%d, %s", k+1, name)
		}
		return name
	})
	what := "their capacities and every value measured there are lower bounds, so where they stand against the others is not settled"
	if len(bounded) == 1 {
		what = "its capacity and every value measured there are lower bounds, so where it stands against the others is not settled"
	}
	byTrace := 0
	for _, j := range bounded {
		if TraceBounded(&rows[j]) {
			byTrace++
		}
	}
	at, fix := "at the capacity search's max", "raise optimization.capacity_search.max and sweep again"
	their := "their"
	if len(bounded) == 1 {
		their = "its"
	}
	switch {
	case byTrace == len(bounded):
		// TraceBoundMark's reason names the load the trace could not hold.
		at, fix = "below a load "+their+" trace cannot hold", "give a trace of more sessions ("+their+" reason names the load) and sweep again"
	case byTrace > 0:
		at = fmt.Sprintf("at the capacity search's max, or (%d of them) below a load their trace cannot hold", byTrace)
		fix = "raise optimization.capacity_search.max, or give a trace of more sessions, and sweep again"
	}
	return fmt.Sprintf("Capacity bounded: %s met the SLA %s (%s; pareto.json's capacity_bounded_points): %s; %s: %s.",
		Plural(len(bounded), "candidate"), at, load(&rows[bounded[0]]), named, what, fix)
}

// Unsettled is what a capacity search leaves unsettled in an analysis: best points whose lead a
// bracket could close (NearTies), front entries a rival could dominate within its bracket
// (MarginalFront) and candidates off the front that could join it (FrontContenders; these two
// under target pareto only, whose front is the recommendation). Each is empty without a
// capacity search.
type Unsettled struct {
	NearTies   []NearTie
	Marginal   []Marginal
	Contenders []int
	// Bounded are the candidates whose capacity the search's max bounded (BoundedCandidates),
	// under any target.
	Bounded []int
}

// UnsettledOf computes a's Unsettled (nil m: none), once per analysis and manifest: the printed
// front, pareto.json, report.md and report.html all read it.
func UnsettledOf(rows []Row, a *Analysis, m *Manifest) Unsettled {
	if a.unsettled != nil && a.unsettledFor == m {
		return *a.unsettled
	}
	u := Unsettled{NearTies: NearTies(rows, a, m), Bounded: BoundedCandidates(rows, a, m)}
	if a.Ranking == nil {
		// The front is the recommendation only under target pareto; a scalar ranking's first
		// point has its near ties.
		u.Marginal, u.Contenders = MarginalFront(rows, a, m), FrontContenders(rows, a, m)
	}
	a.unsettled, a.unsettledFor = &u, m
	return u
}

// Sentences are u's notes for stdout, report.md (md: point IDs as code spans) and report.html,
// in order: candidates whose capacity the search's max bounded, marginal front entries,
// contenders, near ties. A marginal entry whose rival a near
// tie already names against it, and contenders a near tie names as rivals, are left to the near
// tie's sentence (pareto.json keeps them all).
func (u *Unsettled) Sentences(rows []Row, a *Analysis, labels Labels, md bool) []string {
	named := map[[2]int]bool{}
	rival := map[int]bool{}
	for _, t := range u.NearTies {
		for _, j := range t.Rivals {
			named[[2]int{t.Best, j}], rival[j] = true, true
		}
	}
	var out []string
	if s := BoundedText(rows, a, u.Bounded, labels, md); s != "" {
		out = append(out, s)
	}
	for k, mg := range u.Marginal {
		if !named[[2]int{mg.Entry, mg.By}] {
			out = append(out, MarginalText(rows, a, &u.Marginal[k], labels, md))
		}
	}
	var others []int
	for _, c := range u.Contenders {
		if !rival[c] {
			others = append(others, c)
		}
	}
	if s := ContendersText(rows, others, labels, md); s != "" {
		if len(others) < len(u.Contenders) {
			s = strings.Replace(s, " off the front ", " off the front besides the near ties' rivals ", 1)
		}
		out = append(out, s)
	}
	for k := range u.NearTies {
		out = append(out, NearTieText(rows, &u.NearTies[k], labels, md))
	}
	return out
}

// percentNeeded renders a capacity factor's excess over 1 as a percentage to 0.01 %, "no" when
// none is needed and "under 0.01 %" below that.
func percentNeeded(f float64) string {
	switch pct := 100 * (f - 1); {
	case pct <= 0:
		return "no"
	case pct < 0.01:
		return "under 0.01 %"
	default:
		return FixedNum(math.Round(pct*100)/100) + " %"
	}
}
