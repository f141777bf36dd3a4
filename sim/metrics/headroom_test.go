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

// TestCensoredHandComputed checks which unfinished requests a stop at 10,000 ms censors: those
// whose latencies so far (each a lower bound of the final one) still meet every bound.
func TestCensoredHandComputed(t *testing.T) {
	const stop = 10000
	sla := &SLA{TTFTMs: 500, ITLMs: 50}
	// running arrived at arrival, its first token at first (-1: none yet), g of n tokens out.
	running := func(arrival, first float64, g, n int32) engine.Request {
		r := engine.Request{Status: engine.Running, ArrivalMs: arrival, FirstTokenMs: first, LastTokenMs: first,
			Generated: g, RequestedOutput: n, MaxOutput: n}
		if g == 0 {
			r.Status = engine.Waiting
		}
		return r
	}
	cases := []struct {
		name string
		r    engine.Request
		sla  *SLA
		want bool
	}{
		// Queued 400 ms: TTFT >= 400 <= 500, unknown.
		{"queued within ttft", running(9600, -1, 0, 100), sla, true},
		// Queued 600 ms: TTFT >= 600 > 500, a miss whatever comes next.
		{"queued past ttft", running(9400, -1, 0, 100), sla, false},
		// First token after 300 ms, 10 of 101 tokens: ITL >= (10000 − 9000)/100 = 10 ms.
		{"decoding within bounds", running(8700, 9000, 10, 101), sla, true},
		// First token after 700 ms.
		{"late first token", running(8300, 9000, 10, 101), sla, false},
		// First token 3,000 ms before the stop, 50 more tokens owed: ITL >= 3000/50 = 60 ms > 50.
		{"decoding past itl", running(6800, 7000, 20, 51), sla, false},
		// The same request under itl_ms 60: exactly at the bound, still unknown.
		{"decoding at itl", running(6800, 7000, 20, 51), &SLA{TTFTMs: 500, ITLMs: 60}, true},
		// E2E >= 10000 − 7000 = 3000 ms against 2,500.
		{"past e2e", running(7000, 7100, 5, 100), &SLA{E2EMs: 2500}, false},
		{"within e2e", running(7000, 7100, 5, 100), &SLA{E2EMs: 3500}, true},
		// Every token out, the front end still holding it: E2E is its last token's, 2,000 ms.
		{"all out, within e2e", func() engine.Request {
			r := running(7000, 7100, 100, 100)
			r.LastTokenMs = 9000
			return r
		}(), &SLA{E2EMs: 2500}, true},
		// Disaggregated: the prefill worker made its first token 9,000 ms ago, and no decode rank
		// has taken it up: TTFT >= 10000 − 1000 = 9000 ms, past 500.
		{"first token not yet taken up", func() engine.Request {
			r := running(1000, -1, 1, 100)
			r.Status = engine.Waiting
			return r
		}(), sla, false},
		// engine.context_length leaves room for 50 of its 100 tokens: truncated, a miss.
		{"output cut by the context", func() engine.Request { r := running(9600, -1, 0, 100); r.MaxOutput = 50; return r }(), sla, false},
		// Percentile terms only: no per-request bound to have broken.
		{"percentiles only", running(0, -1, 0, 100), &SLA{Percentiles: []PercentileTerm{{Percentile: 99, Latency: "itl", BoundMs: 50}}}, true},
		{"completed", done(100, 200, 3), sla, false},
		{"rejected", engine.Request{Status: engine.Rejected, ArrivalMs: 9900}, sla, false},
		{"pending", engine.Request{Status: engine.Pending}, sla, false},
	}
	for _, c := range cases {
		if got := Censored(&c.r, c.sla, stop); got != c.want {
			t.Errorf("%s: Censored = %v, want %v", c.name, got, c.want)
		}
	}
	if r := running(9600, -1, 0, 100); Censored(&r, sla, 0) {
		t.Error("censored without a stop")
	}
}

// TestCensoredIsSound checks that a request Censored does not censor is a miss however it
// would have gone on (completed at any later times, it is never good: isGood), and that one it
// censors could still have been good (completed at the stop itself, it is).
func TestCensoredIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const stop = 1000.0
	for i := 0; i < 50000; i++ {
		sla := &SLA{}
		if rng.IntN(2) == 0 {
			sla.TTFTMs = 1 + rng.Float64()*400
		}
		if rng.IntN(2) == 0 {
			sla.ITLMs = 1 + rng.Float64()*40
		}
		if rng.IntN(3) == 0 || sla.TTFTMs+sla.ITLMs == 0 {
			sla.E2EMs = 1 + rng.Float64()*1500
		}
		n := int32(1 + rng.IntN(30))
		g := int32(rng.IntN(int(n)))
		r := engine.Request{Status: engine.Running, ArrivalMs: rng.Float64() * stop, Generated: g, RequestedOutput: n,
			MaxOutput: n, FirstTokenMs: -1, LastTokenMs: -1}
		hidden := g > 0 && rng.IntN(4) == 0 // a disaggregated first token no decode rank has taken up
		if g > 0 && !hidden {
			r.FirstTokenMs = r.ArrivalMs + rng.Float64()*(stop-r.ArrivalMs)
			r.LastTokenMs = r.FirstTokenMs + rng.Float64()*(stop-r.FirstTokenMs)
		}
		censored := Censored(&r, sla, stop)
		// Go on past the stop: any first token still owed, then the rest, each after the stop.
		f := r
		f.Status = engine.Completed
		f.Generated = n
		if g == 0 || hidden {
			f.FirstTokenMs = stop + rng.Float64()*300
		}
		f.LastTokenMs = max(f.FirstTokenMs, stop) + rng.Float64()*300
		if n == 1 {
			f.LastTokenMs = f.FirstTokenMs
		}
		f.TerminalMs = f.LastTokenMs
		if !censored && isGood(&f, sla) {
			t.Fatalf("request %+v under %+v: not censored at %g ms, yet good when completed as %+v", r, sla, stop, f)
		}
		now := r
		now.Status, now.Generated, now.LastTokenMs, now.TerminalMs = engine.Completed, n, stop, stop
		if g == 0 || hidden {
			now.FirstTokenMs = stop
		}
		if censored && !isGood(&now, sla) {
			t.Fatalf("request %+v under %+v: censored at %g ms, yet a miss even when completed then", r, sla, stop)
		}
	}
}
