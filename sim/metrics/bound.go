package metrics

// BoundTolerance is the relative slack with which a latency is compared with an SLA bound:
// a value v meets bound b when v <= b·(1 + BoundTolerance).
//
// Latencies are differences of absolute virtual times (first token − arrival), so a request that
// meets a bound exactly in exact arithmetic can miss it by the rounding of those times: arriving
// at 4,085.6 ms with a 15 ms TTFT gives 15.000000000000455 ms. That error is at most a few ulps
// of the run's latest time (4.7e-10 ms at one hour, 1.2e-8 ms at two weeks), far below 1e-9 of
// any bound of 1 ms or more, and 1e-9 is the resolution at which servesweep compares objective
// values (results.ObjectiveDigits, 9 significant digits), so a bound never separates two values
// the Pareto front treats as equal.
const BoundTolerance = 1e-9

// MeetsBound reports whether latency v (ms) meets the SLA bound b (ms, > 0), inclusively and
// with BoundTolerance. It is the one comparison of a latency with a bound: per-request goodput,
// SLA headroom and percentile SLA terms all use it.
func MeetsBound(v, b float64) bool {
	return v <= b+b*BoundTolerance
}
