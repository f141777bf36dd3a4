package metrics

import (
	"math"
	"slices"

	"github.com/servesweep/servesweep/sim/engine"
)

// SLARatio is how close request r came to the SLA: the largest of TTFT / ttft_ms, ITL /
// itl_ms (ITL as the goodput rule measures it: (e2e − ttft)/(n − 1), skipped for n <= 1) and
// E2E / e2e_ms over the bounds that are set. A request that emitted its requested output is good
// (isGood, the goodput rule of dynosim-spec.md §4.2.2) exactly when its ratio is <= 1 +
// BoundTolerance. A request that was rejected, did not finish, stopped short of its requested
// output (Truncated: it did less than it was asked, which the goodput rule, judging latencies
// alone, counts good), or finished without a token under a TTFT or ITL bound has ratio +Inf; a
// request no set bound applies to has ratio 0 (so has every other completed request under an SLA
// of percentile terms only). A capacity search's attainment counts as it does
// (Summary.GoodputTruncatedRequests).
func SLARatio(r *engine.Request, sla *SLA) float64 {
	if r.Status != engine.Completed || Truncated(r) {
		return math.Inf(1)
	}
	if !sla.hasRequestBounds() && len(sla.Percentiles) > 0 {
		return 0 // percentile terms only: every completed request is good (isGood)
	}
	n := r.Generated
	if n == 0 {
		if sla.TTFTMs > 0 || sla.ITLMs > 0 || sla.E2EMs <= 0 {
			return math.Inf(1)
		}
		return clamp(r.TerminalMs-r.ArrivalMs) / sla.E2EMs
	}
	ttft := clamp(r.FirstTokenMs - r.ArrivalMs)
	e2e := clamp(r.LastTokenMs - r.ArrivalMs)
	ratio := 0.0
	if sla.E2EMs > 0 {
		ratio = math.Max(ratio, e2e/sla.E2EMs)
	}
	if sla.TTFTMs > 0 {
		ratio = math.Max(ratio, ttft/sla.TTFTMs)
	}
	if sla.ITLMs > 0 && n > 1 {
		ratio = math.Max(ratio, (e2e-ttft)/float64(n-1)/sla.ITLMs)
	}
	return ratio
}

// SLAHeadroom is the smallest factor h by which every SLA bound could be scaled so that the
// share of offered requests (every request that arrived: completed, rejected or unfinished)
// meeting the scaled per-request bounds reaches attainment (in (0, 1]) and every percentile term
// of the SLA holds: the larger of the ⌈attainment × offered⌉-th smallest SLARatio and the
// largest percentile term's value / bound in terms (the run's Summary.SLATerms; nil when the SLA
// has no percentile term). Both are reached under the SLA itself exactly when h <= 1 (within
// BoundTolerance), and h measures the margin: 0.5 means every bound could be halved, 2 that they
// would need doubling. h is +Inf when too many requests were rejected or unfinished for any
// scaling to help, and 0 when no request arrived (or keep kept none). keep, when not nil, says
// which requests of reqs count as offered (e.g. those after a warm-up).
func SLAHeadroom(reqs []engine.Request, keep func(*engine.Request) bool, terms []TermResult, sla *SLA, attainment float64) float64 {
	ratios := make([]float64, 0, len(reqs))
	for i := range reqs {
		if r := &reqs[i]; r.Status != engine.Pending && (keep == nil || keep(r)) {
			ratios = append(ratios, SLARatio(r, sla))
		}
	}
	if len(ratios) == 0 {
		return 0
	}
	k := AttainmentCount(attainment, len(ratios))
	slices.Sort(ratios)
	return math.Max(ratios[k-1], PercentileHeadroom(terms))
}

// AttainmentCount is the least number of good requests among offered (>= 1) that makes
// good/offered >= attainment, attainment in (0, 1]; it is at least 1 and at most offered.
func AttainmentCount(attainment float64, offered int) int {
	k := int(math.Ceil(attainment * float64(offered)))
	// Guard the float product: step to the exact least k with k/offered >= attainment.
	for k > 1 && float64(k-1)/float64(offered) >= attainment {
		k--
	}
	for k < offered && float64(k)/float64(offered) < attainment {
		k++
	}
	return max(1, min(k, offered))
}

// Censored reports whether request r, unfinished when a max_virtual_time_seconds stop ended its
// run at stopMs (virtual ms, > 0), had broken no per-request bound of sla by then, so that
// whether it would have met sla is unknown (a censored observation). Its latencies are bounded
// below at the stop: TTFT by stopMs − arrival while no token came (the first token's time once
// one did), E2E by stopMs − arrival while output is still owed (the last token's time once all
// of it came), and its mean ITL (e2e − ttft)/(n − 1), n the requested output, by (that end −
// first token)/(n − 1); r is censored when every set bound still holds for those lower bounds
// (MeetsBound). A first token a disaggregated prefill worker made counts once a decode rank
// takes it up (its FirstTokenMs; until then TTFT is bounded as for no token). Under an SLA of
// percentile terms only, every unfinished request is censored. False for a request that
// completed, was rejected or never arrived, one whose output engine.context_length cuts
// (MaxOutput < RequestedOutput: truncated, a miss), and when stopMs <= 0.
//
// A closed loop keeps `concurrency` requests in flight to the stop, so counting them all as
// misses made a capacity depend on the window: a 60 s window held every deployment of a chat
// trace to concurrency 5, where a 600 s one found 31 and 43 (measured 2026-12-07).
func Censored(r *engine.Request, sla *SLA, stopMs float64) bool {
	if stopMs <= 0 || r.Status == engine.Completed || r.Status == engine.Rejected || r.Status == engine.Pending {
		return false
	}
	if r.MaxOutput < r.RequestedOutput {
		return false // engine.context_length cuts its output: truncated, a miss, whatever comes
	}
	if !sla.hasRequestBounds() {
		return true
	}
	end := stopMs // its last token comes at the stop or later
	if r.Generated >= r.RequestedOutput && r.LastTokenMs >= 0 {
		end = r.LastTokenMs
	}
	if sla.E2EMs > 0 && !MeetsBound(clamp(end-r.ArrivalMs), sla.E2EMs) {
		return false
	}
	if r.Generated == 0 || r.FirstTokenMs < 0 {
		// No token yet, or (disaggregated) a first token the prefill worker made that no decode
		// rank has taken up: its TTFT comes at the stop or later.
		return sla.TTFTMs <= 0 || MeetsBound(clamp(stopMs-r.ArrivalMs), sla.TTFTMs)
	}
	if sla.TTFTMs > 0 && !MeetsBound(clamp(r.FirstTokenMs-r.ArrivalMs), sla.TTFTMs) {
		return false
	}
	n := r.RequestedOutput
	return sla.ITLMs <= 0 || n <= 1 || MeetsBound(clamp(end-r.FirstTokenMs)/float64(n-1), sla.ITLMs)
}

// Truncated reports whether r completed short of its requested output (Summary.TruncatedRequests:
// engine.context_length or its KV pool stopped it).
func Truncated(r *engine.Request) bool {
	return r.Status == engine.Completed && r.Generated < r.RequestedOutput
}

// NotCompletedTerm is what SLABinding names when requests that were rejected, did not finish or
// stopped short of their output alone keep the attainment from its target: no scaling of a
// latency bound would help.
const NotCompletedTerm = "completion"

// SLABinding names the SLA term closest to breaking, or furthest past it, over the requests of
// reqs that keep keeps (nil: all): each per-request bound alone (ttft_ms, itl_ms, e2e_ms: the
// ⌈attainment × offered⌉-th smallest ratio of that bound, as SLAHeadroom takes the combined
// ratio) and each percentile term of terms (its key, e.g. p99_itl_ms: value / bound); the one
// whose scaling factor is the largest, earlier terms first on ties. NotCompletedTerm when that
// factor is +Inf for the per-request bounds (too many requests rejected or unfinished) and no
// percentile term is as large; "" when sla has no term or no request was kept. Under a capacity
// search it says what limits a deployment's capacity (sweep's probes).
func SLABinding(reqs []engine.Request, keep func(*engine.Request) bool, terms []TermResult, sla *SLA, attainment float64) string {
	name, worst := "", math.Inf(-1)
	consider := func(key string, h float64) {
		if h > worst {
			name, worst = key, h
		}
	}
	for _, b := range []struct {
		key   string
		bound SLA
	}{{"ttft_ms", SLA{TTFTMs: sla.TTFTMs}}, {"itl_ms", SLA{ITLMs: sla.ITLMs}}, {"e2e_ms", SLA{E2EMs: sla.E2EMs}}} {
		if b.bound.TTFTMs+b.bound.ITLMs+b.bound.E2EMs <= 0 {
			continue
		}
		ratios := make([]float64, 0, len(reqs))
		for i := range reqs {
			if r := &reqs[i]; r.Status != engine.Pending && (keep == nil || keep(r)) {
				ratios = append(ratios, SLARatio(r, &b.bound))
			}
		}
		if len(ratios) == 0 {
			return ""
		}
		slices.Sort(ratios)
		h := ratios[AttainmentCount(attainment, len(ratios))-1]
		if math.IsInf(h, 1) {
			if worst < h {
				name, worst = NotCompletedTerm, h
			}
			continue
		}
		consider(b.key, h)
	}
	for _, t := range terms {
		h := t.Term.Ratio(t.Value, t.Samples)
		if math.IsNaN(t.Value) {
			h = math.Inf(1)
		}
		consider(t.Term.Key(), h)
	}
	return name
}
