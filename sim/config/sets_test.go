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
