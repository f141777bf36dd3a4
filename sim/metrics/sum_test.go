package metrics

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Hand-computed: 1e16 + 1 + 1 − 1e16 is 2 exactly, where left-to-right float64 addition gives 0
// (1e16 + 1 rounds back to 1e16); 0.1 added ten times is the float64 nearest to 1.
func TestExactSumHandComputed(t *testing.T) {
	var a exactSum
	for _, x := range []float64{1e16, 1, 1, -1e16} {
		a.add(x)
	}
	if got := a.value(); got != 2 {
		t.Errorf("1e16 + 1 + 1 - 1e16 = %v, want 2", got)
	}
	var b exactSum
	for i := 0; i < 10; i++ {
		b.add(0.1)
	}
	// 10 × float64(0.1) = 1.0000000000000000555..., whose nearest float64 is 1.
	if got := b.value(); got != 1 {
		t.Errorf("ten 0.1s = %.17g, want 1", got)
	}
	var empty exactSum
	if empty.value() != 0 {
		t.Error("empty sum is not 0")
	}
}

// Property: the sum is the exact sum rounded once (math/big at 4096 bits as the oracle) and the
// same bits for any order of the values.
func TestExactSumIsCorrectlyRoundedAndOrderFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(60)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Ldexp(rng.Float64()-0.3, rng.IntN(80)-40)
			if rng.IntN(7) == 0 {
				xs[i] = -xs[i-min(i, 1)]
			}
		}
		exact := new(big.Float).SetPrec(4096)
		for _, x := range xs {
			exact.Add(exact, new(big.Float).SetFloat64(x))
		}
		want, _ := exact.Float64()
		var a exactSum
		for _, x := range xs {
			a.add(x)
		}
		if got := a.value(); got != want {
			t.Fatalf("trial %d: got %.17g want %.17g", trial, got, want)
		}
		rng.Shuffle(n, func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		var b exactSum
		for _, x := range xs {
			b.add(x)
		}
		if got := b.value(); got != want {
			t.Fatalf("trial %d shuffled: got %.17g want %.17g", trial, got, want)
		}
	}
}

// Property: whenever fastSum certifies its value, it is the exact sum of the products rounded to
// the nearest float64 (big.Float reference), over non-negative products of wide magnitude ranges,
// with counts; and a sum whose exact value lies on a rounding midpoint is not certified.
func TestFastSumCertifiedIsCorrectlyRounded(t *testing.T) {
	for _, block := range []float64{4096, 1, 3, 17} {
		testFastSumCertified(t, block)
	}
}

func testFastSumCertified(t *testing.T, block float64) {
	rng := rand.New(rand.NewPCG(7, 8))
	certified := 0
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(200)
		f := fastSum{block: block}
		exact := new(big.Float).SetPrec(8192)
		for range n {
			x := math.Ldexp(rng.Float64(), rng.IntN(120)-60)
			c := float64(1 + rng.IntN(1000))
			f.addProduct(x, c)
			exact.Add(exact, new(big.Float).SetPrec(8192).Mul(new(big.Float).SetFloat64(x), new(big.Float).SetFloat64(c)))
		}
		want, _ := exact.Float64()
		if got, ok := f.value(); ok {
			certified++
			if got != want {
				t.Fatalf("block %v trial %d: certified %.17g, exact rounds to %.17g", block, trial, got, want)
			}
		}
	}
	if certified < 1900 {
		t.Errorf("block %v: only %d of 2000 sums certified: the bound is too loose to save work", block, certified)
	}
	// 1 + 2^-53 is halfway between 1 and its successor; ties go to even (1). hi + lo holds it
	// exactly but no bound can certify the tie, so the caller must recompute.
	var f fastSum
	f.addProduct(1, 1)
	f.addProduct(math.Ldexp(1, -53), 1)
	if _, ok := f.value(); ok {
		t.Errorf("block %v: a sum on a rounding midpoint was certified", block)
	}
	var e exactSum
	e.add(1)
	e.add(math.Ldexp(1, -53))
	if e.value() != 1 {
		t.Errorf("exactSum of the midpoint: %v, want 1 (ties to even)", e.value())
	}
}
