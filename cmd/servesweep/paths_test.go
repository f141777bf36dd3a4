package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shippedTrace is the trace the examples replay (examples/chat-trace.jsonl: 320 requests).
const shippedTrace = "../../examples/chat-trace.jsonl"

// pathsConfig is a prediction config over a trace at a path relative to the config's folder.
const pathsConfig = `traffic:
  source: {type: trace, format: mooncake, paths: [data/trace.jsonl], block_size: 512}
  load: {type: trace_timestamps, speedup: 1.0}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  context_length: 131072
  workers:
    aggregated:
      parallelism: {replicas: REPLICAS}
      kv_cache: {capacity: {type: fixed, blocks: 32768}}
      timing: {type: polynomial}
`

// TestRelativeTracePaths runs predict and sweep from a working directory other than the config's
// folder: a relative trace path in a config or a spec names the file beside it, one --set gives
// names a file of the working directory, and a recommendation runs from a third directory with
// the trace the sweep replayed. The two traces differ in length (320 and 10 requests), so each
// run's offered_requests says which file it read.
func TestRelativeTracePaths(t *testing.T) {
	trace, err := os.ReadFile(shippedTrace)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cfgDir, work := filepath.Join(root, "cfg"), filepath.Join(root, "work")
	for _, d := range []string{filepath.Join(cfgDir, "data"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cfgDir, "data", "trace.jsonl"), trace)
	lines := bytes.SplitAfter(trace, []byte("\n"))
	write(filepath.Join(work, "local.jsonl"), bytes.Join(lines[:10], nil))
	write(filepath.Join(cfgDir, "p.yaml"), []byte(strings.Replace(pathsConfig, "REPLICAS", "2", 1)))
	write(filepath.Join(cfgDir, "s.yaml"), []byte(strings.Replace(pathsConfig, "REPLICAS", "{choices: [1, 2]}", 1)+
		"optimization: {target: pareto, objectives: [{metric: output_throughput_tok_s, direction: maximize}, {metric: p99_ttft_ms, direction: minimize}]}\n"))
	t.Chdir(work)

	offered := func(name string, args ...string) float64 {
		t.Helper()
		out := filepath.Join(root, "predict-"+name)
		code, _, errs := runCLI(t, append([]string{"predict", "--stack", "dynamo", "--output-dir", out}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		n, _ := readSummary(t, out)["offered_requests"].(float64)
		return n
	}
	if n := offered("file", "-c", "../cfg/p.yaml"); n != 320 {
		t.Errorf("config's relative path: %v requests offered, want the 320 of cfg/data/trace.jsonl", n)
	}
	if n := offered("set", "-c", "../cfg/p.yaml", "--set", "traffic.source.paths=[local.jsonl]"); n != 10 {
		t.Errorf("--set relative path: %v requests offered, want the 10 of work/local.jsonl", n)
	}
	// A --set path is not looked for beside the config.
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", "../cfg/p.yaml", "--output-dir", filepath.Join(root, "x"),
		"--set", "traffic.source.paths=[data/trace.jsonl]")
	if code != 2 || !strings.Contains(errs, "data/trace.jsonl") || !strings.Contains(errs, "working directory, "+work) {
		t.Errorf("--set path beside the config only: exit %d, stderr %q", code, errs)
	}

	for _, c := range []struct {
		name string
		sets []string
		want string
		n    float64
	}{
		{"spec", nil, filepath.Join(cfgDir, "data", "trace.jsonl"), 320},
		{"set", []string{"--set", "traffic.source.paths=[local.jsonl]"}, filepath.Join(work, "local.jsonl"), 10},
	} {
		out := "sweep-" + c.name
		args := append([]string{"sweep", "-c", "../cfg/s.yaml", "--output-dir", out, "-q"}, c.sets...)
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("sweep %s: exit %d: %s", c.name, code, errs)
		}
		rec := filepath.Join(work, out, "recommendations", "0001.yaml")
		data, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.want) {
			t.Errorf("sweep %s: %s does not name %s:\n%s", c.name, rec, c.want, data)
		}
		t.Chdir(root)
		if n := offered("rec-"+c.name, "-c", rec); n != c.n {
			t.Errorf("sweep %s: the recommendation offered %v requests from another directory, want %v", c.name, n, c.n)
		}
		t.Chdir(work)
	}
}
