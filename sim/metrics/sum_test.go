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
