package metrics

import (
	"math"
	"strconv"
	"strings"
)

// PercentileTerm is one percentile bound of an SLA: the run's Percentile-th percentile of the
// Latency distribution must not exceed BoundMs (MeetsBound). Unlike the per-request bounds it is
// met or not by the run as a whole, and it does not change goodput.
type PercentileTerm struct {
	// Percentile is 50, 90, 95 or 99: the Stats field Median, P90, P95 or P99.
	Percentile int
	// Latency is "ttft" (Summary.TTFT, one sample per completed request with a token), "itl"
	// (Summary.ITL, every inter-token gap of the run), "tpot" (Summary.TPOT, one sample per
	// completed request with two or more tokens) or "e2e" (Summary.E2E, one per completed request
	// with a token).
	Latency string
	// BoundMs is the bound in ms (> 0).
	BoundMs float64
}

// Key is the term's evaluation.sla key, e.g. p99_itl_ms.
func (t PercentileTerm) Key() string {
	return "p" + strconv.Itoa(t.Percentile) + "_" + t.Latency + "_ms"
}

// summarySuffix maps a term's Latency to the prediction.json key suffix of its distribution.
var summarySuffix = map[string]string{"ttft": "ttft_ms", "itl": "itl_ms", "tpot": "tpot_ms", "e2e": "e2e_latency_ms"}

// samplesKey maps a term's Latency to the prediction.json key of its distribution's sample count.
var samplesKey = map[string]string{"ttft": "num_ttft_samples", "itl": "num_itl_samples", "tpot": "num_tpot_samples",
	"e2e": "num_e2e_latency_samples"}

// SummaryKey is the prediction.json key of the statistic the term bounds: median_<suffix> for
// p50, p<n>_<suffix> otherwise, where suffix is ttft_ms, itl_ms, tpot_ms or e2e_latency_ms (p99_e2e_ms
// bounds p99_e2e_latency_ms). "" for a term of an unknown latency.
func (t PercentileTerm) SummaryKey() string {
	suffix, ok := summarySuffix[t.Latency]
	if !ok {
		return ""
	}
	if t.Percentile == 50 {
		return "median_" + suffix
	}
	return "p" + strconv.Itoa(t.Percentile) + "_" + suffix
}

// SamplesKey is the prediction.json key of the sample count of the term's distribution
// (num_ttft_samples, num_itl_samples, num_tpot_samples or num_e2e_latency_samples).
func (t PercentileTerm) SamplesKey() string { return samplesKey[t.Latency] }

// Met reports whether the term holds for a run whose percentile is value over samples samples:
// MeetsBound(value, BoundMs), or vacuously when the distribution has no sample (no latency
// exceeds the bound; a run in which no request completed fails SLA attainment instead).
func (t PercentileTerm) Met(value float64, samples int64) bool {
	return samples == 0 || MeetsBound(value, t.BoundMs)
}

// Ratio is value / BoundMs, the factor by which the bound would need scaling for the term to hold
// exactly (0 with no sample).
func (t PercentileTerm) Ratio(value float64, samples int64) float64 {
	if samples == 0 {
		return 0
	}
	return value / t.BoundMs
}

// Value returns the run's percentile the term bounds and its distribution's sample count; ok is
// false for an unknown latency or percentile.
func (t PercentileTerm) Value(s *Summary) (value float64, samples int64, ok bool) {
	var st Stats
	switch t.Latency {
	case "ttft":
		st = s.TTFT
	case "itl":
		st = s.ITL
	case "tpot":
		st = s.TPOT
	case "e2e":
		st = s.E2E
	default:
		return 0, 0, false
	}
	switch t.Percentile {
	case 50:
		value = st.Median
	case 90:
		value = st.P90
	case 95:
		value = st.P95
	case 99:
		value = st.P99
	default:
		return 0, 0, false
	}
	return value, st.Samples, true
}

// TermResult is how a run fared against one percentile term.
type TermResult struct {
	// Term is the bound evaluated.
	Term PercentileTerm
	// Value is the run's percentile in ms and Samples its distribution's size.
	Value   float64
	Samples int64
	// Met is Term.Met(Value, Samples).
	Met bool
}

// CheckTerms evaluates terms against values, a run's prediction.json summary as numbers
// (results.SummaryValues, a journal record's summary): each term's SummaryKey and SamplesKey.
// A term whose keys are missing fails, with Value NaN. Results follow the order of terms.
func CheckTerms(terms []PercentileTerm, values map[string]float64) []TermResult {
	out := make([]TermResult, len(terms))
	for i, t := range terms {
		v, okV := values[t.SummaryKey()]
		n, okN := values[t.SamplesKey()]
		if !okV || !okN {
			out[i] = TermResult{Term: t, Value: math.NaN()}
			continue
		}
		out[i] = TermResult{Term: t, Value: v, Samples: int64(n), Met: t.Met(v, int64(n))}
	}
	return out
}

// checkSummaryTerms evaluates terms against the distributions of s.
func checkSummaryTerms(terms []PercentileTerm, s *Summary) []TermResult {
	out := make([]TermResult, len(terms))
	for i, t := range terms {
		v, n, ok := t.Value(s)
		if !ok {
			out[i] = TermResult{Term: t, Value: math.NaN()}
			continue
		}
		out[i] = TermResult{Term: t, Value: v, Samples: n, Met: t.Met(v, n)}
	}
	return out
}

// AllMet reports whether every result is met (true for none).
func AllMet(results []TermResult) bool {
	for _, r := range results {
		if !r.Met {
			return false
		}
	}
	return true
}

// FailedKeys lists the keys (PercentileTerm.Key) of the results that are not met, in order; nil
// when every one is.
func FailedKeys(results []TermResult) []string {
	var out []string
	for _, r := range results {
		if !r.Met {
			out = append(out, r.Term.Key())
		}
	}
	return out
}

// DescribeFailed says which results are not met and by how much (values to 9 significant digits),
// e.g. "p99_itl_ms 45.2 > 40";
// "" when every one is.
func DescribeFailed(results []TermResult) string {
	var parts []string
	for _, r := range results {
		if !r.Met {
			parts = append(parts, r.Term.Key()+" "+strconv.FormatFloat(r.Value, 'g', 9, 64)+" > "+
				strconv.FormatFloat(r.Term.BoundMs, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ", ")
}

// PercentileHeadroom is the largest Ratio over results: the factor by which every percentile
// bound would need scaling for all of them to hold (<= 1 + BoundTolerance when they do); 0 for
// none.
func PercentileHeadroom(results []TermResult) float64 {
	h := 0.0
	for _, r := range results {
		if math.IsNaN(r.Value) {
			return math.Inf(1)
		}
		h = math.Max(h, r.Term.Ratio(r.Value, r.Samples))
	}
	return h
}
