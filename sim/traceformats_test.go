package sim

import (
	"errors"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/traffic"
)

// formatTestConfig replays the trace at path in format on one aggregated worker with fixed timing
// (a pass costs 10 ms when it holds prefill work plus 5 ms when it holds decoding requests),
// engine KV blocks of 16 tokens and trace hash blocks of 16 tokens.
func formatTestConfig(format string, paths ...string) *config.Config {
	cfg := traceTestConfig(paths[0], 10, 5, 1)
	cfg.Traffic.Source.Format, cfg.Traffic.Source.Paths = format, paths
	return cfg
}

// runFormat builds and runs cfg, checking the invariants, and returns the result.
func runFormat(t *testing.T, cfg *config.Config) *Result {
	t.Helper()
	wl, err := BuildWorkload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), cfg, Options{Workload: wl, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, res)
	return res
}

// mooncake-delta (testdata/delta.jsonl, hash blocks of 16 tokens): session a's turns carry 16,
// 16 and 20 new tokens, so their full prompts are 16, 16+4+16 = 36 and 36+1+20 = 57 tokens;
// session b's one turn has 10. Timing, with passes of 10 ms prefill plus 5 ms decode: a0
// arrives at 0 (its timestamp 1000 is the earliest), one pass (0–15) gives its first token; b0
// arrives at 10 and joins the pass 15–30; decode passes end at 35 (b0's second and last token)
// and 40 (a0's fourth and last). a1 arrives at 40 + delay 5 = 45 and finishes after one pass at
// 60; a2 arrives at 60 + 0 and finishes at 60 + 15 + 5 = 80. a1 reuses a0's prompt block (16
// tokens); a2 reuses a1's first two blocks (32 tokens: a0's prompt, a0's 4 output tokens and
// the first 12 new tokens of a1).
func TestMooncakeDeltaReplay(t *testing.T) {
	res := runFormat(t, formatTestConfig(config.FormatMooncakeDelta, "traffic/testdata/delta.jsonl"))
	want := []struct {
		prompt          int32
		arrival, finish float64
		reused          int32
	}{{16, 0, 40, 0}, {36, 45, 60, 16}, {57, 60, 80, 32}, {10, 10, 35, 0}}
	for i, w := range want {
		r := &res.Requests[i]
		if r.Status != engine.Completed || r.PromptLen != w.prompt || r.ArrivalMs != w.arrival || r.LastTokenMs != w.finish || r.ReusedTokens != w.reused {
			t.Errorf("request %d: status %v prompt %d arrival %v finish %v reused %d; want prompt %d arrival %v finish %v reused %d",
				i, r.Status, r.PromptLen, r.ArrivalMs, r.LastTokenMs, r.ReusedTokens, w.prompt, w.arrival, w.finish, w.reused)
		}
	}
	// requests.jsonl reports the full prompt as input_length.
	found := false
	for _, rec := range RequestRecords(res) {
		if rec["session_id"] == "a" && rec["turn_index"] == int32(2) {
			found = true
			if rec["input_length"] != int32(57) {
				t.Errorf("a turn 2 input_length = %v, want 57", rec["input_length"])
			}
		}
	}
	if !found {
		t.Error("no record for session a turn 2")
	}
}

// A delta turn whose accumulated prompt passes the per-request token bound is refused naming
// its line and field.
func TestMooncakeDeltaPromptBound(t *testing.T) {
	half := config.MaxTokensPerRequest/2 + 1
	rows := []traffic.TraceRow{
		{Line: 1, SessionID: "s", InputLength: half, OutputLength: 1},
		{Line: 2, SessionID: "s", InputLength: half, OutputLength: 1},
	}
	_, err := traffic.FromDeltaTrace(rows, 16, 1, config.MaxTokensPerRequest, "t.jsonl")
	var te *traffic.TraceError
	if !errors.As(err, &te) || te.File != "t.jsonl" || te.Line != 2 || te.Field != "input_length" {
		t.Fatalf("got %v, want a TraceError on t.jsonl line 2, input_length", err)
	}
}

// mooncake-delta replays on aggregated deployments only.
func TestMooncakeDeltaNeedsAggregated(t *testing.T) {
	cfg := formatTestConfig(config.FormatMooncakeDelta, "traffic/testdata/delta.jsonl")
	cfg.Engine.Mode = config.ModeDisaggregated
	err := cfg.Validate()
	if err == nil || !containsPath(err, "engine.mode") {
		t.Fatalf("got %v, want an error on engine.mode", err)
	}
}

// containsPath reports whether err lists a *config.Error at path.
func containsPath(err error, path string) bool {
	var errs config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			if e.Path == path {
				return true
			}
		}
	}
	var ce *config.Error
	return errors.As(err, &ce) && ce.Path == path
}

// applied_compute_agentic (testdata/applied.jsonl) at concurrency 1, passes of 10 ms prefill plus
// 5 ms decode, KV blocks of 16 tokens. Session 0: request 0 (prompt 100, 3 tokens) runs 0–15–20–25;
// request 1 (prompt 113, 2 tokens) arrives 5 ms later at 30 and ends at 30+15+5 = 50; request 2
// (prompt 135, 4 tokens) arrives 10 ms later at 60 and ends at 60+15+3×5 = 90. Session 1 then
// takes the slot: its one request (prompt 50, 2 tokens) arrives at 90 and ends at 110. Request 1
// reuses the 6 full blocks (96 tokens) of request 0's 103; request 2 the 7 (112) of request 1's
// 115.
func TestAppliedComputeReplay(t *testing.T) {
	cfg := formatTestConfig(config.FormatAppliedCompute, "traffic/testdata/applied.jsonl")
	cfg.Traffic.Load = config.Load{Type: config.LoadConcurrency, Concurrency: 1}
	if errs := cfg.Unsupported(); errs != nil {
		t.Fatal(errs)
	}
	res := runFormat(t, cfg)
	want := []struct {
		prompt          int32
		arrival, finish float64
		reused          int32
	}{{100, 0, 25, 0}, {113, 30, 50, 96}, {135, 60, 90, 112}, {50, 90, 110, 0}}
	for i, w := range want {
		r := &res.Requests[i]
		if r.Status != engine.Completed || r.PromptLen != w.prompt || r.ArrivalMs != w.arrival || r.LastTokenMs != w.finish || r.ReusedTokens != w.reused {
			t.Errorf("request %d: status %v prompt %d arrival %v finish %v reused %d; want prompt %d arrival %v finish %v reused %d",
				i, r.Status, r.PromptLen, r.ArrivalMs, r.LastTokenMs, r.ReusedTokens, w.prompt, w.arrival, w.finish, w.reused)
		}
	}
}

// applied_compute_agentic needs a concurrency load.
func TestAppliedComputeNeedsConcurrency(t *testing.T) {
	cfg := formatTestConfig(config.FormatAppliedCompute, "traffic/testdata/applied.jsonl")
	if err := cfg.Validate(); err == nil || !containsPath(err, "traffic.load.type") {
		t.Fatalf("got %v, want an error on traffic.load.type", err)
	}
}

// agentic_mooncake (testdata/agentic.jsonl), passes of 10 ms prefill plus 5 ms decode. r1 arrives
// at 0 and finishes at 20 (passes 0–15, 15–20). r3 (delay 0) arrives at 20 and finishes at 35;
// r2 (delay 5 + tool wait 3) arrives at 28, waits for that pass and finishes at 50. r4 waits for
// both: it arrives at max(50, 35) + 2 = 52 and finishes at 67. x1, the second root, arrives at
// 100 and finishes at 115. Trajectory E2E latencies: 67 − 0 = 67 and 115 − 100 = 15 ms: mean
// 41, std 26, median (rank round(1 × 0.5) = 1) 67.
func TestAgenticMooncakeReplay(t *testing.T) {
	cfg := formatTestConfig(config.FormatAgenticMooncake, "traffic/testdata/agentic.jsonl")
	if errs := cfg.Unsupported(); errs != nil {
		t.Fatal(errs)
	}
	res := runFormat(t, cfg)
	for i, w := range []struct{ arrival, finish float64 }{{0, 20}, {28, 50}, {20, 35}, {52, 67}, {100, 115}} {
		r := &res.Requests[i]
		if r.Status != engine.Completed || r.ArrivalMs != w.arrival || r.TerminalMs != w.finish {
			t.Errorf("request %d: status %v arrival %v finish %v; want %v, %v", i, r.Status, r.ArrivalMs, r.TerminalMs, w.arrival, w.finish)
		}
	}
	m := res.Summary.Map()
	for k, want := range map[string]any{
		"total_trajectories": int64(2), "completed_trajectories": int64(2), "incomplete_trajectories": int64(0),
		"mean_trajectory_e2e_latency_ms": 41.0, "min_trajectory_e2e_latency_ms": 15.0, "max_trajectory_e2e_latency_ms": 67.0,
		"median_trajectory_e2e_latency_ms": 67.0, "p50_trajectory_e2e_latency_ms": 67.0, "std_trajectory_e2e_latency_ms": 26.0,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	// Other workloads carry no trajectory keys.
	if _, ok := runFormat(t, formatTestConfig(config.FormatMooncake, "traffic/testdata/delta.jsonl")).Summary.Map()["total_trajectories"]; ok {
		t.Error("a mooncake run reports total_trajectories")
	}
}

// A rejected request counts its trajectory incomplete, and still releases its dependents.
func TestAgenticMooncakeIncomplete(t *testing.T) {
	cfg := formatTestConfig(config.FormatAgenticMooncake, "traffic/testdata/agentic.jsonl")
	cfg.Engine.ContextLength = 30 // r2 (32 prompt tokens) is rejected
	res := runFormat(t, cfg)
	if res.Requests[1].Status != engine.Rejected || res.Requests[3].Status != engine.Completed {
		t.Fatalf("r2 %v, r4 %v", res.Requests[1].Status, res.Requests[3].Status)
	}
	tr := res.Summary.Trajectories
	if tr.Total != 2 || tr.Completed != 1 || tr.Incomplete != 1 || tr.E2E.Samples != 1 || tr.E2E.Mean != 15 {
		t.Errorf("trajectories %+v", tr)
	}
}

// dynamo (testdata/dynamo-1.jsonl and dynamo-2.jsonl.gz, embedded block size 16): a, b and c
// arrive at 0, 20 and 20 ms with prompts 16, 20 and 32 and outputs 3, 2 and 1. a's passes end at
// 15 and 20; the pass 20–35 holds b's and c's prefill and a's decode, ending a (third token) and
// c (only token) at 35; b's second token ends it at 40.
func TestDynamoReplay(t *testing.T) {
	cfg := formatTestConfig(config.FormatDynamo, "traffic/testdata/dynamo-1.jsonl", "traffic/testdata/dynamo-2.jsonl.gz")
	cfg.Traffic.Source.BlockSize = 0 // embedded
	if errs := cfg.Unsupported(); errs != nil {
		t.Fatal(errs)
	}
	res := runFormat(t, cfg)
	for i, w := range []struct {
		id              string
		prompt          int32
		arrival, finish float64
	}{{"a", 16, 0, 35}, {"b", 20, 20, 40}, {"c", 32, 20, 35}} {
		r := &res.Requests[i]
		if res.Workload.Requests[i].ID != w.id || r.Status != engine.Completed || r.PromptLen != w.prompt || r.ArrivalMs != w.arrival || r.TerminalMs != w.finish {
			t.Errorf("request %d (%s): status %v prompt %d arrival %v finish %v; want %+v",
				i, res.Workload.Requests[i].ID, r.Status, r.PromptLen, r.ArrivalMs, r.TerminalMs, w)
		}
	}
	// An explicit block_size is only an equality check against the embedded one.
	cfg.Traffic.Source.BlockSize = 64
	_, err := BuildWorkload(cfg)
	var te *traffic.TraceError
	if !errors.As(err, &te) || te.File != "traffic/testdata/dynamo-1.jsonl" || te.Line != 2 || te.Field != "request.replay.trace_block_size" {
		t.Errorf("block_size 64: got %v", err)
	}
}

// weka stays refused: its lowering is not established (docs/traces.md).
func TestWekaUnsupported(t *testing.T) {
	cfg := formatTestConfig(config.FormatWeka, "x")
	if errs := cfg.Unsupported(); len(errs) != 1 || errs[0].Path != "traffic.source.format" {
		t.Errorf("got %v", errs)
	}
}
