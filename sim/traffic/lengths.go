package traffic

import (
	"math"
	"math/rand/v2"
)

// LengthKind says how a Length draws token counts.
type LengthKind uint8

// The kinds of Length.
const (
	// LengthFixed is always Value and draws nothing.
	LengthFixed LengthKind = iota
	// LengthUniform draws an integer uniformly in [Min, Max].
	LengthUniform
	// LengthNormal draws round(Mean + Stddev × Z), Z standard normal, clipped to [Min, Max].
	LengthNormal
	// LengthLognormal draws round(exp(μ + σ × Z)) clipped to [Min, Max], with σ² = ln(1 +
	// Stddev²/Mean²) and μ = ln Mean − σ²/2, so that the unclipped count has mean Mean and
	// standard deviation Stddev (the moments of the log-normal distribution).
	LengthLognormal
	// LengthEmpirical draws Values[i] with probability Weights[i] / Σ Weights (equal weights when
	// Weights is empty).
	LengthEmpirical
)

// Length is a distribution of token counts (a prompt, an output, a turn's new input). The zero
// value is a fixed 0; build one with Fixed or by setting Kind and its parameters (in tokens).
// Draws are integers; a fixed length consumes no random numbers, so a workload of fixed lengths
// does not depend on the seed.
type Length struct {
	Kind LengthKind
	// Value is the count of LengthFixed.
	Value int
	// Min and Max clip the draws of the uniform, normal and lognormal kinds (Min <= Max).
	Min, Max int
	// Mean and Stddev are the moments of the normal and lognormal kinds, in tokens.
	Mean, Stddev float64
	// Values and Weights define LengthEmpirical.
	Values  []int
	Weights []float64
}

// Fixed is the length that is always n tokens.
func Fixed(n int) Length { return Length{Kind: LengthFixed, Value: n} }

// Random reports whether drawing from l consumes random numbers.
func (l *Length) Random() bool { return l.Kind != LengthFixed }

// Bound is the largest count l can draw.
func (l *Length) Bound() int {
	switch l.Kind {
	case LengthFixed:
		return l.Value
	case LengthEmpirical:
		m := 0
		for _, v := range l.Values {
			m = max(m, v)
		}
		return m
	}
	return l.Max
}

// Draw returns one count from l, using rng unless l is fixed.
func (l *Length) Draw(rng *rand.Rand) int {
	switch l.Kind {
	case LengthUniform:
		return l.Min + rng.IntN(l.Max-l.Min+1)
	case LengthNormal:
		return l.clip(l.Mean + l.Stddev*rng.NormFloat64())
	case LengthLognormal:
		if l.Stddev == 0 {
			return l.clip(l.Mean)
		}
		s2 := math.Log1p(l.Stddev * l.Stddev / (l.Mean * l.Mean))
		return l.clip(math.Exp(math.Log(l.Mean) - s2/2 + math.Sqrt(s2)*rng.NormFloat64()))
	case LengthEmpirical:
		return l.Values[pick(rng, l.Weights, len(l.Values))]
	}
	return l.Value
}

// clip rounds x to the nearest integer within [Min, Max].
func (l *Length) clip(x float64) int {
	switch r := math.Round(x); {
	case !(r >= float64(l.Min)): // also NaN
		return l.Min
	case r > float64(l.Max):
		return l.Max
	default:
		return int(r)
	}
}

// pick draws an index in [0, n) with probability weights[i] / Σ weights, or uniformly when
// weights is empty. It consumes one random number whenever n > 1.
func pick(rng *rand.Rand, weights []float64, n int) int {
	if n <= 1 {
		return 0
	}
	if len(weights) == 0 {
		return rng.IntN(n)
	}
	total := 0.0
	for _, w := range weights {
		total += w
	}
	u := rng.Float64() * total
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return n - 1 // rounding left u at the very top
}

// newRand is the generator of a workload's draws: PCG seeded with seed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6c656e67746873)) }

// thinkRand returns the generator of a workload's think times, seeded by seed on a stream of
// its own (newRand's draws the lengths).
func thinkRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x7468696e6b)) }
