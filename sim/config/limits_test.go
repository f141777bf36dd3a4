package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Values beyond the simulator's bounds are config errors naming the field and the bound, not
// truncations, panics or runaway allocations. The base config is the checked-in example, which
// must be present and valid.
func TestLimits(t *testing.T) {
	base, err := os.ReadFile(syntheticExample)
	if err != nil {
		t.Fatalf("the checked-in example is missing: %v", err)
	}
	if _, err := Decode(base, syntheticExample, nil); err != nil {
		t.Fatalf("the checked-in example does not decode: %v", err)
	}
	const p = "engine.workers.aggregated."
	for _, c := range []struct{ set, path, msg string }{
		{p + "scheduler.max_batched_tokens=4294967297", p + "scheduler.max_batched_tokens", "must be <= 16777216"},
		{p + "kv_cache.block_size=4294967296", p + "kv_cache.block_size", "must be <= 65536"},
		{p + "kv_cache.capacity.blocks=4294967297", p + "kv_cache.capacity.blocks", "must be <= 2147483647"},
		{p + "parallelism.replicas=1000000", p + "parallelism.replicas", "must be <= 65536"},
		{"traffic.source.input_tokens=4294967297", "traffic.source.input_tokens", "must be <= 16777216"},
		{"traffic.stop.requests=1000000000000000000", "traffic.stop.requests", "must be <= 2000000"},
		{"traffic.stop={requests_per_load_unit: 1e300}", "traffic.stop.requests_per_load_unit", "must be <= 2000000"},
		{"traffic.load={type: constant_rate, requests_per_second: 1e-310}", "traffic.load.requests_per_second", "must be between 1e-06 and 1e+09"},
		{p + "timing={type: fixed, prefill_ms: 1e200, decode_ms: 1}", p + "timing.prefill_ms", "must be between 0 and 1e+10"},
		{p + "kv_cache.capacity={type: default, reserve_gib: 1e308}", p + "kv_cache.capacity.reserve_gib", "must be between 0 and 1.048576e+06, got 1e+308"},
		{p + "parallelism.redundant_experts=1000000", p + "parallelism.redundant_experts", "must be <= 65536"},
	} {
		_, err := Decode(base, "x.yaml", []string{c.set})
		var ces Errors
		if !errors.As(err, &ces) {
			t.Errorf("--set %s: got %v, want a config error", c.set, err)
			continue
		}
		found := false
		for _, e := range ces {
			found = found || (e.Path == c.path && strings.Contains(e.Msg, c.msg))
		}
		if !found {
			t.Errorf("--set %s: errors %v lack %s: %s", c.set, err, c.path, c.msg)
		}
	}
}

// syntheticExample is the checked-in aggregated example config, relative to sim/config.
const syntheticExample = "../../examples/synthetic.yaml"
