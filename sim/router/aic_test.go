package router

import (
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// TestAICPrefillLoad: a prefill of n uncached tokens is predicted to take n/10 ms. Two slots,
// kv_router charging prefill tokens only:
//
//	t=0: request 0 (100 tokens, 10 ms) → slot A (a tie, broken by the seed)
//	     request 1 (400 tokens, 40 ms) → slot B (A costs 500, B 400)
//	     request 2 (150 tokens) → A (A 250, B 550)
//	t=4: A's load is 100·(1 − 4/10) + 150 = 210 (request 2 counts whole until it is the oldest)
//	t=30: A 0 + 150 (request 0 fully decayed though its first token has not come), B 400·(1 − 30/40)
//	     = 100, so a 16-token request 3 goes to B; without the aic model A (250) beats B (400).
//	     Request 0's first token at t=30 makes request 2 the oldest: its decay starts at 30, and at
//	     t=37.5 A's load is 150·(1 − 7.5/15) = 75.
func TestAICPrefillLoad(t *testing.T) {
	now := 0.0
	mk := func(aic bool) *Router {
		opt := Options{Policy: config.PolicyKVRouter, Workers: 2, Ranks: 1, BlockSize: 16, PrefillLoadScale: 1,
			TrackPrefill: true, Seed: 3, Requests: 8}
		if aic {
			opt.PrefillMs = func(n, cached int) float64 { return float64(n) / 10 }
			opt.Now = func() float64 { return now }
		}
		p, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, plain := mk(true), mk(false)
	route := func(req int32, isl int) (int, int) {
		a, _ := p.Route(req, isl, nil)
		b, _ := plain.Route(req, isl, nil)
		return a, b
	}
	a, _ := route(0, 100)
	b := 1 - a
	if s1, s2 := route(1, 400); s1 != b || s2 != b {
		t.Fatalf("request 1 went to %d and %d, want %d", s1, s2, b)
	}
	if s1, s2 := route(2, 150); s1 != a || s2 != a {
		t.Fatalf("request 2 went to %d and %d, want %d", s1, s2, a)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	now = 4
	near("load of A at 4 ms", p.PrefillLoad(a), 210)
	near("load of B at 4 ms", p.PrefillLoad(b), 400*(1-4.0/40))
	near("load of A without aic", plain.PrefillLoad(a), 250)
	now = 30
	near("load of A at 30 ms", p.PrefillLoad(a), 150)
	near("load of B at 30 ms", p.PrefillLoad(b), 100)
	if s1, s2 := route(3, 16); s1 != b || s2 != a {
		t.Errorf("request 3 went to %d with aic and %d without, want %d and %d", s1, s2, b, a)
	}
	p.PrefillDone(0)
	now = 37.5
	near("load of A at 37.5 ms", p.PrefillLoad(a), 75)
	if got := p.ActivePrefillTokens(a); got != 150 {
		t.Errorf("active prefill tokens of A %d, want 150 (whole charges)", got)
	}
	p.PrefillDone(2)
	near("load of A with no prefill", p.PrefillLoad(a), 0)
}
