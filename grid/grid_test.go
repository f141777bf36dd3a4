package grid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/zeebo/xxh3"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// base is a small sweep spec; tests add domains with --set.
const base = `traffic:
  source: {type: synthetic, input_tokens: 128, output_tokens: 8}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 10}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 256}}
      timing: {type: polynomial}
router: {policy: round_robin}
`

// both declares all three roles, for specs whose mode is a domain.
var both = strings.Replace(base, "router:", `    prefill:
      parallelism: {replicas: 1, tensor: 1}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 256}}
      timing: {type: polynomial}
    decode:
      parallelism: {replicas: 1, tensor: 1}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 256}}
      timing: {type: polynomial}
router:`, 1)

func expand(t *testing.T, spec string, sets ...string) *Expansion {
	t.Helper()
	return expandWith(t, nil, spec, sets...)
}

// expandWith is expand with the performance database db (Spec.Systems).
func expandWith(t *testing.T, db *opdb.DB, spec string, sets ...string) *Expansion {
	t.Helper()
	s, err := Parse([]byte(spec), "spec.yaml", sets, nil, results.CheckMetric)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	s.Systems = db
	x, err := s.Expand()
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	return x
}

func TestExpandCountsAndOrder(t *testing.T) {
	x := expand(t, base,
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}",
		"engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}",
		"traffic.load.concurrency={range: {min: 4, max: 12, step: 4}}")
	if x.GridPoints != 18 || x.Valid != 18 || len(x.Points) != 18 || len(x.Filtered) != 0 {
		t.Fatalf("grid %d valid %d selected %d filtered %v; want 18 points, none filtered", x.GridPoints, x.Valid, len(x.Points), x.Filtered)
	}
	// Document order (traffic comes before engine in the spec), first domain slowest.
	if got := x.Points[1].Label(); got != "concurrency=4 aggregated.replicas=1 aggregated.tensor=2" {
		t.Errorf("point 1 = %q", got)
	}
	if got := x.Points[17].Label(); got != "concurrency=12 aggregated.replicas=4 aggregated.tensor=2" {
		t.Errorf("point 17 = %q", got)
	}
	ids := map[string]bool{}
	for i, p := range x.Points {
		if p.Index != i {
			t.Errorf("point %d has index %d", i, p.Index)
		}
		if len(p.ID) != 12 || strings.Trim(p.ID, "0123456789abcdef") != "" {
			t.Errorf("point %d: ID %q is not 12 hex digits", i, p.ID)
		}
		ids[p.ID] = true
		want := p.Config.Engine.Workers.Aggregated.Parallelism.Replicas * p.Config.Engine.Workers.Aggregated.Parallelism.Tensor
		if p.GPUs != want {
			t.Errorf("point %d: %d GPUs, want %d", i, p.GPUs, want)
		}
		if _, err := config.Decode(p.YAML, "point.yaml", nil); err != nil {
			t.Errorf("point %d: YAML does not decode: %v", i, err)
		}
	}
	if len(ids) != 18 {
		t.Errorf("%d distinct IDs for 18 points", len(ids))
	}
	// Expanding again gives the same points in the same order.
	y := expand(t, base,
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}",
		"engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}",
		"traffic.load.concurrency={range: {min: 4, max: 12, step: 4}}")
	for i := range x.Points {
		if x.Points[i].ID != y.Points[i].ID || string(x.Points[i].YAML) != string(y.Points[i].YAML) {
			t.Fatalf("point %d differs between two expansions", i)
		}
	}
}

// TestPointIDStableAcrossSpecs: the same concrete point has the same ID whatever spec it comes
// from; any change of the config changes it.
func TestPointIDStableAcrossSpecs(t *testing.T) {
	a := expand(t, base, "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}")
	b := expand(t, base, "engine.workers.aggregated.parallelism.replicas={choices: [2, 3]}",
		"engine.workers.aggregated.parallelism.tensor={choices: [1]}")
	if a.Points[1].ID != b.Points[0].ID {
		t.Errorf("replicas=2 has ID %s in one spec and %s in another", a.Points[1].ID, b.Points[0].ID)
	}
	concrete, err := config.Decode(a.Points[1].YAML, "other-name.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if PointID(concrete) != a.Points[1].ID {
		t.Error("the ID depends on the file name")
	}
	reordered, _ := config.Decode([]byte(strings.Replace(string(a.Points[1].YAML), "router:\n  policy: round_robin\n", "", 1)), "x.yaml", nil)
	if reordered == nil || PointID(reordered) != a.Points[1].ID {
		t.Error("omitting a section that equals its default changed the ID")
	}
	changed, _ := config.Decode(a.Points[1].YAML, "x.yaml", []string{"traffic.stop.requests=11"})
	if PointID(changed) == a.Points[1].ID {
		t.Error("a different stop count kept the same ID")
	}
	// engine.precision.attention: auto spelled out is the unset default; bf16 is another config.
	auto, _ := config.Decode(a.Points[1].YAML, "x.yaml", []string{"engine.precision.attention=auto"})
	bf16, _ := config.Decode(a.Points[1].YAML, "x.yaml", []string{"engine.precision.attention=bf16"})
	if auto == nil || bf16 == nil {
		t.Fatal("engine.precision.attention did not decode")
	}
	if PointID(auto) != a.Points[1].ID {
		t.Error("engine.precision.attention: auto changed the ID")
	}
	if PointID(bf16) == a.Points[1].ID {
		t.Error("engine.precision.attention: bf16 kept the same ID")
	}
}

func TestExpandModeDomainKeepsOnlyUsedRoles(t *testing.T) {
	x := expand(t, both,
		"engine.mode={choices: [aggregated, disaggregated]}",
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}",
		"engine.workers.prefill.parallelism.replicas={choices: [1, 2]}",
		"engine.workers.decode.parallelism.replicas={choices: [1, 2]}",
		"engine.kv_transfer={bandwidth_gb_per_second: 100}")
	// aggregated: 3 points; disaggregated: 2 × 2 — the roles of the other mode do not multiply.
	if x.GridPoints != 7 || x.Valid != 7 {
		t.Fatalf("grid %d valid %d filtered %v %v; want 7", x.GridPoints, x.Valid, x.Filtered, x.Examples)
	}
	for _, p := range x.Points {
		w := p.Config.Engine.Workers
		switch p.Config.Engine.Mode {
		case config.ModeAggregated:
			if w.Prefill != nil || w.Decode != nil || p.Config.Engine.KVTransfer != nil {
				t.Errorf("aggregated point %s kept prefill/decode roles or kv_transfer", p.Label())
			}
		case config.ModeDisaggregated:
			if w.Aggregated != nil || p.GPUs != w.Prefill.Parallelism.GPUs()+w.Decode.Parallelism.GPUs() {
				t.Errorf("disaggregated point %s kept the aggregated role or miscounts GPUs (%d)", p.Label(), p.GPUs)
			}
		}
		for _, v := range p.Values {
			if p.Config.Engine.Mode == config.ModeAggregated && strings.Contains(v.Path, "prefill") {
				t.Errorf("aggregated point lists the prefill domain: %s", p.Label())
			}
		}
	}
	if got := x.Points[3].Label(); got != "mode=disaggregated prefill.replicas=1 decode.replicas=1" {
		t.Errorf("first disaggregated point = %q", got)
	}
}

// A concrete engine.mode drops the roles it does not use, with their domains, as a mode domain
// does: --set engine.mode=aggregated on a spec searching all three roles gives the 3 aggregated
// points, not 3 × 2 × 2 invalid ones; =disaggregated gives the 2 × 2 others.
func TestExpandConcreteModeKeepsOnlyUsedRoles(t *testing.T) {
	sets := []string{
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}",
		"engine.workers.prefill.parallelism.replicas={choices: [1, 2]}",
		"engine.workers.decode.parallelism.replicas={choices: [1, 2]}",
		"engine.kv_transfer={bandwidth_gb_per_second: 100}",
	}
	for _, c := range []struct {
		mode  string
		valid int
	}{{"aggregated", 3}, {"disaggregated", 4}} {
		x := expand(t, both, append(sets, "engine.mode="+c.mode)...)
		if x.GridPoints != c.valid || x.Valid != c.valid {
			t.Errorf("%s: grid %d valid %d (%v); want %d", c.mode, x.GridPoints, x.Valid, x.Examples, c.valid)
		}
		for _, p := range x.Points {
			w := p.Config.Engine.Workers
			if (c.mode == "aggregated") != (w.Prefill == nil && w.Decode == nil && w.Aggregated != nil) {
				t.Errorf("%s point %s keeps the other mode's roles", c.mode, p.Label())
			}
		}
	}
}

// A misspelled top-level key is one spec error, not one per point, and the valid keys include
// the sweep's own sections; a key the schema refuses keeps the schema's message.
func TestSpecTopLevelKeys(t *testing.T) {
	for _, c := range []struct{ key, msg string }{
		{"trafic", "unknown field; valid fields: traffic, engine, router, planner, evaluation, optimization, optimizer"},
		{"execution", "host resource limits (execution) are not supported"},
	} {
		_, err := Parse([]byte(base+c.key+": {}\n"), "spec.yaml",
			[]string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}"}, nil, results.CheckMetric)
		var es config.Errors
		if !errors.As(err, &es) || len(es) != 1 || es[0].Path != c.key || !strings.Contains(es[0].Msg, c.msg) {
			t.Errorf("%s: %v; want one error at %s: %s", c.key, err, c.key, c.msg)
		}
	}
}

func TestExpandPolicyDomainDropsKVRouterKnobs(t *testing.T) {
	x := expand(t, base,
		"engine.workers.aggregated.parallelism.replicas=2",
		"router={policy: {choices: [round_robin, kv_router]}, overlap_score_credit: {choices: [0.0, 0.5, 1.0]}, temperature: 0.0}")
	// round_robin: 1 point (knobs dropped); kv_router: 3.
	if x.GridPoints != 4 || x.Valid != 4 {
		t.Fatalf("grid %d valid %d %v %v; want 4", x.GridPoints, x.Valid, x.Filtered, x.Examples)
	}
	rr := x.Points[0].Config.Router
	if rr.Policy != config.PolicyRoundRobin || rr.OverlapScoreCredit != nil || rr.Temperature != nil {
		t.Errorf("round_robin point kept kv_router knobs: %+v", rr)
	}
	if kv := x.Points[2].Config.Router; kv.OverlapScoreCredit == nil || *kv.OverlapScoreCredit != 0.5 {
		t.Errorf("kv_router point 2 overlap_score_credit = %v, want 0.5", kv.OverlapScoreCredit)
	}
}

// A router seed beside a policy domain stays on the policies that draw (kv_router, random) and
// leaves the others, whose points stay valid.
func TestExpandPolicyDomainDropsTheSeed(t *testing.T) {
	x := expand(t, base,
		"engine.workers.aggregated.parallelism.replicas=2",
		"router={policy: {choices: [round_robin, kv_router, random, least_loaded]}, seed: 7}")
	if x.GridPoints != 4 || x.Valid != 4 {
		t.Fatalf("grid %d valid %d %v %v; want 4 and 4", x.GridPoints, x.Valid, x.Filtered, x.Examples)
	}
	for _, p := range x.Points {
		r := p.Config.Router
		draws := r.Policy == config.PolicyKVRouter || r.Policy == config.PolicyRandom
		if got := r.Seed != nil; got != draws || draws && *r.Seed != 7 {
			t.Errorf("%s point: seed %v, want it kept (7) only under kv_router and random", r.Policy, r.Seed)
		}
	}
}

// A router knob no policy of the domain takes is dropped from every point, with a warning; one
// some policy takes is not warned of.
func TestUnusedRouterKnobWarning(t *testing.T) {
	two := "engine.workers.aggregated.parallelism.replicas=2"
	x := expand(t, base, two, "router={policy: {choices: [round_robin, least_loaded]}, seed: 5, temperature: 0.5}")
	want := []string{
		"spec.yaml: router.seed is dropped from every point: only router.policy kv_router or random takes it, and the domain's policies are round_robin, least_loaded",
		"spec.yaml: router.temperature is dropped from every point: only router.policy kv_router takes it, and the domain's policies are round_robin, least_loaded",
	}
	var got []string
	for _, w := range x.Warnings {
		if strings.Contains(w, "dropped from every point") {
			got = append(got, w)
		}
	}
	if !slices.Equal(got, want) || x.Valid != 2 || x.Points[0].Config.Router.Seed != nil {
		t.Errorf("warnings %q, %d valid points (seed %v); want %q and 2 points without the seed", got, x.Valid, x.Points[0].Config.Router.Seed, want)
	}
	x = expand(t, base, two, "router={policy: {choices: [round_robin, random]}, seed: 5, prefill_load_model: {type: {choices: [none]}}, temperature: null}")
	for _, w := range x.Warnings {
		if strings.Contains(w, "dropped from every point") {
			t.Errorf("a seed the random policy takes warned of: %s", w)
		}
	}
}

// A router knob the spec sets wrong fails every point of the policies that take it: that is the
// spec's error, refused once (SpecError), not a policy value without a valid point to warn of.
func TestCheckModesRefusesABadRouterKnob(t *testing.T) {
	for knob, want := range map[string]string{
		"seed: -3": "spec.yaml: router.seed: must be an int between 0 and 18446744073709551615, got -3 " +
			"(every one of the 2 grid points of router.policy kv_router fails with this error: it is in the spec, not in a domain's values)",
		"temperature: -1": "spec.yaml: router.temperature: must be >= 0, got -1 " +
			"(every one of the 2 grid points of router.policy kv_router fails with this error: it is in the spec, not in a domain's values)",
	} {
		x := expand(t, base, "engine.workers.aggregated.parallelism.replicas={choices: [2, 4]}",
			"router={policy: {choices: [round_robin, kv_router, random, least_loaded]}, "+knob+"}")
		err := x.CheckModes()
		var se *SpecError
		if !errors.As(err, &se) || se.Err.Error() != want {
			t.Errorf("%s: CheckModes: %v; want a SpecError %q", knob, err, want)
		}
	}
	// One invalid point beside points outside the GPU budget is refused too (a policy otherwise
	// drops to a warning, not an error, as a mode would).
	x := expand(t, base+"optimization: {constraints: {max_candidate_gpus: 32}}\n", "engine.workers.aggregated.parallelism.replicas={choices: [2, 64]}",
		"router={policy: {choices: [round_robin, kv_router]}, seed: -3}")
	if se := (*SpecError)(nil); !errors.As(x.CheckModes(), &se) || !strings.Contains(se.Err.Error(), "router.seed: must be an int between 0 and") {
		t.Errorf("one invalid kv_router point beside one outside the budget: CheckModes %v, want the seed's SpecError", x.CheckModes())
	}
	// An error a domain's value makes is not the spec's: a one-value domain of an aic load model
	// without a performance database leaves kv_router without a valid point, a warning.
	x = expand(t, base, "engine.workers.aggregated.parallelism.replicas=2",
		"router={policy: {choices: [round_robin, kv_router]}, prefill_load_model: {type: {choices: [aic]}}}")
	if err := x.CheckModes(); err != nil {
		t.Errorf("an error of a domain's value refused as the spec's: %v", err)
	}
	// A knob every point of its policies takes leaves the check with nothing to refuse.
	x = expand(t, base, "engine.workers.aggregated.parallelism.replicas=2", "router={policy: {choices: [round_robin, kv_router]}, seed: 3}")
	if err := x.CheckModes(); err != nil || x.Valid != 2 {
		t.Errorf("CheckModes of a valid seed: %v, %d valid points; want nil and 2", err, x.Valid)
	}
}

func TestExpandFiltersWithCountedReasons(t *testing.T) {
	x := expand(t, base+"optimization: {constraints: {min_candidate_gpus: 2, max_candidate_gpus: 4}}\n",
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4, 8]}",
		"engine.workers.aggregated.kv_cache.block_size={choices: [1, 16]}", // vllm needs >= 2
		"engine.backend=vllm")
	// replicas 1 and 8 are outside [2, 4] (the budget is checked first); block_size 1 is
	// invalid for vllm.
	if x.GridPoints != 8 || x.Valid != 2 {
		t.Fatalf("grid %d valid %d; want 8 and 2", x.GridPoints, x.Valid)
	}
	if x.Filtered[FilteredInvalid] != 2 || x.Filtered[FilteredGPUBudget] != 4 {
		t.Errorf("filtered = %v, want 2 invalid_config and 4 gpu_budget", x.Filtered)
	}
	if ex := x.Examples[FilteredInvalid]; !strings.Contains(ex, "kv_cache.block_size") || !strings.Contains(ex, "block_size=1") {
		t.Errorf("invalid example %q should name the point and the field", ex)
	}
	// A value no valid point takes is a warning unless the GPU budget alone ruled it out
	// (replicas 1 and 8 are not named).
	want := "engine.workers.aggregated.kv_cache.block_size: value 1 has no valid point (all 4 of its points filtered: 2 gpu_budget, 2 invalid_config), e.g. point aggregated.replicas=2 aggregated.block_size=1:"
	if len(otherWarnings(x)) != 1 || !strings.HasPrefix(otherWarnings(x)[0], want) {
		t.Errorf("warnings %q, want one starting %q", otherWarnings(x), want)
	}
	// kv_router knobs multiply only the kv_router points: 1 + 2, times 2 rates.
	x = expand(t, base, "engine.workers.aggregated.parallelism.replicas=2",
		"router={policy: {choices: [round_robin, kv_router]}, temperature: {choices: [0.0, 0.5]}}",
		"traffic.load={type: poisson, requests_per_second: {choices: [1, 1.5]}}")
	if x.GridPoints != 6 || x.Valid != 6 {
		t.Errorf("grid %d valid %d filtered %v", x.GridPoints, x.Valid, x.Filtered)
	}
	// The aic prefill-load model needs a performance database: without one its points are
	// invalid configs (sim.Check), named in the value's warning; with one they are valid.
	aic := []string{"engine.workers.aggregated.parallelism.replicas=2",
		"router={policy: kv_router, prefill_load_model: {type: {choices: [none, aic]}}}"}
	x = expand(t, base, aic...)
	if x.Valid != 1 || x.Filtered[FilteredInvalid] != 1 {
		t.Errorf("aic point without a database: valid %d filtered %v", x.Valid, x.Filtered)
	}
	if len(otherWarnings(x)) != 1 || !strings.Contains(otherWarnings(x)[0], "router.prefill_load_model.type: value aic has no valid point (all 1 of its points filtered: 1 invalid_config)") ||
		!strings.Contains(otherWarnings(x)[0], "none is configured") || !x.NeedsSystems {
		t.Errorf("aic warnings %q, NeedsSystems %v", otherWarnings(x), x.NeedsSystems)
	}
	const systems = "../../shared/data/aic-systems"
	if _, err := os.Stat(filepath.Join(systems, "h200_sxm.yaml")); err == nil {
		if x = expandWith(t, openSystems(t, systems), base, aic...); x.Valid != 2 || len(x.Filtered) != 0 || x.NeedsSystems {
			t.Errorf("aic point with a database: valid %d filtered %v warnings %q", x.Valid, x.Filtered, x.Warnings)
		}
	}
	// An unsupported value filters every point that uses it; with no point left the spec is
	// wrong, and the error names the value.
	s, err := Parse([]byte(base), "spec.yaml", []string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}",
		"planner={policy: enabled, target: load, load_predictor: prophet}", "evaluation.sla={ttft_ms: 500}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Expand()
	var ce config.Errors
	if !errors.As(err, &ce) || err.Error() != "spec.yaml: planner.load_predictor: prophet is not supported yet; use constant, arima or kalman "+
		"(every one of the 2 grid points fails with this error: it is in the spec, not in a domain's values)" {
		t.Errorf("unsupported planner: %v", err)
	}
}

func TestExpandNoValidPointIsASpecError(t *testing.T) {
	// Every point outside the GPU budget: a valid spec with no feasible point (exit 1).
	s, err := Parse([]byte(base), "spec.yaml", []string{"engine.workers.aggregated.parallelism.replicas={choices: [64, 128]}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Expand()
	var nf *NoFeasiblePointError
	var ce config.Errors
	if !errors.As(err, &nf) || errors.As(err, &ce) || !strings.Contains(err.Error(), "no feasible point") ||
		!strings.Contains(err.Error(), "2 gpu_budget") {
		t.Errorf("err = %v; want a *NoFeasiblePointError naming gpu_budget", err)
	}
	// A model or GPU name the catalogs do not know is refused when the spec is parsed, each
	// value of a domain with its own error, under any timing.
	_, err = Parse([]byte(base), "spec.yaml", []string{"engine.model={choices: [nope/a, meta-llama/Llama-3.1-8B, nope/b]}",
		"engine.hardware=h20_sxm"}, nil, results.CheckMetric)
	if !errors.As(err, &ce) || len(ce) != 3 || ce[0].Path != "engine.model" || !strings.Contains(ce[0].Msg, `unknown model "nope/a"`) ||
		!strings.Contains(ce[1].Msg, `unknown model "nope/b"`) || ce[2].Path != "engine.hardware" ||
		!strings.Contains(ce[2].Msg, `unknown hardware "h20_sxm"`) || !strings.Contains(ce[2].Msg, "servesweep list hardware") {
		t.Errorf("unknown names: %v", err)
	}

	// Every point in the budget an invalid config, each its own way: a spec error (exit 2) with
	// the first decode errors in full, not the budget counts. (Each model's weights overflow one
	// GPU, and each says so with its own sizes.)
	s, err = Parse([]byte(base), "spec.yaml", []string{"engine.model={choices: [meta-llama/Llama-3.1-405B, deepseek-ai/DeepSeek-R1, " +
		"moonshotai/Kimi-K2.5, zai-org/GLM-5]}",
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 64]}",
		"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Expand()
	if !errors.As(err, &ce) || errors.As(err, &nf) {
		t.Fatalf("err = %v; want config.Errors", err)
	}
	msg := err.Error()
	for _, want := range []string{"no valid point: 4 of the 8 grid points are invalid configs (the other 4 are outside the GPU budget); the first 3:",
		"point #0 ", "Llama-3.1-405B", "... and 1 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "gpu_budget, e.g.") {
		t.Errorf("the budget example is noise here:\n%s", msg)
	}

	// Every invalid point failing the same way is an error of the spec: printed once, as the
	// field's error (so that a command can name the --set that gave it), with the point count.
	s, err = Parse([]byte(base), "spec.yaml", []string{"engine.backend=vllm",
		"engine.workers.aggregated.parallelism.replicas={choices: [1, 64]}",
		"engine.workers.aggregated.kv_cache.block_size=1", // vllm needs >= 2
		"engine.workers.aggregated.scheduler.max_sequences={choices: [8, 16, 32, 64]}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Expand()
	const once = "spec.yaml: engine.workers.aggregated.kv_cache.block_size: must be >= 2 for the vllm backend, got 1 (all 4 invalid grid points " +
		"(of 8; the others are outside the GPU budget) fail with this error: it is in the spec, not in a domain's values)"
	if !errors.As(err, &ce) || len(ce) != 1 || ce[0].Path != "engine.workers.aggregated.kv_cache.block_size" || err.Error() != once {
		t.Errorf("err = %v\nwant config.Errors of one error: %s", err, once)
	}
	if got := config.AttributeSets(err, []string{"engine.workers.aggregated.kv_cache.block_size=1"}).Error(); !strings.HasPrefix(got,
		"spec.yaml (--set engine.workers.aggregated.kv_cache.block_size=1): engine.workers.aggregated.kv_cache.block_size: must be >= 2") {
		t.Errorf("with the --set named: %s", got)
	}
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		domain string
		want   []string
	}{
		{"{range: {min: 1, max: 9, step: 4}}", []string{"1", "5", "9"}},  // max included when the step lands on it
		{"{range: {min: 1, max: 10, step: 4}}", []string{"1", "5", "9"}}, // and not otherwise
		{"{range: {min: 1, max: 16, scale: log}}", []string{"1", "2", "4", "8", "16"}},
		{"{range: {min: 3, max: 20, scale: log}}", []string{"3", "6", "12"}},
		{"{range: {min: 5, max: 5, step: 1}}", []string{"5"}},
	} {
		s, err := Parse([]byte(base), "spec.yaml", []string{"traffic.load.concurrency=" + tc.domain}, nil, results.CheckMetric)
		if err != nil {
			t.Errorf("%s: %v", tc.domain, err)
			continue
		}
		if got := s.Domains[0].ValueStrings(); !slices.Equal(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.domain, got, tc.want)
		}
	}
	s, err := Parse([]byte(base), "spec.yaml", []string{
		"traffic.load={type: poisson, requests_per_second: {range: {min: 0.1, max: 0.5, step: 0.1}}}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Domains[0].ValueStrings(); !slices.Equal(got, []string{"0.1", "0.2", "0.3", "0.4", "0.5"}) {
		t.Errorf("float range = %v, want 0.1..0.5 without rounding noise", got)
	}
	s, err = Parse([]byte(base), "spec.yaml", []string{
		"traffic.load={type: poisson, requests_per_second: {range: {min: 0.5, max: 4, scale: log}}}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Domains[0].ValueStrings(); !slices.Equal(got, []string{"0.5", "1", "2", "4"}) {
		t.Errorf("float log range = %v", got)
	}
}

// TestDomainValidationErrors checks the message path of every domain rule.
func TestDomainValidationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, set, path, msg string
	}{
		{"domain on a fixed field", "engine.backend={choices: [vllm, sglang]}", "engine.backend", "not allowed on this field"},
		{"domain on traffic.stop", "traffic.stop.requests={choices: [1, 2]}", "traffic.stop.requests", "not allowed"},
		{"domain on the source", "traffic.source.type={choices: [synthetic]}", "traffic.source.type", "not allowed"},
		{"range on a name", "engine.hardware={range: {min: 1, max: 4, step: 1}}", "engine.hardware.range", "a range needs a numeric field; use {choices: [h200_sxm, ...]}"},
		{"auto hardware", "engine.hardware={choices: [h100_sxm, auto]}", "engine.hardware.choices[1]", "must be a non-empty name such as h200_sxm"},
		{"bare list", "engine.workers.aggregated.parallelism.tensor=[1, 2]", "engine.workers.aggregated.parallelism.tensor", "a bare list is never a domain"},
		{"mistyped domain key", "traffic.load.concurrency={choice: [4]}", "traffic.load.concurrency", "must be an int > 0 or a domain {choices: [...]} or {range: {...}}; got a mapping with key(s) choice"},
		{"empty mapping on a value", "engine.workers.aggregated.parallelism.tensor={}", "engine.workers.aggregated.parallelism.tensor", "got an empty mapping"},
		{"mapping on a name", "engine.hardware={choice: [h100_sxm]}", "engine.hardware", "or a domain {choices: [...]}; got a mapping with key(s) choice"},
		{"mistyped domain on a token count", "traffic.source.input_tokens={choice: [512, 1024]}", "traffic.source.input_tokens",
			"a {distribution: ...} mapping or a domain {choices: [...]} or {range: {...}}; got a mapping with key(s) choice"},
		{"empty choices", "engine.workers.aggregated.parallelism.tensor={choices: []}", "engine.workers.aggregated.parallelism.tensor.choices", "must not be empty"},
		{"choices not a list", "engine.workers.aggregated.parallelism.tensor={choices: 4}", "engine.workers.aggregated.parallelism.tensor.choices", "must be a list"},
		{"duplicate choice", "engine.workers.aggregated.parallelism.tensor={choices: [1, 2, 1]}", "engine.workers.aggregated.parallelism.tensor.choices[2]", "duplicate choice 1"},
		{"duplicate float choice", "router.temperature={choices: [0.5, 0.50]}", "router.temperature.choices[1]", "duplicate"},
		{"wrong kind", "engine.workers.aggregated.parallelism.tensor={choices: [1, \"2\"]}", "engine.workers.aggregated.parallelism.tensor.choices[1]", "must be an int > 0"},
		{"non-positive int", "engine.workers.prefill.scheduler.max_sequences={choices: [0, 4]}", "engine.workers.prefill.scheduler.max_sequences.choices[0]", "must be an int > 0, got 0"},
		{"octal-looking choice", "engine.workers.prefill.scheduler.max_sequences={choices: [4, 010]}", "engine.workers.prefill.scheduler.max_sequences.choices[1]",
			"got 010, whose leading zero makes YAML read it as octal (8); write 10, or 0o10 for an octal number"},
		{"leading-zero range bound", "traffic.load.concurrency={range: {min: 04, max: 16, step: 4}}", "traffic.load.concurrency.range.min", "got 04, whose leading zero"},
		{"leading-zero float choice", "router.temperature={choices: [0.5, 09]}", "router.temperature.choices[1]", "got 09, a number with a leading zero; write 9"},
		{"octal-looking option", "optimizer.parallelism=08", "optimizer.parallelism", "got 08, a number with a leading zero; write 8"},
		{"octal-looking timeout", "optimizer.candidate_timeout_seconds=0600", "optimizer.candidate_timeout_seconds", "got 0600, whose leading zero makes YAML read it as octal (384)"},
		{"octal-looking ratio", "optimization.constraints={max_rejected_ratio: 00}", "optimization.constraints.max_rejected_ratio", "got 00, whose leading zero"},
		{"tagged octal choice", "engine.workers.prefill.scheduler.max_sequences={choices: [4, !!int 010]}", "engine.workers.prefill.scheduler.max_sequences.choices[1]", "octal (8)"},
		{"bad enum", "engine.mode={choices: [aggregated, afd]}", "engine.mode.choices[1]", "one of aggregated, disaggregated"},
		{"negative knob", "router.overlap_score_credit={choices: [-1]}", "router.overlap_score_credit.choices[0]", ">= 0"},
		{"list in choices", "engine.mode={choices: [[aggregated]]}", "engine.mode.choices[0]", "got a list"},
		{"two keys", "engine.mode={choices: [aggregated], range: {min: 1, max: 2}}", "engine.mode", "exactly one key"},
		{"range on enum", "router.policy={range: {min: 1, max: 2, step: 1}}", "router.policy.range", "use {choices"},
		{"min > max", "traffic.load.concurrency={range: {min: 8, max: 4, step: 1}}", "traffic.load.concurrency.range", "min (8) must be <= max (4)"},
		{"int range without step", "traffic.load.concurrency={range: {min: 1, max: 4}}", "traffic.load.concurrency.range.step", "an int range needs step"},
		{"int range float bound", "traffic.load.concurrency={range: {min: 1.5, max: 4, step: 1}}", "traffic.load.concurrency.range.min", "must be an int"},
		{"zero step", "traffic.load.concurrency={range: {min: 1, max: 4, step: 0}}", "traffic.load.concurrency.range.step", "must be > 0"},
		{"step with log", "traffic.load.concurrency={range: {min: 1, max: 4, step: 1, scale: log}}", "traffic.load.concurrency.range.step", "only valid with scale: linear"},
		{"log min 0", "traffic.load={type: poisson, requests_per_second: {range: {min: 0, max: 4, scale: log}}}", "traffic.load.requests_per_second.range.min", "min > 0"},
		{"load range min 0", "traffic.load={type: poisson, requests_per_second: {range: {min: 0, max: 4, step: 1}}}", "traffic.load.requests_per_second.range.min", "must be a number > 0"},
		{"bad scale", "traffic.load.concurrency={range: {min: 1, max: 4, step: 1, scale: exp}}", "traffic.load.concurrency.range.scale", "linear or log"},
		{"unknown range key", "traffic.load.concurrency={range: {min: 1, max: 4, step: 1, count: 3}}", "traffic.load.concurrency.range.count", "unknown field"},
		{"missing max", "traffic.load.concurrency={range: {min: 1, step: 1}}", "traffic.load.concurrency.range.max", "required"},
		{"NaN bound", "traffic.load={type: poisson, requests_per_second: {range: {min: .nan, max: 4, step: 1}}}", "traffic.load.requests_per_second.range.min", "finite"},
		{"float range without step", "traffic.load={type: poisson, requests_per_second: {range: {min: 1, max: 4}}}", "traffic.load.requests_per_second.range.step", "needs step"},
		{"huge range", "traffic.load.concurrency={range: {min: 1, max: 1000000000, step: 1}}", "traffic.load.concurrency.range", "more than the grid limit"},
		// A value out of the field's range is min's fault when it is the first, max's after.
		{"range past the field's max", "engine.workers.aggregated.kv_cache.capacity.memory_fraction={range: {min: 0.5, max: 1.5, step: 0.25}}",
			"engine.workers.aggregated.kv_cache.capacity.memory_fraction.range.max", "the range yields 1.25"},
		{"range below the field's min", "engine.workers.aggregated.kv_cache.capacity.memory_fraction={range: {min: -0.5, max: 0.5, step: 0.25}}",
			"engine.workers.aggregated.kv_cache.capacity.memory_fraction.range.min", "the range yields -0.5"},
		{"preset", "engine.workers.aggregated.parallelism={preset: default}", "engine.workers.aggregated.parallelism.preset", "presets are not supported"},
		{"hardware auto", "engine.hardware=auto", "engine.hardware", "auto is not supported"},
		{"domain in a list", "traffic.source={type: trace, paths: [{choices: [a, b]}]}", "traffic.source.paths[0]", "not allowed"},
		{"objective metric", "optimization.objectives=[{metric: p99_ttft, direction: minimize}]", "optimization.objectives[0].metric", "unknown metric"},
		{"objective direction", "optimization.objectives=[{metric: p99_ttft_ms, direction: lower}]", "optimization.objectives[0].direction", "maximize or minimize"},
		{"objective twice", "optimization.objectives=[{metric: gpus, direction: minimize}, {metric: gpus, direction: maximize}]", "optimization.objectives[1].metric", "gpus is already an objective"},
		{"target", "optimization.target=cheapest", "optimization.target", "must be one of"},
		{"constraint order", "optimization.constraints={min_candidate_gpus: 8, max_candidate_gpus: 4}", "optimization.constraints.min_candidate_gpus", "must be <= max_candidate_gpus"},
		{"unknown optimization key", "optimization.pareto_objectives=[]", "optimization.pareto_objectives", "unknown field"},
		{"bayesian", "optimizer.algorithm=bayesian", "optimizer.algorithm", "not supported"},
		{"max_trials with grid", "optimizer.max_trials=10", "optimizer.max_trials", "only valid with algorithm: random"},
		{"seed with grid", "optimizer={algorithm: grid, seed: 123}", "optimizer.seed", "only valid with algorithm: random (grid simulates every valid point; nothing is drawn)"},
		{"seed without an algorithm", "optimizer.seed=123", "optimizer.seed", "only valid with algorithm: random"},
		{"parallelism", "optimizer.parallelism=0", "optimizer.parallelism", "must be an int >= 1"},
		{"timeout", "optimizer.candidate_timeout_seconds=-1", "optimizer.candidate_timeout_seconds", "must be a number > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(both), "spec.yaml", []string{tc.set}, nil, results.CheckMetric)
			var ces config.Errors
			if !errors.As(err, &ces) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			for _, e := range ces {
				if e.Path == tc.path && strings.Contains(e.Msg, tc.msg) {
					if e.File != "spec.yaml" {
						t.Errorf("error does not name the file: %v", e)
					}
					return
				}
			}
			t.Errorf("no error at %s containing %q; got:\n%v", tc.path, tc.msg, err)
		})
	}
}

func TestOversizedGridNamesItsSize(t *testing.T) {
	var sets []string
	for _, k := range []string{"replicas", "tensor", "pipeline", "attention_data"} {
		sets = append(sets, "engine.workers.aggregated.parallelism."+k+"={range: {min: 1, max: 40, step: 1}}")
	}
	_, err := Parse([]byte(base), "spec.yaml", sets, nil, results.CheckMetric)
	if err == nil || !strings.Contains(err.Error(), "2,560,000 points") || !strings.Contains(err.Error(), "limit of 1,000,000") {
		t.Errorf("err = %v; want the grid size 2,560,000 and the limit", err)
	}
}

func TestSpecSectionsAndDefaults(t *testing.T) {
	s, err := Parse([]byte(base), "spec.yaml", nil, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	o, z := s.Optimization, s.Optimizer
	if o.Target != optimization.TargetPareto || !slices.Equal(o.Objectives, optimization.DefaultObjectives()) || o.MaxCandidateGPUs != 32 {
		t.Errorf("optimization defaults = %+v", o)
	}
	if z.Algorithm != AlgorithmGrid || z.Parallelism < 1 || z.CandidateTimeout != 600*time.Second || z.Seed != 42 {
		t.Errorf("optimizer defaults = %+v", z)
	}
	s, err = Parse([]byte(base+`optimization:
  target: throughput_per_gpu
  objectives: [{metric: output_throughput_tok_s, direction: maximize}, {metric: mean_ttft_ms, direction: minimize}]
  constraints: {min_candidate_gpus: 1, max_candidate_gpus: 8}
optimizer: {algorithm: random, max_trials: 3, seed: 7, parallelism: 2, candidate_timeout_seconds: 1.5}
`), "spec.yaml", []string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 3, 4, 5, 6, 7, 8]}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	if s.Optimizer.CandidateTimeout != 1500*time.Millisecond || s.Optimizer.Parallelism != 2 || s.Optimization.MaxCandidateGPUs != 8 {
		t.Errorf("parsed sections = %+v %+v", s.Optimization, s.Optimizer)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if x.Valid != 8 || len(x.Points) != 3 {
		t.Fatalf("random search: valid %d selected %d; want 8 and 3", x.Valid, len(x.Points))
	}
	y, _ := s.Expand()
	for i := range x.Points {
		if x.Points[i].ID != y.Points[i].ID || (i > 0 && x.Points[i].Index <= x.Points[i-1].Index) {
			t.Fatalf("random selection is not deterministic or not in point order: %v", x.Points)
		}
	}
	// strict_sla needs an SLA.
	s, err = Parse([]byte(base+"optimization: {strict_sla: true}\n"), "spec.yaml", nil, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expand(); err == nil || !strings.Contains(err.Error(), "optimization.strict_sla") {
		t.Errorf("strict_sla without an SLA: %v", err)
	}
}

func TestEnvironmentReferences(t *testing.T) {
	spec := strings.Replace(base, "type: synthetic, input_tokens: 128, output_tokens: 8",
		`type: trace, paths: ["${TRACE}"], block_size: 16`, 1)
	spec = strings.Replace(spec, "stop: {requests: 10}", "stop: {max_virtual_time_seconds: 10}", 1)
	env := func(name string) (string, bool) {
		if name == "TRACE" {
			return "/data/trace.jsonl", true
		}
		return "", false
	}
	s, err := Parse([]byte(spec), "spec.yaml", nil, env, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Points[0].Config.Traffic.Source.Paths; !slices.Equal(got, []string{"/data/trace.jsonl"}) {
		t.Errorf("paths = %v", got)
	}
	_, err = Parse([]byte(spec), "spec.yaml", nil, func(string) (string, bool) { return "", false }, results.CheckMetric)
	if err == nil || !strings.Contains(err.Error(), "traffic.source.paths[0]: environment variable TRACE is not set; "+
		"export it, or override this field with --set 'traffic.source.paths=[/path/to/trace.jsonl]'") {
		t.Errorf("unset variable: %v", err)
	}
	_, err = Parse([]byte(spec), "spec.yaml", nil, func(string) (string, bool) { return " \t", true }, results.CheckMetric)
	if err == nil || !strings.Contains(err.Error(), "environment variable TRACE is set but empty or blank; give it a value, or override") {
		t.Errorf("empty variable: %v", err)
	}
	// --set replaces the reference before it is resolved.
	if _, err := Parse([]byte(spec), "spec.yaml", []string{"traffic.source.paths=[/x.jsonl]"}, nil, results.CheckMetric); err != nil {
		t.Errorf("--set over an unset reference: %v", err)
	}
	// A domain's choices read the environment as a plain value does: expanded when set, one
	// error at the choice when unset or malformed.
	hw := func(name string) (string, bool) {
		v, ok := map[string]string{"HW": "h200_sxm", "TRACE": "/data/trace.jsonl"}[name]
		return v, ok
	}
	s, err = Parse([]byte(spec), "spec.yaml", []string{`engine.hardware={choices: ["${HW}", h100_sxm]}`}, hw, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	if x, err := s.Expand(); err != nil || !slices.ContainsFunc(x.Points, func(p Point) bool { return p.Config.Engine.Hardware == "h200_sxm" }) {
		t.Errorf("${HW} in choices: %v; want points on h200_sxm", err)
	}
	for v, want := range map[string]string{
		"${GPU}": "engine.hardware.choices[0]: environment variable GPU is not set; export it, or override this field with --set 'engine.hardware={choices: [VALUE]}'",
		"${GPU":  `engine.hardware.choices[0]: "${GPU" has a "${" that starts no environment reference`,
	} {
		_, err = Parse([]byte(spec), "spec.yaml", []string{`engine.hardware={choices: ["` + v + `"]}`}, hw, results.CheckMetric)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("choice %s: %v; want one error containing %q", v, err, want)
		}
	}
	// A reference in a field that takes no string would fill it with a string the field refuses:
	// one error saying so, though the variable is set.
	num := func(string) (string, bool) { return "16", true }
	_, err = Parse([]byte(spec), "spec.yaml", []string{"engine.workers.aggregated.scheduler.max_sequences=${MS}"}, num, results.CheckMetric)
	if want := `engine.workers.aggregated.scheduler.max_sequences: "${MS}": an environment reference fills string values only ` +
		`(file paths, names), and this field takes an int > 0; write the value, or override the field with --set ` +
		`engine.workers.aggregated.scheduler.max_sequences=VALUE`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a reference in an int field: %v; want one error containing %q", err, want)
	}
	// A field that takes a word beside its number (context_length's max) takes it from the
	// environment.
	word := func(string) (string, bool) { return "max", true }
	if s, err := Parse([]byte(spec), "spec.yaml", []string{"engine.context_length=${CTX}"}, word, results.CheckMetric); err != nil {
		t.Errorf("a reference in a field with a word: %v", err)
	} else if x, err := s.Expand(); err != nil || x.Points[0].Config.Engine.ContextLength != 0 {
		t.Errorf("context_length ${CTX}=max: %v, %+v", err, x)
	}
	// An unset variable there is one error, the unset one.
	_, err = Parse([]byte(spec), "spec.yaml", []string{"engine.context_length=${CTX}"}, func(name string) (string, bool) { return "/t.jsonl", name != "CTX" }, results.CheckMetric)
	if err == nil || !strings.Contains(err.Error(), "environment variable CTX is not set") || strings.Contains(err.Error(), "\n") {
		t.Errorf("an unset variable in context_length: %v; want one error", err)
	}
	// A number from the environment in such a field is refused as an int field's is.
	_, err = Parse([]byte(spec), "spec.yaml", []string{"engine.context_length=${CTX}"}, num, results.CheckMetric)
	if want := `engine.context_length: "${CTX}" gives "16": an environment reference fills string values only (file paths, names), ` +
		`so in this field it can give only "max"`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a number from the environment in context_length: %v; want one error containing %q", err, want)
	}
	// A "${" that starts no reference is one error at its field, not a literal every grid point
	// would refuse; a well-formed reference beside it does not hide it.
	for _, v := range []string{"${TRACE", "${1X}/t.jsonl", "${TRACE}/${A-B}"} {
		_, err = Parse([]byte(spec), "spec.yaml", []string{"traffic.source.paths=[\"" + v + "\"]"}, env, results.CheckMetric)
		want := fmt.Sprintf(`traffic.source.paths[0]: %q has a "${" that starts no environment reference: write ${NAME}`, v)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: %v; want one error containing %q", v, err, want)
		}
	}
}

func TestParseRejectsBadDocuments(t *testing.T) {
	for _, doc := range []string{"[1, 2]", "a: [", "a: 1\n---\nb: 2\n"} {
		if _, err := Parse([]byte(doc), "spec.yaml", nil, nil, results.CheckMetric); err == nil {
			t.Errorf("%q accepted", doc)
		}
	}
	if _, err := Load("/nonexistent/spec.yaml", nil, nil, results.CheckMetric); err == nil || !strings.Contains(err.Error(), "cannot read sweep spec") {
		t.Errorf("missing file: %v", err)
	}
	// An alias bomb is refused, not expanded.
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
		"g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
	if _, err := Parse([]byte(bomb), "spec.yaml", nil, nil, results.CheckMetric); err == nil || !strings.Contains(err.Error(), "through its aliases") {
		t.Errorf("alias bomb: %v", err)
	}
	// A spec that large written out plainly is refused as too large, not blamed on aliases.
	var long strings.Builder
	long.WriteString(base + "x:\n")
	for i := range 70_000 {
		fmt.Fprintf(&long, "  - %d\n", i)
	}
	if _, err := Parse([]byte(long.String()), "spec.yaml", nil, nil, results.CheckMetric); err == nil ||
		!strings.Contains(err.Error(), "the spec has more than 65536 YAML nodes (keys and values), the most a spec may have") {
		t.Errorf("a long plain spec: %v", err)
	}
	// One small alias beside it does not make it the aliases' fault.
	long.WriteString("y: &n 1\nz: *n\n")
	if _, err := Parse([]byte(long.String()), "spec.yaml", nil, nil, results.CheckMetric); err == nil ||
		!strings.Contains(err.Error(), "the spec has more than 65536 YAML nodes") {
		t.Errorf("a long plain spec with an alias: %v", err)
	}
}

// TestQuickGPUsAgreesWithDecodedConfig: the budget shortcut counts GPUs as GPUs does.
func TestQuickGPUsAgreesWithDecodedConfig(t *testing.T) {
	x := expand(t, both,
		"engine.mode={choices: [aggregated, disaggregated]}",
		"engine.workers.aggregated.parallelism={replicas: {choices: [1, 3]}, tensor: {choices: [1, 2]}, attention_data: 2}",
		"engine.workers.prefill.parallelism={replicas: {choices: [1, 2]}, pipeline: {choices: [1, 2]}}",
		"engine.workers.decode.parallelism.tensor={choices: [1, 4]}")
	if x.Valid != 12 {
		t.Fatalf("valid %d, want 12 (%v)", x.Valid, x.Filtered)
	}
	for _, p := range x.Points {
		root, err := parseYAML(p.YAML, "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := quickGPUs(root); !ok || g != p.GPUs {
			t.Errorf("%s: quickGPUs = %d, %v; GPUs = %d", p.Label(), g, ok, p.GPUs)
		}
	}
	// A budget that excludes some points gives the same count with or without the shortcut.
	y := expand(t, both+"optimization: {constraints: {min_candidate_gpus: 3, max_candidate_gpus: 6}}\n",
		"engine.mode={choices: [aggregated, disaggregated]}",
		"engine.workers.aggregated.parallelism={replicas: {choices: [1, 3]}, tensor: {choices: [1, 2]}, attention_data: 2}",
		"engine.workers.prefill.parallelism={replicas: {choices: [1, 2]}, pipeline: {choices: [1, 2]}}",
		"engine.workers.decode.parallelism.tensor={choices: [1, 4]}")
	want := 0
	for _, p := range x.Points {
		if p.GPUs >= 3 && p.GPUs <= 6 {
			want++
		}
	}
	if y.Valid != want || y.Filtered[FilteredGPUBudget] != 12-want {
		t.Errorf("with the budget: valid %d filtered %v; want %d valid", y.Valid, y.Filtered, want)
	}
}

// TestSweepTagsDecideDomains: a field takes a search domain exactly when its struct tag in package
// config says sweep; every other field refuses one, naming the fields that take one.
func TestSweepTagsDecideDomains(t *testing.T) {
	sweepable := 0
	tokenCounts := regexp.MustCompile(`^(.*\.(?:input_tokens|output_tokens|new_input_tokens_per_turn|output_tokens_per_turn))\.(\w+)$`)
	for _, f := range config.Fields() {
		value := "1"
		switch {
		case len(f.Enum) > 0:
			value = f.Enum[0]
		case strings.HasSuffix(f.Path, "hardware"):
			value = "h100_sxm" // a name the catalog knows (checkNames refuses others)
		case f.Path == "engine.model":
			value = "meta-llama/Llama-3.1-8B"
		case f.Kind == config.KindString:
			value = "x"
		}
		if strings.Contains(f.Path, "[]") {
			// Fields of list elements (a mixture component's, a load profile phase's) cannot be
			// addressed by --set: TestMixtureDomains checks component domains. Counted here.
			if f.Sweep {
				sweepable++
			}
			continue
		}
		var sets []string
		if m := tokenCounts.FindStringSubmatch(f.Path); m != nil {
			// A distribution's field: the token count takes a distribution first.
			dist := "{distribution: normal, mean: 64, stddev: 8}"
			if m[2] == "values" || m[2] == "weights" {
				dist = "{distribution: empirical, values: [64]}"
			}
			sets = append(sets, m[1]+"="+dist)
		}
		sets = append(sets, f.Path+"={choices: ["+value+"]}")
		if strings.HasPrefix(f.Path, "engine.workers.prefill.") || strings.HasPrefix(f.Path, "engine.workers.decode.") {
			sets = append(sets, "engine.mode=disaggregated") // the concrete mode keeps only its roles
		}
		s, err := Parse([]byte(both), "spec.yaml", sets, nil, results.CheckMetric)
		if f.Sweep {
			sweepable++
			if err != nil || len(s.Domains) != 1 || s.Domains[0].Path != f.Path {
				t.Errorf("%s is tagged sweep but Parse gives %v", f.Path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), f.Path+": "+notSearchable(f.Path)) || len(notSearchable(f.Path)) > 600 {
			t.Errorf("%s is not tagged sweep but Parse gives %v", f.Path, err)
		}
	}
	// Four source token counts, each with a distribution's min, max, mean and stddev; a mixture
	// component's weight and its source's token counts and their distributions; four load
	// fields, engine mode, model, hardware, context length, the two precisions and the KV transfer
	// bandwidth, router.policy, prefill_load_model.type and three kv_router knobs; per role seven
	// parallelism keys (redundant_experts among them), four scheduler keys, the KV block size, the memory fraction, the
	// runtime reserve and the token cap.
	// Nine planner keys: policy, target, both intervals, the down sensitivity, the minimum
	// observations, the predictor, max_num_gpus and min_workers.
	if want := 4*5 + 1 + 4*5 + 4 + 7 + 5 + 3*15 + 9; sweepable != want {
		t.Errorf("%d sweepable fields, want %d", sweepable, want)
	}
	want := "traffic.source.{input_tokens,output_tokens,new_input_tokens_per_turn,output_tokens_per_turn}; " +
		"traffic.source.input_tokens.{min,max,mean,stddev}; traffic.source.output_tokens.{min,max,mean,stddev}; " +
		"traffic.source.new_input_tokens_per_turn.{min,max,mean,stddev}; traffic.source.output_tokens_per_turn.{min,max,mean,stddev}; " +
		"traffic.source.components[].weight; " +
		"traffic.source.components[].source.{input_tokens,output_tokens,new_input_tokens_per_turn,output_tokens_per_turn}; " +
		"traffic.source.components[].source.input_tokens.{min,max,mean,stddev}; traffic.source.components[].source.output_tokens.{min,max,mean,stddev}; " +
		"traffic.source.components[].source.new_input_tokens_per_turn.{min,max,mean,stddev}; traffic.source.components[].source.output_tokens_per_turn.{min,max,mean,stddev}; " +
		"traffic.load.{concurrency,requests_per_second,sessions_per_second,speedup}; engine.{mode,model,hardware,context_length}; " +
		"engine.kv_transfer.bandwidth_gb_per_second; engine.precision.{weights,kv_cache}; " +
		"engine.workers.<role>.parallelism.{replicas,tensor,pipeline,attention_data,moe_tensor,moe_expert,redundant_experts}; " +
		"engine.workers.<role>.scheduler.{max_batched_tokens,max_sequences,prefill_decode_interval,capacity_policy}; " +
		"engine.workers.<role>.kv_cache.block_size; " +
		"engine.workers.<role>.kv_cache.capacity.{memory_fraction,reserve_gib,max_tokens}; " +
		"router.{policy,overlap_score_credit,prefill_load_scale,temperature}; router.prefill_load_model.type; " +
		"planner.{policy,target,throughput_adjustment_interval_seconds,load_adjustment_interval_seconds,load_scaling_down_sensitivity,load_min_observations,load_predictor,max_num_gpus,min_workers}"
	var texts []string
	for _, g := range searchableGroups {
		texts = append(texts, g.text)
	}
	if got := strings.Join(texts, "; "); got != want {
		t.Errorf("searchableGroups =\n%s\nwant\n%s", got, want)
	}
	// A field that takes no domain is answered with its own fields that do (a domain on a
	// section), else its nearest ancestor's: the ancestor's own, else any below it.
	const msg = "search domains are not allowed on this field; it must be a concrete value. "
	const all = "; servesweep list fields names every field that takes one"
	for path, want := range map[string]string{
		"engine.backend": msg + "Domains may be placed on engine.{mode,model,hardware,context_length}" + all,
		"engine.workers.decode.kv_cache.capacity.type": msg + "Domains may be placed on " +
			"engine.workers.<role>.kv_cache.capacity.{memory_fraction,reserve_gib,max_tokens}" + all,
		"engine.workers.aggregated.kv_cache.capacity": msg + "Domains may be placed on its fields " +
			"engine.workers.<role>.kv_cache.capacity.{memory_fraction,reserve_gib,max_tokens}" + all,
		"engine.workers.aggregated.parallelism": msg + "Domains may be placed on its fields " +
			"engine.workers.<role>.parallelism.{replicas,tensor,pipeline,attention_data,moe_tensor,moe_expert,redundant_experts}" + all,
		"engine.workers.aggregated.timing.type": msg + "Domains may be placed on " +
			"engine.workers.<role>.parallelism.{replicas,tensor,pipeline,attention_data,moe_tensor,moe_expert,redundant_experts}; " +
			"engine.workers.<role>.scheduler.{max_batched_tokens,max_sequences,prefill_decode_interval,capacity_policy}; " +
			"engine.workers.<role>.kv_cache.block_size; " +
			"engine.workers.<role>.kv_cache.capacity.{memory_fraction,reserve_gib,max_tokens}" + all,
		"traffic.source.components[2].source.type": msg + "Domains may be placed on " +
			"traffic.source.components[].source.{input_tokens,output_tokens,new_input_tokens_per_turn,output_tokens_per_turn}" + all,
		"router.kv_events.enabled": msg + "Domains may be placed on router.{policy,overlap_score_credit,prefill_load_scale,temperature}" + all,
		"traffic": msg + "Domains may be placed on its fields " +
			"traffic.source.{input_tokens,output_tokens,new_input_tokens_per_turn,output_tokens_per_turn}; " +
			"traffic.load.{concurrency,requests_per_second,sessions_per_second,speedup}; " +
			"traffic.source.input_tokens.{min,max,mean,stddev}; traffic.source.output_tokens.{min,max,mean,stddev} and 8 more" + all,
		"evaluation.sla.ttft_ms": msg + "No field of evaluation takes a domain" + all,
	} {
		if got := notSearchable(path); got != want {
			t.Errorf("notSearchable(%s) =\n%s\nwant\n%s", path, got, want)
		}
	}
	for policy, want := range map[string][]string{
		"kv_router":    nil,
		"random":       {"overlap_score_credit", "prefill_load_model", "prefill_load_scale", "temperature"},
		"round_robin":  {"overlap_score_credit", "prefill_load_model", "prefill_load_scale", "seed", "temperature"},
		"least_loaded": {"overlap_score_credit", "prefill_load_model", "prefill_load_scale", "seed", "temperature"},
	} {
		if got := droppedRouterKnobs(policy); !slices.Equal(got, want) {
			t.Errorf("droppedRouterKnobs(%s) = %v, want %v", policy, got, want)
		}
	}
}

// TestConcreteMarker: the constructs of a sweep spec in a concrete config (servesweep predict,
// and every point of a grid) are named by grid's messages.
func TestConcreteMarker(t *testing.T) {
	const agg = "engine.workers.aggregated."
	for _, tc := range []struct {
		name string
		sets []string
		path string
		msg  string
	}{
		{"choices domain", []string{"traffic.load.concurrency={choices: [8, 16]}"}, "traffic.load.concurrency", msgDomain},
		{"range domain on a mapping", []string{"traffic.load={range: {min: 1, max: 4}}"}, "traffic.load", msgDomain},
		{"domain in a list", []string{"traffic.source={type: trace, paths: [{choices: [a, b]}]}", "traffic.stop={}"}, "traffic.source.paths[0]", msgDomain},
		{"preset", []string{agg + "parallelism.preset=default"}, agg + "parallelism.preset", msgPreset},
		{"hardware auto", []string{"engine.hardware=auto"}, "engine.hardware", msgAutoHardware},
		{"prefill hardware auto", []string{"engine.mode=disaggregated", "engine.workers={prefill: {hardware: auto}, decode: {}}"},
			"engine.workers.prefill.hardware", msgAutoHardware},
		{"replicas auto", []string{agg + "parallelism.replicas=auto"}, agg + "parallelism.replicas", msgAuto},
		{"planner policy auto", []string{"planner.policy=auto"}, "planner.policy", msgAuto},
		{"optimization", []string{"optimization={target: throughput}"}, "optimization",
			"optimization belongs to servesweep sweep; predict, export and validate --aiperf take one concrete config"},
		{"optimizer", []string{"optimizer={algorithm: random}"}, "optimizer",
			"optimizer belongs to servesweep sweep; predict, export and validate --aiperf take one concrete config"},
		{"kv_capacity_fraction", []string{"traffic.load={type: kv_capacity_fraction}"}, "traffic.load.type",
			"kv_capacity_fraction is only valid in servesweep sweep; predict needs one of concurrency, constant_rate, poisson, trace_timestamps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Decode([]byte(base), "c.yaml", tc.sets, config.WithMarker(ConcreteMarker))
			var ces config.Errors
			if !errors.As(err, &ces) || len(ces) != 1 || ces[0].Path != tc.path || ces[0].Msg != tc.msg || ces[0].Unsupported {
				t.Errorf("got %v; want the one error %s: %s", err, tc.path, tc.msg)
			}
		})
	}
	// A field whose own word is auto takes it.
	c, err := config.Decode([]byte(base), "c.yaml", []string{"engine.workers.aggregated.kv_cache.bytes_per_token=auto",
		"engine.precision={weights: auto}"}, config.WithMarker(ConcreteMarker))
	if err != nil || c.Engine.Workers.Aggregated.KVCache.BytesPerToken != 0 || c.Engine.Precision.Weights != "" {
		t.Errorf("auto as a field's word: %v", err)
	}
}

// optimization.constraints.max_rejected_ratio reaches the analysis settings; outside [0, 1] it is
// an error naming the field.
func TestMaxRejectedRatio(t *testing.T) {
	s, err := Parse([]byte(base), "spec.yaml", []string{"optimization={constraints: {max_rejected_ratio: 0.25}}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Optimization.Settings().MaxRejectedRatio; got != 0.25 {
		t.Errorf("MaxRejectedRatio %v, want 0.25", got)
	}
	for _, bad := range []string{"1.5", "-0.1", "yes"} {
		_, err := Parse([]byte(base), "spec.yaml", []string{"optimization={constraints: {max_rejected_ratio: " + bad + "}}"}, nil, results.CheckMetric)
		var es config.Errors
		if !errors.As(err, &es) || es[0].Path != "optimization.constraints.max_rejected_ratio" {
			t.Errorf("max_rejected_ratio %s: %v", bad, err)
		}
	}
}

// What only the simulator can tell (weights that leave no KV room) filters a point as invalid_config before it runs, as predict refuses it; hardware and
// model aliases are twins of their catalog ids.
func TestSimulatorChecksAndAliasTwins(t *testing.T) {
	dflt := []string{"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}"}
	s, err := Parse([]byte(base), "spec.yaml", append(dflt, "engine.model={choices: [meta-llama/Llama-3.1-405B, meta-llama/Llama-3.1-8B]}"), nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if x.Valid != 1 || x.Filtered[FilteredInvalid] != 1 || !strings.Contains(x.Examples[FilteredInvalid], "Llama-3.1-405B") {
		t.Errorf("valid %d, filtered %v %v; want the 405B model's point invalid on one GPU", x.Valid, x.Filtered, x.Examples)
	}
	x = expand(t, base, "engine.hardware={choices: [h100, h100_sxm, h200_sxm]}")
	// The catalog id represents the class, wherever it is listed.
	if len(x.Points) != 3 || x.Points[0].EquivalentTo != x.Points[1].ID || x.Points[1].EquivalentTo != "" || x.Points[2].EquivalentTo != "" {
		t.Errorf("equivalent_to %q %q %q; want h100 a twin of h100_sxm only", x.Points[0].EquivalentTo, x.Points[1].EquivalentTo, x.Points[2].EquivalentTo)
	}
}

// A distribution's mean and a mixture component's weight take search domains; each point
// decodes with its value (the token count's int holding the mean).
func TestMixtureDomains(t *testing.T) {
	x := expand(t, base, "traffic.source.input_tokens={distribution: normal, mean: {choices: [256, 512]}, stddev: 32}")
	if len(x.Points) != 2 {
		t.Fatalf("%d points, want 2", len(x.Points))
	}
	for i, want := range []float64{256, 512} {
		s := &x.Points[i].Config.Traffic.Source
		if s.InputTokensDist == nil || s.InputTokensDist.Mean != want || s.InputTokens != int(want) {
			t.Errorf("point %d: input %d, distribution %+v; want mean %g", i, s.InputTokens, s.InputTokensDist, want)
		}
	}
	if x.Points[0].ID == x.Points[1].ID {
		t.Error("points with different means share an ID")
	}
	mix := strings.Replace(base, "source: {type: synthetic, input_tokens: 128, output_tokens: 8}",
		"source: {type: mixture, components: [{weight: {choices: [1, 3]}, source: {input_tokens: 128, output_tokens: 8}}, "+
			"{weight: 1, source: {input_tokens: {distribution: uniform, min: {range: {min: 200, max: 400, step: 200}}, max: 600}, output_tokens: 8}}]}", 1)
	x = expand(t, mix)
	if len(x.Points) != 4 || len(x.Spec.Domains) != 2 || x.Spec.Domains[0].Path != "traffic.source.components[0].weight" ||
		x.Spec.Domains[1].Path != "traffic.source.components[1].source.input_tokens.min" {
		t.Fatalf("%d points, domains %v", len(x.Points), x.Spec.Domains)
	}
	got := [][2]float64{}
	for _, p := range x.Points {
		c := p.Config.Traffic.Source.Components
		got = append(got, [2]float64{c[0].Weight, float64(c[1].Source.InputTokensDist.Min)})
	}
	if want := [][2]float64{{1, 200}, {1, 400}, {3, 200}, {3, 400}}; !slices.Equal(got, want) {
		t.Errorf("points (weight, min) = %v, want %v", got, want)
	}
}

// TestPlannerDomains: the planner's policy and knobs take domains. A disabled point drops the
// other planner keys, so the disabled points that differ only in them are one point (the rest
// are duplicates); each enabled point keeps its knob.
func TestPlannerDomains(t *testing.T) {
	x := expand(t, base, "planner.policy={choices: [disabled, enabled]}", "planner.load_min_observations={choices: [2, 3]}",
		"planner.target=load", "evaluation.sla={ttft_ms: 500}")
	if len(x.Points) != 3 || x.Filtered[FilteredDuplicate] != 1 {
		t.Fatalf("points %d, filtered %v; want 3 and one duplicate", len(x.Points), x.Filtered)
	}
	var got []string
	for _, p := range x.Points {
		s := p.Config.Planner.Settings()
		got = append(got, fmt.Sprintf("%v/%d", s.Enabled, s.MinObservations))
	}
	if want := []string{"false/5", "true/2", "true/3"}; !slices.Equal(got, want) {
		t.Errorf("points %v, want %v", got, want)
	}
}

// An autoscaled point's budget is the ceiling the planner may grow it to: max_num_gpus 16
// exceeds a budget of 4 GPUs, max_num_gpus 4 fits it.
func TestPlannerCeilingInBudget(t *testing.T) {
	spec := base + "evaluation: {sla: {ttft_ms: 500}}\noptimization: {constraints: {max_candidate_gpus: 4}}\n"
	x, err := mustParse(t, spec, "planner={policy: enabled, max_num_gpus: {choices: [4, 16]}}").Expand()
	if err != nil {
		t.Fatal(err)
	}
	if x.Valid != 1 || x.Filtered[FilteredGPUBudget] != 1 || !strings.Contains(x.Examples[FilteredGPUBudget], "the planner may grow it to 16 GPUs") {
		t.Errorf("valid %d, filtered %v, example %q", x.Valid, x.Filtered, x.Examples[FilteredGPUBudget])
	}
}

// A planner field the spec gives wrong (not a domain's value) fails every point of
// planner.policy enabled, whose points alone keep it: that is the spec's error, refused once
// (SpecError) naming the field, what it takes and how many points it ruled out, whether a --set or
// the file gave it, not a policy value without a valid point to warn of while the fixed points
// are swept alone. A bad value a domain gives (planner.target {choices: [load, slaa]}, or
// max_num_gpus {choices: [0]}) stays the domain's: a warning.
func TestCheckModesRefusesABadPlannerField(t *testing.T) {
	const note = " (every one of the 2 grid points of planner.policy enabled fails with this error: it is in the spec, not in a domain's values)"
	spec := base + "evaluation: {sla: {ttft_ms: 500, itl_ms: 50}}\n"
	domains := []string{"engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}", "planner.policy={choices: [disabled, enabled]}"}
	refused := func(name, spec string, want string, sets ...string) {
		t.Helper()
		x := expand(t, spec, append(slices.Clone(domains), sets...)...)
		var se *SpecError
		if err := x.CheckModes(); !errors.As(err, &se) || se.Err.Error() != want {
			t.Errorf("%s: CheckModes: %v; want a SpecError %q", name, err, want)
			return
		}
		var ce config.Errors
		if !errors.As(se.Err, &ce) || len(ce) != 1 || ce[0].File != "spec.yaml" {
			t.Errorf("%s: %#v is not one config.Error of spec.yaml (which a command names the --set of)", name, se.Err)
		}
	}
	for set, want := range map[string]string{
		"planner.target=slaa":                        `spec.yaml: planner.target: must be one of throughput, latency, sla, load, got "slaa"`,
		"planner.max_num_gpus=0":                     "spec.yaml: planner.max_num_gpus: must be >= 1 or -1, got 0",
		"planner.load_adjustment_interval_seconds=0": "spec.yaml: planner.load_adjustment_interval_seconds: must be >= 0.01, got 0",
	} {
		refused(set, spec, want+note, set)
	}
	refused("target: slaa in the file", spec+"planner: {target: slaa}\n",
		`spec.yaml: planner.target: must be one of throughput, latency, sla, load, got "slaa"`+note)
	// One invalid enabled point beside one outside the GPU budget is refused too.
	x := expand(t, spec+"optimization: {constraints: {max_candidate_gpus: 32}}\n", "engine.workers.aggregated.parallelism.replicas={choices: [1, 64]}",
		"planner.policy={choices: [disabled, enabled]}", "planner.target=slaa")
	want := `spec.yaml: planner.target: must be one of throughput, latency, sla, load, got "slaa" (all 1 invalid grid points of planner.policy ` +
		"enabled (of 2; the others are outside the GPU budget) fail with this error: it is in the spec, not in a domain's values)"
	if se := (*SpecError)(nil); !errors.As(x.CheckModes(), &se) || se.Err.Error() != want {
		t.Errorf("one invalid enabled point beside one outside the budget: CheckModes %v, want the SpecError %q", x.CheckModes(), want)
	}
	// A bad value a domain gives is the domain's (a domain's values are checked one by one at
	// Parse, so here a rule between fields: the load interval within the throughput interval):
	// warned of, the fixed points swept.
	x = expand(t, spec, append(slices.Clone(domains), "planner.enable_load_scaling=true", "planner.enable_throughput_scaling=true",
		"planner.load_adjustment_interval_seconds={choices: [200]}")...)
	warned := slices.ContainsFunc(x.Warnings, func(w string) bool {
		return strings.Contains(w, "planner.policy: value enabled has no valid point") &&
			strings.Contains(w, "planner.load_adjustment_interval_seconds: must be < throughput_adjustment_interval_seconds (180)")
	})
	if err := x.CheckModes(); err != nil || !warned || x.Valid != 2 {
		t.Errorf("a domain's bad load interval: CheckModes %v, %d valid points, warnings %q; want nil, the 2 fixed points and a warning "+
			"of planner.policy enabled without a valid point", err, x.Valid, x.Warnings)
	}
	// A valid planner field leaves the check with nothing to refuse.
	x = expand(t, spec, append(slices.Clone(domains), "planner.target=load")...)
	if err := x.CheckModes(); err != nil || x.Valid != 4 {
		t.Errorf("a valid planner: CheckModes %v, %d valid points; want nil and 4", err, x.Valid)
	}
}

func mustParse(t *testing.T, spec string, sets ...string) *Spec {
	t.Helper()
	s, err := Parse([]byte(spec), "spec.yaml", sets, nil, results.CheckMetric)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// A misspelt or misplaced key anywhere in the spec is one spec error at Parse, at its full path
// with the keys valid there, whichever worker role holds it and whether or not a domain sits
// on it; it does not reach the points.
func TestSpecUnknownKeysAreOneErrorEach(t *testing.T) {
	const par = "replicas, tensor, pipeline, attention_data, moe_tensor, moe_expert, redundant_experts"
	const role = "hardware, startup_seconds, parallelism, scheduler, kv_cache, timing"
	modes := "engine.mode={choices: [aggregated, disaggregated]}"
	for _, tc := range []struct {
		name string
		sets []string
		want []string
	}{
		{"typo in a searched role", []string{modes, "engine.workers.aggregated.parallelism.tensr=4"},
			[]string{"spec.yaml: engine.workers.aggregated.parallelism.tensr: unknown field; valid fields: " + par + " (did you mean tensor?)"}},
		{"key of another section in a role", []string{modes, "engine.workers.prefill.max_batch_tokens=4096"},
			[]string{"spec.yaml: engine.workers.prefill.max_batch_tokens: unknown field; valid fields: " + role}},
		{"typo in a role the concrete mode drops", []string{"engine.workers.decode.schedular={max_sequences: 8}"},
			[]string{"spec.yaml: engine.workers.decode.schedular: unknown field; valid fields: " + role + " (did you mean scheduler?)"}},
		{"a domain on a misspelt key", []string{"engine.workers.aggregated.parallelism.tensr={choices: [1, 2]}"},
			[]string{"spec.yaml: engine.workers.aggregated.parallelism.tensr: unknown field; valid fields: " + par + " (did you mean tensor?)"}},
		{"misspelt section, then a key under it", []string{"engine.wrkers.aggregated.parallelism.tensor=2"},
			[]string{"spec.yaml: engine.wrkers: unknown field; valid fields: mode, model, hardware, backend, backend_version, " +
				"context_length, speculation, enable_chunked_prefill, overlap_scheduling, cuda_graphs, kv_transfer, frontend, precision, workers (did you mean workers?)"}},
		// The union's keys are its variant's: the spec's timing is polynomial.
		{"two typos, two errors", []string{"engine.workers.aggregated.timing.tpe=fixed", "router.polcy=kv_router"},
			[]string{"spec.yaml: engine.workers.aggregated.timing.tpe: unknown field; valid fields: type, forward_model (did you mean type?)",
				"spec.yaml: router.polcy: unknown field; valid fields: policy, prefill_load_model (did you mean policy?)"}},
		{"union under a domain lists every variant's keys", []string{"router={policy: {choices: [round_robin, kv_router]}, temprature: 0.5}"},
			[]string{"spec.yaml: router.temprature: unknown field; valid fields: policy, prefill_load_model, overlap_score_credit, prefill_load_scale, temperature, seed (did you mean temperature?)"}},
		{"inside a distribution", []string{"traffic.source.input_tokens={distribution: normal, mean: 128, stdev: 8}"},
			[]string{"spec.yaml: traffic.source.input_tokens.stdev: unknown field; valid fields: distribution, min, max, mean, stddev (did you mean stddev?)"}},
		{"refused key in a role", []string{"engine.workers.aggregated.backend=sglang"},
			[]string{"spec.yaml: engine.workers.aggregated.backend: per-role overrides are not allowed; set engine.backend"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(both), "spec.yaml", tc.sets, nil, results.CheckMetric)
			var ces config.Errors
			if !errors.As(err, &ces) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			if got := err.Error(); got != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.Join(tc.want, "\n"))
			}
		})
	}
	// The built-in and example specs have no unknown key.
	paths, _ := filepath.Glob("../examples/*.yaml")
	if len(paths) < 5 {
		t.Fatalf("examples: %v", paths)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data, p, nil, func(string) (string, bool) { return "x", true }, results.CheckMetric); err != nil && strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A mode of engine.mode's domain without a valid point is refused by CheckModes with its
// counts and first reason (or, when all its points fail with one error, that error), while the other modes' points remain in the expansion; a value of
// another domain without a valid point stays a warning.
func TestCheckModesRefusesAnEmptyMode(t *testing.T) {
	modes := "engine.mode={choices: [aggregated, disaggregated]}"
	x := expand(t, both, modes, "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}",
		"engine.workers.aggregated.scheduler.max_sequences=0")
	if x.Valid != 1 || x.Filtered[FilteredInvalid] != 2 {
		t.Fatalf("valid %d filtered %v; want the one disaggregated point valid, 2 invalid", x.Valid, x.Filtered)
	}
	// Every point of the mode fails with one error of a field outside the domains: that error,
	// once, as a *SpecError (dropping the mode is not the fix).
	want := "spec.yaml: engine.workers.aggregated.scheduler.max_sequences: must be an int > 0, got 0 (every one of the 2 " +
		"grid points of mode aggregated fails with this error: it is in the spec, not in a domain's values)"
	err := x.CheckModes()
	var ces config.Errors
	var se *SpecError
	if !errors.As(err, &se) || !errors.As(err, &ces) || err.Error() != want {
		t.Errorf("CheckModes = %v\nwant %s", err, want)
	}
	wantEmpty := []EmptyValue{
		{Path: "engine.mode", Value: "aggregated", Points: 2, Filtered: map[string]int{FilteredInvalid: 2},
			Example: "point mode=aggregated aggregated.replicas=1: spec.yaml: engine.workers.aggregated.scheduler.max_sequences: must be an int > 0, got 0"},
		{Path: "engine.workers.aggregated.parallelism.replicas", Value: "1", Points: 1, Filtered: map[string]int{FilteredInvalid: 1},
			Example: "point mode=aggregated aggregated.replicas=1: spec.yaml: engine.workers.aggregated.scheduler.max_sequences: must be an int > 0, got 0"},
		{Path: "engine.workers.aggregated.parallelism.replicas", Value: "2", Points: 1, Filtered: map[string]int{FilteredInvalid: 1},
			Example: "point mode=aggregated aggregated.replicas=2: spec.yaml: engine.workers.aggregated.scheduler.max_sequences: must be an int > 0, got 0"},
	}
	if !reflect.DeepEqual(x.EmptyValues, wantEmpty) {
		t.Errorf("EmptyValues = %+v\nwant %+v", x.EmptyValues, wantEmpty)
	}
	// The mode's warning stands alone; the other values share one line.
	if len(otherWarnings(x)) != 2 || !strings.HasPrefix(otherWarnings(x)[0], "engine.mode: value aggregated has no valid point (all 2 of its points filtered: 2 invalid_config)") ||
		otherWarnings(x)[1] != "2 domain values have no valid point: aggregated.replicas=1 (1 point), aggregated.replicas=2 (1 point); "+
			"e.g. "+wantEmpty[1].Example {
		t.Errorf("warnings %q", otherWarnings(x))
	}

	// Some of the mode's points outside the GPU budget, the rest failing with one error of a
	// field outside the domains: still that error, once.
	x = expand(t, both, modes, "engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 64]}",
		"engine.workers.aggregated.scheduler.max_sequences=0")
	want = "spec.yaml: engine.workers.aggregated.scheduler.max_sequences: must be an int > 0, got 0 (all 2 invalid grid points " +
		"of mode aggregated (of 3; the others are outside the GPU budget) fail with this error: it is in the spec, not in a domain's values)"
	if err := x.CheckModes(); !errors.As(err, &se) || err.Error() != want {
		t.Errorf("budget and one error: CheckModes = %v\nwant %s", err, want)
	}

	// A mode the GPU budget alone rules out is refused too (and warned about when allowed);
	// another value the budget alone rules out is neither.
	x = expand(t, both, modes, "engine.workers.aggregated.parallelism.replicas=64",
		"engine.workers.decode.parallelism.replicas={choices: [1, 64]}")
	want = "spec.yaml: engine.mode: the mode aggregated has no valid point: all 1 of its grid points were filtered (gpu_budget 1), " +
		"e.g. point mode=aggregated: 64 GPUs, outside the budget [1, 32] of optimization.constraints; fix the spec, or drop aggregated " +
		"from the choices"
	if err := x.CheckModes(); err == nil || err.Error() != want {
		t.Errorf("budget: CheckModes = %v\nwant %s", err, want)
	}
	if len(x.EmptyValues) != 2 || !x.EmptyValues[0].BudgetOnly() || x.EmptyValues[1].Value != "64" {
		t.Errorf("budget: EmptyValues = %+v", x.EmptyValues)
	}
	if len(otherWarnings(x)) != 1 || !strings.HasPrefix(otherWarnings(x)[0], "engine.mode: value aggregated has no valid point (all 1 of its points filtered: 1 gpu_budget)") {
		t.Errorf("budget: warnings %q", otherWarnings(x))
	}

	// Every mode with a valid point: a value of another domain without one is not refused.
	x = expand(t, both, modes, "engine.backend=vllm", "engine.workers.aggregated.kv_cache.block_size={choices: [1, 16]}") // vllm needs >= 2
	if err := x.CheckModes(); err != nil || len(x.EmptyValues) != 1 || x.EmptyValues[0].Path != "engine.workers.aggregated.kv_cache.block_size" {
		t.Errorf("value without a valid point: CheckModes = %v, EmptyValues %+v", err, x.EmptyValues)
	}
}

// A capacity search over a concurrency whose per-load-unit stop leaves each slot fewer than
// MinSteadyRequestsPerSlot requests is warned: its probes keep the synchronized start. 3
// requests per slot, or 1 session of 2 turns, warn; 4 requests, 2 sessions of 2 turns, or an
// explicit ramp_seconds do not.
func TestCapacityWarnsAboutRunsTooShortForSteadyState(t *testing.T) {
	spec := base + "evaluation: {sla: {ttft_ms: 100}}\noptimization: {capacity_search: {}}\n"
	sessions := "traffic.source={type: synthetic-session, new_input_tokens_per_turn: 64, output_tokens_per_turn: 8, session: {turns: 2}}"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"traffic.stop={requests_per_load_unit: 3}"}, "traffic.stop.requests_per_load_unit (3) gives each concurrency slot 3 requests, fewer than the 4"},
		{[]string{sessions, "traffic.stop={sessions_per_load_unit: 1}"}, "traffic.stop.sessions_per_load_unit (1) gives each concurrency slot 2 requests, fewer than the 4"},
		{[]string{"traffic.stop={requests_per_load_unit: 4}"}, ""},
		{[]string{sessions, "traffic.stop={sessions_per_load_unit: 2}"}, ""},
		{[]string{"traffic.stop={requests_per_load_unit: 3}", "traffic.load.ramp_seconds=0"}, ""},
	} {
		x := expand(t, spec, c.sets...)
		var got []string
		for _, w := range x.Warnings {
			if strings.Contains(w, "gives each concurrency slot") {
				got = append(got, w)
			}
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%v: unexpected warning %q", c.sets, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want) || !strings.HasPrefix(got[0], "spec.yaml: ")):
			t.Errorf("%v: warnings %q, want one containing %q", c.sets, x.Warnings, c.want)
		}
	}
}

// A GPU or model domain under fixed or polynomial timing with fixed KV pools is warned about (its
// values change only labels and prices); under default timing, or with a KV pool sized from the
// GPU, it is not.
func TestLabelOnlyDomainsWarn(t *testing.T) {
	has := func(x *Expansion) bool {
		for _, w := range x.Warnings {
			if strings.Contains(w, "engine.hardware: its values change only labels and prices") {
				return true
			}
		}
		return false
	}
	if x := expand(t, base, "engine.hardware={choices: [h100_sxm, h200_sxm]}"); !has(x) {
		t.Errorf("polynomial timing, fixed pool: warnings %q", x.Warnings)
	}
	if x := expand(t, base, "engine.hardware={choices: [h100_sxm, h200_sxm]}", "engine.workers.aggregated.timing={type: default}"); has(x) {
		t.Errorf("default timing: warnings %q", x.Warnings)
	}
	if x := expand(t, base, "engine.hardware={choices: [h100_sxm, h200_sxm]}",
		"engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}"); has(x) {
		t.Errorf("a KV pool from the GPU's memory: warnings %q", x.Warnings)
	}
	// A tensor domain changes only the GPU count under polynomial timing; a replicas domain
	// changes the simulation, and under default timing so does tensor.
	split := func(x *Expansion) bool {
		for _, w := range x.Warnings {
			if strings.Contains(w, "parallelism.tensor: its values change only the GPU count and the price") {
				return true
			}
		}
		return false
	}
	if x := expand(t, base, "engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}"); !split(x) {
		t.Errorf("tensor under polynomial timing: warnings %q", otherWarnings(x))
	}
	if x := expand(t, base, "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"); split(x) || len(otherWarnings(x)) != 0 {
		t.Errorf("replicas under polynomial timing: warnings %q", otherWarnings(x))
	}
	if x := expand(t, base, "engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}", "engine.workers.aggregated.timing={type: default}"); split(x) {
		t.Errorf("tensor under default timing: warnings %q", x.Warnings)
	}
}

// A point whose model's weights no GPU of it holds is filtered as invalid_config naming the
// fit, whatever its timing: under polynomial timing and a fixed KV pool, Llama-3.1-405B in BF16
// (756 GiB) on one 48 GB L40S is not a deployment, though the timing would rank it with the 8B
// one; TP8 of them (94.5 GiB each) is not either.
func TestPointsWhoseWeightsDoNotFitAreInvalid(t *testing.T) {
	x := expand(t, base, "engine.model={choices: [meta-llama/Llama-3.1-8B, meta-llama/Llama-3.1-405B]}",
		"engine.hardware=l40s", "engine.workers.aggregated.parallelism.tensor={choices: [1, 8]}")
	if x.Valid != 2 || x.Filtered[FilteredInvalid] != 2 {
		t.Fatalf("valid %d, filtered %v (%v); want the 8B points valid and the two 405B ones invalid", x.Valid, x.Filtered, x.Examples)
	}
	if ex := x.Examples[FilteredInvalid]; !strings.Contains(ex, "does not fit on 1 × l40s") || !strings.Contains(ex, "needs 756.0 GiB of weights") {
		t.Errorf("example %q, want the fit named", ex)
	}
}

// A redundant_experts domain on a wide-EP decode role yields one point per value; the 0 point
// keeps the ID of the same deployment written without the field (it is left out of the
// encoding at 0), and a value the role's expert split cannot take is filtered as an invalid
// config naming the field, not run.
func TestRedundantExpertsDomain(t *testing.T) {
	spec := `traffic:
  source: {type: synthetic, input_tokens: 1024, output_tokens: 128}
  load: {type: concurrency, concurrency: 64}
  stop: {requests_per_load_unit: 4}
engine:
  mode: disaggregated
  model: deepseek-ai/DeepSeek-R1
  hardware: gb200
  backend: sglang
  precision: {weights: fp4, kv_cache: fp8}
  workers:
    prefill:
      parallelism: {replicas: 1, tensor: 4, moe_expert: 4}
      timing: {type: default}
    decode:
      parallelism: {replicas: 1, tensor: 1, attention_data: 16, moe_expert: 16}
      timing: {type: default}
`
	x := expand(t, spec, "engine.workers.decode.parallelism.redundant_experts={choices: [0, 32, 8]}")
	if len(x.Points) != 2 {
		t.Fatalf("%d valid points, want 2 (0 and 32; 264 slots do not split over 16 GPUs): %+v", len(x.Points), x.Filtered)
	}
	var got []int
	for _, p := range x.Points {
		c, err := config.Decode(p.YAML, "p.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Engine.Workers.Decode.Parallelism.RedundantExperts)
	}
	if !slices.Equal(got, []int{0, 32}) {
		t.Errorf("redundant_experts of the points %v, want [0 32]", got)
	}
	plain := expand(t, spec)
	if x.Points[0].ID != plain.Points[0].ID {
		t.Errorf("redundant_experts 0 has ID %s, the spec without the field %s", x.Points[0].ID, plain.Points[0].ID)
	}
	if x.Points[1].ID == plain.Points[0].ID {
		t.Error("redundant_experts 32 kept the ID of the deployment without redundant experts")
	}
	if n := x.Filtered["invalid_config"]; n != 1 {
		t.Errorf("filtered %v, want one invalid_config (redundant_experts 8)", x.Filtered)
	}
}

// A field whose null means not set in a plain config (kv_cache.capacity.max_tokens, reserve_gib,
// memory_fraction) takes null as a choice: that point leaves the field unset (its ID is the one
// of the spec without the field), and its YAML and label show null (the template path's points
// are TestLazyExpansionMatchesDecodingTheText's "nulls" case). A field whose null is a kind error still refuses
// it, and a wrong choice of a nullable field names null among the valid values.
func TestNullChoiceMeansNotSet(t *testing.T) {
	const capacity = "engine.workers.aggregated.kv_cache.capacity="
	sets := []string{capacity + "{type: default, max_tokens: {choices: [null, 4096]}, reserve_gib: {choices: [~, 2]}, " +
		"memory_fraction: {choices: [null, 0.8]}}"}
	x := expand(t, base, sets...)
	if len(x.Points) != 8 {
		t.Fatalf("%d points, want 8", len(x.Points))
	}
	unset := expand(t, base, capacity+"{type: default}")
	p := x.Points[0]
	kv := p.Config.Engine.Workers.Aggregated.KVCache.Capacity
	if kv.MaxTokens != 0 || kv.ReserveGiB != nil || kv.MemoryFraction != 0.9 || p.ID != unset.Points[0].ID {
		t.Errorf("all-null point: capacity %+v, ID %s; want the unset fields' defaults and the ID %s", kv, p.ID, unset.Points[0].ID)
	}
	if !strings.Contains(string(p.YAML), "max_tokens: null") || !strings.Contains(p.Label(), "max_tokens=null") ||
		!strings.Contains(p.Label(), "reserve_gib=null") {
		t.Errorf("all-null point: label %q, YAML\n%s\nwant null shown", p.Label(), p.YAML)
	}
	if kv := x.Points[7].Config.Engine.Workers.Aggregated.KVCache.Capacity; kv.MaxTokens != 4096 || kv.ReserveGiB == nil ||
		*kv.ReserveGiB != 2 || kv.MemoryFraction != 0.8 {
		t.Errorf("last point: capacity %+v, want the given values", kv)
	}
	for _, c := range []struct{ set, path, msg string }{
		{"engine.workers.aggregated.scheduler.max_sequences={choices: [null, 8]}", "engine.workers.aggregated.scheduler.max_sequences.choices[0]",
			"must be an int > 0, got null"},
		{capacity + "{type: default, max_tokens: {choices: [0, 4096]}}", "engine.workers.aggregated.kv_cache.capacity.max_tokens.choices[0]",
			"must be an int > 0, or null (not set), got 0"},
		{capacity + "{type: default, max_tokens: {choices: [null, ~]}}", "engine.workers.aggregated.kv_cache.capacity.max_tokens.choices[1]",
			"duplicate choice"},
	} {
		_, err := Parse([]byte(base), "spec.yaml", []string{c.set}, nil, results.CheckMetric)
		if err == nil || !strings.Contains(err.Error(), c.path+": "+c.msg) {
			t.Errorf("%s: %v, want %s: %s", c.set, err, c.path, c.msg)
		}
	}
}

// An engine.model value, fixed or a domain's, under an organization the catalog does not know for
// the model it reads as is noted once, with the file and the field path; the spellings the
// catalog documents are not.
func TestModelOrganizationNotes(t *testing.T) {
	x := expand(t, base, "engine.model=wrongorg/Llama-3.1-8B")
	// The note names the --set that gave the model, as an error about it would.
	if len(x.Notes) != 1 || !strings.HasPrefix(x.Notes[0], `spec.yaml (--set engine.model=wrongorg/Llama-3.1-8B): engine.model: "wrongorg/Llama-3.1-8B" is read as meta-llama/Llama-3.1-8B, `+
		"but the catalog knows that model under meta-llama") {
		t.Errorf("fixed model: notes %q", x.Notes)
	}
	const models = "engine.model={choices: [Llama-3.1-8B, nvidia/Llama-3.1-8B-Instruct-FP8, acme/Qwen3-8B, meta-llama/Meta-Llama-3.1-8B-Instruct]}"
	x = expand(t, base, models)
	if len(x.Notes) != 1 || !strings.HasPrefix(x.Notes[0], `spec.yaml (--set `+models+`): engine.model: "acme/Qwen3-8B" is read as Qwen/Qwen3-8B`) {
		t.Errorf("model domain: notes %q, want acme/Qwen3-8B's only", x.Notes)
	}
	if x := expand(t, base); len(x.Notes) != 0 {
		t.Errorf("catalog spelling: notes %q", x.Notes)
	}
}

// Spellings of one model among engine.model's choices are twins, as hardware aliases are: the
// later choice's point copies the earlier's results (equivalent_to), and a warning names both
// choices and the model they read as. A weight-format suffix reads as another model.
func TestModelSpellingsAreTwins(t *testing.T) {
	timed := []string{"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}"}
	const models = "engine.model={choices: [Llama-3.1-8B, meta-llama/Meta-Llama-3.1-8B-Instruct, " +
		"nvidia/Llama-3.1-8B-Instruct-FP8, meta-llama/Llama-3.1-8B-FP8, Qwen/Qwen3-8B]}"
	x := expand(t, base, append(timed, models)...)
	if len(x.Points) != 5 {
		t.Fatalf("%d points, want 5", len(x.Points))
	}
	p := x.Points
	// The catalog spelling represents its class wherever it is listed (meta-llama/Llama-3.1-8B-FP8,
	// fourth); among spellings that are none, the first listed does.
	if p[0].EquivalentTo != "" || p[1].EquivalentTo != p[0].ID || p[2].EquivalentTo != p[3].ID || p[3].EquivalentTo != "" || p[4].EquivalentTo != "" {
		t.Errorf("equivalent_to %q %q %q %q %q; want the second a twin of the first and the third of the fourth",
			p[0].EquivalentTo, p[1].EquivalentTo, p[2].EquivalentTo, p[3].EquivalentTo, p[4].EquivalentTo)
	}
	want := []string{
		"spec.yaml (--set " + models + "): engine.model: the choices Llama-3.1-8B and meta-llama/Meta-Llama-3.1-8B-Instruct both name the model " +
			"meta-llama/Llama-3.1-8B: each point with meta-llama/Meta-Llama-3.1-8B-Instruct simulates as its twin with Llama-3.1-8B " +
			"and copies its results (results.parquet's equivalent_to); drop one of them",
		"spec.yaml (--set " + models + "): engine.model: the choices nvidia/Llama-3.1-8B-Instruct-FP8 and meta-llama/Llama-3.1-8B-FP8 both name the model " +
			"meta-llama/Llama-3.1-8B-FP8: each point with nvidia/Llama-3.1-8B-Instruct-FP8 simulates as its twin with " +
			"meta-llama/Llama-3.1-8B-FP8 and copies its results (results.parquet's equivalent_to); drop one of them",
	}
	if !slices.Equal(otherWarnings(x), want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(otherWarnings(x), "\n"), strings.Join(want, "\n"))
	}
	x = expand(t, base, append(timed, "engine.hardware={choices: [h100, h100_sxm]}")...)
	if len(otherWarnings(x)) != 1 || !strings.Contains(otherWarnings(x)[0], "the choices h100 and h100_sxm both name the GPU h100_sxm") {
		t.Errorf("hardware aliases: warnings %q", otherWarnings(x))
	}
}

// A class's representative does not move with the order of a domain's choices: a one-worker
// deployment's default round_robin router represents the class whether the router's choices
// list it first or last (the model's spelling, not the catalog's, is the same in both).
func TestRepresentativeIndependentOfChoiceOrder(t *testing.T) {
	for _, order := range []string{"[round_robin, kv_router]", "[kv_router, round_robin]"} {
		x := expand(t, base, "router.policy={choices: "+order+"}", "engine.workers.aggregated.parallelism.replicas=1")
		if len(x.Points) != 2 {
			t.Fatalf("%s: %d points", order, len(x.Points))
		}
		rr, kv := &x.Points[0], &x.Points[1]
		if rr.Config.Router.Policy != config.PolicyRoundRobin {
			rr, kv = kv, rr
		}
		if rr.EquivalentTo != "" || kv.EquivalentTo != rr.ID {
			t.Errorf("%s: round_robin equivalent_to %q, kv_router %q; want kv_router a twin of round_robin (%s)", order, rr.EquivalentTo, kv.EquivalentTo, rr.ID)
		}
	}
}

// A KV capacity's reserve_gib given as the default (1.5 GiB, timing.RuntimeReserveGiB) simulates
// as the null one: those points are twins; another reserve is not.
func TestDefaultReserveIsATwinOfNull(t *testing.T) {
	x := expand(t, base, "engine.workers.aggregated.kv_cache.capacity={type: default, reserve_gib: {choices: [null, 1.5, 2]}}")
	if len(x.Points) != 3 {
		t.Fatalf("%d points, want 3", len(x.Points))
	}
	p := x.Points
	if p[0].EquivalentTo != "" || p[1].EquivalentTo != p[0].ID || p[2].EquivalentTo != "" {
		t.Errorf("equivalent_to %q %q %q; want the 1.5 GiB point a twin of the null one", p[0].EquivalentTo, p[1].EquivalentTo, p[2].EquivalentTo)
	}
	if g := p[1].Config.Engine.Workers.Aggregated.KVCache.Capacity.ReserveGiB; g == nil || *g != 1.5 {
		t.Errorf("the twin's own config lost its reserve_gib: %v", g)
	}
}

// An engine.precision field naming the format auto takes for the model is auto: bf16 weights and
// KV cache for Llama-3.1-8B, fp8 weights for the -FP8 checkpoint, an attention format equal to
// the KV cache's; another format is its own point.
func TestAutoPrecisionTwins(t *testing.T) {
	timed := []string{"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}"}
	x := expand(t, base, append(timed, "engine.model=meta-llama/Llama-3.1-8B",
		"engine.precision={weights: {choices: [auto, bf16, fp8]}, kv_cache: {choices: [auto, bf16]}}")...)
	var eq []string
	for _, p := range x.Points {
		eq = append(eq, p.EquivalentTo)
	}
	p := x.Points
	if want := []string{"", p[0].ID, p[0].ID, p[0].ID, "", p[4].ID}; len(p) != 6 || !slices.Equal(eq, want) {
		t.Errorf("equivalent_to %q, want %q", eq, want)
	}
	x = expand(t, base, append(timed, "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8",
		"engine.precision={weights: {choices: [auto, fp8, bf16]}, kv_cache: fp8, attention: fp8}")...)
	eq = eq[:0]
	for _, p := range x.Points {
		eq = append(eq, p.EquivalentTo)
	}
	p = x.Points
	if want := []string{"", p[0].ID, ""}; len(p) != 3 || !slices.Equal(eq, want) {
		t.Errorf("FP8 checkpoint: equivalent_to %q, want %q", eq, want)
	}
	// The attention format of the KV cache is the auto one; BF16 attention over it is not.
	auto := *p[0].Config
	auto.Engine.Precision = config.Precision{}
	bf16 := *p[0].Config
	bf16.Engine.Precision.Attention = "bf16"
	if CanonicalKey(p[0].Config) != CanonicalKey(&auto) || CanonicalKey(&bf16) == CanonicalKey(&auto) {
		t.Errorf("attention fp8 over an fp8 cache reads as another class than auto, or bf16 as the same")
	}
}

// An engine.precision.weights value that contradicts the format an engine.model value's name
// gives is noted for the points that combine them, naming the file and the field, with the
// explicit format winning (the point's config keeps it).
func TestWeightsConflictNotes(t *testing.T) {
	x := expand(t, base, "engine.model={choices: [nvidia/Llama-3.1-8B-Instruct-FP8, meta-llama/Llama-3.1-8B]}",
		"engine.precision.weights={choices: [auto, bf16, fp8]}")
	want := []string{`spec.yaml (--set engine.precision.weights={choices: [auto, bf16, fp8]}): engine.precision.weights: bf16 contradicts engine.model "nvidia/Llama-3.1-8B-Instruct-FP8", ` +
		"whose name means fp8 weights; engine.precision.weights wins: the run prices bf16 weights (and the name's fp8 KV cache " +
		"where engine.precision.kv_cache is auto)"}
	if !slices.Equal(x.Notes, want) {
		t.Errorf("notes %q, want %q", x.Notes, want)
	}
	if x := expand(t, base, "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8", "engine.precision.weights=fp8"); len(x.Notes) != 0 {
		t.Errorf("agreeing formats: notes %q", x.Notes)
	}
}

// A field whose plain value may be a word (engine.context_length: max) takes that word as a
// choice too, each point getting what the plain field would; another string is refused naming
// the word.
func TestWordChoices(t *testing.T) {
	x := expand(t, base, "engine.context_length={choices: [max, 8192]}")
	if len(x.Points) != 2 || x.Points[0].Config.Engine.ContextLength != 0 || x.Points[1].Config.Engine.ContextLength != 8192 {
		t.Fatalf("points %d, context lengths %v", len(x.Points), func() (out []int) {
			for _, p := range x.Points {
				out = append(out, p.Config.Engine.ContextLength)
			}
			return out
		}())
	}
	plain := expand(t, base, "engine.context_length=max")
	if len(plain.Points) != 1 || plain.Points[0].Config.Engine.ContextLength != x.Points[0].Config.Engine.ContextLength {
		t.Errorf("plain max: %d points", len(plain.Points))
	}
	for _, c := range []struct{ set, path, msg string }{
		{"engine.context_length={choices: [maxx, 8192]}", "engine.context_length.choices[0]", `must be an int > 0 or "max", got "maxx" (string)`},
		{"engine.context_length={choices: [max, max]}", "engine.context_length.choices[1]", "duplicate choice max"},
		{"engine.context_length={choice: [max]}", "engine.context_length", `must be an int > 0 or "max" or a domain`},
	} {
		_, err := Parse([]byte(base), "spec.yaml", []string{c.set}, nil, results.CheckMetric)
		if err == nil || !strings.Contains(err.Error(), c.path+": "+c.msg) {
			t.Errorf("%s: %v, want %s: %s", c.set, err, c.path, c.msg)
		}
	}
}

// otherWarnings is x's warnings less lockstepWarning's and shortFixedRunWarning's (either kind), which every
// spec built on base (fixed lengths, 10 requests at concurrency 4, no capacity search) has; the
// tests that call it are about the others.
func otherWarnings(x *Expansion) []string {
	var out []string
	for _, w := range x.Warnings {
		if (!strings.Contains(w, "fall into step") || strings.Contains(w, "capacity search")) && !strings.Contains(w, "too few to spread the first wave") &&
			!strings.Contains(w, "fewer requests measured in steady state") {
			out = append(out, w)
		}
	}
	return out
}

// Expansion and materialization stop when their context is done, returning its error: an
// interrupt on a large grid does not wait for every point.
func TestMaterializeStopsWhenCancelled(t *testing.T) {
	s := mustParse(t, base, "engine.workers.aggregated.parallelism.replicas={range: {min: 1, max: 600, step: 1}}")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.ExpandLazyContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("ExpandLazyContext: %v, want context.Canceled", err)
	}
	x, err := s.ExpandLazy()
	if err != nil {
		t.Fatal(err)
	}
	err = x.MaterializeContext(ctx, x.Points)
	if !errors.Is(err, context.Canceled) || x.Points[len(x.Points)-1].YAML != nil {
		t.Errorf("MaterializeContext: %v, last point's YAML %d bytes; want context.Canceled before it", err, len(x.Points[len(x.Points)-1].YAML))
	}
	if err := x.MaterializeContext(context.Background(), x.Points); err != nil || x.Points[len(x.Points)-1].YAML == nil {
		t.Errorf("MaterializeContext without a cancel: %v", err)
	}
}

// The spec hash covers the build that simulates, when known: rows of two builds may come from two
// timing models. An unknown build (a test binary) hashes as a spec without one.
func TestSpecHashCoversTheBuild(t *testing.T) {
	x := expand(t, base)
	unknown := x.SpecHash()
	x.Spec.Build = "abc"
	a := x.SpecHash()
	x.Spec.Build = "abc+modified"
	if b := x.SpecHash(); a == unknown || b == a || b == unknown {
		t.Errorf("hashes: unknown %s, abc %s, abc+modified %s; want three", unknown, a, b)
	}
	x.Spec.Build = ""
	if x.SpecHash() != unknown {
		t.Error("an unknown build changed the hash")
	}
}

// SpecIdentity lists what SpecHash hashes: the points' count and digest first, then exactly the
// lines hashed after the points' own, so that two identities differ where two hashes do.
func TestSpecIdentity(t *testing.T) {
	x := expand(t, base)
	x.Spec.Build = "abc"
	id := x.SpecIdentity()
	h := sha256.New()
	h.Write([]byte("servesweep spec v1\n"))
	pointsDigest := sha256.New()
	for _, p := range x.Points {
		h.Write([]byte("point " + p.ID + "\n"))
		pointsDigest.Write([]byte("point " + p.ID + "\n"))
	}
	h.Write([]byte(strings.Join(id[1:], "\n") + "\n"))
	if sum := h.Sum(nil); hex.EncodeToString(sum[:8]) != x.SpecHash() {
		t.Errorf("the identity's lines %q do not hash to SpecHash %s", id, x.SpecHash())
	}
	sum := pointsDigest.Sum(nil)
	var set uint64
	for _, p := range x.Points {
		set += xxh3.HashString(p.ID)
	}
	if want := fmt.Sprintf("points %d %s %016x", len(x.Points), hex.EncodeToString(sum[:8]), set); id[0] != want {
		t.Errorf("first line %q, want %q", id[0], want)
	}
	if !slices.Contains(id, "build abc") || !slices.Contains(id, "target pareto") {
		t.Errorf("identity %q lacks the build or the target", id)
	}
	// A trace path with a newline stays one line, escaped; the points in another order keep the
	// count and the order-free digest.
	x.Spec.traceDigests = []traceDigest{{"dir/a\nb.jsonl", "d1"}}
	if got := x.SpecIdentity(); len(got) != len(id)+1 || got[len(got)-1] != `trace dir/a\nb.jsonl d1` {
		t.Errorf("with a newline in a trace path: %q", got)
	}
	x.Spec.traceDigests = nil
	x.Points = append(x.Points, x.Points[0])
	x.Points[0].ID = "0000000000aa"
	fwd := x.SpecIdentity()[0]
	x.Points[0], x.Points[1] = x.Points[1], x.Points[0]
	rev := x.SpecIdentity()[0]
	f, r := strings.Fields(fwd), strings.Fields(rev)
	if f[1] != "2" || f[1] != r[1] || f[3] != r[3] || f[2] == r[2] {
		t.Errorf("points reordered: %q then %q; want the count and the last digest equal, the ordered one not", fwd, rev)
	}
}

// A key a spec's mapping holds twice is one error at the spec's own lines, not one per point at
// the lines of each point's re-written config (a user trial, 2026-12-07: "planner: duplicate key
// (first defined on line 21)" for two points and "line 27" for a third, of a key on lines 32
// and 33); inside a domain's mapping too.
func TestDuplicateKeysAtTheSpecsLines(t *testing.T) {
	for _, c := range []struct {
		spec, want string
	}{
		{base + "router: {policy: kv_router}\n", "spec.yaml: router: duplicate key (first defined on line 15, again on line 16)"},
		{strings.Replace(base, "parallelism: {replicas: 1, tensor: 1}", "parallelism: {replicas: {choices: [1, 2]}, replicas: 2, tensor: 1}", 1),
			"spec.yaml: engine.workers.aggregated.parallelism.replicas: duplicate key (first defined on line 12, again on line 12)"},
	} {
		_, err := Parse([]byte(c.spec), "spec.yaml", nil, nil, results.CheckMetric)
		if err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// A tab in a spec's indentation is named at its own line (yaml.v3 says the line of the list
// around it: 5 for a tab on line 6).
func TestSpecTabNamedAtItsLine(t *testing.T) {
	_, err := Parse([]byte("a: 1\nb: 2\nc: 3\nd:\n  - x\n\t- y\n"), "spec.yaml", nil, nil, results.CheckMetric)
	if want := "spec.yaml: invalid YAML: line 6: a tab character in the indentation (YAML indents with spaces only)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	// A parser error, which yaml.v3 reports a line early, at its own line: a key on line 4
	// indented less than the mapping of line 3 (yaml.v3: line 1).
	_, err = Parse([]byte("engine:\n  workers:\n    aggregated: {}\n   mode: aggregated\n"), "spec.yaml", nil, nil, results.CheckMetric)
	if want := "spec.yaml: invalid YAML: line 4: did not find expected key (in the mapping that begins on line 2)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	// A second document is named at its line; an empty one after the spec (a trailing "---",
	// or one holding a comment) is accepted, as predict accepts it.
	_, err = Parse([]byte("a: 1\n---\nb: 2\n"), "spec.yaml", nil, nil, results.CheckMetric)
	if want := "spec.yaml: more than one YAML document (a second begins on line 3); a sweep spec is a single document"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	for _, tail := range []string{"---\n", "---\n# done\n", "---\n---\n"} {
		if _, err := parseYAML([]byte("a: 1\n"+tail), "spec.yaml"); err != nil {
			t.Errorf("spec ending %q: %v", tail, err)
		}
	}
}
