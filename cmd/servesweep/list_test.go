package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// runOK runs the command line args in-process and returns stdout; a nonzero exit fails the test.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb strings.Builder
	if code := run(context.Background(), args, ioStreams{Out: &out, Err: &errb}); code != exitOK {
		t.Fatalf("servesweep %s: exit %d\nstderr: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// listJSON runs `list what --format json` and decodes the array into v.
func listJSON(t *testing.T, what string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(runOK(t, "list", what, "--format", "json")), v); err != nil {
		t.Fatalf("list %s --format json: %v", what, err)
	}
}

// lineOf returns the table line of `list what` whose first word is name.
func lineOf(t *testing.T, what, name string) string {
	t.Helper()
	for _, l := range strings.Split(runOK(t, "list", what), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return l
		}
	}
	t.Fatalf("list %s prints no line for %s", what, name)
	return ""
}

// Llama-3.1-8B's facts, computed by hand from its config.json: KV bytes per token = 32 layers ×
// 8 KV heads × 128 head dim × 2 (K and V) × 2 bytes (BF16) = 131,072. DeepSeek-V3's MLA caches
// the 512-wide latent and the 64-wide rotary key per layer: 61 × (512 + 64) × 2 = 70,272.
func TestListModels(t *testing.T) {
	var docs []modelDoc
	listJSON(t, "models", &docs)
	byName := map[string]modelDoc{}
	var names []string
	for _, d := range docs {
		byName[d.Name] = d
		names = append(names, d.Name)
		// Every name listed is one the spec's engine.model resolves.
		if _, err := timing.ResolveModel(d.Name); err != nil {
			t.Errorf("listed model %s is refused: %v", d.Name, err)
		}
	}
	if !slices.Equal(names, timing.ModelIDs()) {
		t.Errorf("list models names %v, the catalog %v", names, timing.ModelIDs())
	}
	l := byName["meta-llama/Llama-3.1-8B"]
	if l.KVBytesPerToken != 32*8*128*2*2 || l.Parameters != 8.03e9 || l.Layers != 32 || l.MaxContextTokens != 131072 || l.Weights != "bf16" {
		t.Errorf("Llama-3.1-8B: %+v", l)
	}
	// DeepSeek-V3 ships one MTP module (num_nextn_predict_layers 1), Llama none.
	if d := byName["deepseek-ai/DeepSeek-V3"]; d.KVBytesPerToken != 61*(512+64)*2 || d.Weights != "fp8" || d.Attention != "MLA 512+64" || d.MTPLayers != 1 {
		t.Errorf("DeepSeek-V3: %+v", d)
	}
	if l.MTPLayers != 0 || !strings.HasSuffix(lineOf(t, "models", "meta-llama/Llama-3.1-8B"), "bf16     -") ||
		!strings.HasSuffix(lineOf(t, "models", "deepseek-ai/DeepSeek-V3"), "fp8      1") {
		t.Errorf("the MTP column: Llama-3.1-8B %q, DeepSeek-V3 %q", lineOf(t, "models", "meta-llama/Llama-3.1-8B"), lineOf(t, "models", "deepseek-ai/DeepSeek-V3"))
	}
	line := lineOf(t, "models", "meta-llama/Llama-3.1-8B")
	for _, want := range []string{"8.03B", "131,072", "GQA 8×128", "bf16"} {
		if !strings.Contains(line, want) {
			t.Errorf("table line %q lacks %q", line, want)
		}
	}
}

// H100 SXM's datasheet figures: 80 GB HBM3 at 3.35 TB/s, 989.5 dense BF16 TFLOPS.
func TestListHardware(t *testing.T) {
	var docs []hardwareDoc
	listJSON(t, "hardware", &docs)
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
		if _, err := timing.LookupHardware(d.Name); err != nil {
			t.Errorf("listed hardware %s is refused: %v", d.Name, err)
		}
		if d.Name == "h100_sxm" && (d.HBMGiB != 80 || d.HBMTBps != 3.35 || d.BF16TFLOPS != 989.5 || d.FP4TFLOPS != 0) {
			t.Errorf("h100_sxm: %+v", d)
		}
	}
	if !slices.Equal(names, timing.HardwareIDs()) {
		t.Errorf("list hardware names %v, the GPU table %v", names, timing.HardwareIDs())
	}
	if line := lineOf(t, "hardware", "h100_sxm"); !strings.Contains(line, "80 GiB of GPU memory at 3.35 TB/s") || !strings.Contains(line, "FP4 -") ||
		!strings.Contains(line, "GPU link 450 GB/s each way among 8 GPUs, network port 50 GB/s") ||
		!strings.HasSuffix(line, "; also written h100, h100-sxm") {
		t.Errorf("h100_sxm line %q", line)
	}
	// Every alias listed resolves to its GPU, and every GPU lists an array, empty or not.
	for _, d := range docs {
		if d.Aliases == nil {
			t.Errorf("%s: aliases null, want an array", d.Name)
		}
		for _, a := range d.Aliases {
			if id, alias := timing.ResolveHardwareID(a); id != d.Name || !alias {
				t.Errorf("%s: alias %s resolves to %s (alias %v)", d.Name, a, id, alias)
			}
		}
		if d.Name == "h100_sxm" && !slices.Equal(d.Aliases, []string{"h100", "h100-sxm"}) {
			t.Errorf("h100_sxm aliases %v", d.Aliases)
		}
	}
}

// The backends listed are engine.backend's values, each with its scheduler style.
func TestListBackendsMatchesTheSchema(t *testing.T) {
	var docs []nameDoc
	listJSON(t, "backends", &docs)
	f, _ := config.Lookup("engine.backend")
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
		if d.Meaning == "" {
			t.Errorf("backend %s has no scheduler style", d.Name)
		}
	}
	if !slices.Equal(names, f.Enum) || len(backendStyles) != len(f.Enum) {
		t.Errorf("list backends names %v (%d styles), engine.backend takes %v", names, len(backendStyles), f.Enum)
	}
}

// The metrics listed are what an objective accepts, and nothing else.
func TestListMetrics(t *testing.T) {
	var docs []results.MetricInfo
	listJSON(t, "metrics", &docs)
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
		if _, err := results.ParseObjective("min:" + d.Name); err != nil {
			t.Errorf("listed metric %s is refused: %v", d.Name, err)
		}
	}
	if !slices.Equal(names, results.NumericColumns()) {
		t.Errorf("list metrics names %d columns, results.parquet has %d numeric ones", len(names), len(results.NumericColumns()))
	}
	if line := lineOf(t, "metrics", "p99_ttft_ms"); !strings.Contains(line, "[ms] 99th percentile of time to first token") {
		t.Errorf("p99_ttft_ms line %q", line)
	}
	if line := lineOf(t, "metrics", "usd_per_million_output_tokens"); !strings.Contains(line, "[USD per 1M output tokens]") {
		t.Errorf("usd_per_million_output_tokens line %q", line)
	}
}

// The fields listed are grid.SearchFields (whose agreement with the parser grid tests), with
// their domain kinds.
func TestListFields(t *testing.T) {
	var docs []grid.SearchField
	listJSON(t, "fields", &docs)
	if !slices.EqualFunc(docs, grid.SearchFields(), func(a, b grid.SearchField) bool {
		return a.Path == b.Path && a.Want == b.Want && slices.Equal(a.Domains, b.Domains)
	}) {
		t.Errorf("list fields --format json differs from grid.SearchFields")
	}
	if line := lineOf(t, "fields", "engine.hardware"); !strings.Contains(line, "choices  a string") {
		t.Errorf("engine.hardware line %q", line)
	}
	if line := lineOf(t, "fields", "traffic.load.concurrency"); !strings.Contains(line, "choices|range  an int > 0") {
		t.Errorf("traffic.load.concurrency line %q", line)
	}
}

// A missing or unknown registry is a usage error (exit 2) naming the valid ones.
func TestListUsage(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"list", "gpus"}, {"list", "models", "fields"}} {
		var out, errb strings.Builder
		code := run(context.Background(), args, ioStreams{Out: &out, Err: &errb})
		if code != exitConfigError || !strings.Contains(errb.String(), "models, hardware, backends, metrics, fields") || out.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
}

// Every GPU listed is one a sweep accepts for engine.hardware under hardware-aware timing (each
// takes a valid point of Llama-3.1-8B on one GPU), and a name the list lacks is refused.
func TestListHardwareIsWhatASweepAccepts(t *testing.T) {
	var docs []hardwareDoc
	listJSON(t, "hardware", &docs)
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
	}
	sets := []string{"engine.model=meta-llama/Llama-3.1-8B", "engine.workers.aggregated.parallelism.replicas=1",
		"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}",
		"engine.hardware={choices: [" + strings.Join(names, ", ") + "]}"}
	spec, err := grid.Load(seedConfig, sets, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if x.Valid != len(names) || len(x.EmptyValues) != 0 {
		t.Fatalf("%d of %d listed GPUs valid (empty values %v)", x.Valid, len(names), x.EmptyValues)
	}
	spec, err = grid.Load(seedConfig, append(sets[:4:4], "engine.hardware=h900_sxm"), nil, results.CheckMetric)
	if err == nil {
		_, err = spec.Expand()
	}
	if err == nil || !strings.Contains(err.Error(), `unknown hardware "h900_sxm"`) {
		t.Errorf("an unlisted GPU: %v", err)
	}
}

// The text form of `list models` ends with the spellings engine.model also takes, and its
// example is true: meta-llama/Meta-Llama-3.1-8B-Instruct (the seed guide's name) is the listed
// meta-llama/Llama-3.1-8B.
func TestListModelsNamesTheSpellings(t *testing.T) {
	if out := runOK(t, "list", "models"); !strings.HasSuffix(strings.TrimSpace(out), strings.TrimSpace(modelSpellings)) {
		t.Errorf("list models does not end with the spellings note:\n%s", out)
	}
	m, err := timing.LookupModel("meta-llama/Meta-Llama-3.1-8B-Instruct")
	if err != nil || m.ID != "meta-llama/Llama-3.1-8B" {
		t.Errorf("meta-llama/Meta-Llama-3.1-8B-Instruct resolves to %q (%v), want meta-llama/Llama-3.1-8B", m.ID, err)
	}
}
