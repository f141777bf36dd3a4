package config

import "testing"

// SetFor names the last --set whose path is the field or above it, and none for a field no
// --set wrote (a sibling whose name merely starts the same is not below it).
func TestSetFor(t *testing.T) {
	sets := []string{"engine.model=a", "engine.workers.aggregated={parallelism: {tensor: 2}}", "engine.model=b", "engine.modelx=c"}
	for _, c := range []struct{ path, want string }{
		{"engine.model", "engine.model=b"},
		{"engine.workers.aggregated.parallelism.tensor", "engine.workers.aggregated={parallelism: {tensor: 2}}"},
		{"engine.workers.decode.parallelism.tensor", ""},
		{"engine", ""},
		{"engine.modelx", "engine.modelx=c"},
	} {
		if got := SetFor(c.path, sets); got != c.want {
			t.Errorf("SetFor(%s) = %q, want %q", c.path, got, c.want)
		}
	}
}

// Decode keeps the --set arguments it applied, and Config.At names the file, the --set that gave
// a field (none for a field the file gave) and the field.
func TestConfigAtNamesTheSet(t *testing.T) {
	src := []byte("engine:\n  mode: aggregated\n  model: meta-llama/Llama-3.1-8B\n  hardware: h200_sxm\n  workers:\n    aggregated:\n" +
		"      timing: {type: fixed, prefill_ms: 10, decode_ms: 10}\n      kv_cache: {capacity: {type: fixed, blocks: 100}}\n")
	sets := []string{"engine.hardware=h999", "engine.workers.aggregated.parallelism.tensor=3"}
	c, err := Decode(src, "x.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sets) != 2 || c.Sets[0] != sets[0] || c.Sets[1] != sets[1] {
		t.Errorf("Sets = %q, want %q", c.Sets, sets)
	}
	for _, tc := range []struct{ path, want string }{
		{"engine.hardware", "x.yaml (--set engine.hardware=h999): engine.hardware: bad"},
		{"engine.workers.aggregated.parallelism.tensor", "x.yaml (--set engine.workers.aggregated.parallelism.tensor=3): engine.workers.aggregated.parallelism.tensor: bad"},
		{"engine.model", "x.yaml: engine.model: bad"},
	} {
		if got := c.At(tc.path, "bad").Error(); got != tc.want {
			t.Errorf("At(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
