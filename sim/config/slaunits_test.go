package config

import (
	"slices"
	"testing"
)

// Bounds under 5 ms (TTFT, E2E) or 1 ms (ITL, TPOT) warn with the unit; larger ones do not.
func TestSecondsLikeBounds(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	s := &SLA{TTFTMs: f(2), ITLMs: f(0.05), E2EMs: f(30), P99TTFTMs: f(500), P90TPOTMs: f(0.5), P99ITLMs: f(1)}
	want := []string{
		"evaluation.sla.ttft_ms: 2 ms looks like seconds: SLA bounds are in milliseconds, so this asks for 2 ms; if 2 s was meant, write ttft_ms: 2000",
		"evaluation.sla.itl_ms: 0.05 ms looks like seconds: SLA bounds are in milliseconds, so this asks for 0.05 ms; if 0.05 s was meant, write itl_ms: 50",
		"evaluation.sla.p90_tpot_ms: 0.5 ms looks like seconds: SLA bounds are in milliseconds, so this asks for 0.5 ms; if 0.5 s was meant, write p90_tpot_ms: 500",
	}
	if got := s.SecondsLikeBounds("evaluation.sla"); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := (&SLA{TTFTMs: f(5), ITLMs: f(1)}).SecondsLikeBounds("evaluation.sla"); got != nil {
		t.Errorf("bounds at the floors warn: %q", got)
	}
	if got := (*SLA)(nil).SecondsLikeBounds("evaluation.sla"); got != nil {
		t.Errorf("no SLA warns: %q", got)
	}
}
