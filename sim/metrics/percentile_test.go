package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/engine"
)

// TestPercentileTermKeys: p50 bounds the median (prediction.json has no p50_ key for requests)
// and an E2E term the e2e_latency_ms distribution.
func TestPercentileTermKeys(t *testing.T) {
	for _, c := range []struct {
		term                  PercentileTerm
		key, summary, samples string
	}{
		{PercentileTerm{50, "ttft", 1}, "p50_ttft_ms", "median_ttft_ms", "num_ttft_samples"},
		{PercentileTerm{99, "itl", 1}, "p99_itl_ms", "p99_itl_ms", "num_itl_samples"},
		{PercentileTerm{95, "tpot", 1}, "p95_tpot_ms", "p95_tpot_ms", "num_tpot_samples"},
		{PercentileTerm{90, "e2e", 1}, "p90_e2e_ms", "p90_e2e_latency_ms", "num_e2e_latency_samples"},
	} {
		if c.term.Key() != c.key || c.term.SummaryKey() != c.summary || c.term.SamplesKey() != c.samples {
			t.Errorf("%+v: key %s summary %s samples %s, want %s %s %s", c.term, c.term.Key(), c.term.SummaryKey(),
				c.term.SamplesKey(), c.key, c.summary, c.samples)
		}
	}
}

// TestCheckTerms: a term holds at its bound (and within BoundTolerance above it), fails just past
// it, holds vacuously over an empty population, and fails when the summary lacks its keys.
func TestCheckTerms(t *testing.T) {
	values := map[string]float64{"p99_itl_ms": 40, "num_itl_samples": 500, "median_ttft_ms": 1000.00001,
		"num_ttft_samples": 20, "p99_tpot_ms": 0, "num_tpot_samples": 0}
	terms := []PercentileTerm{{99, "itl", 40}, {50, "ttft", 1000}, {99, "tpot", 5}, {99, "e2e", 100}, {99, "itl", 39.9}}
	res := CheckTerms(terms, values)
	var met []bool
	for _, r := range res {
		met = append(met, r.Met)
	}
	want := []bool{true, false, true, false, false}
	for i := range want {
		if met[i] != want[i] {
			t.Errorf("term %s met %v, want %v", terms[i].Key(), met[i], want[i])
		}
	}
	if !math.IsNaN(res[3].Value) {
		t.Errorf("missing keys: value %v, want NaN", res[3].Value)
	}
	if got := strings.Join(FailedKeys(res), ","); got != "p50_ttft_ms,p99_e2e_ms,p99_itl_ms" {
		t.Errorf("failed %s", got)
	}
	if got := DescribeFailed(res[:2]); got != "p50_ttft_ms 1000.00001 > 1000" {
		t.Errorf("DescribeFailed = %q", got)
	}
	if AllMet(res) || !AllMet(res[:1]) || !AllMet(nil) {
		t.Error("AllMet")
	}
	// Headroom: the worst ratio, 40 / 39.9; a missing value makes it +Inf; no term, 0.
	if h := PercentileHeadroom([]TermResult{res[0], res[2], res[4]}); math.Abs(h-40/39.9) > 1e-15 {
		t.Errorf("headroom %v, want %v", h, 40/39.9)
	}
	if h := PercentileHeadroom(res); !math.IsInf(h, 1) {
		t.Errorf("headroom with a missing value %v, want +Inf", h)
	}
	if h := PercentileHeadroom(nil); h != 0 {
		t.Errorf("headroom of no term %v", h)
	}
}

// TestSLAHeadroomWithTerms: the request headroom (the 9th of ten ratios 0.1 … 1.0 at attainment
// 0.9: 0.9) is raised to the worst percentile ratio when that is larger (p99 ITL 45 ms against
// 30 ms: 1.5), and left alone when it is smaller (45 against 90: 0.5).
func TestSLAHeadroomWithTerms(t *testing.T) {
	sla := &SLA{TTFTMs: 100, Percentiles: []PercentileTerm{{99, "itl", 30}}}
	var reqs []engine.Request
	for i := 1; i <= 10; i++ {
		reqs = append(reqs, done(float64(i)*10, float64(i)*10, 1))
	}
	terms := []TermResult{{Term: sla.Percentiles[0], Value: 45, Samples: 100}}
	if h := SLAHeadroom(reqs, nil, terms, sla, 0.9); h != 1.5 {
		t.Errorf("headroom %v, want 1.5", h)
	}
	terms[0].Term.BoundMs = 90
	if h := SLAHeadroom(reqs, nil, terms, sla, 0.9); math.Abs(h-0.9) > 1e-12 {
		t.Errorf("headroom %v, want 0.9", h)
	}
}

// TestPercentileOnlySLAGoodput: under an SLA of percentile terms only a completed request is
// good even without a token (the reference rule keeps such a request out of goodput unless the
// SLA is e2e-only), and its SLARatio is 0; a rejected request still has ratio +Inf.
func TestPercentileOnlySLAGoodput(t *testing.T) {
	sla := &SLA{Percentiles: []PercentileTerm{{99, "itl", 30}}}
	none := engine.Request{Status: engine.Completed, TerminalMs: 5}
	if !isGood(&none, sla) || SLARatio(&none, sla) != 0 {
		t.Errorf("no-token request: good %v ratio %v, want true and 0", isGood(&none, sla), SLARatio(&none, sla))
	}
	if r := (engine.Request{Status: engine.Rejected}); !math.IsInf(SLARatio(&r, sla), 1) {
		t.Error("rejected request: ratio not +Inf")
	}
	if isGood(&none, &SLA{}) {
		t.Error("no-token request good under an empty SLA (the reference rule)")
	}
}

// SLABinding names the term with the largest factor, hand-computed: ten requests of TTFT 10-100
// ms and 11 tokens over the next 100 ms (ITL (e2e − ttft) / 10 = 10 ms), against ttft_ms
// 200 (the 9th of 10 at 0.9: 90/200 = 0.45), itl_ms 20 (10/20 = 0.5) and p99_itl_ms 30 (value
// 12: 0.4, then 18: 0.6).
func TestSLABinding(t *testing.T) {
	sla := &SLA{TTFTMs: 200, ITLMs: 20, Percentiles: []PercentileTerm{{99, "itl", 30}}}
	var reqs []engine.Request
	for i := 1; i <= 10; i++ {
		ttft := float64(i) * 10
		reqs = append(reqs, done(ttft, ttft+100, 11))
	}
	terms := []TermResult{{Term: sla.Percentiles[0], Value: 12, Samples: 100}}
	if got := SLABinding(reqs, nil, terms, sla, 0.9); got != "itl_ms" {
		t.Errorf("binding %q, want itl_ms (0.5 against ttft 0.45 and p99 ITL 0.4)", got)
	}
	terms[0].Value = 18
	if got := SLABinding(reqs, nil, terms, sla, 0.9); got != "p99_itl_ms" {
		t.Errorf("binding %q, want p99_itl_ms (0.6)", got)
	}
	if got := SLABinding(reqs, nil, nil, &SLA{TTFTMs: 200, ITLMs: 100}, 0.9); got != "ttft_ms" {
		t.Errorf("binding %q, want ttft_ms (0.45 against 0.1)", got)
	}
	// Two of ten rejected: attainment 0.9 cannot be reached by any latency bound.
	reqs[0].Status, reqs[1].Status = engine.Rejected, engine.Rejected
	if got := SLABinding(reqs, nil, nil, sla, 0.9); got != NotCompletedTerm {
		t.Errorf("binding %q, want %s", got, NotCompletedTerm)
	}
	if got := SLABinding(nil, nil, nil, sla, 0.9); got != "" {
		t.Errorf("no request: %q", got)
	}
	if got := SLABinding(reqs, nil, nil, &SLA{}, 0.9); got != "" {
		t.Errorf("no term: %q", got)
	}
}
