package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that every failure is a non-empty Errors,
// that a decoded config passes Validate and has nothing unsupported, and that decoding is
// deterministic. The second argument is split on newlines into --set arguments.
func FuzzDecode(f *testing.F) {
	seeds := []struct{ src, sets string }{
		{seedSynthetic, ""},
		{seedDisaggregated, ""},
		{minimalEngine, ""},
		{seedSynthetic, strings.Join(setSession, "\n")},
		{seedSynthetic, strings.Join(setTrace, "\n")},
		{seedSynthetic, strings.Join(setKVRouter, "\n")},
		{seedSynthetic, "traffic.load={type: poisson, requests_per_second: 8}"},
		{seedSynthetic, "traffic.load.concurrency=0\nengine.mode=agg"},
		{seedSynthetic, "traffic.source.paths.0=x"},
		{seedSynthetic, "engine.workers.aggregated.timing={type: fixed, prefill_ms: 1, decode_ms: 2}"},
		{seedSynthetic, "engine.workers.aggregated.kv_cache.capacity={blocks: 3}"},
		{seedSynthetic, "evaluation.sla={ttft_ms: 100, itl_ms: 10}"},
		{seedSynthetic, "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.9, 0.5]}"},
		{seedSynthetic, "planner={policy: enabled, fpm_sample_bucket_size: 16}"},
		{seedSynthetic, "traffic.source.input_tokens={distribution: lognormal, mean: 500, stddev: 100, max: 900}"},
		{seedSynthetic, "traffic.source={type: mixture, seed: 1, components: [{weight: 1, source: {output_tokens: {distribution: empirical, values: [1, 2]}}}, {weight: 2, source: {}}]}"},
		{"", "engine.model=m"},
		{"engine: {model: {choices: [a, b]}}\n", ""},
		{"engine:\n  model: a\n  model: b\n", ""},
		{"a: &x {b: *x}\n", ""},
		{"engine: &e {workers: {aggregated: *e}}\n", ""},
		{"- 1\n", ""},
		{"engine: [\n", ""},
		{"traffic: {load: {type: poisson, requests_per_second: .nan}}\n", ""},
		{"engine:\n  <<: {model: a}\n", ""},
		{seedSynthetic + "---\na: 1\n", ""},
	}
	for _, s := range seeds {
		f.Add([]byte(s.src), s.sets)
	}
	f.Fuzz(func(t *testing.T, data []byte, setArg string) {
		var sets []string
		if setArg != "" {
			sets = strings.Split(setArg, "\n")
		}
		c, err := Decode(data, "fuzz.yaml", sets)
		if err != nil {
			if c != nil {
				t.Fatalf("config returned together with error %v", err)
			}
			var ces Errors
			if !errors.As(err, &ces) || len(ces) == 0 {
				t.Fatalf("error is not a non-empty Errors: %T %v", err, err)
			}
			for _, e := range ces {
				if e == nil || e.Msg == "" || e.File != "fuzz.yaml" {
					t.Fatalf("malformed Error %#v", e)
				}
			}
			_, err2 := Decode(data, "fuzz.yaml", sets)
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Decode is not deterministic:\n%v\n---\n%v", err, err2)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded config fails Validate:\n%v", err)
		}
		if uns := c.Unsupported(); len(uns) != 0 {
			t.Fatalf("decoded config has unsupported values:\n%v", uns)
		}
		c2, err2 := Decode(data, "fuzz.yaml", sets)
		if err2 != nil || c2 == nil {
			t.Fatalf("second Decode failed: %v", err2)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("Decode is not deterministic:\n%+v\n%+v", c, c2)
		}
	})
}
