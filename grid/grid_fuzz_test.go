package grid

import (
	"os"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// FuzzParse feeds arbitrary specs and --set values to Parse and Expand: they may fail, never
// panic, and every point they return decodes.
func FuzzParse(f *testing.F) {
	def, _ := os.ReadFile("../examples/default-sweep.yaml")
	f.Add(string(def), "traffic.load.concurrency={choices: [1, 2]}")
	f.Add(base, "engine.workers.aggregated.parallelism.tensor={range: {min: 1, max: 4, scale: log}}")
	f.Add(both, "engine.mode={choices: [aggregated, disaggregated]}")
	f.Add("a: &a [*a]", "x=1")
	f.Add("engine: {mode: {choices: []}}", "router.policy={range: {min: 1}}")
	f.Fuzz(func(t *testing.T, spec, set string) {
		if len(spec) > 1<<14 {
			return
		}
		s, err := Parse([]byte(spec), "fuzz.yaml", []string{set}, nil, results.CheckMetric)
		if err != nil || s.Size() > 2000 {
			return
		}
		x, err := s.Expand()
		if err != nil {
			return
		}
		for _, p := range x.Points {
			if p.Config == nil || len(p.ID) != 12 {
				t.Fatalf("point %d: config %v id %q", p.Index, p.Config, p.ID)
			}
		}
	})
}

// FuzzTemplateExpansion feeds arbitrary specs and --set values to the template path and to
// decoding every point (expandBoth): the two expansions are the same.
func FuzzTemplateExpansion(f *testing.F) {
	def, _ := os.ReadFile("../examples/default-sweep.yaml")
	f.Add(string(def), "traffic.load.concurrency={choices: [1, 2]}", "engine.workers.aggregated.scheduler.max_sequences={choices: [1, 300000]}")
	f.Add(base, "engine.workers.aggregated.parallelism.tensor={range: {min: 1, max: 64, scale: log}}", "engine.workers.aggregated.kv_cache.block_size={choices: [1, 16, 0]}")
	f.Add(both, "engine.mode={choices: [aggregated, disaggregated]}", "engine.workers.decode.parallelism.replicas={range: {min: 1, max: 9, step: 2}}")
	f.Add(base, "router={policy: {choices: [round_robin, kv_router]}, temperature: {choices: [0.0, 0.5]}}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}")
	f.Add(base, "planner={policy: {choices: [disabled, enabled]}, max_num_gpus: {choices: [2, 40]}}", "engine.workers.aggregated.parallelism.attention_data={choices: [1, 2]}")
	f.Fuzz(func(t *testing.T, spec, set1, set2 string) {
		if len(spec) > 1<<14 {
			return
		}
		s, err := Parse([]byte(spec), "fuzz.yaml", []string{set1, set2}, nil, results.CheckMetric)
		if err != nil || s.Size() > 2000 {
			return
		}
		expandBoth(t, "fuzz.yaml", spec, []string{set1, set2})
	})
}
