package config

import (
	"slices"
	"testing"
)

// Speculation (seed defaults to 42), unchunked prefill and the aic prefill-load model under
// kv_router decode (what aic needs at run time is checked by sim.Run); bad speculation names the
// field.
func TestDecodeSpeculationAndPrefill(t *testing.T) {
	c := mustDecode(t, seedSynthetic, "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.9, 0.5]}",
		"engine.enable_chunked_prefill=false")
	if s := c.Engine.Speculation; s == nil || s.NumSpeculativeTokens != 2 || !slices.Equal(s.AcceptanceRates, []float64{0.9, 0.5}) || s.Seed != 42 {
		t.Errorf("speculation %+v", s)
	}
	if p := c.Engine.EnableChunkedPrefill; p == nil || *p {
		t.Errorf("enable_chunked_prefill %v", p)
	}
	if c := mustDecode(t, seedSynthetic, "router={policy: kv_router, prefill_load_model: {type: aic}}"); c.Router.PrefillLoadModel.Type != "aic" {
		t.Errorf("prefill_load_model %+v", c.Router.PrefillLoadModel)
	}
	for _, tc := range []struct{ set, path, frag string }{
		{"engine.speculation={kind: ngram, num_speculative_tokens: 3, acceptance_rates: [0.9, 0.5]}",
			"engine.speculation.acceptance_rates", "one rate per draft token (num_speculative_tokens = 3), got 2"},
		{"engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.9, 1.01]}",
			"engine.speculation.acceptance_rates[1]", "must be in [0, 1], got 1.01"},
		{"engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [-0.5, 0.5]}",
			"engine.speculation.acceptance_rates[0]", "must be in [0, 1], got -0.5"},
		{"engine.speculation={kind: ngram, num_speculative_tokens: 6, acceptance_rates: [1, 1, 1, 1, 1, 1]}",
			"engine.speculation.num_speculative_tokens", "must be in [1, 5], got 6"},
		{"engine.speculation={kind: ngram, num_speculative_tokens: 2}",
			"engine.speculation.acceptance_rates", "required"},
	} {
		errs := decodeErrs(t, seedSynthetic, tc.set)
		if findErr(errs, tc.path, tc.frag) == nil {
			t.Errorf("%s: want %s: %q, got\n%v", tc.set, tc.path, tc.frag, errs)
		}
	}
}

// engine.overlap_scheduling: unset, each backend's default (SGLang's overlap scheduler on, vLLM
// and TensorRT-LLM off); set, the value whatever the backend; a non-bool names the field.
func TestOverlapScheduling(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want bool
	}{
		{nil, false},
		{[]string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=1"}, true},
		{[]string{"engine.backend=trtllm", "engine.workers.aggregated.kv_cache.block_size=32"}, false},
		{[]string{"engine.overlap_scheduling=true"}, true},
		{[]string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=1", "engine.overlap_scheduling=false"}, false},
	} {
		c := mustDecode(t, seedSynthetic, tc.sets...)
		if got := c.Engine.HostOverlap(); got != tc.want {
			t.Errorf("%v: HostOverlap() = %v, want %v", tc.sets, got, tc.want)
		}
	}
	if errs := decodeErrs(t, seedSynthetic, "engine.overlap_scheduling=sometimes"); findErr(errs, "engine.overlap_scheduling", "must be a bool") == nil {
		t.Errorf("overlap_scheduling=sometimes: want a bool error naming the field, got\n%v", errs)
	}
}
