package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/servesweep/servesweep/sim/engine"
)

// done is a completed request that arrived at 0 with its first token at ttft ms and n tokens
// ending at e2e ms.
func done(ttft, e2e float64, n int32) engine.Request {
	return engine.Request{Status: engine.Completed, Generated: n, FirstTokenMs: ttft, LastTokenMs: e2e, TerminalMs: e2e}
}

func TestSLARatioHandComputed(t *testing.T) {
	sla := &SLA{TTFTMs: 500, ITLMs: 50}
	cases := []struct {
		name string
		r    engine.Request
		want float64
	}{
		// TTFT 250/500 = 0.5; ITL (1240 − 250)/(100 − 1) = 10 ms, 10/50 = 0.2.
		{"ttft binds", done(250, 1240, 100), 0.5},
		// TTFT 100/500 = 0.2; ITL (100 + 99·60 − 100)/99 = 60 ms, 60/50 = 1.2.
		{"itl binds", done(100, 100+99*60, 100), 1.2},
		// One token: no ITL sample; TTFT 600/500.
		{"one token", done(600, 600, 1), 1.2},
		{"rejected", engine.Request{Status: engine.Rejected}, math.Inf(1)},
		{"unfinished", engine.Request{Status: engine.Running, Generated: 3}, math.Inf(1)},
		{"no token", engine.Request{Status: engine.Completed, TerminalMs: 5}, math.Inf(1)},
		// The "ttft binds" request cut short of the 128 tokens it asked for.
		{"truncated", func() engine.Request { r := done(250, 1240, 100); r.RequestedOutput = 128; return r }(), math.Inf(1)},
	}
	for _, c := range cases {
		if got := SLARatio(&c.r, sla); math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("%s: SLARatio = %g, want %g", c.name, got, c.want)
		}
	}
	// Under an e2e-only SLA a request without a token is judged by its end-to-end time.
	r := engine.Request{Status: engine.Completed, TerminalMs: 30}
	if got := SLARatio(&r, &SLA{E2EMs: 60}); got != 0.5 {
		t.Errorf("e2e-only, no token: %g, want 0.5", got)
	}
}

// TestSLARatioAgreesWithGoodput checks, on random requests and SLAs, that a request is good by
// the goodput rule and emitted its requested output exactly when its SLA ratio is at most 1.
func TestSLARatioAgreesWithGoodput(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 20000; i++ {
		sla := &SLA{}
		switch rng.IntN(4) {
		case 0:
			sla.E2EMs = 1 + rng.Float64()*100
		default:
			if rng.IntN(2) == 0 {
				sla.TTFTMs = 1 + rng.Float64()*50
			}
			if rng.IntN(2) == 0 || sla.TTFTMs == 0 {
				sla.ITLMs = 1 + rng.Float64()*10
			}
		}
		n := int32(rng.IntN(4))
		ttft := rng.Float64() * 60
		r := engine.Request{Status: engine.Completed, Generated: n, FirstTokenMs: ttft,
			LastTokenMs: ttft + float64(max(n-1, 0))*rng.Float64()*12, TerminalMs: ttft + 1}
		if n > 0 {
			r.TerminalMs = r.LastTokenMs
		}
		r.RequestedOutput = n + int32(rng.IntN(2)) // one token short: truncated
		if good, ratio := isGood(&r, sla) && !Truncated(&r), SLARatio(&r, sla); good != (ratio <= 1) {
			t.Fatalf("request %+v under %+v: isGood and not truncated %v but SLARatio %g", r, sla, good, ratio)
		}
	}
}

func TestAttainmentCount(t *testing.T) {
	cases := []struct {
		att     float64
		offered int
		want    int
	}{
		{0.99, 100, 99}, {0.99, 101, 100}, {0.99, 1, 1}, {1, 7, 7}, {0.5, 3, 2}, {0.5, 4, 2},
		// 0.07 × 100 is 7.000000000000001 in float64: the least k with k/100 >= 0.07 is 7.
		{0.07, 100, 7}, {1e-9, 10, 1},
	}
	for _, c := range cases {
		if got := AttainmentCount(c.att, c.offered); got != c.want {
			t.Errorf("AttainmentCount(%g, %d) = %d, want %d", c.att, c.offered, got, c.want)
		}
		// Property: k/offered >= att and (k−1)/offered < att.
		k := AttainmentCount(c.att, c.offered)
		if float64(k)/float64(c.offered) < c.att || (k > 1 && float64(k-1)/float64(c.offered) >= c.att) {
			t.Errorf("AttainmentCount(%g, %d) = %d is not the least count reaching it", c.att, c.offered, k)
		}
	}
}

func TestSLAHeadroomHandComputed(t *testing.T) {
	sla := &SLA{TTFTMs: 100}
	// Ratios 0.1 … 0.9 for nine completed requests, plus one rejected (+Inf) and one pending
	// (not offered).
	var reqs []engine.Request
	for i := 1; i <= 9; i++ {
		reqs = append(reqs, done(float64(i)*10, float64(i)*10, 1))
	}
	reqs = append(reqs, engine.Request{Status: engine.Rejected}, engine.Request{Status: engine.Pending})
	// 10 offered: attainment 0.9 needs 9 good: the 9th smallest ratio, 0.9.
	if h := SLAHeadroom(reqs, nil, nil, sla, 0.9); math.Abs(h-0.9) > 1e-12 {
		t.Errorf("headroom at 0.9 = %g, want 0.9", h)
	}
	// Attainment 0.5 needs 5: 0.5.
	if h := SLAHeadroom(reqs, nil, nil, sla, 0.5); math.Abs(h-0.5) > 1e-12 {
		t.Errorf("headroom at 0.5 = %g, want 0.5", h)
	}
	// Attainment 0.95 needs 10 of 10: the rejected request makes it unreachable.
	if h := SLAHeadroom(reqs, nil, nil, sla, 0.95); !math.IsInf(h, 1) {
		t.Errorf("headroom at 0.95 = %g, want +Inf", h)
	}
	if h := SLAHeadroom(nil, nil, nil, sla, 0.9); h != 0 {
		t.Errorf("headroom of no request = %g, want 0", h)
	}
	// keep leaves out the rejected request and the three of ratio 0.7-0.9 (TTFT 70-90 ms): 6
	// offered, attainment 0.9 needs 6 good, the 6th smallest ratio 0.6; keeping none gives 0.
	fast := func(r *engine.Request) bool { return r.Status != engine.Rejected && r.FirstTokenMs < 65 }
	if h := SLAHeadroom(reqs, fast, nil, sla, 0.9); math.Abs(h-0.6) > 1e-12 {
		t.Errorf("headroom at 0.9 of the kept requests = %g, want 0.6", h)
	}
	if h := SLAHeadroom(reqs, func(*engine.Request) bool { return false }, nil, sla, 0.9); h != 0 {
		t.Errorf("headroom with no request kept = %g, want 0", h)
	}
}
