package sim

import (
	"math"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// TestConstantRateProfileArrivals: with a constant_rate profile of 2 req/s until 1 s and then 10
// req/s, arrival i is at Λ⁻¹(i): 0 and 500 ms in the first phase, then every 100 ms from 1000 ms
// (Λ(1000) = 2); the last phase's rate holds after its end at 2 s.
func TestConstantRateProfileArrivals(t *testing.T) {
	cfg := testConfig(16, 1, 14, 1, 1000)
	cfg.Traffic.Load = config.Load{Type: config.LoadConstantRate, Profile: []config.LoadPhase{
		{UntilSeconds: 1, RequestsPerSecond: 2}, {UntilSeconds: 2, RequestsPerSecond: 10},
	}}
	res := mustRun(t, cfg)
	var got []float64
	for i := range res.Requests {
		got = append(got, math.Round(res.Requests[i].ArrivalMs*1e6)/1e6)
	}
	want := []float64{0, 500, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900, 2000, 2100}
	if !slices.Equal(got, want) {
		t.Errorf("arrivals %v, want %v", got, want)
	}
}

// TestPoissonProfileRates: a poisson profile of 1 req/s for 100 s then 20 req/s puts about 100
// arrivals in the first phase and 20 per second after it.
func TestPoissonProfileRates(t *testing.T) {
	cfg := testConfig(16, 1, 2100, 1, 1000)
	cfg.Traffic.Load = config.Load{Type: config.LoadPoisson, Seed: 42, Profile: []config.LoadPhase{
		{UntilSeconds: 100, RequestsPerSecond: 1}, {UntilSeconds: 200, RequestsPerSecond: 20},
	}}
	res := mustRun(t, cfg)
	first, second := 0, 0
	for i := range res.Requests {
		switch a := res.Requests[i].ArrivalMs; {
		case a < 100e3:
			first++
		case a < 200e3:
			second++
		}
	}
	// Poisson counts: mean 100 (sd 10) and 2000 (sd 45); five standard deviations either side.
	if first < 50 || first > 150 || second < 1775 || second > 2225 {
		t.Errorf("arrivals per phase %d and %d, want about 100 and 2000", first, second)
	}
}

// TestAdvanceProfile checks the time rescaling by hand: at 1 req/s until 2 s then 4 req/s, 3
// expected arrivals from 0.5 s take 1.5 s of the first phase and 1.5 arrivals (375 ms) of the
// second.
func TestAdvanceProfile(t *testing.T) {
	p := []config.LoadPhase{{UntilSeconds: 2, RequestsPerSecond: 1}, {UntilSeconds: 3, RequestsPerSecond: 4}}
	for _, tc := range []struct{ from, units, want float64 }{
		{500, 3, 2375}, {0, 1, 1000}, {2000, 4, 3000}, {3000, 2, 3500}, {5000, 1, 5250},
	} {
		if got := advanceProfile(p, tc.from, tc.units); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("advanceProfile(%v, %v) = %v, want %v", tc.from, tc.units, got, tc.want)
		}
	}
}
