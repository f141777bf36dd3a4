package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures holds the trace fixtures of sim/traffic/testdata.
const fixtures = "../../sim/traffic/testdata/"

// predict runs each new trace format on its fixture and checks the summary: every request
// completes, and agentic traces report their trajectories.
func TestPredictTraceFormats(t *testing.T) {
	for _, c := range []struct {
		name, source, load string
		requests           float64
		trajectories       bool
	}{
		{"mooncake-delta", "{type: trace, format: mooncake-delta, paths: [" + fixtures + "delta.jsonl], block_size: 16}", "{type: trace_timestamps}", 4, false},
		{"applied_compute_agentic", "{type: trace, format: applied_compute_agentic, paths: [" + fixtures + "applied.jsonl]}", "{type: concurrency, concurrency: 2}", 4, false},
		{"agentic_mooncake", "{type: trace, format: agentic_mooncake, paths: [" + fixtures + "agentic.jsonl], block_size: 16}", "{type: trace_timestamps, speedup: 2}", 5, true},
		{"dynamo", "{type: trace, format: dynamo, paths: [" + fixtures + "dynamo-1.jsonl, " + fixtures + "dynamo-2.jsonl.gz]}", "{type: trace_timestamps}", 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir() + "/out"
			code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir, "--format", "json",
				"--set", "traffic.source="+c.source, "--set", "traffic.load="+c.load, "--set", "traffic.stop={}")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			s := readSummary(t, dir)
			if s["completed_requests"] != c.requests {
				t.Errorf("completed_requests = %v, want %v", s["completed_requests"], c.requests)
			}
			if _, ok := s["total_trajectories"]; ok != c.trajectories {
				t.Errorf("total_trajectories present = %v, want %v", ok, c.trajectories)
			}
			if c.trajectories && (s["total_trajectories"] != 2.0 || s["completed_trajectories"] != 2.0 || s["incomplete_trajectories"] != 0.0) {
				t.Errorf("trajectories %v / %v / %v, want 2 / 2 / 0", s["total_trajectories"], s["completed_trajectories"], s["incomplete_trajectories"])
			}
		})
	}
}

// A malformed row is exit 2 naming the file, the line and the field.
func TestPredictTraceFormatErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cycle := write("cycle.jsonl", `{"request_id": "a", "output_length": 1, "hash_ids": [1], "wait_for": ["b"]}`+"\n"+
		`{"request_id": "b", "output_length": 1, "hash_ids": [1], "wait_for": ["a"]}`+"\n")
	applied := write("applied.jsonl", `{"num_turns": 1, "input_prompt_length": 5, "assistant_response_length": [1, 2], "tool_call_output_length": [1], "tool_call_latency": [1], "final_assistant_response_length": 1}`+"\n")
	for _, c := range []struct{ source, load, want string }{
		{"{type: trace, format: agentic_mooncake, paths: [" + cycle + "], block_size: 16}", "{type: trace_timestamps}", cycle + ":1: wait_for: the dependencies form a cycle"},
		{"{type: trace, format: applied_compute_agentic, paths: [" + applied + "]}", "{type: concurrency}", applied + ":1: assistant_response_length: has 2 entries, but num_turns is 1"},
	} {
		code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir+"/out", "--format", "json",
			"--set", "traffic.source="+c.source, "--set", "traffic.load="+c.load, "--set", "traffic.stop={}")
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.want)
		}
	}
}
