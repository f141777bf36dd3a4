package grid

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// pathSpec is a small sweep spec over a trace at a relative path.
const pathSpec = `traffic:
  source: {type: trace, format: mooncake, paths: [PATH], block_size: 512}
  load: {type: trace_timestamps, speedup: {choices: [1, 2]}}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  workers:
    aggregated:
      parallelism: {replicas: 1}
      timing: {type: polynomial}
optimizer: {algorithm: grid}
`

// TestLoadResolvesRelativePaths checks that a spec's relative trace path names the file beside
// the spec in every point's config and YAML, whatever the working directory; that a --set path
// and an environment variable's relative value stay relative to the working directory; and that
// Parse, which reads no file, keeps the path as written.
func TestLoadResolvesRelativePaths(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	if err := os.Mkdir("specs", 0o755); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(work, "specs", "trace.jsonl")
	env := func(name string) (string, bool) { return "env/t.jsonl", name == "TRACE" }
	cases := []struct {
		name, path string
		sets       []string
		want       string
	}{
		{"beside the spec", "trace.jsonl", nil, beside},
		{"--set", "trace.jsonl", []string{"traffic.source.paths=[cwd.jsonl]"}, "cwd.jsonl"},
		{"environment", `"${TRACE}"`, nil, "env/t.jsonl"},
	}
	for _, c := range cases {
		file := filepath.Join("specs", "s.yaml")
		if err := os.WriteFile(file, []byte(strings.Replace(pathSpec, "PATH", c.path, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(file, c.sets, env, results.CheckMetric)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		x, err := s.Expand()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(x.Points) != 2 {
			t.Fatalf("%s: %d points, want 2", c.name, len(x.Points))
		}
		for _, p := range x.Points {
			if got := p.Config.Traffic.Source.Paths; len(got) != 1 || got[0] != c.want {
				t.Errorf("%s: point %s paths %q, want [%q]", c.name, p.ID, got, c.want)
			}
			if !strings.Contains(string(p.YAML), c.want) {
				t.Errorf("%s: point %s YAML does not name %s:\n%s", c.name, p.ID, c.want, p.YAML)
			}
		}
	}
	s, err := Parse([]byte(strings.Replace(pathSpec, "PATH", "trace.jsonl", 1)), "specs/s.yaml", nil, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Points[0].Config.Traffic.Source.Paths[0]; got != "trace.jsonl" {
		t.Errorf("Parse: path %q, want trace.jsonl", got)
	}
}

// A spec's engine.model that names a model directory by a relative path, fixed or among a
// domain's choices, names the directory beside the spec in every point's config and YAML,
// whatever the working directory; a catalog id among the choices is kept.
func TestLoadResolvesModelDir(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	dir := filepath.Join(work, "specs", "llama8b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	llama := `{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072,
		"num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(llama), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"./llama8b", "{choices: [./llama8b, meta-llama/Llama-3.1-8B]}"} {
		file := filepath.Join("specs", "s.yaml")
		text := strings.Replace(strings.Replace(pathSpec, "PATH", "trace.jsonl", 1), "model: meta-llama/Meta-Llama-3.1-8B-Instruct", "model: "+model, 1)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(file, nil, nil, results.CheckMetric)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		x, err := s.Expand()
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		var got []string
		for _, p := range x.Points {
			got = append(got, p.Config.Engine.Model)
			if p.Config.Engine.Model == dir && !strings.Contains(string(p.YAML), "model: "+dir) {
				t.Errorf("%s: point %s YAML does not name %s:\n%s", model, p.ID, dir, p.YAML)
			}
		}
		if !slices.Contains(got, dir) || slices.Contains(got, "./llama8b") {
			t.Errorf("%s: models %q, want %s", model, got, dir)
		}
	}
}
