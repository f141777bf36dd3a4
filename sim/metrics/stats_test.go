package metrics

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Hand-computed: samples 1..10. mean 5.5; population std sqrt(8.25); ranks round(9p/100):
// p50 → round(4.5) = 5 → 6; p75 → round(6.75) = 7 → 8; p90 → round(8.1) = 8 → 9;
// p95 → round(8.55) = 9 → 10; p99 → 9 → 10.
func TestSummarizeHandComputed(t *testing.T) {
	s := Summarize([]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1})
	want := Stats{Mean: 5.5, Min: 1, Max: 10, Median: 6, P75: 8, P90: 9, P95: 10, P99: 10, Std: math.Sqrt(8.25), Samples: 10}
	if s != want {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
}

func TestSummarizeEmptyAndNonFinite(t *testing.T) {
	if s := Summarize(nil); s != (Stats{}) {
		t.Fatalf("empty: %+v", s)
	}
	s := Summarize([]float64{math.NaN(), 4, math.Inf(1)})
	if s != (Stats{Mean: 4, Min: 4, Max: 4, Median: 4, P75: 4, P90: 4, P95: 4, P99: 4, Samples: 1}) {
		t.Fatalf("non-finite not dropped: %+v", s)
	}
}

// Property: a weighted population summarizes exactly like its expansion.
func TestSummarizeWeightedEqualsExpanded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(30)
		var ws []Weighted
		var flat []float64
		for i := 0; i < n; i++ {
			v := float64(rng.IntN(20))/4 + rng.Float64()/1e3
			c := int64(rng.IntN(5))
			ws = append(ws, Weighted{Value: v, Count: c})
			for k := int64(0); k < c; k++ {
				flat = append(flat, v)
			}
		}
		got, want := SummarizeWeighted(ws), Summarize(flat)
		if got != want {
			t.Fatalf("trial %d: got %+v want %+v", trial, got, want)
		}
	}
}

// Weighted is a sample value that occurs Count times.
type Weighted struct {
	Value float64
	Count int64
}

// SummarizeWeighted is the test oracle of gapStats: Summarize over a population where each
// entry stands for Count equal samples, by sorting. The result equals Summarize of the expanded
// population to the bit (each Value × Count product enters the exact sums without rounding).
// Entries with Count <= 0 or a non-finite Value are dropped. ws is sorted in place.
func SummarizeWeighted(ws []Weighted) Stats {
	s := ws[:0]
	for _, w := range ws {
		if w.Count > 0 && !math.IsNaN(w.Value) && !math.IsInf(w.Value, 0) {
			s = append(s, w)
		}
	}
	if len(s) == 0 {
		return Stats{}
	}
	slices.SortFunc(s, func(a, b Weighted) int { return cmp.Compare(a.Value, b.Value) })
	var n int64
	var sum, ss exactSum
	for _, w := range s {
		n += w.Count
		sum.addProduct(w.Value, float64(w.Count))
	}
	mean := sum.value() / float64(n)
	for _, w := range s {
		d := w.Value - mean
		ss.addProduct(float64(d*d), float64(w.Count))
	}
	ranks := [5]float64{50, 75, 90, 95, 99}
	var vals [5]float64
	k := 0
	var cum int64
	for _, w := range s {
		cum += w.Count
		for k < len(ranks) && percentileRank(n, ranks[k]) < cum {
			vals[k] = w.Value
			k++
		}
	}
	return Stats{
		Mean: mean, Min: s[0].Value, Max: s[len(s)-1].Value, Std: math.Sqrt(ss.value() / float64(n)),
		Median: vals[0], P75: vals[1], P90: vals[2], P95: vals[3], P99: vals[4], Samples: n,
	}
}
