package sim

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/timing"
)

// disaggConfig turns testConfig into prefill/decode pools of the given replica counts, each with
// the same scheduler, KV cache and fixed timing, and a KV transfer of bytesPerToken at gbps.
func disaggConfig(isl, osl, requests, concurrency, prefillReplicas, decodeReplicas int, bytesPerToken int64, gbps float64) *config.Config {
	cfg := testConfig(isl, osl, requests, concurrency, 1000)
	agg := cfg.Engine.Workers.Aggregated
	pre, dec := *agg, *agg
	pre.Parallelism.Replicas, dec.Parallelism.Replicas = prefillReplicas, decodeReplicas
	cfg.Engine.Mode = config.ModeDisaggregated
	cfg.Engine.Workers = config.Workers{Prefill: &pre, Decode: &dec}
	cfg.Engine.KVTransfer = &config.KVTransfer{BytesPerToken: bytesPerToken, BandwidthGBps: f64(gbps), TimingMode: "destination_missing"}
	return cfg
}

// One request: prefill 30 ms (a prefill worker's pass has no decode part), then a transfer of
// 100 tokens × 1e6 bytes at 1 GB/s = 0.1 s = 100 ms, so the first token is visible at 130 ms;
// three decode passes of 8 ms follow.
func TestDisaggregatedOneRequest(t *testing.T) {
	res := mustRun(t, disaggConfig(100, 4, 1, 1, 1, 1, 1_000_000, 1))
	s := res.Summary
	if s.CompletedRequests != 1 || s.TotalOutputTokens != 4 {
		t.Fatalf("completed %d output %d", s.CompletedRequests, s.TotalOutputTokens)
	}
	for name, c := range map[string][2]float64{
		"ttft": {s.TTFT.Mean, 130}, "e2e": {s.E2E.Mean, 154}, "itl": {s.ITL.Mean, 8}, "ttst": {s.TTST.Mean, 8},
	} {
		if !near(c[0], c[1]) {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	h := res.Handoffs[0]
	if h.SourceHeldMs != 30 || h.DestinationReservedMs != 30 || h.DestinationActivatedMs != 130 || h.TransferredTokens != 100 {
		t.Errorf("hand-off %+v", h)
	}
	// Both pools are provisioned for the whole run: 1 worker each for 0.154 s.
	if !near(s.PrefillWorkerSeconds, 0.154) || !near(s.DecodeWorkerSeconds, 0.154) || !near(s.GPUHours, 2*0.154/3600) {
		t.Errorf("worker seconds %v/%v gpu hours %v", s.PrefillWorkerSeconds, s.DecodeWorkerSeconds, s.GPUHours)
	}
}

// TTFT includes prefill queueing: two requests on one prefill worker with max_sequences 1 are
// prefilled one after the other (30 ms each); transfers are free (no bandwidth).
func TestDisaggregatedPrefillQueueing(t *testing.T) {
	cfg := disaggConfig(100, 2, 2, 2, 1, 1, 1000, 1)
	cfg.Engine.Workers.Prefill.Scheduler.MaxSequences = 1
	cfg.Engine.KVTransfer.BandwidthGBps = nil
	res := mustRun(t, cfg)
	if got := []float64{res.Requests[0].FirstTokenMs, res.Requests[1].FirstTokenMs}; got[0] != 30 || got[1] != 60 {
		t.Fatalf("first tokens at %v, want [30 60]", got)
	}
}

// The first token becomes visible when the decode rank admits the request, not when its KV
// arrives: request 0 is prefilled in 0–30 ms and decodes from 30 ms in 8 ms passes (tokens 2..6
// at 38, 46, 54, 62, 70 ms); request 1 is prefilled in 30–60 ms and its KV arrives at 60 ms
// (no transfer delay) in the middle of the decode pass 54–62, so the rank takes it at 62 ms:
// TTFT 62 ms, and its second token ends the next pass at 70 ms (TTST 8 ms, one pass).
func TestDisaggregatedFirstTokenAtDecodeAdmission(t *testing.T) {
	cfg := disaggConfig(100, 6, 2, 2, 1, 1, 1000, 1)
	cfg.Engine.Workers.Prefill.Scheduler.MaxSequences = 1
	cfg.Engine.KVTransfer.BandwidthGBps = nil
	res := mustRun(t, cfg)
	for i, w := range [][3]float64{{30, 38, 70}, {62, 70, 102}} {
		r, h := &res.Requests[i], &res.Handoffs[i]
		if got := [3]float64{r.FirstTokenMs, r.SecondTokenMs, r.TerminalMs}; got != w {
			t.Errorf("request %d: first, second token, done = %v, want %v (KV arrived at %v)", i, got, w, h.DestinationActivatedMs)
		}
	}
	if a := res.Handoffs[1].DestinationActivatedMs; a != 60 {
		t.Errorf("request 1's KV arrived at %v ms, want 60", a)
	}
}

// destination_missing moves only what the decode worker lacks: a second session turn whose
// prompt's leading blocks are cached on the decode worker transfers fewer tokens, and a prompt
// the decode worker holds entirely (block-aligned, cached) transfers nothing.
func TestDestinationMissing(t *testing.T) {
	cfg := disaggConfig(0, 0, 0, 1, 1, 1, 1000, 1)
	cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 64, OutputTokensPerTurn: 16,
		Session: &config.SessionShape{Turns: 2}}
	cfg.Traffic.Stop = config.Stop{Sessions: 1}
	res := mustRun(t, cfg)
	// Turn 0: 64 prompt tokens, nothing cached on the decode worker → 64 transferred. Its decode
	// step computes the KV of prompt + 15 outputs = 79 tokens → 4 full blocks (64 tokens) cached,
	// and the 5th block (tokens 64..79) is full only after token 80 is computed, which never
	// happens. Turn 1's prompt (144 tokens) finds 4 cached blocks: 144 − 64 = 80 transferred.
	if got := []int32{res.Handoffs[0].TransferredTokens, res.Handoffs[1].TransferredTokens}; got[0] != 64 || got[1] != 80 {
		t.Fatalf("transferred %v, want [64 80]", got)
	}
	if res.Handoffs[1].DecodeCachedTokens != 64 {
		t.Fatalf("decode cached %d, want 64", res.Handoffs[1].DecodeCachedTokens)
	}

	// Same prompt twice in a row (group-shared, block-aligned, no unique part): the second
	// request's whole prompt is already on the decode worker.
	cfg = disaggConfig(0, 0, 0, 1, 1, 1, 1000, 1)
	cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 64, OutputTokensPerTurn: 4,
		Session: &config.SessionShape{Turns: 2, SharedPrefixRatio: 1, PrefixGroups: 1}}
	cfg.Traffic.Stop = config.Stop{Sessions: 2}
	res = mustRun(t, cfg)
	// Session 1 turn 0 (request 2) has the same 64-token prompt as session 0 turn 0.
	if h := res.Handoffs[2]; h.TransferredTokens != 0 || h.DecodeCachedTokens != 64 || h.DestinationActivatedMs != h.DestinationReservedMs {
		t.Fatalf("fully cached prompt: %+v", h)
	}
}

// Under load, disaggregated serving conserves tokens and leaks no KV block on either pool. With
// 12 requests in flight, a prompt reserves ceil(300/16) = 19 blocks and grows to
// ceil(350/16) = 22, so the 60-block decode pool holds 3 reservations: hand-offs wait for a
// reservation and decoding requests get preempted. The exact counts depend on polynomial pass
// times, so the test checks that both happen (it would not exercise what it claims otherwise)
// and that every request is reserved and gets its first token after its prefill.
//
// The same run under SGLang's scheduler with the decode role polling every fourth decode pass
// (scheduler.recv_interval 4) also checks that hand-offs held for a poll, which keep their
// reserved KV, are counted among the queued requests that hold their prompt's KV
// (engine.CheckInvariants, run after every pass).
func TestDisaggregatedConservation(t *testing.T) {
	for _, backend := range []string{config.BackendVLLM, config.BackendSGLang} {
		t.Run(backend, func(t *testing.T) { disaggregatedConservation(t, backend) })
	}
}

func disaggregatedConservation(t *testing.T, backend string) {
	cfg := disaggConfig(300, 50, 60, 12, 2, 3, 131072, 50)
	cfg.Engine.Backend = backend
	if backend == config.BackendSGLang {
		cfg.Engine.Workers.Decode.Scheduler.RecvInterval = 4
	}
	cfg.Engine.Workers.Decode.KVCache.Capacity.Blocks = 60
	cfg.Engine.Workers.Prefill.Timing = config.Timing{Type: config.TimingPolynomial}
	cfg.Engine.Workers.Decode.Timing = config.Timing{Type: config.TimingPolynomial}
	res := mustRun(t, cfg)
	if res.Summary.CompletedRequests != 60 || res.Summary.TotalOutputTokens != 60*50 {
		t.Fatalf("completed %d output %d", res.Summary.CompletedRequests, res.Summary.TotalOutputTokens)
	}
	waits := 0
	for i, r := range res.Requests {
		h := &res.Handoffs[i]
		if r.Status != engine.Completed || r.FirstTokenMs < h.SourceHeldMs || h.DestinationReservedMs < h.SourceHeldMs {
			t.Fatalf("request %d: %v first token %v, reserved %v, before prefill end %v", i, r.Status, r.FirstTokenMs, h.DestinationReservedMs, h.SourceHeldMs)
		}
		if h.DestinationReservedMs > h.SourceHeldMs {
			waits++
		}
	}
	if waits == 0 || res.Summary.Preemptions == 0 {
		t.Fatalf("%d hand-offs waited for decode KV and %d preemptions: the run no longer exercises either", waits, res.Summary.Preemptions)
	}
}

// A hand-off waits for decode-side KV: both 64-token prompts prefill together (30 ms; a prefill
// pass has no decode part) on a decode pool of 6 blocks of 16. Request 0 reserves
// ceil(64/16) = 4 blocks and transfers 64 tokens × 1e6 bytes at 1 GB/s = 64 ms: first token at
// 94 ms. Request 1 needs 4 blocks, 2 are free: it waits, its KV held on the prefill worker.
// Request 0's decode steps (8 ms each) take a 5th block for token 65 and emit tokens 2..4 at
// 102, 110, 118 ms, where it completes and frees 5 blocks: request 1 reserves at 118 ms, its
// transfer ends at 182 ms (first token), and its 3 decode steps end at 206 ms.
func TestDecodeReservationWaits(t *testing.T) {
	cfg := disaggConfig(64, 4, 2, 2, 1, 1, 1_000_000, 1)
	cfg.Engine.Workers.Decode.KVCache.Capacity.Blocks = 6
	res := mustRun(t, cfg)
	for i, w := range []struct{ held, reserved, activated, first, done float64 }{
		{30, 30, 94, 94, 118},
		{30, 118, 182, 182, 206},
	} {
		h, r := &res.Handoffs[i], &res.Requests[i]
		got := [5]float64{h.SourceHeldMs, h.DestinationReservedMs, h.DestinationActivatedMs, r.FirstTokenMs, r.TerminalMs}
		if want := [5]float64{w.held, w.reserved, w.activated, w.first, w.done}; got != want || h.TransferredTokens != 64 {
			t.Errorf("request %d: held, reserved, activated, first token, done = %v, want %v; transferred %d, want 64", i, got, want, h.TransferredTokens)
		}
	}
	if res.Summary.Preemptions != 0 {
		t.Errorf("preemptions %d, want 0", res.Summary.Preemptions)
	}
}

// requests.jsonl records of disaggregated serving carry the hand-off timeline.
func TestDisaggregatedRecords(t *testing.T) {
	res := mustRun(t, disaggConfig(100, 4, 1, 1, 1, 1, 1_000_000, 1))
	recs := RequestRecords(res)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	for k, want := range map[string]any{
		"prefill_worker_idx": int32(0), "decode_worker_idx": int32(0), "prefill_admit_ms": 0.0, "source_held_ms": 30.0,
		"destination_reserved_ms": 30.0, "destination_activated_ms": 130.0, "source_released_ms": 130.0,
		"decode_admit_ms": 130.0, "ttft_ms": 130.0, "e2e_latency_ms": 154.0, "output_length": int32(4),
	} {
		if r[k] != want {
			t.Errorf("%s = %v (%T), want %v", k, r[k], r[k], want)
		}
	}
	// One admission per pool: the prefill worker at 0 ms, the decode worker at 130 ms (nothing
	// cached there before the transfer).
	hist := r["admission_history"].([]any)
	want := []string{"0 0 prefill 0 0 false", "1 0 decode 130 0 false"}
	if len(hist) != len(want) || r["admission_count"] != int32(2) || r["readmission_count"] != int32(0) {
		t.Fatalf("admission_history %v, count %v, readmissions %v", hist, r["admission_count"], r["readmission_count"])
	}
	for i, h := range hist {
		m := h.(map[string]any)
		if got := strings.TrimSpace(fmt.Sprintln(m["admission_ordinal"], m["pool_admission_ordinal"], m["pool"], m["at_ms"], m["reused_input_tokens"], m["is_readmission"])); got != want[i] {
			t.Errorf("admission %d = %q, want %q", i, got, want[i])
		}
	}
}

// Decode KV oversubscribed: the decode pool holds about 12 whole requests (200 blocks of 16;
// a request ends at 128 + 128 tokens = 16 blocks) while 4× as many are in flight. Hand-offs
// reserve blocks only behind the requests a decode worker has preempted (FCFS), so freed blocks
// go to those first and the decode worker keeps a full batch: the output rate stays within 30 %
// of the rate at a concurrency the pool holds (before, reservations took every freed block, the
// preempted requests at the queue head could never be readmitted, and the rate fell about 7×).
func TestDisaggregatedDecodeOversubscribed(t *testing.T) {
	for _, backend := range []string{"vllm", "sglang", "trtllm"} {
		rate := func(concurrency int) (float64, int64) {
			cfg := disaggConfig(128, 128, 400, concurrency, 1, 1, 1000, 100)
			cfg.Engine.Backend = backend
			cfg.Engine.Workers.Decode.KVCache.Capacity.Blocks = 200
			res := mustRun(t, cfg)
			checkConservation(t, res)
			if res.Summary.CompletedRequests != 400 {
				t.Fatalf("%s c%d: completed %d of 400", backend, concurrency, res.Summary.CompletedRequests)
			}
			return res.Summary.OutputThroughputTokS, res.Summary.Preemptions
		}
		fits, _ := rate(12)
		over, preempted := rate(48)
		t.Logf("%s: %.0f tok/s at c12, %.0f at c48 (%d preemptions)", backend, fits, over, preempted)
		if over < 0.7*fits {
			t.Errorf("%s: output %.0f tok/s at concurrency 48 against %.0f at 12: decoding stalls behind reservations", backend, over, fits)
		}
	}
}

// engine.kv_transfer.latency_ms adds to every hand-off: TestDisaggregatedOneRequest's request
// (prefill 30 ms, 100 tokens × 1e6 bytes at 1 GB/s = 100 ms) with a 45 ms latency reaches its
// decode worker at 30 + 45 + 100 = 175 ms, its first token then; ITL does not change.
func TestKVTransferLatency(t *testing.T) {
	cfg := disaggConfig(100, 4, 1, 1, 1, 1, 1_000_000, 1)
	cfg.Engine.KVTransfer.LatencyMs = f64(45)
	res := mustRun(t, cfg)
	s := res.Summary
	if !near(s.TTFT.Mean, 175) || !near(s.E2E.Mean, 199) || !near(s.ITL.Mean, 8) {
		t.Errorf("TTFT %v, E2E %v, ITL %v ms; want 175, 199, 8", s.TTFT.Mean, s.E2E.Mean, s.ITL.Mean)
	}
	if h := res.Handoffs[0]; h.DestinationReservedMs != 30 || h.DestinationActivatedMs != 175 {
		t.Errorf("hand-off reserved at %v, activated at %v ms; want 30 and 175", h.DestinationReservedMs, h.DestinationActivatedMs)
	}
	// Without a bandwidth (no byte delay) the latency alone remains.
	cfg = disaggConfig(100, 4, 1, 1, 1, 1, 1_000_000, 1)
	cfg.Engine.KVTransfer.BandwidthGBps, cfg.Engine.KVTransfer.LatencyMs = nil, f64(45)
	if got := mustRun(t, cfg).Summary.TTFT.Mean; !near(got, 75) {
		t.Errorf("no bandwidth, 45 ms latency: TTFT %v ms, want 75", got)
	}
}

// The default hand-off latency is the calibrated one when both roles use hardware-aware timing,
// 0 otherwise (fixed and polynomial timing keep the reference's exact times) and in aggregated
// mode; an explicit value wins, 0 included, with or without a kv_transfer bandwidth.
func TestKVTransferLatencyDefault(t *testing.T) {
	cfg := disaggConfig(100, 4, 1, 1, 1, 1, 1_000_000, 1)
	if got := KVTransferLatencyMs(cfg); got != 0 {
		t.Errorf("fixed timing: %v ms, want 0", got)
	}
	cfg.Engine.Workers.Prefill.Timing = config.Timing{Type: config.TimingDefault}
	if got := KVTransferLatencyMs(cfg); got != 0 {
		t.Errorf("default prefill, fixed decode timing: %v ms, want 0", got)
	}
	cfg.Engine.Workers.Decode.Timing = config.Timing{Type: config.TimingRoofline}
	if got := KVTransferLatencyMs(cfg); got != timing.CalibratedKVTransferLatencyMs {
		t.Errorf("hardware-aware timing: %v ms, want %v", got, timing.CalibratedKVTransferLatencyMs)
	}
	cfg.Engine.KVTransfer = nil
	if got := KVTransferLatencyMs(cfg); got != timing.CalibratedKVTransferLatencyMs {
		t.Errorf("no kv_transfer mapping: %v ms, want %v", got, timing.CalibratedKVTransferLatencyMs)
	}
	cfg.Engine.KVTransfer = &config.KVTransfer{LatencyMs: f64(0)}
	if got := KVTransferLatencyMs(cfg); got != 0 {
		t.Errorf("explicit 0: %v ms, want 0", got)
	}
	agg := testConfig(64, 4, 3, 1, 1000)
	agg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingDefault}
	if got := KVTransferLatencyMs(agg); got != 0 {
		t.Errorf("aggregated mode: %v ms, want 0", got)
	}
}

// An SGLang decode role with scheduler.recv_interval 3 takes in a hand-off only at a poll, as
// SGLang's decode scheduler takes in a new request only then (to preallocate its KV; the
// simulation hands off after the prefill, so the wait comes after the transfer): request 0 is
// prefilled in 0–30 ms and, the decode rank idle, admitted at once (first token 30 ms), then
// decodes in 8 ms passes starting at 30, 38, …, 94 (tokens 2..10, done at 102 ms). Request 1 is
// prefilled in 30–60 ms and its KV arrives at 60 ms; the rank, decoding request 0, polls before
// the passes at 54 and 78 ms (every third decode pass counted from the one at 30 ms, when it ran
// nothing), so request 1 is admitted at 78 ms, not 62 ms as with every pass polling (the vLLM
// case of TestDisaggregatedFirstTokenAtDecodeAdmission): first token 78 ms, second 86 ms, done
// after its ninth decode step at 150 ms. With recv_interval 1 it is admitted at 62 ms.
func TestDisaggregatedSGLangDecodeRecvInterval(t *testing.T) {
	for _, c := range []struct {
		interval int
		want     [2][3]float64
	}{
		{3, [2][3]float64{{30, 38, 102}, {78, 86, 150}}},
		{1, [2][3]float64{{30, 38, 102}, {62, 70, 134}}},
	} {
		cfg := disaggConfig(100, 10, 2, 2, 1, 1, 1000, 1)
		cfg.Engine.Backend = config.BackendSGLang
		cfg.Engine.Workers.Prefill.Scheduler.MaxSequences = 1
		cfg.Engine.Workers.Decode.Scheduler.RecvInterval = c.interval
		cfg.Engine.KVTransfer.BandwidthGBps = nil
		res := mustRun(t, cfg)
		for i, w := range c.want {
			r := &res.Requests[i]
			if got := [3]float64{r.FirstTokenMs, r.SecondTokenMs, r.TerminalMs}; got != w {
				t.Errorf("recv_interval %d, request %d: first, second token, done = %v, want %v (KV arrived at %v)",
					c.interval, i, got, w, res.Handoffs[i].DestinationActivatedMs)
			}
		}
		if a := res.Handoffs[1].DestinationActivatedMs; a != 60 {
			t.Errorf("recv_interval %d: request 1's KV arrived at %v, want 60", c.interval, a)
		}
	}
}

// A decode rank short of KV whose held hand-offs (scheduler.recv_interval 3, each holding the
// KV reserved for it) keep the blocks its retracted requests need takes them in when it finds
// nothing else to run, as SGLang's idle loop polls at once: every request completes. (Before,
// the rank went idle with its inbox full and the run ended with most requests unfinished.)
// Llama-3.1-8B on one H200 per role, Poisson arrivals at 4 per second, prompts of 512-2,048
// tokens and outputs of 64-256, a decode pool of 40 blocks of 64 tokens: one long prompt takes
// most of it, so decoding requests are retracted while hand-offs wait.
func TestDisaggregatedSGLangHeldHandoffsDoNotStall(t *testing.T) {
	const yaml = `traffic:
  source: {type: synthetic, input_tokens: {distribution: uniform, min: 512, max: 2048}, output_tokens: {distribution: uniform, min: 64, max: 256}}
  load: {type: poisson, requests_per_second: 4}
  stop: {requests: 120}
engine:
  mode: disaggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: sglang
  context_length: 8192
  kv_transfer: {bytes_per_token: 131072, bandwidth_gb_per_second: 400}
  workers:
    prefill:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_sequences: 64}
      kv_cache: {block_size: 64, capacity: {type: default}}
    decode:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_sequences: 256, recv_interval: 3}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 40}}
`
	res := runYAML(t, yaml)
	if s := res.Summary; s.CompletedRequests != 120 || s.Preemptions == 0 {
		t.Fatalf("completed %d of 120 requests with %d preemptions: want all, and retractions (the case this covers)", s.CompletedRequests, s.Preemptions)
	}
}

// A decode rank with one sequence slot whose only running request recomputes its prompt in
// chunks (its hand-off's KV was released while it queued) needs a block that queued hand-offs
// hold, and they cannot be admitted while the slot is taken: their KV gives way and every
// request completes. (Before, the run ran out of events: "simulation stuck".) Llama-3.1-8B on
// one H200 per role, 256-token prompts, 16-116 output tokens, 16 concurrent requests; decode:
// max_sequences 1, chunks of 128, 24 blocks of 32 tokens.
func TestDisaggregatedSGLangOneSlotRecomputeDoesNotStall(t *testing.T) {
	const yaml = `traffic:
  source: {type: synthetic, input_tokens: 256, output_tokens: {distribution: uniform, min: 16, max: 116}}
  load: {type: concurrency, concurrency: 16}
  stop: {requests: 60}
engine:
  mode: disaggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: sglang
  workers:
    prefill:
      kv_cache: {block_size: 32}
    decode:
      scheduler: {max_sequences: 1, chunked_prefill_size: 128}
      kv_cache: {block_size: 32, capacity: {type: fixed, blocks: 24}}
`
	res := runYAML(t, yaml)
	if s := res.Summary; s.CompletedRequests != 60 || s.Preemptions == 0 {
		t.Fatalf("completed %d of 60 requests with %d preemptions: want all, and released hand-offs (the case this covers)", s.CompletedRequests, s.Preemptions)
	}
}

// A vLLM decode worker whose one running request needs a block that queued hand-offs hold (no
// prefix caching, a token budget below the prompt, 56 blocks of 32 tokens) releases a hand-off's
// KV rather than preempting its request, which would recompute into the blocks it freed and
// need the same block again for ever. Every request completes.
func TestDisaggregatedLoneDecodeDoesNotLivelock(t *testing.T) {
	const yaml = `traffic:
  source: {type: synthetic, input_tokens: 256, output_tokens: {distribution: uniform, min: 128, max: 628}, seed: 68}
  load: {type: concurrency, concurrency: 32}
  stop: {requests: 60}
engine:
  mode: disaggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  workers:
    prefill: {}
    decode:
      scheduler: {max_batched_tokens: 256}
      kv_cache: {block_size: 32, prefix_caching: false, capacity: {type: fixed, blocks: 56}}
`
	res := runYAML(t, yaml)
	if s := res.Summary; s.CompletedRequests != 60 || s.Preemptions == 0 {
		t.Fatalf("completed %d of 60 requests with %d preemptions: want all, and released hand-offs (the case this covers)", s.CompletedRequests, s.Preemptions)
	}
}

// runYAML runs the prediction config text yaml, written to a file of the test's temporary
// directory, and returns its result; a config or run error fails the test.
func runYAML(t *testing.T, yaml string) *Result {
	t.Helper()
	path := t.TempDir() + "/config.yaml"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return mustRun(t, mustLoad(t, path))
}

// Under default timing SGLang's prefill passes of a mixture-of-experts model last
// Efficiency.SGLangMoEPrefillScale times the roofline's (timing.Roofline.SGLangPrefill): one
// request at a time, no front end, so a request's TTFT is its prefill pass and scales by the
// factor; its decode steps do not (TPOT equal up to rounding: the times it is summed from differ). TensorRT-LLM's passes, and SGLang's of a dense model, do not
// change. Qwen3-30B-A3B and Llama-3.1-8B on one H100, 2,048-token prompts, 16 output tokens.
func TestSGLangMoEPrefillScale(t *testing.T) {
	run := func(backend, model string, scale float64) (ttft, tpot float64) {
		t.Helper()
		yaml := `traffic:
  source: {type: synthetic, input_tokens: 2048, output_tokens: 16}
  load: {type: concurrency, concurrency: 1}
  stop: {requests: 4}
engine:
  model: ` + model + `
  hardware: h100_sxm
  backend: ` + backend + `
  frontend: {overhead_ms: 0}
  workers:
    aggregated: {}
`
		path := t.TempDir() + "/config.yaml"
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		eff := timing.CalibratedEfficiency()
		eff.SGLangMoEPrefillScale = scale
		s := mustRunWith(t, mustLoad(t, path), Options{Efficiency: &eff}).Summary
		return s.TTFT.Mean, s.TPOT.Mean
	}
	ttft1, tpot1 := run("sglang", "Qwen/Qwen3-30B-A3B", 1)
	ttft, tpot := run("sglang", "Qwen/Qwen3-30B-A3B", 2.5)
	if !(ttft1 > 0) || math.Abs(ttft-2.5*ttft1) > 1e-9*ttft {
		t.Errorf("SGLang MoE: TTFT %v ms at factor 2.5, want 2.5 × %v", ttft, ttft1)
	}
	if !(tpot1 > 0) || math.Abs(tpot-tpot1) > 1e-9*tpot1 {
		t.Errorf("SGLang MoE: TPOT %v ms at factor 2.5, want %v unchanged", tpot, tpot1)
	}
	for _, c := range []struct{ backend, model string }{{"trtllm", "Qwen/Qwen3-30B-A3B"}, {"sglang", "meta-llama/Meta-Llama-3.1-8B-Instruct"}} {
		if a, _ := run(c.backend, c.model, 1); a != func() float64 { b, _ := run(c.backend, c.model, 2.5); return b }() {
			t.Errorf("%s %s: TTFT moved with the SGLang MoE prefill factor", c.backend, c.model)
		}
	}
}
