package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/timing"
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
// process) under the race detector, where it would take minutes: make test runs this package
// without -race only (the Makefile's NORACE), and there it runs. The simulator (sim) and the sweep pool (sweep)
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

// The seed's disaggregated configuration file runs as shipped, on the shipped trace beside it: its
// 320 requests are offered, the 12 prompts longer than its 8,192-token context are rejected.
func TestSeedDisaggregated(t *testing.T) {
	endToEnd(t)
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "--config", "../../examples/disaggregated.yaml", "--output-dir", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, dir)
	if s["offered_requests"] != 320.0 || s["rejected_requests"] != 12.0 || s["completed_requests"] != 308.0 ||
		s["prefill_worker_seconds"].(float64) <= 0 || s["prefill_gpus_per_worker"] != 1.0 {
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
		{"schema error names file and path", []string{"predict", "-c", bad, "--output-dir", dir + "/o1"}, 2, bad + ": traffic.load.concurrency: must be an int > 0, got 0"},
		{"missing config", []string{"predict", "--output-dir", dir + "/o2"}, 2, "--config is required"},
		{"unknown stack", []string{"predict", "--stack", "mystack", "-c", seedConfig}, 2, "stack 'mystack' is unavailable; installed stacks: dynamo, engine"},
		{"engine stack rejects router", []string{"predict", "-c", seedConfig, "--output-dir", dir + "/o3"}, 2, "router: needs the dynamo stack's router adapter"},
		// What else the deployment gets wrong is named with it, not after the section is gone.
		{"engine stack rejects router, and an unknown GPU", []string{"predict", "-c", seedConfig, "--output-dir", dir + "/o3b",
			"--set", "engine.hardware=h300", "--set", "engine.workers.aggregated.timing={type: default}"}, 2,
			"planner: needs the dynamo stack's planner adapter; run with --stack dynamo or remove the section\n" + seedConfig +
				" (--set engine.hardware=h300): engine.hardware: engine.workers.aggregated.timing (default) derives values from the GPU: unknown hardware \"h300\""},
		{"bad format", []string{"predict", "--format", "xml", "-c", seedConfig}, 2, "--format must be table or json"},
		{"bad flag", []string{"predict", "--nope"}, 2, "unknown flag: --nope (servesweep predict --help lists its flags)"},
		{"misspelt flag", []string{"predict", "--capture-per-reqest"}, 2,
			"unknown flag: --capture-per-reqest; did you mean --capture-per-request? (servesweep predict --help lists its flags)"},
		{"flag prefix", []string{"predict", "--captur"}, 2, "did you mean --capture-per-request?"},
		{"inherited flag misspelt", []string{"predict", "--cpuprofil", "x"}, 2, "did you mean --cpuprofile?"},
		{"bad bool flag", []string{"predict", "--capture-per-request=maybe"}, 2, `--capture-per-request takes true or false (or no value, which means true), got "maybe"`},
		{"bad set", []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--set", "engine.nothing=1", "--output-dir", dir + "/o4"}, 2, "engine.nothing"},
		{"missing trace", []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--set", "traffic.source={type: trace, paths: [/nonexistent.jsonl]}",
			"--set", "traffic.load={type: trace_timestamps}", "--set", "traffic.stop={max_virtual_time_seconds: 1}", "--output-dir", dir + "/o5"}, 2, "/nonexistent.jsonl"},
		{"search domain", []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--set", "traffic.load.concurrency={choices: [1, 2]}", "--output-dir", dir + "/o6"},
			2, "traffic.load.concurrency: search domains ({choices: ...}, {range: ...}) belong to servesweep sweep; predict, export and validate --aiperf need a concrete value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.msg) {
				t.Fatalf("exit %d (want %d), stderr %q lacks %q", code, c.code, errs, c.msg)
			}
		})
	}
	// A null section takes its default, as if absent: the engine stack runs the seed config
	// with its router and planner set to null.
	if code, _, errs := runCLI(t, "predict", "-c", seedConfig, "--set", "router=null", "--set", "planner=null", "--output-dir", dir+"/o7"); code != 0 {
		t.Errorf("engine stack with null router and planner: exit %d: %s", code, errs)
	}
	for _, o := range []string{"o1", "o2", "o3", "o4", "o5", "o6"} {
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

// TestPredictNotesResolvedAliases checks that predict says on stderr, once per alias, which
// catalog id a hardware or model alias resolved to, and which model a name under an organization
// the catalog does not know for it was read as, and which format wins when engine.precision.weights
// contradicts the one the model's name gives, and says nothing for catalog ids, the spellings the
// catalog documents and agreeing formats.
func TestPredictNotesResolvedAliases(t *testing.T) {
	// A pool the GPU holds, so that the seed's oversized one (TestPredictWarnsOfAPoolNoGPUHolds)
	// adds no line.
	small := []string{"--set", "traffic.stop.requests=32", "--set", "engine.workers.aggregated.kv_cache.capacity.blocks=4096"}
	for _, c := range []struct {
		name string
		sets []string
		want []string
	}{
		{"hardware alias", []string{"--set", "engine.hardware=h200"},
			[]string{`servesweep: hardware "h200" resolved to "h200_sxm"`}},
		{"model alias", []string{"--set", "engine.model=mistralai/Mistral-7B"},
			[]string{`servesweep: model "mistralai/Mistral-7B" resolved to "mistralai/Mistral-7B-Instruct-v0.3"`}},
		{"unknown organization", []string{"--set", "engine.model=wrongorg/Llama-3.1-8B"},
			[]string{"note: " + seedConfig + ` (--set engine.model=wrongorg/Llama-3.1-8B): engine.model: "wrongorg/Llama-3.1-8B" is read as meta-llama/Llama-3.1-8B, ` +
				"but the catalog knows that model under meta-llama (a quantized checkpoint whose name ends in a weight-format suffix " +
				"such as -FP8 also under nvidia, RedHatAI, neuralmagic), not wrongorg; write meta-llama/Llama-3.1-8B or Llama-3.1-8B " +
				"(servesweep list models prints the spellings), or give a local directory holding the checkpoint's config.json if it is another model"}},
		{"spellings the catalog documents", []string{"--set", "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8"}, nil},
		{"no organization", []string{"--set", "engine.model=Llama-3.1-8B"}, nil},
		{"weights against the name's format", []string{"--set", "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8", "--set", "engine.precision.weights=bf16"},
			[]string{"note: " + seedConfig + ` (--set engine.precision.weights=bf16): engine.precision.weights: bf16 contradicts engine.model "nvidia/Llama-3.1-8B-Instruct-FP8", ` +
				"whose name means fp8 weights; engine.precision.weights wins: the run prices bf16 weights (and the name's fp8 KV cache " +
				"where engine.precision.kv_cache is auto)"}},
		{"weights as the name's format", []string{"--set", "engine.model=nvidia/Llama-3.1-8B-Instruct-FP8", "--set", "engine.precision.weights=fp8"}, nil},
		{"catalog ids", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"predict", "--stack", "dynamo", "--config", seedConfig, "--output-dir", t.TempDir() + "/out"}, small...)
			code, _, errs := runCLI(t, append(args, c.sets...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			errs = withoutLockstepNote(t, errs)
			var lines []string
			if errs != "" {
				lines = strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			}
			if len(lines) != len(c.want) || (len(lines) == 1 && lines[0] != c.want[0]) {
				t.Errorf("stderr %q, want the lines %q", errs, c.want)
			}
		})
	}
}

// TestAliasNotesOncePerAlias checks that an alias named by engine.hardware and by both
// disaggregated roles is noted once, and a second alias separately.
func TestAliasNotesOncePerAlias(t *testing.T) {
	cfg := &config.Config{Engine: config.Engine{Model: "Qwen/Qwen3-8B", Hardware: "h200", Workers: config.Workers{
		Prefill: &config.WorkerRole{Hardware: "h200"}, Decode: &config.WorkerRole{Hardware: "b200"}}}}
	got := aliasNotes(cfg)
	want := []string{`servesweep: hardware "h200" resolved to "h200_sxm"`, `servesweep: hardware "b200" resolved to "b200_sxm"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
}

// TestAliasNotesWarnUnknownNames: under timings that do not read the GPU and the model (fixed,
// polynomial), a name the catalogs do not know is a warning naming the list command; a
// hardware-aware role (which refuses such a name itself) silences it.
func TestAliasNotesWarnUnknownNames(t *testing.T) {
	fixed := &config.WorkerRole{Timing: config.Timing{Type: config.TimingFixed}}
	cfg := &config.Config{Engine: config.Engine{Model: "llama-typo", Hardware: "h20", ContextLength: 4096, Workers: config.Workers{Aggregated: fixed}}}
	got := aliasNotes(cfg)
	if len(got) != 2 || !strings.HasPrefix(got[0], `warning: engine.hardware: hardware "h20" is not a GPU servesweep knows (servesweep list hardware)`) ||
		!strings.HasPrefix(got[1], `warning: engine.model: model "llama-typo" is not a model servesweep knows (servesweep list models)`) {
		t.Errorf("notes %q", got)
	}
	// context_length "max" (0) or a default KV capacity reads the model, which the run then
	// refuses: no warning calls it a label.
	cfg.Engine.ContextLength = 0
	if got := aliasNotes(cfg); len(got) != 1 || strings.Contains(got[0], "llama-typo") {
		t.Errorf("context_length max: notes %q, want the hardware's only", got)
	}
	cfg.Engine.ContextLength = 4096
	fixed.KVCache.Capacity.Type = config.CapacityDefault
	if got := aliasNotes(cfg); len(got) != 1 || strings.Contains(got[0], "llama-typo") {
		t.Errorf("default KV capacity: notes %q, want the hardware's only", got)
	}
	fixed.KVCache.Capacity.Type = ""
	cfg.Engine.Workers.Aggregated = &config.WorkerRole{Timing: config.Timing{Type: config.TimingDefault}}
	if got := aliasNotes(cfg); len(got) != 0 {
		t.Errorf("hardware-aware timing: notes %q, want none", got)
	}
}

// A Mooncake trace whose second timestamp is in epoch nanoseconds is a trace error (exit 2)
// naming line 2; the same two requests with epoch-ms timestamps replay from 0 with their real
// latencies. Fixed timing, prefill 10 ms and decode 5 ms, two workers (round robin: one request
// each): a request's first pass (prefill + decode) takes 15 ms, its second (decode) 5 ms, so
// TTFT 15, E2E 20 and ITL 5 for both; the second arrives at 15 and ends at 35.
func TestPredictTraceTimestampUnits(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, ts ...string) string {
		var b strings.Builder
		for i, x := range ts {
			b.WriteString(`{"output_length": 2, "hash_ids": [` + string(rune('1'+i)) + `], "timestamp": ` + x + "}\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	args := func(trace, out string) []string {
		return []string{"predict", "--stack", "dynamo", "-c", seedConfig,
			"--set", "traffic.source={type: trace, format: mooncake, paths: [" + trace + "], block_size: 16}",
			"--set", "traffic.load={type: trace_timestamps, speedup: 1.0}",
			"--set", "traffic.stop={max_virtual_time_seconds: 3600}",
			"--set", "engine.workers.aggregated.timing={type: fixed, prefill_ms: 10, decode_ms: 5}",
			"--output-dir", filepath.Join(dir, out)}
	}

	bad := write("ns.jsonl", "0", "1.733e18")
	code, _, errs := runCLI(t, args(bad, "o1")...)
	want := bad + ":2: timestamp: is 1733000000000000000 ms, 1733000000000000000 ms after the earliest timestamp (0 ms, line 1), " +
		"but a trace may span at most 2592000000 ms (30 days): the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"
	if code != 2 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, errs, want)
	}

	good := write("ms.jsonl", "1733000000000", "1733000000015")
	if code, _, errs := runCLI(t, args(good, "o2")...); code != 0 {
		t.Fatalf("epoch ms: exit %d: %s", code, errs)
	}
	s := readSummary(t, filepath.Join(dir, "o2"))
	for k, v := range map[string]float64{"completed_requests": 2, "mean_ttft_ms": 15, "max_ttft_ms": 15, "mean_e2e_latency_ms": 20,
		"mean_itl_ms": 5, "duration_ms": 35} {
		if s[k] != v {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
}

// tableRow returns the cells after the label of the console-table row whose label is label.
func tableRow(t *testing.T, table, label string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "┃"), "┃")
		if len(cells) == 8 && strings.TrimSpace(cells[0]) == label {
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells[1:]
		}
	}
	t.Fatalf("no table row %q in:\n%s", label, table)
	return nil
}

// With fixed timing of 0 ms every pass takes 0 ms and the run lasts 0 ms: prediction.json keeps
// the reference's rates over the 1e-9 s floor (100 requests × 128 tokens = 12,800 tokens / 1e-9 s
// = 1.28e13 tokens/s, 100 / 1e-9 s = 1e11 requests/s), while predict warns on stderr and the table
// shows every throughput row as N/A; the request count and the latencies (0 ms) stay.
func TestPredictZeroDurationThroughputs(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig,
		"--set", "engine.workers.aggregated.timing={type: fixed, prefill_ms: 0, decode_ms: 0}", "--output-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const warn = "warning: the simulated duration is 0 ms (every pass took 0 ms); throughputs are not meaningful and are shown as N/A " +
		"(prediction.json keeps the reference's values, computed over the floor)\n"
	if errs = withoutLockstepNote(t, errs); errs != warn {
		t.Errorf("stderr %q, want %q", errs, warn)
	}
	na := []string{"N/A", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"}
	for _, label := range []string{"Output Token Throughput Per User (tokens/sec/user)", "Output Token Throughput (tokens/sec)",
		"Request Throughput (requests/sec)"} {
		if got := tableRow(t, out, label); !slices.Equal(got, na) {
			t.Errorf("%s: %q, want all N/A", label, got)
		}
	}
	if got := tableRow(t, out, "Request Count (requests)"); got[0] != "100.00" {
		t.Errorf("request count %q, want 100.00", got[0])
	}
	if got := tableRow(t, out, "Time to First Token (ms)"); got[0] != "0.00" {
		t.Errorf("mean TTFT %q, want 0.00", got[0])
	}
	s := readSummary(t, dir)
	rel := func(got any, want float64) bool { g, ok := got.(float64); return ok && math.Abs(g-want) <= 1e-12*want }
	if s["duration_ms"] != 0.0 || !rel(s["output_throughput_tok_s"], 1.28e13) || !rel(s["request_throughput_rps"], 1e11) {
		t.Errorf("prediction.json: duration %v, output %v tok/s, %v rps; want 0, 1.28e13, 1e11",
			s["duration_ms"], s["output_throughput_tok_s"], s["request_throughput_rps"])
	}

	// A run of real duration prints no warning and numbers in the table.
	code, out, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--overwrite")
	if code != 0 || withoutLockstepNote(t, errs) != "" || tableRow(t, out, "Request Throughput (requests/sec)")[0] == "N/A" {
		t.Errorf("normal run: exit %d, stderr %q", code, errs)
	}
}

// A run stopped with requests still in flight warns on stderr with the counts: here every
// request of a 3-request trace is still in the 5 s front end when the 2 s stop comes.
func TestPredictWarnsAboutUnfinishedRequests(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	row := `{"timestamp": 0, "input_length": 64, "output_length": 4, "hash_ids": [1]}` + "\n"
	if err := os.WriteFile(trace, []byte(row+row+row), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", filepath.Join(dir, "out"),
		"--set", "engine.frontend.overhead_ms=5000",
		"--set", "traffic.source={type: trace, format: mooncake, block_size: 64, paths: ["+trace+"]}",
		"--set", "traffic.load={type: trace_timestamps}", "--set", "traffic.stop={max_virtual_time_seconds: 2}")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const want = "warning: 3 of 3 requests were unfinished when the run stopped at traffic.stop.max_virtual_time_seconds " +
		"and are excluded from every latency (0 completed); raise the stop or lower the load"
	if !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want it to contain %q", errs, want)
	}
	if s := readSummary(t, filepath.Join(dir, "out")); s["unfinished_requests"] != 3.0 || s["completed_requests"] != 0.0 {
		t.Errorf("prediction.json: unfinished %v, completed %v; want 3, 0", s["unfinished_requests"], s["completed_requests"])
	}
	// Under an SLA the warning says whether they were within its bounds at the stop, 2 s after
	// they arrived: a TTFT bound of 5 s still holds, and a sweep would leave them out of its
	// attainment; one of 1 s is already broken.
	for _, c := range []struct{ sla, want string }{
		{"{ttft_ms: 5000}", "(0 completed); every one was still within each SLA bound then (a sweep's SLA attainment leaves " +
			"such requests out: censored_requests); raise the stop to measure them"},
		{"{ttft_ms: 1000}", "(0 completed); 3 already past an SLA bound then (a sweep counts them as misses, and leaves out the 0 still " +
			"within each bound); raise the stop or lower the load"},
	} {
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", filepath.Join(dir, "sla"), "--overwrite",
			"--set", "engine.frontend.overhead_ms=5000", "--set", "evaluation.sla="+c.sla,
			"--set", "traffic.source={type: trace, format: mooncake, block_size: 64, paths: ["+trace+"]}",
			"--set", "traffic.load={type: trace_timestamps}", "--set", "traffic.stop={max_virtual_time_seconds: 2}")
		if code != 0 || !strings.Contains(errs, c.want) {
			t.Errorf("sla %s: exit %d, stderr %q, want it to contain %q", c.sla, code, errs, c.want)
		}
	}
}

// The seed's synthetic command runs on every backend's scheduler style (`--set engine.backend`).
func TestSeedSyntheticOnEveryBackend(t *testing.T) {
	for _, backend := range []string{"sglang", "trtllm"} {
		dir := t.TempDir()
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "--config", seedConfig, "--set", "engine.backend="+backend,
			"--output-dir", dir, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, errs)
		}
		s := readSummary(t, dir)
		if s["completed_requests"] != 100.0 || s["total_output_tokens"] != 12800.0 {
			t.Errorf("%s: completed %v, output tokens %v", backend, s["completed_requests"], s["total_output_tokens"])
		}
	}
}

// A run whose requests stop short of their output warns with the counts: the seed's 100 prompts
// of 2048 tokens under context_length 2049 emit 1 of 128 tokens each.
func TestPredictWarnsAboutTruncatedRequests(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--set", "engine.context_length=2049")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const want = "warning: 100 of 100 completed requests stopped short of their requested output (12700 output tokens not generated)"
	if !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want it to contain %q", errs, want)
	}
	if s := readSummary(t, dir); s["truncated_requests"] != 100.0 || s["truncated_output_tokens"] != 12700.0 {
		t.Errorf("prediction.json: truncated %v by %v tokens", s["truncated_requests"], s["truncated_output_tokens"])
	}
}

// An enabled planner with both scalings off scales nothing: predict says so (the run is the
// fixed deployment's), and says nothing when one scaling is on.
func TestPredictWarnsAboutAnInertPlanner(t *testing.T) {
	const want = "planner.policy is enabled with enable_load_scaling and enable_throughput_scaling both false"
	for _, c := range []struct {
		planner string
		warn    bool
	}{
		{"{policy: enabled, enable_load_scaling: false, enable_throughput_scaling: false}", true},
		{"{policy: enabled, enable_load_scaling: true, enable_throughput_scaling: false}", false},
	} {
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
			"--set", "planner="+c.planner, "--set", "evaluation={sla: {ttft_ms: 2000, itl_ms: 50}}")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.planner, code, errs)
		}
		if strings.Contains(errs, want) != c.warn {
			t.Errorf("%s: stderr %q; warning expected %v", c.planner, errs, c.warn)
		}
	}
}

// --systems-dir points default timing at a performance database: the seed's synthetic config
// with default timing is then priced op_level, and prediction.json says so; a path that is not a
// directory is exit 2.
func TestPredictSystemsDir(t *testing.T) {
	const systems = "../../../shared/data/aic-systems"
	if _, err := os.Stat(filepath.Join(systems, "h200_sxm.yaml")); err != nil {
		t.Skipf("performance database not available at %s: %v", systems, err)
	}
	t.Setenv(envSystemsDir, "") // the flag alone gives the database
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir,
		"--set", "engine.workers.aggregated.timing={type: default, forward_model: op_level}", "--systems-dir", systems)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if s := readSummary(t, dir); s["timing_provider"] != "op_level vllm gemm 0.24.0, attention 0.24.0 on h200_sxm" || s["completed_requests"] != 100.0 {
		t.Errorf("timing_provider %v, completed %v", s["timing_provider"], s["completed_requests"])
	}
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--systems-dir", "/no/such/dir")
	if code != 2 || !strings.Contains(errs, "--systems-dir: performance database /no/such/dir") {
		t.Errorf("missing folder: exit %d, stderr %q", code, errs)
	}
	// forward_model auto may be written out: it is the roofline (timing.AutoForwardModel) with a
	// database configured too, without a note.
	dir = t.TempDir()
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--systems-dir", systems,
		"--set", "engine.workers.aggregated.timing={type: default, forward_model: auto}")
	if code != 0 || strings.Contains(errs, "forward_model auto") {
		t.Errorf("auto: exit %d, stderr %q", code, errs)
	}
	if s := readSummary(t, dir); s["timing_provider"] != "roofline" {
		t.Errorf("auto: timing_provider %v", s["timing_provider"])
	}
	// A backend_version without op_level timing has no effect, and predict says so.
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "engine.backend_version=0.24.0")
	if code != 0 || !strings.Contains(errs, "engine.backend_version 0.24.0 selects performance-database tables only; timing polynomial does not use them") {
		t.Errorf("backend_version without a database: exit %d, stderr %q", code, errs)
	}
	// Not a systems folder, an empty flag, a bad environment value, a broken table: exit 2.
	empty := t.TempDir()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "h200_sxm.yaml"), []byte("data_dir: data/h200_sxm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gemm := filepath.Join(broken, "data", "h200_sxm", "gemm", "vllm", "0.24.0")
	for _, d := range []string{gemm, filepath.Join(broken, "data", "h200_sxm", "attention", "vllm", "0.24.0")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(gemm, "gemm_perf.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	def := "engine.workers.aggregated.timing={type: default, forward_model: op_level}"
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--systems-dir", empty}, "holds no <gpu>.yaml file"},
		{"", []string{"--systems-dir", ""}, "--systems-dir is empty"},
		{"/no/such/db", nil, envSystemsDir + ": performance database /no/such/db"},
		{"", []string{"--systems-dir", broken, "--set", def}, "engine.workers.aggregated.timing.forward_model: op_level for gpu h200_sxm"},
	} {
		t.Setenv(envSystemsDir, c.env)
		args := append([]string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir()}, c.args...)
		if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v (env %q): exit %d, stderr %q; want 2 and %q", c.args, c.env, code, errs, c.want)
		}
	}
}

// withoutLockstepNote returns stderr without the lock-step note, which the seed's synthetic
// config (one wave of identical requests) always gets, without the warning about its KV pool
// (more than its GPU holds, unless the test sets another) and without the note that its
// polynomial timing reads neither the GPU nor the model; it fails the test when the lock-step
// note is not there exactly once.
func withoutLockstepNote(t *testing.T, errs string) string {
	t.Helper()
	var kept []string
	n := 0
	for _, line := range strings.SplitAfter(errs, "\n") {
		if strings.HasPrefix(line, "servesweep: requests start in one wave and stay in lock-step") ||
			strings.HasPrefix(line, "servesweep: requests of one length fall into step") {
			n++
			continue
		}
		// The seed's fixed KV pool, more than its GPU holds (TestPredictWarnsOfAPoolNoGPUHolds),
		// and its polynomial timing, under which the GPU and model are labels
		// (TestPredictNotesLabelOnlyTiming).
		if strings.HasPrefix(line, "warning: "+seedConfig+": engine.workers.aggregated.kv_cache.capacity.blocks: 32768 blocks of 64 tokens") ||
			strings.HasPrefix(line, "servesweep: every worker role uses fixed or polynomial timing") {
			continue
		}
		kept = append(kept, line)
	}
	if n != 1 {
		t.Errorf("stderr %q has the lock-step note %d times, want once", errs, n)
	}
	return strings.Join(kept, "")
}

// A run whose requests are all alike under a concurrency load moves in lock-step: predict says so
// once on stderr (the seed's synthetic config: concurrency 16, 2048/128 tokens), as one wave
// without a ramp and as phases the ramp sets with one (the sweep warns of both alike). A
// concurrency of 1, lengths that differ (ramped or not) or an open-loop load leave it out.
func TestPredictNotesLockstep(t *testing.T) {
	const wave = "servesweep: requests start in one wave and stay in lock-step (concurrency 16, every request 2048 input and 128 output " +
		"tokens, traffic.load.ramp_seconds 0): every wave repeats the first; draw the lengths from a range (e.g. " +
		"traffic.source.output_tokens: {distribution: uniform, min: ..., max: ...}) and set traffic.load.warmup_seconds to " +
		"measure a steady state\n"
	const ramped = "servesweep: requests of one length fall into step (concurrency 16, every request 2048 input and 128 output " +
		"tokens): a request's replacement starts when it finishes and requests prefilled together finish together, so the " +
		"phases the 2 s ramp (traffic.load.ramp_seconds) gives them can persist, and TTFT and TPOT move with the ramp, not " +
		"with the load alone; draw the lengths from a range (e.g. traffic.source.output_tokens: {distribution: " +
		"uniform, min: ..., max: ...}) to measure a steady state\n"
	for _, c := range []struct {
		name string
		sets []string
		note string // "" for none
	}{
		{"seed", nil, wave},
		{"explicit ramp 0", []string{"traffic.load.ramp_seconds=0"}, wave},
		{"ramp", []string{"traffic.load.ramp_seconds=2"}, ramped},
		{"concurrency 1", []string{"traffic.load.concurrency=1", "traffic.stop.requests=4"}, ""},
		{"lengths drawn", []string{"traffic.source.output_tokens={distribution: uniform, min: 64, max: 192}"}, ""},
		{"lengths drawn, ramp", []string{"traffic.source.output_tokens={distribution: uniform, min: 64, max: 192}", "traffic.load.ramp_seconds=2"}, ""},
		{"poisson", []string{"traffic.load={type: poisson, requests_per_second: 10}"}, ""},
		// One wave at most: nothing repeats it.
		{"one wave", []string{"traffic.load.concurrency=100"}, ""},
		// A run that ends within its ramp gets unfinishedRampNote's warning instead.
		{"ramp past the run", []string{"traffic.load.ramp_seconds=100000"}, ""},
	} {
		errs := predictSeed(t, c.name, c.sets...)
		n := strings.Count(errs, "lock-step") + strings.Count(errs, "fall into step")
		if c.note == "" && n != 0 || c.note != "" && (n != 1 || !strings.Contains(errs, c.note)) {
			t.Errorf("%s: stderr %q; want the note %q (none if empty), once", c.name, errs, c.note)
		}
	}
}

// predictSeed runs predict on the seed's synthetic config with sets (the dynamo stack, a fresh
// output directory) and returns its stderr, failing the test, labelled name, unless it exits 0.
func predictSeed(t *testing.T, name string, sets ...string) string {
	t.Helper()
	args := []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir()}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	code, _, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", name, code, errs)
	}
	return errs
}

// Why predict notes fixed lengths under a concurrency load even with a ramp: DeepSeek-R1 on
// eight H200 under SGLang, concurrency 32, 2,048-token prompts and 256 output tokens. A 2 s
// ramp, shorter than the engine takes to admit the first wave, gives the very TTFT of no ramp
// (one wave); longer ramps give other phases and TTFT several times lower, differing among
// themselves; with output lengths drawn from 204–256 tokens the ramp moves TTFT by a few percent.
func TestFixedLengthsMoveWithTheRamp(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "ds.yaml")
	if err := os.WriteFile(cfg, []byte(`traffic:
  source: {type: synthetic, input_tokens: 2048, output_tokens: 256}
  load: {type: concurrency, concurrency: 32, warmup_seconds: 30}
  stop: {requests: 1000}
engine:
  model: deepseek-ai/DeepSeek-R1
  hardware: h200_sxm
  backend: sglang
  precision: {weights: fp8, kv_cache: fp8}
  workers:
    aggregated:
      parallelism: {tensor: 8, moe_expert: 8}
      timing: {type: roofline}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ttft := func(ramp string, sets ...string) float64 {
		t.Helper()
		dir := t.TempDir()
		args := []string{"predict", "-c", cfg, "--output-dir", dir, "--set", "traffic.load.ramp_seconds=" + ramp}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("ramp %s %v: exit %d: %s", ramp, sets, code, errs)
		}
		return readSummary(t, dir)["mean_ttft_ms"].(float64)
	}
	at0, at2, at10, at20 := ttft("0"), ttft("2"), ttft("10"), ttft("20")
	if at2 != at0 || !(at10 < at0/3) || !(at20 < at0/3) || !(math.Abs(at20-at10) > 0.1*at10) {
		t.Errorf("fixed lengths: mean TTFT %.1f / %.1f / %.1f / %.1f ms at ramps 0 / 2 / 10 / 20 s; want the 2 s ramp's "+
			"equal to no ramp's, the 10 s and 20 s ones under a third of it and more than 10 %% apart", at0, at2, at10, at20)
	}
	drawn := "traffic.source.output_tokens={distribution: uniform, min: 204, max: 256}"
	d0, d2, d10, d20 := ttft("0", drawn), ttft("2", drawn), ttft("10", drawn), ttft("20", drawn)
	for _, d := range []float64{d2, d10, d20} {
		if math.Abs(d-d0) > 0.05*d0 {
			t.Errorf("drawn lengths: mean TTFT %.1f / %.1f / %.1f / %.1f ms at ramps 0 / 2 / 10 / 20 s; want them within 5 %%",
				d0, d2, d10, d20)
			break
		}
	}
}

// A warm-up past the last arrival leaves no steady window: predict says the rates are the
// whole run's, and prediction.json has steady_window_ms 0.
func TestPredictNotesMissingSteadyWindow(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--set", "traffic.load.warmup_seconds=1000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	const want = "warning: no request arrived after traffic.load.warmup_seconds (1000 s), so there is no steady window: all 100 requests are warm-up"
	if !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want it to contain %q", errs, want)
	}
	if s := readSummary(t, dir); s["steady_window_ms"] != 0.0 || s["warmup_requests"] != 100.0 || s["num_requests"] != 0.0 {
		t.Errorf("prediction.json: steady_window_ms %v, warmup_requests %v, num_requests %v; want 0, 100, 0",
			s["steady_window_ms"], s["warmup_requests"], s["num_requests"])
	}
}

// A steady window of fewer than results.MinAnswerRequests completed requests is warned about,
// with the cool-down's requests when there is one; one of 30, no window, or a missing one is not.
func TestThinWindowWarning(t *testing.T) {
	for _, c := range []struct {
		s    metrics.Summary
		want string
	}{
		{metrics.Summary{WarmupSeconds: 6.5, CompletedRequests: 4}, "warning: only 4 completed requests were measured after " +
			"traffic.load.warmup_seconds (6.5 s): the latencies are those of a handful of requests"},
		{metrics.Summary{WarmupSeconds: 2, Cooldown: true, CooldownRequests: 7, CompletedRequests: 29}, "warning: only 29 " +
			"completed requests were measured after traffic.load.warmup_seconds (2 s), before the cool-down (traffic.load.cooldown: " +
			"7 requests left out after the last session start):"},
		{metrics.Summary{Cooldown: true, CooldownRequests: 6, CompletedRequests: 9}, "warning: only 9 completed requests were " +
			"measured before the cool-down (traffic.load.cooldown: 6 requests left out after the last session start):"},
		{metrics.Summary{WarmupSeconds: 2, CompletedRequests: 30}, ""},
		{metrics.Summary{CompletedRequests: 3}, ""},
		{metrics.Summary{WarmupSeconds: 2, SteadyWindowMissing: true}, ""},
	} {
		got := thinWindowWarning(&c.s)
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q, want it to start with %q", c.s, got, c.want)
		}
	}
}

// The rejection warning counts only the reasons that rejected a request, each with the field to
// change: a run rejected for context length alone says nothing about KV capacity.
func TestRejectionWarningNamesOnlyReasonsThatRejected(t *testing.T) {
	s := &metrics.Summary{NumRequests: 100, RejectedRequests: 3, CompletedRequests: 97,
		RejectedByReason: map[string]int64{"context_length": 3, "kv_capacity": 0}}
	got := rejectionWarning(s)
	want := "warning: 3 of 100 requests were rejected at arrival and are excluded from every metric: 3 context_length (" +
		rejectionHints["context_length"] + ")"
	if got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
	if got := rejectionWarning(&metrics.Summary{NumRequests: 5}); got != "" {
		t.Errorf("no rejection: warning %q", got)
	}
	// Every request rejected: the report's zeros are an empty population's, and it says so.
	all := &metrics.Summary{NumRequests: 3, RejectedRequests: 3, RejectedByReason: map[string]int64{"context_length": 3}}
	if got := rejectionWarning(all); !strings.HasSuffix(got, "; no request completed, so prediction.json's latency statistics are the 0 of an empty population (num_ttft_samples 0), not measurements") {
		t.Errorf("all rejected: warning %q", got)
	}
}

// Settings the backend's engine refuses at startup (export.StartupRefusals) are warned of by
// predict, naming the --set that gave each, which still simulates them: vLLM's batched tokens
// below its sequences and a block size it does not take, TensorRT-LLM's block size that is no power of 2; SGLang takes a page of
// 7 tokens, and the seed's own settings draw nothing.
func TestPredictWarnsOfStartupRefusals(t *testing.T) {
	const tail = "; the simulation runs it as given, no %s server would start with it (servesweep export refuses it)"
	for _, c := range []struct {
		name string
		sets []string
		want []string
	}{
		{"seed", nil, nil},
		{"vllm", []string{"engine.workers.aggregated.scheduler.max_batched_tokens=16", "engine.workers.aggregated.kv_cache.block_size=7"}, []string{
			"warning: " + seedConfig + " (--set engine.workers.aggregated.scheduler.max_batched_tokens=16): engine.workers.aggregated.scheduler.max_batched_tokens: 16: vLLM refuses --max-num-batched-tokens " +
				"below --max-num-seqs (scheduler.max_sequences 256) at startup; raise it to at least 256, or lower max_sequences" + fmt.Sprintf(tail, "vllm"),
			"warning: " + seedConfig + " (--set engine.workers.aggregated.kv_cache.block_size=7): engine.workers.aggregated.kv_cache.block_size: 7: vLLM's --block-size takes one of [8 16 32 64 128]" +
				fmt.Sprintf(tail, "vllm")}},
		{"trtllm", []string{"engine.backend=trtllm", "engine.workers.aggregated.kv_cache.block_size=24"}, []string{
			"warning: " + seedConfig + " (--set engine.workers.aggregated.kv_cache.block_size=24): engine.workers.aggregated.kv_cache.block_size: 24: TensorRT-LLM's tokens_per_block must be a power of 2" +
				fmt.Sprintf(tail, "trtllm")}},
		{"sglang", []string{"engine.backend=sglang", "engine.workers.aggregated.kv_cache.block_size=7"}, nil},
		// The --set that made the batched tokens too few, though it set the sequences.
		{"vllm sequences", []string{"engine.workers.aggregated.scheduler.max_sequences=9000"}, []string{
			"warning: " + seedConfig + " (--set engine.workers.aggregated.scheduler.max_sequences=9000): engine.workers.aggregated.scheduler.max_batched_tokens: " +
				"8192: vLLM refuses --max-num-batched-tokens below --max-num-seqs (scheduler.max_sequences 9000) at startup; raise it to at least 9000, " +
				"or lower max_sequences" + fmt.Sprintf(tail, "vllm")}},
	} {
		errs := predictSeed(t, c.name, c.sets...)
		for _, w := range c.want {
			if !strings.Contains(errs, w+"\n") {
				t.Errorf("%s: stderr %q, want the line %q", c.name, errs, w)
			}
		}
		if n := strings.Count(errs, "would start with it"); n != len(c.want) {
			t.Errorf("%s: %d startup refusals warned, want %d: %s", c.name, n, len(c.want), errs)
		}
	}
}

// A run that rejects every request says so and nothing about how its requests ran: no lock-step
// note, no steady-window warning (a warm-up with every request rejected has no arrival after it,
// but not for want of requests).
func TestAllRejectedSaysOnlyThat(t *testing.T) {
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
		"--set", "engine.context_length=1024", "--set", "traffic.load.warmup_seconds=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning: 100 of 100 requests were rejected at arrival") {
		t.Errorf("stderr %q: want the rejection warning", errs)
	}
	for _, not := range []string{"lock-step", "fall into step", "no steady window", "warm-up"} {
		if strings.Contains(errs, not) {
			t.Errorf("stderr %q: says %q of a run that rejected every request", errs, not)
		}
	}
}

// traffic.load.cooldown on a closed loop that never ran full is warned: 5 three-turn sessions
// at concurrency 8 ramped over 1 s start at 0, 125, ..., 500 ms, so the last start (500 ms) is
// within the ramp and the steady window measured it; with 8 sessions and no ramp all start at 0,
// leaving no steady window (the 8 first turns count, the 16 later ones are cool-down); 40
// sessions after a 2 s warm-up run full and say nothing.
func TestPredictWarnsCooldownWithoutSteadyState(t *testing.T) {
	src := "traffic.source={type: synthetic-session, new_input_tokens_per_turn: 256, output_tokens_per_turn: 32, session: {turns: 3}}"
	for _, c := range []struct {
		stop, load, want string
	}{
		{"{sessions: 5}", "{type: concurrency, concurrency: 8, ramp_seconds: 1, cooldown: true}",
			"warning: traffic.load.cooldown: the closed loop started its last session at 500 ms, within its 1 s ramp, so it never ran 8 sessions in flight"},
		{"{sessions: 8}", "{type: concurrency, concurrency: 8, cooldown: true}",
			"warning: traffic.load.cooldown: the closed loop started its last session at 0 ms, not after traffic.load.warmup_seconds (0 s), so there is no steady window: 0 requests are warm-up and 16 cool-down, left out of every count and latency (8 requests counted)"},
		{"{sessions: 40}", "{type: concurrency, concurrency: 8, ramp_seconds: 1, warmup_seconds: 2, cooldown: true}", ""},
	} {
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
			"--set", src, "--set", "traffic.stop="+c.stop, "--set", "traffic.load="+c.load)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.stop, code, errs)
		}
		if c.want == "" && strings.Contains(errs, "traffic.load.cooldown") || c.want != "" && !strings.Contains(errs, c.want) {
			t.Errorf("%s, %s: stderr %q, want %q", c.stop, c.load, errs, c.want)
		}
	}
}

// A disaggregated run under default timing whose config leaves engine.kv_transfer.latency_ms
// unset is told the hand-off's default cost; a set latency (0 too), polynomial timing and an
// aggregated run are not.
func TestHandOffNote(t *testing.T) {
	def := []string{"engine.workers.prefill.timing={type: default}", "engine.workers.decode.timing={type: default}",
		"engine.workers.prefill.kv_cache.capacity={type: default}", "engine.workers.decode.kv_cache.capacity={type: default}"}
	for _, tc := range []struct {
		name string
		file string
		sets []string
		want string
	}{
		{"default timing", "../../examples/disaggregated.yaml", def,
			fmt.Sprintf("servesweep: each disaggregated hand-off adds %g ms to the request's TTFT", timing.CalibratedKVTransferLatencyMs)},
		{"latency set", "../../examples/disaggregated.yaml", append(slices.Clone(def), "engine.kv_transfer.latency_ms=100"), ""},
		{"latency 0", "../../examples/disaggregated.yaml", append(slices.Clone(def), "engine.kv_transfer.latency_ms=0"), ""},
		{"polynomial timing", "../../examples/disaggregated.yaml", nil, ""},
		{"aggregated", "../../examples/synthetic.yaml", nil, ""},
	} {
		cfg, err := config.LoadFile(tc.file, tc.sets)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := handOffNote(cfg)
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: note %q, want prefix %q", tc.name, got, tc.want)
		}
	}
}

// An engine.model the catalog does not know is exit 2 whose message starts with the unknown
// name and points at the list command, whichever setting needed the model (here the default
// context_length "max").
func TestPredictUnknownModelNamesIt(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(`traffic:
  source: {type: synthetic, input_tokens: 256, output_tokens: 64}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 10}
engine:
  model: meta-llama/Meta-Llama-3.2-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  workers:
    aggregated: {}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "predict", "--config", spec, "--output-dir", filepath.Join(dir, "out"))
	if code != 2 || !strings.Contains(errs, `engine.model: unknown model "meta-llama/Meta-Llama-3.2-8B-Instruct"; known models: `) ||
		!strings.Contains(errs, "servesweep list models") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// The thrash warning: 3,000 preemptions for 300 completed requests (10 each) warns with both
// counts and the mean; 2,999 does not, nor does a run that completed nothing.
func TestThrashWarning(t *testing.T) {
	got := thrashWarning(&metrics.Summary{CompletedRequests: 300, Preemptions: 3000})
	if !strings.HasPrefix(got, "warning: 3000 preemptions for 300 completed requests (10 each): the KV pools are far too small") {
		t.Errorf("10 per request: %q", got)
	}
	for _, s := range []*metrics.Summary{{CompletedRequests: 300, Preemptions: 2999}, {Preemptions: 50}} {
		if got := thrashWarning(s); got != "" {
			t.Errorf("%d preemptions for %d requests: %q, want none", s.Preemptions, s.CompletedRequests, got)
		}
	}
}

// A scheduler key the backend's style ignores is a note naming the key, its value and the
// backend; the same keys on the backend that reads them, and defaults, are not.
func TestIgnoredSchedulerNotes(t *testing.T) {
	role := &config.WorkerRole{Scheduler: config.Scheduler{RecvInterval: 3, ChunkedPrefillSize: 64, CapacityPolicy: config.CapacityMaxUtilization}}
	cfg := &config.Config{Engine: config.Engine{Backend: config.BackendVLLM, Mode: config.ModeAggregated, Workers: config.Workers{Aggregated: role}}}
	want := []string{
		"note: engine.workers.aggregated.scheduler.chunked_prefill_size (64) is not a setting of the vllm scheduler, which ignores it",
		"note: engine.workers.aggregated.scheduler.recv_interval (3) is not a setting of the vllm scheduler, which ignores it",
		"note: engine.workers.aggregated.scheduler.capacity_policy (max_utilization) is not a setting of the vllm scheduler, which ignores it",
	}
	if got := ignoredSchedulerNotes(cfg); !slices.Equal(got, want) {
		t.Errorf("vllm: %q, want %q", got, want)
	}
	cfg.Engine.Backend = config.BackendSGLang
	if got := ignoredSchedulerNotes(cfg); len(got) != 1 || !strings.Contains(got[0], "capacity_policy (max_utilization) is not a setting of the sglang scheduler") {
		t.Errorf("sglang: %q", got)
	}
	// SGLang's budget is chunked_prefill_size: a max_batched_tokens other than its default 8192
	// is noted, 8192 is not.
	role.Scheduler = config.Scheduler{MaxBatchedTokens: 64}
	if got := ignoredSchedulerNotes(cfg); len(got) != 1 || !strings.Contains(got[0], "max_batched_tokens (64) is not a setting of the sglang scheduler") {
		t.Errorf("sglang max_batched_tokens 64: %q", got)
	}
	role.Scheduler.MaxBatchedTokens = 8192
	if got := ignoredSchedulerNotes(cfg); len(got) != 0 {
		t.Errorf("sglang max_batched_tokens 8192: %q, want none", got)
	}
	role.Scheduler = config.Scheduler{CapacityPolicy: config.CapacityGuaranteedNoEvict}
	if got := ignoredSchedulerNotes(cfg); len(got) != 0 {
		t.Errorf("defaults: %q, want none", got)
	}
}

// TestModelPathWithoutDirectory: an engine.model written as a path (absolute, ./, ~) that names
// no directory is a config error in predict, sweep and export, naming engine.model, the path, that
// no such directory exists and the catalog id to write instead, not a run of the catalog model
// its last element names.
func TestModelPathWithoutDirectory(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "Llama-3.1-8B")
	for _, model := range []string{abs, "./servesweep-no-such-dir/Llama-3.1-8B", "~/Llama-3.1-8B"} {
		want := fmt.Sprintf("engine.model: %q is a path, but no such directory exists", model)
		for _, args := range [][]string{
			{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", filepath.Join(t.TempDir(), "out")},
			{"sweep", "-c", seedConfig, "--dry-run", "--output-dir", filepath.Join(t.TempDir(), "out")},
			{"export", "-c", exportConfig, "--target", "vllm", "--output-dir", filepath.Join(t.TempDir(), "out")},
		} {
			code, _, errs := runCLI(t, append(args, "--set", "engine.model="+model)...)
			if code != exitConfigError || !strings.Contains(errs, want) || !strings.Contains(errs, "write meta-llama/Llama-3.1-8B") {
				t.Errorf("%s %s: exit %d, stderr %q; want exit 2 and %q", args[0], model, code, errs, want)
			}
		}
	}
}

// TestModelWithSpaces: an engine.model with leading or trailing spaces, which the lookup would
// trim but launch files and messages would copy, is a config error in predict, sweep and export,
// naming engine.model and the value quoted.
func TestModelWithSpaces(t *testing.T) {
	for model, value := range map[string]string{`" meta-llama/Llama-3.1-8B "`: " meta-llama/Llama-3.1-8B ", `"Llama-3.1-8B\t"`: "Llama-3.1-8B\t"} {
		want := fmt.Sprintf("engine.model: %q has leading or trailing spaces; remove them: %q", value, strings.TrimSpace(value))
		for _, args := range [][]string{
			{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", filepath.Join(t.TempDir(), "out")},
			{"sweep", "-c", seedConfig, "--dry-run", "--output-dir", filepath.Join(t.TempDir(), "out")},
			{"export", "-c", exportConfig, "--target", "vllm", "--output-dir", filepath.Join(t.TempDir(), "out")},
		} {
			code, _, errs := runCLI(t, append(args, "--set", "engine.model="+model)...)
			if code != exitConfigError || !strings.Contains(errs, want) {
				t.Errorf("%s %s: exit %d, stderr %q; want exit 2 and %q", args[0], model, code, errs, want)
			}
		}
	}
}

// A config that gives no traffic section, or a null one, runs the contract's default workload
// and says so on stderr, naming the file; one that gives traffic does not.
func TestPredictNotesDefaultTraffic(t *testing.T) {
	note := "note: " + seedConfig + ": traffic: not given (or null), so the run serves the default workload: synthetic requests of " +
		"1024 input and 128 output tokens at concurrency 10, stopping after 100 requests"
	if code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir()); code != 0 || strings.Contains(errs, note) {
		t.Errorf("seed: exit %d, stderr %q; want no note", code, errs)
	}
	code, out, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--format", "json", "--set", "traffic=null")
	if code != 0 || !strings.Contains(errs, note) || !strings.Contains(out, `"completed_requests":100`) {
		t.Errorf("traffic null: exit %d, stderr %q, stdout %q; want the note and the default workload's 100 requests", code, errs, out)
	}
	// An empty mapping is a traffic section given, not merged with the default: its stop is missing.
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "traffic={}")
	if code != 2 || !strings.Contains(errs, "traffic.stop: synthetic sources need exactly one of requests") {
		t.Errorf("traffic {}: exit %d %q", code, errs)
	}
}

// The seed config's fixed KV pool (32,768 blocks of 64 tokens of Llama-3.1-8B's BF16 KV on an
// H200: 32768 × 64 × 131072 bytes = 256 GiB per GPU) is more than the GPU holds: predict warns as
// export does, although its fixed timing reads neither the GPU nor the model; a pool that fits
// is not warned about.
func TestPredictWarnsOfAPoolNoGPUHolds(t *testing.T) {
	const warn = "warning: " + seedConfig + ": engine.workers.aggregated.kv_cache.capacity.blocks: 32768 blocks of 64 tokens need 256.0 GiB of KV cache per GPU"
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir())
	if code != 0 || strings.Count(errs, warn) != 1 {
		t.Errorf("seed: exit %d, stderr %q; want the pool warned about once, naming the file", code, errs)
	}
	// A pool a --set gave names it.
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
		"--set", "engine.workers.aggregated.kv_cache.capacity.blocks=40000")
	if want := "warning: " + seedConfig + " (--set engine.workers.aggregated.kv_cache.capacity.blocks=40000): " +
		"engine.workers.aggregated.kv_cache.capacity.blocks: 40000 blocks of 64 tokens"; code != 0 || !strings.Contains(errs, want) {
		t.Errorf("40000 blocks: exit %d, stderr %q; want %q", code, errs, want)
	}
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
		"--set", "engine.workers.aggregated.kv_cache.capacity.blocks=4096")
	if code != 0 || strings.Contains(errs, "could not hold the pool") {
		t.Errorf("4096 blocks: exit %d, stderr %q", code, errs)
	}
}

// A shape the model cannot be split into (TP3 of 32 attention heads) under the seed's polynomial
// timing is a warning, once: the timing's note (which adds that the timing does not depend on
// it) and the deployment's are the same finding.
func TestPredictWarnsOfAnUnsplittableShapeOnce(t *testing.T) {
	const shape = "engine.workers.aggregated.parallelism.tensor: tensor 3 does not divide meta-llama/Llama-3.1-8B's 32 attention heads"
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "traffic.stop.requests=8",
		"--set", "engine.workers.aggregated.parallelism.tensor=3")
	if code != 0 || strings.Count(errs, shape) != 1 || !strings.Contains(errs, "warning: "+seedConfig+" (--set engine.workers.aggregated.parallelism.tensor=3): "+shape) ||
		!strings.Contains(errs, "(no engine runs this shape; polynomial timing does not depend on it)") {
		t.Errorf("TP3: exit %d, stderr %q; want one warning naming the shape", code, errs)
	}
}

// Under the seed's polynomial timing and fixed KV pool the GPU and the model are labels, and
// predict says so (the numbers are the same on an L40S); with default timing, or a pool sized
// from the GPU's memory, it does not. A model no GPU of the run
// holds is warned about, naming the fit, and the run still goes (the reference's behaviour).
func TestPredictNotesLabelOnlyTiming(t *testing.T) {
	const note = "every worker role uses fixed or polynomial timing, which reads neither engine.hardware nor engine.model"
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "traffic.stop.requests=8",
		"--set", "engine.hardware=l40s", "--set", "engine.model=meta-llama/Llama-3.1-405B")
	if code != 0 || strings.Count(errs, note) != 1 || !strings.Contains(errs, "does not fit on 1 × l40s") {
		t.Errorf("seed on an L40S: exit %d, stderr %q; want the label note once and the fit warned about", code, errs)
	}
	// A GPU servesweep does not know is one warning (it is a label); its fixed pool has no memory
	// to be checked against, so nothing else is said of it.
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "traffic.stop.requests=8",
		"--set", "engine.hardware=h900_sxm")
	if code != 0 || strings.Count(errs, "warning: ") != 1 ||
		!strings.Contains(errs, `warning: `+seedConfig+` (--set engine.hardware=h900_sxm): engine.hardware: hardware "h900_sxm" is not a GPU servesweep knows`) {
		t.Errorf("seed on an unknown GPU: exit %d, stderr %q; want the one warning that names it, its field and its --set", code, errs)
	}
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "traffic.stop.requests=8",
		"--set", "engine.workers.aggregated.timing={type: default}", "--set", "engine.workers.aggregated.kv_cache.capacity={type: default}")
	if code != 0 || strings.Contains(errs, note) {
		t.Errorf("default timing: exit %d, stderr %q; want no label note", code, errs)
	}
	// Polynomial timing over a pool sized from the GPU's memory and the model's weights: the GPU
	// and model change the run, so no note.
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", "traffic.stop.requests=8",
		"--set", "engine.workers.aggregated.kv_cache.capacity={type: default}")
	if code != 0 || strings.Contains(errs, note) {
		t.Errorf("polynomial timing, default pool: exit %d, stderr %q; want no label note", code, errs)
	}
}

// A closed loop whose ramp outlasts the run (5,000 s, a length in milliseconds read as seconds,
// over a run of 100 requests) never holds its concurrency, and predict warns; a 1 s ramp over the
// same run does not.
func TestPredictWarnsOfARampLongerThanTheRun(t *testing.T) {
	const warn = "warning: traffic.load.ramp_seconds: the run ended at "
	for _, c := range []struct {
		ramp string
		warn bool
	}{{"5000", true}, {"1", false}} {
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
			"--set", "traffic.load={type: concurrency, concurrency: 16, ramp_seconds: "+c.ramp+"}")
		if code != 0 || strings.Contains(errs, warn) != c.warn || c.warn && !strings.Contains(errs, "before its 5000 s ramp did, so it never held 16 requests in flight") {
			t.Errorf("ramp %s s: exit %d, stderr %q; warning expected %v", c.ramp, code, errs, c.warn)
		}
	}
}

// A worker role declared without a setting (null or {}) runs a worker of every default, and
// predict says so naming the file and the role; a role with one setting does not.
func TestPredictNotesEmptyRole(t *testing.T) {
	for _, c := range []struct {
		set  string
		note bool
	}{
		{"engine.workers.aggregated=null", true},
		{"engine.workers.aggregated={}", true},
		{"engine.workers.aggregated={parallelism: {tensor: 1}}", false},
	} {
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", c.set,
			"--set", "traffic.stop.requests=8")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.set, code, errs)
		}
		note := "note: " + seedConfig + ": engine.workers.aggregated: declared without a setting, so its worker takes every default: " +
			"1 × TP1, default timing, default KV capacity (docs/predict.md)\n"
		if strings.Contains(errs, note) != c.note {
			t.Errorf("%s: stderr %q; the note expected %v", c.set, errs, c.note)
		}
	}
}

// writeReport streams the records but writes the bytes json.MarshalIndent writes for the whole
// report: flat and nested, with records sorted among the keys, with none, and without the key.
func TestWriteReportMatchesMarshalIndent(t *testing.T) {
	recs := []map[string]any{{"uuid": "a", "ttft_ms": 1.5, "routing_history": []any{map[string]any{"pool": "agg"}}}, {"uuid": "b<&>", "ttft_ms": nil}}
	summary := map[string]any{"mean_ttft_ms": 2.25, "zeta": []int{1, 2}, "alpha": "x", "nested": map[string]any{"k": 1}}
	for _, c := range []struct {
		name string
		top  map[string]any
		recs []map[string]any
		with bool
	}{
		{"flat", summary, recs, true},
		{"dynamo", map[string]any{"summary": summary}, recs, true},
		{"no records", summary, []map[string]any{}, true},
		{"no key", summary, nil, false},
	} {
		whole := make(map[string]any, len(c.top)+1)
		for k, v := range c.top {
			whole[k] = v
		}
		var records func(func(map[string]any) error) error
		if c.with {
			whole["per_request"] = c.recs
			records = func(fn func(map[string]any) error) error {
				for _, r := range c.recs {
					if err := fn(r); err != nil {
						return err
					}
				}
				return nil
			}
		}
		want, err := json.MarshalIndent(whole, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeReport(&got, c.top, records); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want)+"\n" {
			t.Errorf("%s: streamed report differs from MarshalIndent's:\n%s\nwant\n%s", c.name, got.String(), want)
		}
	}
}

// predict warns of an explicit KV size far from the model's, naming the file and the --set, and
// runs with it: Llama-3.1-8B's token KV is 32 layers × 2 × 8 KV heads × 128 × 2 bytes = 131,072
// in BF16.
func TestPredictWarnsOfKVBytesPerToken(t *testing.T) {
	dir := t.TempDir()
	set := "engine.workers.aggregated.kv_cache.bytes_per_token=1"
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "--config", seedConfig, "--output-dir", dir, "--set", set)
	want := "warning: " + seedConfig + " (--set " + set + "): engine.workers.aggregated.kv_cache.bytes_per_token: 1 byte a token is " +
		"1/131072 of the 131072 bytes a token that meta-llama/Meta-Llama-3.1-8B-Instruct's KV cache in bf16 takes over all layers " +
		"(what auto derives); the run keeps 1, which sizes this role's default KV pool and an auto kv_transfer: write auto, or keep " +
		"the value if it is deliberate\n"
	if code != 0 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q\nwant it to hold %q", code, errs, want)
	}
}

// An evaluation.sla bound that looks like seconds is warned about by predict as by sweep (the
// same check, config.SLA.SecondsLikeBounds), naming the file, the --set that gave it, the bound
// and what it would be in ms; plausible bounds are not.
func TestPredictWarnsOfSecondsLikeSLA(t *testing.T) {
	const set = "evaluation={sla: {ttft_ms: 0.5, itl_ms: 50}}"
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--set", set)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "warning: " + seedConfig + " (--set " + set + "): evaluation.sla.ttft_ms: 0.5 ms looks like seconds: SLA bounds are in " +
		"milliseconds, so this asks for 0.5 ms; if 0.5 s was meant, write ttft_ms: 500\n"
	if !strings.Contains(errs, want) {
		t.Errorf("stderr %q\nlacks %q", errs, want)
	}
	if strings.Count(errs, "looks like seconds") != 1 {
		t.Errorf("itl_ms 50 is plausible, so one warning is expected: %q", errs)
	}
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(),
		"--set", "evaluation={sla: {ttft_ms: 500, itl_ms: 50}}")
	if code != 0 || strings.Contains(errs, "looks like seconds") {
		t.Errorf("plausible bounds: exit %d, stderr %q", code, errs)
	}
}

// predict warns of an open loop whose arrivals outpace the deployment (80 requests/s on one H200
// that serves about 18), and not of one it keeps up with (5 requests/s).
func TestPredictWarnsOfOverload(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "open.yaml")
	if err := os.WriteFile(spec, []byte(`traffic:
  source:
    type: synthetic
    input_tokens: {distribution: uniform, min: 1639, max: 2048}
    output_tokens: {distribution: uniform, min: 103, max: 128}
  load: {type: poisson, requests_per_second: 80}
  stop: {requests_per_load_unit: 100}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "predict", "-c", spec, "--output-dir", t.TempDir())
	if code != 0 || !strings.Contains(errs, "warning: arrivals outpace this deployment: its system held ") ||
		!strings.Contains(errs, "lower the rate or add capacity") {
		t.Errorf("80 requests/s: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "predict", "-c", spec, "--output-dir", t.TempDir(), "--set", "traffic.load.requests_per_second=5")
	if code != 0 || strings.Contains(errs, "outpace") || strings.Contains(errs, "drained") {
		t.Errorf("5 requests/s: exit %d, stderr %q", code, errs)
	}
	// 20 requests/s, about a tenth over what it serves, over 2,000 requests: its queue grew by 134
	// (sim.TestQueueOverloadNearCapacity).
	code, _, errs = runCLI(t, "predict", "-c", spec, "--output-dir", t.TempDir(), "--set", "traffic.load.requests_per_second=20",
		"--set", "traffic.stop={requests: 2000}")
	if code != 0 || !strings.Contains(errs, "warning: arrivals outpace this deployment: its queue (requests not yet admitted by a worker) held 134 more") {
		t.Errorf("20 requests/s: exit %d, stderr %q", code, errs)
	}
}

// predict warns of an open loop whose window drained a backlog: one H200 worker under the planner
// at 40 requests/s (one serves about 18), measured from 35.8 s, sheds 584 requests as the planner
// adds workers (the sweep's drained point: sweep.TestAutoscaledDrainSettles), and names where the
// drain ended (147.3 s); measured from there over 24,000 requests it is not warned.
func TestPredictWarnsOfDrain(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "planner.yaml")
	if err := os.WriteFile(spec, []byte(`traffic:
  source:
    type: synthetic
    input_tokens: {distribution: uniform, min: 1639, max: 2048}
    output_tokens: {distribution: uniform, min: 103, max: 128}
  load: {type: poisson, requests_per_second: 40, warmup_seconds: 35.8}
  stop: {requests: 6000}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
      kv_cache: {block_size: 64, prefix_caching: true, capacity: {type: default, memory_fraction: 0.9}}
router: {policy: round_robin, prefill_load_model: {type: none}}
planner: {policy: enabled, max_num_gpus: 8}
evaluation: {sla: {ttft_ms: 1000, itl_ms: 40}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", spec, "--output-dir", t.TempDir())
	if code != 0 || !strings.Contains(errs, "warning: this run drained a backlog: its system held 584 fewer requests at the last "+
		"arrival than at 35.8 s (4512 arrived between)") || !strings.Contains(errs, "set traffic.load.warmup_seconds to 148 or more") {
		t.Errorf("from 35.8 s: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", spec, "--output-dir", t.TempDir(), "--set", "traffic.load.warmup_seconds=148",
		"--set", "traffic.stop={requests: 24000}")
	if code != 0 || strings.Contains(errs, "drained") || strings.Contains(errs, "outpace") {
		t.Errorf("from 148 s: exit %d, stderr %q", code, errs)
	}
}
