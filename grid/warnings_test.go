package grid

import (
	"slices"
	"testing"
)

// An SLA bound that looks like seconds is a warning of the expansion, once for the spec; a
// plausible one is not.
func TestExpandWarnsOfSecondsLikeSLA(t *testing.T) {
	x := expand(t, base, "evaluation.sla={ttft_ms: 2, itl_ms: 50}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}")
	want := "spec.yaml: evaluation.sla.ttft_ms: 2 ms looks like seconds: SLA bounds are in milliseconds, so this asks for 2 ms; " +
		"if 2 s was meant, write ttft_ms: 2000"
	if !slices.Equal(x.Warnings, []string{want}) {
		t.Errorf("warnings %q\nwant [%q]", x.Warnings, want)
	}
	if x = expand(t, base, "evaluation.sla={ttft_ms: 500, itl_ms: 50}"); len(x.Warnings) != 0 {
		t.Errorf("a plausible SLA warns: %q", x.Warnings)
	}
}
