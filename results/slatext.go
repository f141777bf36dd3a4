package results

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
)

// SLAText restates, in one sentence for report.md and the printed front, the evaluation.sla of
// rows (every row of a sweep carries the same: evaluation.sla cannot be searched): each bound
// with what it bounds, and how attainment applies: under a capacity search (m.CapacitySearch,
// or capacity columns when m is defaulted) the per-request bounds must hold for the target
// share of offered requests; without one they only count in goodput and sla_attainment; under
// m's strict_sla (or target min_gpus, which implies it) a candidate's means must be within them. Every
// percentile bound must hold over a row's run at its load. "SLA: none" when no row has a bound;
// "" for no row.
func SLAText(rows []Row, m *Manifest) string {
	if len(rows) == 0 {
		return ""
	}
	var r *Row
	for i := range rows {
		if HasSLA(&rows[i]) {
			r = &rows[i]
			break
		}
	}
	if r == nil {
		return "SLA: none (no evaluation.sla): no latency bound applies."
	}
	var req []string
	for _, b := range []struct {
		key, what string
		ms        *float64
	}{
		{"ttft_ms", "each request's TTFT", r.SLATTFTMs},
		{"itl_ms", "each request's mean inter-token gap", r.SLAITLMs},
		{"e2e_ms", "each request's E2E latency", r.SLAE2EMs},
	} {
		if b.ms != nil {
			req = append(req, fmt.Sprintf("%s %s (%s <= %s ms)", b.key, ms(*b.ms), b.what, ms(*b.ms)))
		}
	}
	var pct []string
	for _, b := range r.PercentileBounds() {
		stat := "p" + strconv.Itoa(b.Percentile)
		if b.Percentile == 50 {
			stat = "median"
		}
		what := map[string]string{
			"ttft": "TTFT over its requests", "itl": "of every inter-token gap",
			"tpot": "TPOT over its requests", "e2e": "E2E latency over its requests",
		}[b.Latency]
		pct = append(pct, fmt.Sprintf("%s %s (the run's %s %s <= %s ms)", b.Key(), ms(b.Ms), stat, what, ms(b.Ms)))
	}
	searched := false
	for i := range rows {
		searched = searched || rows[i].CapacityProbes != nil
	}
	var parts []string
	if len(req) > 0 {
		s := strings.Join(req, ", ")
		switch {
		case m != nil && m.CapacitySearch != nil:
			s += fmt.Sprintf(": for at least %s of offered requests at each deployment's capacity (capacity search attainment %g)",
				percent(m.CapacitySearch.Attainment), m.CapacitySearch.Attainment)
		case searched && (m == nil || m.Defaulted):
			s += fmt.Sprintf(": for the capacity search's attainment target of offered requests (unknown here: no %s beside the results)",
				ManifestFile)
		case searched:
			s += ": for the capacity search's attainment target of offered requests (the sweep's manifest does not record it)"
		default:
			s += ": counted per request in goodput and sla_attainment, with no attainment target (no capacity search)"
		}
		switch {
		case m != nil && m.Settings.StrictSLA:
			s += "; with optimization.strict_sla, a candidate's mean TTFT, mean TPOT and mean E2E latency must be within them"
		case m != nil && m.Settings.Target == optimization.TargetMinGPUs:
			// min_gpus holds its candidates to the SLA as strict_sla does, unasked.
			s += "; under target min_gpus (as with optimization.strict_sla), a candidate's mean TTFT, mean TPOT and mean E2E " +
				"latency must be within them"
		}
		parts = append(parts, s)
	} else if m != nil && m.CapacitySearch != nil {
		parts = append(parts, fmt.Sprintf("no per-request bound: every completed request counts toward the capacity search's attainment %g",
			m.CapacitySearch.Attainment))
	}
	if len(pct) > 0 {
		parts = append(parts, strings.Join(pct, ", ")+": over each run, at the row's load (a row that misses one is infeasible)")
	}
	return "SLA (evaluation.sla): " + strings.Join(parts, "; ") + "."
}

// PricesText says where the GPU-hour prices of the cost columns come from, in one sentence: the
// built-in sweep's example prices (m.ExamplePrices) or the user's optimization.cost.gpu_hour_usd,
// with the prices; "" when the sweep priced nothing (no price in m and no cost column in rows).
func PricesText(rows []Row, m *Manifest) string {
	if m == nil || len(m.GPUHourUSD) == 0 {
		for i := range rows {
			if rows[i].CostUSDPerHour == nil {
				continue
			}
			if m == nil || m.Defaulted {
				return fmt.Sprintf("Prices: the sweep's optimization.cost.gpu_hour_usd (not known here: no %s beside the results).", ManifestFile)
			}
			return "Prices: the sweep's optimization.cost.gpu_hour_usd (its manifest does not record them)."
		}
		return ""
	}
	var prices []string
	for _, id := range slices.Sorted(maps.Keys(m.GPUHourUSD)) {
		prices = append(prices, fmt.Sprintf("%s %g", id, m.GPUHourUSD[id]))
	}
	if m.ExamplePrices {
		return fmt.Sprintf("Prices (USD per GPU-hour): %s: the built-in sweep's EXAMPLE prices, for illustration, not quotes; "+
			"set your own in optimization.cost.gpu_hour_usd of a spec (-c).", strings.Join(prices, ", "))
	}
	return fmt.Sprintf("Prices (USD per GPU-hour): %s: yours, from optimization.cost.gpu_hour_usd of %s.",
		strings.Join(prices, ", "), m.Spec)
}

// ms formats a bound in ms.
func ms(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// percent formats a share in [0, 1] as a percentage, e.g. "99 %".
func percent(x float64) string { return strconv.FormatFloat(x*100, 'g', -1, 64) + " %" }

// latencyMetric reports whether metric is a request latency (TTFT, ITL, TPOT or E2E in ms, any
// statistic), which a capacity search measures at each deployment's own capacity.
func latencyMetric(metric string) bool {
	if !strings.HasSuffix(metric, "_ms") || strings.HasPrefix(metric, "sla_") {
		return false
	}
	for _, l := range []string{"ttft", "itl", "tpot", "e2e"} {
		if strings.Contains(metric, l) {
			return true
		}
	}
	return false
}

// LatencyRankingNote says, when a capacity search ran (m.CapacitySearch) and a latency ranks the
// points (an objective of a, or its scalar target's metric), that each row's latencies are
// measured at its own capacity, near the SLA's bounds, so ranking by them compares deployments
// at different loads and favours those with small capacities; "" otherwise. The printed front
// and report.md carry it.
func LatencyRankingNote(a *Analysis, m *Manifest) string {
	if m == nil || m.CapacitySearch == nil {
		return ""
	}
	var lat []string
	for _, o := range a.Settings.Objectives {
		if latencyMetric(o.Metric) {
			lat = append(lat, o.Metric)
		}
	}
	if o, ok := optimization.TargetObjective(a.Settings.Target); ok && latencyMetric(o.Metric) && !slices.Contains(lat, o.Metric) {
		lat = append(lat, o.Metric)
	}
	if len(lat) == 0 {
		return ""
	}
	verb := "ranks"
	if len(lat) > 1 {
		verb = "rank"
	}
	return fmt.Sprintf("Note: %s %s the points, but under a capacity search each row is measured at its own capacity, "+
		"where its latencies sit near the SLA's bounds: the ranking compares deployments at different loads and favours those "+
		"whose capacity is small. To compare latencies, sweep the deployments at one load (no capacity_search).", strings.Join(lat, ", "), verb)
}
