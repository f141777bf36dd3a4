package metrics

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// reference summarizes segs the slow way: expanded into Weighted entries and sorted.
func reference(segs []segment) (itl, perUser Stats) {
	var ws, us []Weighted
	for _, s := range segs {
		for i, v := range s.v {
			c := s.weight(i)
			if v < 0 {
				v = 0
			}
			ws = append(ws, Weighted{Value: v, Count: c})
			if v > 0 && c > 0 && !math.IsInf(v, 0) {
				us = append(us, Weighted{Value: 1000 / v, Count: c})
			}
		}
	}
	return SummarizeWeighted(ws), SummarizeWeighted(us)
}

// Hand-computed: gaps 0 (×1), 2 (×2), 4 (×1), 10 (×1): n 5, mean 18/5 = 3.6, ranks
// round(4p/100): p50 → 2 → 2, p75 → 3 → 4, p90/p95/p99 → 4 → 10. Rates 1000/g over the 4 gaps
// > 0: 500, 500, 250, 100; sorted 100, 250, 500, 500: mean 337.5, p50 rank round(1.5) = 2 → 500.
func TestGapStatsHandComputed(t *testing.T) {
	segs := []segment{{v: []float64{2, 0, 10}, c: []int32{2, 1, 1}}, {v: []float64{4}}}
	itl, rate, err := gapStats(segs)
	if err != nil {
		t.Fatal(err)
	}
	if itl.Samples != 5 || itl.Mean != 3.6 || itl.Min != 0 || itl.Max != 10 || itl.Median != 2 || itl.P75 != 4 || itl.P90 != 10 || itl.P99 != 10 {
		t.Errorf("itl %+v", itl)
	}
	if rate.Samples != 4 || rate.Mean != 337.5 || rate.Min != 100 || rate.Max != 500 || rate.Median != 500 || rate.P75 != 500 {
		t.Errorf("rate %+v", rate)
	}
}

// Property: gapStats equals the sorted reference to the bit, over populations with zeros,
// negative and non-finite values, counts <= 0, ties, wide value ranges and large groups of equal
// or nearly equal values (which take the selection through every digit level), populations past
// 2^16 entries, and segments that give their value bounds, wider than their values.
func TestGapStatsEqualsSortedReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		var segs []segment
		for k := 1 + rng.IntN(4); k > 0; k-- {
			n := rng.IntN(3000)
			if trial%50 == 0 {
				n = 70000 // past 2^16 entries: the 16-bit first level
			}
			s := segment{v: make([]float64, n)}
			if rng.IntN(3) > 0 {
				s.c = make([]int32, n)
			}
			base := math.Ldexp(1, rng.IntN(20)-5)
			for i := range s.v {
				switch r := rng.IntN(100); {
				case r < 3:
					s.v[i] = 0
				case r < 4:
					s.v[i] = -1
				case r < 5:
					s.v[i] = math.NaN()
				case r < 6:
					s.v[i] = math.Inf(1)
				case trial%3 == 0:
					s.v[i] = base // all equal
				case trial%3 == 1:
					s.v[i] = math.Nextafter(base, 2*base) + float64(rng.IntN(8))*1e-12 // nearly equal
				default:
					s.v[i] = base * math.Exp(rng.NormFloat64())
				}
				if s.c != nil {
					s.c[i] = int32(rng.IntN(6)) - 1
				}
			}
			if trial%2 == 1 {
				// Bounds given with the segment, as a pass-log chunk gives them, and wider than
				// its values.
				s.lo, s.hi = gapRange(s.v)
				s.lo, s.hi, s.ranged = s.lo-1, s.hi*2, true
			}
			segs = append(segs, s)
		}
		gotI, gotU, err := gapStats(segs)
		if err != nil {
			t.Fatal(err)
		}
		wantI, wantU := reference(segs)
		if gotI != wantI {
			t.Fatalf("trial %d ITL:\n got %+v\nwant %+v", trial, gotI, wantI)
		}
		if gotU != wantU {
			t.Fatalf("trial %d rate:\n got %+v\nwant %+v", trial, gotU, wantU)
		}
	}
}

// A segment whose given bounds its values break is an error naming both, not a selection that
// cannot find its ranks: here the bounds say 2 to 3 ms and a gap of 5 ms is among the values.
func TestGapStatsValuesOutsideGivenBounds(t *testing.T) {
	segs := []segment{{v: []float64{2, 5, 3}, c: []int32{1, 1, 1}, lo: 2, hi: 3, ranged: true}}
	_, _, err := gapStats(segs)
	if err == nil || !strings.Contains(err.Error(), "values 2 to 5 outside the bounds 2 to 3") {
		t.Fatalf("err = %v, want the values outside the bounds named", err)
	}
}
