package metrics

import "math"

// exactSum accumulates float64 values without rounding error and returns their sum rounded once
// to the nearest float64, so the result does not depend on the order of the additions: a
// population summarizes to the same bits whether its samples are sorted, selected or streamed.
//
// The state is a list of non-overlapping partial sums, smallest magnitude first, whose exact sum
// is the exact sum of the values added; each addition folds the new value through the partials
// with error-free two-sums (Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast
// Robust Geometric Predicates", Discrete & Computational Geometry 18, 1997, procedure
// Grow-Expansion with zero elimination). Values must be finite; a sample population here is
// bounded far below overflow (1e10 ms times at most 2^53 samples).
type exactSum struct {
	partials []float64
	buf      [4]float64
}

// add adds x exactly.
func (a *exactSum) add(x float64) {
	if a.partials == nil {
		a.partials = a.buf[:0]
	}
	i := 0
	for _, y := range a.partials {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			a.partials[i] = lo
			i++
		}
		x = hi
	}
	a.partials = append(a.partials[:i], x)
}

// addProduct adds x × c exactly: the rounded product plus its rounding error (an error-free
// product via math.FMA), so adding x × c equals adding x c times.
func (a *exactSum) addProduct(x, c float64) {
	hi := x * c
	a.add(hi)
	if lo := math.FMA(x, c, -hi); lo != 0 {
		a.add(lo)
	}
}

// value is the exact sum rounded to the nearest float64 (ties to even): the largest partial,
// corrected when the rest of the exact sum lies exactly halfway between two float64 values.
func (a *exactSum) value() float64 {
	p := a.partials
	n := len(p)
	if n == 0 {
		return 0
	}
	n--
	hi, lo := p[n], 0.0
	for n > 0 {
		x := hi
		y := p[n-1]
		n--
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// hi + lo is exact and lo is at most half an ulp of hi; when it is exactly half and the
	// partials below have the same sign as lo, the true sum lies beyond the halfway point.
	if n > 0 && ((lo < 0 && p[n-1] < 0) || (lo > 0 && p[n-1] > 0)) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}
