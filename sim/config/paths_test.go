package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadFileResolvesRelativePaths loads a config from a subfolder, named relative to the
// working directory, and checks each way a trace path can be given: a relative path in the file
// names the file beside it (absolute, joined to the config's folder); an absolute path and a
// ${NAME} reference are kept; a path --set gives stays as typed, relative to the working
// directory; Decode without WithDir keeps the file's path as written.
func TestLoadFileResolvesRelativePaths(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	if err := os.MkdirAll(filepath.Join("configs", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join("configs", "deep"))
	if err != nil {
		t.Fatal(err)
	}
	withPath := func(p string) string {
		return strings.Replace(seedDisaggregated, "paths: [/tmp/toolagent_trace.jsonl]", "paths: ["+p+"]", 1)
	}
	cases := []struct {
		name, path string
		sets       []string
		want       string
	}{
		{"beside the file", "trace.jsonl", nil, filepath.Join(abs, "trace.jsonl")},
		{"above the file", "../../traces/t.jsonl", nil, filepath.Join(work, "traces", "t.jsonl")},
		{"absolute", "/data/t.jsonl", nil, "/data/t.jsonl"},
		{"environment reference", `"${TRACE}"`, nil, "${TRACE}"},
		{"--set", "trace.jsonl", []string{"traffic.source.paths=[here/t.jsonl]"}, "here/t.jsonl"},
		{"--set of the source", "trace.jsonl",
			[]string{"traffic.source={type: trace, format: mooncake, paths: [t.jsonl], block_size: 512}"}, "t.jsonl"},
	}
	for _, c := range cases {
		file := filepath.Join("configs", "deep", "c.yaml")
		if err := os.WriteFile(file, []byte(withPath(c.path)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadFile(file, c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := cfg.Traffic.Source.Paths; len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: paths %q, want [%q]", c.name, got, c.want)
		}
	}
	cfg, err := Decode([]byte(withPath("trace.jsonl")), "configs/deep/c.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Traffic.Source.Paths[0]; got != "trace.jsonl" {
		t.Errorf("Decode without WithDir: path %q, want trace.jsonl", got)
	}
}

// TestResolvePathsThroughAnAlias rewrites a path list reached through an alias once, and leaves
// values that are not strings for validation to report.
func TestResolvePathsThroughAnAlias(t *testing.T) {
	root, errs := parseDocument([]byte("x: &p [a.jsonl, 7, '', /abs.jsonl]\ntraffic: {source: {paths: *p}}\n"), "f.yaml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := ResolvePaths(root, "f.yaml", "/base"); err != nil {
		t.Fatal(err)
	}
	if err := ResolvePaths(root, "f.yaml", "/other"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range resolve(MappingValue(MappingValue(MappingValue(root, "traffic"), "source"), "paths")).Content {
		got = append(got, n.Value)
	}
	want := []string{filepath.Join("/base", "a.jsonl"), "7", "", "/abs.jsonl"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("paths %q, want %q", got, want)
	}
}

// TestLoadFileResolvesModelDir loads a config from a subfolder and checks each way engine.model
// can name a model directory: a relative path in the file (./m, a bare name of a directory
// beside it, ../..) names the directory relative to the file's folder and is made absolute; a
// catalog id and an absolute path are kept; a --set path stays as typed, relative to the working
// directory; a relative path naming no directory beside the file is an error naming the
// absolute path it was read as.
func TestLoadFileResolvesModelDir(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	deep := filepath.Join(work, "configs", "deep")
	for _, d := range []string{filepath.Join(deep, "m"), filepath.Join(work, "models", "x"), filepath.Join(work, "here")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, model string
		sets        []string
		want        string
	}{
		{"./ beside the file", "./m", nil, filepath.Join(deep, "m")},
		{"a directory beside the file", "m", nil, filepath.Join(deep, "m")},
		{"above the file", "../../models/x", nil, filepath.Join(work, "models", "x")},
		{"absolute", filepath.Join(work, "here"), nil, filepath.Join(work, "here")},
		{"catalog id", "meta-llama/Llama-3.1-8B", nil, "meta-llama/Llama-3.1-8B"},
		{"--set", "./m", []string{"engine.model=./here"}, "./here"},
	}
	file := filepath.Join("configs", "deep", "c.yaml")
	for _, c := range cases {
		text := strings.Replace(seedSynthetic, "model: meta-llama/Meta-Llama-3.1-8B-Instruct", "model: "+c.model, 1)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadFile(file, c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.Engine.Model != c.want {
			t.Errorf("%s: engine.model %q, want %q", c.name, cfg.Engine.Model, c.want)
		}
	}
	text := strings.Replace(seedSynthetic, "model: meta-llama/Meta-Llama-3.1-8B-Instruct", "model: ./here", 1)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := file + `: engine.model: "` + filepath.Join(deep, "here") + `" is a path, but no such directory exists`
	if _, err := LoadFile(file, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("./here beside the file: %v; want %q", err, want)
	}
}
