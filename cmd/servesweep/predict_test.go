package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedConfig is the DynoSim seed's /tmp/dynosim-synthetic.yaml, as shipped in examples/.
const seedConfig = "../../examples/synthetic.yaml"

// moonTrace is the shared Mooncake conversation trace (not part of the repository).
const moonTrace = "../../../shared/data/traces/mooncake_conversation_trace.jsonl"

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, ioStreams{Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func readSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "prediction.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if s, ok := m["summary"].(map[string]any); ok {
		return s
	}
	return m
}

func needTrace(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(moonTrace); err != nil {
		t.Skipf("Mooncake trace not available at %s: %v", moonTrace, err)
	}
	p, _ := filepath.Abs(moonTrace)
	return p
}

// endToEnd skips a slow end-to-end test (trace replays, whole sweeps run several times, a child
// process) under the race detector, where it would take minutes: make test runs this package a
// second time without -race, and there it runs. The simulator (sim) and the sweep pool (sweep)
// keep their race coverage in their own tests, and the in-process command tests here still run
// under -race.
func endToEnd(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("end-to-end test: make test runs it without -race")
	}
}

func traceSets(path string) []string {
	return []string{
		"--set", "traffic.source={type: trace, format: mooncake, paths: [" + path + "], block_size: 512}",
		"--set", "traffic.load={type: trace_timestamps, speedup: 1.0}",
		"--set", "traffic.stop={max_virtual_time_seconds: 3600}",
	}
}

// The seed's first command: 100 requests of 128 output tokens complete.
func TestSeedSynthetic(t *testing.T) {
	dir := t.TempDir() + "/out"
	code, out, errs := runCLI(t, "predict", "--stack", "dynamo", "--config", seedConfig, "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, dir)
	if s["completed_requests"] != 100.0 || s["total_output_tokens"] != 12800.0 {
		t.Fatalf("completed %v, output tokens %v", s["completed_requests"], s["total_output_tokens"])
	}
	for _, want := range []string{"NVIDIA AIPerf | LLM Metrics", "┃ Time to First Token (ms)", "┃ Request Count (requests)", "100.00", "Saved full report to: " + dir + "/prediction.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// The seed's second command: three-turn sessions with shared prefixes reuse KV.
func TestSeedSessions(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "--config", seedConfig,
		"--set", "traffic.source={type: synthetic-session, new_input_tokens_per_turn: 1024, output_tokens_per_turn: 128, session: {turns: 3, shared_prefix_ratio: 0.5, prefix_groups: 8, inter_turn_delay_ms: 250}}",
		"--set", "traffic.stop={sessions: 50}", "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, dir)
	if s["completed_requests"] != 150.0 || s["prefix_cache_reused_ratio"].(float64) <= 0 {
		t.Fatalf("completed %v reuse %v", s["completed_requests"], s["prefix_cache_reused_ratio"])
	}
}

// The seed's trace replay and routing comparison on the Mooncake conversation trace: requests
// complete with prefix reuse, and with 4 replicas kv_router reuses more and has a lower mean TTFT
// than round_robin.
func TestSeedTraceAndRouting(t *testing.T) {
	endToEnd(t)
	trace := needTrace(t)
	summary := func(extra ...string) map[string]any {
		dir := t.TempDir()
		args := append([]string{"predict", "--stack", "dynamo", "--config", seedConfig, "--output-dir", dir, "--format", "json"}, traceSets(trace)...)
		code, _, errs := runCLI(t, append(args, extra...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		return readSummary(t, dir)
	}
	one := summary()
	if one["completed_requests"].(float64) == 0 || one["prefix_cache_reused_ratio"].(float64) <= 0 {
		t.Fatalf("trace replay: completed %v reuse %v", one["completed_requests"], one["prefix_cache_reused_ratio"])
	}
	rr := summary("--set", "engine.workers.aggregated.parallelism.replicas=4")
	kv := summary("--set", "router.policy=kv_router", "--set", "engine.workers.aggregated.parallelism.replicas=4")
	t.Logf("round_robin reuse %.4f ttft %.2f; kv_router reuse %.4f ttft %.2f",
		rr["prefix_cache_reused_ratio"], rr["mean_ttft_ms"], kv["prefix_cache_reused_ratio"], kv["mean_ttft_ms"])
	if kv["prefix_cache_reused_ratio"].(float64) <= rr["prefix_cache_reused_ratio"].(float64) {
		t.Error("kv_router does not reuse more than round_robin")
	}
	if kv["mean_ttft_ms"].(float64) >= rr["mean_ttft_ms"].(float64) {
		t.Error("kv_router mean TTFT not below round_robin")
	}
}

// The seed's disaggregated configuration file runs as written (trace path substituted).
func TestSeedDisaggregated(t *testing.T) {
	endToEnd(t)
	trace := needTrace(t)
	data, err := os.ReadFile("../../examples/disaggregated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "dynosim-disaggregated.yaml")
	if err := os.WriteFile(cfg, bytes.ReplaceAll(data, []byte("/tmp/toolagent_trace.jsonl"), []byte(trace)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "--config", cfg, "--output-dir", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, dir)
	if s["completed_requests"].(float64) == 0 || s["prefill_worker_seconds"].(float64) <= 0 || s["prefill_gpus_per_worker"] != 1.0 {
		t.Fatalf("summary %v", s)
	}
}

// --capture-per-request writes one sorted-key JSON line per terminal request; the engine stack
// writes the flat report; the same config gives byte-identical files apart from host-time keys.
func TestCaptureAndDeterminism(t *testing.T) {
	write := func() (pred, reqs []byte) {
		dir := t.TempDir()
		code, _, errs := runCLI(t, "predict", "-c", "testdata/engine-stack.yaml", "--output-dir", dir, "--capture-per-request", "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		pred, _ = os.ReadFile(filepath.Join(dir, "prediction.json"))
		reqs, _ = os.ReadFile(filepath.Join(dir, "requests.jsonl"))
		return pred, reqs
	}
	p1, r1 := write()
	p2, r2 := write()
	if !bytes.Equal(r1, r2) {
		t.Error("requests.jsonl differs between identical runs")
	}
	if !bytes.Equal(dropHostTime(p1), dropHostTime(p2)) {
		t.Error("prediction.json differs between identical runs (host-time keys aside)")
	}
	var flat map[string]any
	if err := json.Unmarshal(p1, &flat); err != nil {
		t.Fatal(err)
	}
	if _, ok := flat["summary"]; ok {
		t.Error("engine stack wrote the dynamo envelope")
	}
	if flat["completed_requests"] != 12.0 {
		t.Errorf("completed %v", flat["completed_requests"])
	}
	sc := bufio.NewScanner(bytes.NewReader(r1))
	lines := 0
	for sc.Scan() {
		lines++
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["terminal_status"] != "completed" || rec["output_length"] != 16.0 || rec["ttft_ms"] == nil {
			t.Fatalf("record %s", sc.Text())
		}
		if !strings.HasPrefix(sc.Text(), `{"admission_count":`) {
			t.Fatalf("keys not sorted: %s", sc.Text()[:40])
		}
	}
	if lines != 12 {
		t.Errorf("%d records, want 12", lines)
	}
}

// dropHostTime removes the lines of keys measured in host time.
func dropHostTime(b []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.Contains(line, []byte(`"wall_time_ms"`)) || bytes.Contains(line, []byte(`"processed_`)) {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}

func TestExitCodesAndOutputDir(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("engine: {mode: aggregated, model: m, hardware: h, workers: {aggregated: {}}}\ntraffic: {load: {type: concurrency, concurrency: 0}, stop: {requests: 1}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"schema error names file and path", []string{"predict", "-c", bad, "--output-dir", dir + "/o1"}, 2, bad + ": traffic.load.concurrency: must be > 0, got 0"},
		{"missing config", []string{"predict", "--output-dir", dir + "/o2"}, 2, "--config is required"},
		{"unknown stack", []string{"predict", "--stack", "mystack", "-c", seedConfig}, 2, "stack 'mystack' is unavailable; installed stacks: dynamo, engine"},
		{"engine stack rejects router", []string{"predict", "-c", seedConfig, "--output-dir", dir + "/o3"}, 2, "router: needs the dynamo stack's router adapter"},
		{"bad format", []string{"predict", "--format", "xml", "-c", seedConfig}, 2, "--format must be table or json"},
		{"bad flag", []string{"predict", "--nope"}, 2, "unknown flag"},
		{"bad set", []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--set", "engine.nothing=1", "--output-dir", dir + "/o4"}, 2, "engine.nothing"},
		{"missing trace", []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--set", "traffic.source={type: trace, paths: [/nonexistent.jsonl]}",
			"--set", "traffic.load={type: trace_timestamps}", "--set", "traffic.stop={max_virtual_time_seconds: 1}", "--output-dir", dir + "/o5"}, 2, "/nonexistent.jsonl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.msg) {
				t.Fatalf("exit %d (want %d), stderr %q lacks %q", code, c.code, errs, c.msg)
			}
		})
	}
	for _, o := range []string{"o1", "o2", "o3", "o4", "o5"} {
		if _, err := os.Stat(filepath.Join(dir, o)); err == nil {
			t.Errorf("a failed run created its output directory %s", o)
		}
	}

	// A non-empty output directory needs --overwrite, which replaces only known files.
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(out, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o644)
	args := []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", out}
	if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, "is not empty") {
		t.Fatalf("non-empty dir: exit %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, append(args, "--overwrite")...); code != 0 {
		t.Fatalf("--overwrite: exit %d %s", code, errs)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Error("--overwrite removed a file it does not own")
	}
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, nil, 0o644)
	if code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", file); code != 2 || !strings.Contains(errs, "not a directory") {
		t.Fatalf("file as output dir: exit %d %s", code, errs)
	}
}

func TestNumberFormat(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", 1390: "1,390.00", 1234567.891: "1,234,567.89", -1234.5: "-1,234.50", 999.999: "1,000.00"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	if code, _, errs := runCLI(t, "predcit"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// A failed run leaves an earlier run's results in place, even with --overwrite.
func TestFailedRunKeepsOldResults(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--format", "json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "prediction.json"))
	code, _, _ := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--overwrite",
		"--set", "traffic.source={type: trace, paths: [/nonexistent.jsonl]}", "--set", "traffic.load={type: trace_timestamps}",
		"--set", "traffic.stop={max_virtual_time_seconds: 1}")
	after, _ := os.ReadFile(filepath.Join(dir, "prediction.json"))
	if code != 2 || len(before) == 0 || !bytes.Equal(before, after) {
		t.Fatalf("exit %d; prediction.json before %d bytes, after %d bytes", code, len(before), len(after))
	}
}
