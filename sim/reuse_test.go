package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/traffic"
)

// traceConfig is testConfig serving trace rows (block size 16, timestamps in ms) with fixed timing
// prefill 10 ms, decode 5 ms.
func traceConfig(blocks int) *config.Config {
	cfg := testConfig(0, 0, 0, 1, blocks)
	cfg.Traffic.Source = config.Source{Type: config.SourceTrace, Format: "mooncake", Paths: []string{"trace.jsonl"}, BlockSize: 16}
	cfg.Traffic.Load = config.Load{Type: config.LoadTraceTimestamps, Speedup: 1}
	cfg.Traffic.Stop = config.Stop{MaxVirtualTimeSeconds: 3600}
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(10), DecodeMs: f64(5)}
	return cfg
}

func runRows(t *testing.T, cfg *config.Config, rows []traffic.TraceRow) *Result {
	t.Helper()
	res, err := Run(t.Context(), cfg, Options{CheckInvariants: true, Workload: traffic.FromTrace(rows, 16, 1)})
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, res)
	return res
}

// Two 64-token prompts share their first 3 of 4 blocks; 100 output tokens each; a 16-block pool.
// Both prefill in the first pass (10 + 5 ms); request 1 hits the 3 blocks request 0 registered in
// that pass (48 tokens). Each then holds ceil(computed/16) blocks, 3 of them shared: at 144
// computed tokens both hold 9 (15 distinct); the pass starting at 15 + 80×5 = 415 ms needs a 10th
// block for each, so LIFO preempts request 1 (81 tokens emitted). Request 0 finishes its 100th
// token at 415 + 19×5 = 510 ms, evicting request 1's last released block (the LRU head) on the
// way; request 1 is re-admitted at 510 ms and finds 8 blocks (128 tokens) cached: its 48 shared
// prompt tokens are reuse, the other 80 (its own prompt block and 5 output blocks) are recovered.
func TestReuseAfterPreemptionCountsPromptOnly(t *testing.T) {
	rows := []traffic.TraceRow{
		{Line: 1, InputLength: 64, OutputLength: 100, HashIDs: []uint64{1, 2, 3, 4}, HasTimestamp: true},
		{Line: 2, InputLength: 64, OutputLength: 100, HashIDs: []uint64{1, 2, 3, 5}, HasTimestamp: true},
	}
	res := runRows(t, traceConfig(16), rows)
	r1 := &res.Requests[1]
	if r1.Preemptions != 1 || r1.ReusedTokens != 48 || r1.RecoveredTokens != 80 {
		t.Fatalf("request 1: preemptions %d reused %d recovered %d, want 1, 48, 80", r1.Preemptions, r1.ReusedTokens, r1.RecoveredTokens)
	}
	want := []engine.Admission{{AtMs: 0, ReusedTokens: 48}, {AtMs: 510, ReusedTokens: 48, RecoveredTokens: 80}}
	if fmt.Sprint(r1.History) != fmt.Sprint(want) {
		t.Fatalf("request 1 admissions %+v, want %+v", r1.History, want)
	}
	s := res.Summary
	if !near(s.PrefixCacheReusedRatio, 48.0/128) || !near(s.FirstAdmissionPrefixCacheReusedRatio, 48.0/128) || s.TotalRecoveredTokens != 80 {
		t.Fatalf("reuse ratio %v, first-admission ratio %v, recovered %d; want 0.375, 0.375, 80",
			s.PrefixCacheReusedRatio, s.FirstAdmissionPrefixCacheReusedRatio, s.TotalRecoveredTokens)
	}
	recs := RequestRecords(res)
	hist := recs[1]["admission_history"].([]any)
	if len(hist) != 2 || recs[1]["admission_count"] != int32(2) || recs[1]["recovered_tokens"] != int32(80) {
		t.Fatalf("record: %d history entries, admission_count %v, recovered %v", len(hist), recs[1]["admission_count"], recs[1]["recovered_tokens"])
	}
	second := hist[1].(map[string]any)
	for k, v := range map[string]any{"admission_ordinal": 1, "pool_admission_ordinal": 1, "pool": "agg", "at_ms": 510.0,
		"reused_input_tokens": int32(48), "recovered_tokens": int32(80), "is_readmission": true} {
		if second[k] != v {
			t.Errorf("second admission %s = %v (%T), want %v", k, second[k], second[k], v)
		}
	}
}

// Property: over random workloads with shared prefixes, tight pools and preemption, in both
// modes, reuse never exceeds a prompt, a request's reuse is the maximum over its admissions, the
// admission log has one entry per admission, and the reuse ratio stays within [0, 1].
func TestReuseBoundedProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	preempted := 0
	for trial := range 60 {
		var rows []traffic.TraceRow
		n := 4 + rng.IntN(40)
		for i := range n {
			blocks := 1 + rng.IntN(8)
			ids := make([]uint64, blocks)
			group := uint64(rng.IntN(3))
			shared := rng.IntN(blocks + 1)
			for j := range ids {
				if j < shared {
					ids[j] = group*100 + uint64(j)
				} else {
					ids[j] = uint64(10000 + i*100 + j)
				}
			}
			rows = append(rows, traffic.TraceRow{Line: i + 1, InputLength: blocks*16 - rng.IntN(16), OutputLength: 1 + rng.IntN(120),
				HashIDs: ids, HasTimestamp: true, Timestamp: traffic.TraceTime{Whole: uint64(rng.IntN(200))}})
		}
		cfg := traceConfig(12 + rng.IntN(30))
		if trial%2 == 1 {
			cfg = disaggConfig(0, 0, 0, 1, 1, 2, 1024, 100)
			cfg.Traffic = traceConfig(0).Traffic
			for _, role := range []*config.WorkerRole{cfg.Engine.Workers.Prefill, cfg.Engine.Workers.Decode} {
				role.KVCache = config.KVCache{BlockSize: 16, PrefixCaching: true, Capacity: config.KVCapacity{Type: config.CapacityFixed, Blocks: 12 + rng.IntN(30)}}
			}
		}
		t.Logf("trial %d: %d rows, mode %s", trial, len(rows), cfg.Engine.Mode)
		res := runRows(t, cfg, rows)
		var reused, input int64
		for i := range res.Requests {
			r := &res.Requests[i]
			preempted += int(r.Preemptions)
			if r.ReusedTokens > r.PromptLen || r.ReusedTokens < 0 || r.FirstReusedTokens > r.ReusedTokens {
				t.Fatalf("trial %d request %d: reused %d, first %d, prompt %d", trial, i, r.ReusedTokens, r.FirstReusedTokens, r.PromptLen)
			}
			hist := r.History
			if res.Handoffs != nil {
				hist = res.Handoffs[i].PrefillHistory
			}
			var best, recovered int32
			for _, a := range hist {
				if a.ReusedTokens > r.PromptLen || a.RecoveredTokens < 0 {
					t.Fatalf("trial %d request %d: admission %+v, prompt %d", trial, i, a, r.PromptLen)
				}
				best = max(best, a.ReusedTokens)
				recovered += a.RecoveredTokens
			}
			if r.Status == engine.Completed && best != r.ReusedTokens {
				t.Fatalf("trial %d request %d: reused %d, max over admissions %d", trial, i, r.ReusedTokens, best)
			}
			if res.Handoffs == nil && (recovered != r.RecoveredTokens || int32(len(hist)) != int32(r.Preemptions)+1 && r.Status == engine.Completed) {
				t.Fatalf("trial %d request %d: %d admissions, %d preemptions, recovered %d vs %d", trial, i, len(hist), r.Preemptions, recovered, r.RecoveredTokens)
			}
			if r.Status == engine.Completed {
				reused += int64(r.ReusedTokens)
				input += int64(r.PromptLen)
			}
		}
		if ratio := res.Summary.PrefixCacheReusedRatio; ratio < 0 || ratio > 1 || input > 0 && !near(ratio, float64(reused)/float64(input)) {
			t.Fatalf("trial %d: reuse ratio %v (reused %d of %d)", trial, ratio, reused, input)
		}
	}
	if preempted == 0 {
		t.Fatal("no trial preempted: the property was not exercised")
	}
}

// Request accounting: context_length 1000 and a 20-block pool (320 tokens), fixed timing 10/5 ms,
// a 200 ms stop. Request 0 (64 + 10 tokens) completes at 15 + 9×5 = 60 ms; request 1 (1,500
// prompt tokens) is rejected for context_length, request 2 (400 tokens > 320) for kv_capacity;
// request 3 arrives at 100 ms and still decodes at the stop; request 4 would arrive at 300 ms,
// after the stop, and is not offered. Offered 4 = completed 1 + rejected 2 + unfinished 1.
func TestRequestAccounting(t *testing.T) {
	row := func(line, isl, osl int, atMs uint64) traffic.TraceRow {
		ids := make([]uint64, (isl+15)/16) // one id per 16-token trace block, unique per row
		for j := range ids {
			ids[j] = uint64(line*1000 + j)
		}
		return traffic.TraceRow{Line: line, InputLength: isl, OutputLength: osl, HashIDs: ids, HasTimestamp: true,
			Timestamp: traffic.TraceTime{Whole: atMs}}
	}
	rows := []traffic.TraceRow{row(1, 64, 10, 0), row(2, 1500, 10, 0), row(3, 400, 10, 0), row(4, 64, 1000, 100), row(5, 64, 10, 300)}
	cfg := traceConfig(20)
	cfg.Engine.ContextLength = 1000
	cfg.Traffic.Stop.MaxVirtualTimeSeconds = 0.2
	res, err := Run(t.Context(), cfg, Options{CheckInvariants: true, Workload: traffic.FromTrace(rows, 16, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	got := fmt.Sprint(s.NumRequests, s.CompletedRequests, s.RejectedRequests, s.UnfinishedRequests, s.RejectedByReason)
	if want := "4 1 2 1 map[context_length:1 kv_capacity:1]"; got != want {
		t.Fatalf("offered completed rejected unfinished by-reason = %s, want %s", got, want)
	}
	if s.DurationMs != 60 {
		t.Errorf("duration %v ms, want 60", s.DurationMs)
	}
	recs := RequestRecords(res)
	var reasons []any
	for _, r := range recs {
		reasons = append(reasons, r["rejection_reason"])
	}
	if fmt.Sprint(reasons) != "[<nil> context_length kv_capacity]" {
		t.Errorf("rejection_reason of the terminal requests = %v", reasons)
	}
	m := s.Map()
	if m["offered_requests"] != int64(4) || m["unfinished_requests"] != int64(1) || m["rejected_requests"] != int64(2) {
		t.Errorf("prediction.json keys: %v %v %v", m["offered_requests"], m["unfinished_requests"], m["rejected_requests"])
	}
}
