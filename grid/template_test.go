package grid

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/examples"
	"github.com/servesweep/servesweep/results"
)

// templateSpecs are specs whose expansions exercise the template path: every example sweep, and
// specs with numeric domains beside the mode, policy, planner, hardware and model branches, float
// and pointer fields (kv_router knobs, rates), alias and single-worker twins (the class splices),
// invalid and unsupported points among valid ones, GPU budgets, a planner ceiling, costs, a
// distribution's mean (no template), and a random optimizer.
func templateSpecs(t *testing.T) map[string]struct {
	spec string
	sets []string
} {
	specs := map[string]struct {
		spec string
		sets []string
	}{
		"default":  {string(examples.DefaultSweep()), nil},
		"random":   {string(examples.DefaultSweep()), []string{"optimizer={algorithm: random, max_trials: 50, seed: 7}"}},
		"scale":    {scaleSpec, []string{"engine.workers.aggregated.parallelism.replicas={range: {min: 1, max: 12, step: 1}}"}},
		"budget":   {scaleSpec, []string{"optimization.constraints={min_candidate_gpus: 3, max_candidate_gpus: 9}", "engine.workers.aggregated.parallelism.tensor={choices: [1, 2, 4]}", "engine.workers.aggregated.scheduler.max_sequences={choices: [1, 32, 256]}"}},
		"aliases":  {base, []string{"engine.hardware={choices: [h100, h100_sxm, h200_sxm]}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}", "router.policy={choices: [round_robin, kv_router]}"}},
		"models":   {base, []string{"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}", "engine.model={choices: [meta-llama/Llama-3.1-405B, meta-llama/Llama-3.1-8B]}", "engine.workers.aggregated.scheduler.max_sequences={choices: [8, 64]}", "engine.workers.aggregated.parallelism.tensor={choices: [1, 2, 4, 8]}"}},
		"knobs":    {both, []string{"engine.mode={choices: [aggregated, disaggregated]}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}", "engine.workers.decode.parallelism.replicas={choices: [1, 3]}", "router={policy: {choices: [round_robin, kv_router]}, temperature: {choices: [0.0, 0.5]}, overlap_score_credit: {range: {min: 0, max: 2, step: 0.5}}}"}},
		"planner":  {base, []string{"planner.policy={choices: [disabled, enabled]}", "planner.load_min_observations={choices: [2, 3]}", "planner.max_num_gpus={choices: [4, 64]}", "planner.target=load", "evaluation.sla={ttft_ms: 500}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"}},
		"invalid":  {base, []string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4, 8]}", "engine.workers.aggregated.kv_cache.block_size={choices: [1, 16, 48]}", "engine.backend=vllm", "engine.workers.aggregated.scheduler.max_batched_tokens={choices: [16, 8192]}"}},
		"rates":    {base, []string{"traffic.load={type: poisson, requests_per_second: {range: {min: 0.5, max: 8, scale: log}}}", "engine.workers.aggregated.parallelism.replicas={range: {min: 1, max: 40, step: 3}}", "optimization.constraints={max_candidate_gpus: 20}"}},
		"mean":     {base, []string{"traffic.source.input_tokens={distribution: normal, mean: {choices: [256, 512]}, stddev: 32}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"}},
		"cost":     {both, []string{"engine.mode={choices: [aggregated, disaggregated]}", "engine.workers.prefill.parallelism.tensor={choices: [1, 2]}", "engine.workers.decode.parallelism.replicas={choices: [1, 2, 4]}", "engine.workers.decode.hardware=h100", "optimization.cost={gpu_hour_usd: {h200_sxm: 3.5, h100_sxm: 2.5}}"}},
		"overflow": {base, []string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 1048576, 1048577]}", "engine.workers.aggregated.parallelism.tensor={choices: [1, 4096]}", "optimization.constraints={max_candidate_gpus: 64}"}},
	}
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		specs["examples/"+filepath.Base(f)] = struct {
			spec string
			sets []string
		}{string(data), nil}
	}
	return specs
}

// expandBoth expands spec with templates and with every point decoded from its tree (the
// reference), and fails the test where they differ in anything: points (index, ID, class, twin,
// GPUs, prices, values), counts, filter messages, errors, warnings, notes, empty values, the
// spec hash, and the error when the spec has no valid point.
func expandBoth(t *testing.T, name, spec string, sets []string) (compared bool) {
	t.Helper()
	env := func(string) (string, bool) { return "/tmp/trace.jsonl", true }
	s, err := Parse([]byte(spec), name, sets, env, results.CheckMetric)
	if err != nil {
		return false
	}
	ref, err := Parse([]byte(spec), name, sets, env, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	ref.noTemplates = true
	got, gotErr := s.ExpandLazy()
	want, wantErr := ref.ExpandLazy()
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && (gotErr.Error() != wantErr.Error() || errors.Is(gotErr, errors.ErrUnsupported) != errors.Is(wantErr, errors.ErrUnsupported)) {
		t.Errorf("%s: templates give error %v, the reference %v", name, gotErr, wantErr)
		return true
	}
	if gotErr != nil {
		return true
	}
	if got.GridPoints != want.GridPoints || got.Valid != want.Valid || !reflect.DeepEqual(got.Filtered, want.Filtered) ||
		!reflect.DeepEqual(got.Examples, want.Examples) || !slices.Equal(got.Errors, want.Errors) || !slices.Equal(got.Warnings, want.Warnings) ||
		!slices.Equal(got.TimingNotes, want.TimingNotes) || !reflect.DeepEqual(got.EmptyValues, want.EmptyValues) ||
		got.SpecHash() != want.SpecHash() || len(got.Points) != len(want.Points) {
		t.Errorf("%s: templates give %d/%d points %v %q %q, the reference %d/%d %v %q %q", name, got.Valid, len(got.Points), got.Filtered,
			got.Examples, got.Errors, want.Valid, len(want.Points), want.Filtered, want.Examples, want.Errors)
		return true
	}
	for i := range got.Points {
		p, q := got.Points[i], want.Points[i]
		if i == 0 {
			// The first point's config is decoded by Materialize in both.
			if !reflect.DeepEqual(p.Config, q.Config) {
				t.Errorf("%s: first point's config differs", name)
			}
		}
		p.Config, q.Config = nil, nil
		if !reflect.DeepEqual(p, q) {
			t.Errorf("%s: point %d: templates give %+v, the reference %+v", name, i, p, q)
			return true
		}
	}
	return true
}

// TestTemplateExpansionMatchesDecoding: the template path gives the expansion that decoding every
// point's tree gives (expandBoth), on every spec of templateSpecs; the specs with numeric domains
// do build templates and splices (the path is not silently bypassed). Under -race it leaves out
// the two specs whose two expansions took 6.5-7 s each there (1.0-1.2 s without, 2 cores,
// 2026-12-06): "scale" (12,000 points) and examples/sweep-deepseek-r1.yaml (15,552 grid points,
// 1,170 valid); make test runs this test again without the detector, and the expansion's
// goroutines (which specs of over 256 points start) stay watched under it by
// TestExpansionIsTheSameOnAnyCoreCount.
func TestTemplateExpansionMatchesDecoding(t *testing.T) {
	raceSkipped := map[string]bool{"scale": true, "examples/sweep-deepseek-r1.yaml": true}
	for name, c := range templateSpecs(t) {
		if raceEnabled && raceSkipped[name] {
			continue
		}
		if !expandBoth(t, name, c.spec, c.sets) {
			t.Errorf("%s: does not parse", name)
		}
	}
	for _, name := range []string{"default", "scale", "aliases", "knobs", "rates", "planner"} {
		c := templateSpecs(t)[name]
		s, err := Parse([]byte(c.spec), name, c.sets, nil, results.CheckMetric)
		if err != nil {
			t.Fatal(err)
		}
		mi, pi := s.controller(pathMode), s.controller(pathPolicy)
		combos := s.combos(mi, pi)
		tm := s.newTemplates(combos, len(combos)/len(s.Domains))
		if tm == nil {
			t.Fatalf("%s: no templates", name)
		}
		built := 0
		for _, b := range tm.branches {
			if b.tmpl != nil && tm.newSplice(b, 0).ok {
				built++
			}
		}
		if built == 0 {
			t.Errorf("%s: no branch has a template and an ID splice", name)
		}
	}
}
