package grid

import (
	"bytes"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/examples"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
)

// TestLazyExpansionMatchesDecodingTheText: a point decoded from its tree (ExpandLazy) has the ID,
// class and GPU count that decoding its YAML gives, as predict would decode it, and the prices
// Expand gives; Materialize writes the YAML and config Expand keeps (the first point's it keeps
// itself); the filter counts and messages are Expand's. Specs: the built-in sweep
// (mode and policy domains, budget filtering, equivalent twins), alias and model-spelling twins, null
// choices of nullable fields, kv_router knobs,
// planner domains with duplicates, and invalid block sizes.
func TestLazyExpansionMatchesDecodingTheText(t *testing.T) {
	specs := []struct {
		name, spec string
		sets       []string
	}{
		{"default", string(examples.DefaultSweep()), nil},
		{"random", string(examples.DefaultSweep()), []string{"optimizer={algorithm: random, max_trials: 50, seed: 7}"}},
		{"aliases", base, []string{"engine.hardware={choices: [h100, h100_sxm, h200_sxm]}",
			"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"}},
		{"spellings", base, []string{"engine.model={choices: [Llama-3.1-8B, meta-llama/Meta-Llama-3.1-8B-Instruct, nvidia/Llama-3.1-8B-Instruct-FP8]}",
			"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"}},
		{"nulls", base, []string{"engine.workers.aggregated.kv_cache.capacity={type: default, max_tokens: {choices: [null, 4096]}, " +
			"reserve_gib: {choices: [~, 2]}, memory_fraction: {choices: [null, 0.8]}}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"}},
		{"default reserve", base, []string{"engine.workers.aggregated.kv_cache.capacity={type: default, reserve_gib: {choices: [1.5, 2, ~]}}",
			"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}", "engine.workers.aggregated.timing={type: default}"}},
		{"numeric reserve", base, []string{"engine.workers.aggregated.kv_cache.capacity={type: default, reserve_gib: {choices: [1.5, 2]}}",
			"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}", "engine.workers.aggregated.timing={type: default}"}},
		{"auto precisions", base, []string{"engine.precision={weights: {choices: [auto, bf16, fp8]}, kv_cache: {choices: [bf16, auto]}}",
			"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}", "engine.workers.aggregated.timing={type: default}",
			"engine.workers.aggregated.kv_cache.capacity={type: default}"}},
		{"knobs", both, []string{"engine.mode={choices: [aggregated, disaggregated]}", "engine.workers.aggregated.parallelism.replicas=2",
			"router={policy: {choices: [round_robin, kv_router]}, temperature: {choices: [0.0, 0.5]}}"}},
		{"planner", base, []string{"planner.policy={choices: [disabled, enabled]}", "planner.load_min_observations={choices: [2, 3]}",
			"planner.target=load", "evaluation.sla={ttft_ms: 500}"}},
		{"invalid", base, []string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4, 8]}",
			"engine.workers.aggregated.kv_cache.block_size={choices: [1, 16]}", "engine.backend=vllm"}},
	}
	for _, c := range specs {
		s, err := Parse([]byte(c.spec), "spec.yaml", c.sets, nil, results.CheckMetric)
		if err != nil {
			t.Fatal(err)
		}
		eager, err := s.Expand()
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := s.ExpandLazy()
		if err != nil {
			t.Fatal(err)
		}
		if len(lazy.Points) != len(eager.Points) || len(lazy.Points) < 2 || lazy.SpecHash() != eager.SpecHash() ||
			lazy.Examples[FilteredInvalid] != eager.Examples[FilteredInvalid] || len(lazy.Errors) != len(eager.Errors) {
			t.Fatalf("%s: lazy %d points (hash %s, %v), eager %d (hash %s, %v)", c.name, len(lazy.Points), lazy.SpecHash(),
				lazy.Examples, len(eager.Points), eager.SpecHash(), eager.Examples)
		}
		twins := 0
		for i := range lazy.Points {
			p, e := &lazy.Points[i], &eager.Points[i]
			if (p.YAML != nil || p.Config != nil) && i > 0 { // the first valid point's are checked by Expand
				t.Errorf("%s: point %s has its YAML or config before Materialize", c.name, p.ID)
			}
			if err := lazy.Materialize(lazy.Points[i : i+1]); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Decode(p.YAML, s.File, nil, config.WithMarker(ConcreteMarker))
			if err != nil {
				t.Fatalf("%s: point %s: %v", c.name, p.ID, err)
			}
			if !bytes.Equal(p.YAML, e.YAML) || p.ID != e.ID || PointID(cfg) != p.ID || CanonicalKey(cfg) != p.Class ||
				GPUs(cfg) != p.GPUs || p.EquivalentTo != e.EquivalentTo || !reflect.DeepEqual(p.Config, e.Config) ||
				p.CostUSDPerHour != e.CostUSDPerHour || p.PrefillGPUHourUSD != e.PrefillGPUHourUSD || p.DecodeGPUHourUSD != e.DecodeGPUHourUSD {
				t.Errorf("%s: point %d: lazy %s class %s, the text decodes to %s class %s; eager %s", c.name, i, p.ID, p.Class,
					PointID(cfg), CanonicalKey(cfg), e.ID)
			}
			if p.Class != p.ID {
				twins++
			}
		}
		if c.name == "default" || c.name == "aliases" || c.name == "spellings" || c.name == "default reserve" || c.name == "auto precisions" {
			if twins == 0 {
				t.Errorf("%s: no point whose class differs from its ID", c.name)
			}
		}
	}
}

// TestExpansionIsTheSameOnAnyCoreCount: points are built on every core, in chunks, and the
// expansion (points, filter counts and their first messages, errors, empty values, notes) is the
// one a single core gives. The grid (1,200 points, some invalid, some over the budget) spans
// several chunks.
func TestExpansionIsTheSameOnAnyCoreCount(t *testing.T) {
	spec := base + "optimization: {constraints: {max_candidate_gpus: 40}}\n"
	sets := []string{"engine.workers.aggregated.parallelism.replicas={range: {min: 1, max: 60, step: 1}}",
		"engine.workers.aggregated.kv_cache.block_size={choices: [1, 16]}", "engine.backend=vllm",
		"traffic.load.concurrency={range: {min: 1, max: 10, step: 1}}"}
	var runs []*Expansion
	for _, procs := range []int{1, 2, 5} {
		old := runtime.GOMAXPROCS(procs)
		runs = append(runs, expand(t, spec, sets...))
		runtime.GOMAXPROCS(old)
	}
	one := runs[0]
	if one.GridPoints != 1200 || one.Valid != 400 || one.Filtered[FilteredInvalid] != 400 || one.Filtered[FilteredGPUBudget] != 400 {
		t.Fatalf("grid %d, valid %d, filtered %v", one.GridPoints, one.Valid, one.Filtered)
	}
	for _, x := range runs[1:] {
		if x.SpecHash() != one.SpecHash() || !reflect.DeepEqual(x.Filtered, one.Filtered) || !reflect.DeepEqual(x.Examples, one.Examples) ||
			!slices.Equal(x.Errors, one.Errors) || !reflect.DeepEqual(x.EmptyValues, one.EmptyValues) || !slices.Equal(x.Warnings, one.Warnings) ||
			!slices.Equal(x.TimingNotes, one.TimingNotes) {
			t.Errorf("expansion differs from one core's: %v %v %q", x.Filtered, x.Examples, x.Errors)
		}
		for i := range x.Points {
			p, q := &x.Points[i], &one.Points[i]
			if p.ID != q.ID || p.Index != q.Index || p.Class != q.Class || p.EquivalentTo != q.EquivalentTo || !bytes.Equal(p.YAML, q.YAML) {
				t.Fatalf("point %d: %s #%d, one core %s #%d", i, p.ID, p.Index, q.ID, q.Index)
			}
		}
	}
}
