// Package metrics turns what a run recorded into the prediction report: latency distributions
// (TTFT, TTST, TPOT, ITL, E2E, per-user throughput), throughputs, prefix reuse, goodput and
// GPU-hours, with the statistics rules of dynosim-spec.md §4.2.1. Start with Summary.
package metrics

import (
	"math"
	"slices"
)

// Stats is the nine-number summary of one latency population. Units are those of the samples.
type Stats struct {
	Mean, Min, Max, Median, P75, P90, P95, P99, Std float64
	// Samples is the population size (finite samples; weighted samples count their weight).
	// With no sample every statistic is 0 (dynosim-spec.md §4.2.1), which reports show as N/A.
	Samples int64
}

// percentileRank is the 0-based rank of percentile p in a population of n (n > 0): the nearest
// rank round((n−1)·p/100), rounding half away from zero, clamped to n−1 (dynosim-spec.md §4.2.1).
func percentileRank(n int64, p float64) int64 {
	r := int64(math.Round(float64(n-1) * p / 100))
	return min(max(r, 0), n-1)
}

// Summarize returns the Stats of samples: arithmetic mean, population standard deviation
// (divide by n), exact min and max, and nearest-rank percentiles without interpolation. Sums are
// exact and rounded once (exactSum), so the result does not depend on the samples' order.
// Non-finite samples are dropped; an empty population gives all zeros. samples is sorted in place.
func Summarize(samples []float64) Stats {
	s := samples[:0]
	for _, v := range samples {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return Stats{}
	}
	slices.Sort(s)
	var sum, ss exactSum
	for _, v := range s {
		sum.add(v)
	}
	n := int64(len(s))
	mean := sum.value() / float64(n)
	for _, v := range s {
		d := v - mean
		ss.add(float64(d * d))
	}
	at := func(p float64) float64 { return s[percentileRank(n, p)] }
	return Stats{
		Mean: mean, Min: s[0], Max: s[n-1], Std: math.Sqrt(ss.value() / float64(n)),
		Median: at(50), P75: at(75), P90: at(90), P95: at(95), P99: at(99), Samples: n,
	}
}
