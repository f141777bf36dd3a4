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

// fastSum accumulates non-negative products x × c in blocks of fastSumBlock (or block) terms, each as an
// unevaluated double-double hi + lo: each product is split exactly (math.FMA) and each addition
// to hi exactly (Knuth's TwoSum), and only the additions into lo round. A full block's hi and lo
// go into an exactSum, exactly, and its rounding bound into err. The value is then certified:
// when every real number within err of the exact sum of the blocks rounds to the same float64,
// that float64 is the correctly rounded exact sum, the bits exactSum would give; otherwise the
// caller recomputes with exactSum. (The error analysis of the cascaded summation within a block
// is Ogita, Rump and Oishi, "Accurate Sum and Dot Product", SIAM J. Sci. Comput. 26(6), 2005,
// algorithm Sum2; the bound here is looser and simpler.) Blocks keep the bound, which grows with
// the square of the terms summed in one double-double, small for any population: hundreds of
// millions of ITL entries still certify. A few flops per term against exactSum's walk of its
// partials.
type fastSum struct {
	hi, lo float64
	abs    float64 // Σ |terms| of the block (hi's terms and the product errors)
	n      float64 // terms in the block
	done   exactSum
	err    float64 // bound on the rounding of the finished blocks
	bad    bool    // a finished block was not finite or too large to bound
	block  float64 // terms per block; 0: fastSumBlock (tests make blocks small)
}

// fastSumBlock is the number of terms fastSum sums in one double-double before it moves the
// block into its exact accumulator, unless the sum sets its own (fastSum.block).
const fastSumBlock = 4096.0

// addProduct adds x × c; x × c must be >= 0 and finite for value to certify.
func (a *fastSum) addProduct(x, c float64) {
	p := x * c
	e := math.FMA(x, c, -p)
	s := a.hi + p
	bp := s - a.hi
	a.lo += ((a.hi - (s - bp)) + (p - bp)) + e
	a.hi = s
	a.abs += math.Abs(p) + math.Abs(e)
	if a.n++; a.n == fastSumBlock || a.n == a.block {
		a.flush()
	}
}

// roundOff is the unit roundoff of float64, 2^-53.
const roundOff = 1.0 / (1 << 53)

// flush moves the block into done and its bound into err. Each term's TwoSum error and product
// error are exact and at most roundOff × abs each; lo accumulates them with 3 roundings per
// term, each at most roundOff × (|lo| + 2 roundOff abs) <= roundOff × 2 (n + 1) roundOff abs, so
// |exact − (hi + lo)| <= 6 n (n + 1) roundOff² abs; the bound used is 8 n (n + 1) roundOff² abs.
func (a *fastSum) flush() {
	if a.n == 0 {
		return
	}
	if math.IsNaN(a.hi+a.lo) || math.IsInf(a.hi+a.lo, 0) || math.IsInf(a.abs, 0) || a.abs > 1e300 {
		a.bad = true
	} else {
		a.done.add(a.hi)
		a.done.add(a.lo)
		a.err += 8 * a.n * (a.n + 1) * roundOff * roundOff * a.abs
	}
	a.hi, a.lo, a.abs, a.n = 0, 0, 0, 0
}

// value returns the exact sum of the terms rounded to the nearest float64 and true, or false
// when it cannot be certified to round like the exact sum (recompute with exactSum). It ends the
// block in progress: call it once all terms are added.
func (a *fastSum) value() (float64, bool) {
	a.flush()
	if a.bad {
		return 0, false
	}
	r := a.done.value()
	e := a.err + math.SmallestNonzeroFloat64
	// The exact sum of the blocks plus and minus the bound, each rounded once.
	var lo, hi exactSum
	for _, p := range a.done.partials {
		lo.add(p)
		hi.add(p)
	}
	lo.add(-e)
	hi.add(e)
	if lo.value() != r || hi.value() != r {
		return 0, false
	}
	return r, true
}
