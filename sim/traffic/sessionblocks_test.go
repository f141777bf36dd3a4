package traffic

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// hashedBlocks is Blocks(blockSize, maxTokens) of w computed by hashing every shared block
// (the path every workload without session structure takes), uncached.
func hashedBlocks(w *Workload, blockSize, maxTokens int) *BlockSet {
	sp := w.sessions
	w.sessions = nil
	defer func() { w.sessions = sp }()
	return w.computeBlocks(blockSize, maxTokens)
}

// sameBlockSet reports how a differs from b: their full blocks, runs, distinct count and, when
// both keep them, shared ids.
func sameBlockSet(a, b *BlockSet) error {
	switch {
	case !slices.Equal(a.Full, b.Full):
		return fmt.Errorf("full blocks %v, want %v", a.Full, b.Full)
	case a.Distinct != b.Distinct:
		return fmt.Errorf("distinct %d, want %d", a.Distinct, b.Distinct)
	case !slices.Equal(a.depth, b.depth):
		return fmt.Errorf("depth %v, want %v", a.depth, b.depth)
	case !slices.Equal(a.own, b.own):
		return fmt.Errorf("own %v, want %v", a.own, b.own)
	case !slices.Equal(a.prior, b.prior):
		return fmt.Errorf("prior %v, want %v", a.prior, b.prior)
	case !slices.Equal(a.base, b.base):
		return fmt.Errorf("base %v, want %v", a.base, b.base)
	case (a.Shared == nil) != (b.Shared == nil):
		return fmt.Errorf("compact %v, want %v", a.Shared == nil, b.Shared == nil)
	}
	for i := range a.Shared {
		if !slices.Equal(a.Shared[i], b.Shared[i]) {
			return fmt.Errorf("request %d: shared ids %v, want %v", i, a.Shared[i], b.Shared[i])
		}
	}
	return nil
}

// A synthetic-session workload's BlockSet, derived from how its sessions share content, is the
// one hashing its blocks gives, field for field: over random mixtures of session shapes (turns,
// drawn lengths, shared-prefix ratios and groups, think times), block sizes from 1 token to more
// than a turn, and context limits that cut turns short or leave them out.
func TestSessionBlocksMatchHashing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	length := func() Length {
		lo := 1 + rng.IntN(60)
		switch rng.IntN(3) {
		case 0:
			return Fixed(lo)
		case 1:
			return Length{Kind: LengthUniform, Min: lo, Max: lo + rng.IntN(80)}
		}
		return Length{Kind: LengthEmpirical, Values: []int{lo, lo + 1 + rng.IntN(40)}}
	}
	shared := 0
	for trial := range 400 {
		shapes := make([]SessionShape, 1+rng.IntN(3))
		weights := make([]float64, len(shapes))
		for c := range shapes {
			shapes[c] = SessionShape{Turns: 1 + rng.IntN(5), NewInput: length(), Output: length(),
				SharedPrefixRatio: []float64{0, 0.3, 0.75, 1}[rng.IntN(4)], PrefixGroups: rng.IntN(5),
				InterTurnDelayMs: 10, InterTurnDelayStddevMs: float64(rng.IntN(2)) * 5}
			weights[c] = 1 + rng.Float64()
		}
		w := SyntheticSessionsMix(1+rng.IntN(40), shapes, weights, rng.Uint64())
		if rng.IntN(4) == 0 {
			w.MaterializedKeysLimit = -1
		}
		bs := []int{1, 2, 3, 8, 16, 64, 200}[rng.IntN(7)]
		maxTokens := []int{1 << 30, 80 + rng.IntN(200), bs * (1 + rng.IntN(6))}[rng.IntN(3)]
		got := w.Blocks(bs, maxTokens)
		if w.sessions == nil {
			t.Fatal("a synthetic-session workload carries no session structure")
		}
		if err := sameBlockSet(got, hashedBlocks(w, bs, maxTokens)); err != nil {
			t.Fatalf("trial %d (shapes %+v, block size %d, max tokens %d): %v", trial, shapes, bs, maxTokens, err)
		}
		for _, d := range got.depth {
			shared += int(d)
		}
	}
	if shared == 0 {
		t.Fatal("no shared block in any trial: the comparison checks nothing")
	}
}
