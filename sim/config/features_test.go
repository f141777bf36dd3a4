package config

import (
	"encoding/json"
	"slices"
	"strings"
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

// engine.overlap_scheduling: unset, each backend's default (SGLang's overlap scheduler on unless
// the role pipelines or the engine speculates; vLLM and TensorRT-LLM off); set, the value; a
// non-bool, and true where SGLang or vLLM cannot overlap, name the field.
func TestOverlapScheduling(t *testing.T) {
	sg := []string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=1"}
	spec := "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.9, 0.5]}"
	for _, tc := range []struct {
		sets     []string
		pipeline int
		want     bool
	}{
		{nil, 1, false},
		{sg, 1, true},
		{sg, 2, false},
		{append(slices.Clone(sg), spec), 1, false},
		{[]string{"engine.backend=trtllm", "engine.workers.aggregated.kv_cache.block_size=32"}, 1, false},
		{[]string{"engine.overlap_scheduling=true"}, 1, true},
		{[]string{"engine.overlap_scheduling=true"}, 4, true},
		{append(slices.Clone(sg), "engine.overlap_scheduling=false"), 1, false},
	} {
		c := mustDecode(t, seedSynthetic, tc.sets...)
		if got := c.Engine.HostOverlap(tc.pipeline); got != tc.want {
			t.Errorf("%v, pipeline %d: HostOverlap = %v, want %v", tc.sets, tc.pipeline, got, tc.want)
		}
	}
	for _, tc := range []struct {
		sets []string
		frag string
	}{
		{[]string{"engine.overlap_scheduling=sometimes"}, "must be a bool"},
		{[]string{"engine.overlap_scheduling=true", spec}, "does not run with engine.speculation"},
		{append(slices.Clone(sg), "engine.overlap_scheduling=true", "engine.workers.aggregated.parallelism.pipeline=2"),
			"does not run with pipeline parallelism on the sglang backend (engine.workers.aggregated.parallelism.pipeline is 2"},
	} {
		if errs := decodeErrs(t, seedSynthetic, tc.sets...); findErr(errs, "engine.overlap_scheduling", tc.frag) == nil {
			t.Errorf("%v: want engine.overlap_scheduling: %q, got\n%v", tc.sets, tc.frag, errs)
		}
	}
	// Speculation and pipelining with the setting left to the default, or false, are valid.
	mustDecode(t, seedSynthetic, append(slices.Clone(sg), spec, "engine.workers.aggregated.parallelism.pipeline=2")...)
	mustDecode(t, seedSynthetic, "engine.overlap_scheduling=false", spec)
}

// engine.cuda_graphs: unset it is "" (whole decode graphs) and left out of the JSON encoding (a
// config without it keeps its point ID); piecewise under vllm; a misspelling, and piecewise under
// another backend, name the field and what is valid.
func TestCUDAGraphs(t *testing.T) {
	c := mustDecode(t, seedSynthetic)
	if data, err := json.Marshal(c.Engine); c.Engine.CUDAGraphs != "" || err != nil || strings.Contains(string(data), "CUDAGraphs") {
		t.Errorf("unset cuda_graphs: %q, encoded %s (%v)", c.Engine.CUDAGraphs, data, err)
	}
	for _, v := range []string{CUDAGraphsFull, CUDAGraphsPiecewise} {
		if c := mustDecode(t, seedSynthetic, "engine.cuda_graphs="+v); c.Engine.CUDAGraphs != v {
			t.Errorf("cuda_graphs %s decoded as %q", v, c.Engine.CUDAGraphs)
		}
	}
	mustDecode(t, seedSynthetic, "engine.backend=trtllm", "engine.workers.aggregated.kv_cache.block_size=32", "engine.cuda_graphs=full")
	for _, tc := range []struct {
		sets []string
		frag string
	}{
		{[]string{"engine.cuda_graphs=piecewize"}, "full, piecewise"},
		{[]string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=1", "engine.cuda_graphs=piecewise"},
			"piecewise is vLLM's cudagraph_mode PIECEWISE; the sglang backend captures whole decode passes"},
	} {
		if errs := decodeErrs(t, seedSynthetic, tc.sets...); findErr(errs, "engine.cuda_graphs", tc.frag) == nil {
			t.Errorf("%v: want engine.cuda_graphs: %q, got\n%v", tc.sets, tc.frag, errs)
		}
	}
}

// router.seed: unset it is the default 42 and left out of the JSON encoding (so a config without
// it keeps its point ID); set under kv_router or random it is its value, the largest uint64
// included.
func TestDecodeRouterSeed(t *testing.T) {
	c := mustDecode(t, seedSynthetic, "router={policy: kv_router}")
	if c.Router.Seed != nil || c.Router.RandomSeed() != 42 {
		t.Errorf("unset router seed: %v, RandomSeed %d; want nil and 42", c.Router.Seed, c.Router.RandomSeed())
	}
	if data, err := json.Marshal(c.Router); err != nil || strings.Contains(string(data), "Seed") {
		t.Errorf("an unset router seed is encoded: %s (%v)", data, err)
	}
	for set, want := range map[string]uint64{
		"router={policy: kv_router, seed: 0}":                    0,
		"router={policy: random, seed: 7}":                       7,
		"router={policy: random, seed: 18446744073709551615}":    18446744073709551615,
		"router={policy: kv_router, temperature: 0.5, seed: 42}": 42,
	} {
		c := mustDecode(t, seedSynthetic, set)
		if c.Router.Seed == nil || c.Router.RandomSeed() != want {
			t.Errorf("%s: router seed %v, want %d", set, c.Router.Seed, want)
		}
	}
}
